package decode

import (
	"encoding/binary"
	"math/bits"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Sizes of the parts of a Subnet Administration MAD (IBA 15.2.1.1): the
// 24-byte MAD header, the 12-byte RMPP header, the 20-byte SA header and
// 200 bytes of SA data.
const (
	RMPPLen     = 12
	SAHeaderLen = 20
	SADataLen   = MADDataLen - RMPPLen - SAHeaderLen
	// RMPPSegLen is the RMPP payload of one segment (IBA 13.6.2.1): what
	// PayloadLength counts, the SA header included.
	RMPPSegLen = MADDataLen - RMPPLen
)

// RMPP types (IBA 13.6.2.1, Table 172).
const (
	RMPPTypeNone  uint8 = 0
	RMPPTypeData  uint8 = 1
	RMPPTypeAck   uint8 = 2
	RMPPTypeStop  uint8 = 3
	RMPPTypeAbort uint8 = 4
)

// RMPP flags (the low 4 bits of byte 2).
const (
	RMPPFlagActive uint8 = 1 << 0
	RMPPFlagFirst  uint8 = 1 << 1
	RMPPFlagLast   uint8 = 1 << 2
)

// RMPP is the header of the Reliable Multi-Packet Transaction Protocol
// (IBA 13.6.2.1), which follows the MAD header of the classes that send
// more than one MAD's worth of data (Subnet Administration).
//
//	+---------------+---------------+-------+-------+---------------+
//	| RMPPVersion   | RMPPType      |RRespTime|Flags| RMPPStatus    |
//	+---------------+---------------+-------+-------+---------------+
//	|              Data1: SegmentNumber (DATA, ACK)                 |
//	+---------------------------------------------------------------+
//	|  Data2: PayloadLength (DATA) / NewWindowLast (ACK)            |
//	+---------------------------------------------------------------+
type RMPP struct {
	Version   uint8
	Type      uint8
	RRespTime uint8 // 5 bits; Wireshark shows the top 4 (mask 0xf0)
	Flags     uint8 // 3 bits: Active, First, Last; Wireshark shows 4 (mask 0x0f)
	Status    uint8
	Data1     uint32 // SegmentNumber of DATA and ACK
	Data2     uint32 // PayloadLength of DATA, NewWindowLast of ACK
}

// Active reports whether the RMPP header is in use (the Active flag).
func (r *RMPP) Active() bool { return r.Flags&RMPPFlagActive != 0 }

// Segmented reports whether the MAD is one DATA segment of a transfer of
// several: RMPP active, DATA, and not both First and Last.
func (r *RMPP) Segmented() bool {
	return r.Active() && r.Type == RMPPTypeData && r.Flags&(RMPPFlagFirst|RMPPFlagLast) != RMPPFlagFirst|RMPPFlagLast
}

// SA is a Subnet Administration MAD (management class 0x03, IBA 15.2.1.1)
// after its MAD header: the RMPP header, the SA header and the SA data,
// which holds one record, or, in a GetTableResp, records spaced by
// AttributeOffset × 8 bytes. Fields are valid when the capture holds their
// bytes (Has).
//
//	RMPP header (12 bytes, see RMPP)
//	+---------------------------------------------------------------+
//	|                         SM_Key (64)                           |
//	+-------------------------------+-------------------------------+
//	|     AttributeOffset (16)      |         Reserved (16)         |
//	+-------------------------------+-------------------------------+
//	|                      ComponentMask (64)                       |
//	+---------------------------------------------------------------+
//	|                     SA data (200 bytes)                       |
type SA struct {
	// Contents is the MAD data as captured: RMPP header, SA header and SA
	// data (at most MADDataLen bytes); Payload what follows (normally
	// nothing). Data is the SA data in Contents.
	layers.BaseLayer
	// Valid is set when the MAD is an SA MAD; the rest is valid only then.
	Valid           bool
	RMPP            RMPP
	SMKey           uint64
	AttributeOffset uint16 // in 8-byte words
	Reserved        uint16
	ComponentMask   uint64
	Data            []byte
}

// LayerType returns LayerTypeSA.
func (s *SA) LayerType() gopacket.LayerType { return LayerTypeSA }

// CanDecode returns LayerTypeSA.
func (s *SA) CanDecode() gopacket.LayerClass { return LayerTypeSA }

// NextLayerType returns the payload layer (bytes after the 232 bytes of
// MAD data, normally none).
func (s *SA) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes the MAD data of an SA MAD. A short one decodes
// as far as it goes (see Has) and returns an error wrapping ErrTruncated.
func (s *SA) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	s.decode(data)
	if len(data) < MADDataLen {
		df.SetTruncated()
		return truncated("sa", MADDataLen, len(data))
	}
	return nil
}

