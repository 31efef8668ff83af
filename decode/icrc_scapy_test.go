package decode_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// The ICRC oracle test: rocetap's ICRC (and VCRC) against scapy's RoCEv2
// ICRC code, against a second implementation written from the spec, and
// against the RoCEv1 ICRC code of the pre-upstream Soft-RoCE driver (rxev1:
// the GRH rule, for RoCEv1 and native packets with a GRH, from an
// implementation by others that does not share rocetap's reading of the
// spec), all in testdata/icrc_scapy.py, over a few hundred random synthetic
// frames and every frame of the real Soft-RoCE captures.

const (
	systemPython = "/usr/bin/python3" // Debian's python3-scapy is installed for it
	oracleScript = "testdata/icrc_scapy.py"
)

// requireOracle skips the test (or fails it with ROCETAP_REQUIRE_ORACLES=1)
// when the oracle cannot run.
func requireOracle(t *testing.T) {
	t.Helper()
	const install = "install it with `apt-get install -y python3-scapy`"
	if _, err := os.Stat(systemPython); err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("%s not found (%v)", systemPython, err), install)
	}
	out, err := exec.Command(systemPython, "-c", "import scapy.contrib.roce").CombinedOutput()
	if err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("scapy is not importable by %s (%v: %s)", systemPython, err, bytes.TrimSpace(out)), install)
	}
}

// oracleFrame is one frame sent to the oracle.
type oracleFrame struct {
	name  string
	link  decode.LinkType // 1 or 247
	data  []byte
	real  bool // from a real capture
	ctl   bool // control: a copy with a corrupted ICRC (and VCRC)
	kind  decode.Encapsulation
	v6    bool
	grh   bool   // carries a GRH (RoCEv1, native LNH 3)
	icrc  uint32 // rocetap's computed ICRC value
	vcrc  uint16 // rocetap's computed VCRC value (native IB)
	wire  uint32 // ICRC value in the frame
	wireV uint16
}

// randExt returns an extended header with random fields.
func randExt(r *rand.Rand, h decode.Hdr) gopacket.SerializableLayer {
	switch h {
	case decode.HdrRDETH:
		return &decode.RDETH{EECnxt: r.Uint32() & 0xFFFFFF}
	case decode.HdrDETH:
		return &decode.DETH{QKey: r.Uint32(), SrcQP: r.Uint32() & 0xFFFFFF}
	case decode.HdrXRCETH:
		return &decode.XRCETH{XRCSRQ: r.Uint32() & 0xFFFFFF}
	case decode.HdrRETH:
		return &decode.RETH{VA: r.Uint64(), RKey: r.Uint32(), DMALen: r.Uint32N(1 << 20)}
	case decode.HdrAtomicETH:
		return &decode.AtomicETH{VA: r.Uint64() &^ 7, RKey: r.Uint32(), SwapAddData: r.Uint64(), CompareData: r.Uint64()}
	case decode.HdrAETH:
		return &decode.AETH{Syndrome: uint8(r.Uint32()), MSN: r.Uint32() & 0xFFFFFF}
	case decode.HdrAtomicAckETH:
		return &decode.AtomicAckETH{OrigRemData: r.Uint64()}
	case decode.HdrImmDt:
		return &decode.ImmDt{Data: r.Uint32()}
	case decode.HdrIETH:
		return &decode.IETH{RKey: r.Uint32()}
	case decode.HdrFETH:
		return &decode.FETH{Selectivity: uint8(r.UintN(2)), Placement: uint8(r.UintN(4))}
	case decode.HdrCNP:
		return &decode.CNPPadding{}
	}
	panic(fmt.Sprintf("no layer for header %#x", h))
}

// randSpec returns a random frame of opcode op.
func randSpec(r *rand.Rand, op decode.Opcode) fixSpec {
	var s fixSpec
	s.v6 = r.IntN(2) == 1
	s.tos = uint8(r.Uint32())
	s.ttl = uint8(r.Uint32())
	s.flow = r.Uint32() & 0xFFFFF
	s.sport = uint16(49152 + r.IntN(16384))
	s.udpCsum = uint16(r.Uint32())
	switch r.IntN(5) {
	case 0:
		s.vlans = []uint16{uint16(r.IntN(4095) + 1)}
	case 1:
		s.vlans = []uint16{uint16(r.IntN(4095) + 1), uint16(r.IntN(4095) + 1)}
	}
	pad := r.IntN(4)
	n := 0
	if op.HasPayload() || !op.Known() {
		n = r.IntN(1501)
		if r.IntN(8) == 0 {
			n = 0
		}
	}
	s.payload = make([]byte, n+pad)
	for i := range n {
		s.payload[i] = byte(r.Uint32())
	}
	s.bth = decode.BTH{
		Opcode: op, SE: r.IntN(2) == 1, MigReq: r.IntN(2) == 1, PadCount: uint8(pad),
		PKey: uint16(r.Uint32()), FECN: r.IntN(2) == 1, BECN: r.IntN(2) == 1, Reserved6: uint8(r.UintN(64)),
		DestQP: r.Uint32() & 0xFFFFFF, AckReq: r.IntN(2) == 1, Reserved7: uint8(r.UintN(128)),
		PSN: decode.PSNOf(r.Uint32()),
	}
	if op == decode.CNP {
		s.bth.BECN = true
	}
	for _, h := range op.ExtHeaders() {
		s.exts = append(s.exts, randExt(r, h))
	}
	return s
}

