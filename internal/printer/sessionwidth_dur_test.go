package printer

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"
)

// durWidth is the width of what time.Duration's String writes for the
// duration rounded to 100 ns (appendDur's oracle): every duration up to
// 2 ms, ns by ns, then random ones to 3 s, negative ones and the edges.
func TestDurWidth(t *testing.T) {
	var m sessionMeasure
	check := func(d time.Duration) {
		want := 1
		if d != 0 {
			want = utf8.RuneCountInString(d.Round(100 * time.Nanosecond).String())
		}
		if got := m.durWidth(d); got != want {
			t.Fatalf("durWidth(%d) = %d, want %d (%s)", int64(d), got, want, d.Round(100*time.Nanosecond))
		}
	}
	for d := range 2 * time.Millisecond {
		check(d)
	}
	for _, d := range []time.Duration{time.Second - 50, time.Second - 51, time.Second, 61 * time.Second, -1, -50, -51, math.MaxInt64, math.MinInt64} {
		check(d)
	}
	r := rand.New(rand.NewPCG(7, 15))
	for range 200000 {
		check(time.Duration(r.Int64N(int64(3 * time.Second))))
		check(-time.Duration(r.Int64N(int64(time.Second))))
		check(time.Duration(r.Int64()))
	}
}