// SerializeTo prepends the 232 bytes of MAD data: RMPP header, SA header
// and Data (zeros after it).
func (s *SA) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(MADDataLen)
	if err != nil {
		return err
	}
	clear(d)
	r := &s.RMPP
	d[0], d[1], d[2], d[3] = r.Version, r.Type, r.RRespTime<<3|r.Flags&0x07, r.Status
	be := binary.BigEndian
	be.PutUint32(d[4:], r.Data1)
	be.PutUint32(d[8:], r.Data2)
	be.PutUint64(d[12:], s.SMKey)
	be.PutUint16(d[20:], s.AttributeOffset)
	be.PutUint16(d[22:], s.Reserved)
	be.PutUint64(d[24:], s.ComponentMask)
	copy(d[RMPPLen+SAHeaderLen:], s.Data)
	return nil
}

// decodeSALayer decodes an SA MAD's data on its own.
func decodeSALayer(data []byte, p gopacket.PacketBuilder) error {
	s := &SA{}
	_ = s.DecodeFromBytes(data, p) // a short one is kept: SetTruncated marks it
	p.AddLayer(s)
	if len(s.Payload) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}

// Has reports whether the capture holds [off, off+n) of the MAD data
// (offsets from the RMPP header).
func (s *SA) Has(off, n int) bool { return len(s.Contents) >= off+n }

// decode decodes data (a MAD's data, after the MAD header) as an SA MAD.
// It decodes what the capture holds; nothing is read past the end.
func (s *SA) decode(data []byte) {
	*s = SA{Valid: true}
	n := min(len(data), MADDataLen)
	s.Contents, s.Payload = data[:n], data[n:]
	b := s.Contents
	var pad [RMPPLen + SAHeaderLen]byte
	if len(b) < len(pad) {
		copy(pad[:], b)
		b = pad[:]
	}
	be := binary.BigEndian
	s.RMPP = RMPP{Version: b[0], Type: b[1], RRespTime: b[2] >> 3, Flags: b[2] & 0x07, Status: b[3],
		Data1: be.Uint32(b[4:]), Data2: be.Uint32(b[8:])}
	s.SMKey = be.Uint64(b[12:])
	s.AttributeOffset = be.Uint16(b[20:])
	s.Reserved = be.Uint16(b[22:])
	s.ComponentMask = be.Uint64(b[24:])
	if len(s.Contents) > RMPPLen+SAHeaderLen {
		s.Data = s.Contents[RMPPLen+SAHeaderLen:]
	}
}

// RecordData returns the SA data of this MAD that holds whole records:
// none for a segment of a multi-segment transfer (its records are decoded
// once, from the reassembled data: flow), the bytes PayloadLength counts
// for a single-segment RMPP transfer, else all of it.
func (s *SA) RecordData() []byte {
	if !s.Valid || s.RMPP.Type != RMPPTypeNone && s.RMPP.Type != RMPPTypeData || s.RMPP.Segmented() {
		return nil
	}
	d := s.Data
	if s.RMPP.Active() && s.RMPP.Type == RMPPTypeData {
		if n := int(s.RMPP.Data2) - SAHeaderLen; s.RMPP.Data2 >= SAHeaderLen && n < len(d) {
			d = d[:n]
		}
	}
	return d
}

// SATableMethod reports whether a method's SA data holds a table of
// records spaced by the attribute offset: GetTableResp (the answer to
// GetTable and to GetTraceTable) and GetMultiResp.
func SATableMethod(method uint8) bool {
	return method == MADMethodGetTableResp || method == MADMethodGetMultiResp
}

// SARecords calls f with each record in data (the SA data of one MAD, or of
// a reassembled RMPP transfer): for a table method, one every
// attributeOffset × 8 bytes (a record cut by the end of data is passed as
// far as it goes); otherwise data holds one record.
func SARecords(data []byte, method uint8, attributeOffset uint16, f func(rec []byte)) {
	step := int(attributeOffset) * 8
	if !SATableMethod(method) || step == 0 {
		if len(data) > 0 {
			f(data)
		}
		return
	}
	for off := 0; off < len(data); off += step {
		f(data[off:min(off+step, len(data))])
	}
}