// syntheticOracleFrames builds RoCEv2 frames of every known opcode (and a few
// unknown ones), RoCEv1 frames and native InfiniBand frames, with their
// CRCs set by FixCRCs.
func syntheticOracleFrames(t *testing.T) []oracleFrame {
	r := rand.New(rand.NewPCG(4791, 0x1B))
	var ops []decode.Opcode
	for o := range 256 {
		if decode.Opcode(o).Known() {
			ops = append(ops, decode.Opcode(o))
		}
	}
	ops = append(ops, 0x1A, 0x3F, 0xE5, 0xFF)
	var out []oracleFrame
	add := func(kind string, link decode.LinkType, frame []byte) {
		if err := decode.FixCRCs(frame, link); err != nil {
			t.Fatalf("%s: FixCRCs: %v", kind, err)
		}
		out = append(out, oracleFrame{name: fmt.Sprintf("synth-%d-%s", len(out), kind), link: link, data: frame})
	}
	for i := range 400 {
		op := ops[i%len(ops)]
		s := randSpec(r, op)
		kind := "rocev2-ipv4"
		if s.v6 {
			kind = "rocev2-ipv6"
		}
		add(kind+"-"+strconv.Itoa(int(op)), decode.LinkTypeEthernet, fixRoCEv2(t, s))
	}
	for i := range 80 {
		s := randSpec(r, ops[r.IntN(len(ops))])
		add("rocev1", decode.LinkTypeEthernet, fixRoCEv1(t, s))
		_ = i
	}
	for i := range 80 {
		s := randSpec(r, ops[r.IntN(len(ops))])
		s.lrh = decode.LRH{VL: uint8(r.UintN(16)), LVer: 0, SL: uint8(r.UintN(16)), DLID: uint16(r.Uint32()), SLID: uint16(r.Uint32())}
		padToWords(&s)
		if i%2 == 1 {
			s.grh = &decode.GRH{IPVer: 6, TrafficClass: uint8(r.Uint32()), FlowLabel: r.Uint32() & 0xFFFFF,
				HopLimit: uint8(r.Uint32()), NextHeader: decode.GRHNextHeaderIBA, SGID: fixGID1, DGID: fixGID2}
		}
		add("ib", decode.LinkTypeInfiniBand, fixIB(t, s))
	}
	return out
}

