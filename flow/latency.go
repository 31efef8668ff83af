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
type Latency struct {
	N        uint64
	Min, Max time.Duration
	Sum      time.Duration
	exact    []time.Duration
	hist     *[histBuckets]uint32
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
	if l.N == 0 || d < l.Min {
		l.Min = d
	}
	if d > l.Max {
		l.Max = d
	}
	l.N++
	l.Sum += d
	if l.hist == nil {
		if len(l.exact) < exactSamples {
			l.exact = append(l.exact, d)
			return
		}
		l.hist = new([histBuckets]uint32)
		for _, e := range l.exact {
			l.hist[bucket(e)]++
		}
		l.exact = nil
	}
	l.hist[bucket(d)]++
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
	if l.hist == nil {
		s := slices.Clone(l.exact)
		slices.Sort(s)
		return s[rank]
	}
	var c uint64
	for i, n := range l.hist {
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
	return l.Sum / time.Duration(l.N)
}
