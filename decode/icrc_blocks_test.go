package decode

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rocetap/rocetap/internal/testcap"
)

// The ICRC is computed in whole 64-byte blocks (icrcSum): the masked head
// and a few bytes after it in a scratch buffer behind zeros, the rest from
// the frame. These tests hold it to the plainest possible CRC: one bit at
// a time, no table, no CLMUL, over a masked copy of the packet.

// bitCRC is the CRC-32 (IEEE, reflected, init and final XOR all ones) of b,
// one bit at a time.
func bitCRC(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xEDB88320
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

// refICRCRoCEv2 masks a copy of ip (IP header through pad) as IBA A17
// says and CRCs it after eight 1-bytes.
func refICRCRoCEv2(ip []byte) uint32 {
	b := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ip...)
	h := b[8:]
	n := 40
	if h[0]>>4 == 4 {
		n = int(h[0]&0x0F) * 4
		h[1], h[8], h[10], h[11] = 0xFF, 0xFF, 0xFF, 0xFF
	} else {
		h[0] |= 0x0F
		h[1], h[2], h[3], h[7] = 0xFF, 0xFF, 0xFF, 0xFF
	}
	h[n+6], h[n+7], h[n+8+4] = 0xFF, 0xFF, 0xFF
	return bitCRC(b)
}

// refICRCGRH is ICRCGRH's rule on a masked copy: eight 1-bytes, or the
// LRH with its VL masked when there is no GRH.
func refICRCGRH(lrh []byte, hasGRH bool, rest []byte) uint32 {
	var b []byte
	if lrh != nil && !hasGRH {
		b = append(b, lrh[:LRHLen]...)
		b[0] |= 0xF0
	} else {
		b = append(b, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
	}
	off := len(b)
	b = append(b, rest...)
	if hasGRH {
		b[off] |= 0x0F
		b[off+1], b[off+2], b[off+3], b[off+7] = 0xFF, 0xFF, 0xFF, 0xFF
		off += GRHLen
	}
	b[off+4] = 0xFF
	return bitCRC(b)
}

// bodyLens are the lengths after the headers tried: every length around
// each block and call boundary (64, 1024 for VPCLMULQDQ), and a few long.
func bodyLens() []int {
	var ls []int
	for n := 0; n <= 1100; n++ {
		ls = append(ls, n)
	}
	return append(ls, 2048, 4093, 4096, 4111, 9000)
}

// icrcPaths runs f once for each way this machine computes the ICRC:
// icrcDirect and icrcFold where the CPU has them, and hash/crc32 always.
func icrcPaths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	paths := availableICRCPaths()
	if len(paths) == 1 {
		t.Log("this CPU has no VPCLMULQDQ on 512-bit registers: only the hash/crc32 path is tested")
	}
	for _, p := range paths {
		restore := p.use()
		t.Run(p.name, f)
		restore()
	}
}

// randRoCEv2 fills ip with random bytes under an IP version and header
// length that say hdr: an IPv4 header of hdr bytes, or IPv6 (-40).
func randRoCEv2(r *rand.Rand, ip []byte, hdr int) {
	for i := range ip {
		ip[i] = byte(r.Uint32())
	}
	if hdr > 0 {
		ip[0] = 0x40 | byte(hdr/4)
	} else {
		ip[0] = 0x60 | ip[0]&0x0F
	}
}

// icrcPath is a way of computing the ICRC: which of canFold and
// canDirect are set.
type icrcPath struct {
	name         string
	fold, direct bool
}

// availableICRCPaths lists the ways this machine has.
func availableICRCPaths() []icrcPath {
	paths := []icrcPath{{"crc32", false, false}}
	if canFold {
		paths = append(paths, icrcPath{"icrcFold", true, false})
	}
	if canDirect {
		paths = append(paths, icrcPath{"icrcDirect", true, true})
	}
	return paths
}

// use sets the path, and returns what puts the machine's back.
func (p icrcPath) use() (restore func()) {
	fold, direct := canFold, canDirect
	canFold, canDirect = p.fold, p.direct
	return func() { canFold, canDirect = fold, direct }
}

func TestICRCBlocksRoCEv2(t *testing.T) { icrcPaths(t, testICRCBlocksRoCEv2) }

