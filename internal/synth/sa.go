package synth

import (
	"encoding/binary"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/decode"
)

// Subnet administration (SA) MADs and the RMPP segments that carry SA
// tables, built byte by byte from the layouts of IBA 13.4.2 (MAD header),
// 13.6.2.1 (RMPP header) and 15.2 (SA header and records), independently
// of rocetap's decoder.

// SA methods and attributes, as the MAD header carries them.
const (
	saGet          = 0x01
	saSet          = 0x02
	saReport       = 0x06
	saGetTable     = 0x12
	saGetTraceTbl  = 0x13
	saDelete       = 0x15
	saGetResp      = 0x81
	saReportResp   = 0x86
	saGetTableResp = 0x92
	saDeleteResp   = 0x95

	attrNotice           = 0x0002
	attrInformInfo       = 0x0003
	attrNodeRecord       = 0x0011
	attrPortInfoRecord   = 0x0012
	attrLinkRecord       = 0x0020
	attrGUIDInfoRecord   = 0x0030
	attrServiceRecord    = 0x0031
	attrPathRecord       = 0x0035
	attrMCMemberRecord   = 0x0038
	attrTraceRecord      = 0x0039
	attrMultiPathRecord  = 0x003A
	attrInformInfoRecord = 0x00F3

	saDataLen = 200 // SA data of one MAD
	rmppSeg   = 220 // RMPP payload of one MAD: SA header and data
)

// madHdr returns the 24-byte MAD header (IBA 13.4.2).
func madHdr(class, method uint8, status uint16, tid uint64, attr uint16, mod uint32) []byte {
	h := make([]byte, 24)
	h[0], h[1], h[2], h[3] = 1, class, 2, method
	binary.BigEndian.PutUint16(h[4:], status)
	binary.BigEndian.PutUint64(h[8:], tid)
	binary.BigEndian.PutUint16(h[16:], attr)
	binary.BigEndian.PutUint32(h[20:], mod)
	return h
}

// rmppHdr is an RMPP header (IBA 13.6.2.1).
type rmppHdr struct {
	typ, flags, status, rtime uint8
	data1, data2              uint32
}

func (r rmppHdr) bytes() []byte {
	b := make([]byte, 12)
	b[0], b[1], b[2], b[3] = 1, r.typ, r.rtime<<3|r.flags&0x0F, r.status
	binary.BigEndian.PutUint32(b[4:], r.data1)
	binary.BigEndian.PutUint32(b[8:], r.data2)
	return b
}

// saMAD is one SA MAD: header fields and up to 200 bytes of SA data.
type saMAD struct {
	method  uint8
	status  uint16
	tid     uint64
	attr    uint16
	rmpp    rmppHdr
	smKey   uint64
	attrOff uint16 // 8-byte words
	mask    uint64
	data    []byte
}

func (m saMAD) bytes() []byte {
	b := madHdr(0x03, m.method, m.status, m.tid, m.attr, 0)
	b = append(b, m.rmpp.bytes()...)
	sa := make([]byte, 20)
	binary.BigEndian.PutUint64(sa, m.smKey)
	binary.BigEndian.PutUint16(sa[8:], m.attrOff)
	binary.BigEndian.PutUint64(sa[12:], m.mask)
	b = append(b, sa...)
	d := make([]byte, saDataLen)
	copy(d, m.data)
	return append(b, d...)
}

