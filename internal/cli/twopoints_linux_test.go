//go:build linux

package cli

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/printer"
)

// checkTwoPointReports is TestPathNetns's check of sessions, stats and
// expert -r A -r B against the forwarder's log (truth, in pathFrames'
// form): the lost, duplicated and reordered counts, each path_loss event
// on a frame the forwarder dropped, and the median delay each way
// within 10% of the configured one.
func checkTwoPointReports(t *testing.T, capA, capB string, truth map[string][]string, delay time.Duration) {
	t.Helper()
	near := func(what string, d *printer.PathDelayJSON) {
		t.Helper()
		if d == nil || d.Median < 0.9*delay.Seconds() || d.Median > 1.1*delay.Seconds() {
			t.Errorf("%s: one-way delay %+v, configured %v (±10%%)", what, d, delay)
		}
	}
	var ses printer.PathSessionsJSON
	twoPoints(t, "sessions", capA, capB, &ses)
	var lost, dup, reo, matched int
	for _, s := range ses.Sessions {
		lost, dup, reo, matched = lost+s.Lost, dup+s.Duplicates, reo+s.Reordered, matched+s.Matched
		for d, f := range s.Directions {
			if f.Matched > 100 {
				near(fmt.Sprintf("sessions: session %s:%d %s", s.SessionPoint, s.Session, d), f.Delay)
			}
		}
	}
	if lost != len(truth["lost"]) || dup != len(truth["duplicated"]) || reo != len(truth["reordered"]) {
		t.Errorf("sessions -r A -r B: %d lost, %d duplicated, %d reordered; the forwarder's log: %d, %d, %d",
			lost, dup, reo, len(truth["lost"]), len(truth["duplicated"]), len(truth["reordered"]))
	}

	var st printer.PathStatsJSON
	twoPoints(t, "stats", capA, capB, &st)
	lost, dup, reo = 0, 0, 0
	for _, d := range []string{"A->B", "B->A"} {
		f := st.Directions[d]
		lost, dup, reo = lost+f.Lost, dup+f.Duplicates, reo+f.Reordered
		near("stats: "+d, f.Delay)
	}
	if lost != len(truth["lost"]) || dup != len(truth["duplicated"]) || reo != len(truth["reordered"]) {
		t.Errorf("stats -r A -r B: %d lost, %d duplicated, %d reordered; the forwarder's log: %d, %d, %d",
			lost, dup, reo, len(truth["lost"]), len(truth["duplicated"]), len(truth["reordered"]))
	}
	if o := st.Clock.Offset; !st.Clock.Known || o < -0.02*delay.Seconds() || o > 0.02*delay.Seconds() {
		t.Errorf("stats -r A -r B: clock %+v, want an offset about 0 (one kernel clock)", st.Clock)
	}

	// expert: each path_loss event's frame is one the forwarder dropped.
	var ex printer.PathExpertJSON
	twoPoints(t, "expert", capA, capB, &ex)
	frames := pathFrames(t, capA, capB)
	var got []string
	for _, g := range ex.Expert {
		if g.Kind != decode.PathEventLoss {
			continue
		}
		for _, e := range g.Events {
			f := frames(fmt.Sprintf("rocetap.path.point == %q and frame.number == %d", e.Point, e.Frame))
			if len(f) != 1 {
				t.Fatalf("expert: path_loss on %s frame %d, which rocetap path does not have", e.Point, e.Frame)
			}
			got = append(got, f[0])
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, truth["lost"]) {
		t.Errorf("expert -r A -r B: path_loss on %v\nthe forwarder's log: %v", got, truth["lost"])
	}
	t.Logf("sessions, stats and expert -r A -r B: %d lost, %d duplicated, %d reordered, as the forwarder logged", lost, dup, reo)
}
