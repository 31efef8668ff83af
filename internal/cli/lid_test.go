package cli

// Native InfiniBand without a GRH: testdata/synth/ib_lid_rc.pcap names its
// two nodes only by the LRH's LIDs (1, the requester; 2, the responder).
// mpt learn, replay and the MPT check must take LIDs where there is no IP
// address or GID.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/mpt"
)

const lidCapture = td + "synth/ib_lid_rc.pcap"

// learnLID learns the MPT file of ib_lid_rc.pcap into a temporary file.
func learnLID(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lid.mpt.json")
	_, errOut, code := run(t, nil, "mpt", "learn", "-r", lidCapture, "-o", path)
	if code != 0 {
		t.Fatalf("mpt learn: exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(errOut, "rocetap mpt learn: responder lid:2 (sent 4 of the capture's 4 responses): 1 QP, 1 MR -> ") {
		t.Errorf("mpt learn: %s", errOut)
	}
	return path
}

func TestLIDMPTLearn(t *testing.T) {
	path := learnLID(t)
	f, err := mpt.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Responder != decode.NodeLID(2) || len(f.QPs) != 1 || len(f.MRs) != 1 {
		t.Fatalf("learned responder %v, %d QPs, %d MRs", f.Responder, len(f.QPs), len(f.MRs))
	}
	q := f.QPs[0]
	if q.QPN != 0x49 || !q.HasExpectedPSN || q.ExpectedPSN != 100 || q.Remote == nil || q.Remote.Addr != decode.NodeLID(1) || q.Remote.QPN != 0x48 {
		t.Errorf("learned QP %+v (remote %+v)", q, q.Remote)
	}
	if mr := f.MRs[0]; mr.RKey != 0x1111 || mr.VA != 0x10000 || mr.Length != 64 {
		t.Errorf("learned MR %+v", mr)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"responder": { "address": "lid:2" }`, `"remote": { "address": "lid:1", "qpn": "0x000048" }`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("learned file lacks %s:\n%s", want, raw)
		}
	}
	// Named: as lid:2, lid:0x2; a LID no request goes to is refused with
	// the nodes requests do go to.
	for _, r := range []string{"lid:2", "LID:0x2"} {
		if _, errOut, code := run(t, nil, "mpt", "learn", "-r", lidCapture, "--responder", r); code != 0 || !strings.Contains(errOut, "responder lid:2 (given)") {
			t.Errorf("--responder %s: exit %d: %s", r, code, errOut)
		}
	}
	if _, errOut, code := run(t, nil, "mpt", "learn", "-r", lidCapture, "--responder", "lid:3"); code != 1 ||
		!strings.Contains(errOut, "no request in the capture is sent to lid:3; requests go to lid:2 (1 QP)") {
		t.Errorf("--responder lid:3: exit %d: %s", code, errOut)
	}
}

func TestLIDReplay(t *testing.T) {
	learned := learnLID(t)
	out, errOut, code := run(t, nil, "replay", "-r", lidCapture, "--mpt", learned)
	if code != 0 || !strings.Contains(out, "Responder: lid:2, profile ibta\n") ||
		!strings.Contains(out, "Packets: 8: 4 requests to the responder, 4 responses from it, 0 ignored\n") ||
		!strings.Contains(out, "QP 0x000049 ← lid:1 QP 0x000048") ||
		!strings.HasSuffix(out, "replay: 4 requests, 4 responses compared, 0 divergences\n") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}

	// --responder lid:N names the responder when the MPT file names
	// another node (here its IPv4 address).
	raw, err := os.ReadFile(learned)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "ip.mpt.json")
	if err := os.WriteFile(other, bytes.Replace(raw, []byte(`"address": "lid:2"`), []byte(`"address": "10.0.0.2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, nil, "replay", "-r", lidCapture, "--mpt", other); code != ExitInput ||
		!strings.Contains(errOut, "no request in "+lidCapture+" goes to the responder 10.0.0.2 (the MPT file's responder.address); the capture's RDMA requests go to lid:2: pass --responder ADDR") {
		t.Errorf("replay against 10.0.0.2: exit %d: %s", code, errOut)
	}
	for _, r := range []string{"lid:2", "lid:0x2"} {
		out, errOut, code := run(t, nil, "replay", "-r", lidCapture, "--mpt", other, "--responder", r, "-T", "json")
		if code != 0 {
			t.Fatalf("--responder %s: exit %d\n%s%s", r, code, out, errOut)
		}
		var rep struct {
			Responder string `json:"responder"`
			Verdict   string `json:"verdict"`
			Sessions  []struct {
				Name string `json:"name"`
				Peer struct {
					Addr *string `json:"addr"`
				} `json:"peer"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("--responder %s: %v\n%s", r, err, out)
		}
		if rep.Responder != "lid:2" || rep.Verdict != "pass" || len(rep.Sessions) != 1 || rep.Sessions[0].Peer.Addr == nil || *rep.Sessions[0].Peer.Addr != "lid:1" {
			t.Errorf("--responder %s: %s", r, out)
		}
	}

	// A response the responder did not send as the model does diverges.
	tests := []struct {
		name   string
		frame  int
		mutate func(ib []byte) // the frame's bytes, LRH first
		want   string
	}{
		{"READ data", 4, func(b []byte) { b[decode.LRHLen+decode.BTHLen+4+10] ^= 0xff },
			"frame 3 → 4: read_data: 1 of the 64 bytes differ from the model's memory, the first at offset 10: model 77 7e"},
		{"ACK turned NAK", 2, func(b []byte) { b[decode.LRHLen+decode.BTHLen] = 0x62 },
			"frame 1 → 2: syndrome: model ACK (0x1f), captured NAK Remote Access Error (0x62) — the responder rejected a request the model accepts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mutateFrame(t, lidCapture, tt.frame, tt.mutate)
			out, errOut, code := run(t, nil, "replay", "-r", path, "--mpt", learned, "--responder", "lid:2")
			if code != ExitDivergence || !strings.Contains(out, tt.want) || !strings.Contains(out, "1 divergence\n") {
				t.Errorf("exit %d, want 3 and %q\n%s%s", code, tt.want, out, errOut)
			}
		})
	}
}

// mutateFrame writes a copy of a little-endian pcap of native InfiniBand
// frames with frame n changed by mutate and its ICRC and VCRC fixed.
func mutateFrame(t *testing.T, path string, n int, mutate func([]byte)) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Clone(data)
	off := 24
	for i := 1; i < n; i++ {
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	}
	frame := data[off+16 : off+16+int(binary.LittleEndian.Uint32(data[off+8:]))]
	mutate(frame)
	if err := decode.FixCRCs(frame, decode.LinkTypeInfiniBand); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mutated.pcap")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLIDMPTCheck: decode and expert --mpt check the accesses sent to a
// LID responder and flag the one with an rkey it does not have.
func TestLIDMPTCheck(t *testing.T) {
	learned := learnLID(t)
	out, errOut, code := run(t, nil, "decode", "-r", lidCapture, "--mpt", learned, "-T", "fields",
		"-e", "frame.number", "-e", "rocetap.mpt.op", "-e", "rocetap.mpt.verdict", "-e", "rocetap.mpt.finding", "-Y", "rocetap.mpt.checked")
	want := "1\twrite\tok\t\n3\tread\tok\t\n5\tatomic\tok\t\n7\twrite\tunknown_rkey\tviolation\n"
	if code != 0 || out != want {
		t.Errorf("decode --mpt: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	out, errOut, code = run(t, nil, "expert", "-r", lidCapture, "--mpt", learned)
	if code != 0 || !strings.Contains(out, "frame 7  0.001500  #1  MPT forbids the WRITE of 64 bytes at VA 0x0000000000010000 with rkey 0x00001112: no MR or MW has rkey 0x00001112 (unknown_rkey)") {
		t.Errorf("expert --mpt: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = run(t, nil, "sessions", "-r", lidCapture, "--mpt", learned, "-T", "json")
	if !strings.Contains(out, `"a":{"addr":"lid:1","qpn":"0x000048"`) || !strings.Contains(out, `"b":{"addr":"lid:2","qpn":"0x000049"}`) ||
		!strings.Contains(out, `"mpt":{"checked":4,"violations":1,"accepted":0,"rejected":0}`) {
		t.Errorf("sessions -T json: %s", out)
	}
	out, _, _ = run(t, nil, "sessions", "-r", lidCapture)
	if !strings.Contains(out, "lid:1/0x000048  lid:2/0x000049") {
		t.Errorf("sessions: %s", out)
	}
}

func TestLIDFlagErrors(t *testing.T) {
	learned := learnLID(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay", "-r", lidCapture, "--mpt", learned, "--responder", "lid:0"}, ExitInput,
			`--responder "lid:0" is not a LID: write a number from 1 to 65535 (0xffff), in decimal or 0x hex, e.g. lid:1 or lid:0x1` + "\n"},
		{[]string{"replay", "-r", lidCapture, "--mpt", learned, "--responder", "lid:two"}, ExitInput, `--responder "lid:two" is not a LID`},
		{[]string{"replay", "-r", lidCapture, "--mpt", learned, "--responder", "node2"}, ExitInput,
			`--responder "node2": want an IPv4 address, IPv6 address or GID without a zone, or a LID (e.g. 10.77.0.2, fe80::2:c903:0:a, ::ffff:10.77.0.2, lid:1 or lid:0x1)` + "\n"},
		{[]string{"mpt", "learn", "-r", lidCapture, "--responder", "lid:65536"}, 1, `--responder "lid:65536" is not a LID`},
		{[]string{"replay", "-r", lidCapture, "--mpt", learned, "--responder", "fe80::2%ib0"}, ExitInput, `--responder "fe80::2%ib0": want an IPv4 address, IPv6 address or GID without a zone`},
	}
	for _, tt := range tests {
		_, errOut, code := run(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

// TestLIDMPTImport: mpt import takes the device's LID and the peer's, as
// an InfiniBand port has no IP address.
func TestLIDMPTImport(t *testing.T) {
	args := []string{"mpt", "import", "--rdma-json", td + "rxe/read_atomic.rdma-res.json", "--dev", "rxe1"}
	for i := 0; i < len(readAtomicFill); i += 2 {
		v := readAtomicFill[i+1]
		switch readAtomicFill[i] {
		case "--responder":
			v = "lid:0x12"
		case "--remote":
			v = "lid:17"
		}
		args = append(args, readAtomicFill[i], v)
	}
	out, errOut, code := run(t, nil, args...)
	if code != 0 || !strings.Contains(out, `"responder": { "address": "lid:18" }`) || !strings.Contains(out, `"remote": { "address": "lid:17", "qpn": "0x000017" }`) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
