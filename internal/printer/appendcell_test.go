package printer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// appendDur must write what time.Duration's String writes (the oracle)
// for the duration rounded to 100 ns.
func TestAppendDurMatchesDurationString(t *testing.T) {
	vals := []time.Duration{0, 1, 49, 50, 99, 100, 150, 999, 1000, 1001, 1049, 1050, 1100, 9999, 10000, 123456,
		999949, 999950, 999999, time.Millisecond, time.Millisecond + 100, 1234567, 999999949, 999999950,
		time.Second, 1500 * time.Millisecond, 61 * time.Second, 2 * time.Hour, -1, -150, -time.Second}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		vals = append(vals, time.Duration(r.Int64N(int64(3*time.Second))), time.Duration(r.Int64N(int64(2*time.Millisecond))))
	}
	for _, d := range vals {
		want := "0"
		if d != 0 {
			want = d.Round(100 * time.Nanosecond).String()
		}
		if got := string(appendDur(nil, d)); got != want {
			t.Fatalf("appendDur(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

// runeWidth counts runes as utf8.RuneCount does on valid UTF-8 (the
// oracle), and appendSpaces pads by as many spaces as asked.
func TestRuneWidthAndSpaces(t *testing.T) {
	for _, s := range []string{"", "a", "1.5µs", "µµ", "10.77.0.1/0x000011", "fe80::2/?", "é€😀x"} {
		if got, want := runeWidth([]byte(s)), utf8.RuneCountInString(s); got != want {
			t.Errorf("runeWidth(%q) = %d, want %d", s, got, want)
		}
	}
	for _, n := range []int{-3, 0, 1, 49, 50, 51, 130} {
		got := appendSpaces([]byte("x"), n)
		if want := "x" + strings.Repeat(" ", max(n, 0)); string(got) != want {
			t.Errorf("appendSpaces(%d) appended %d bytes, want %d", n, len(got)-1, len(want)-1)
		}
	}
}
