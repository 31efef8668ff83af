package decode_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

type frame struct {
	name string
	data []byte
	link decode.LinkType
}

// realFrames reads every frame of the Soft-RoCE captures in testdata/rxe.
func realFrames(t testing.TB) []frame {
	t.Helper()
	files, _ := filepath.Glob("../testdata/rxe/*.pcap")
	if len(files) == 0 {
		t.Fatal("no captures in ../testdata/rxe")
	}
	var out []frame
	for _, f := range files {
		for _, fr := range testcap.ReadPcap(t, f) {
			out = append(out, frame{fr.File, fr.Data, fr.LinkType})
		}
	}
	return out
}

func TestRealCapturesICRCGood(t *testing.T) {
	var p decode.Packet
	fr := realFrames(t)
	for i, f := range fr {
		p.Frame.Len = len(f.data)
		decode.Decode(&p, f.data, f.link)
		if p.ICRCStatus != decode.CRCGood || p.Flags != 0 || p.Encap != decode.EncapRoCEv2 {
			t.Errorf("%s frame %d: icrc %v flags %v encap %v err %v", f.name, i, p.ICRCStatus, p.Flags.Names(), p.Encap, p.Err)
		}
	}
	if len(fr) < 400 {
		t.Fatalf("only %d frames", len(fr))
	}
}

// TestFastPathDoesNotAllocate: decoding a frame into a reused Packet does
// not allocate, for every real frame (every opcode in the captures, CM MADs
// included).
func TestFastPathDoesNotAllocate(t *testing.T) {
	var p decode.Packet
	for _, f := range realFrames(t) {
		n := testing.AllocsPerRun(20, func() {
			p.Frame.Len = len(f.data)
			decode.Decode(&p, f.data, f.link)
		})
		if n != 0 {
			t.Fatalf("%s: %v allocations per Decode (opcode %v)", f.name, n, p.BTH.Opcode)
		}
	}
}

// TestTruncatedEverywhere cuts every real frame at every length: no panic,
// every header before the cut decoded, ICRC unverifiable (never bad).
func TestTruncatedEverywhere(t *testing.T) {
	var full, p decode.Packet
	for _, f := range realFrames(t) {
		full.Frame.Len = len(f.data)
		decode.Decode(&full, f.data, f.link)
		for n := 0; n < len(f.data); n++ {
			p.Frame.Len = len(f.data) // the wire length says more was sent
			decode.Decode(&p, f.data[:n], f.link)
			if p.ICRCStatus == decode.CRCBad || p.ICRCStatus == decode.CRCGood {
				t.Fatalf("%s cut at %d: ICRC %v, want unverifiable or absent", f.name, n, p.ICRCStatus)
			}
			if n >= full.Offset(full.IB)+decode.BTHLen && p.Has&decode.HdrBTH == 0 {
				t.Fatalf("%s cut at %d: BTH not decoded", f.name, n)
			}
			if p.Has&decode.HdrBTH != 0 && !sameBTH(&p.BTH, &full.BTH) {
				t.Fatalf("%s cut at %d: BTH differs", f.name, n)
			}
			if p.Has&decode.HdrBTH != 0 && p.Flags&(decode.FlagTruncated|decode.FlagICRCUnverifiable) == 0 {
				t.Fatalf("%s cut at %d: not flagged", f.name, n)
			}
		}
	}
}

func sameBTH(a, b *decode.BTH) bool {
	return a.Opcode == b.Opcode && a.DestQP == b.DestQP && a.PSN == b.PSN && a.PKey == b.PKey
}

func TestBadICRCFlagged(t *testing.T) {
	f := realFrames(t)[0]
	d := bytes.Clone(f.data)
	d[len(d)-1] ^= 0x01
	var p decode.Packet
	p.Frame.Len = len(d)
	decode.Decode(&p, d, f.link)
	if p.ICRCStatus != decode.CRCBad || p.Flags&decode.FlagICRCBad == 0 {
		t.Fatalf("ICRC %v flags %v", p.ICRCStatus, p.Flags.Names())
	}
	// A flipped variant bit (TTL) must not change the ICRC verdict.
	d = bytes.Clone(f.data)
	d[14+8]--
	decode.Decode(&p, d, f.link)
	if p.ICRCStatus != decode.CRCGood {
		t.Fatalf("TTL change broke the ICRC: %v", p.ICRCStatus)
	}
}

