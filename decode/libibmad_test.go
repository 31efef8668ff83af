package decode_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/internal/testcap"
)

// The PortInfo and Notice oracle: rdma-core's libibmad (Debian libibmad5),
// which OpenSM's tools and ibportstate decode SMPs with, reads the same
// attribute bytes through mad_decode_field (testdata/libibmad_oracle.py,
// via ctypes); every field both decode must agree. The attributes are
// those of the synthetic captures plus random ones, so every bit of every
// field is exercised.

const libibmadScript = "testdata/libibmad_oracle.py"

// libibmadPortInfo maps libibmad's PortInfo field names (mad_field_name)
// to rocetap's fields. CapabilityMask2 and the LinkSpeedExt fields are
// shown only when CapabilityMask announces them (see portinfo_ext.go).
var libibmadPortInfo = map[string]string{
	"Mkey": "infiniband.portinfo.m_key", "GidPrefix": "infiniband.portinfo.guid", "Lid": "infiniband.portinfo.lid",
	"SMLid": "infiniband.portinfo.mastersmlid", "CapMask": "infiniband.portinfo.capabilitymask",
	"DiagCode": "infiniband.portinfo.diagcode", "MkeyLeasePeriod": "infiniband.portinfo.m_keyleaseperiod",
	"LocalPort": "infiniband.portinfo.localportnum", "LinkWidthEnabled": "infiniband.portinfo.linkwidthenabled",
	"LinkWidthSupported": "infiniband.portinfo.linkwidthsupported", "LinkWidthActive": "infiniband.portinfo.linkwidthactive",
	"LinkSpeedSupported": "infiniband.portinfo.linkspeedsupported", "LinkState": "infiniband.portinfo.portstate",
	"PhysLinkState": "infiniband.portinfo.portphysicalstate", "LinkDownDefState": "infiniband.portinfo.linkdowndefaultstate",
	"ProtectBits": "infiniband.portinfo.m_keyprotectbits", "LMC": "infiniband.portinfo.lmc",
	"LinkSpeedActive": "infiniband.portinfo.linkspeedactive", "LinkSpeedEnabled": "infiniband.portinfo.linkspeedenabled",
	"NeighborMTU": "infiniband.portinfo.neighbormtu", "SMSL": "infiniband.portinfo.mastersmsl",
	"VLCap": "infiniband.portinfo.vlcap", "InitType": "infiniband.portinfo.inittype",
	"VLHighLimit": "infiniband.portinfo.vlhighlimit", "VLArbHighCap": "infiniband.portinfo.vlarbitrationhighcap",
	"VLArbLowCap": "infiniband.portinfo.vlarbitrationlowcap", "InitReply": "infiniband.portinfo.inittypereply",
	"MtuCap": "infiniband.portinfo.mtucap", "VLStallCount": "infiniband.portinfo.vlstallcount",
	"HoqLife": "infiniband.portinfo.hoqlife", "OperVLs": "infiniband.portinfo.operationalvls",
	"PartEnforceInb": "infiniband.portinfo.partitionenforcementinbound", "PartEnforceOutb": "infiniband.portinfo.partitionenforcementoutbound",
	"FilterRawInb": "infiniband.portinfo.filterrawinbound", "FilterRawOutb": "infiniband.portinfo.filterrawoutbound",
	"MkeyViolations": "infiniband.portinfo.m_keyviolations", "PkeyViolations": "infiniband.portinfo.p_keyviolations",
	"QkeyViolations": "infiniband.portinfo.q_keyviolations", "GuidCap": "infiniband.portinfo.guidcap",
	"ClientReregister":                "infiniband.portinfo.clientreregister",
	"McastPkeyTrapSuppressionEnabled": "rocetap.portinfo.multicastpkeytrapsuppressionenabled",
	"SubnetTimeout":                   "infiniband.portinfo.subnettimeout", "RespTimeVal": "infiniband.portinfo.resptimevalue",
	"LocalPhysErr": "infiniband.portinfo.localphyerrors", "OverrunErr": "infiniband.portinfo.overrunerrors",
	"MaxCreditHint": "infiniband.portinfo.maxcredithint", "RoundTrip": "infiniband.portinfo.linkroundtriplatency",
	"CapabilityMask2":       "rocetap.portinfo.capabilitymask2",
	"LinkSpeedExtActive":    "rocetap.portinfo.linkspeedextactive",
	"LinkSpeedExtSupported": "rocetap.portinfo.linkspeedextsupported",
	"LinkSpeedExtEnabled":   "rocetap.portinfo.linkspeedextenabled",
}