// saRecordData returns the SA data of the RMPP transfer the packet
// completes, when a tracker reassembled one (Analysis.MAD.Reassembled),
// else the records this MAD holds itself.
func (p *Packet) saRecordData() []byte {
	if r := &p.Analysis.MAD; p.Analysis.Tracked && r.Reassembled != nil {
		return r.Reassembled
	}
	return p.SA.RecordData()
}

// saEmbedded returns the subnet management attribute smpAttr that the SA
// MAD's first record holds: NodeInfo and NodeDescription in a NodeRecord,
// PortInfo in a PortInfoRecord, GUIDInfo in a GUIDInfoRecord, the Notice
// of a Report. The SMP attribute fields (smp.go) read it, so they show
// what tshark shows: the first record's (they have one occurrence; the
// record IDs, infiniband.sa.*, have one per record).
func saEmbedded(p *Packet, smpAttr uint16) []byte {
	var off, n int
	switch a := p.MAD.AttributeID; {
	case a == SAAttrNodeRecord && smpAttr == SMPAttrNodeInfo:
		off, n = 4, 40
	case a == SAAttrNodeRecord && smpAttr == SMPAttrNodeDescription:
		off, n = 44, 64
	case a == SAAttrPortInfoRecord && smpAttr == SMPAttrPortInfo:
		off, n = 4, SMPDataLen
	case a == SAAttrGUIDInfoRecord && smpAttr == SMPAttrGUIDInfo:
		off, n = 8, SMPDataLen
	case a == SAAttrNotice && smpAttr == SMPAttrNotice:
		off, n = 0, SMPDataLen
	default:
		return nil
	}
	var first []byte
	SARecords(p.saRecordData(), p.MAD.MethodByte(), p.SA.AttributeOffset, func(rec []byte) {
		if first == nil {
			first = rec
		}
	})
	return sub(first, off, n)
}

// saAttr describes how Wireshark 4.0 shows one SA attribute: the record ID
// ahead of its record item (parse_RID) and the item's length.
type saAttr struct {
	id   uint16
	rid  int // record ID bytes before the record item
	item int // length of the record item (infiniband.sa.drdlid); 0: none
}

var saAttrs = []saAttr{
	{SAAttrNodeRecord, 4, 0},
	{SAAttrPortInfoRecord, 4, 0},
	{SAAttrLinkRecord, 3, 3},
	{SAAttrGUIDInfoRecord, 8, 0},
	{SAAttrServiceRecord, 28, 176},
	{SAAttrPathRecord, 0, 64},
	{SAAttrMCMemberRecord, 32, 64},
	{SAAttrTraceRecord, 0, 46},
	{SAAttrMultiPathRecord, 0, 200},
	{SAAttrInformInfo, 0, 36},
	{SAAttrInformInfoRecord, 24, 36},
}

func saAttrOf(id uint16) *saAttr {
	for i := range saAttrs {
		if saAttrs[i].id == id {
			return &saAttrs[i]
		}
	}
	return nil
}

// saField is one field of an SA record: where it is in the record (RID
// included), as Wireshark 4.0 reads it.
type saField struct {
	attr   uint16
	abbrev string
	name   string
	t      FieldType
	mask   uint64
	off    int
	ln     int
}

