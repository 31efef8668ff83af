package flow

import (
	"math"
	"testing"
	"time"
)

// A Series keeps its total as its buckets widen, spans cover the buckets
// they cross, and hostile times end without looping.
func TestSeries(t *testing.T) {
	var s Series
	ms := int64(time.Millisecond)
	s.add(0, 0, 1)
	s.add(0, 59*ms, 1)
	if s.Width != time.Millisecond || s.V[0] != 1 || s.V[59] != 1 {
		t.Fatalf("width %v, buckets %v", s.Width, s.V)
	}
	s.add(0, 60*ms, 1) // widens to 2 ms: 59 ms and 60 ms share bucket 29 and 30
	if s.Width != 2*time.Millisecond || s.V[0] != 1 || s.V[29] != 1 || s.V[30] != 1 {
		t.Fatalf("width %v, buckets %v", s.Width, s.V)
	}
	var p Series
	p.addSpan(0, ms/2, 3*ms) // 0.5 ms in bucket 0, 1 ms in buckets 1 and 2
	if p.V[0] != float64(ms/2) || p.V[1] != float64(ms) || p.V[2] != float64(ms) {
		t.Fatalf("span: %v", p.V[:4])
	}
	for _, at := range []int64{math.MaxInt64, math.MinInt64, -ms, 1 << 62} {
		var h Series
		h.add(0, at, 1)
		h.addSpan(0, at-ms, at)
		h.addSpan(0, math.MinInt64/2, math.MaxInt64/2)
		var sum float64
		for _, v := range h.V {
			sum += v
		}
		if sum < 1 || h.Width > maxSeriesWidth {
			t.Errorf("at %d: width %v, total %v", at, h.Width, sum)
		}
	}
}
