package flow

import (
	"encoding/binary"
	"iter"
	"math/bits"
	"slices"
	"time"
)

// Latency summarizes request→completion times of one message kind in
// bounded memory: the first exactSamples values are kept exactly (so small
// captures get exact medians); beyond that, values go into a log-linear
// histogram with 16 sub-buckets per power of two (quantiles within ±3%).
// Two values need no more than Min and Max: the samples are allocated on
// the third, so most sessions of a capture with millions keep none. A
// session that goes idle packs its samples (pack), so that one that did
// many messages keeps bytes in proportion to how spread its latencies
// are, not a 4 KiB histogram.
type Latency struct {
	N        uint64
	Min, Max time.Duration
	more     *latencySamples
}

// latencySamples holds the values beyond Min and Max in one of three
// forms: exact (up to exactSamples values), hist, or packed (either of
// the two, packed: see pack), never two at once.
type latencySamples struct {
	sum    time.Duration
	exact  []time.Duration
	hist   *[histBuckets]uint32
	packed []byte // never changed once made (clone shares it)
}

// The first byte of a packed form: what follows it.
const (
	packedExact = iota // the exact values in order, as uvarint differences from the one before (from 0)
	packedHist         // the buckets that count, as uvarint pairs: index less the one before's (from -1) less 1, count
)

const (
	exactSamples = 64
	subBits      = 4
	histBuckets  = 64 << subBits
)

// Add records one latency.
func (l *Latency) Add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if l.N == 2 && l.more == nil {
		// Min and Max were the two samples so far
		l.more = &latencySamples{sum: l.Min + l.Max, exact: make([]time.Duration, 2, 4)}
		l.more.exact[0], l.more.exact[1] = l.Min, l.Max
	}
	if l.N == 0 || d < l.Min {
		l.Min = d
	}
	if d > l.Max {
		l.Max = d
	}
	l.N++
	m := l.more
	if m == nil {
		return
	}
	if m.packed != nil {
		m.unpack(l.N - 1)
	}
	m.sum += d
	if m.hist == nil {
		if len(m.exact) < exactSamples {
			m.exact = append(m.exact, d)
			return
		}
		m.hist = new([histBuckets]uint32)
		for _, e := range m.exact {
			m.hist[bucket(e)]++
		}
		m.exact = nil
	}
	m.hist[bucket(d)]++
}

func bucket(d time.Duration) int {
	v := uint64(d)
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(v) - 1 - subBits
	return (e+1)<<subBits | int(v>>uint(e))&(1<<subBits-1)
}

// bucketMid returns a representative value of bucket i.
func bucketMid(i int) time.Duration {
	if i < 1<<subBits {
		return time.Duration(i)
	}
	e := i>>subBits - 1
	m := uint64(i&(1<<subBits-1) | 1<<subBits)
	return time.Duration(m<<uint(e) + (1<<uint(e))/2)
}

// Quantile returns the q-quantile (0..1) of the recorded values: the
// nearest-rank value for exact samples, a bucket midpoint otherwise
// (clamped to Min and Max).
func (l *Latency) Quantile(q float64) time.Duration {
	if l.N == 0 {
		return 0
	}
	rank := uint64(q*float64(l.N) + 0.999999999) // nearest rank, 1-based (0 for q = 0)
	if rank > 0 {
		rank--
	}
	if rank >= l.N {
		rank = l.N - 1
	}
	m := l.more
	if m == nil { // the samples are Min and Max
		if rank == 0 {
			return l.Min
		}
		return l.Max
	}
	if m.packed != nil {
		return l.packedQuantile(rank)
	}
	if m.hist == nil {
		s := slices.Clone(m.exact)
		slices.Sort(s)
		return s[rank]
	}
	var c uint64
	for i, n := range m.hist {
		c += uint64(n)
		if c > rank {
			return min(max(bucketMid(i), l.Min), l.Max)
		}
	}
	return l.Max
}

// Mean returns the average.
func (l *Latency) Mean() time.Duration {
	if l.N == 0 {
		return 0
	}
	return l.Sum() / time.Duration(l.N)
}