// saFields lists every SA record field, in record order. A name used by
// several attributes (infiniband.sa.lid) is one field with several rows.
// Offsets and masks follow IBA 15.2.5 and agree with Wireshark's
// parse_RID and parse_<Record> (Wireshark's ServiceRecord fields are
// named infiniband.linkrecord.service*).
var saFields = []saField{
	// NodeRecord: LID, reserved, NodeInfo (40), NodeDescription (64).
	{SAAttrNodeRecord, "infiniband.sa.lid", "LID", FTUint16, 0, 0, 2},
	// PortInfoRecord: EndportLID, PortNum, reserved, PortInfo.
	{SAAttrPortInfoRecord, "infiniband.sa.endportlid", "EndportLID", FTUint16, 0, 0, 2},
	{SAAttrPortInfoRecord, "infiniband.sa.portnum", "PortNum", FTUint8, 0, 2, 1},
	// LinkRecord.
	{SAAttrLinkRecord, "infiniband.linkrecord.fromlid", "FromLID", FTUint16, 0, 0, 2},
	{SAAttrLinkRecord, "infiniband.linkrecord.fromport", "FromPort", FTUint8, 0, 2, 1},
	{SAAttrLinkRecord, "infiniband.linkrecord.toport", "ToPort", FTUint8, 0, 3, 1},
	{SAAttrLinkRecord, "infiniband.linkrecord.tolid", "ToLID", FTUint16, 0, 4, 2},
	// GUIDInfoRecord: LID, BlockNum, reserved (5), GUIDInfo.
	{SAAttrGUIDInfoRecord, "infiniband.sa.lid", "LID", FTUint16, 0, 0, 2},
	{SAAttrGUIDInfoRecord, "infiniband.sa.blocknum_eightbit", "BlockNum_EightBit", FTUint8, 0, 2, 1},
	// ServiceRecord.
	{SAAttrServiceRecord, "infiniband.linkrecord.serviceid", "ServiceID", FTUint64, 0, 0, 8},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicegid", "ServiceGID", FTIPv6, 0, 8, 16},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicep_key", "ServiceP_Key", FTUint16, 0, 24, 2},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicelease", "ServiceLease", FTUint32, 0, 28, 4},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicekey", "ServiceKey", FTBytes, 0, 32, 16},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicename", "ServiceName", FTBytes, 0, 48, 64},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicedata", "ServiceData", FTBytes, 0, 112, 16},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicedata", "ServiceData", FTBytes, 0, 128, 16},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicedata", "ServiceData", FTBytes, 0, 144, 16},
	{SAAttrServiceRecord, "infiniband.linkrecord.servicedata", "ServiceData", FTBytes, 0, 160, 16},
	// PathRecord (bytes 0-7: reserved; ServiceID in later IBA releases).
	{SAAttrPathRecord, "infiniband.pathrecord.dgid", "DGID", FTIPv6, 0, 8, 16},
	{SAAttrPathRecord, "infiniband.pathrecord.sgid", "SGID", FTIPv6, 0, 24, 16},
	{SAAttrPathRecord, "infiniband.pathrecord.dlid", "DLID", FTUint16, 0, 40, 2},
	{SAAttrPathRecord, "infiniband.pathrecord.slid", "SLID", FTUint16, 0, 42, 2},
	{SAAttrPathRecord, "infiniband.pathrecord.rawtraffic", "RawTraffic", FTUint8, 0x80, 44, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.flowlabel", "FlowLabel", FTUint24, 0xfffff, 44, 3},
	{SAAttrPathRecord, "infiniband.pathrecord.hoplimit", "HopLimit", FTUint8, 0, 47, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.tclass", "TClass", FTUint8, 0, 48, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.reversible", "Reversible", FTUint8, 0x80, 49, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.numbpath", "NumbPath", FTUint8, 0x7f, 49, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.p_key", "P_Key", FTUint16, 0, 50, 2},
	{SAAttrPathRecord, "infiniband.pathrecord.sl", "SL", FTUint16, 0xf, 52, 2},
	{SAAttrPathRecord, "infiniband.pathrecord.mtuselector", "MTUSelector", FTUint8, 0xc0, 54, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.mtu", "MTU", FTUint8, 0x3f, 54, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.rateselector", "RateSelector", FTUint8, 0xc0, 55, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.rate", "Rate", FTUint8, 0x3f, 55, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, 0xc0, 56, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.packetlifetime", "PacketLifeTime", FTUint8, 0x3f, 56, 1},
	{SAAttrPathRecord, "infiniband.pathrecord.preference", "Preference", FTUint8, 0, 57, 1},
	// MCMemberRecord.
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.mgid", "MGID", FTIPv6, 0, 0, 16},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.portgid", "PortGID", FTIPv6, 0, 16, 16},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.q_key", "Q_Key", FTUint32, 0, 32, 4},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.mlid", "MLID", FTUint16, 0, 36, 2},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.mtuselector", "MTUSelector", FTUint8, 0xc0, 38, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.mtu", "MTU", FTUint8, 0x3f, 38, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.tclass", "TClass", FTUint8, 0, 39, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.p_key", "P_Key", FTUint16, 0, 40, 2},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.rateselector", "RateSelector", FTUint8, 0xc0, 42, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.rate", "Rate", FTUint8, 0x3f, 42, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, 0xc0, 43, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.packetlifetime", "PacketLifeTime", FTUint8, 0x3f, 43, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.sl", "SL", FTUint8, 0xf0, 44, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.flowlabel", "FlowLabel", FTUint24, 0xfffff, 44, 3},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.hoplimit", "HopLimit", FTUint8, 0, 47, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.scope", "Scope", FTUint8, 0xf0, 48, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.joinstate", "JoinState", FTUint8, 0x0f, 48, 1},
	{SAAttrMCMemberRecord, "infiniband.mcmemberrecord.proxyjoin", "ProxyJoin", FTUint8, 0x80, 49, 1},
	// TraceRecord.
	{SAAttrTraceRecord, "infiniband.tracerecord.gidprefix", "GidPrefix", FTUint64, 0, 0, 8},
	{SAAttrTraceRecord, "infiniband.tracerecord.idgeneration", "IDGeneration", FTUint16, 0, 8, 2},
	{SAAttrTraceRecord, "infiniband.tracerecord.nodetype", "NodeType", FTUint8, 0, 11, 1},
	{SAAttrTraceRecord, "infiniband.tracerecord.nodeid", "NodeID", FTUint64, 0, 12, 8},
	{SAAttrTraceRecord, "infiniband.tracerecord.chassisid", "ChassisID", FTUint64, 0, 20, 8},
	{SAAttrTraceRecord, "infiniband.tracerecord.entryportid", "EntryPortID", FTUint64, 0, 28, 8},
	{SAAttrTraceRecord, "infiniband.tracerecord.exitportid", "ExitPortID", FTUint64, 0, 36, 8},
	{SAAttrTraceRecord, "infiniband.tracerecord.entryport", "EntryPort", FTUint8, 0, 44, 1},
	{SAAttrTraceRecord, "infiniband.tracerecord.exitport", "ExitPort", FTUint8, 0, 45, 1},
	// MultiPathRecord (the GIDs follow: multipathSDGIDs).
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.rawtraffic", "RawTraffic", FTUint8, 0x80, 0, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.flowlabel", "FlowLabel", FTUint24, 0xfffff, 0, 3},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.hoplimit", "HopLimit", FTUint8, 0, 3, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.tclass", "TClass", FTUint8, 0, 4, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.reversible", "Reversible", FTUint8, 0x80, 5, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.numbpath", "NumbPath", FTUint8, 0x7f, 5, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.p_key", "P_Key", FTUint16, 0, 6, 2},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.sl", "SL", FTUint8, 0xf, 8, 2},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.mtuselector", "MTUSelector", FTUint8, 0xc0, 10, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.mtu", "MTU", FTUint8, 0x3f, 10, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.rateselector", "RateSelector", FTUint8, 0xc0, 11, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.rate", "Rate", FTUint8, 0x3f, 11, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, 0xc0, 12, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.packetlifetime", "PacketLifeTime", FTUint8, 0x3f, 12, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.independenceselector", "IndependenceSelector", FTUint8, 0xc0, 14, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.gidscope", "GIDScope", FTUint8, 0x3f, 14, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.sgidcount", "SGIDCount", FTUint8, 0, 15, 1},
	{SAAttrMultiPathRecord, "infiniband.multipathrecord.dgidcount", "DGIDCount", FTUint8, 0, 16, 1},
	// InformInfoRecord: SubscriberGID, Enum, reserved (6), InformInfo.
	{SAAttrInformInfoRecord, "infiniband.informinforecord.subscribergid", "SubscriberGID", FTIPv6, 0, 0, 16},
	{SAAttrInformInfoRecord, "infiniband.informinforecord.enum", "Enum", FTUint16, 0, 16, 2},
}

