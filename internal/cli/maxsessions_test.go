package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// Past --max-sessions the reports say how many sessions were evicted.
func TestMaxSessionsReports(t *testing.T) {
	const capture = "../../testdata/rxe/pt_write.pcap" // three sessions, one after another
	const line = "Evicted: 2 sessions, the least recently active past --max-sessions 1"
	for _, cmd := range []string{"stats", "sessions", "expert"} {
		out, _, code := run(t, nil, cmd, "-r", capture, "--max-sessions", "1")
		if code != 0 || !strings.Contains(out, line) {
			t.Errorf("%s: exit %d, output lacks %q:\n%s", cmd, code, line, out)
		}
		if out, _, _ := run(t, nil, cmd, "-r", capture); strings.Contains(out, "Evicted") {
			t.Errorf("%s without eviction says Evicted:\n%s", cmd, out)
		}
	}
	out, _, _ := run(t, nil, "stats", "-r", capture, "--max-sessions", "1", "-T", "json")
	var stats struct {
		Evicted struct {
			Sessions uint64 `json:"sessions"`
			Max      int    `json:"max_sessions"`
		} `json:"evicted"`
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &stats); err != nil || stats.Evicted.Sessions != 2 || stats.Evicted.Max != 1 || len(stats.Sessions) != 1 {
		t.Errorf("stats -T json: %v, evicted %+v, %d sessions", err, stats.Evicted, len(stats.Sessions))
	}
	out, _, _ = run(t, nil, "sessions", "-r", capture, "--max-sessions", "1", "-T", "json")
	var list []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[1]["evicted"] == nil {
		t.Errorf("sessions -T json: %v, %d elements, want the session and {\"evicted\":...} last:\n%s", err, len(list), out)
	}
	out, _, _ = run(t, nil, "expert", "-r", capture, "--max-sessions", "1", "-T", "json")
	var ex struct {
		Evicted *struct {
			Sessions uint64 `json:"sessions"`
		} `json:"evicted"`
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil || ex.Evicted == nil || ex.Evicted.Sessions != 2 {
		t.Errorf("expert -T json: %v, want \"evicted\" with 2 sessions:\n%s", err, out)
	}
	if out, _, _ := run(t, nil, "expert", "-r", capture, "-T", "json"); strings.Contains(out, "evicted") {
		t.Errorf("expert -T json without eviction says evicted:\n%s", out)
	}
	if _, errOut, code := run(t, nil, "decode", "-r", capture, "--max-sessions", "-1"); code == 0 || !strings.Contains(errOut, "--max-sessions -1") {
		t.Errorf("decode --max-sessions -1: exit %d, %q", code, errOut)
	}
}
