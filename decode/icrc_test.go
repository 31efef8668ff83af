package decode_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// What the ICRC covers of the LRH, tested from the text of IBA 7.8.1
// rather than from a second implementation of it: "the LRH is not covered
// when the packet carries a GRH (routers rewrite it: its 8 bytes count as
// 1s); an LRH-only packet covers its LRH with only the VL masked". A
// checker that shares a wrong belief about the formula can agree with it;
// these properties cannot hold for a wrong one, since they never compute
// an expected CRC: they ask which LRH changes the ICRC must survive. The
// CRC values themselves are checked against SoftRoCE's RoCEv1 ICRC code
// (testdata/icrc_scapy.py, TestICRCScapyOracle).

// ibSpecs returns random native InfiniBand packets, with a GRH (LNH 3) or
// without (LNH 2).
func ibSpecs(r *rand.Rand, grh bool, n int) []fixSpec {
	ops := []decode.Opcode{0x04, 0x0A, 0x0C, 0x10, 0x11, 0x64, 0x65}
	var out []fixSpec
	for range n {
		s := randSpec(r, ops[r.IntN(len(ops))])
		padToWords(&s)
		s.lrh = decode.LRH{VL: uint8(r.UintN(15)), SL: uint8(r.UintN(16)), DLID: uint16(r.Uint32()), SLID: uint16(r.Uint32())}
		if grh {
			s.grh = &decode.GRH{IPVer: 6, TrafficClass: uint8(r.Uint32()), FlowLabel: r.Uint32() & 0xFFFFF,
				HopLimit: uint8(r.Uint32()), NextHeader: decode.GRHNextHeaderIBA, SGID: fixGID1, DGID: fixGID2}
		}
		out = append(out, s)
	}
	return out
}

// padToWords sets the pad count so that the payload and pad end on a 4-byte
// boundary, as IBA requires of every packet: LRH.PktLen counts words, and
// every header is a whole number of them.
func padToWords(s *fixSpec) {
	n := len(s.payload) - int(s.bth.PadCount)
	s.bth.PadCount = uint8(-n & 3)
	s.payload = append(s.payload[:n:n], make([]byte, s.bth.PadCount)...)
}

// TestICRCLRHBits flips every bit of the LRH, one at a time, and asks
// ICRCGRH: with a GRH none may change the ICRC; without one, every bit but
// the four VL bits must.
func TestICRCLRHBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 81))
	for _, withGRH := range []bool{true, false} {
		for i, s := range ibSpecs(r, withGRH, 20) {
			frame := fixIB(t, s)
			if err := decode.FixCRCs(frame, decode.LinkTypeInfiniBand); err != nil {
				t.Fatal(err)
			}
			p := fixDecode(frame, decode.LinkTypeInfiniBand)
			rest := frame[decode.LRHLen:p.Offset(p.ICRC.Contents)]
			lrh := frame[:decode.LRHLen]
			want, ok := decode.ICRCGRH(lrh, withGRH, rest)
			if !ok {
				t.Fatalf("packet %d: ICRCGRH cannot compute", i)
			}
			if got := p.ICRC.Value(); got != want || p.ICRCStatus != decode.CRCGood {
				t.Fatalf("packet %d (GRH %v): decoder %s, carries %08x, ICRCGRH %08x", i, withGRH, p.ICRCStatus, got, want)
			}
			for bit := range decode.LRHLen * 8 {
				l := append([]byte(nil), lrh...)
				l[bit/8] ^= 0x80 >> (bit % 8)
				got, _ := decode.ICRCGRH(l, withGRH, rest)
				vl := bit < 4
				var problem string
				switch {
				case withGRH && got != want:
					problem = "changed the ICRC; the LRH of a packet with a GRH is not covered"
				case !withGRH && vl && got != want:
					problem = "changed the ICRC; VL is masked"
				case !withGRH && !vl && got == want:
					problem = "left the ICRC unchanged; an LRH-only packet covers its LRH"
				}
				if problem != "" {
					t.Errorf("packet %d (GRH %v): flipping LRH bit %d %s (%08x -> %08x)", i, withGRH, bit, problem, want, got)
					break // one report per packet
				}
			}
		}
	}
}