// informInfoFields are InformInfo's fields, from its start: the
// attribute InformInfo and the body of an InformInfoRecord.
var informInfoFields = []saField{
	{0, "infiniband.informinfo.gid", "GID", FTIPv6, 0, 0, 16},
	{0, "infiniband.informinfo.lidrangebegin", "LIDRangeBegin", FTUint16, 0, 16, 2},
	{0, "infiniband.informinfo.lidrangeend", "LIDRangeEnd", FTUint16, 0, 18, 2},
	{0, "infiniband.informinfo.isgeneric", "IsGeneric", FTUint8, 0, 22, 1},
	{0, "infiniband.informinfo.subscribe", "Subscribe", FTUint8, 0, 23, 1},
	{0, "infiniband.informinfo.type", "Type", FTUint16, 0, 24, 2},
	{0, "infiniband.informinfo.trapnumberdeviceid", "TrapNumberDeviceID", FTUint16, 0, 26, 2},
	{0, "infiniband.informinfo.qpn", "QPN", FTUint24, 0, 28, 3},
	{0, "infiniband.informinfo.resptimevalue", "RespTimeValue", FTUint8, 0x1f, 31, 1},
	{0, "infiniband.informinfo.producertypevendorid", "ProducerTypeVendorID", FTUint24, 0, 33, 3},
}

