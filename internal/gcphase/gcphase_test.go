package gcphase

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestSet: a phase (tracking, the report) runs at its GOGC unless the
// environment sets GOGC, a Switch within it too, and the previous
// setting comes back after it.
func TestSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		env  string // "" unset
		want int
	}{
		{"", Track},
		{"100", 100},
		{"off", 100},
	} {
		if tc.env == "" {
			prev, had := os.LookupEnv("GOGC")
			os.Unsetenv("GOGC")
			if had {
				defer os.Setenv("GOGC", prev)
			}
		} else {
			t.Setenv("GOGC", tc.env)
		}
		read := func() int {
			got := debug.SetGCPercent(100) // reads the setting (and puts 100 back)
			debug.SetGCPercent(got)
			return got
		}
		restore := Set(Grow)
		grow := read()
		Switch(Track) // the first eviction
		got := read()
		restore()
		want := tc.want // (the environment's)
		if tc.env == "" {
			want = Grow
		}
		if grow != want {
			t.Errorf("GOGC=%q: tracking at %d until the first eviction, want %d", tc.env, grow, want)
		}
		if got != tc.want {
			t.Errorf("GOGC=%q: tracking at %d after the first eviction, want %d", tc.env, got, tc.want)
		}
		if after := debug.SetGCPercent(100); after != 100 {
			t.Errorf("GOGC=%q: %d after the tracking phase, want 100 back", tc.env, after)
		}
	}
}
