package synth

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/decode"
)

// MADFrame is a native InfiniBand UD SEND Only carrying one 256-byte MAD:
// to QP0 on VL15 for subnet management (class 0x01 and 0x81), to QP1 on
// VL0 with the GSI Q_Key otherwise. Data is the MAD data after the header
// (zero-padded to 232 bytes); an SMP is serialized from SMP when it is set.
type MADFrame struct {
	SLID, DLID uint16
	MAD        decode.MAD
	SMP        *decode.SMP
	Data       []byte
}

// Build returns the frame, link type 247 and what Decode must report.
func (f MADFrame) Build() ([]byte, decode.LinkType, Want, error) {
	buf := gopacket.NewSerializeBuffer()
	var body gopacket.SerializableLayer
	if f.SMP != nil {
		body = f.SMP
	} else {
		if len(f.Data) > decode.MADDataLen {
			return nil, 0, Want{}, fmt.Errorf("MAD data of %d bytes", len(f.Data))
		}
		d := make([]byte, decode.MADDataLen)
		copy(d, f.Data)
		pl := gopacket.Payload(d)
		body = &pl
	}
	m := f.MAD
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &m, body); err != nil {
		return nil, 0, Want{}, err
	}
	qp, vl, qkey := uint32(1), uint8(0), uint32(0x80010000)
	if decode.IsSMP(m.MgmtClass) {
		qp, vl, qkey = 0, 15, 0
	}
	ib := IB{LRH: ibLRH(vl, 0, f.DLID, f.SLID), T: Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: qp, PSN: decode.PSN(m.TransactionID & 0xFFFFFF)},
		DETH: decode.DETH{QKey: qkey, SrcQP: qp}, Payload: buf.Bytes()}}
	frame, link, w, err := ib.Build()
	w.Has |= decode.HdrMAD
	return frame, link, w, err
}

// mad returns a MAD header of class, method byte and attribute.
func mad(class, method uint8, tid uint64, attr uint16, mod uint32) decode.MAD {
	return decode.MAD{BaseVersion: 1, MgmtClass: class, ClassVersion: 1, R: method&0x80 != 0, Method: method & 0x7F,
		TransactionID: tid, AttributeID: attr, AttributeModifier: mod}
}

// be builds attribute bytes: each value is written big-endian at its
// offset with its width in bytes.
type be []byte

func (b be) u8(off int, v uint8) be   { b[off] = v; return b }
func (b be) u16(off int, v uint16) be { binary.BigEndian.PutUint16(b[off:], v); return b }
func (b be) u24(off int, v uint32) be {
	b[off], b[off+1], b[off+2] = byte(v>>16), byte(v>>8), byte(v)
	return b
}
func (b be) u32(off int, v uint32) be { binary.BigEndian.PutUint32(b[off:], v); return b }
func (b be) u64(off int, v uint64) be { binary.BigEndian.PutUint64(b[off:], v); return b }
func (b be) put(off int, v []byte) be { copy(b[off:], v); return b }

const (
	guidHCA    = 0x0002c90300a1b2c3
	guidSwitch = 0x0002c90300f0e0d0
	smKey      = 0x1122334455667788
)