func init() {
	// InformInfo's fields sit at 0 in an InformInfo and after the
	// 24-byte record ID in an InformInfoRecord.
	for _, f := range informInfoFields {
		a, r := f, f
		a.attr = SAAttrInformInfo
		r.attr, r.off = SAAttrInformInfoRecord, f.off+24
		saFields = append(saFields, a, r)
	}
}

// multipathSDGIDs appends the SGIDs then DGIDs of a MultiPathRecord
// (SGIDCount + DGIDCount GIDs from byte 24), as far as rec holds them.
func multipathSDGIDs(rec []byte, out []Value) []Value {
	if len(rec) < 17 {
		return out
	}
	n := int(rec[15]) + int(rec[16])
	for i := range n {
		off := 24 + 16*i
		if off+16 > len(rec) {
			break
		}
		out = append(out, Value{B: rec[off : off+16]})
	}
	return out
}

// value extracts the field from rec as tshark shows it: the masked bits,
// shifted down.
func (f *saField) value(rec []byte) (Value, bool) {
	if f.off+f.ln > len(rec) {
		return Value{}, false
	}
	b := rec[f.off : f.off+f.ln]
	switch f.t {
	case FTIPv6, FTBytes:
		return Value{B: b}, true
	}
	v := beUint(b)
	if f.mask != 0 {
		v = v & f.mask >> bits.TrailingZeros64(f.mask)
	}
	return Value{U: v}, true
}

// saRecordsOf calls f with each record of attribute attr the packet
// holds (or completes, see saRecordData).
func (p *Packet) saRecordsOf(attr uint16, f func(rec []byte)) {
	if p.Has&HdrMAD == 0 || !p.SA.Valid || p.MAD.AttributeID != attr {
		return
	}
	SARecords(p.saRecordData(), p.MAD.MethodByte(), p.SA.AttributeOffset, f)
}