func TestUnknownOpcodeDecodesToBTH(t *testing.T) {
	for _, f := range realFrames(t)[:20] {
		d := bytes.Clone(f.data)
		d[42] = 0x1A // reserved RC opcode
		var p decode.Packet
		p.Frame.Len = len(d)
		decode.Decode(&p, d, f.link)
		if p.Has&decode.HdrBTH == 0 || p.Flags&decode.FlagUnknownOpcode == 0 || p.BTH.Opcode != 0x1A {
			t.Fatalf("%s: has %b flags %v", f.name, p.Has, p.Flags.Names())
		}
		if p.BTH.Opcode.Known() {
			t.Fatal("0x1A known")
		}
	}
}

// TestLayersRoundTrip decodes each real frame through gopacket and
// serializes the InfiniBand layers back: the bytes must be the same.
func TestLayersRoundTrip(t *testing.T) {
	for _, f := range realFrames(t) {
		pkt := gopacket.NewPacket(f.data, layers.LayerTypeEthernet, gopacket.Default)
		if el := pkt.ErrorLayer(); el != nil {
			t.Fatalf("%s: %v", f.name, el.Error())
		}
		var ls []gopacket.SerializableLayer
		start := -1
		for i, l := range pkt.Layers() {
			if l.LayerType() == decode.LayerTypeBTH {
				start = i
			}
			if start >= 0 {
				sl, ok := l.(gopacket.SerializableLayer)
				if !ok {
					t.Fatalf("%s: %v is not serializable", f.name, l.LayerType())
				}
				ls = append(ls, sl)
			}
		}
		if start < 0 {
			t.Fatalf("%s: no BTH layer: %v", f.name, pkt.Layers())
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
			t.Fatal(err)
		}
		var fast decode.Packet
		decode.Decode(&fast, f.data, f.link)
		want := f.data[fast.Offset(fast.IB):]
		// Strip the Ethernet minimum-size padding, if any.
		want = want[:len(buf.Bytes())]
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("%s: round trip differs:\n got %x\nwant %x", f.name, buf.Bytes(), want)
		}
	}
}

func TestDecodeFromBytesTruncated(t *testing.T) {
	for _, l := range allLayers() {
		err := l.DecodeFromBytes(nil, gopacket.NilDecodeFeedback)
		if l.CanDecode() == decode.LayerTypeMAD || l.CanDecode() == decode.LayerTypeCM {
			continue
		}
		if !errors.Is(err, decode.ErrTruncated) {
			t.Errorf("%v: empty input: %v, want ErrTruncated", l.CanDecode(), err)
		}
	}
}

func allLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{
		&decode.LRH{}, &decode.GRH{}, &decode.BTH{}, &decode.RDETH{}, &decode.DETH{}, &decode.XRCETH{},
		&decode.RETH{}, &decode.AtomicETH{}, &decode.AETH{}, &decode.AtomicAckETH{}, &decode.ImmDt{},
		&decode.IETH{}, &decode.FETH{}, &decode.CNPPadding{}, &decode.ICRC{}, &decode.VCRC{},
	}
}

// FuzzLayers feeds the same bytes to every layer's DecodeFromBytes.
func FuzzLayers(f *testing.F) {
	for _, fr := range realFrames(f) {
		f.Add(fr.data[42:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range allLayers() {
			_ = l.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
		}
		_ = gopacket.NewPacket(data, decode.LayerTypeBTH, gopacket.Default)
		_ = gopacket.NewPacket(data, decode.LayerTypeLRH, gopacket.Default)
		_ = gopacket.NewPacket(data, decode.LayerTypeGRH, gopacket.Default)
	})
}

// FuzzDecode runs the fast path over every link type.
func FuzzDecode(f *testing.F) {
	for _, fr := range realFrames(f) {
		f.Add(fr.data, uint16(decode.LinkTypeEthernet))
	}
	f.Add([]byte{}, uint16(decode.LinkTypeInfiniBand))
	f.Fuzz(func(t *testing.T, data []byte, link uint16) {
		var p decode.Packet
		for _, lt := range []decode.LinkType{decode.LinkType(link), decode.LinkTypeEthernet, decode.LinkTypeRaw, decode.LinkTypeLinuxSLL, decode.LinkTypeLinuxSLL2, decode.LinkTypeInfiniBand, decode.LinkTypeERF} {
			p.Frame.Len = len(data) + int(link%3)
			decode.Decode(&p, data, lt)
			var vals []decode.Value
			for _, fl := range decode.Fields() {
				vals = fl.Values(&p, vals[:0])
				for _, v := range vals {
					_ = fl.AppendValue(nil, v)
					_ = fl.AppendDisplay(nil, v)
				}
				_ = fl.Span(&p)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	fr := realFrames(b)
	var p decode.Packet
	size := 0
	for _, f := range fr {
		size += len(f.data)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size / len(fr)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := &fr[i%len(fr)]
		p.Frame.Len = len(f.data)
		decode.Decode(&p, f.data, f.link)
	}
}
