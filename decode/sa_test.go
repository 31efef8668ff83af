package decode

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/internal/testcap"
)

// saMADs returns the SA MADs (256 bytes each) of the synthetic SA
// captures.
func saMADs(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range []string{"ib_sa.pcap", "ib_sa2.pcap", "roce_sa.pcap"} {
		for _, fr := range testcap.ReadPcap(t, "../testdata/synth/"+name) {
			var p Packet
			p.Frame.Len = fr.Len
			Decode(&p, fr.Data, fr.LinkType)
			if p.Has&HdrMAD != 0 && p.SA.Valid {
				out = append(out, bytes.Clone(p.MAD.Bytes()))
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d SA MADs in the synthetic captures", len(out))
	}
	return out
}

// isSAField reports whether a field belongs to the RMPP header, the SA
// header or an SA record.
func isSAField(f *Field) bool {
	for g := f; g != nil; g = g.Parent {
		if g.Abbrev == "infiniband.rmpp" || g.Abbrev == "infiniband.sa.drdlid" {
			return true
		}
	}
	return false
}

func saValues(f *Field, p *Packet) []string {
	var out []string
	for _, v := range f.Values(p, nil) {
		out = append(out, string(f.AppendValue(nil, v)))
	}
	return out
}

// TestSATruncatedEverywhere cuts every SA MAD at every length: nothing
// panics, the packet is marked truncated, and every value of a number or
// address field the cut MAD shows is the one the whole MAD shows (a
// record cut short loses its last fields, never changes one).
func TestSATruncatedEverywhere(t *testing.T) {
	var fields []*Field
	for _, f := range Fields() {
		if isSAField(f) {
			fields = append(fields, f)
		}
	}
	for i, mad := range saMADs(t) {
		var full Packet
		full.Has = HdrBTH
		full.decodeMAD(mad)
		for n := range len(mad) {
			var p Packet
			p.Has = HdrBTH
			p.decodeMAD(mad[:n])
			if p.Flags&FlagTruncated == 0 {
				t.Fatalf("MAD %d cut at %d: not flagged truncated", i, n)
			}
			if got := FieldByName("infiniband.rmpp.rmpptype").Present(&p); got != (n >= MADHeaderLen+2) {
				t.Fatalf("MAD %d cut at %d: rmpptype present %v", i, n, got)
			}
			for _, f := range fields {
				got := saValues(f, &p)
				if f.Type == FTBytes {
					continue // cut with the MAD
				}
				want := saValues(f, &full)
				if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
					t.Fatalf("MAD %d cut at %d: %s = %v, the whole MAD %v", i, n, f.Abbrev, got, want)
				}
			}
		}
	}
}

// TestSARecords: records of a table are spaced by the attribute offset,
// a single-segment transfer holds what PayloadLength says, and a segment
// of several holds none (flow reassembles them).
func TestSARecords(t *testing.T) {
	var got []int
	SARecords(make([]byte, 200), MADMethodGetTableResp, 8, func(r []byte) { got = append(got, len(r)) })
	if want := []int{64, 64, 64, 8}; !slices.Equal(got, want) {
		t.Errorf("table of 200 bytes at offset 8: records %v, want %v", got, want)
	}
	got = got[:0]
	SARecords(make([]byte, 200), MADMethodGetResp, 8, func(r []byte) { got = append(got, len(r)) })
	if want := []int{200}; !slices.Equal(got, want) {
		t.Errorf("GetResp: records %v, want %v", got, want)
	}
	data := make([]byte, MADDataLen)
	data[1], data[2] = RMPPTypeData, RMPPFlagActive|RMPPFlagFirst|RMPPFlagLast
	binary.BigEndian.PutUint32(data[8:], SAHeaderLen+128)
	var s SA
	s.decode(data)
	if n := len(s.RecordData()); n != 128 {
		t.Errorf("single segment, PayloadLength 148: %d bytes of records, want 128", n)
	}
	data[2] = RMPPFlagActive | RMPPFlagFirst
	s.decode(data)
	if !s.RMPP.Segmented() || s.RecordData() != nil {
		t.Errorf("first of several segments: segmented %v, records %d bytes", s.RMPP.Segmented(), len(s.RecordData()))
	}
	data[1] = RMPPTypeAck
	s.decode(data)
	if s.RecordData() != nil {
		t.Error("RMPP ACK: records decoded")
	}
}

// FuzzDecodeSA decodes bytes as an SA MAD, alone and as the reassembled
// data of an RMPP transfer: nothing may panic and every field formats.
func FuzzDecodeSA(f *testing.F) {
	f.Add([]byte{}, uint16(8))
	f.Add(bytes.Repeat([]byte{0xFF}, MADLen), uint16(0xFFFF))
	for _, mad := range saMADs(f)[:12] {
		f.Add(mad, binary.BigEndian.Uint16(mad[MADHeaderLen+RMPPLen+8:]))
	}
	f.Fuzz(func(t *testing.T, data []byte, attrOff uint16) {
		if len(data) > 1 {
			data = bytes.Clone(data)
			data[1] = MgmtClassSubnAdm
		}
		var fields []*Field
		for _, fl := range Fields() {
			if isSAField(fl) || strings.HasPrefix(fl.Abbrev, "rocetap.rmpp.") {
				fields = append(fields, fl)
			}
		}
		var p Packet
		p.Has = HdrBTH
		p.decodeMAD(data)
		show := func() {
			var out []byte
			for _, fl := range fields {
				for _, v := range fl.Values(&p, nil) {
					out = fl.AppendValue(out[:0], v)
					out = fl.AppendDisplay(out[:0], v)
				}
				_ = fl.Span(&p)
			}
		}
		show()
		gopacket.NewPacket(data, LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		if !p.SA.Valid {
			return
		}
		// The same bytes as the records of a reassembled transfer.
		p.SA.AttributeOffset = attrOff
		p.Analysis.Tracked = true
		p.Analysis.MAD.Reassembled = data
		p.Analysis.MAD.Segments = []int{1, 2}
		show()
	})
}

// TestSALayerRoundTrip decodes every SA MAD of the synthetic captures as
// gopacket layers (MAD, SA), serializes them back and gets the same
// bytes; the layer agrees with the flat decoder.
func TestSALayerRoundTrip(t *testing.T) {
	for i, mad := range saMADs(t) {
		pk := gopacket.NewPacket(mad, LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		m, _ := pk.Layer(LayerTypeMAD).(*MAD)
		s, _ := pk.Layer(LayerTypeSA).(*SA)
		if m == nil || s == nil || pk.ErrorLayer() != nil {
			t.Fatalf("MAD %d: layers %v", i, pk.Layers())
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, m, s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), mad) {
			t.Fatalf("MAD %d: round trip differs\n got %x\nwant %x", i, buf.Bytes(), mad)
		}
		var p Packet
		p.decodeMAD(mad)
		if p.SA.RMPP != s.RMPP || p.SA.SMKey != s.SMKey || p.SA.AttributeOffset != s.AttributeOffset || p.SA.ComponentMask != s.ComponentMask || !bytes.Equal(p.SA.Data, s.Data) {
			t.Fatalf("MAD %d: flat %+v, layer %+v", i, p.SA, *s)
		}
	}
}
