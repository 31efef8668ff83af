package tui

import "testing"

// TestAppSessionsLIDs: native InfiniBand without a GRH has no addresses,
// only LIDs; the session list names its endpoints lid:N, as the sessions
// report does.
func TestAppSessionsLIDs(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"synth/ib_lid_rc.pcap")
	h.waitText("Frame 1:")
	h.typ("s")
	h.waitText(" Sessions ", "lid:1/0x000048", "lid:2/0x000049")
}
