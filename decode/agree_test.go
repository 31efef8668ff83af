package decode_test

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/internal/testcap"
)

// allTestFrames returns every frame of every capture under ../testdata
// (pcap and pcapng), read with gopacket's pcapgo.
func allTestFrames(t *testing.T) []testFrame {
	t.Helper()
	files := testcap.Glob(t, 40, "../testdata/rxe/*.pcap", "../testdata/synth/*.pcap", "../testdata/synth/*.pcapng")
	var out []testFrame
	for _, path := range files {
		for _, fr := range testcap.ReadFile(t, path) {
			out = append(out, testFrame{name: fr.File, number: fr.Number, data: fr.Data, wire: fr.Len, link: fr.LinkType})
		}
	}
	return out
}

type testFrame struct {
	name   string
	number int
	data   []byte
	wire   int
	link   layers.LinkType
}

// ibLayers maps each InfiniBand layer type to the flat Packet's copy of
// it and the Has bit that says it is there.
var ibLayers = []struct {
	lt   gopacket.LayerType
	hdr  decode.Hdr
	flat func(p *decode.Packet) gopacket.Layer
}{
	{decode.LayerTypeLRH, decode.HdrLRH, func(p *decode.Packet) gopacket.Layer { return &p.LRH }},
	{decode.LayerTypeGRH, decode.HdrGRH, func(p *decode.Packet) gopacket.Layer { return &p.GRH }},
	{decode.LayerTypeBTH, decode.HdrBTH, func(p *decode.Packet) gopacket.Layer { return &p.BTH }},
	{decode.LayerTypeRDETH, decode.HdrRDETH, func(p *decode.Packet) gopacket.Layer { return &p.RDETH }},
	{decode.LayerTypeDETH, decode.HdrDETH, func(p *decode.Packet) gopacket.Layer { return &p.DETH }},
	{decode.LayerTypeXRCETH, decode.HdrXRCETH, func(p *decode.Packet) gopacket.Layer { return &p.XRCETH }},
	{decode.LayerTypeRETH, decode.HdrRETH, func(p *decode.Packet) gopacket.Layer { return &p.RETH }},
	{decode.LayerTypeAtomicETH, decode.HdrAtomicETH, func(p *decode.Packet) gopacket.Layer { return &p.AtomicETH }},
	{decode.LayerTypeAETH, decode.HdrAETH, func(p *decode.Packet) gopacket.Layer { return &p.AETH }},
	{decode.LayerTypeAtomicAckETH, decode.HdrAtomicAckETH, func(p *decode.Packet) gopacket.Layer { return &p.AtomicAckETH }},
	{decode.LayerTypeImmDt, decode.HdrImmDt, func(p *decode.Packet) gopacket.Layer { return &p.ImmDt }},
	{decode.LayerTypeIETH, decode.HdrIETH, func(p *decode.Packet) gopacket.Layer { return &p.IETH }},
	{decode.LayerTypeFETH, decode.HdrFETH, func(p *decode.Packet) gopacket.Layer { return &p.FETH }},
	{decode.LayerTypeCNP, decode.HdrCNP, func(p *decode.Packet) gopacket.Layer { return &p.CNP }},
	{decode.LayerTypeMAD, decode.HdrMAD, func(p *decode.Packet) gopacket.Layer { return &p.MAD }},
	{decode.LayerTypeCM, decode.HdrCM, func(p *decode.Packet) gopacket.Layer { return &p.CM }},
	{decode.LayerTypeICRC, decode.HdrICRC, func(p *decode.Packet) gopacket.Layer { return &p.ICRC }},
	{decode.LayerTypeVCRC, decode.HdrVCRC, func(p *decode.Packet) gopacket.Layer { return &p.VCRC }},
}

// exportedEqual compares the exported fields of two layers of the same
// type, leaving out the BaseLayer (its Payload is cut differently by the
// two paths: the flat one keeps pad and trailers apart) and what only one
// path fills (ICRC.Pad: the flat path keeps it in Packet.Pad).
func exportedEqual(a, b any) (string, bool) {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		f := va.Type().Field(i)
		if !f.IsExported() || f.Name == "BaseLayer" || f.Name == "Pad" || f.Name == "Link" {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return f.Name, false
		}
	}
	return "", true
}

