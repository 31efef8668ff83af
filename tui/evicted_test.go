package tui

import (
	"testing"

	"github.com/rocetap/rocetap/flow"
)

// TestEvictedShown: with --max-sessions (the tracker's MaxSessions), the
// TUI says, as rocetap stats and sessions do, how many sessions were
// evicted and that their later packets started new sessions: on the
// statistics view's Evicted: line and in the sessions view's title.
// pt_write.pcap holds three sessions one after another: kept 1, 2
// evicted.
func TestEvictedShown(t *testing.T) {
	for _, c := range []struct {
		max  int
		want bool
	}{{1, true}, {0, false}} {
		newTracker := func(on func(*flow.Event)) *flow.Tracker {
			return flow.New(flow.Options{OnEvent: on, MaxSessions: c.max})
		}
		rh := rvNewTrackers(t, "pt_write.pcap", newTracker, 200, 40)
		rh.ix.Build(BuildOptions{NewTracker: newTracker})
		rh.run()
		rh.app.Refresh() // as the index's last Notify does
		rh.press('S')
		s := rh.wait("the statistics", func(s *rvScreen) bool { return s.line("Packets: ") >= 0 && s.line("counting") < 0 })
		if got := s.line("Evicted: 2 sessions, the least recently active past --max-sessions 1") >= 0; got != c.want {
			t.Errorf("max %d: Evicted: line shown %v, want %v:\n%s", c.max, got, c.want, s)
		}
		rh.press('s')
		s = rh.wait("the sessions", func(s *rvScreen) bool { return s.line(" Sessions") >= 0 })
		if got := s.line("Sessions: 2 more evicted past --max-sessions 1, their later packets started new sessions") >= 0; got != c.want {
			t.Errorf("max %d: the sessions title says evicted %v, want %v:\n%s", c.max, got, c.want, s)
		}
	}
}