func TestICRCScapyOracle(t *testing.T) {
	requireOracle(t)
	frames := syntheticOracleFrames(t)
	nSynth := len(frames)
	// Controls: copies of RoCEv2, RoCEv1 and InfiniBand frames with their
	// trailers corrupted. The oracles must still answer the correct CRCs,
	// which shows that they compute the CRCs rather than echo the trailer.
	for _, i := range []int{0, 1, 400, 480, 481} {
		f := frames[i]
		f.name, f.ctl, f.data = "control-"+f.name, true, bytes.Clone(f.data)
		p := fixDecode(f.data, f.link)
		off := p.Offset(p.ICRC.Contents)
		f.data[off+1] ^= 0x80
		if p.Encap == decode.EncapIB {
			f.data[off+5] ^= 0x01
		}
		frames = append(frames, f)
	}
	paths := fixRealCaptures(t)
	for _, path := range paths {
		for _, cf := range fixReadCapture(t, path) {
			frames = append(frames, oracleFrame{name: fmt.Sprintf("%s#%d", cf.name, cf.frame), link: cf.link, data: cf.data, real: true})
		}
	}
	if len(paths) == 0 {
		t.Logf("no Soft-RoCE captures found (testdata/rxe/ or ROCETAP_CAPTURES): checking synthetic frames only")
	}
	frames = append(frames, ipoibOracleFrames(t)...) // ipoib_test.go

	// rocetap's view of every frame.
	var in bytes.Buffer
	for i := range frames {
		f := &frames[i]
		p := fixDecode(f.data, f.link)
		if want := decode.CRCGood; f.ctl && p.ICRCStatus != decode.CRCBad || !f.ctl && p.ICRCStatus != want {
			t.Errorf("%s: rocetap says ICRC %s (flags %v, err %v)", f.name, p.ICRCStatus, p.Flags.Names(), p.Err)
		}
		f.kind = p.Encap
		f.v6 = p.Has&decode.HdrIPv6 != 0 && !p.IPIsPayload()
		f.grh = p.Has&decode.HdrGRH != 0
		f.wire = p.ICRC.Value()
		f.icrc = p.ICRCComputed>>24 | p.ICRCComputed>>8&0xFF00 | p.ICRCComputed<<8&0xFF0000 | p.ICRCComputed<<24
		if p.Encap == decode.EncapIB {
			if want := decode.CRCGood; f.ctl && p.VCRCStatus != decode.CRCBad || !f.ctl && p.VCRCStatus != want {
				t.Errorf("%s: rocetap says VCRC %s", f.name, p.VCRCStatus)
			}
			f.wireV = p.VCRC.Value()
			f.vcrc = p.VCRCComputed>>8 | p.VCRCComputed<<8
		}
		fmt.Fprintf(&in, "%d %d %s\n", i, f.link, hex.EncodeToString(f.data))
	}
	file := filepath.Join(t.TempDir(), "frames.txt")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(systemPython, oracleScript, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", systemPython, oracleScript, err, stderr.Bytes())
	}

	type result struct{ scapy, spec, rxev1, vcrc string }
	results := make(map[int]result)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			t.Fatalf("oracle output line %q: want 5 fields", sc.Text())
		}
		id, err := strconv.Atoi(fields[0])
		if err != nil {
			t.Fatalf("oracle output line %q: %v", sc.Text(), err)
		}
		results[id] = result{
			scapy: strings.TrimPrefix(fields[1], "scapy="),
			spec:  strings.TrimPrefix(fields[2], "spec="),
			rxev1: strings.TrimPrefix(fields[3], "rxev1="),
			vcrc:  strings.TrimPrefix(fields[4], "vcrc="),
		}
	}
	if len(results) != len(frames) {
		t.Fatalf("oracle answered for %d frames, sent %d\nstderr: %s", len(results), len(frames), stderr.Bytes())
	}

	var nScapy, nScapy6, nSpec, nRxeV1, nRxeV1IB, nVCRC, nCtl, mismatches int
	check := func(f *oracleFrame, oracle, got string, want uint32, width int) {
		w := fmt.Sprintf("%0*x", width, want)
		if got != w {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%s (%s): %s oracle says %s, rocetap %s", f.name, f.kind, oracle, got, w)
			}
		}
	}
	for i := range frames {
		f := &frames[i]
		res := results[i]
		if f.ctl {
			nCtl++
		}
		if (f.wire == f.icrc) == f.ctl {
			t.Errorf("%s: ICRC in the frame %08x, rocetap computes %08x", f.name, f.wire, f.icrc)
		}
		switch f.kind {
		case decode.EncapRoCEv2:
			check(f, "scapy", res.scapy, f.icrc, 8)
			nScapy++
			if f.v6 {
				nScapy6++
			}
		default:
			if res.scapy != "-" {
				t.Errorf("%s (%s): scapy computed an ICRC (%s) for a frame that is not RoCEv2", f.name, f.kind, res.scapy)
			}
		}
		check(f, "spec", res.spec, f.icrc, 8)
		nSpec++
		// rxev1 covers every packet with a GRH: RoCEv1, and native
		// packets with LNH 3.
		switch {
		case f.grh:
			check(f, "rxev1", res.rxev1, f.icrc, 8)
			nRxeV1++
			if f.kind == decode.EncapIB {
				nRxeV1IB++
			}
		case res.rxev1 != "-":
			t.Errorf("%s (%s): the rxev1 oracle computed an ICRC (%s) for a frame without a GRH", f.name, f.kind, res.rxev1)
		}
		if f.kind == decode.EncapIB {
			check(f, "spec VCRC", res.vcrc, uint32(f.vcrc), 4)
			nVCRC++
		}
	}
	nReal := len(frames) - nSynth - nCtl
	t.Logf("%d frames: %d synthetic, %d real, %d controls with corrupted trailers", len(frames), nSynth, nReal, nCtl)
	t.Logf("scapy oracle: %d RoCEv2 ICRCs (%d over IPv6); spec oracle: %d ICRCs (RoCEv2, RoCEv1, InfiniBand), %d VCRCs; rxev1 oracle: %d ICRCs (%d native with a GRH); mismatches: %d",
		nScapy, nScapy6, nSpec, nVCRC, nRxeV1, nRxeV1IB, mismatches)
	if nRxeV1IB == 0 || nRxeV1 == nRxeV1IB {
		t.Errorf("the rxev1 oracle checked %d frames, %d of them native: want both RoCEv1 and native packets with a GRH", nRxeV1, nRxeV1IB)
	}
	if mismatches > 0 {
		t.Fatalf("%d mismatches between rocetap and the oracles", mismatches)
	}
}
