package decode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rocetap/rocetap/internal/testcap"
)

// cmCaptureDir holds the real Soft-RoCE captures (testdata/rxe: copies of
// ../shared/captures), relative to this package.
const cmCaptureDir = "../testdata/rxe"

// cmFrame is one record of a capture file.
type cmFrame struct {
	data     []byte
	wireLen  int
	linkType LinkType
}

// cmCaptures returns the cm_*.pcap files.
func cmCaptures(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cmCaptureDir, "cm_*.pcap"))
	if len(files) < 5 {
		t.Fatalf("%d cm_*.pcap in %s, want the 5 rdma_cm captures", len(files), cmCaptureDir)
	}
	sort.Strings(files)
	return files
}

func cmCapture(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(cmCaptureDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// cmReadPcap reads every record of a pcap file with pcapgo.
func cmReadPcap(t testing.TB, path string) []cmFrame {
	t.Helper()
	var out []cmFrame
	for _, fr := range testcap.ReadPcap(t, path) {
		out = append(out, cmFrame{data: fr.Data, wireLen: fr.Len, linkType: fr.LinkType})
	}
	return out
}

func cmDecode(fr cmFrame, n int) *Packet {
	p := &Packet{}
	p.Frame.Number, p.Frame.Len = n, fr.wireLen
	Decode(p, fr.data, fr.linkType)
	return p
}

// cmFieldString formats a field's occurrences as tshark -T fields -E
// occurrence=a does: joined with ",".
func cmFieldString(f *Field, p *Packet) string {
	var buf []byte
	for i, v := range f.Values(p, nil) {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = f.AppendValue(buf, v)
	}
	return string(buf)
}

// tsharkField is one line of tshark -G fields.
type tsharkField struct {
	name, typ, base, mask string
}

var (
	tsharkFieldsOnce sync.Once
	tsharkFieldsMap  map[string]tsharkField
	tsharkFieldsErr  error
)

// cmTsharkFields returns tshark's field registry (tshark -G fields).
func cmTsharkFields(t testing.TB, tshark string) map[string]tsharkField {
	t.Helper()
	tsharkFieldsOnce.Do(func() {
		out, err := exec.Command(tshark, "-G", "fields").Output()
		if err != nil {
			tsharkFieldsErr = fmt.Errorf("tshark -G fields: %w", err)
			return
		}
		m := map[string]tsharkField{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c := strings.Split(sc.Text(), "\t")
			if len(c) < 7 || c[0] != "F" {
				continue
			}
			m[c[2]] = tsharkField{name: c[1], typ: c[3], base: c[5], mask: c[6]}
		}
		tsharkFieldsMap = m
	})
	if tsharkFieldsErr != nil {
		t.Fatal(tsharkFieldsErr)
	}
	return tsharkFieldsMap
}

// isMADField reports whether a field belongs to the MAD/CM decoder.
func isMADField(abbrev string) bool {
	return abbrev == "infiniband.mad" || strings.HasPrefix(abbrev, "infiniband.mad.") ||
		strings.HasPrefix(abbrev, "infiniband.cm.") || abbrev == "infiniband.smplid.smpdata" ||
		strings.HasPrefix(abbrev, "rocetap.mad.") || strings.HasPrefix(abbrev, "rocetap.cm.")
}

// cmOracleFields returns the MAD/CM fields rocetap registers that tshark
// knows, in registration order.
func cmOracleFields(t testing.TB, known map[string]tsharkField) []*Field {
	var fs []*Field
	for _, f := range Fields() {
		if _, ok := known[f.Abbrev]; ok && isMADField(f.Abbrev) {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		t.Fatal("no MAD/CM field is known to tshark")
	}
	return fs
}

// Heuristic payload dissectors that throw on rxe's short SEND payloads
// (see the captures' tshark_summary.txt); they never touch MAD fields.
var cmTsharkHeuristicsOff = []string{"--disable-heuristic", "rpcrdma_infiniband", "--disable-heuristic", "mellanox_eoib"}

// cmRunTshark runs tshark -T fields over file for the given fields and
// returns one row per frame (frame.number first).
func cmRunTshark(t testing.TB, tshark, file string, fields []*Field) [][]string {
	t.Helper()
	args := []string{"-r", file, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-e", "frame.number"}
	for _, f := range fields {
		args = append(args, "-e", f.Abbrev)
	}
	run := func(extra []string) ([]byte, error) {
		cmd := exec.Command(tshark, append(append([]string{}, extra...), args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%v: %s", err, stderr.String())
		}
		return out, nil
	}
	out, err := run(cmTsharkHeuristicsOff)
	if err != nil && strings.Contains(err.Error(), "can't disable") {
		out, err = run(nil) // an older or newer tshark without these heuristics
	}
	if err != nil {
		t.Fatalf("tshark on %s: %v", file, err)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows
}

// TestCMConformance compares, frame by frame and field by field, every
// MAD and CM field rocetap shares with Wireshark against tshark's -T fields
// output on the cm_*.pcap captures.
func TestCMConformance(t *testing.T) {
	files := cmCaptures(t)
	tshark := testcap.Tshark(t)
	fields := cmOracleFields(t, cmTsharkFields(t, tshark))
	var compared, present, mismatches int
	for _, file := range files {
		frames := cmReadPcap(t, file)
		rows := cmRunTshark(t, tshark, file, fields)
		if len(rows) != len(frames) {
			t.Errorf("%s: tshark printed %d rows for %d frames", filepath.Base(file), len(rows), len(frames))
			continue
		}
		for i, fr := range frames {
			p := cmDecode(fr, i+1)
			row := rows[i]
			if len(row) != len(fields)+1 || row[0] != fmt.Sprint(i+1) {
				t.Errorf("%s frame %d: bad tshark row %q", filepath.Base(file), i+1, row)
				continue
			}
			for j, f := range fields {
				want, got := row[j+1], cmFieldString(f, p)
				compared++
				if want != "" {
					present++
				}
				if want != got {
					mismatches++
					t.Errorf("%s frame %d %s:\n want %q\n  got %q", filepath.Base(file), i+1, f.Abbrev, want, got)
				}
			}
		}
	}
	t.Logf("compared %d frame×field values (%d fields; %d present in tshark's output); %d mismatches", compared, len(fields), present, mismatches)
}

// TestCMFieldRegistry checks that every MAD/CM field of Wireshark is
// registered, with Wireshark's name, type, base and bitmask, and that
// rocetap's extras use the rocetap.* prefix.
func TestCMFieldRegistry(t *testing.T) {
	tshark := testcap.Tshark(t)
	known := cmTsharkFields(t, tshark)
	for abbrev, tf := range known {
		if !strings.HasPrefix(abbrev, "infiniband.mad") && !strings.HasPrefix(abbrev, "infiniband.cm.") {
			continue
		}
		if FieldByName(abbrev) == nil {
			t.Errorf("tshark field %s (%s) is not registered", abbrev, tf.name)
		}
	}
	for _, f := range Fields() {
		if !isMADField(f.Abbrev) {
			continue
		}
		tf, ok := known[f.Abbrev]
		if !ok {
			if !strings.HasPrefix(f.Abbrev, "rocetap.") {
				t.Errorf("%s: not a Wireshark field, so it must be named rocetap.*", f.Abbrev)
			}
			continue
		}
		if f.Name != tf.name || f.Type.String() != tf.typ || f.Base.String() != tf.base || fmt.Sprintf("0x%x", f.Bitmask) != tf.mask {
			t.Errorf("%s: rocetap %q %s %q %#x, tshark %q %s %q %s", f.Abbrev, f.Name, f.Type, f.Base, f.Bitmask, tf.name, tf.typ, tf.base, tf.mask)
		}
	}
}

// cmFindFrame returns the first frame of a capture whose CM attribute is
// attr, and its 1-based number.
func cmFindFrame(t *testing.T, name string, attr uint16) (*Packet, int) {
	t.Helper()
	for i, fr := range cmReadPcap(t, cmCapture(t, name)) {
		p := cmDecode(fr, i+1)
		if p.Has&HdrCM != 0 && p.CM.AttributeID == attr {
			return p, i + 1
		}
	}
	t.Fatalf("%s: no CM attribute %#04x", name, attr)
	return nil, 0
}

func TestCMKnownValues(t *testing.T) {
	t.Run("rping REQ", func(t *testing.T) {
		frames := cmReadPcap(t, cmCapture(t, "cm_rping.pcap"))
		p := cmDecode(frames[0], 1)
		if p.Has&(HdrMAD|HdrCM) != HdrMAD|HdrCM || p.CM.AttributeID != CMAttrREQ {
			t.Fatalf("frame 1: Has %#x attribute %#x, want a CM REQ", p.Has, p.CM.AttributeID)
		}
		if p.Flags != 0 {
			t.Errorf("frame 1: flags %v", p.Flags.Names())
		}
		c := &p.CM
		// The capture's own RC traffic: Linux's CM starts the passive
		// side's (10.77.0.2) requests at the REQ's Starting PSN and the
		// active side's at the REP's; each side sends to the QPN the other
		// put in its REQ or REP.
		rep, _ := cmFindFrame(t, "cm_rping.pcap", CMAttrREP)
		first := map[[4]byte]*Packet{}
		for i, fr := range frames[1:] {
			q := cmDecode(fr, i+2)
			if q.Has&HdrMAD != 0 || q.Has&HdrIPv4 == 0 || q.Has&HdrBTH == 0 {
				continue
			}
			if op := q.BTH.Opcode; op >= 0x0D && op <= 0x11 { // READ responses and ACKs
				continue
			}
			if first[q.IPv4.Src] == nil {
				first[q.IPv4.Src] = q
			}
		}
		active, passive := first[[4]byte{10, 77, 0, 1}], first[[4]byte{10, 77, 0, 2}]
		if active == nil || passive == nil {
			t.Fatal("no RC requests after the CM exchange")
		}
		if passive.BTH.PSN != c.StartingPSN || active.BTH.PSN != rep.CM.StartingPSN {
			t.Errorf("first request PSNs: passive %#x active %#x; REQ starting PSN %#x, REP %#x", passive.BTH.PSN, active.BTH.PSN, c.StartingPSN, rep.CM.StartingPSN)
		}
		if passive.BTH.DestQP != c.LocalQPN || active.BTH.DestQP != rep.CM.LocalQPN {
			t.Errorf("passive sends to QP %#x (REQ local QPN %#x), active to %#x (REP local QPN %#x)", passive.BTH.DestQP, c.LocalQPN, active.BTH.DestQP, rep.CM.LocalQPN)
		}
		if c.TransportServiceType != 0 || c.PathMTU != 3 || c.PKey != 0xffff || !c.IsIPCM() || c.ServiceID != 0x0000000001061c06 {
			t.Errorf("REQ TST %d MTU %d PKey %#x service %#x", c.TransportServiceType, c.PathMTU, c.PKey, c.ServiceID)
		}
		if c.Primary.FlowLabel != 0xab1fa || c.Primary.HopLimit != 0x40 || c.Primary.LocalACKTimeout != 0x13 {
			t.Errorf("REQ primary path flow label %#x hop limit %#x ack timeout %#x", c.Primary.FlowLabel, c.Primary.HopLimit, c.Primary.LocalACKTimeout)
		}
		if len(c.PrivateData) != 92 {
			t.Errorf("REQ private data %d bytes, want 92", len(c.PrivateData))
		}
		if rep.CM.RemoteCommID != c.LocalCommID || rep.MAD.TransactionID != p.MAD.TransactionID {
			t.Errorf("REP remote comm ID %#x TID %#x, REQ local comm ID %#x TID %#x", rep.CM.RemoteCommID, rep.MAD.TransactionID, c.LocalCommID, p.MAD.TransactionID)
		}
	})
	t.Run("reject reason 8", func(t *testing.T) {
		p, n := cmFindFrame(t, "cm_reject.pcap", CMAttrREJ)
		if p.CM.Reason != 8 || CMRejReasonString(p.CM.Reason) != "Invalid Service ID" {
			t.Errorf("frame %d: REJ reason %d (%s), want 8", n, p.CM.Reason, CMRejReasonString(p.CM.Reason))
		}
		if got := cmFieldString(FieldByName("infiniband.cm.rej.reason"), p); got != "0x0008" {
			t.Errorf("infiniband.cm.rej.reason = %q", got)
		}
		if p.CM.MessageRejected != 0 || len(p.CM.AddInfo) != 72 || len(p.CM.PrivateData) != 148 {
			t.Errorf("REJ message rejected %d, ARI %d bytes, private %d bytes", p.CM.MessageRejected, len(p.CM.AddInfo), len(p.CM.PrivateData))
		}
	})
	t.Run("udaddy SIDR", func(t *testing.T) {
		req, _ := cmFindFrame(t, "cm_udaddy.pcap", CMAttrSIDRREQ)
		rep, _ := cmFindFrame(t, "cm_udaddy.pcap", CMAttrSIDRREP)
		if req.CM.RequestID != rep.CM.RequestID || req.CM.ServiceID != rep.CM.ServiceID || req.CM.ServiceID != 0x0000000001111c06 {
			t.Errorf("SIDR_REQ ID %#x service %#x, SIDR_REP ID %#x service %#x", req.CM.RequestID, req.CM.ServiceID, rep.CM.RequestID, rep.CM.ServiceID)
		}
		if req.CM.PKey != 0xffff || rep.CM.Status != 0 || rep.CM.QPN != 0x29 || rep.CM.QKey != 0x01234567 {
			t.Errorf("SIDR_REQ PKey %#x, SIDR_REP status %d QPN %#x Q_Key %#x", req.CM.PKey, rep.CM.Status, rep.CM.QPN, rep.CM.QKey)
		}
		// The UD data that follows goes to the QPN and Q_Key the SIDR_REP gave.
		var seen int
		for i, fr := range cmReadPcap(t, cmCapture(t, "cm_udaddy.pcap")) {
			p := cmDecode(fr, i+1)
			if p.Has&HdrMAD != 0 || p.Has&HdrDETH == 0 || p.IPv4.Src != [4]byte{10, 77, 0, 1} {
				continue
			}
			seen++
			if p.BTH.DestQP != rep.CM.QPN || p.DETH.QKey != rep.CM.QKey {
				t.Errorf("frame %d: UD to QP %#x Q_Key %#x, SIDR_REP says %#x %#x", i+1, p.BTH.DestQP, p.DETH.QKey, rep.CM.QPN, rep.CM.QKey)
			}
		}
		if seen == 0 {
			t.Error("no UD data from the client")
		}
		for abbrev, want := range map[string]string{
			"rocetap.cm.sidr_req.serviceid": "0x0000000001111c06",
			"rocetap.cm.sidr_rep.qpn":       "0x000029",
			"rocetap.cm.sidr_rep.qkey":      "0x01234567",
			"rocetap.cm.attribute":          "ServiceIDResReqResp",
		} {
			p := rep
			if strings.HasPrefix(abbrev, "rocetap.cm.sidr_req") {
				p = req
			}
			if got := cmFieldString(FieldByName(abbrev), p); got != want {
				t.Errorf("%s = %q, want %q", abbrev, got, want)
			}
		}
	})
}

// cmMADLayers decodes the MAD of a frame with gopacket and returns its MAD
// and CM layers.
func cmMADLayers(t *testing.T, data []byte) (*MAD, *CM) {
	t.Helper()
	pk := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
	if el := pk.ErrorLayer(); el != nil {
		t.Fatalf("gopacket: %v", el.Error())
	}
	m, _ := pk.Layer(LayerTypeMAD).(*MAD)
	c, _ := pk.Layer(LayerTypeCM).(*CM)
	return m, c
}

// TestCMRoundTrip serializes every CM MAD of the captures from its
// decoded layers and compares with the bytes on the wire.
func TestCMRoundTrip(t *testing.T) {
	var n int
	for _, file := range cmCaptures(t) {
		for i, fr := range cmReadPcap(t, file) {
			p := cmDecode(fr, i+1)
			if p.Has&HdrCM == 0 {
				continue
			}
			n++
			// The flat decoder and the gopacket layers agree.
			m, c := cmMADLayers(t, fr.data)
			if m == nil || c == nil {
				t.Fatalf("%s frame %d: gopacket found no MAD/CM layer", filepath.Base(file), i+1)
			}
			if !reflect.DeepEqual(*m, p.MAD) || !reflect.DeepEqual(*c, p.CM) {
				t.Errorf("%s frame %d: gopacket layers differ from the flat decode", filepath.Base(file), i+1)
			}
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &p.MAD, &p.CM); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), p.MAD.Bytes()) {
				t.Errorf("%s frame %d (%s): serialized MAD differs\n got %x\nwant %x", filepath.Base(file), i+1, CMAttrString(p.CM.AttributeID), buf.Bytes(), p.MAD.Bytes())
			}
		}
	}
	if n == 0 {
		t.Fatal("no CM MAD in the captures")
	}
}

// TestCMSerializeFields builds each attribute from fields and checks that
// decoding the bytes gives the fields back.
func TestCMSerializeFields(t *testing.T) {
	priv := bytes.Repeat([]byte{0xA5}, 300)
	info := bytes.Repeat([]byte{0x5A}, CMAddInfoLen)
	path := CMPath{LocalLID: 1, RemoteLID: 2, LocalGID: [16]byte{0xfe, 0x80, 15: 1}, RemoteGID: [16]byte{0xfe, 0x80, 15: 2},
		FlowLabel: 0xabcde, PacketRate: 0x2a, TrafficClass: 0x12, HopLimit: 0x40, SL: 5, SubnetLocal: true, LocalACKTimeout: 0x13}
	lapPath := path
	lapPath.Reserved0 = 0 // LAP keeps 4 reserved bits, zero here
	tests := []struct {
		name string
		cm   CM
	}{
		{"REQ", CM{AttributeID: CMAttrREQ, LocalCommID: 0x11223344, ServiceID: 0x0000000001061c06, LocalCAGUID: 0x0002c90300a1b2c3,
			LocalQKey: 0x80010000, LocalQPN: 0x123456, ResponderResources: 4, LocalEECN: 0x654321, InitiatorDepth: 3, RemoteEECN: 0x111111,
			RemoteCMResponseTimeout: 0x14, TransportServiceType: 1, EndToEndFlowControl: true, StartingPSN: 0xabcdef,
			LocalCMResponseTimeout: 0x15, RetryCount: 7, PKey: 0xffff, PathMTU: 5, RDCExists: true, RNRRetryCount: 6, MaxCMRetries: 15,
			SRQ: true, ExtendedTransportType: 1, Primary: path, Alternate: path, PrivateData: priv[:92]}},
		{"MRA", CM{AttributeID: CMAttrMRA, LocalCommID: 1, RemoteCommID: 2, MessageMRAed: 2, ServiceTimeout: 0x1f, PrivateData: priv[:222]}},
		{"REJ", CM{AttributeID: CMAttrREJ, LocalCommID: 1, RemoteCommID: 2, MessageRejected: 1, RejectInfoLength: 72, Reason: 28, AddInfo: info, PrivateData: priv[:148]}},
		{"REP", CM{AttributeID: CMAttrREP, LocalCommID: 1, RemoteCommID: 2, LocalQKey: 3, LocalQPN: 0x25, LocalEECN: 5, StartingPSN: 0xff395c,
			ResponderResources: 1, InitiatorDepth: 1, TargetACKDelay: 0xf, FailoverAccepted: 2, EndToEndFlowControl: true, RNRRetryCount: 7, SRQ: true,
			LocalCAGUID: 0x00000afffe4d0002, PrivateData: priv[:196]}},
		{"RTU", CM{AttributeID: CMAttrRTU, LocalCommID: 1, RemoteCommID: 2, PrivateData: priv[:224]}},
		{"DREQ", CM{AttributeID: CMAttrDREQ, LocalCommID: 1, RemoteCommID: 2, RemoteQPN: 0x25, PrivateData: priv[:220]}},
		{"DREP", CM{AttributeID: CMAttrDREP, LocalCommID: 1, RemoteCommID: 2, PrivateData: priv[:224]}},
		{"SIDR_REQ", CM{AttributeID: CMAttrSIDRREQ, RequestID: 9, PKey: 0x8001, ServiceID: 0x0000000001111c06, PrivateData: priv[:216]}},
		{"SIDR_REP", CM{AttributeID: CMAttrSIDRREP, RequestID: 9, Status: 4, AddInfoLength: 72, QPN: 0x29, ServiceID: 7, QKey: 0x01234567, AddInfo: info, PrivateData: priv[:136]}},
		{"LAP", CM{AttributeID: CMAttrLAP, LocalCommID: 1, RemoteCommID: 2, RemoteQPN: 0x25, RemoteCMResponseTimeout: 0x10, Alternate: lapPath, PrivateData: priv[:168]}},
		{"APR", CM{AttributeID: CMAttrAPR, LocalCommID: 1, RemoteCommID: 2, AddInfoLength: 8, Status: 5, AddInfo: info, PrivateData: priv[:148]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := gopacket.NewSerializeBuffer()
			if err := tt.cm.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(buf.Bytes()) != MADDataLen {
				t.Fatalf("serialized %d bytes, want %d", len(buf.Bytes()), MADDataLen)
			}
			got := CM{AttributeID: tt.cm.AttributeID}
			if err := got.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			got.Contents, got.Payload = nil, nil
			if !reflect.DeepEqual(got, tt.cm) {
				t.Errorf("decode(serialize(x)) != x\n got %+v\nwant %+v", got, tt.cm)
			}
		})
	}
}

// TestCMDecodingLayerParser decodes a CM MAD with a DecodingLayerParser,
// whose CM layer takes the attribute ID from the MAD through Link.
func TestCMDecodingLayerParser(t *testing.T) {
	p, _ := cmFindFrame(t, "cm_rping.pcap", CMAttrREP)
	var mad MAD
	cm := CM{Link: &mad}
	parser := gopacket.NewDecodingLayerParser(LayerTypeMAD, &mad, &cm)
	var decoded []gopacket.LayerType
	if err := parser.DecodeLayers(p.MAD.Bytes(), &decoded); err != nil {
		var unsupported gopacket.UnsupportedLayerType
		if !errors.As(err, &unsupported) {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(decoded, []gopacket.LayerType{LayerTypeMAD, LayerTypeCM}) {
		t.Fatalf("decoded %v", decoded)
	}
	cm.Link = nil
	if !reflect.DeepEqual(cm, p.CM) || cm.LocalQPN != 0x25 {
		t.Errorf("parser CM %+v\nflat CM %+v", cm, p.CM)
	}
}

// FuzzDecodeCM decodes bytes as a CM attribute: it must not panic, every
// CM field must format, and decode∘serialize must keep every field.
func FuzzDecodeCM(f *testing.F) {
	for _, a := range []uint16{CMAttrREQ, CMAttrMRA, CMAttrREJ, CMAttrREP, CMAttrRTU, CMAttrDREQ, CMAttrDREP, CMAttrSIDRREQ, CMAttrSIDRREP, CMAttrLAP, CMAttrAPR, CMAttrClassPortInfo} {
		f.Add(a, bytes.Repeat([]byte{0xFF}, MADDataLen))
		f.Add(a, []byte{0x01, 0x02})
	}
	f.Fuzz(func(t *testing.T, attr uint16, data []byte) {
		var p Packet
		p.Has = HdrMAD | HdrCM
		p.CM.AttributeID = attr
		err := p.CM.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
		if (err != nil) != (len(data) < MADDataLen) {
			t.Fatalf("len %d: err %v", len(data), err)
		}
		var out []byte
		for _, fl := range Fields() {
			if isMADField(fl.Abbrev) {
				for _, v := range fl.Values(&p, nil) {
					out = fl.AppendValue(out[:0], v)
				}
			}
		}
		if err != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := p.CM.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		again := CM{AttributeID: attr}
		if err := again.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		first := p.CM
		first.Contents, first.Payload, again.Contents, again.Payload = nil, nil, nil, nil
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("decode(serialize(decode(x))) != decode(x)\n got %+v\nwant %+v", again, first)
		}
	})
}

// cmSyntheticFrames builds frames around CM MADs with random attribute
// bytes (fixed seed), over RoCEv2 (IPv4 and IPv6) and RoCEv1, so the oracle
// also sees what the real captures lack: GIDs shown as IPv6, non-IP-CM
// service IDs, IP CM private data for IPv6, every reserved and flag bit set,
// the attributes Wireshark does not decode. The template is the first frame
// of cm_rping (Ethernet, IPv4, UDP, BTH, DETH, MAD, ICRC).
func cmSyntheticFrames(t *testing.T) [][]byte {
	t.Helper()
	tmpl := cmReadPcap(t, cmCapture(t, "cm_rping.pcap"))[0].data
	const ipOff, madOff = 14, 14 + 20 + 8 + BTHLen + DETHLen
	if len(tmpl) != madOff+MADLen+ICRCLen {
		t.Fatalf("cm_rping frame 1 is %d bytes, not a 256-byte MAD over RoCEv2/IPv4", len(tmpl))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	attrs := []uint16{CMAttrREQ, CMAttrREQ, CMAttrREQ, CMAttrREQ, CMAttrREP, CMAttrRTU, CMAttrREJ, CMAttrDREQ, CMAttrDREP, CMAttrMRA, CMAttrSIDRREQ, CMAttrSIDRREP, CMAttrLAP, CMAttrAPR, CMAttrClassPortInfo}
	var out [][]byte
	for i := 0; i < 120; i++ {
		mad := make([]byte, MADLen)
		for j := range mad {
			mad[j] = byte(rng.Uint32())
		}
		copy(mad, tmpl[madOff:madOff+4]) // base version, class 0x07, class version, method
		attr := attrs[i%len(attrs)]
		binary.BigEndian.PutUint16(mad[16:], attr)
		if attr == CMAttrREQ && i%2 == 0 {
			// An IP CM service ID, with IP version 4 or 6 in the private data.
			copy(mad[MADHeaderLen+8:], []byte{0, 0, 0, 0, 1})
			mad[MADHeaderLen+141] = mad[MADHeaderLen+141]&0x0F | []byte{0x40, 0x60}[i/len(attrs)%2]
		}
		eth := append([]byte{}, tmpl[:ipOff]...)
		ib := append(append([]byte{}, tmpl[ipOff+20+8:madOff]...), mad...) // BTH, DETH, MAD
		switch i % 3 {
		case 0: // RoCEv2 over IPv6
			ip := make([]byte, 40, 40+8+len(ib)+ICRCLen)
			ip[0] = 0x60
			binary.BigEndian.PutUint16(ip[4:], uint16(8+len(ib)+ICRCLen))
			ip[6], ip[7] = 17, 64
			copy(ip[8:], []byte{0xfd, 0x77, 15: 1})
			copy(ip[24:], []byte{0xfd, 0x77, 15: 2})
			ip = append(append(ip, tmpl[ipOff+20:ipOff+28]...), ib...)
			crc, _ := ICRCRoCEv2(ip)
			binary.BigEndian.PutUint16(eth[12:], 0x86DD)
			out = append(out, binary.LittleEndian.AppendUint32(append(eth, ip...), crc))
		case 1: // RoCEv2 over IPv4, as captured
			ip := append(append([]byte{}, tmpl[ipOff:ipOff+28]...), ib...)
			crc, _ := ICRCRoCEv2(ip)
			out = append(out, binary.LittleEndian.AppendUint32(append(eth, ip...), crc))
		case 2: // RoCEv1: GRH then BTH
			grh := make([]byte, GRHLen, GRHLen+len(ib)+ICRCLen)
			grh[0] = 0x60
			binary.BigEndian.PutUint16(grh[4:], uint16(len(ib)+ICRCLen))
			grh[6], grh[7] = GRHNextHeaderIBA, 64
			copy(grh[8:], []byte{10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 0, 15: 1})
			copy(grh[24:], []byte{0xfe, 0x80, 15: 2})
			grh = append(grh, ib...)
			crc, ok := ICRCGRH(nil, true, grh)
			if !ok {
				t.Fatal("RoCEv1 ICRC not computable")
			}
			binary.BigEndian.PutUint16(eth[12:], 0x8915)
			out = append(out, binary.LittleEndian.AppendUint32(append(eth, grh...), crc))
		}
	}
	return out
}

// TestCMConformanceSynthetic runs the oracle comparison on synthetic CM
// MADs with random contents.
func TestCMConformanceSynthetic(t *testing.T) {
	tshark := testcap.Tshark(t)
	fields := cmOracleFields(t, cmTsharkFields(t, tshark))
	frames := cmSyntheticFrames(t)
	file := filepath.Join(t.TempDir(), "cm_synthetic.pcap")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, d := range frames {
		if err := w.WritePacket(gopacket.CaptureInfo{CaptureLength: len(d), Length: len(d)}, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rows := cmRunTshark(t, tshark, file, fields)
	if len(rows) != len(frames) {
		t.Fatalf("tshark printed %d rows for %d frames", len(rows), len(frames))
	}
	var compared, present, mismatches int
	for i, d := range frames {
		p := cmDecode(cmFrame{data: d, wireLen: len(d), linkType: LinkTypeEthernet}, i+1)
		if p.Flags != 0 || p.Has&HdrCM == 0 {
			t.Fatalf("frame %d: flags %v, Has %#x", i+1, p.Flags.Names(), p.Has)
		}
		for j, fl := range fields {
			want, got := rows[i][j+1], cmFieldString(fl, p)
			compared++
			if want != "" {
				present++
			}
			if want != got {
				mismatches++
				t.Errorf("synthetic frame %d (%s, %s) %s:\n want %q\n  got %q", i+1, CMAttrString(p.CM.AttributeID), p.Encap, fl.Abbrev, want, got)
			}
		}
	}
	t.Logf("compared %d frame×field values (%d present in tshark's output); %d mismatches", compared, present, mismatches)
}

// TestCMLabel: the infiniband.smplid.smpdata item keeps Wireshark's field
// name ("SMP Data", what tshark -G fields lists) but reads, in the tree,
// "CM " and the attribute's name, or tshark's words for an unknown one.
func TestCMLabel(t *testing.T) {
	f := FieldByName("infiniband.smplid.smpdata")
	if f.Name != "SMP Data" {
		t.Errorf("field name %q, want Wireshark's %q", f.Name, "SMP Data")
	}
	var p Packet
	for attr, want := range map[uint16]string{
		CMAttrREQ: "CM ConnectRequest", CMAttrREP: "CM ConnectReply", CMAttrRTU: "CM ReadyToUse",
		CMAttrSIDRREQ: "CM ServiceIDResReq", 0x00FF: "CM (Unknown CM Attribute)",
	} {
		p.CM.AttributeID = attr
		if got := f.Label(&p); got != want {
			t.Errorf("attribute 0x%04x: label %q, want %q", attr, got, want)
		}
	}
	if got := FieldByName("infiniband.bth.opcode").Label(&p); got != "Opcode" {
		t.Errorf("a field without a label of its own: %q, want its name", got)
	}
}
