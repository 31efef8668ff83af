package decode_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// madFrames are the synthetic captures' management datagrams: SMPs (LID
// routed and directed route, traps), PMA and the other classes.
func madFrames(t testing.TB) []testcap.Frame {
	t.Helper()
	var out []testcap.Frame
	for _, f := range []string{"ib_smp.pcap", "ib_smp_dr_traps.pcap", "erf_ib_mad.pcap", "ib_smp_ext.pcap"} {
		out = append(out, testcap.ReadPcap(t, "../testdata/synth/"+f)...)
	}
	return out
}

// fieldValues renders every present field of p whose name starts with one
// of prefixes, as "name=value" lines.
func fieldValues(p *decode.Packet, prefixes ...string) []string {
	var out []string
	var vals []decode.Value
	for _, f := range decode.Fields() {
		ok := false
		for _, pre := range prefixes {
			ok = ok || strings.HasPrefix(f.Abbrev, pre)
		}
		if !ok {
			continue
		}
		vals = f.Values(p, vals[:0])
		for _, v := range vals {
			out = append(out, f.Abbrev+"="+string(f.AppendValue(nil, v)))
		}
	}
	return out
}

var smpPrefixes = []string{
	"infiniband.smp", "infiniband.nodeinfo", "infiniband.nodedescription", "infiniband.switchinfo", "infiniband.portinfo",
	"infiniband.p_keytable", "infiniband.sltovl", "infiniband.vlarb", "infiniband.linearf", "infiniband.randomf",
	"infiniband.multicastf", "infiniband.sminfo", "infiniband.vendordiag", "infiniband.ledinfo", "infiniband.notice",
	"infiniband.trap", "infiniband.classportinfo", "infiniband.portcounters", "rocetap.portcounters",
	"rocetap.portinfo", "rocetap.trap",
}

// TestSMPTruncation cuts every MAD frame at every byte: decoding never
// fails, and every field the cut frame shows has the value the whole
// frame gives it (a truncated packet decodes as far as it goes, and no
// further).
func TestSMPTruncation(t *testing.T) {
	for _, fr := range madFrames(t) {
		link := decode.LinkType(fr.LinkType)
		var whole decode.Packet
		decode.Decode(&whole, fr.Data, link)
		if whole.Has&decode.HdrMAD == 0 {
			t.Fatalf("%s frame %d: no MAD", fr.File, fr.Number)
		}
		all := map[string]bool{}
		for _, s := range fieldValues(&whole, smpPrefixes...) {
			all[s] = true
		}
		prev := 0
		for n := 0; n < len(fr.Data); n++ {
			var p decode.Packet
			p.Frame.Len = len(fr.Data)
			decode.Decode(&p, fr.Data[:n], link)
			got := fieldValues(&p, smpPrefixes...)
			for _, s := range got {
				name := s[:strings.IndexByte(s, '=')]
				if !all[s] && name != "infiniband.smplid" && name != "infiniband.smpdirected" && name != "infiniband.smplid.smpdata" &&
					!strings.HasSuffix(name, "path") && name != "infiniband.nodedescription.nodestring" && !strings.HasSuffix(name, "data") && !strings.HasSuffix(name, "block") && !strings.HasSuffix(name, "details") {
					t.Errorf("%s frame %d cut at %d: %s, not in the whole frame", fr.File, fr.Number, n, s)
				}
			}
			if len(got) < prev-8 { // multi-valued fields may merge; never many fewer
				t.Errorf("%s frame %d cut at %d: %d field values, %d at one byte less", fr.File, fr.Number, n, len(got), prev)
			}
			prev = len(got)
		}
	}
}

