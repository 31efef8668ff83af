package conformance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/internal/testcap"
)

// madInfoCase is one MAD header whose Info tshark and rocetap both name.
type madInfoCase struct {
	class, method uint8
	attr          uint16
}

// madInfoCases: every method of every class rocetap names with one known
// and one unknown attribute, every attribute with one method, and one
// unknown method, for SMP (both routings), SA, PMA and the classes left as
// bytes.
func madInfoCases() []madInfoCase {
	methods := []uint8{0x01, 0x02, 0x03, 0x05, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x81, 0x86, 0x92, 0x93, 0x94, 0x95, 0x08}
	var cs []madInfoCase
	for _, class := range []uint8{0x01, 0x81, 0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0F, 0x10, 0x21, 0x2F, 0x30, 0x4F} {
		for _, m := range methods {
			cs = append(cs, madInfoCase{class, m, 0x0011}, madInfoCase{class, m, 0x00FE})
		}
		for a := uint16(0); a < 0x40; a++ {
			cs = append(cs, madInfoCase{class, 0x81, a})
		}
		cs = append(cs, madInfoCase{class, 0x01, 0x00F3})
	}
	return cs
}

// TestMADInfoNamesMatchTshark builds a MAD for each case, has tshark 4.0
// print its Info, and checks every name tshark prints against
// decode.AppendMADInfo: method and attribute names of SMP and SA, the
// attribute names of the PMA, the class of the others. Where tshark prints
// no name (an unknown method or attribute, which tshark 4.0 prints garbled,
// e.g. "SubnGet(bManagement Attribute!)") rocetap must print the number.
func TestMADInfoNamesMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	cases := madInfoCases()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkType(linkTypeInfiniBand)); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		frame := madFrame(t, c)
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(1000+i), 0), CaptureLength: len(frame), Length: len(frame)}
		if err := w.WritePacket(ci, frame); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "mads.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ts, append([]string{"-r", ibInERF(t, path), "-T", "fields", "-e", "_ws.col.Info"}, tsharkArgs...)...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	infos := lines(out)
	if len(infos) != len(cases) {
		t.Fatalf("tshark printed %d frames, want %d", len(infos), len(cases))
	}
	call := regexp.MustCompile(`^(\w+)\((\w+)\)$`)
	named := regexp.MustCompile(`^(\w+) \(([\w ]+)\)$`)
	checked := 0
	for i, c := range cases {
		tsInfo := regexp.MustCompile(`^UD Send Only QP=0x00000[01] `).ReplaceAllString(infos[i], "")
		tsInfo = strings.TrimSuffix(tsInfo, "[Malformed Packet]")
		ours := string(decode.AppendMADInfo(nil, c.class, c.method, c.attr))
		method, attr := decode.MADClassMethodString(c.class, c.method), decode.MADAttrString(c.class, c.attr)
		fail := func(why string) {
			t.Errorf("class 0x%02x method 0x%02x attr 0x%04x: tshark %q, rocetap %q: %s", c.class, c.method, c.attr, infos[i], ours, why)
		}
		checked++
		if m := call.FindStringSubmatch(tsInfo); m != nil {
			wantMethod := m[1]
			if wantMethod == "SubnTrapResp" {
				wantMethod = "SubnTrapRepress" // README: tshark 4.0 calls method 0x07 a response
			}
			if method != wantMethod || attr != m[2] {
				fail("method or attribute name differs")
			}
			continue
		}
		if m := named.FindStringSubmatch(tsInfo); m != nil {
			abbrev := decode.MgmtClassAbbrev(c.class)
			if abbrev == "CC" {
				abbrev = "APP" // tshark 4.0 does not name Congestion Control
			}
			if m[1] != abbrev {
				fail("class abbreviation differs")
			}
			if m[2] != "Unknown Attribute" && m[2] != attr {
				fail("attribute name differs")
			}
			if m[2] == "Unknown Attribute" && c.class == decode.MgmtClassPerf && (c.attr == 1 || c.attr == 0x12 || c.attr == 0x1D) {
				fail("tshark names PMA ClassPortInfo, PortCounters and PortCountersExtended only")
			}
			continue
		}
		// Garbled: an unknown method or attribute of SMP or SA.
		switch {
		case strings.HasPrefix(tsInfo, "(Unknown Sub"):
			if method != "" {
				fail("tshark knows no such method")
			}
		case strings.HasSuffix(tsInfo, "Attribute!)"):
			if attr != "" {
				fail("tshark knows no such attribute")
			}
		default:
			fail("unexpected tshark Info")
		}
	}
	t.Logf("%d MAD Info texts compared", checked)
}

// madFrame is a native InfiniBand UD SEND to QP0 (SMP) or QP1 carrying a
// 256-byte MAD with the case's header.
func madFrame(t *testing.T, c madInfoCase) []byte {
	t.Helper()
	mad := decode.MAD{BaseVersion: 1, MgmtClass: c.class, ClassVersion: 1, R: c.method&0x80 != 0, Method: c.method & 0x7F, TransactionID: 0x1234, AttributeID: c.attr}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &mad, gopacket.Payload(make([]byte, decode.MADDataLen))); err != nil {
		t.Fatal(err)
	}
	qp, vl, qkey := uint32(1), uint8(0), uint32(0x80010000)
	if decode.IsSMP(c.class) {
		qp, vl, qkey = 0, 15, 0
	}
	ib := synth.IB{LRH: decode.LRH{VL: vl, DLID: 2, SLID: 1}, T: synth.Transport{
		BTH:  decode.BTH{Opcode: decode.TransportUD.Opcode(decode.OpSendOnly), PKey: 0xFFFF, DestQP: qp, PSN: 1},
		DETH: decode.DETH{QKey: qkey, SrcQP: qp}, Payload: buf.Bytes()}}
	frame, _, _, err := ib.Build()
	if err != nil {
		t.Fatal(err)
	}
	return frame
}