// Sum returns the total of the recorded values.
func (l *Latency) Sum() time.Duration {
	switch {
	case l.more != nil:
		return l.more.sum
	case l.N == 2:
		return l.Min + l.Max
	}
	return l.Min
}

// pack replaces the samples by their packed form, in as many bytes as
// it takes: the exact values sorted, each as its uvarint difference from
// the one before (a few bytes each), or the histogram's buckets that
// count, each as two uvarints (its distance from the one before, and its
// count). Quantile reads the packed form as it is, so it gives what it
// gave before; the next Add unpacks it. The tracker packs the latencies
// of a session it releases (Tracker.release): it takes no time while
// traffic is in flight, and a session that did thousands of messages
// and went idle keeps a few hundred bytes, not 4 KiB a kind.
func (l *Latency) pack() {
	m := l.more
	if m == nil || m.packed != nil {
		return
	}
	var buf [2 * binary.MaxVarintLen64 * 64]byte
	b := buf[:0]
	if m.hist == nil {
		slices.Sort(m.exact) // (the order of the values is not kept)
		b = append(b, packedExact)
		prev := time.Duration(0)
		for _, d := range m.exact {
			b = binary.AppendUvarint(b, uint64(d-prev))
			prev = d
		}
	} else {
		b = append(b, packedHist)
		prev := -1
		for i, n := range m.hist {
			if n != 0 {
				b = binary.AppendUvarint(b, uint64(i-prev-1))
				b = binary.AppendUvarint(b, uint64(n))
				prev = i
			}
		}
	}
	m.packed = slices.Clip(append([]byte(nil), b...))
	m.exact, m.hist = nil, nil
}

// unpacked reports whether l has samples that pack would pack.
func (l *Latency) unpacked() bool { return l.more != nil && l.more.packed == nil }

// unpack makes the packed samples, n of them, exact or a histogram again.
func (m *latencySamples) unpack(n uint64) {
	b := m.packed
	m.packed = nil
	if b[0] == packedExact {
		if n >= exactSamples { // the next Add would make them a histogram
			m.hist = new([histBuckets]uint32)
			for d := range packedValues(b[1:]) {
				m.hist[bucket(d)]++
			}
			return
		}
		m.exact = make([]time.Duration, 0, min(exactSamples, n+n/2+2))
		for d := range packedValues(b[1:]) {
			m.exact = append(m.exact, d)
		}
		return
	}
	m.hist = new([histBuckets]uint32)
	for i, c := range packedBuckets(b[1:]) {
		m.hist[i] = uint32(c)
	}
}

// packedQuantile is Quantile's value of the given 0-based rank, read
// from the packed samples.
func (l *Latency) packedQuantile(rank uint64) time.Duration {
	b := l.more.packed
	var r uint64
	if b[0] == packedExact {
		for d := range packedValues(b[1:]) {
			if r == rank {
				return d
			}
			r++
		}
		return l.Max
	}
	for i, n := range packedBuckets(b[1:]) {
		if r += n; r > rank {
			return min(max(bucketMid(i), l.Min), l.Max)
		}
	}
	return l.Max
}

// packedValues yields the values of a packed exact form (after its
// first byte), in order.
func packedValues(b []byte) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		var d time.Duration
		for len(b) > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 { // (pack writes none such)
				return
			}
			b = b[k:]
			d += time.Duration(v)
			if !yield(d) {
				return
			}
		}
	}
}

// packedBuckets yields the buckets of a packed histogram (after its
// first byte) and their counts, in order.
func packedBuckets(b []byte) iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		i := -1
		for len(b) > 0 {
			gap, k := binary.Uvarint(b)
			if k <= 0 {
				return
			}
			n, k2 := binary.Uvarint(b[k:])
			if k2 <= 0 || gap >= histBuckets { // (pack writes none such)
				return
			}
			b = b[k+k2:]
			i += int(gap) + 1
			if i >= histBuckets || !yield(i, n) {
				return
			}
		}
	}
}