// erfInner strips an ERF record's header (and an Ethernet record's two
// pad bytes) and returns the link type of what it carries: gopacket has no
// ERF decoder of its own.
func erfInner(t *testing.T, d []byte) ([]byte, layers.LinkType) {
	if len(d) < 16 {
		return nil, 0
	}
	typ, rest := d[8]&0x7F, d[16:]
	for ext := d[8]&0x80 != 0; ext && len(rest) >= 8; rest = rest[8:] {
		ext = rest[0]&0x80 != 0
	}
	switch typ {
	case decode.ERFTypeEth, decode.ERFTypeColorEth, decode.ERFTypeDSMColorEth, decode.ERFTypeColorHashEth:
		if len(rest) < 2 {
			return nil, 0
		}
		return rest[2:], layers.LinkTypeEthernet
	case decode.ERFTypeInfiniBand, decode.ERFTypeInfiniBandLnk:
		return rest, layers.LinkType(decode.LinkTypeInfiniBand)
	}
	t.Fatalf("ERF record type %d in testdata: teach erfInner about it", typ)
	return nil, 0
}

// TestGopacketAgreesWithDecode decodes every frame of every test capture
// twice, through gopacket.NewPacket (the registered layers) and through
// Decoder.Decode (the flat fast path), and checks that both find the same
// InfiniBand layers in the same order with the same field values and
// bytes, and the same payload. A frame the capture cut short (snapshot
// length) is compared up to the cut: gopacket's decoders cannot know the
// wire length, so they cannot tell a cut ICRC from payload.
func TestGopacketAgreesWithDecode(t *testing.T) {
	frames := append(allTestFrames(t), madEdgeFrames(t)...)
	var p decode.Packet
	compared, cut, ib := 0, 0, 0
	for _, f := range frames {
		where := f.name + " frame " + strconv.Itoa(f.number)
		p.Frame.Len = f.wire
		decode.Decode(&p, f.data, f.link)
		data, link := f.data, f.link
		if f.link == decode.LinkTypeERF {
			data, link = erfInner(t, f.data)
		}
		if data == nil {
			continue
		}
		pk := gopacket.NewPacket(data, link, gopacket.DecodeOptions{Lazy: false, NoCopy: true})
		snapped := f.wire > len(f.data) || p.Flags&decode.FlagTruncated != 0
		// The InfiniBand layers gopacket found, in order.
		var got []gopacket.Layer
		var payload []byte
		for _, l := range pk.Layers() {
			for _, il := range ibLayers {
				if l.LayerType() == il.lt {
					got = append(got, l)
				}
			}
			if pl, ok := l.(*gopacket.Payload); ok && len(got) > 0 {
				payload = *pl
			}
		}
		// The flat path's, in wire order.
		var want []gopacket.Layer
		for _, il := range ibLayers {
			if p.Has&il.hdr != 0 && il.hdr&(decode.HdrMAD|decode.HdrCM|decode.HdrICRC|decode.HdrVCRC) == 0 && il.hdr&^(decode.HdrLRH|decode.HdrGRH|decode.HdrBTH) == 0 {
				want = append(want, il.flat(&p))
			}
		}
		for _, h := range p.BTH.Opcode.ExtHeaders() {
			if p.Has&h != 0 {
				for _, il := range ibLayers {
					if il.hdr == h {
						want = append(want, il.flat(&p))
					}
				}
			}
		}
		for _, il := range ibLayers[len(ibLayers)-4:] {
			if p.Has&il.hdr != 0 {
				want = append(want, il.flat(&p))
			}
		}
		if p.Encap == decode.EncapNone {
			if len(got) > 0 {
				t.Errorf("%s: no InfiniBand transport in the flat path, gopacket found %v", where, layerNames(got))
			}
			continue
		}
		ib++
		if snapped {
			// Compare the headers before the cut.
			n := 0
			for n < len(got) && n < len(want) && got[n].LayerType() == want[n].LayerType() && got[n].LayerType() != decode.LayerTypeICRC {
				n++
			}
			got, want = got[:n], want[:n]
		}
		if !sameTypes(got, want) {
			t.Errorf("%s: gopacket layers %v, Decode layers %v", where, layerNames(got), layerNames(want))
			continue
		}
		for i := range got {
			if field, ok := exportedEqual(got[i], want[i]); !ok {
				t.Errorf("%s: %v.%s differs: gopacket %+v, Decode %+v", where, got[i].LayerType(), field, got[i], want[i])
			}
			if !bytes.Equal(got[i].LayerContents(), want[i].LayerContents()) {
				t.Errorf("%s: %v bytes differ: gopacket %x, Decode %x", where, got[i].LayerType(), got[i].LayerContents(), want[i].LayerContents())
			}
		}
		if !snapped && p.Has&decode.HdrMAD == 0 && !bytes.Equal(payload, p.Payload) {
			t.Errorf("%s: payload: gopacket %x, Decode %x", where, payload, p.Payload)
		}
		if snapped {
			cut++
		} else {
			compared++
		}
	}
	if ib < 500 {
		t.Fatalf("only %d InfiniBand frames compared", ib)
	}
	t.Logf("%d frames, %d with an InfiniBand transport: %d compared whole, %d up to where the capture cut them", len(frames), ib, compared, cut)
}

