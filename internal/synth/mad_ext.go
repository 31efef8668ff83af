package synth

import (
	"fmt"

	"github.com/rocetap/rocetap/decode"
)

// portInfoExt is portInfo with bytes 51 and 60-63 (IBA 1.3 14.2.5.6) set
// and the CapabilityMask bits that announce them (capBits: IsExtended
// SpeedsSupported, IsCapabilityMask2Supported) added.
func portInfoExt(lid uint16, port uint8, capBits uint32, mcastSupp uint8, capMask2 uint16, extActive, extSupported, extEnabled uint8) be {
	pi := portInfo(lid, port)
	cm := uint32(0x0251086A) | capBits
	return pi.u32(20, cm).u8(51, pi[51]&^0x60|mcastSupp<<5).u16(60, capMask2).
		u8(62, extActive<<4|extSupported).u8(63, extEnabled)
}

// ibSMPExt: what IBA 1.3 added to PortInfo and the traps, on native
// InfiniBand (link type 247) between the nodes of ib_smp.pcap: PortInfo
// of FDR/EDR, HDR and NDR ports with their extended speeds and
// CapabilityMask2, a SubnSet asking for every supported extended speed,
// a port whose CapabilityMask does not announce bytes 60-63 (which hold
// leftovers, not to be shown), one announcing CapabilityMask2 only; trap
// 259 and a trap 144 that reports a CapabilityMask2 change.
func ibSMPExt() (File, error) {
	b := newFile("ib_smp_ext.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	tid := uint64(0x3000)
	both := uint32(decode.PortCapExtendedSpeeds | decode.PortCapCapabilityMask2)
	pis := []struct {
		note string
		lid  uint16
		pi   be
	}{
		{"HCA port 1: EDR active, FDR or EDR supported and enabled, CapabilityMask2 0x0012", 3,
			portInfoExt(3, 1, both, 1, 0x0012, 2, 0x3, 0x3)},
		{"switch port 5: HDR active, FDR/EDR/HDR, MulticastPKeyTrapSuppressionEnabled 2", 2,
			portInfoExt(2, 5, both, 2, 0x0410, 4, 0x7, 0x7)},
		{"switch port 6: NDR active, every extended speed", 2,
			portInfoExt(2, 6, both, 0, 0x0C7A, 8, 0xF, 0xF)},
		{"HCA port 2: no extended speeds, no CapabilityMask2 (bytes 60-63 hold 0xA5 leftovers, not shown)", 3,
			portInfoExt(3, 2, 0, 0, 0xA5A5, 0xA, 0x5, 0x05)},
		{"HCA port 2: CapabilityMask2 0x0002 only (extended speeds not announced)", 3,
			portInfoExt(3, 2, decode.PortCapCapabilityMask2, 0, 0x0002, 1, 0x1, 0x1)},
	}
	for _, p := range pis {
		tid++
		mod := uint32(p.pi[28])
		b.add(fmt.Sprintf("LID 1 → %d: SubnGet(PortInfo) of port %d", p.lid, mod), smpLID(1, p.lid, decode.MADMethodGet, tid, decode.SMPAttrPortInfo, mod, nil))
		b.add(fmt.Sprintf("LID %d → 1: SubnGetResp(PortInfo), %s", p.lid, p.note), smpLID(p.lid, 1, decode.MADMethodGetResp, tid, decode.SMPAttrPortInfo, mod, p.pi))
	}
	tid++
	set := portInfoExt(3, 1, both, 1, 0x0012, 0, 0x3, 31)
	b.add("LID 1 → 3: SubnSet(PortInfo), LinkSpeedExtEnabled 31 (set to LinkSpeedExtSupported)", smpLID(1, 3, decode.MADMethodSet, tid, decode.SMPAttrPortInfo, 1, set))
	resp := append(be(nil), set...).u8(62, 2<<4|0x3).u8(63, 0x3)
	b.add("LID 3 → 1: SubnGetResp(PortInfo), EDR active, LinkSpeedExtEnabled 0x3", smpLID(3, 1, decode.MADMethodGetResp, tid, decode.SMPAttrPortInfo, 1, resp))

	traps := []struct {
		num     uint16
		from    uint16
		details be
		note    string
	}{
		{259, 2, make(be, 54).u16(0, 0xFFC0).u16(2, 3).u16(4, 4).u16(6, 0x8002).u8(8, 0x50).u24(9, 0x48).u24(13, 0x49).
			put(16, gidA[:]).put(32, gidB[:]).u16(48, 2).u8(50, 7),
			"trap 259: bad P_Key 0x8002 (SL 5) from LID 3 QP 0x48 to LID 4 QP 0x49 at switch LID 2 port 7"},
		{144, 3, make(be, 54).u16(2, 3).u32(6, 0x0251086A|both).u8(11, 0x20|0x08).u16(12, 0x0012),
			"trap 144: CapabilityMask2 and SM priority changed, CapabilityMask2 0x0012"},
	}
	for _, t := range traps {
		tid++
		b.add(fmt.Sprintf("LID %d → 1: SubnTrap(Notice), %s", t.from, t.note),
			smpLID(t.from, 1, decode.MADMethodTrap, tid, decode.SMPAttrNotice, 0, notice(t.num, t.from, t.details)))
	}
	return b.done()
}