// TestICRCRouterRewrite rewrites the LRH of captured-as-sent packets as a
// router (or, for VL, a switch) does, recomputes the VCRC as the link does,
// and decodes: the ICRC of a packet with a GRH must still check good after
// any rewrite; that of an LRH-only packet only after a VL change.
func TestICRCRouterRewrite(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 82))
	rewrites := []struct {
		name string
		do   func(lrh []byte)
		// localGood: an LRH-only packet's ICRC survives this rewrite.
		localGood bool
	}{
		{"VL", func(l []byte) { l[0] = l[0]&0x0F | (l[0]>>4+1)%15<<4 }, true},
		{"SL", func(l []byte) { l[1] ^= 0x50 }, false},
		{"DLID", func(l []byte) { binary.BigEndian.PutUint16(l[2:], binary.BigEndian.Uint16(l[2:])^0x0C01) }, false},
		{"SLID", func(l []byte) { binary.BigEndian.PutUint16(l[6:], binary.BigEndian.Uint16(l[6:])+7) }, false},
		{"LVer and every field at once", func(l []byte) {
			l[0] = 0x31
			l[1] = 0xF0 | l[1]&3
			l[2], l[3], l[6], l[7] = 0xFF, 0xFE, 0x00, 0x01
		}, false},
	}
	for _, withGRH := range []bool{true, false} {
		for i, s := range ibSpecs(r, withGRH, 10) {
			orig := fixIB(t, s)
			if err := decode.FixCRCs(orig, decode.LinkTypeInfiniBand); err != nil {
				t.Fatal(err)
			}
			for _, rw := range rewrites {
				frame := append([]byte(nil), orig...)
				rw.do(frame[:decode.LRHLen])
				end := len(frame) - decode.VCRCLen
				binary.LittleEndian.PutUint16(frame[end:], decode.ComputeVCRC(frame[:end]))
				p := fixDecode(frame, decode.LinkTypeInfiniBand)
				if p.VCRCStatus != decode.CRCGood {
					t.Fatalf("packet %d, %s: VCRC %s after recomputing it", i, rw.name, p.VCRCStatus)
				}
				want := decode.CRCBad
				if withGRH || rw.localGood {
					want = decode.CRCGood
				}
				if p.ICRCStatus != want {
					t.Errorf("packet %d (GRH %v), LRH %s rewritten: ICRC %s, want %s", i, withGRH, rw.name, p.ICRCStatus, want)
				}
			}
		}
	}
}

// TestICRCNativeGRHEqualsRoCEv1: IBA gives RoCEv1 (A16: a GRH where the LRH
// was) and native packets with a GRH the same invariant CRC, eight bytes of
// 1s then the masked GRH, BTH and the rest. The same GRH, BTH, extended
// headers and payload sent both ways must carry the same ICRC.
func TestICRCNativeGRHEqualsRoCEv1(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 83))
	for i, s := range ibSpecs(r, true, 40) {
		s.tos, s.flow, s.ttl = s.grh.TrafficClass, s.grh.FlowLabel, s.grh.HopLimit
		ib, v1 := fixIB(t, s), fixRoCEv1(t, s)
		if err := decode.FixCRCs(ib, decode.LinkTypeInfiniBand); err != nil {
			t.Fatal(err)
		}
		if err := decode.FixCRCs(v1, decode.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		pi, pv := fixDecode(ib, decode.LinkTypeInfiniBand), fixDecode(v1, decode.LinkTypeEthernet)
		if pi.Encap != decode.EncapIB || pv.Encap != decode.EncapRoCEv1 || pi.Has&decode.HdrGRH == 0 {
			t.Fatalf("packet %d: built %v and %v", i, pi.Encap, pv.Encap)
		}
		gi, gv := pi.Offset(pi.GRH.Contents), pv.Offset(pv.GRH.Contents)
		if string(ib[gi:pi.Offset(pi.ICRC.Contents)]) != string(v1[gv:pv.Offset(pv.ICRC.Contents)]) {
			t.Fatalf("packet %d: the two frames differ from the GRH to the ICRC", i)
		}
		if pi.ICRC.CRC != pv.ICRC.CRC || pi.ICRCStatus != decode.CRCGood || pv.ICRCStatus != decode.CRCGood {
			t.Errorf("packet %d: native IB with GRH ICRC %08x (%s), RoCEv1 %08x (%s)", i, pi.ICRC.CRC, pi.ICRCStatus, pv.ICRC.CRC, pv.ICRCStatus)
		}
	}
}