func sameTypes(a, b []gopacket.Layer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].LayerType() != b[i].LayerType() {
			return false
		}
	}
	return true
}

func layerNames(ls []gopacket.Layer) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.LayerType().String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

// madEdgeFrames are frames at the edge of "is this payload a MAD" (a UD
// SEND Only to or from QP0/QP1, carriesMAD): the test captures hold MADs
// and a UD SEND between other QPs, but no RC SEND to QP1, which the
// gopacket path once took for a MAD.
func madEdgeFrames(t *testing.T) []testFrame {
	mad := make([]byte, 256)
	mad[0], mad[1], mad[2], mad[3] = 1, decode.MgmtClassCM, 2, 3 // base version, CM, class version, Send
	mad[16], mad[17] = 0x00, 0x10                                // attribute ID: REQ
	ud := func(op uint8, dqp, sqp uint32) synth.Transport {
		return synth.Transport{BTH: decode.BTH{Opcode: decode.TransportUD.Opcode(op), PKey: 0xFFFF, DestQP: dqp, PSN: 7},
			DETH: decode.DETH{QKey: 0x80010000, SrcQP: sqp}, Payload: mad}
	}
	rc := func(op uint8, dqp uint32) synth.Transport {
		return synth.Transport{BTH: decode.BTH{Opcode: decode.TransportRC.Opcode(op), PKey: 0xFFFF, DestQP: dqp, PSN: 7}, Payload: mad}
	}
	cases := []struct {
		name string
		tr   synth.Transport
		mad  bool
	}{
		{"RC SEND Only to QP1", rc(decode.OpSendOnly, 1), false},
		{"RC SEND Only to QP0", rc(decode.OpSendOnly, 0), false},
		{"UD SEND Only to QP1", ud(decode.OpSendOnly, 1, 0x123), true},
		{"UD SEND Only Immediate to QP0", ud(decode.OpSendOnlyImm, 0, 0x123), true},
		{"UD SEND Only from QP1 (GMP response)", ud(decode.OpSendOnly, 0x123, 1), true},
		{"UD SEND Only between QPs 0x123 and 0x124", ud(decode.OpSendOnly, 0x124, 0x123), false},
	}
	var out []testFrame
	for i, c := range cases {
		data, link, _, err := synth.RoCEv2{T: c.tr}.Build()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var p decode.Packet
		p.Frame.Len = len(data)
		decode.Decode(&p, data, link)
		if got := p.Has&decode.HdrMAD != 0; got != c.mad {
			t.Errorf("%s: Decode finds a MAD: %v, want %v", c.name, got, c.mad)
		}
		out = append(out, testFrame{name: c.name, number: i + 1, data: data, wire: len(data), link: layers.LinkType(link)})
	}
	return out
}
