package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func run(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, IO{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

const td = "../../testdata/"

// checkGolden compares out with testdata/golden/NAME.golden, or writes it
// with -update.
func checkGolden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join(td, "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update)", err)
	}
	if out != string(want) {
		t.Errorf("output differs from %s (go test ./internal/cli -update after checking the diff)\n--- got\n%s\n--- want\n%s", path, out, want)
	}
}

// TestGolden checks every output format against files in
// testdata/golden; go test ./internal/cli -update rewrites them.
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"read_atomic.text", []string{"decode", "-r", td + "rxe/read_atomic.pcap"}},
		{"ipv6_mix.text", []string{"decode", "-r", td + "rxe/ipv6_mix.pcap"}},
		{"cm_rping.text", []string{"decode", "-r", td + "rxe/cm_rping.pcap", "-c", "8"}},
		{"send_inv.text", []string{"decode", "-r", td + "rxe/send_inv.pcap"}},
		{"read_atomic.fields", []string{"decode", "-r", td + "rxe/read_atomic.pcap", "-T", "fields", "-E", "header=y",
			"-e", "frame.number", "-e", "frame.time_relative", "-e", "ip.addr", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn",
			"-e", "infiniband.reth.va", "-e", "infiniband.reth.r_key", "-e", "infiniband.aeth.syndrome", "-e", "rocetap.icrc.status"}},
		{"ud_imm.fields-quoted", []string{"decode", "-r", td + "rxe/ud_imm.pcap", "-T", "fields", "-E", "separator=,", "-E", "quote=d",
			"-E", "occurrence=f", "-e", "ip.addr", "-e", "infiniband.deth.q_key", "-e", "infiniband.immdt"}},
		{"read_atomic.json", []string{"decode", "-r", td + "rxe/read_atomic.pcap", "-T", "json", "-c", "3"}},
		{"write_imm.verbose", []string{"decode", "-r", td + "rxe/write_imm.pcap", "-V", "-c", "2"}},
		{"cm_rping.verbose", []string{"decode", "-r", td + "rxe/cm_rping.pcap", "-V", "-c", "1"}},
		// native InfiniBand: the InfiniBand item spans LRH..VCRC (LNH 2 and 3,
		// a VL15 SMP), with the ICRCs of LNH 3 packets good
		{"ib_native.verbose", []string{"decode", "-r", td + "synth/ib_native.pcap", "-V"}},
		// the flow tracker: sessions, stats, expert, and its per-packet fields
		{"cm_perftest.sessions", []string{"sessions", "-r", td + "rxe/cm_perftest.pcap"}},
		{"pt_write.sessions", []string{"sessions", "-r", td + "rxe/pt_write.pcap"}},
		{"ipv6_mix.sessions-json", []string{"sessions", "-r", td + "rxe/ipv6_mix.pcap", "-T", "json"}},
		{"err_psn_seq.sessions-json", []string{"sessions", "-r", td + "rxe/err_psn_seq.pcap", "-T", "json"}},
		{"read_atomic.stats", []string{"stats", "-r", td + "rxe/read_atomic.pcap"}},
		{"err_rnr_recover.stats", []string{"stats", "-r", td + "rxe/err_rnr_recover.pcap"}},
		{"pfc.stats", []string{"stats", "-r", td + "synth/pfc.pcap"}},
		{"ipv6_mix.stats-json", []string{"stats", "-r", td + "rxe/ipv6_mix.pcap", "-T", "json"}},
		{"err_psn_seq.expert", []string{"expert", "-r", td + "rxe/err_psn_seq.pcap"}},
		{"cm_rping.expert", []string{"expert", "-r", td + "rxe/cm_rping.pcap"}},
		{"err_write_oob_multi.expert-json", []string{"expert", "-r", td + "rxe/err_write_oob_multi.pcap", "-T", "json"}},
		{"err_rnr.expert-filtered", []string{"expert", "-r", td + "rxe/err_rnr.pcap", "-Y", "infiniband.aeth"}},
		{"err_rnr.analysis-fields", []string{"decode", "-r", td + "rxe/err_rnr.pcap", "-T", "fields", "-E", "header=y",
			"-e", "frame.number", "-e", "rocetap.session.id", "-e", "rocetap.analysis.retransmission", "-e", "rocetap.analysis.original_frame",
			"-e", "rocetap.analysis.cause", "-e", "rocetap.analysis.cause_frame", "-e", "rocetap.analysis.request_frame",
			"-e", "rocetap.analysis.ack_rtt", "-e", "rocetap.expert.kind"}},
		{"send_imm.msg-filter", []string{"decode", "-r", td + "rxe/send_imm.pcap", "-Y", "rocetap.msg.length > 1000"}},
		{"err_retry_exc.text", []string{"decode", "-r", td + "rxe/err_retry_exc.pcap"}},
		{"err_rnr_recover.retrans-fields", []string{"decode", "-r", td + "rxe/err_rnr_recover.pcap", "-T", "fields",
			"-Y", "rocetap.analysis.retransmission and rocetap.analysis.cause == \"rnr\"", "-e", "frame.number", "-e", "infiniband.bth.psn"}},
		// management datagrams (issue 19): Info, the subnet section of stats,
		// MAD status errors and traps in expert
		{"ib_smp.text", []string{"decode", "-r", td + "synth/ib_smp.pcap"}},
		{"erf_ib_mad.text", []string{"decode", "-r", td + "synth/erf_ib_mad.pcap"}},
		{"ib_smp_dr_traps.stats", []string{"stats", "-r", td + "synth/ib_smp_dr_traps.pcap"}},
		{"erf_ib_mad.stats-json", []string{"stats", "-r", td + "synth/erf_ib_mad.pcap", "-T", "json"}},
		{"erf_ib_mad.expert", []string{"expert", "-r", td + "synth/erf_ib_mad.pcap"}},
		{"ib_smp_dr_traps.expert", []string{"expert", "-r", td + "synth/ib_smp_dr_traps.pcap"}},
		{"erf_ib_mad.oui-fields", []string{"decode", "-r", td + "synth/erf_ib_mad.pcap", "-Y", "rocetap.mad.oui", "-T", "fields",
			"-e", "frame.number", "-e", "infiniband.mad.mgmtclass", "-e", "rocetap.mad.oui"}},
		{"ib_smp_dr_traps.verbose", []string{"decode", "-r", td + "synth/ib_smp_dr_traps.pcap", "-V", "-Y", "frame.number in {7 12}"}},
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