// segments splits the SA data of a GetTableResp into RMPP DATA segments
// as the Linux MAD layer does (ib_mad's send_next_seg): 200 bytes of SA
// data a segment, each with the SA header; PayloadLength is, in the first
// segment, the RMPP payload of all (220 bytes a segment, less the pad of
// the last) and, in the last, that of the last segment; 0 in between.
func segments(m saMAD, table []byte) []saMAD {
	n := max(1, (len(table)+saDataLen-1)/saDataLen)
	pad := n*saDataLen - len(table)
	var out []saMAD
	for i := range n {
		s := m
		s.rmpp = rmppHdr{typ: 1, flags: 1, rtime: 0x1F, data1: uint32(i + 1)}
		if i == 0 {
			s.rmpp.flags |= 2
			s.rmpp.data2 = uint32(n*rmppSeg - pad)
		}
		if i == n-1 {
			s.rmpp.flags |= 4
			s.rmpp.data2 = uint32(rmppSeg - pad)
		}
		s.data = table[i*saDataLen : min((i+1)*saDataLen, len(table))]
		out = append(out, s)
	}
	return out
}

// table lays records out spaced by the attribute offset (words × 8).
func table(words int, recs ...[]byte) []byte {
	out := make([]byte, words*8*len(recs))
	for i, r := range recs {
		copy(out[i*words*8:], r)
	}
	return out
}

func put16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }
func put32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
func put64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }

// pathRecord (IBA 15.2.5.16): 64 bytes.
func pathRecord(dgid, sgid [16]byte, dlid, slid uint16, flow uint32, hop, tclass uint8, npath uint8, pkey uint16, sl uint8, mtu, rate, plt uint8, pref uint8) []byte {
	b := make([]byte, 64)
	copy(b[8:], dgid[:])
	copy(b[24:], sgid[:])
	put16(b[40:], dlid)
	put16(b[42:], slid)
	put32(b[44:], 1<<31|(flow&0xFFFFF)<<8|uint32(hop)) // RawTraffic set
	b[48] = tclass
	b[49] = 0x80 | npath&0x7F // Reversible
	put16(b[50:], pkey)
	put16(b[52:], 0x0120|uint16(sl&0xF)) // QoSClass 0x012
	b[54] = 2<<6 | mtu&0x3F              // selector "exactly"
	b[55] = 2<<6 | rate&0x3F
	b[56] = 2<<6 | plt&0x3F
	b[57] = pref
	return b
}

// multiPathRecord (IBA 15.2.5.20): the fixed 24 bytes and the GIDs.
func multiPathRecord(pkey uint16, sl uint8, sgids, dgids [][16]byte) []byte {
	b := make([]byte, 24+16*(len(sgids)+len(dgids)))
	put32(b, 1<<31|0x12345<<8|0x40)
	b[4], b[5] = 0x08, 0x80|2
	put16(b[6:], pkey)
	put16(b[8:], uint16(sl&0xF))
	b[10], b[11], b[12] = 2<<6|4, 2<<6|7, 2<<6|18
	b[14] = 1<<6 | 0x0E
	b[15], b[16] = uint8(len(sgids)), uint8(len(dgids))
	off := 24
	for _, g := range append(append([][16]byte{}, sgids...), dgids...) {
		copy(b[off:], g[:])
		off += 16
	}
	return b
}

// nodeRecord (IBA 15.2.5.2): LID, reserved, NodeInfo (40), NodeDescription (64).
func nodeRecord(lid uint16, guid uint64, desc string) []byte {
	b := make([]byte, 108)
	put16(b, lid)
	ni := b[4:44]
	ni[0], ni[1], ni[2], ni[3] = 1, 1, 1, 2 // base/class version, CA, 2 ports
	put64(ni[4:], guid&^0xFF)               // SystemImageGUID
	put64(ni[12:], guid)                    // NodeGUID
	put64(ni[20:], guid+1)                  // PortGUID
	put16(ni[28:], 128)                     // PartitionCap
	put16(ni[30:], 0x0001)                  // DeviceID
	put32(ni[32:], 0x000000A0)              // Revision
	ni[36] = 1                              // LocalPortNum
	ni[37], ni[38], ni[39] = 0x00, 0x02, 0xC9
	copy(b[44:], desc)
	return b
}

