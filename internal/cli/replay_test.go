package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rxe = td + "rxe/"

// replayArgs is `replay -r rxe/NAME.pcap --mpt rxe/NAME.mpt.json` and more.
func replayArgs(name string, more ...string) []string {
	return append([]string{"replay", "-r", rxe + name + ".pcap", "--mpt", rxe + name + ".mpt.json"}, more...)
}

// TestReplayGolden checks replay's text and JSON outputs against
// testdata/golden/replay_*.golden (go test ./internal/cli -update
// rewrites them), with their exit status: 0 when the model and the
// capture agree, 1 when they diverge (err_qp_access under the ibta
// profile: rxe NAKs a QP access violation with Invalid Request, the spec
// with Remote Access Error).
func TestReplayGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"replay_read_atomic.text", replayArgs("read_atomic"), 0},
		{"replay_err_rnr_recover.text", replayArgs("err_rnr_recover"), 0},
		{"replay_err_qp_access.ibta.text", replayArgs("err_qp_access", "--profile", "ibta"), ExitDivergence},
		{"replay_err_qp_access.ibta.json", replayArgs("err_qp_access", "--profile", "ibta", "-T", "json"), ExitDivergence},
		{"replay_ipv6_mix.json", replayArgs("ipv6_mix", "-T", "json"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut)
			}
			checkGolden(t, c.name, out)
			if strings.HasSuffix(c.name, ".json") && !json.Valid([]byte(out)) {
				t.Error("invalid JSON")
			}
		})
	}
}