func TestJSONIsValid(t *testing.T) {
	out, errOut, code := run(t, nil, "decode", "-r", td+"rxe/ipv6_mix.pcap", "-T", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var pkts []map[string]any
	if err := json.Unmarshal([]byte(out), &pkts); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if len(pkts) != 21 {
		t.Fatalf("%d packets, want 21", len(pkts))
	}
	layers := pkts[0]["layers"].(map[string]any)
	ib := layers["infiniband"].(map[string]any)
	if ib["infiniband.bth.opcode"] != "10" {
		t.Errorf("opcode %v", ib["infiniband.bth.opcode"])
	}
	if _, ok := layers["ipv6"]; !ok {
		t.Error("no ipv6 layer")
	}
}

// TestCorruptFile: a capture corrupt at packet 9 prints packets 1-8, then
// an error naming packet 9 and its byte offset, exit status 2.
func TestCorruptFile(t *testing.T) {
	path, bad, off := corruptCapture(t)
	for _, args := range [][]string{{"decode", "-r", path}, {"decode", "-r", "-"}} {
		var in []byte
		if args[2] == "-" {
			in = bad
		}
		out, errOut, code := run(t, in, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if n := strings.Count(out, "\n"); n != 8 {
			t.Errorf("%v: %d packets printed before the error, want 8", args, n)
		}
		for _, want := range []string{"packet 9", "byte offset " + itoa(off)} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: error %q does not name %q", args, errOut, want)
			}
		}
	}
}