// TestSMPLayer decodes the SMPs through gopacket and serializes them
// back: the layer gives the bytes it was built from.
func TestSMPLayer(t *testing.T) {
	n, dr := 0, 0
	for _, fr := range madFrames(t) {
		pk := gopacket.NewPacket(fr.Data, fr.LinkType, gopacket.Default)
		if fr.LinkType != layers.LinkType(decode.LinkTypeInfiniBand) {
			continue
		}
		m, _ := pk.Layer(decode.LayerTypeMAD).(*decode.MAD)
		s, _ := pk.Layer(decode.LayerTypeSMP).(*decode.SMP)
		if m == nil || s == nil {
			t.Fatalf("%s frame %d: layers %v", fr.File, fr.Number, pk.Layers())
		}
		n++
		if s.Directed != (m.MgmtClass == decode.MgmtClassSubnDirectRoute) {
			t.Errorf("%s frame %d: Directed %v for class 0x%02x", fr.File, fr.Number, s.Directed, m.MgmtClass)
		}
		if s.Directed {
			dr++
			if s.DrSLID == 0 || s.DrDLID != 0xFFFF || len(s.InitialPath) != decode.SMPPathLen || s.InitialPath[1] != 1 {
				t.Errorf("%s frame %d: DR fields %+v", fr.File, fr.Number, s)
			}
			if want := m.HopPointer() == 2; m.Direction() != want {
				t.Errorf("%s frame %d: D bit %v with hop pointer %d", fr.File, fr.Number, m.Direction(), m.HopPointer())
			}
		}
		buf := gopacket.NewSerializeBuffer()
		cp := *s
		if err := cp.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), s.Contents) {
			t.Errorf("%s frame %d: serialized SMP differs from the decoded bytes", fr.File, fr.Number)
		}
	}
	if n < 30 || dr < 8 {
		t.Errorf("%d SMPs, %d directed route: the captures changed", n, dr)
	}
}

// TestSMPLayerShort: an SMP cut short keeps what it has and says it is
// truncated.
func TestSMPLayerShort(t *testing.T) {
	data := make([]byte, decode.MADDataLen)
	for i := range data {
		data[i] = byte(i)
	}
	for n := 0; n <= len(data); n++ {
		s := decode.SMP{Directed: true}
		err := s.DecodeFromBytes(data[:n], gopacket.NilDecodeFeedback)
		if (err != nil) != (n < decode.MADDataLen) {
			t.Fatalf("cut at %d: err %v", n, err)
		}
		if want := max(0, min(n-decode.SMPDataOff, decode.SMPDataLen)); len(s.Data) != want {
			t.Fatalf("cut at %d: %d bytes of SMP data, want %d", n, len(s.Data), want)
		}
		if n >= 12 && s.DrDLID != 0x0a0b {
			t.Fatalf("cut at %d: DrDLID 0x%04x", n, s.DrDLID)
		}
	}
}

// TestMADFieldValues pins a few decoded values of the synthetic captures
// to what the generator wrote (internal/synth/mad.go); tshark agrees on
// every field (internal/conformance).
func TestMADFieldValues(t *testing.T) {
	want := map[string][]string{
		"ib_smp.pcap/1":          {"infiniband.nodedescription.nodestring=rocetap-synth switch SW-1"},
		"ib_smp.pcap/7":          {"infiniband.portinfo.lid=0x0003", "infiniband.portinfo.portstate=0x04", "infiniband.portinfo.linkwidthactive=0x02", "infiniband.portinfo.neighbormtu=0x05"},
		"ib_smp_dr_traps.pcap/1": {"infiniband.notice.trapnumberdeviceid=0x0080", "infiniband.trap.lidaddr=0x0002"},
		"erf_ib_mad.pcap/4":      {"infiniband.portcounters.symbolerrorcounter=12", "infiniband.portcounters.portxmitdata=123456789", "rocetap.portcounters.portxmitwait=42"},
		"erf_ib_mad.pcap/8":      {"infiniband.portcounters_ext.portxmitpkts=5000000000"},
	}
	seen := 0
	for _, fr := range madFrames(t) {
		key := fr.File + "/" + strconv.Itoa(fr.Number)
		w, ok := want[key]
		if !ok {
			continue
		}
		seen++
		var p decode.Packet
		decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
		got := strings.Join(fieldValues(&p, smpPrefixes...), "\n")
		for _, s := range w {
			if !strings.Contains(got+"\n", s+"\n") {
				t.Errorf("%s: no %s in\n%s", key, s, got)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d frames, want %d", seen, len(want))
	}
}

// FuzzDecodeSMP decodes arbitrary MAD data as an SMP (both routings)
// and arbitrary frames through the fast path, reading every SMP and PMA
// field: nothing panics.
func FuzzDecodeSMP(f *testing.F) {
	for _, fr := range madFrames(f) {
		f.Add(fr.Data, uint16(fr.LinkType))
	}
	f.Fuzz(func(t *testing.T, data []byte, link uint16) {
		for _, dir := range []bool{false, true} {
			s := decode.SMP{Directed: dir}
			_ = s.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
		}
		var p decode.Packet
		decode.Decode(&p, data, decode.LinkType(link))
		for _, v := range fieldValues(&p, smpPrefixes...) {
			_ = v
		}
	})
}