// registerSAFields registers the RMPP header, the SA header and the SA
// record fields under ib, named, typed and based as Wireshark 4.0 declares
// them. Record fields have one occurrence per record: a GetTableResp
// holds several. They are Stateful: the records of a transfer of several
// RMPP segments exist only once a tracker has reassembled it.
func registerSAFields(ib *Field) {
	sa := func(p *Packet) bool { return p.SA.Valid }
	rmpp := hdrField("infiniband.rmpp", "RMPP (Reliable Multi-Packet Transaction Protocol)", FTBytes, HdrMAD, func(p *Packet) []byte { return sub(p.SA.Contents, 0, RMPPLen) })
	rmpp.Parent = ib
	rmpp.SetPresence(HdrMAD, sa)
	u := func(parent *Field, abbrev, name string, t FieldType, mask uint64, off, ln int, ok func(*Packet) bool, get func(*Packet) uint64) *Field {
		return condUint(parent, abbrev, name, t, BaseHex, mask, off, ln, func(p *Packet) bool {
			return p.SA.Valid && p.SA.Has(off, ln) && (ok == nil || ok(p))
		}, get)
	}
	typ := func(ts ...uint8) func(*Packet) bool {
		return func(p *Packet) bool {
			for _, t := range ts {
				if p.SA.RMPP.Type == t {
					return true
				}
			}
			return false
		}
	}
	r := func(p *Packet) *RMPP { return &p.SA.RMPP }
	u(rmpp, "infiniband.rmpp.rmppversion", "RMPP Type", FTUint8, 0, 0, 1, nil, func(p *Packet) uint64 { return uint64(r(p).Version) })
	rt := u(rmpp, "infiniband.rmpp.rmpptype", "RMPP Type", FTUint8, 0, 1, 1, nil, func(p *Packet) uint64 { return uint64(r(p).Type) })
	rt.names = func(v uint64) string {
		if v <= 4 {
			return [...]string{"Not an RMPP Packet", "DATA", "ACK", "STOP", "ABORT"}[v]
		}
		return ""
	}
	// Wireshark shows RRespTime with mask 0xf0: the top 4 of its 5 bits.
	u(rmpp, "infiniband.rmpp.rresptime", "R Resp Time", FTUint8, 0xf0, 2, 1, nil, func(p *Packet) uint64 { return uint64(r(p).RRespTime >> 1) })
	u(rmpp, "infiniband.rmpp.rmppflags", "RMPP Flags", FTUint8, 0x0f, 2, 1, nil, func(p *Packet) uint64 { return uint64(r(p).RRespTime<<3|r(p).Flags) & 0x0f })
	u(rmpp, "infiniband.rmpp.rmppstatus", "RMPP Status", FTUint8, 0, 3, 1, nil, func(p *Packet) uint64 { return uint64(r(p).Status) })
	u(rmpp, "infiniband.rmpp.data1", "RMPP Data 1", FTUint32, 0, 4, 4, typ(RMPPTypeNone), func(p *Packet) uint64 { return uint64(r(p).Data1) })
	u(rmpp, "infiniband.rmpp.data2", "RMPP Data 2", FTUint32, 0, 8, 4, typ(RMPPTypeNone), func(p *Packet) uint64 { return uint64(r(p).Data2) })
	u(rmpp, "infiniband.rmpp.segmentnumber", "Segment Number", FTUint32, 0, 4, 4, typ(RMPPTypeData, RMPPTypeAck), func(p *Packet) uint64 { return uint64(r(p).Data1) })
	u(rmpp, "infiniband.rmpp.payloadlength", "Payload Length", FTUint32, 0, 8, 4, typ(RMPPTypeData), func(p *Packet) uint64 { return uint64(r(p).Data2) })
	u(rmpp, "infiniband.rmpp.newwindowlast", "New Window Last", FTUint32, 0, 8, 4, typ(RMPPTypeAck), func(p *Packet) uint64 { return uint64(r(p).Data2) })
	rest := func(p *Packet) []byte {
		if !p.SA.Valid {
			return nil
		}
		return sub(p.SA.Contents, RMPPLen, RMPPSegLen)
	}
	// Wireshark puts the 220 bytes after the RMPP header under the
	// 12-byte RMPP item; here they sit beside it, with their own range,
	// so that every item lies within its parent.
	td := bytesField(ib, "infiniband.rmpp.transferreddata", "Transferred Data", FTBytes, -1, RMPPSegLen, rest)
	td.SetPresence(HdrMAD, typ(RMPPTypeData))
	ed := bytesField(ib, "infiniband.rmpp.extendederrordata", "Optional Extended Error Data", FTBytes, -1, RMPPSegLen, rest)
	ed.SetPresence(HdrMAD, typ(RMPPTypeStop, RMPPTypeAbort))
	td.span, ed.span = rest, rest

	// The SA item: Wireshark's "SA Packet" covers the whole MAD, then the
	// attribute (the 200 bytes of SA data), then each record's item.
	drd := multiField(ib, "infiniband.sa.drdlid", "SA Packet (Subnet Administration)", FTBytes, BaseNone, HdrMAD, func(p *Packet, out []Value) []Value {
		if !p.SA.Valid || !p.SA.Has(0, RMPPLen+SAHeaderLen) {
			return out
		}
		out = append(out, Value{B: p.MAD.Bytes()}, Value{B: sub(p.SA.Contents, RMPPLen+SAHeaderLen, SADataLen)})
		if a := saAttrOf(p.MAD.AttributeID); a != nil && a.item > 0 {
			p.saRecordsOf(a.id, func(rec []byte) {
				if b := sub(rec, a.rid, a.item); len(b) > 0 {
					out = append(out, Value{B: b})
				}
			})
		}
		return out
	})
	drd.span = func(p *Packet) []byte { return p.MAD.Bytes() }
	sah := func(p *Packet) bool { return true }
	for _, f := range []*Field{
		u(drd, "infiniband.sa.smkey", "SM_Key (Verification Key)", FTUint64, 0, 12, 8, sah, func(p *Packet) uint64 { return p.SA.SMKey }),
		u(drd, "infiniband.sa.attributeoffset", "Attribute Offset", FTUint16, 0, 20, 2, sah, func(p *Packet) uint64 { return uint64(p.SA.AttributeOffset) }),
		u(drd, "infiniband.sa.componentmask", "Component Mask", FTUint64, 0, 24, 8, sah, func(p *Packet) uint64 { return p.SA.ComponentMask }),
	} {
		f.Off += MADHeaderLen // the SA item starts at the MAD header
	}

	var stateful []*Field
	order := []string{}
	rows := map[string][]saField{}
	for _, f := range saFields {
		if _, ok := rows[f.abbrev]; !ok {
			order = append(order, f.abbrev)
		}
		rows[f.abbrev] = append(rows[f.abbrev], f)
	}
	for _, abbrev := range order {
		fs := rows[abbrev]
		base := BaseHex
		if fs[0].t == FTIPv6 || fs[0].t == FTBytes {
			base = BaseNone
		}
		f := multiField(drd, abbrev, fs[0].name, fs[0].t, base, HdrMAD, func(p *Packet, out []Value) []Value {
			// Rows of one attribute are consecutive (ServiceData, 4
			// times): each record gives its occurrences in turn.
			for i := 0; i < len(fs); {
				j := i + 1
				for j < len(fs) && fs[j].attr == fs[i].attr {
					j++
				}
				group := fs[i:j]
				p.saRecordsOf(group[0].attr, func(rec []byte) {
					for k := range group {
						if v, ok := group[k].value(rec); ok {
							out = append(out, v)
						}
					}
				})
				i = j
			}
			return out
		})
		f.Bitmask, f.Off, f.Len = fs[0].mask, -1, fs[0].ln
		stateful = append(stateful, f)
		saRecordFields = append(saRecordFields, saRecordField{f, fs})
		isSARecord[f] = true
	}
	sd := multiField(drd, "infiniband.multipathrecord.sdgid", "SDGID", FTIPv6, BaseNone, HdrMAD, func(p *Packet, out []Value) []Value {
		p.saRecordsOf(SAAttrMultiPathRecord, func(rec []byte) { out = multipathSDGIDs(rec, out) })
		return out
	})
	saRecordFields = append(saRecordFields, saRecordField{f: sd})
	isSARecord[sd] = true
	stateful = append(stateful, sd, drd)
	for _, f := range stateful {
		f.Stateful = true
	}
}

