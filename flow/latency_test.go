package flow

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A packed Latency answers every quantile, the mean and the count as the
// unpacked one does, and goes on from where it was when values come
// after: packing (a session going idle) changes nothing a report shows.
func TestLatencyPack(t *testing.T) {
	qs := []float64{0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1}
	for _, tc := range []struct {
		name   string
		n      int
		value  func(r *rand.Rand, i int) time.Duration
		packAt []int // pack after these many values
		most   int   // bytes the packed form may take at the end
	}{
		{"three", 3, func(r *rand.Rand, i int) time.Duration { return time.Duration(5000 + i) }, []int{3}, 8},
		{"exact, spread", 64, func(r *rand.Rand, i int) time.Duration { return time.Duration(r.Int64N(1e9)) }, []int{3, 10, 63, 64}, 64 * 5},
		{"exact to histogram", 65, func(r *rand.Rand, i int) time.Duration { return time.Duration(3000 + r.Int64N(6000)) }, []int{64, 65}, 80},
		{"zeros", 200, func(r *rand.Rand, i int) time.Duration { return 0 }, []int{5, 100, 200}, 8},
		{"histogram, 1-8 µs", 10000, func(r *rand.Rand, i int) time.Duration { return time.Duration(1+i%8) * time.Microsecond }, []int{70, 5000, 10000}, 40},
		{"histogram, every bucket", 100000, func(r *rand.Rand, i int) time.Duration { return time.Duration(r.Uint64() >> uint(r.IntN(64))) }, []int{1000, 100000}, histBuckets * 8},
		{"negative as zero", 80, func(r *rand.Rand, i int) time.Duration { return time.Duration(i%3 - 1) }, []int{3, 80}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var packed, plain Latency
			at := 0
			for i := range tc.n {
				d := tc.value(r, i)
				packed.Add(d)
				plain.Add(d)
				if at < len(tc.packAt) && tc.packAt[at] == i+1 {
					at++
					packed.pack()
					packed.pack() // (twice is once)
					if packed.more == nil || packed.more.packed == nil || packed.more.exact != nil || packed.more.hist != nil {
						t.Fatalf("after %d values: not packed alone", i+1)
					}
					for _, q := range qs {
						if g, w := packed.Quantile(q), plain.Quantile(q); g != w {
							t.Fatalf("after %d values: packed q%g = %v, want %v", i+1, q, g, w)
						}
					}
				}
			}
			if packed.N != plain.N || packed.Min != plain.Min || packed.Max != plain.Max || packed.Mean() != plain.Mean() {
				t.Errorf("packed N %d min %v max %v mean %v, want %d %v %v %v", packed.N, packed.Min, packed.Max, packed.Mean(), plain.N, plain.Min, plain.Max, plain.Mean())
			}
			for _, q := range qs {
				if g, w := packed.Quantile(q), plain.Quantile(q); g != w {
					t.Errorf("q%g = %v, want %v", q, g, w)
				}
			}
			if b := packed.more.packed; len(b) > tc.most || cap(b) != len(b) {
				t.Errorf("packed in %d bytes (capacity %d), want at most %d", len(b), cap(b), tc.most)
			}
			// what clone shares is never written: the clone goes on alone
			c := packed.clone()
			c.Add(time.Hour)
			if packed.Max == time.Hour || packed.more.packed == nil || packed.Quantile(1) != plain.Quantile(1) {
				t.Error("adding to a clone changed the packed original")
			}
		})
	}
}

// A Latency of one or two values has nothing to pack.
func TestLatencyPackNothing(t *testing.T) {
	var l Latency
	l.pack()
	l.Add(time.Microsecond)
	l.Add(2 * time.Microsecond)
	l.pack()
	if l.more != nil || l.Quantile(0.5) != time.Microsecond {
		t.Errorf("two values: samples %v, median %v", l.more != nil, l.Quantile(0.5))
	}
}