// smpAttrs are the SMP data of each SMP attribute rocetap decodes, as a
// responder (a switch at LID 2, an HCA port at LID 3) fills them.
func smpAttrs() map[uint16][]byte {
	m := map[uint16][]byte{}
	nd := make(be, 64)
	copy(nd, "rocetap-synth switch SW-1")
	m[decode.SMPAttrNodeDescription] = nd
	m[decode.SMPAttrNodeInfo] = make(be, 64).u8(0, 1).u8(1, 1).u8(2, 2).u8(3, 36).
		u64(4, guidSwitch).u64(12, guidSwitch).u64(20, guidSwitch).u16(28, 8).u16(30, 0xC738).u32(32, 0xA0).u8(36, 7).u24(37, 0x0002C9)
	m[decode.SMPAttrSwitchInfo] = make(be, 64).u16(0, 0xC000).u16(2, 0).u16(4, 0x4000).u16(6, 0x0010).
		u8(8, 0).u8(9, 0xFF).u8(10, 0xFF).u8(11, 0x12<<3|1<<2|1).u16(12, 1).u16(14, 32).u8(16, 0xC8)
	gi := make(be, 64)
	for i := 0; i < 8; i++ {
		gi.u64(i*8, guidHCA+uint64(i)*0x100)
	}
	m[decode.SMPAttrGUIDInfo] = gi
	m[decode.SMPAttrPortInfo] = portInfo(3, 4)
	pk := make(be, 64)
	pk.u16(0, 0xFFFF).u16(2, 0x8001).u16(4, 0x7FFF).u16(6, 0x0002)
	m[decode.SMPAttrPKeyTable] = pk
	m[decode.SMPAttrSLtoVLMappingTable] = make(be, 64).put(0, []byte{0x01, 0x23, 0x45, 0x67, 0x01, 0x23, 0x45, 0x6F})
	va := make(be, 64)
	for i := 0; i < 32; i++ {
		va.u8(2*i, uint8(i%8)).u8(2*i+1, uint8(i*8))
	}
	m[decode.SMPAttrVLArbitrationTable] = va
	lf := make(be, 64)
	for i := range lf {
		lf[i] = uint8(1 + i%36)
	}
	lf[0] = 0xFF // LID 0 of the block: no route
	m[decode.SMPAttrLinearForwardingTable] = lf
	rf := make(be, 64)
	for i := 0; i < 16; i++ {
		v := uint8(0)
		if i%3 != 2 {
			v = 0x80
		}
		rf.u16(4*i, uint16(0x100+i)).u8(4*i+2, v|uint8(i%8)<<4).u8(4*i+3, uint8(i+1))
	}
	m[decode.SMPAttrRandomForwardingTable] = rf
	mf := make(be, 64)
	for i := 0; i < 32; i++ {
		mf.u16(2*i, uint16(1)<<(i%16)|0x8000>>(i%16))
	}
	m[decode.SMPAttrMulticastForwardingTable] = mf
	m[decode.SMPAttrSMInfo] = make(be, 64).u64(0, guidHCA).u64(8, smKey).u32(16, 0x2A).u8(20, 0xE3)
	vd := make(be, 64).u16(0, 1).u16(2, 0)
	copy(vd[4:], "diag: all lanes ok")
	m[decode.SMPAttrVendorDiag] = vd
	m[decode.SMPAttrLedInfo] = make(be, 64).u8(0, 0x80)
	lw := make(be, 64).u8(0, 1)
	lw[1], lw[2] = 0xFE, 0x01 // ports 1-8 (bit 0 is port 0), 15
	m[decode.SMPAttrLinkSpeedWidthPairsTable] = lw.u8(33, 0x80).u8(34, 0x80).u8(35, 0x00)
	return m
}

// portInfo is the PortInfo of an active 4x QDR HCA port at lid whose
// master SM is at LID 1.
func portInfo(lid uint16, port uint8) be {
	return make(be, 64).u64(0, 0).u64(8, 0xFE80000000000000).u16(16, lid).u16(18, 1).
		u32(20, 0x0251086A).u16(24, 0).u16(26, 15).u8(28, port).
		u8(29, 3).u8(30, 3).u8(31, 2). // width enabled/supported 1x or 4x, active 4x
		u8(32, 0x7<<4|4).              // speed supported 2.5/5/10, state Active
		u8(33, 5<<4|2).                // physical LinkUp, link down default Polling
		u8(34, 0x40|1).                // M_Key protect 1, LMC 1
		u8(35, 4<<4|7).                // speed active 10 Gbps, enabled 2.5/5/10
		u8(36, 5<<4|1).                // neighbor MTU 4096, master SM SL 1
		u8(37, 4<<4|1).                // VL cap VL0-VL7, InitType NoLoad
		u8(38, 0).u8(39, 8).u8(40, 8).
		u8(41, 0<<4|5).     // InitTypeReply 0, MTU cap 4096
		u8(42, 7<<5|0x10).  // VL stall count 7, HOQ life 16
		u8(43, 4<<4|0x8|2). // operational VLs 4, partition enforcement in, filter raw in
		u16(44, 0).u16(46, 3).u16(48, 1).u8(50, 32).
		u8(51, 0x80|18). // client reregister, subnet timeout 18
		u8(52, 17).      // response time value
		u8(53, 8<<4|8).  // local phy error / overrun thresholds
		u16(54, 0).u24(57, 0x0001F4)
}