// portInfoRecord (IBA 15.2.5.3): EndportLID, PortNum, reserved, PortInfo (64).
func portInfoRecord(lid uint16, port uint8) []byte {
	b := make([]byte, 68)
	put16(b, lid)
	b[2] = port
	pi := b[4:]
	put64(pi[8:], 0xFE80000000000000) // GidPrefix
	put16(pi[16:], lid)               // LID
	put16(pi[18:], 1)                 // MasterSMLID
	put32(pi[20:], 0x0251086A)        // CapabilityMask
	pi[32] = 4                        // LinkWidthEnabled 4x
	pi[33] = 3                        // LinkWidthSupported 1x or 4x
	pi[34] = 2                        // LinkWidthActive 4x
	pi[35] = 0x14                     // LinkSpeedSupported, PortState Active
	return b
}

// linkRecord (IBA 15.2.5.13): FromLID, FromPort, ToPort, ToLID.
func linkRecord(from uint16, fport, tport uint8, to uint16) []byte {
	b := make([]byte, 6)
	put16(b, from)
	b[2], b[3] = fport, tport
	put16(b[4:], to)
	return b
}

// guidInfoRecord (IBA 15.2.5.18): LID, BlockNum, reserved (5), GUIDInfo (8 GUIDs).
func guidInfoRecord(lid uint16, block uint8, guid uint64) []byte {
	b := make([]byte, 72)
	put16(b, lid)
	b[2] = block
	for i := range 8 {
		put64(b[8+8*i:], guid+uint64(i))
	}
	return b
}

// serviceRecord (IBA 15.2.5.14): 176 bytes.
func serviceRecord(id uint64, g [16]byte, pkey uint16, lease uint32, name string, data byte) []byte {
	b := make([]byte, 176)
	put64(b, id)
	copy(b[8:], g[:])
	put16(b[24:], pkey)
	put32(b[28:], lease)
	for i := range 16 {
		b[32+i] = byte(0xA0 + i)
	}
	copy(b[48:], name)
	for i := range 64 {
		b[112+i] = data + byte(i)
	}
	return b
}

// mcMemberRecord (IBA 15.2.5.17): 52 bytes.
func mcMemberRecord(mgid, port [16]byte, qkey uint32, mlid uint16, pkey uint16, join uint8) []byte {
	b := make([]byte, 52)
	copy(b, mgid[:])
	copy(b[16:], port[:])
	put32(b[32:], qkey)
	put16(b[36:], mlid)
	b[38], b[39] = 2<<6|4, 0x10
	put16(b[40:], pkey)
	b[42], b[43] = 2<<6|3, 2<<6|18
	put32(b[44:], 3<<28|0x00ABC<<8|0x01) // SL 3, FlowLabel, HopLimit 1
	b[48] = 2<<4 | join&0x0F             // scope link-local
	b[49] = 0x80                         // ProxyJoin
	return b
}

// traceRecord (IBA 15.2.5.19): 46 bytes.
func traceRecord(node uint64, nodeType uint8, in, out uint8) []byte {
	b := make([]byte, 46)
	put64(b, 0xFE80000000000000)
	put16(b[8:], 0x1234)
	b[11] = nodeType
	put64(b[12:], node)
	put64(b[20:], node&^0xFFFF)
	put64(b[28:], node+uint64(in))
	put64(b[36:], node+uint64(out))
	b[44], b[45] = in, out
	return b
}

// informInfo (IBA 13.4.8.3): 36 bytes.
func informInfo(g [16]byte, subscribe uint8, trap uint16, qpn uint32) []byte {
	b := make([]byte, 36)
	copy(b, g[:])
	put16(b[16:], 0xFFFF) // LIDRangeBegin: all
	put16(b[18:], 0)
	b[22], b[23] = 1, subscribe
	put16(b[24:], 0xFFFF) // Type: all
	put16(b[26:], trap)
	put32(b[28:], qpn<<8|0x13) // RespTimeValue 19
	b[33], b[34], b[35] = 0x00, 0x00, 0x02
	return b
}

