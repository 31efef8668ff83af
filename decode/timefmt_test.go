package decode

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTimeMatchesAppendFormat: the hand-written formatting prints
// what time.Time.AppendFormat prints (the oracle), at the calendar's
// edges and on random times over the whole int64 range.
func TestAppendTimeMatchesAppendFormat(t *testing.T) {
	ns := []int64{0, 1, 999999999, 1e9, 86399999999999, 86400e9, -1, -86400e9 - 1, math.MinInt64, math.MaxInt64,
		1767225600000002000} // the gencap captures' first frame
	for _, s := range []string{"1972-02-29T23:59:59.5Z", "2000-02-28T12:00:00Z", "2000-02-29T00:00:00Z", "2000-03-01T00:00:00Z",
		"2100-02-28T23:59:59.999999999Z", "2100-03-01T00:00:00Z", "2024-12-31T23:59:59.000000001Z", "2025-01-01T00:00:00Z",
		"2026-11-09T07:05:03.123456789Z", "2262-04-11T23:47:16.854775807Z"} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, tm.UnixNano(), tm.UnixNano()-1)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		ns = append(ns, rng.Int64(), rng.Int64N(4e18), -rng.Int64N(1e18))
	}
	// Times beyond int64 nanoseconds (a pcapng timestamp can be).
	for _, tm := range []time.Time{time.Date(2262, 4, 11, 23, 47, 16, 854775808, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1600, 1, 1, 0, 0, 0, 1, time.UTC), time.Unix(1<<40, 5).In(time.FixedZone("x", 3600))} {
		if got, want := string(AppendRFC3339Nano(nil, tm)), tm.UTC().Format("2006-01-02T15:04:05.000000000Z"); got != want {
			t.Fatalf("AppendRFC3339Nano(%v) = %q, want %q", tm, got, want)
		}
	}
	for _, n := range ns {
		tm := time.Unix(0, n).UTC()
		if got, want := string(AppendRFC3339Nano([]byte("x"), time.Unix(0, n))), "x"+tm.Format("2006-01-02T15:04:05.000000000Z"); got != want {
			t.Fatalf("AppendRFC3339Nano(%d) = %q, want %q", n, got, want)
		}
		if got, want := string(AppendAbsTime([]byte("x"), n)), "x"+tm.Format("Jan _2, 2006 15:04:05.000000000 UTC"); got != want {
			t.Fatalf("AppendAbsTime(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAppendTimeDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() {
		buf = AppendAbsTime(AppendRFC3339Nano(buf[:0], time.Unix(0, 1767225600000002000)), 1767225600000002000)
	}); a != 0 {
		t.Fatalf("%v allocations", a)
	}
}

var sinkTime []byte

func BenchmarkAppendTime(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("AppendFormat", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = time.Unix(0, 1767225600000002000+int64(i)).UTC().AppendFormat(buf[:0], "2006-01-02T15:04:05.000000000Z")
		}
		sinkTime = buf
	})
	b.Run("AppendRFC3339Nano", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = AppendRFC3339Nano(buf[:0], time.Unix(0, 1767225600000002000+int64(i)))
		}
		sinkTime = buf
	})
}