// TestReplayExitStatus: 0 agree, 1 diverge, 2 usage or input error; every
// error names the input and says what to do.
func TestReplayExitStatus(t *testing.T) {
	dir := t.TempDir()
	badMPT := filepath.Join(dir, "bad.mpt.json")
	os.WriteFile(badMPT, []byte("{\"version\": 1,\n \"responder\": {\"address\": \"10.77.0.2\"},\n \"pds\": [], \"qps\": [{\"qpn\": \"0x1000000\"}], \"mrs\": []}"), 0o644)
	badProfile := filepath.Join(dir, "profile.mpt.json")
	data, _ := os.ReadFile(rxe + "read_atomic.mpt.json")
	os.WriteFile(badProfile, []byte(strings.Replace(string(data), `"profile": "rxe"`, `"profile": "mlx5"`, 1)), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		{"agree", replayArgs("err_bad_rkey"), 0, nil},
		{"agree, profile from the MPT", replayArgs("err_recv_too_small"), 0, nil},
		{"diverge", replayArgs("err_recv_too_small", "--profile", "ibta"), ExitDivergence, []string{"replay: 1 divergence from the reference model (profile ibta)"}},
		{"no -r", []string{"replay", "--mpt", rxe + "pt_ud.mpt.json"}, ExitInput, []string{"no capture given: use -r FILE"}},
		{"no --mpt", []string{"replay", "-r", rxe + "pt_ud.pcap"}, ExitInput, []string{"no MPT file given: use --mpt FILE"}},
		{"MPT missing", []string{"replay", "-r", rxe + "pt_ud.pcap", "--mpt", dir + "/none.json"}, ExitInput, []string{"--mpt: cannot read the MPT file", "none.json", "no such file"}},
		{"MPT malformed", []string{"replay", "-r", rxe + "pt_ud.pcap", "--mpt", badMPT}, ExitInput, []string{badMPT + ":3:", "$.qps[0]", "rocetap help mpt-format"}},
		{"MPT profile unknown", []string{"replay", "-r", rxe + "read_atomic.pcap", "--mpt", badProfile}, ExitInput, []string{"$.profile", `unknown responder profile "mlx5"`, "ibta, rxe"}},
		{"--profile unknown", replayArgs("pt_ud", "--profile", "mlx5"), ExitInput, []string{"--profile: unknown responder profile", "use one of ibta, rxe"}},
		{"--responder bad", replayArgs("pt_ud", "--responder", "host-b"), ExitInput, []string{`--responder "host-b": want an IPv4 address`}},
		{"--responder wrong", replayArgs("pt_ud", "--responder", "10.77.0.9"), ExitInput, []string{"nothing to replay", "10.77.0.9", "go to 10.77.0.2", "pass --responder"}},
		{"--responder the other host", replayArgs("read_atomic", "--responder", "10.77.0.1"), ExitInput, []string{"nothing to replay"}},
		{"--responder IPv4-mapped", replayArgs("err_bad_rkey", "--responder", "::ffff:10.77.0.2"), 0, nil},
		{"capture missing", []string{"replay", "-r", dir + "/none.pcap", "--mpt", rxe + "pt_ud.mpt.json"}, ExitInput, []string{"none.pcap"}},
		{"not a capture", []string{"replay", "-r", rxe + "README.md", "--mpt", rxe + "pt_ud.mpt.json"}, ExitInput, []string{"not a capture file"}},
		{"bad -T", replayArgs("pt_ud", "-T", "fields"), ExitInput, []string{`-T "fields": want text or json`}},
		{"bad flag", replayArgs("pt_ud", "--nosuch"), ExitInput, []string{"unknown flag: --nosuch", "rocetap replay --help"}},
		{"argument", replayArgs("pt_ud", "extra.pcap"), ExitInput, []string{`unexpected argument "extra.pcap"`}},
		{"bad filter", replayArgs("pt_ud", "-Y", "infiniband.reth.rkey == 1"), ExitInput, []string{"did you mean infiniband.reth.r_key"}},
		{"negative limit", replayArgs("pt_ud", "--max-divergences", "-1"), ExitInput, []string{"--max-divergences -1"}},
		{"--cache-entries 0", replayArgs("pt_ud", "--cache-entries", "0"), ExitInput, []string{"--cache-entries 0: want 1 to"}},
		{"--page-size not a power of two", replayArgs("pt_ud", "--page-size", "3000"), ExitInput, []string{"--page-size 3000: want a power of two"}},
		{"junit not writable", replayArgs("pt_ud", "--junit", dir+"/no/such/dir/x.xml"), ExitInput, []string{"--junit " + dir + "/no/such/dir/x.xml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := run(t, nil, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if c.code == 0 && errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
}

// TestReplayOtherCommandsKeepTheirStatus: replay's status 2 for usage
// errors is its own; the other commands still exit 1.
func TestReplayOtherCommandsKeepTheirStatus(t *testing.T) {
	if _, _, code := run(t, nil, "decode"); code != 1 {
		t.Fatalf("decode without -r: exit %d, want 1", code)
	}
	if _, _, code := run(t, nil, "stats", "--nosuch"); code != 1 {
		t.Fatalf("stats with a bad flag: exit %d, want 1", code)
	}
}

func TestReplayJUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replay.xml")
	out, errOut, code := run(t, nil, replayArgs("err_qp_access", "--profile", "ibta", "--junit", path)...)
	if code != ExitDivergence {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Cases    []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(data, &suite); err != nil {
		t.Fatalf("invalid JUnit XML: %v\n%s", err, data)
	}
	if suite.Name != "rocetap replay "+rxe+"err_qp_access.pcap" || suite.Tests != 1 || suite.Failures != 1 || len(suite.Cases) != 1 {
		t.Fatalf("%+v", suite)
	}
	c := suite.Cases[0]
	if c.Name != "QP 0x000032 ← 10.77.0.1 QP 0x000033" || len(c.Failures) != 1 || c.Failures[0].Type != "syndrome" ||
		!strings.HasPrefix(c.Failures[0].Message, "frame 3 → 4: syndrome: model NAK Remote Access Error (0x62") {
		t.Fatalf("%+v", c)
	}
	if !strings.Contains(out, c.Failures[0].Message) {
		t.Error("the text report and the JUnit failure say different things")
	}
	// The report is a user's file now: another replay keeps it, before
	// replaying anything, unless --force.
	if out, errOut, code := run(t, nil, replayArgs("pt_write", "--junit", path)...); code != ExitInput || out != "" || !strings.Contains(errOut, "--junit "+path+": file exists") || !strings.Contains(errOut, "--force") {
		t.Fatalf("a second --junit to the same file: exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout and the file kept", code, out, errOut, ExitInput)
	}
	if kept, _ := os.ReadFile(path); !bytes.Equal(kept, data) {
		t.Fatal("the refused replay changed the existing JUnit file")
	}
	// A passing replay writes a passing suite.
	if _, errOut, code := run(t, nil, replayArgs("pt_write", "--junit", path, "--force")...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, _ = os.ReadFile(path)
	if err := xml.Unmarshal(data, &suite); err != nil || suite.Tests != 3 || suite.Failures != 0 {
		t.Fatalf("%v %+v", err, suite)
	}
}

// TestReplayJUnitNotes: a note (a legal responder choice) is no failure
// in JUnit; it is its session's <system-out>. rping rewrites its buffer
// between two READs (memory_changed).
func TestReplayJUnitNotes(t *testing.T) {
	dir := t.TempDir()
	learned, path := filepath.Join(dir, "l.json"), filepath.Join(dir, "r.xml")
	if _, errOut, code := run(t, nil, "mpt", "learn", "-r", rxe+"cm_rping.pcap", "-o", learned); code != 0 {
		t.Fatalf("learn: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, nil, "replay", "-r", rxe+"cm_rping.pcap", "--mpt", learned, "--junit", path); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Failures []struct{} `xml:"failure"`
			Out      string     `xml:"system-out"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(data, &suite); err != nil {
		t.Fatalf("invalid JUnit XML: %v\n%s", err, data)
	}
	if suite.Failures != 0 || len(suite.Cases) != 1 || len(suite.Cases[0].Failures) != 0 ||
		!strings.HasPrefix(suite.Cases[0].Out, "note (memory_changed): frame 18 → 19: memory changed") {
		t.Fatalf("%+v\n%s", suite, data)
	}
}

// TestReplayFlags: flags land in ReplayOptions (runF), defaults included.
func TestReplayFlags(t *testing.T) {
	var got *ReplayOptions
	cmd := newCmdReplay(IO{}, func(o *ReplayOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-r", "x.pcap", "--mpt", "x.json", "--responder", "fd77::2", "--profile", "rxe", "-T", "json",
		"--junit", "r.xml", "-Y", "infiniband", "--max-divergences", "5", "-d", "udp.port==4792,infiniband"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := ReplayOptions{readOptions: readOptions{Path: "x.pcap", Decode: []string{"udp.port==4792,infiniband"}}, MPT: "x.json",
		Responder: "fd77::2", Profile: "rxe", Output: "json", JUnit: "r.xml", Filter: "infiniband", MaxDivergences: 5, MaxCompletions: 1000}
	if got == nil || got.Path != want.Path || got.MPT != want.MPT || got.Responder != want.Responder || got.Profile != want.Profile ||
		got.Output != want.Output || got.JUnit != want.JUnit || got.Filter != want.Filter || got.MaxDivergences != 5 ||
		got.MaxCompletions != 1000 || len(got.Decode) != 1 {
		t.Fatalf("%+v", got)
	}
	cmd = newCmdReplay(IO{}, func(o *ReplayOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-r", "x.pcap", "--mpt", "x.json"})
	if err := cmd.Execute(); err != nil || got.Output != "text" || got.MaxDivergences != 1000 || got.Profile != "" || got.Responder != "" {
		t.Fatalf("defaults: %v %+v", err, got)
	}
}

// TestReplayCorrupt: a capture corrupt at packet 9 is replayed up to it,
// reported, and ends with the error and exit status 2.
func TestReplayCorrupt(t *testing.T) {
	path, _, _ := corruptCapture(t) // read_atomic.pcap, packet 9 corrupt
	out, errOut, code := run(t, nil, "replay", "-r", path, "--mpt", rxe+"read_atomic.mpt.json")
	if code != 2 || !strings.Contains(errOut, "packet 9") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "Packets: 8: 4 requests to the responder, 4 responses from it") ||
		!strings.Contains(out, "replay: 4 requests, 4 responses compared, 0 divergences") ||
		!strings.Contains(out, "Note: the capture ends early (it is corrupt after frame 8): 2 model responses had no captured counterpart yet and were not compared") {
		t.Fatalf("report of the 8 good packets expected:\n%s", out)
	}
}

func TestReplayStdinAndPaths(t *testing.T) {
	data, _ := os.ReadFile(rxe + "pt_read.pcap")
	a, _, codeA := run(t, nil, replayArgs("pt_read")...)
	b, errOut, codeB := run(t, data, "replay", "-r", "-", "--mpt", rxe+"pt_read.mpt.json")
	if codeA != 0 || codeB != 0 {
		t.Fatalf("exit %d %d: %s", codeA, codeB, errOut)
	}
	if strings.Replace(a, rxe+"pt_read.pcap", "-", 1) != b {
		t.Errorf("stdin report differs:\n%s\n%s", a, b)
	}
	// Both read paths give the same report.
	t.Setenv("ROCETAP_WORKERS", "2")
	c, _, _ := run(t, nil, replayArgs("pt_read")...)
	if c != a {
		t.Errorf("ROCETAP_WORKERS=2 report differs:\n%s\n%s", a, c)
	}
}

// TestReplayFilter: -Y replays a part of the capture; the rest is counted
// as filtered.
func TestReplayFilter(t *testing.T) {
	out, errOut, code := run(t, nil, replayArgs("pt_write", "-Y", "infiniband.bth.destqp == 0x000011", "-T", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Requests int `json:"requests"`
		Compared int `json:"compared"`
		Ignored  struct {
			Filtered int `json:"filtered"`
		} `json:"ignored"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Requests != 5 || doc.Compared != 5 || doc.Ignored.Filtered != 40 {
		t.Fatalf("%+v", doc)
	}
}

// TestReplayCache: the translation cache report follows --cache-entries
// and --page-size. read_atomic looks up 8 translations in one MR: 5 for
// its READs in the page at 0x55555557b000 (one per READ response packet),
// 3 for its ATOMICs in the page at 0x55555557c000. With 4 KiB pages (and
// 8 KiB ones: 0x55555557c000 is 16 KiB-aligned) that is two pages, two
// misses; one entry evicts the first page for the second; 32 KiB pages
// hold both.
func TestReplayCache(t *testing.T) {
	type cache struct {
		Entries   int    `json:"entries"`
		PageSize  uint64 `json:"page_size"`
		Hits      uint64 `json:"hits"`
		Misses    uint64 `json:"misses"`
		Evictions uint64 `json:"evictions"`
		MRs       []struct {
			Key          string `json:"key"`
			Hits, Misses uint64
		} `json:"mrs"`
		QPs []struct {
			Key          string `json:"key"`
			Hits, Misses uint64
		} `json:"qps"`
	}
	cases := []struct {
		flags []string
		want  cache
	}{
		{nil, cache{Entries: 1024, PageSize: 4096, Hits: 6, Misses: 2}},
		{[]string{"--cache-entries", "1"}, cache{Entries: 1, PageSize: 4096, Hits: 6, Misses: 2, Evictions: 1}},
		{[]string{"--page-size", "8192"}, cache{Entries: 1024, PageSize: 8192, Hits: 6, Misses: 2}},
		{[]string{"--page-size", "32768"}, cache{Entries: 1024, PageSize: 32768, Hits: 7, Misses: 1}},
		// The largest cache the flag takes costs what it holds (it
		// preallocated 57 GB and died out of memory).
		{[]string{"--cache-entries", "1073741824"}, cache{Entries: 1 << 30, PageSize: 4096, Hits: 6, Misses: 2}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.flags, " "), func(t *testing.T) {
			out, errOut, code := run(t, nil, replayArgs("read_atomic", append([]string{"-T", "json"}, c.flags...)...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var rep struct{ Cache cache }
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			got := rep.Cache
			if got.Hits+got.Misses != 8 || len(got.MRs) != 1 || got.MRs[0].Key != "0x000009d2" || len(got.QPs) != 1 ||
				got.MRs[0].Hits != got.Hits || got.QPs[0].Misses != got.Misses {
				t.Fatalf("cache %+v: want 8 lookups, all of MR 0x000009d2 and one QP", got)
			}
			if got.Entries != c.want.Entries || got.PageSize != c.want.PageSize || got.Hits != c.want.Hits ||
				got.Misses != c.want.Misses || got.Evictions != c.want.Evictions {
				t.Errorf("cache %+v, want %+v", got, c.want)
			}
		})
	}
}