func testICRCBlocksRoCEv2(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2))
	var s [icrcScratch]byte
	for _, hdr := range []int{20, 24, 40, 60, -40} { // IPv4 header lengths; -40: IPv6
		for _, body := range bodyLens() {
			n := max(hdr, -hdr)
			ip := make([]byte, n+8+BTHLen+body)
			randRoCEv2(r, ip, hdr)
			// Whatever an earlier packet left in the scratch must not count.
			for i := range s {
				s[i] = byte(r.Uint32())
			}
			got, ok := icrcRoCEv2(ip, &s)
			if want := refICRCRoCEv2(ip); !ok || got != want {
				t.Fatalf("IP header %d, %d bytes after the BTH: got %08x (ok %v), want %08x", hdr, body, got, ok, want)
			}
			if got2, _ := ICRCRoCEv2(ip); got2 != got {
				t.Fatalf("IP header %d, %d bytes: ICRCRoCEv2 %08x, with the Packet's scratch %08x", hdr, body, got2, got)
			}
		}
	}
}

func TestICRCBlocksGRH(t *testing.T) { icrcPaths(t, testICRCBlocksGRH) }

func testICRCBlocksGRH(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 3))
	var s [icrcScratch]byte
	lrh := make([]byte, LRHLen)
	for _, kind := range []string{"rocev1", "ib-grh", "ib-lrh"} {
		for _, body := range bodyLens() {
			hasGRH := kind != "ib-lrh"
			n := BTHLen
			if hasGRH {
				n += GRHLen
			}
			rest := make([]byte, n+body)
			for i := range rest {
				rest[i] = byte(r.Uint32())
			}
			for i := range lrh {
				lrh[i] = byte(r.Uint32())
			}
			l := lrh
			if kind == "rocev1" {
				l = nil
			}
			for i := range s {
				s[i] = byte(r.Uint32())
			}
			got, ok := icrcGRH(&s, l, hasGRH, rest)
			if want := refICRCGRH(l, hasGRH, rest); !ok || got != want {
				t.Fatalf("%s, %d bytes after the headers: got %08x (ok %v), want %08x", kind, body, got, ok, want)
			}
		}
	}
}

// TestICRCBlocksRealFrames checks the decoder's ICRC against the bitwise
// reference on every frame of the bundled pcap captures.
func TestICRCBlocksRealFrames(t *testing.T) {
	var files []string
	for _, g := range []string{"../testdata/rxe/*.pcap", "../testdata/synth/*.pcap"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var p Packet
	checked := 0
	for _, f := range files {
		for _, fr := range testcap.ReadPcap(t, f) {
			p.Frame = Frame{Len: fr.Len}
			Decode(&p, fr.Data, fr.LinkType)
			if p.ICRCStatus != CRCGood && p.ICRCStatus != CRCBad {
				continue
			}
			end := p.Offset(p.ICRC.Contents)
			var want uint32
			switch p.Encap {
			case EncapRoCEv2:
				want = refICRCRoCEv2(fr.Data[p.L3Off:end])
			case EncapRoCEv1:
				want = refICRCGRH(nil, true, fr.Data[p.Offset(p.GRH.Contents):end])
			case EncapIB:
				start := p.Offset(p.BTH.Contents)
				if p.Has&HdrGRH != 0 {
					start = p.Offset(p.GRH.Contents)
				}
				want = refICRCGRH(p.LRH.Contents, p.Has&HdrGRH != 0, fr.Data[start:end])
			default:
				t.Fatalf("%s#%d: ICRC checked in a %s frame", fr.File, fr.Number, p.Encap)
			}
			var be [4]byte
			binary.LittleEndian.PutUint32(be[:], want)
			if got := p.ICRCComputed; got != binary.BigEndian.Uint32(be[:]) {
				t.Errorf("%s#%d (%s): decoder computed %08x, bitwise reference %08x", fr.File, fr.Number, p.Encap, swap32(got), want)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d frames with an ICRC checked", checked)
	}
	t.Logf("%d frames checked", checked)
}

var icrcSink uint32

// BenchmarkICRCRoCEv2 is the ICRC of a RoCEv2 packet with 1 KiB of
// payload, each way this machine has.
func BenchmarkICRCRoCEv2(b *testing.B) {
	ip := make([]byte, 20+8+BTHLen+RETHLen+1024)
	ip[0] = 0x45
	var s [icrcScratch]byte
	for _, p := range availableICRCPaths() {
		restore := p.use()
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(ip)))
			for b.Loop() {
				icrcSink, _ = icrcRoCEv2(ip, &s)
			}
		})
		restore()
	}
}
