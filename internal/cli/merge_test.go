package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A capture that starts on a response (err_rnr_recover without its first
// SEND): the RNR NAK direction is a session of its own (1) until the next
// RNR NAK pairs it with the SEND's session (2). The merged session keeps
// the first RNR NAK, sessions and stats count the same, and frame 1's
// session ID (1) leads to the session that absorbed it: -Y on it selects
// that session, and the list names it.
func TestMergedSessionReports(t *testing.T) {
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if _, err := runEdit(t, "-r", td+"rxe/err_rnr_recover.pcap", "-w", cut, "--drop", "1"); err != nil {
		t.Fatal(err)
	}
	fields, _, code := run(t, nil, "decode", "-r", cut, "-T", "fields", "-e", "rocetap.session.id", "-c", "1")
	if code != 0 || strings.TrimSpace(fields) != "1" {
		t.Fatalf("frame 1: session %q (exit %d), want the provisional session 1", fields, code)
	}
	type session struct {
		ID      uint32                   `json:"id"`
		Merged  []uint32                 `json:"merged_ids"`
		RNRNaks map[string]uint64        `json:"rnr_naks"`
		ByA     struct{ Packets uint64 } `json:"sent_by_a"`
		ByB     struct{ Packets uint64 } `json:"sent_by_b"`
	}
	var list []session
	out, _, _ := run(t, nil, "sessions", "-r", cut, "-T", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Packets  uint64    `json:"packets"`
		Sessions []session `json:"sessions"`
	}
	out, _, _ = run(t, nil, "stats", "-r", cut, "-T", "json")
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != 2 || len(list[0].Merged) != 1 || list[0].Merged[0] != 1 {
		t.Fatalf("sessions: %+v, want session 2 with session 1 merged into it", list)
	}
	s := list[0]
	if n := s.RNRNaks["RNR NAK (timer=14: 1.28 ms)"]; n != 5 || s.ByA.Packets+s.ByB.Packets != stats.Packets {
		t.Errorf("session: %d RNR NAKs (the capture has 5), %d packets of %d", n, s.ByA.Packets+s.ByB.Packets, stats.Packets)
	}
	if b1, _ := json.Marshal(stats.Sessions); string(b1) != mustJSON(t, list) {
		t.Errorf("stats and sessions differ:\n%+v\n%+v", stats.Sessions, list)
	}
	out, _, _ = run(t, nil, "sessions", "-r", cut, "-T", "json", "-Y", "rocetap.session.id == 1")
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ID != 2 {
		t.Errorf("-Y 'rocetap.session.id == 1' lists %s, want session 2", out)
	}
	var expert struct {
		Groups []struct {
			Events []struct {
				Session uint32 `json:"session"`
				Text    string `json:"text"`
			} `json:"events"`
		} `json:"groups"`
	}
	out, _, _ = run(t, nil, "expert", "-r", cut, "-T", "json")
	if err := json.Unmarshal([]byte(out), &expert); err != nil {
		t.Fatal(err)
	}
	for _, g := range expert.Groups {
		for _, e := range g.Events {
			if e.Session != 2 {
				t.Errorf("event %q in session %d, not in the list", e.Text, e.Session)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