// informInfoRecord (IBA 15.2.5.12): SubscriberGID, Enum, reserved, InformInfo.
func informInfoRecord(sub [16]byte, enum uint16, info []byte) []byte {
	b := make([]byte, 60)
	copy(b, sub[:])
	put16(b[16:], enum)
	copy(b[24:], info)
	return b
}

// saNotice (IBA 13.4.8.2): a generic trap 64 (GID in service).
func saNotice(g [16]byte) []byte {
	b := make([]byte, 80)
	b[0] = 0x80 | 3            // IsGeneric, Type urgent... (3: informational)
	b[1], b[2], b[3] = 0, 0, 4 // ProducerType: class manager
	put16(b[4:], 64)           // TrapNumber
	put16(b[6:], 1)            // IssuerLID
	copy(b[8+6:], g[:])        // DataDetails: reserved 6, GID
	return b
}

// saPeer is the requester side of an SA conversation and how its frames
// are carried: the MAD in a UD SEND Only to QP1 (Q_Key 0x80010000).
type saPeer struct {
	native bool // native InfiniBand (LID 1 ↔ SM LID 2), else RoCEv2/IPv4
	psn    [2]uint32
}

// frame returns a frame carrying the MAD from the requester (fromSA false)
// or from the SA.
func (c *saPeer) frame(mad []byte, fromSA bool) Frame {
	side := 0
	if fromSA {
		side = 1
	}
	t := Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 1, PSN: decode.PSN(c.psn[side])},
		DETH: decode.DETH{QKey: 0x80010000, SrcQP: 1}, Payload: mad,
	}
	c.psn[side]++
	if c.native {
		l := ibLRH(0, 0, 0x0002, 0x0001)
		if fromSA {
			l = ibLRH(0, 0, 0x0001, 0x0002)
		}
		return IB{LRH: l, T: t}
	}
	return RoCEv2{Reverse: fromSA, T: t}
}

// madWant marks a MAD record: the MAD (and CM) header bits are checked
// by the decoder's own tests, not by TestSynthDecode's header list.
func madWant(r *Record) { r.Want.Ignore = decode.HdrMAD | decode.HdrCM }

// saExchange adds a request and its answer; table answers longer than one
// MAD go as RMPP segments, each acknowledged by the requester.
func (b *fileBuilder) saExchange(c *saPeer, note string, req saMAD, resp saMAD, records []byte) {
	madWant(b.add(note+": request", c.frame(req.bytes(), false)))
	if resp.method != saGetTableResp {
		resp.data = records
		madWant(b.add(note+": response", c.frame(resp.bytes(), true)))
		return
	}
	segs := segments(resp, records)
	for i, s := range segs {
		madWant(b.add(note+": GetTableResp RMPP DATA segment "+itoa(i+1)+" of "+itoa(len(segs)), c.frame(s.bytes(), true)))
		if len(segs) > 1 {
			// The requester acknowledges each segment (RMPP ACK: the
			// response's header with the response bit cleared, IBA
			// 13.6.3.2 and Linux's format_ack).
			ack := resp
			ack.method = saGetTable
			ack.rmpp = rmppHdr{typ: 2, flags: 1, data1: uint32(i + 1), data2: uint32(i + 1 + 4)}
			ack.data = nil
			madWant(b.add(note+": RMPP ACK of segment "+itoa(i+1), c.frame(ack.bytes(), false)))
		}
	}
}

