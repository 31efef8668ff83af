package editcap

import (
	"bytes"
	"testing"
	"time"
)

// TestTimeShift checks that --time-shift and --time-drift move every
// timestamp to t + shift + (t − t0)·ppm·1e-6 and leave the bytes alone,
// and that they compose with a drop.
func TestTimeShift(t *testing.T) {
	in := load(t, "read_atomic.pcap")
	t0 := in[0].Info.Timestamp
	for _, tc := range []struct {
		name  string
		shift time.Duration
		ppm   float64
		drop  []int
	}{
		{"shift", 1500 * time.Millisecond, 0, nil},
		{"negative shift", -250 * time.Microsecond, 0, nil},
		{"drift", 0, 200, nil},
		{"both with a drop", 3 * time.Second, -75, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep, err := Apply(in, Ops{Drop: tc.drop, TimeShift: tc.shift, TimeDriftPPM: tc.ppm})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(in)-len(tc.drop) {
				t.Fatalf("%d frames out, want %d", len(out), len(in)-len(tc.drop))
			}
			j := 0
			for i, f := range in {
				if len(tc.drop) > 0 && i+1 == tc.drop[0] {
					continue
				}
				g := out[j]
				j++
				dt := f.Info.Timestamp.Sub(t0)
				// Expected in float: shift + dt·(1 + ppm/1e6).
				want := t0.Add(tc.shift + dt + time.Duration(float64(dt)*tc.ppm/1e6))
				if d := g.Info.Timestamp.Sub(want); d < -time.Nanosecond || d > time.Nanosecond {
					t.Errorf("input frame %d: time %v, want %v", i+1, g.Info.Timestamp, want)
				}
				if !bytes.Equal(g.Data, f.Data) {
					t.Errorf("input frame %d: bytes changed", i+1)
				}
			}
			if rep.TimeShift != tc.shift || rep.TimeDriftPPM != tc.ppm {
				t.Errorf("report says shift %v drift %v", rep.TimeShift, rep.TimeDriftPPM)
			}
			if in[0].Info.Timestamp != t0 {
				t.Fatal("the input was modified")
			}
		})
	}
}