// notice returns an SMP Notice (generic, type Urgent) of a trap number
// with its data details (from byte 10).
func notice(trap uint16, issuer uint16, details be) be {
	n := make(be, 64).u8(0, 0x80|1).u24(1, 2).u16(4, trap).u16(6, issuer).u16(8, 0x8001)
	copy(n[10:], details)
	return n
}

// smpLID is a LID-routed SMP with data a.
func smpLID(slid, dlid uint16, method uint8, tid uint64, attr uint16, mod uint32, a []byte) MADFrame {
	return MADFrame{SLID: slid, DLID: dlid, MAD: mad(decode.MgmtClassSubnLIDRouted, method, tid, attr, mod),
		SMP: &decode.SMP{MKey: 0, Data: a}}
}

// ibSMP: LID-routed subnet management on native InfiniBand (link type
// 247) between the SM at LID 1, a switch at LID 2 and an HCA port at LID
// 3: every SMP attribute rocetap decodes answered (NodeInfo and PortInfo
// asked for too), a SubnSet, and an error status.
func ibSMP() (File, error) {
	b := newFile("ib_smp.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	attrs := smpAttrs()
	tid := uint64(0x1000)
	order := []uint16{
		decode.SMPAttrNodeDescription, decode.SMPAttrNodeInfo, decode.SMPAttrSwitchInfo, decode.SMPAttrGUIDInfo,
		decode.SMPAttrPortInfo, decode.SMPAttrPKeyTable, decode.SMPAttrSLtoVLMappingTable, decode.SMPAttrVLArbitrationTable,
		decode.SMPAttrLinearForwardingTable, decode.SMPAttrRandomForwardingTable, decode.SMPAttrMulticastForwardingTable,
		decode.SMPAttrSMInfo, decode.SMPAttrVendorDiag, decode.SMPAttrLedInfo, decode.SMPAttrLinkSpeedWidthPairsTable,
	}
	for _, a := range order {
		name := decode.MADAttrString(decode.MgmtClassSubnLIDRouted, a)
		tid++
		mod := uint32(0)
		if a == decode.SMPAttrPortInfo || a == decode.SMPAttrVLArbitrationTable {
			mod = 1 // port 1 (VLArbitrationTable: the low-priority table)
		}
		if a == decode.SMPAttrNodeInfo || a == decode.SMPAttrPortInfo {
			b.add("LID 1 → 2: SubnGet("+name+")", smpLID(1, 2, decode.MADMethodGet, tid, a, mod, nil))
		}
		b.add("LID 2 → 1: SubnGetResp("+name+")", smpLID(2, 1, decode.MADMethodGetResp, tid, a, mod, attrs[a]))
	}
	tid++
	pi := portInfo(3, 1)
	pi.u8(32, 0x7<<4|3) // arm the port
	b.add("LID 1 → 3: SubnSet(PortInfo), PortState Armed", smpLID(1, 3, decode.MADMethodSet, tid, decode.SMPAttrPortInfo, 1, pi))
	b.add("LID 3 → 1: SubnGetResp(PortInfo)", smpLID(3, 1, decode.MADMethodGetResp, tid, decode.SMPAttrPortInfo, 1, pi))
	tid++
	b.add("LID 1 → 2: SubnGet(0x0013), an attribute SMPs do not define", smpLID(1, 2, decode.MADMethodGet, tid, 0x0013, 0, nil))
	r := smpLID(2, 1, decode.MADMethodGetResp, tid, 0x0013, 0, nil)
	r.MAD.Status = decode.MADStatusMethodAttrUnsup
	b.add("LID 2 → 1: SubnGetResp(0x0013), status 0x000c: method/attribute not supported", r)
	return b.done()
}

// ibSMPDRTraps: traps and directed-route SMPs on native InfiniBand (link
// type 247), between the same nodes as ib_smp.pcap.
func ibSMPDRTraps() (File, error) {
	b := newFile("ib_smp_dr_traps.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	attrs := smpAttrs()
	tid := uint64(0x1800)
	// Traps from the switch (LID 2) and the HCA (LID 3) to the SM, and
	// the SM's TrapRepress.
	gidA := gid(0x0a)
	traps := []struct {
		num     uint16
		from    uint16
		details be
		note    string
	}{
		{128, 2, make(be, 54).u16(0, 2), "trap 128: link state change at switch LID 2"},
		{129, 2, make(be, 54).u16(2, 2).u8(4, 7), "trap 129: local link integrity threshold at LID 2 port 7"},
		{64, 3, make(be, 54).put(6, gidA[:]), "trap 64: GID in service"},
		{144, 3, make(be, 54).u16(2, 3).u8(5, 1).u32(6, 0x0251086A).u8(11, 0x05), "trap 144: capability mask / node description change"},
		{145, 3, make(be, 54).u16(2, 3).u64(6, guidHCA), "trap 145: system image GUID change"},
		{256, 3, make(be, 54).u16(2, 3).u16(4, 0xFFFF).u8(6, decode.MADMethodSet).u16(8, decode.SMPAttrPortInfo).u32(10, 1).u64(14, 0xDEADBEEF).u8(23, 0x80|0x40|2).put(24, []byte{0, 1, 4}),
			"trap 256: bad M_Key in a directed-route SubnSet(PortInfo)"},
		{257, 3, make(be, 54).u16(2, 3).u16(4, 4).u32(6, 0x00008001).u8(10, 0x30).u24(11, 0x48).u24(15, 0x49).put(18, gidA[:]).put(34, gidB[:]),
			"trap 257: bad P_Key from LID 3 QP 0x48 to LID 4 QP 0x49"},
		{68, 1, make(be, 54).u64(0, 0x0000000000000003).u8(8, 0x80), "trap 68: paths (DGID, SGID) no longer valid, wait for repath"},
	}
	for _, t := range traps {
		tid++
		n := notice(t.num, t.from, t.details)
		b.add(fmt.Sprintf("LID %d → 1: SubnTrap(Notice), %s", t.from, t.note), smpLID(t.from, 1, decode.MADMethodTrap, tid, decode.SMPAttrNotice, 0, n))
		if t.num == 128 {
			b.add("LID 1 → 2: SubnTrapRepress(Notice) of trap 128", smpLID(1, t.from, decode.MADMethodTrapRepress, tid, decode.SMPAttrNotice, 0, n))
		}
	}

	tid++
	vn := notice(0x0042, 3, make(be, 54).put(0, []byte("vendor")))
	vn[0] = 0x04 // not generic, type Info
	b.add("LID 3 → 1: SubnTrap(Notice), a vendor notice (device ID 0x0042)", smpLID(3, 1, decode.MADMethodTrap, tid, decode.SMPAttrNotice, 0, vn))

	// Directed route from the SM (permissive DrSLID/DrDLID) over two hops:
	// out through port 1 of the SM's node and port 3 of the switch. The
	// request travels with D clear and the hop pointer counting up, the
	// response with D set.
	dr := func(method uint8, tid uint64, attr uint16, mod uint32, hopPtr uint8, back bool, status uint16, a []byte) MADFrame {
		m := mad(decode.MgmtClassSubnDirectRoute, method, tid, attr, mod)
		m.ClassSpecific = uint16(hopPtr)<<8 | 2
		m.Status = status
		slid, dlid := uint16(0xFFFF), uint16(0xFFFF)
		if back {
			m.Status |= decode.MADStatusDirectionBit
		}
		init := make([]byte, 64)
		init[1], init[2] = 1, 3
		ret := make([]byte, 64)
		if back {
			ret[1], ret[2] = 5, 1
		}
		return MADFrame{SLID: slid, DLID: dlid, MAD: m, SMP: &decode.SMP{Directed: true, MKey: 0, DrSLID: 0xFFFF, DrDLID: 0xFFFF, Data: a, InitialPath: init, ReturnPath: ret}}
	}
	for _, a := range []uint16{decode.SMPAttrNodeInfo, decode.SMPAttrNodeDescription, decode.SMPAttrPortInfo} {
		tid++
		name := decode.MADAttrString(decode.MgmtClassSubnDirectRoute, a)
		b.add("directed route, 2 hops (1, 3): SubnGet("+name+"), hop pointer 1", dr(decode.MADMethodGet, tid, a, 0, 1, false, 0, nil))
		b.add("directed route: SubnGetResp("+name+"), D bit set, hop pointer 2, return path (5, 1)", dr(decode.MADMethodGetResp, tid, a, 0, 2, true, 0, attrs[a]))
	}
	tid++
	pi := portInfo(4, 3)
	b.add("directed route: SubnSet(PortInfo) giving port 3 LID 4", dr(decode.MADMethodSet, tid, decode.SMPAttrPortInfo, 3, 1, false, 0, pi))
	b.add("directed route: SubnGetResp(PortInfo), status 0x001c: invalid attribute value", dr(decode.MADMethodGetResp, tid, decode.SMPAttrPortInfo, 3, 2, true, decode.MADStatusInvalidAttrValue, pi))
	tid++
	// A directed-route SMP to a LID-routed part: DrSLID is the SM's LID,
	// DrDLID permissive (IBA 14.2.2.2).
	m := dr(decode.MADMethodGet, tid, decode.SMPAttrSwitchInfo, 0, 1, false, 0, nil)
	m.SLID, m.DLID, m.SMP.DrSLID = 1, 2, 1
	b.add("directed route from LID 1 via LID 2: SubnGet(SwitchInfo), DrSLID 1", m)
	return b.done()
}

// erfIBMAD: MADs of the other classes in ERF InfiniBand records (type 21),
// as ibdump writes them: performance management (PMA) ClassPortInfo,
// PortCounters (read and cleared), PortCountersExtended and an attribute
// left as bytes; Baseboard, DevMgt, SNMP, vendor (with and without OUI),
// application, Congestion Control and reserved classes; and a
// directed-route SMP.
func erfIBMAD() (File, error) {
	b := newFile("erf_ib_mad.pcap", PcapMicro, decode.LinkTypeERF)
	erf := func(note string, fr Frame) { b.addERF(note, decode.ERFTypeInfiniBand, fr) }
	gsi := func(slid, dlid uint16, m decode.MAD, data []byte) MADFrame {
		return MADFrame{SLID: slid, DLID: dlid, MAD: m, Data: data}
	}
	pma := func(a be) []byte { return append(make([]byte, decode.PMADataOff), a...) }
	tid := uint64(0x2000)
	perf := decode.MgmtClassPerf
	cpi := make(be, 72).u8(0, 1).u8(1, 1).u16(2, 0x0600).u32(4, 0x1<<5|18).put(8, gidB[:]).u8(24, 0).u8(25, 0x30).u16(26, 0x4567).u16(28, 2).u16(30, 0xFFFF).
		u24(33, 1).u32(36, 0x80010000).put(40, gidA[:]).u8(56, 0).u24(57, 0x000ABC).u16(60, 1).u16(62, 0xFFFF).u8(64, 255).u24(65, 1).u32(68, 0x80010000)
	tid++
	erf("PerfGet(ClassPortInfo) from the performance manager (LID 1) to LID 3", gsi(1, 3, mad(perf, decode.MADMethodGet, tid, decode.PMAAttrClassPortInfo, 0), nil))
	erf("PerfGetResp(ClassPortInfo): capability mask 0x0600, redirect and trap addresses", gsi(3, 1, mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrClassPortInfo, 0), pma(cpi)))
	pc := make(be, 44).u8(1, 1).u16(2, 0xFFFF).u16(4, 12).u8(6, 1).u8(7, 2).u16(8, 3).u16(10, 0).u16(12, 0).u16(14, 7).u8(16, 0).u8(17, 1).
		u8(19, 2<<4|1).u16(22, 4).u32(24, 123456789).u32(28, 987654321).u32(32, 1234567).u32(36, 7654321).u32(40, 42)
	tid++
	erf("PerfGet(PortCounters) of port 1", gsi(1, 3, mad(perf, decode.MADMethodGet, tid, decode.PMAAttrPortCounters, 0), pma(make(be, 4).u8(1, 1).u16(2, 0xFFFF))))
	erf("PerfGetResp(PortCounters): symbol errors, link downed, receive errors, discards, data and packet counts", gsi(3, 1, mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrPortCounters, 0), pma(pc)))
	tid++
	erf("PerfSet(PortCounters): clear every counter of port 1", gsi(1, 3, mad(perf, decode.MADMethodSet, tid, decode.PMAAttrPortCounters, 0), pma(make(be, 4).u8(1, 1).u16(2, 0xFFFF))))
	erf("PerfGetResp(PortCounters): all zero", gsi(3, 1, mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrPortCounters, 0), pma(make(be, 4).u8(1, 1).u16(2, 0xFFFF))))
	pe := make(be, 72).u8(1, 1).u16(2, 0x00FF).u64(8, 0x0000001234567890).u64(16, 0x0000000987654321).u64(24, 5000000000).u64(32, 4000000000).
		u64(40, 4999999000).u64(48, 3999999000).u64(56, 1000).u64(64, 1000)
	tid++
	erf("PerfGet(PortCountersExtended) of port 1", gsi(1, 3, mad(perf, decode.MADMethodGet, tid, decode.PMAAttrPortCountersExtended, 0), pma(make(be, 4).u8(1, 1))))
	erf("PerfGetResp(PortCountersExtended): 64-bit counters", gsi(3, 1, mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrPortCountersExtended, 0), pma(pe)))
	tid++
	erf("PerfGet(PortSamplesControl): an attribute left as bytes", gsi(1, 3, mad(perf, decode.MADMethodGet, tid, decode.PMAAttrPortSamplesControl, 0), pma(make(be, 4).u8(1, 1))))
	r := mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrPortSamplesControl, 0)
	r.Status = decode.MADStatusMethodAttrUnsup
	erf("PerfGetResp(PortSamplesControl), status 0x000c: method/attribute not supported", gsi(3, 1, r, pma(make(be, 4).u8(1, 1))))
	tid++
	r = mad(perf, decode.MADMethodGetResp, tid, decode.PMAAttrPortCounters, 0)
	r.Status = decode.MADStatusBusy
	erf("PerfGetResp(PortCounters), status 0x0001: busy", gsi(3, 1, r, pma(make(be, 4).u8(1, 2))))

	other := func(class, method uint8, attr uint16, note string, data []byte) {
		tid++
		erf(note, gsi(1, 3, mad(class, method, tid, attr, 0), data))
	}
	seq := payload(64, 0x40)
	other(decode.MgmtClassBM, decode.MADMethodSend, 0x0010, "Baseboard management (0x05) Send: left as bytes", seq)
	other(decode.MgmtClassDevMgt, decode.MADMethodGet, 0x0010, "Device management (0x06) Get(IOUnitInfo): left as bytes", nil)
	other(decode.MgmtClassSNMP, decode.MADMethodSend, 0x0001, "SNMP tunneling (0x08) Send: left as bytes", seq)
	other(0x09, decode.MADMethodGet, 0xFF10, "vendor-specific class 0x09 Get: left as bytes", seq)
	// Vendor classes with OUI (0x30-0x4F) carry an RMPP header, a reserved
	// byte and the vendor's OUI before their data (IBA 13.4.4).
	other(0x30, decode.MADMethodGetResp, 0x0010, "vendor class with OUI 0x30 (OUI 00:02:c9) GetResp: left as bytes", make(be, 64).u24(13, 0x0002C9).put(16, seq[:32]))
	other(0x10, decode.MADMethodGet, 0x0001, "application-specific class 0x10 Get: left as bytes", seq)
	other(decode.MgmtClassCC, decode.MADMethodGet, 0x0011, "Congestion Control (0x21) Get: left as bytes", seq)
	other(0x50, decode.MADMethodGet, 0x0001, "reserved class 0x50: the MAD header and bytes", seq)

	tid++
	attrs := smpAttrs()
	m := mad(decode.MgmtClassSubnDirectRoute, decode.MADMethodGetResp, tid, decode.SMPAttrNodeInfo, 0)
	m.Status, m.ClassSpecific = decode.MADStatusDirectionBit, 0x0101
	erf("directed route SubnGetResp(NodeInfo), one hop, in an ERF record", MADFrame{SLID: 0xFFFF, DLID: 0xFFFF, MAD: m,
		SMP: &decode.SMP{Directed: true, DrSLID: 0xFFFF, DrDLID: 0xFFFF, Data: attrs[decode.SMPAttrNodeInfo], InitialPath: []byte{0, 2}, ReturnPath: []byte{0, 9}}})
	tid++
	erf("LID-routed SubnGet(PortInfo) of port 2, in an ERF record", smpLID(1, 2, decode.MADMethodGet, tid, decode.SMPAttrPortInfo, 2, nil))
	return b.done()
}
