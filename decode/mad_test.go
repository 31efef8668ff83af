package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
)

// madREQ is the CM REQ MAD of cm_rping frame 1 (the 256 bytes after DETH).
func madREQ(t testing.TB) []byte {
	t.Helper()
	fr := cmReadPcap(t, cmCapture(t, "cm_rping.pcap"))[0]
	p := cmDecode(fr, 1)
	if p.Has&HdrMAD == 0 || len(p.MAD.Bytes()) != MADLen {
		t.Fatalf("cm_rping frame 1 has no 256-byte MAD (Has %#x)", p.Has)
	}
	return p.MAD.Bytes()
}

func TestMADDecode(t *testing.T) {
	hdr := []byte{
		0x01, 0x07, 0x02, 0x83, // base version, class CM, class version 2, R + method 3
		0x12, 0x34, 0x56, 0x78, // status, class specific
		0x00, 0x00, 0x00, 0x02, 0xb7, 0x63, 0xc6, 0x8b, // transaction ID
		0x00, 0x13, 0xab, 0xcd, // attribute ID, reserved
		0xde, 0xad, 0xbe, 0xef, // attribute modifier
	}
	data := append(append([]byte{}, hdr...), make([]byte, MADDataLen)...)
	var m MAD
	if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	want := MAD{BaseVersion: 1, MgmtClass: MgmtClassCM, ClassVersion: 2, R: true, Method: 3, Status: 0x1234, ClassSpecific: 0x5678,
		TransactionID: 0x2b763c68b, AttributeID: CMAttrREP, Reserved: 0xabcd, AttributeModifier: 0xdeadbeef}
	want.Contents, want.Payload, want.mad = data[:MADHeaderLen], data[MADHeaderLen:], data
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
	if m.MethodByte() != 0x83 || m.NextLayerType() != LayerTypeCM || MADMethodString(MADMethodGetResp) != "GetResp()" {
		t.Errorf("method byte %#x, next %v", m.MethodByte(), m.NextLayerType())
	}
	m.MgmtClass = MgmtClassSubnAdm
	if m.NextLayerType() != LayerTypeSA {
		t.Errorf("SA MAD: next %v", m.NextLayerType())
	}
	m.MgmtClass = MgmtClassBM
	if m.NextLayerType() != gopacket.LayerTypePayload {
		t.Errorf("BM MAD: next %v", m.NextLayerType())
	}
	buf := gopacket.NewSerializeBuffer()
	m.MgmtClass = MgmtClassCM
	if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), hdr) {
		t.Errorf("serialized %x, want %x", buf.Bytes(), hdr)
	}
}

