package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMPTGolden: decode, expert, sessions and stats with --mpt, against
// files in testdata/golden (go test ./internal/cli -update rewrites them).
func TestMPTGolden(t *testing.T) {
	mpt := func(s string) []string {
		return []string{"-r", td + "rxe/" + s + ".pcap", "--mpt", td + "rxe/" + s + ".mpt.json"}
	}
	args := func(cmd, capture string, more ...string) []string {
		return append(append([]string{cmd}, mpt(capture)...), more...)
	}
	fields := []string{"-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "rocetap.mpt.op", "-e", "rocetap.mpt.verdict",
		"-e", "rocetap.mpt.rkey", "-e", "rocetap.mpt.mr", "-e", "rocetap.mpt.window", "-e", "rocetap.mpt.mr_va", "-e", "rocetap.mpt.mr_len",
		"-e", "rocetap.mpt.offset", "-e", "rocetap.mpt.over", "-e", "rocetap.mpt.cache_hit", "-e", "rocetap.mpt.finding", "-e", "rocetap.expert.kind"}
	cases := []struct {
		name string
		args []string
	}{
		{"send_inv.mpt-fields", args("decode", "send_inv", fields...)},
		{"err_write_oob_multi.mpt-fields", args("decode", "err_write_oob_multi", fields...)},
		{"err_write_oob.mpt-text", args("decode", "err_write_oob")},
		{"send_inv.mpt-expert", args("expert", "send_inv")},
		{"ipv6_mix.mpt-expert-json", args("expert", "ipv6_mix", "-T", "json")},
		{"err_bad_rkey.mpt-sessions", args("sessions", "err_bad_rkey")},
		{"err_read_noperm.mpt-stats", args("stats", "err_read_noperm")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkGolden(t, c.name, out)
		})
	}
}

// TestMPTCommands: what --mpt adds to each command's output, and that the
// commands without --mpt are unchanged by it.
func TestMPTCommands(t *testing.T) {
	pcapf, file := td+"rxe/err_write_oob.pcap", td+"rxe/err_write_oob.mpt.json"
	out, errOut, code := run(t, nil, "decode", "-r", pcapf, "--mpt", file, "-Y", "rocetap.mpt.violation", "-T", "fields", "-e", "frame.number", "-e", "rocetap.mpt.over")
	if code != 0 || out != "3\t256\n" {
		t.Errorf("-Y rocetap.mpt.violation: exit %d %q %s", code, out, errOut)
	}
	// -T fields with no analysis field still runs the tracker for -Y.
	out, _, _ = run(t, nil, "decode", "-r", pcapf, "--mpt", file, "-Y", `rocetap.mpt.verdict == "ok"`, "-T", "fields", "-e", "frame.number")
	if out != "1\n" {
		t.Errorf(`-Y rocetap.mpt.verdict == "ok": %q`, out)
	}
	// Without --mpt there is no rocetap.mpt field, in any output.
	for _, args := range [][]string{{"decode", "-r", pcapf}, {"decode", "-r", pcapf, "-T", "json"}, {"decode", "-r", pcapf, "-V"}, {"sessions", "-r", pcapf, "-T", "json"}} {
		out, _, _ := run(t, nil, args...)
		if strings.Contains(out, "rocetap.mpt") || strings.Contains(out, "MPT") || strings.Contains(out, `"mpt"`) {
			t.Errorf("%v without --mpt mentions the MPT:\n%s", args, out)
		}
	}
	// JSON: the fields in the rocetap layer, the per-session counts.
	out, _, _ = run(t, nil, "decode", "-r", pcapf, "--mpt", file, "-T", "json")
	var pkts []struct {
		Layers map[string]map[string]any `json:"layers"`
	}
	if err := json.Unmarshal([]byte(out), &pkts); err != nil || len(pkts) != 4 {
		t.Fatalf("json: %v (%d packets)", err, len(pkts))
	}
	rt := pkts[2].Layers["rocetap"]
	if rt["rocetap.mpt.verdict"] != "out_of_bounds" || rt["rocetap.mpt.over"] != "256" || rt["rocetap.analysis.mpt_violation"] != "1" {
		t.Errorf("frame 3 rocetap layer: %v", rt)
	}
	if f := pkts[3].Layers["rocetap"]["rocetap.mpt.finding"]; f != "agrees" {
		t.Errorf("frame 4 finding %v", f)
	}
	out, _, _ = run(t, nil, "sessions", "-r", pcapf, "--mpt", file, "-T", "json")
	var ss []struct {
		MPT map[string]int `json:"mpt"`
	}
	if err := json.Unmarshal([]byte(out), &ss); err != nil || len(ss) != 1 ||
		ss[0].MPT["checked"] != 2 || ss[0].MPT["violations"] != 1 || ss[0].MPT["accepted"] != 0 || ss[0].MPT["rejected"] != 0 {
		t.Errorf("sessions json: %v %s", err, out)
	}
	// The tracked paths agree with --mpt too.
	for _, c := range [][]string{{"decode", "-r", pcapf, "--mpt", file}, {"expert", "-r", pcapf, "--mpt", file}} {
		t.Setenv("ROCETAP_WORKERS", "2")
		a, _, _ := run(t, nil, c...)
		t.Setenv("ROCETAP_WORKERS", "1")
		b, _, _ := run(t, nil, c...)
		os.Unsetenv("ROCETAP_WORKERS")
		if a != b {
			t.Errorf("%v: outputs differ between the two tracked paths", c)
		}
	}
}

// TestMPTFileErrors: a bad MPT file stops every command before the capture
// is read, with mpt's error (file:line:col: $.path: what) and exit status 1.
func TestMPTFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mpt.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1,
 "responder": {"address": "10.77.0.2"},
 "pds": [{"id": 0}], "qps": [],
 "mrs": [{"rkey": "0x1", "lkey": "0x1", "va": "0x1000", "length": 4096, "pd": 7, "access": ["REMOTE_WRITE"]}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file string
		want string
	}{
		{bad, bad + ":4:"},
		{filepath.Join(dir, "missing.json"), "--mpt: cannot read the MPT file: open " + filepath.Join(dir, "missing.json")},
	}
	for _, c := range cases {
		for _, cmd := range []string{"decode", "sessions", "stats", "expert"} {
			out, errOut, code := run(t, nil, cmd, "-r", "/nonexistent.pcap", "--mpt", c.file)
			if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "nonexistent.pcap") {
				t.Errorf("%s --mpt %s: exit %d, stdout %q, stderr %q, want %q", cmd, c.file, code, out, errOut, c.want)
			}
		}
	}
	_, errOut, _ := run(t, nil, "decode", "-r", td+"rxe/send_inv.pcap", "--mpt", bad)
	if !strings.Contains(errOut, "$.mrs[0].pd: ") {
		t.Errorf("error %q does not name the JSON path", errOut)
	}
}
