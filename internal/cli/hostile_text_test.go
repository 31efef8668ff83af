package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
)

// hostile is text an attacker puts in a file name, an MPT file or the
// rdma tool's comm: ESC sequences (a screen clear), OSC 52 (a clipboard
// write), a C1 CSI, and bidi controls that reorder the line.
var hostile = []string{"\x1b[2J", "\x1b]52;c;cm0gLXJmIH4K\x07", "\u009b31m", "\u202eevil\u202c", "\u2066x\u2069"}

// rawControl returns the first character of s that drives a terminal:
// C0 but newline and tab, DEL, C1, a bidi control or a line separator.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0, r == utf8.RuneError:
			return r, true
		case unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029:
			return r, true
		}
	}
	return 0, false
}

// TestHostileText (issue 18.2): what comes from outside rocetap reaches
// the terminal escaped, whatever path it takes: an MPT file's JSON path
// and profile in mpt check, replay and decode --mpt errors; the rdma
// tool's comm in mpt import's notes; file names in replay's header, exit
// messages and mpt check. (-T json output is data for programs: JSON
// escapes its C0 controls, and keeps other characters as they are.)
func TestHostileText(t *testing.T) {
	dir := t.TempDir()
	evil := strings.Join(hostile, "")
	check := func(what, out, errOut string) {
		t.Helper()
		for _, s := range []string{out, errOut} {
			if r, bad := rawControl(s); bad {
				t.Errorf("%s: %U reaches the terminal:\n%q", what, r, s)
			}
		}
	}
	// An MPT file with a hostile key and profile.
	mptf := filepath.Join(dir, "m.mpt.json")
	os.WriteFile(mptf, []byte(`{"version": 1, "responder": {"address": "10.77.0.2"}, "profile": "rxe`+jsonEsc(evil)+`", "k`+jsonEsc(evil)+`": 1}`), 0o644)
	out, errOut, code := run(t, nil, "mpt", "check", mptf)
	if code != ExitInput {
		t.Errorf("mpt check of a hostile file: exit %d", code)
	}
	check("mpt check", out, errOut)
	for _, c := range [][]string{{"replay", "-r", rxe + "pt_write.pcap", "--mpt", mptf}, {"decode", "-r", rxe + "pt_write.pcap", "--mpt", mptf}} {
		out, errOut, _ := run(t, nil, c...)
		check(c[0]+" --mpt", out, errOut)
	}
	// File names.
	named := filepath.Join(dir, "cap"+strings.ReplaceAll(evil, "/", "")+".pcap")
	data, _ := os.ReadFile(rxe + "pt_write.pcap")
	os.WriteFile(named, data, 0o644)
	good := filepath.Join(dir, "ok"+strings.ReplaceAll(evil, "/", "")+".mpt.json")
	m, _ := os.ReadFile(rxe + "pt_write.mpt.json")
	os.WriteFile(good, m, 0o644)
	for _, c := range [][]string{
		{"replay", "-r", named, "--mpt", good},
		{"mpt", "check", good},
		{"decode", "-r", named + ".missing"},
		{"sessions", "-r", named},
		{"mpt", "learn", "-r", named},
	} {
		out, errOut, code := run(t, nil, c...)
		if c[0] == "replay" && len(c) == 5 && (code != 0 || !strings.Contains(out, "Replay of ")) {
			t.Errorf("replay of a capture with a hostile name: exit %d: %s", code, errOut)
		}
		check(strings.Join(c[:2], " "), out, errOut)
	}
	// rdma's comm (any local user sets it with prctl) in mpt import.
	res, _ := os.ReadFile(rxe + "read_atomic.rdma-res.json")
	res = regexp.MustCompile(`"comm": ?"ib_core"`).ReplaceAll(res, []byte(`"comm": "ib`+jsonEsc(evil)+`"`))
	resf := filepath.Join(dir, "res.json")
	os.WriteFile(resf, res, 0o644)
	out, errOut, _ = run(t, nil, append([]string{"mpt", "import", "--rdma-json", resf, "--dev", "rxe1"}, readAtomicFill...)...)
	if !strings.Contains(errOut, `ib\x1b[2J`) {
		t.Errorf("mpt import's notes do not name the comm (escaped):\n%s", errOut)
	}
	check("mpt import", out, errOut)
}