// corruptCapture writes read_atomic.pcap with packet 9's captured length
// made absurd; it returns the file, its bytes and packet 9's offset.
func corruptCapture(t *testing.T) (path string, bad []byte, off int) {
	t.Helper()
	data, err := os.ReadFile(td + "rxe/read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	off = 24
	for i := 1; i < 9; i++ {
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	}
	bad = bytes.Clone(data)
	binary.LittleEndian.PutUint32(bad[off+8:], 0x7fffffff)
	path = filepath.Join(t.TempDir(), "corrupt.pcap")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, bad, off
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestStdinEqualsFile(t *testing.T) {
	data, _ := os.ReadFile(td + "rxe/pt_write.pcap")
	a, _, _ := run(t, nil, "decode", "-r", td+"rxe/pt_write.pcap")
	b, e, code := run(t, data, "decode", "-r", "-")
	if code != 0 || a != b {
		t.Fatalf("stdin output differs (exit %d, %s)", code, e)
	}
}

func TestFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"decode"}, "use -r FILE"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-T", "pdml"}, "want text, fields, json or ek"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-e", "frame.number"}, "-e needs -T fields"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-T", "fields"}, "at least one -e"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-T", "fields", "-e", "infiniband.reth.rkey"}, "did you mean infiniband.reth.r_key"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-T", "fields", "-e", "frame.number", "-E", "header=maybe"}, "want y or n"},
		{[]string{"decode", "-r", "/nonexistent/x.pcap"}, "/nonexistent/x.pcap"},
		{[]string{"decode", "-r", td + "rxe/README.md"}, "pcap"},
		{[]string{"decode", "-r", td + "rxe/pt_ud.pcap", "-d", "tcp.port==1,http"}, "udp.port==PORT,infiniband"},
		{[]string{"fields", "nosuchprefix"}, "no field starts with"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, nil, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errOut, c.want)
		}
	}
}

func TestDecodeAsPort(t *testing.T) {
	// Without -d the default port decides; -d adds a port but keeps 4791.
	a, _, _ := run(t, nil, "decode", "-r", td+"rxe/pt_ud.pcap", "-T", "fields", "-e", "infiniband.bth.opcode")
	b, _, _ := run(t, nil, "decode", "-r", td+"rxe/pt_ud.pcap", "-T", "fields", "-e", "infiniband.bth.opcode", "-d", "udp.port==4792,infiniband")
	if a != b || !strings.HasPrefix(a, "100\n") {
		t.Fatalf("%q vs %q", a, b)
	}
}

func TestFieldsCommand(t *testing.T) {
	out, _, code := run(t, nil, "fields", "infiniband.bth")
	if code != 0 || !strings.Contains(out, "F\tDestination Queue Pair\tinfiniband.bth.destqp\tFT_UINT24\tinfiniband\tBASE_HEX\t0x0\t") {
		t.Fatalf("%q", out)
	}
}