func itoa(i int) string {
	return string(appendInt(nil, i))
}

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// saConversation adds path, node, port and service queries; with
// saConversation2, every SA attribute and method rocetap decodes.
func (b *fileBuilder) saConversation(c *saPeer) {
	gA, gB := gidA, gidB
	tid := uint64(0x0000_1000_0000_0000)
	next := func() uint64 { tid++; return tid }

	// Get(PathRecord) → GetResp(PathRecord): one record, no RMPP.
	t := next()
	pr := pathRecord(gB, gA, 2, 1, 0x54321, 255, 0x20, 1, 0xFFFF, 5, 4, 7, 18, 0)
	b.saExchange(c, "SubnAdmGet(PathRecord)",
		saMAD{method: saGet, tid: t, attr: attrPathRecord, mask: 0x0000000000000C00, data: pathRecord(gB, gA, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		saMAD{method: saGetResp, tid: t, attr: attrPathRecord}, pr)

	// GetTable(PathRecord) → 5 PathRecords (320 bytes): two RMPP segments.
	t = next()
	var prs [][]byte
	for i := range 5 {
		prs = append(prs, pathRecord(gB, gA, uint16(2+i), 1, uint32(0x100*i), 64, uint8(i), 5, 0x8001, uint8(i), 5, 16, 20, uint8(i)))
	}
	b.saExchange(c, "SubnAdmGetTable(PathRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrPathRecord, mask: 0x0C},
		saMAD{method: saGetTableResp, tid: t, attr: attrPathRecord, attrOff: 8}, table(8, prs...))

	// GetTable(MultiPathRecord) → one record in one RMPP segment.
	t = next()
	mp := multiPathRecord(0xFFFF, 3, [][16]byte{gA}, [][16]byte{gB, gid(0x0c)})
	b.saExchange(c, "SubnAdmGetTable(MultiPathRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrMultiPathRecord, mask: 0x3000, data: multiPathRecord(0xFFFF, 0, [][16]byte{gA}, [][16]byte{gB, gid(0x0c)})},
		saMAD{method: saGetTableResp, tid: t, attr: attrMultiPathRecord, attrOff: 9}, table(9, mp))

	// GetTable(NodeRecord) → 3 NodeRecords (112 bytes each): two segments.
	t = next()
	b.saExchange(c, "SubnAdmGetTable(NodeRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrNodeRecord},
		saMAD{method: saGetTableResp, tid: t, attr: attrNodeRecord, attrOff: 14},
		table(14, nodeRecord(1, 0x0002C90300000A00, "host-a mlx5_0"), nodeRecord(2, 0x0002C90300000B00, "host-b mlx5_0"), nodeRecord(3, 0x0002C90300000C00, "switch-1")))

	// Get(PortInfoRecord) → GetResp.
	t = next()
	b.saExchange(c, "SubnAdmGet(PortInfoRecord)",
		saMAD{method: saGet, tid: t, attr: attrPortInfoRecord, mask: 0x3, data: portInfoRecord(2, 1)[:4]},
		saMAD{method: saGetResp, tid: t, attr: attrPortInfoRecord}, portInfoRecord(2, 1))

	// Set(ServiceRecord) registers a service, GetTable finds two, Delete
	// removes it.
	sr := serviceRecord(0x0000000001060106, gA, 0xFFFF, 0xFFFFFFFF, "rocetap.test", 0x10)
	t = next()
	b.saExchange(c, "SubnAdmSet(ServiceRecord)",
		saMAD{method: saSet, tid: t, attr: attrServiceRecord, mask: 0x1F, data: sr},
		saMAD{method: saGetResp, tid: t, attr: attrServiceRecord}, sr)
	t = next()
	b.saExchange(c, "SubnAdmGetTable(ServiceRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrServiceRecord, mask: 0x1, data: serviceRecord(0x0000000001060106, [16]byte{}, 0, 0, "", 0)[:8]},
		saMAD{method: saGetTableResp, tid: t, attr: attrServiceRecord, attrOff: 22},
		table(22, sr, serviceRecord(0x0000000001060106, gB, 0xFFFF, 3600, "rocetap.peer", 0x60)))
	t = next()
	b.saExchange(c, "SubnAdmDelete(ServiceRecord)",
		saMAD{method: saDelete, tid: t, attr: attrServiceRecord, mask: 0x1F, data: sr},
		saMAD{method: saDeleteResp, tid: t, attr: attrServiceRecord}, sr)

}

// saConversation2 adds the rest: multicast, links, GUIDs, event
// subscriptions, traces and reports.
func (b *fileBuilder) saConversation2(c *saPeer) {
	gA, gB := gidA, gidB
	mgid := [16]byte{0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 15: 0x01}
	tid := uint64(0x0000_1000_0000_0100)
	next := func() uint64 { tid++; return tid }

	// Set(MCMemberRecord) joins a multicast group, Delete leaves it.
	mc := mcMemberRecord(mgid, gA, 0x80010000, 0xC001, 0xFFFF, 1)
	t := next()
	b.saExchange(c, "SubnAdmSet(MCMemberRecord)",
		saMAD{method: saSet, tid: t, attr: attrMCMemberRecord, mask: 0x10083, data: mcMemberRecord(mgid, gA, 0, 0, 0xFFFF, 1)},
		saMAD{method: saGetResp, tid: t, attr: attrMCMemberRecord}, mc)
	t = next()
	b.saExchange(c, "SubnAdmDelete(MCMemberRecord)",
		saMAD{method: saDelete, tid: t, attr: attrMCMemberRecord, mask: 0x10083, data: mc},
		saMAD{method: saDeleteResp, tid: t, attr: attrMCMemberRecord}, mc)

	// GetTable(LinkRecord) → 40 LinkRecords (8 bytes each): two segments.
	t = next()
	var lrs [][]byte
	for i := range 40 {
		lrs = append(lrs, linkRecord(uint16(0x10+i), uint8(1+i%36), 1, uint16(0x100+i)))
	}
	b.saExchange(c, "SubnAdmGetTable(LinkRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrLinkRecord},
		saMAD{method: saGetTableResp, tid: t, attr: attrLinkRecord, attrOff: 1}, table(1, lrs...))

	// GetTable(GUIDInfoRecord) → one record.
	t = next()
	b.saExchange(c, "SubnAdmGetTable(GUIDInfoRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrGUIDInfoRecord, mask: 0x1, data: []byte{0, 2}},
		saMAD{method: saGetTableResp, tid: t, attr: attrGUIDInfoRecord, attrOff: 9}, table(9, guidInfoRecord(2, 0, 0x0002C90300000B01)))

	// Set(InformInfo): subscribe to trap 64 → GetResp(InformInfo).
	ii := informInfo([16]byte{}, 1, 64, 1)
	t = next()
	b.saExchange(c, "SubnAdmSet(InformInfo)",
		saMAD{method: saSet, tid: t, attr: attrInformInfo, data: ii},
		saMAD{method: saGetResp, tid: t, attr: attrInformInfo}, ii)

	// GetTable(InformInfoRecord) → two records.
	t = next()
	b.saExchange(c, "SubnAdmGetTable(InformInfoRecord)",
		saMAD{method: saGetTable, tid: t, attr: attrInformInfoRecord},
		saMAD{method: saGetTableResp, tid: t, attr: attrInformInfoRecord, attrOff: 8},
		table(8, informInfoRecord(gA, 0, ii), informInfoRecord(gB, 1, informInfo([16]byte{}, 1, 65, 1))))

	// GetTraceTable(TraceRecord) → GetTableResp with three hops.
	t = next()
	b.saExchange(c, "SubnAdmGetTraceTable(TraceRecord)",
		saMAD{method: saGetTraceTbl, tid: t, attr: attrPathRecord, data: pathRecord(gB, gA, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		saMAD{method: saGetTableResp, tid: t, attr: attrTraceRecord, attrOff: 6},
		table(6, traceRecord(0x0002C90300000A00, 1, 0, 1), traceRecord(0x0002C90300000C00, 2, 3, 7), traceRecord(0x0002C90300000B00, 1, 1, 0)))

	// Report(Notice) from the SA → ReportResp: trap 64 to the subscriber.
	t = 0x0000_2000_0000_0001
	madWant(b.add("SubnAdmReport(Notice) from the SA", c.frame(saMAD{method: saReport, tid: t, attr: attrNotice, data: saNotice(gB)}.bytes(), true)))
	madWant(b.add("SubnAdmReportResp(Notice)", c.frame(saMAD{method: saReportResp, tid: t, attr: attrNotice, data: saNotice(gB)}.bytes(), false)))
}

// saRetries adds what the matching handles besides one answer per
// request: a MAD retry (the same TID sent again), a transfer the
// requester stops (RMPP STOP), one the SA aborts (RMPP ABORT), and a
// query never answered.
func (b *fileBuilder) saRetries(c *saPeer) {
	gA, gB := gidA, gidB
	t := uint64(0x0000_3000_0000_0001)
	req := saMAD{method: saGetTable, tid: t, attr: attrPathRecord, mask: 0x0C}
	madWant(b.add("SubnAdmGetTable(PathRecord), first copy", c.frame(req.bytes(), false)))
	b.next = b.next.Add(10 * time.Millisecond)
	madWant(b.add("SubnAdmGetTable(PathRecord), sent again with the same TID (MAD retry)", c.frame(req.bytes(), false)))
	resp := saMAD{method: saGetTableResp, tid: t, attr: attrPathRecord, attrOff: 8}
	for _, s := range segments(resp, table(8, pathRecord(gB, gA, 2, 1, 0, 64, 0, 1, 0xFFFF, 0, 4, 7, 18, 0))) {
		madWant(b.add("GetTableResp(PathRecord) to the retry", c.frame(s.bytes(), true)))
	}

	// The requester stops a transfer after its first segment (STOP,
	// status 1: resources exhausted).
	t++
	var lrs [][]byte
	for i := range 30 {
		lrs = append(lrs, linkRecord(uint16(0x20+i), 1, 2, uint16(0x200+i)))
	}
	madWant(b.add("SubnAdmGetTable(LinkRecord)", c.frame(saMAD{method: saGetTable, tid: t, attr: attrLinkRecord}.bytes(), false)))
	segs := segments(saMAD{method: saGetTableResp, tid: t, attr: attrLinkRecord, attrOff: 1}, table(1, lrs...))
	madWant(b.add("GetTableResp(LinkRecord) RMPP DATA segment 1 of 2", c.frame(segs[0].bytes(), true)))
	stop := saMAD{method: saGetTable, tid: t, attr: attrLinkRecord, rmpp: rmppHdr{typ: 3, flags: 1, status: 1}}
	madWant(b.add("RMPP STOP from the requester (resources exhausted)", c.frame(stop.bytes(), false)))

	// The SA aborts a transfer (ABORT, status 126: too many retries).
	t++
	madWant(b.add("SubnAdmGetTable(LinkRecord)", c.frame(saMAD{method: saGetTable, tid: t, attr: attrLinkRecord}.bytes(), false)))
	segs = segments(saMAD{method: saGetTableResp, tid: t, attr: attrLinkRecord, attrOff: 1}, table(1, lrs...))
	madWant(b.add("GetTableResp(LinkRecord) RMPP DATA segment 1 of 2", c.frame(segs[0].bytes(), true)))
	abort := saMAD{method: saGetTableResp, tid: t, attr: attrLinkRecord, rmpp: rmppHdr{typ: 4, flags: 1, status: 126}}
	madWant(b.add("RMPP ABORT from the SA (too many retries)", c.frame(abort.bytes(), true)))

	// A query the SA never answers.
	t++
	madWant(b.add("SubnAdmGet(NodeRecord), never answered", c.frame(saMAD{method: saGet, tid: t, attr: attrNodeRecord, mask: 1, data: []byte{0, 9}}.bytes(), false)))
	b.next = b.next.Add(5 * time.Millisecond)
	t++
	b.saExchange(c, "SubnAdmGet(PathRecord), 5 ms later",
		saMAD{method: saGet, tid: t, attr: attrPathRecord, mask: 0x0C},
		saMAD{method: saGetResp, tid: t, attr: attrPathRecord}, pathRecord(gB, gA, 2, 1, 0, 64, 0, 1, 0xFFFF, 0, 4, 7, 18, 0))
}

// cmExchange adds a CM connection and disconnection over RoCEv2, whose
// messages the matching pairs by transaction ID (REQ → REP, DREQ → DREP).
func (b *fileBuilder) cmExchange(c *saPeer) {
	cm := func(attr uint16, tid uint64, fromB bool, m decode.CM) {
		m.AttributeID = attr
		buf := gopacket.NewSerializeBuffer()
		if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil && b.err == nil {
			b.err = err
		}
		mad := append(madHdr(0x07, 0x03, 0, tid, attr, 0), buf.Bytes()...)
		r := b.add("CM "+decode.CMAttrString(attr), c.frame(mad, fromB))
		madWant(r)
	}
	const tid = 0x0000_0000_4242_0001
	cm(decode.CMAttrREQ, tid, false, decode.CM{LocalCommID: 0x11223344, ServiceID: 0x0000000001064E20, LocalQPN: 0x12, StartingPSN: 100,
		LocalQKey: 0, PKey: 0xFFFF, PathMTU: 3, TransportServiceType: 0, RetryCount: 7, RNRRetryCount: 7, MaxCMRetries: 15,
		RemoteCMResponseTimeout: 20, LocalCMResponseTimeout: 20})
	cm(decode.CMAttrREP, tid, true, decode.CM{LocalCommID: 0x55667788, RemoteCommID: 0x11223344, LocalQPN: 0x13, StartingPSN: 200, RNRRetryCount: 7})
	cm(decode.CMAttrRTU, tid, false, decode.CM{LocalCommID: 0x11223344, RemoteCommID: 0x55667788})
	cm(decode.CMAttrDREQ, tid+1, false, decode.CM{LocalCommID: 0x11223344, RemoteCommID: 0x55667788, RemoteQPN: 0x13})
	cm(decode.CMAttrDREP, tid+1, true, decode.CM{LocalCommID: 0x55667788, RemoteCommID: 0x11223344})
}

// ibSA: SA over native InfiniBand (link type 247): paths, nodes, ports,
// services.
func ibSA() (File, error) {
	b := newFile("ib_sa.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	b.saConversation(&saPeer{native: true, psn: [2]uint32{0x10, 0x800}})
	return b.done()
}

// ibSA2: SA over native InfiniBand: multicast, links, GUIDs, InformInfo,
// traces, reports.
func ibSA2() (File, error) {
	b := newFile("ib_sa2.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	b.saConversation2(&saPeer{native: true, psn: [2]uint32{0x40, 0x840}})
	return b.done()
}

// roceSA: CM and SA over RoCEv2 (QP1, the GSI): request/response
// matching, MAD retries, RMPP STOP and ABORT, a query never answered.
func roceSA() (File, error) {
	b := newFile("roce_sa.pcap", PcapMicro, decode.LinkTypeEthernet)
	c := &saPeer{psn: [2]uint32{0x20, 0x900}}
	b.cmExchange(c)
	gA, gB := gidA, gidB
	var prs [][]byte
	for i := range 7 {
		prs = append(prs, pathRecord(gB, gA, 0, 0, uint32(i), 64, 0, 1, 0xFFFF, 0, 3, 16, 14, 0))
	}
	b.saExchange(c, "SubnAdmGetTable(PathRecord)",
		saMAD{method: saGetTable, tid: 0x0000_5000_0000_0001, attr: attrPathRecord, mask: 0x0C},
		saMAD{method: saGetTableResp, tid: 0x0000_5000_0000_0001, attr: attrPathRecord, attrOff: 8}, table(8, prs...))
	b.saRetries(c)
	return b.done()
}
