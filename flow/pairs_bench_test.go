package flow

import "testing"

// BenchmarkTrackPairs tracks 100,000 QP pairs of four packets each (a
// new tracker per op), as gencap -pairs makes them: what a session costs
// to create, pair, answer and let go idle (later ops reuse the heap the
// first one grew: page faults are the scaling table's, bench/run.sh).
func BenchmarkTrackPairs(b *testing.B) {
	const pairs = 100000
	b.ReportAllocs()
	for b.Loop() {
		tr := New(Options{})
		trackPairs(tr, pairs, epoch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pairs, "ns/pair")
}