func TestDisplayFilter(t *testing.T) {
	// read_atomic: frames 1,3,5,7 are READ requests.
	f := td + "rxe/read_atomic.pcap"
	y := "infiniband.bth.opcode == 12"
	out, _, _ := run(t, nil, "decode", "-r", f, "-Y", y, "-T", "fields", "-e", "frame.number")
	if out != "1\n3\n5\n7\n" {
		t.Errorf("-T fields: %q", out)
	}
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", y)
	if strings.Count(out, "\n") != 4 || !strings.HasPrefix(strings.TrimSpace(out), "1 ") {
		t.Errorf("text: %q", out)
	}
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", y, "-T", "json")
	var pkts []map[string]any
	if err := json.Unmarshal([]byte(out), &pkts); err != nil || len(pkts) != 4 {
		t.Errorf("json: %d packets, %v", len(pkts), err)
	}
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", y, "-V")
	if n := len(regexp.MustCompile(`(?m)^Frame [0-9]+:`).FindAllString(out, -1)); n != 4 || !strings.HasPrefix(out, "Frame 1:") {
		t.Errorf("-V: %d frames", n)
	}
	// As in tshark 4.0: -c counts the packets read, -a packets:N the
	// packets shown (internal/conformance compares with tshark).
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", y, "-c", "2", "-T", "fields", "-e", "frame.number")
	if out != "1\n" {
		t.Errorf("-c 2: %q", out)
	}
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", y, "-a", "packets:2", "-T", "fields", "-e", "frame.number")
	if out != "1\n3\n" {
		t.Errorf("-a packets:2: %q", out)
	}
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", "infiniband.bth.opcode == 99", "-T", "json")
	if strings.TrimSpace(out) != "[\n]" {
		t.Errorf("empty json: %q", out)
	}
	// A filter on rocetap.* fields turns the CRC check on in -T fields.
	out, _, _ = run(t, nil, "decode", "-r", f, "-Y", `rocetap.icrc.status == "good"`, "-T", "fields", "-e", "frame.number")
	if strings.Count(out, "\n") != 16 {
		t.Errorf("icrc filter selected %d", strings.Count(out, "\n"))
	}
}

// TestBadFilterFailsBeforeReading: the filter is compiled before the
// capture is opened, so its error comes first, with a caret.
func TestBadFilterFailsBeforeReading(t *testing.T) {
	_, errOut, code := run(t, nil, "decode", "-r", "/nonexistent.pcap", "-Y", "infiniband.reth.rkey == 1")
	if code != 1 || !strings.Contains(errOut, "did you mean infiniband.reth.r_key") || !strings.Contains(errOut, "^~~~") || strings.Contains(errOut, "nonexistent") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, errOut, code := run(t, nil, "filter", "check", "infiniband.bth.opcode in {6..11} and ip.addr == 10.77.0.0/16")
	if code != 0 || !strings.Contains(out, "canonical: (infiniband.bth.opcode in {6..11} and ip.addr == 10.77.0.0/16)") {
		t.Fatalf("filter check: %d %q %q", code, out, errOut)
	}
	_, errOut, code = run(t, nil, "filter", "check", "ip.src ==")
	if code != 1 || !strings.Contains(errOut, "column 10") {
		t.Fatalf("filter check error: %d %q", code, errOut)
	}
}

// The tracked commands have two paths: one goroutine (one core, or
// ROCETAP_WORKERS=1) and a reader goroutine beside the tracker. Both give
// the same output, and a corrupt file reports everything before it.
func TestTrackedPaths(t *testing.T) {
	cmds := [][]string{
		{"sessions", "-r", td + "rxe/cm_perftest.pcap"},
		{"stats", "-r", td + "rxe/ipv6_mix.pcap", "-T", "json"},
		{"expert", "-r", td + "rxe/err_rnr_recover.pcap"},
		{"decode", "-r", td + "rxe/pt_send.pcap", "-c", "7"},
	}
	for _, c := range cmds {
		t.Setenv("ROCETAP_WORKERS", "2") // the pipeline, whatever the core count
		a, _, codeA := run(t, nil, c...)
		t.Setenv("ROCETAP_WORKERS", "1")
		b, _, codeB := run(t, nil, c...)
		os.Unsetenv("ROCETAP_WORKERS")
		if a != b || codeA != 0 || codeB != 0 {
			t.Errorf("%v: outputs differ between the two paths (exit %d, %d)", c, codeA, codeB)
		}
	}
	path, _, _ := corruptCapture(t)
	for _, workers := range []string{"2", "1"} {
		t.Setenv("ROCETAP_WORKERS", workers)
		out, errOut, code := run(t, nil, "stats", "-r", path)
		if code != 2 || !strings.Contains(out, "Packets: 8 ") || !strings.Contains(errOut, "packet 9") {
			t.Errorf("workers=%q: exit %d, stats of the 8 good packets expected:\n%s\nstderr %s", workers, code, out, errOut)
		}
	}
}