// libibmadNotice maps libibmad's Notice field names to rocetap's; the
// data-details fields libibmad names (NoticeDataLID at byte 10,
// NoticeDataTrap144LID and NoticeDataTrap144CapMask) are checked against
// the trap numbers they belong to in noticeWant.
var libibmadNotice = map[string]string{
	"NoticeIsGeneric": "infiniband.notice.isgeneric", "NoticeType": "infiniband.notice.type",
	"NoticeProducerType": "infiniband.notice.producertypevendorid", "NoticeTrapNumber": "infiniband.notice.trapnumberdeviceid",
	"NoticeIssuerLID": "infiniband.notice.issuerlid", "NoticeToggle": "infiniband.notice.noticetoggle",
	"NoticeCount": "infiniband.notice.noticecount", "NoticeDataDetails": "infiniband.notice.datadetails",
}

// requireLibibmad skips the test (fails it with ROCETAP_REQUIRE_ORACLES=1)
// when libibmad cannot be loaded.
func requireLibibmad(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(systemPython); err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("%s not found (%v)", systemPython, err), "install it with `apt-get install -y python3`")
	}
	if out, err := exec.Command(systemPython, "-c", "import ctypes; ctypes.CDLL('libibmad.so.5')").CombinedOutput(); err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("libibmad.so.5 is not loadable by %s (%v: %s)", systemPython, err, bytes.TrimSpace(out)),
			"install it with `apt-get install -y libibmad5`")
	}
}

// oracleAttr is one SMP attribute sent to libibmad.
type oracleAttr struct {
	name   string
	attrID uint16 // decode.SMPAttrPortInfo or decode.SMPAttrNotice
	data   []byte // 64 bytes
}

// libibmadAttrs: the PortInfo and Notice attributes of the synthetic
// SMP captures, and random ones (generic notices with the trap numbers
// whose details libibmad names among them).
func libibmadAttrs(t *testing.T) []oracleAttr {
	var out []oracleAttr
	attr := decode.FieldByName("rocetap.smp.attribute")
	for _, fr := range madFrames(t) {
		var p decode.Packet
		decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
		if p.Has&decode.HdrMAD == 0 || !decode.IsSMP(p.MAD.MgmtClass) {
			continue
		}
		id := p.MAD.AttributeID
		vs := attr.Values(&p, nil)
		if (id != decode.SMPAttrPortInfo && id != decode.SMPAttrNotice) || len(vs) != 1 || len(vs[0].B) != decode.SMPDataLen {
			continue
		}
		out = append(out, oracleAttr{fmt.Sprintf("%s frame %d", fr.File, fr.Number), id, bytes.Clone(vs[0].B)})
	}
	r := rand.New(rand.NewPCG(19, 2026))
	traps := []uint16{64, 128, 129, 144, 145, 256, 257, 259}
	for i := 0; i < 400; i++ {
		a := make([]byte, decode.SMPDataLen)
		for j := range a {
			a[j] = byte(r.Uint32())
		}
		if i%2 == 0 {
			out = append(out, oracleAttr{fmt.Sprintf("random PortInfo %d", i), decode.SMPAttrPortInfo, a})
			continue
		}
		if i%6 != 1 { // a third of the random notices stay random (vendor ones among them)
			a[0] |= 0x80
			tr := traps[r.IntN(len(traps))]
			a[4], a[5] = byte(tr>>8), byte(tr)
		}
		out = append(out, oracleAttr{fmt.Sprintf("random Notice %d", i), decode.SMPAttrNotice, a})
	}
	return out
}

// runLibibmad decodes the attributes with libibmad: one map of field name
// to value (decimal, or hex for the data details) per attribute.
func runLibibmad(t *testing.T, attrs []oracleAttr) []map[string]string {
	var in bytes.Buffer
	for _, a := range attrs {
		kind := "portinfo"
		if a.attrID == decode.SMPAttrNotice {
			kind = "notice"
		}
		fmt.Fprintf(&in, "%s %s\n", kind, hex.EncodeToString(a.data))
	}
	cmd := exec.Command(systemPython, libibmadScript)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", libibmadScript, err, stderr.String())
	}
	var res []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := map[string]string{}
		for _, kv := range strings.Fields(sc.Text()) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		res = append(res, m)
	}
	if len(res) != len(attrs) {
		t.Fatalf("%s answered %d lines for %d attributes", libibmadScript, len(res), len(attrs))
	}
	return res
}

// rocetapAttrValues decodes the attribute as rocetap shows it in an SMP
// (a LID-routed SubnGetResp(PortInfo), a SubnTrap(Notice)): every
// portinfo, notice and trap field present, integers in decimal and bytes
// in hex, as runLibibmad gives them.
func rocetapAttrValues(t *testing.T, a oracleAttr) map[string]string {
	method := decode.MADMethodGetResp
	if a.attrID == decode.SMPAttrNotice {
		method = decode.MADMethodTrap
	}
	fr := synth.MADFrame{SLID: 2, DLID: 1, SMP: &decode.SMP{Data: a.data},
		MAD: decode.MAD{BaseVersion: 1, MgmtClass: decode.MgmtClassSubnLIDRouted, ClassVersion: 1, R: method&0x80 != 0, Method: method & 0x7F,
			TransactionID: 0x19, AttributeID: a.attrID}}
	data, link, _, err := fr.Build()
	if err != nil {
		t.Fatal(err)
	}
	var p decode.Packet
	decode.Decode(&p, data, link)
	got := map[string]string{}
	for _, f := range decode.Fields() {
		if !strings.Contains(f.Abbrev, ".portinfo.") && !strings.Contains(f.Abbrev, ".notice.") && !strings.Contains(f.Abbrev, ".trap.") {
			continue
		}
		vs := f.Values(&p, nil)
		switch {
		case len(vs) == 0:
		case len(vs) > 1:
			t.Errorf("%s: %s occurs %d times", a.name, f.Abbrev, len(vs))
		case f.Type.IsInteger():
			got[f.Abbrev] = strconv.FormatUint(vs[0].U, 10)
		default:
			got[f.Abbrev] = hex.EncodeToString(vs[0].B)
		}
	}
	return got
}

