package flow

import (
	"math/bits"
	"slices"
	"time"
)

// Latency summarizes request→completion times of one message kind in
// bounded memory: the first exactSamples values are kept exactly (so small
// captures get exact medians); beyond that, values go into a log-linear
// histogram with 16 sub-buckets per power of two (quantiles within ±3%).
// Two values need no more than Min and Max: the samples are allocated on
// the third, so most sessions of a capture with millions keep none.
type Latency struct {
	N        uint64
	Min, Max time.Duration
	more     *latencySamples
}

type latencySamples struct {
	sum   time.Duration
	exact []time.Duration
	hist  *[histBuckets]uint32
}

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
	rank := uint64(q*float64(l.N)+0.999999999) - 1 // nearest rank, 0-based
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
