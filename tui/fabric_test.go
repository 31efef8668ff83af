package tui

import (
	"testing"
)

// TestStatsFabric: the statistics view shows the capture's PFC report as
// rocetap stats prints it: per port and priority, at the link speed of
// the capture's interface (if_speed), with the time paused per priority
// over time.
func TestStatsFabric(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "../synth/pfc_pauses.pcapng", "", 160, 80, rvNoDetails)
	rh.press('S')
	s := rh.wait("the PFC report", func(s *rvScreen) bool {
		return s.line("counting") < 0 && s.line("PFC (storm threshold 100ms)") >= 0
	})
	for _, want := range []string{
		"pfc_storm 1, pfc_paused_traffic 1, pfc_unused_priority 1",
		"if 0 02:00:5e:10:00:fe at 10.00 Gbit/s (if_speed)",
		"priority 3: XOFF 61, XON 2, asked 204.6789ms, paused 120.2ms, longest 120ms, storms 1",
		"time paused per priority (60 × 4ms",
		"priority 3: |▇████",
	} {
		if s.line(want) < 0 {
			t.Errorf("the statistics view lacks %q:\n%s", want, s)
		}
	}
}