// saRecordField is a registered SA record field and its rows (none for
// the MultiPathRecord GIDs, read by multipathSDGIDs).
type saRecordField struct {
	f    *Field
	rows []saField
}

// saRecordFields are the SA record fields in registration order.
var saRecordFields []saRecordField

// IsSARecordField reports whether f is a field of an SA record: it has
// one occurrence per record (WalkSARecords gives them record by record).
func IsSARecordField(f *Field) bool { return isSARecord[f] }

// isSARecord is the set of saRecordFields, for IsSARecordField (the -V
// tree asks it of every field of every packet).
var isSARecord = map[*Field]bool{}

// WalkSARecords calls record for each record the packet's SA MAD holds
// (or the RMPP transfer it completes: see Analysis.MAD), in order, then
// field for each value of that record's fields, in registration order:
// what the SA record fields give, grouped by record, for a tree.
func WalkSARecords(p *Packet, record func(i int, attr uint16), field func(f *Field, v Value)) {
	if p.Has&HdrMAD == 0 || !p.SA.Valid {
		return
	}
	attr := p.MAD.AttributeID
	i := 0
	SARecords(p.saRecordData(), p.MAD.MethodByte(), p.SA.AttributeOffset, func(rec []byte) {
		record(i, attr)
		i++
		var buf [4]Value
		for _, rf := range saRecordFields {
			vals := buf[:0]
			if rf.rows == nil {
				if attr == SAAttrMultiPathRecord {
					vals = multipathSDGIDs(rec, vals)
				}
			}
			for k := range rf.rows {
				if rf.rows[k].attr == attr {
					if v, ok := rf.rows[k].value(rec); ok {
						vals = append(vals, v)
					}
				}
			}
			for _, v := range vals {
				field(rf.f, v)
			}
		}
	})
}