// TestMADRoundTrip decodes the REQ MAD as layers, serializes them and
// compares with the original bytes.
func TestMADRoundTrip(t *testing.T) {
	data := madREQ(t)
	pk := gopacket.NewPacket(data, LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	m, _ := pk.Layer(LayerTypeMAD).(*MAD)
	c, _ := pk.Layer(LayerTypeCM).(*CM)
	if m == nil || c == nil || c.AttributeID != CMAttrREQ {
		t.Fatalf("layers %v", pk.Layers())
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, m, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("round trip differs\n got %x\nwant %x", buf.Bytes(), data)
	}
	// A CM layer decoded on its own finds its attribute ID in the MAD
	// layer before it.
	pk = gopacket.NewPacket(data[MADHeaderLen:], LayerTypeCM, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	if c2, _ := pk.Layer(LayerTypeCM).(*CM); c2 == nil || c2.AttributeID != 0 || len(c2.Contents) != MADDataLen {
		t.Errorf("standalone CM layer: %+v", c2)
	}
}

// TestMADTruncated is the table of short MADs: nothing may panic, the
// packet is marked truncated, and only the fields the capture holds are
// present.
func TestMADTruncated(t *testing.T) {
	req := madREQ(t)
	tests := []struct {
		name    string
		n       int
		has     Hdr
		present []string
		absent  []string
	}{
		{"empty", 0, 0, nil, []string{"infiniband.mad", "infiniband.mad.mgmtclass"}},
		{"1 byte", 1, 0, nil, []string{"infiniband.mad.baseversion"}},
		{"23 bytes", 23, 0, nil, []string{"infiniband.mad.attributemodifier"}},
		{"header only", 24, HdrMAD | HdrCM, []string{"infiniband.mad.attributeid", "infiniband.smplid.smpdata"}, []string{"infiniband.mad.data", "infiniband.cm.req", "infiniband.cm.req.private"}},
		{"comm ID", 28, HdrMAD | HdrCM, []string{"infiniband.cm.req"}, []string{"infiniband.cm.req.serviceid"}},
		{"QPN", 24 + 35, HdrMAD | HdrCM, []string{"infiniband.cm.req.localqpn"}, []string{"infiniband.cm.req.responderres", "infiniband.cm.req.startpsn"}},
		{"half GID", 24 + 60, HdrMAD | HdrCM, []string{"infiniband.cm.req.prim_remotelid"}, []string{"infiniband.cm.req.prim_localgid"}},
		{"alt reserved", 24 + 139, HdrMAD | HdrCM, []string{"infiniband.cm.req.alt_reserved1"}, []string{"infiniband.cm.req.alt_localacktout", "infiniband.cm.req.ip_cm"}},
		{"IP CM cut", 24 + 150, HdrMAD | HdrCM, []string{"infiniband.cm.req.ip_cm", "infiniband.cm.req.ip_cm.sport"}, []string{"infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.private"}},
		{"255 bytes", 255, HdrMAD | HdrCM, []string{"infiniband.cm.req.ip_cm.dip4", "infiniband.cm.req.ip_cm.private"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			p.Has = HdrBTH
			p.decodeMAD(req[:tt.n])
			if got := p.Has &^ HdrBTH; got != tt.has {
				t.Errorf("Has %#x, want %#x", got, tt.has)
			}
			if p.Flags&FlagTruncated == 0 || !errors.Is(p.Err, ErrTruncated) {
				t.Errorf("flags %v err %v, want truncated", p.Flags.Names(), p.Err)
			}
			for _, name := range tt.present {
				if !FieldByName(name).Present(&p) {
					t.Errorf("%s absent", name)
				}
			}
			for _, name := range tt.absent {
				if FieldByName(name).Present(&p) {
					t.Errorf("%s present: %q", name, cmFieldString(FieldByName(name), &p))
				}
			}
			if tt.n == 24+139 {
				// Only the first of Wireshark's two alt_reserved1 occurrences fits.
				if got := cmFieldString(FieldByName("infiniband.cm.req.alt_reserved1"), &p); got != "0x00" {
					t.Errorf("alt_reserved1 = %q", got)
				}
			}
			// The gopacket path keeps what it can and marks the packet.
			pk := gopacket.NewPacket(req[:tt.n], LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
			if tt.has != 0 && (pk.Layer(LayerTypeCM) == nil || !pk.Metadata().Truncated) {
				t.Errorf("gopacket: layers %v truncated %v", pk.Layers(), pk.Metadata().Truncated)
			}
		})
	}
}

// TestMADSnappedFrame decodes a capture cut inside the MAD through Decode.
func TestMADSnappedFrame(t *testing.T) {
	fr := cmReadPcap(t, cmCapture(t, "cm_rping.pcap"))[0]
	const madOff = 14 + 20 + 8 + BTHLen + DETHLen
	var p Packet
	p.Frame.Len = len(fr.data)
	Decode(&p, fr.data[:madOff+100], fr.linkType)
	if p.Has&(HdrMAD|HdrCM) != HdrMAD|HdrCM || p.Flags&FlagTruncated == 0 {
		t.Fatalf("Has %#x flags %v", p.Has, p.Flags.Names())
	}
	if p.CM.LocalQPN != 0x25 || !FieldByName("infiniband.cm.req.startpsn").Present(&p) || !FieldByName("infiniband.cm.req.prim_localgid_ipv4").Present(&p) || FieldByName("infiniband.cm.req.prim_remotegid_ipv4").Present(&p) {
		t.Errorf("snapped REQ: QPN %#x", p.CM.LocalQPN)
	}
}

// TestMADNotCM checks that a MAD of another class (SA) decodes as that
// class, not as CM.
func TestMADNotCM(t *testing.T) {
	data := append([]byte{}, madREQ(t)...)
	data[1] = MgmtClassSubnAdm
	var p Packet
	p.decodeMAD(data)
	if p.Has != HdrMAD || p.Flags != 0 {
		t.Fatalf("Has %#x flags %v", p.Has, p.Flags.Names())
	}
	if FieldByName("infiniband.smplid.smpdata").Present(&p) || !FieldByName("infiniband.mad.data").Present(&p) {
		t.Error("SA MAD: wrong fields present")
	}
	if got := cmFieldString(FieldByName("infiniband.mad.mgmtclass"), &p); got != "0x03" {
		t.Errorf("mgmtclass %q", got)
	}
	pk := gopacket.NewPacket(data, LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	if pk.Layer(LayerTypeCM) != nil || pk.Layer(LayerTypeSA) == nil {
		t.Errorf("layers %v", pk.Layers())
	}
}

// TestMADDoesNotMalloc: decoding a CM frame through Decode allocates
// nothing, for every CM attribute in the captures.
func TestMADDoesNotMalloc(t *testing.T) {
	var n int
	for _, file := range cmCaptures(t) {
		for i, fr := range cmReadPcap(t, file) {
			var p Packet
			p.Frame.Len = fr.wireLen
			Decode(&p, fr.data, fr.linkType)
			if p.Has&HdrCM == 0 {
				continue
			}
			n++
			allocs := testing.AllocsPerRun(100, func() { Decode(&p, fr.data, fr.linkType) })
			if allocs != 0 {
				t.Errorf("%s frame %d (%s): %v allocations per Decode", file, i+1, CMAttrString(p.CM.AttributeID), allocs)
			}
			if p.Has&HdrCM == 0 || p.Flags != 0 {
				t.Errorf("%s frame %d: Has %#x flags %v", file, i+1, p.Has, p.Flags.Names())
			}
		}
	}
	if n == 0 {
		t.Fatal("no CM frame")
	}
}

func BenchmarkDecodeCM(b *testing.B) {
	fr := cmReadPcap(b, cmCapture(b, "cm_rping.pcap"))[0]
	var p Packet
	b.ReportAllocs()
	b.SetBytes(int64(len(fr.data)))
	for i := 0; i < b.N; i++ {
		Decode(&p, fr.data, fr.linkType)
	}
	if p.Has&HdrCM == 0 {
		b.Fatal("not a CM frame")
	}
}

// FuzzDecodeMAD feeds bytes to the MAD decoders (flat and gopacket): they
// must not panic, every MAD/CM field must format, and serializing a whole
// MAD and decoding it again must give the same fields.
func FuzzDecodeMAD(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x07, 0x02, 0x03})
	hdr := make([]byte, MADLen)
	hdr[0], hdr[1], hdr[2], hdr[3] = 1, MgmtClassCM, 2, MADMethodSend
	for _, a := range []uint16{CMAttrREQ, CMAttrREJ, CMAttrSIDRREP, CMAttrLAP} {
		binary.BigEndian.PutUint16(hdr[16:], a)
		f.Add(append([]byte{}, hdr...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Packet
		p.Has = HdrBTH
		p.decodeMAD(data)
		if (p.Flags&FlagTruncated != 0) != (len(data) < MADLen) {
			t.Fatalf("len %d: flags %v", len(data), p.Flags.Names())
		}
		var out []byte
		for _, fl := range Fields() {
			if isMADField(fl.Abbrev) {
				for _, v := range fl.Values(&p, nil) {
					out = fl.AppendValue(out[:0], v)
					out = fl.AppendDisplay(out[:0], v)
				}
				_ = fl.Span(&p)
			}
		}
		gopacket.NewPacket(data, LayerTypeMAD, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		var m MAD
		c := CM{Link: &m}
		parser := gopacket.NewDecodingLayerParser(LayerTypeMAD, &m, &c)
		parser.IgnoreUnsupported = true
		var decoded []gopacket.LayerType
		_ = parser.DecodeLayers(data, &decoded)
		if len(data) < MADLen {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		ls := []gopacket.SerializableLayer{&p.MAD}
		if p.Has&HdrCM != 0 {
			ls = append(ls, &p.CM)
		} else {
			ls = append(ls, gopacket.Payload(p.MAD.Payload[:MADDataLen]))
		}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
			t.Fatal(err)
		}
		var q Packet
		q.decodeMAD(buf.Bytes())
		if q.Has != p.Has&^HdrBTH || q.Flags != 0 {
			t.Fatalf("again: Has %#x flags %v, first Has %#x", q.Has, q.Flags.Names(), p.Has)
		}
		pm, qm := p.MAD, q.MAD
		pm.Contents, pm.Payload, pm.mad, qm.Contents, qm.Payload, qm.mad = nil, nil, nil, nil, nil, nil
		pc, qc := p.CM, q.CM
		pc.Contents, pc.Payload, qc.Contents, qc.Payload = nil, nil, nil, nil
		if !reflect.DeepEqual(pm, qm) || !reflect.DeepEqual(pc, qc) {
			t.Fatalf("decode(serialize(decode(x))) != decode(x)\n got %+v %+v\nwant %+v %+v", qm, qc, pm, pc)
		}
	})
}