// noticeWant is what libibmad says rocetap must show for a Notice: the
// header fields always; the data-details fields libibmad names on the
// generic traps they belong to (LIDADDR of trap 128 at byte 10, DataValid
// of trap 259 there too; trap 144's LIDADDR and CAPABILITYMASK).
func noticeWant(lib map[string]string) map[string]string {
	want := map[string]string{}
	for name, abbrev := range libibmadNotice {
		want[abbrev] = lib[name]
	}
	if lib["NoticeIsGeneric"] != "1" {
		return want
	}
	switch lib["NoticeTrapNumber"] {
	case "128":
		want["infiniband.trap.lidaddr"] = lib["NoticeDataLID"]
	case "259":
		want["rocetap.trap.datavalid"] = lib["NoticeDataLID"]
	case "144":
		want["infiniband.trap.lidaddr"] = lib["NoticeDataTrap144LID"]
		want["infiniband.trap.capabilitymask"] = lib["NoticeDataTrap144CapMask"]
	}
	return want
}

// portInfoWant is what libibmad says rocetap must show for a PortInfo:
// every field libibmad decodes (CapabilityMask2 and LinkSpeedExt* only
// when CapabilityMask announces them), and each CapabilityMask bit field
// as libibmad's CapMask has that bit.
func portInfoWant(t *testing.T, lib map[string]string) (want map[string]string, absent []string) {
	cm, err := strconv.ParseUint(lib["CapMask"], 10, 32)
	if err != nil {
		t.Fatalf("libibmad CapMask %q", lib["CapMask"])
	}
	want = map[string]string{}
	for name, abbrev := range libibmadPortInfo {
		switch {
		case name == "CapabilityMask2" && cm&decode.PortCapCapabilityMask2 == 0,
			strings.HasPrefix(name, "LinkSpeedExt") && cm&decode.PortCapExtendedSpeeds == 0:
			absent = append(absent, abbrev)
		default:
			want[abbrev] = lib[name]
		}
	}
	for _, f := range decode.Fields() {
		if strings.Contains(f.Abbrev, ".portinfo.capabilitymask.") {
			want[f.Abbrev] = strconv.FormatUint(cm&f.Bitmask>>bits.TrailingZeros64(f.Bitmask), 10)
		}
	}
	return want, absent
}

// TestPortInfoNoticeMatchLibibmad compares rocetap's PortInfo and Notice
// fields with libibmad's, field by field.
func TestPortInfoNoticeMatchLibibmad(t *testing.T) {
	requireLibibmad(t)
	attrs := libibmadAttrs(t)
	libs := runLibibmad(t, attrs)
	compared, ext, cm2, fromCaptures := 0, 0, 0, 0
	for i, a := range attrs {
		got := rocetapAttrValues(t, a)
		var want map[string]string
		var absent []string
		if a.attrID == decode.SMPAttrPortInfo {
			want, absent = portInfoWant(t, libs[i])
		} else {
			want = noticeWant(libs[i])
		}
		for abbrev, w := range want {
			compared++
			if got[abbrev] != w {
				t.Errorf("%s: %s: libibmad %q, rocetap %q", a.name, abbrev, w, got[abbrev])
			}
		}
		for _, abbrev := range absent {
			if v, ok := got[abbrev]; ok {
				t.Errorf("%s: %s = %s shown, but CapabilityMask 0x%s does not announce it", a.name, abbrev, v, libs[i]["CapMask"])
			}
		}
		_, hasExt := want["rocetap.portinfo.linkspeedextactive"]
		_, hasCM2 := want["rocetap.portinfo.capabilitymask2"]
		ext += int(b2i(hasExt))
		cm2 += int(b2i(hasCM2))
		if !strings.HasPrefix(a.name, "random") {
			fromCaptures++
		}
	}
	t.Logf("%d attributes (%d from the synthetic captures), %d fields compared with libibmad; %d with extended speeds, %d with CapabilityMask2",
		len(attrs), fromCaptures, compared, ext, cm2)
	if compared < 15000 || ext < 20 || cm2 < 20 || fromCaptures < 20 {
		t.Errorf("too little compared: the inputs changed")
	}
}

func b2i(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