// jsonEsc writes s as the inside of a JSON string, every control and
// non-ASCII character as \uNNNN.
func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r >= 0x7f {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestMPTValidMeansAccepted (issue 18.3, 18.7): mpt check, --mpt and
// replay load a file one way: an unknown profile, an MR too large for the
// model, and QP 1 (the GSI QP) are refused by each, with the same
// message; a valid file passes each.
func TestMPTValidMeansAccepted(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile(rxe + "read_atomic.mpt.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name, from, to string) string {
		t.Helper()
		s := string(base)
		if !strings.Contains(s, from) {
			t.Fatalf("%s: %q not in read_atomic.mpt.json", name, from)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Replace(s, from, to, 1)), 0o644)
		return p
	}
	cases := []struct{ file, want string }{
		{edit("profile.json", `"profile": "rxe"`, `"profile": "bogus"`), `$.profile: unknown responder profile "bogus": use one of ibta, rxe`},
		{edit("huge.json", `"length": 8192`, `"length": 1125899906842624`), "cannot build the model: memory region rkey 0x000009d2"},
		{edit("gsi.json", `"qpn": "0x000017"`, `"qpn": "0x000001"`), "QPN 0x000001 is QP1, the GSI QP"},
	}
	for _, c := range cases {
		var msgs []string
		for _, args := range [][]string{
			{"mpt", "check", c.file},
			{"replay", "-r", rxe + "read_atomic.pcap", "--mpt", c.file},
			{"decode", "-r", rxe + "read_atomic.pcap", "--mpt", c.file},
		} {
			_, errOut, code := run(t, nil, args...)
			if code != ExitInput || !strings.Contains(errOut, c.want) {
				t.Errorf("%v: exit %d, %q; want exit 1 and %q", args[:2], code, errOut, c.want)
			}
			msgs = append(msgs, errOut)
		}
		if msgs[0] != msgs[1] || msgs[1] != msgs[2] {
			t.Errorf("%s: the messages differ:\n%s", filepath.Base(c.file), strings.Join(msgs, ""))
		}
	}
	for _, args := range [][]string{{"mpt", "check", rxe + "read_atomic.mpt.json"}, {"replay", "-r", rxe + "read_atomic.pcap", "--mpt", rxe + "read_atomic.mpt.json"}} {
		if _, errOut, code := run(t, nil, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args[:2], code, errOut)
		}
	}
}

// TestUnknownCMAttributes (issue 18.4): CM MADs of attribute IDs rocetap
// does not name are counted by their number, each on its own (text and
// JSON), never dropped or merged; Info names them by number too.
func TestUnknownCMAttributes(t *testing.T) {
	data, err := os.ReadFile(rxe + "cm_reject.pcap")
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Clone(data)
	off := 24
	for _, attr := range []uint16{0x001b, 0x0050} { // frames 1 and 2
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		frame := data[off+16 : off+16+n]
		binary.BigEndian.PutUint16(frame[14+20+8+12+8+16:], attr) // MAD attribute ID after Eth, IPv4, UDP, BTH, DETH
		if err := decode.FixCRCs(frame, decode.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		off += 16 + n
	}
	path := filepath.Join(t.TempDir(), "cm_unknown.pcap")
	os.WriteFile(path, data, 0o644)
	out, errOut, code := run(t, nil, "stats", "-r", path)
	if code != 0 || !strings.Contains(out, "CM messages\n  0x001b: 1\n  0x0050: 1\n") {
		t.Errorf("stats: exit %d %s\n%s", code, errOut, out)
	}
	out, _, _ = run(t, nil, "stats", "-r", path, "-T", "json")
	var js struct {
		CM map[string]uint64 `json:"cm_messages"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || js.CM["0x001b"] != 1 || js.CM["0x0050"] != 1 || js.CM[""] != 0 {
		t.Errorf("stats -T json: %v %v\n%s", err, js.CM, out)
	}
	out, _, _ = run(t, nil, "decode", "-r", path)
	if !strings.Contains(out, "CM: 0x001b") || !strings.Contains(out, "CM: 0x0050") {
		t.Errorf("decode's Info:\n%s", out)
	}
}

// TestMalformedIsNotTruncated (issue 18.5): a packet captured whole that
// is too short for its opcode's headers (a READ Request made a
// CompareSwap: 16 bytes where the AtomicETH needs 28) is malformed, not
// truncated, and its ICRC is checked; one the capture cut stays
// truncated.
func TestMalformedIsNotTruncated(t *testing.T) {
	data, err := os.ReadFile(rxe + "read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Clone(data)
	n := int(binary.LittleEndian.Uint32(data[24+8:]))
	frame := data[24+16 : 24+16+n]
	frame[14+20+8] = byte(decode.OpCompareSwap) // BTH opcode of frame 1 (RC READ Request)
	if err := decode.FixCRCs(frame, decode.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "short.pcap")
	os.WriteFile(path, data, 0o644)
	out, _, _ := run(t, nil, "decode", "-r", path, "-c", "1", "-T", "fields", "-e", "rocetap.truncated", "-e", "rocetap.malformed", "-e", "rocetap.icrc.status")
	if out != "\t1\tgood\n" { // flags print 1 when set, nothing when not
		t.Errorf("a whole packet too short for its opcode: truncated, malformed, ICRC = %q, want False, True, good", out)
	}
	out, _, _ = run(t, nil, "stats", "-r", path, "-T", "json")
	var js struct {
		Truncated int `json:"truncated"`
	}
	json.Unmarshal([]byte(out), &js)
	if js.Truncated != 0 {
		t.Errorf("stats counts %d truncated packets, want 0", js.Truncated)
	}
}
