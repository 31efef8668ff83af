package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// MAD sizes (IBA 13.4.2). A MAD on QP0/QP1 is 256 bytes: the common header
// and 232 bytes of class-specific data.
const (
	MADLen       = 256
	MADHeaderLen = 24
	MADDataLen   = MADLen - MADHeaderLen
)

// Management classes (IBA 13.4.4, Table 143).
const (
	MgmtClassSubnLIDRouted   uint8 = 0x01
	MgmtClassSubnAdm         uint8 = 0x03
	MgmtClassPerf            uint8 = 0x04
	MgmtClassBM              uint8 = 0x05
	MgmtClassDevMgt          uint8 = 0x06
	MgmtClassCM              uint8 = 0x07
	MgmtClassSNMP            uint8 = 0x08
	MgmtClassCC              uint8 = 0x21
	MgmtClassSubnDirectRoute uint8 = 0x81
)

// MAD methods (IBA 13.4.5, Table 144), as the whole method byte: the
// response bit (0x80) is part of the *Resp values.
const (
	MADMethodGet           uint8 = 0x01
	MADMethodSet           uint8 = 0x02
	MADMethodSend          uint8 = 0x03
	MADMethodTrap          uint8 = 0x05
	MADMethodReport        uint8 = 0x06
	MADMethodTrapRepress   uint8 = 0x07
	MADMethodGetTable      uint8 = 0x12
	MADMethodGetTraceTable uint8 = 0x13
	MADMethodGetMulti      uint8 = 0x14
	MADMethodDelete        uint8 = 0x15
	MADMethodGetResp       uint8 = 0x81
	MADMethodReportResp    uint8 = 0x86
	MADMethodGetTableResp  uint8 = 0x92
	MADMethodGetMultiResp  uint8 = 0x94
	MADMethodDeleteResp    uint8 = 0x95
)

// MAD is the common header of a Management Datagram (IBA 13.4.2), the
// payload of a UD SEND to QP0 (SMI) or QP1 (GSI). Contents is the 24-byte
// header, Payload the class-specific data (232 bytes in a 256-byte MAD).
//
//	+---------------+---------------+---------------+-+-------------+
//	| BaseVersion   | MgmtClass     | ClassVersion  |R|  Method (7) |
//	+---------------+---------------+---------------+-+-------------+
//	|          Status (16)          |       ClassSpecific (16)      |
//	+-------------------------------+-------------------------------+
//	|                      TransactionID (64)                       |
//	+-------------------------------+-------------------------------+
//	|        AttributeID (16)       |         Reserved (16)         |
//	+-------------------------------+-------------------------------+
//	|                    AttributeModifier (32)                     |
//	+---------------------------------------------------------------+
type MAD struct {
	layers.BaseLayer
	BaseVersion       uint8
	MgmtClass         uint8
	ClassVersion      uint8
	R                 bool  // response bit, the top bit of the method byte
	Method            uint8 // 7 bits, without R (see MethodByte)
	Status            uint16
	ClassSpecific     uint16
	TransactionID     uint64
	AttributeID       uint16
	Reserved          uint16
	AttributeModifier uint32

	mad []byte // header and data, at most MADLen bytes (what Wireshark shows as the MAD)
}

// LayerType returns LayerTypeMAD.
func (m *MAD) LayerType() gopacket.LayerType { return LayerTypeMAD }

// CanDecode returns LayerTypeMAD.
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }

// NextLayerType returns LayerTypeCM for a Communication Management MAD and
// the payload layer otherwise.
func (m *MAD) NextLayerType() gopacket.LayerType {
	if m.MgmtClass == MgmtClassCM {
		return LayerTypeCM
	}
	if IsSMP(m.MgmtClass) {
		return LayerTypeSMP
	}
	if m.MgmtClass == MgmtClassSubnAdm {
		return LayerTypeSA
	}
	return gopacket.LayerTypePayload
}

// MethodByte returns the method byte as sent: R<<7 | Method.
func (m *MAD) MethodByte() uint8 {
	if m.R {
		return 0x80 | m.Method&0x7F
	}
	return m.Method & 0x7F
}

// Bytes returns the MAD as decoded: header and data, at most MADLen bytes
// (nil for a MAD built by hand).
func (m *MAD) Bytes() []byte { return m.mad }

// DecodeFromBytes decodes the MAD header at the start of data. It needs the
// 24 header bytes; when data holds fewer than MADLen bytes it still decodes
// the header, sets Payload to what is there and returns an error wrapping
// ErrTruncated.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MADHeaderLen {
		df.SetTruncated()
		return truncated("mad", MADHeaderLen, len(data))
	}
	m.BaseVersion, m.MgmtClass, m.ClassVersion = data[0], data[1], data[2]
	m.R, m.Method = data[3]&0x80 != 0, data[3]&0x7F
	m.Status = binary.BigEndian.Uint16(data[4:])
	m.ClassSpecific = binary.BigEndian.Uint16(data[6:])
	m.TransactionID = binary.BigEndian.Uint64(data[8:])
	m.AttributeID = binary.BigEndian.Uint16(data[16:])
	m.Reserved = binary.BigEndian.Uint16(data[18:])
	m.AttributeModifier = binary.BigEndian.Uint32(data[20:])
	m.Contents, m.Payload = data[:MADHeaderLen], data[MADHeaderLen:]
	m.mad = data[:min(len(data), MADLen)]
	if len(data) < MADLen {
		df.SetTruncated()
		return truncated("mad", MADLen, len(data))
	}
	return nil
}

// SerializeTo prepends the 24-byte MAD header.
func (m *MAD) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(MADHeaderLen)
	if err != nil {
		return err
	}
	d[0], d[1], d[2], d[3] = m.BaseVersion, m.MgmtClass, m.ClassVersion, m.MethodByte()
	binary.BigEndian.PutUint16(d[4:], m.Status)
	binary.BigEndian.PutUint16(d[6:], m.ClassSpecific)
	binary.BigEndian.PutUint64(d[8:], m.TransactionID)
	binary.BigEndian.PutUint16(d[16:], m.AttributeID)
	binary.BigEndian.PutUint16(d[18:], m.Reserved)
	binary.BigEndian.PutUint32(d[20:], m.AttributeModifier)
	return nil
}

// The MAD and CM fields (fields_cm.go) are registered here: this file's
// init runs after fields_ib.go's, which registers their parent.

// decodeMAD decodes the payload of a UD SEND to QP0/QP1 into p.MAD (and
// p.CM for a CM MAD) in place, without allocating. A MAD shorter than
// MADLen sets FlagTruncated; what fits is decoded.
func (p *Packet) decodeMAD(payload []byte) {
	err := p.MAD.DecodeFromBytes(payload, noFeedback)
	if len(payload) < MADHeaderLen {
		p.truncatedAt("mad", MADHeaderLen, len(payload))
		return
	}
	p.Has |= HdrMAD
	if err != nil {
		p.truncatedAt("mad", MADLen, len(payload))
	}
	if p.MAD.MgmtClass == MgmtClassSubnAdm { // (Decode cleared p.SA.Valid)
		p.SA.decode(p.MAD.Payload)
		return
	}
	if p.MAD.MgmtClass != MgmtClassCM {
		return
	}
	p.CM.AttributeID = p.MAD.AttributeID
	if err := p.CM.decode(p.MAD.Payload); err != nil {
		p.truncatedAt("cm", MADDataLen, len(p.MAD.Payload))
	}
	p.Has |= HdrCM
}

// decodeMADLayer decodes a MAD, then the CM attribute of a CM MAD, adding
// each as a layer; bytes after them are added as a payload layer. A MAD cut
// short is added as far as it goes and the packet is marked truncated.
func decodeMADLayer(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{}
	if err := m.DecodeFromBytes(data, p); err != nil && len(data) < MADHeaderLen {
		return err
	}
	p.AddLayer(m)
	rest := m.Payload
	if m.MgmtClass == MgmtClassCM {
		c := &CM{AttributeID: m.AttributeID}
		_ = c.DecodeFromBytes(rest, p) // a short attribute is kept: SetTruncated marks it
		p.AddLayer(c)
		rest = c.Payload
	}
	if IsSMP(m.MgmtClass) {
		s := &SMP{Directed: m.MgmtClass == MgmtClassSubnDirectRoute}
		_ = s.DecodeFromBytes(rest, p) // a short SMP is kept: SetTruncated marks it
		p.AddLayer(s)
		rest = s.Payload
	}
	if m.MgmtClass == MgmtClassSubnAdm {
		s := &SA{}
		_ = s.DecodeFromBytes(rest, p) // a short one is kept: SetTruncated marks it
		p.AddLayer(s)
		rest = s.Payload
	}
	if len(rest) > 0 {
		pl := gopacket.Payload(rest)
		p.AddLayer(&pl)
		p.SetApplicationLayer(&pl)
	}
	return nil
}

// decodeCMLayer decodes a CM attribute on its own. The attribute ID comes
// from the MAD layer already in the packet, if there is one; otherwise the
// attribute is kept as raw Contents.
func decodeCMLayer(data []byte, p gopacket.PacketBuilder) error {
	c := &CM{}
	if pk, ok := p.(gopacket.Packet); ok {
		if m, ok := pk.Layer(LayerTypeMAD).(*MAD); ok {
			c.AttributeID = m.AttributeID
		}
	}
	_ = c.DecodeFromBytes(data, p)
	p.AddLayer(c)
	if len(c.Payload) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}

var mgmtClassNames = map[uint8]string{
	MgmtClassSubnLIDRouted:   "Subnet Management (LID Routed)",
	MgmtClassSubnAdm:         "Subnet Administration",
	MgmtClassPerf:            "Performance Management",
	MgmtClassBM:              "Baseboard Management",
	MgmtClassDevMgt:          "Device Management",
	MgmtClassCM:              "Communication Management",
	MgmtClassSNMP:            "SNMP Tunneling",
	MgmtClassCC:              "Congestion Control",
	MgmtClassSubnDirectRoute: "Subnet Management (Directed Route)",
}

// MgmtClassString names a management class ("Communication Management"),
// or returns "" for an unknown one.
func MgmtClassString(c uint8) string {
	if n, ok := mgmtClassNames[c]; ok {
		return n
	}
	switch {
	case c >= 0x09 && c <= 0x0F, c >= 0x30 && c <= 0x4F:
		return "Vendor Specific"
	case c >= 0x10 && c <= 0x2F:
		return "Application Specific"
	}
	return ""
}

var madMethodNames = map[uint8]string{
	MADMethodGet:           "Get()",
	MADMethodSet:           "Set()",
	MADMethodSend:          "Send()",
	MADMethodTrap:          "Trap()",
	MADMethodReport:        "Report()",
	MADMethodTrapRepress:   "TrapRepress()",
	MADMethodGetTable:      "GetTable()",
	MADMethodGetTraceTable: "GetTraceTable()",
	MADMethodGetMulti:      "GetMulti()",
	MADMethodDelete:        "Delete()",
	MADMethodGetResp:       "GetResp()",
	MADMethodReportResp:    "ReportResp()",
	MADMethodGetTableResp:  "GetTableResp()",
	MADMethodGetMultiResp:  "GetMultiResp()",
	MADMethodDeleteResp:    "DeleteResp()",
}

// MADMethodString names a method byte as Wireshark does ("Send()"), or
// returns "".
func MADMethodString(m uint8) string { return madMethodNames[m] }

// registerMADFields registers the MAD common header fields under ib, named,
// typed and based as Wireshark 4.0 declares them (tshark -G fields);
// rocetap.mad.* holds what Wireshark lacks.
func registerMADFields(ib *Field) {
	// Wireshark's MAD item covers the whole MAD (header and data).
	mad := hdrField("infiniband.mad", "MAD (Management Datagram) Common Header", FTBytes, HdrMAD, func(p *Packet) []byte { return p.MAD.Bytes() })
	mad.Parent = ib
	uintField(mad, "infiniband.mad.baseversion", "Base Version", FTUint8, BaseHex, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.MAD.BaseVersion) })
	mc := uintField(mad, "infiniband.mad.mgmtclass", "Management Class", FTUint8, BaseHex, 0, 1, 1, func(p *Packet) uint64 { return uint64(p.MAD.MgmtClass) })
	mc.names = func(v uint64) string { return MgmtClassString(uint8(v)) }
	uintField(mad, "infiniband.mad.classversion", "Class Version", FTUint8, BaseHex, 0, 2, 1, func(p *Packet) uint64 { return uint64(p.MAD.ClassVersion) })
	me := uintField(mad, "infiniband.mad.method", "Method", FTUint8, BaseHex, 0, 3, 1, func(p *Packet) uint64 { return uint64(p.MAD.MethodByte()) })
	me.names = func(v uint64) string { return MADMethodString(uint8(v)) }
	boolField(mad, "rocetap.mad.r", "Response", 0x80, 3, func(p *Packet) bool { return p.MAD.R })
	uintField(mad, "infiniband.mad.status", "Status", FTUint16, BaseHex, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.MAD.Status) })
	uintField(mad, "infiniband.mad.classspecific", "Class Specific", FTUint16, BaseHex, 0, 6, 2, func(p *Packet) uint64 { return uint64(p.MAD.ClassSpecific) })
	uintField(mad, "infiniband.mad.transactionid", "Transaction ID", FTUint64, BaseHex, 0, 8, 8, func(p *Packet) uint64 { return p.MAD.TransactionID })
	// An attribute ID's name depends on the class: the tree's label says
	// it ("Attribute ID (NodeInfo)").
	ai := uintField(mad, "infiniband.mad.attributeid", "Attribute ID", FTUint16, BaseHex, 0, 16, 2, func(p *Packet) uint64 { return uint64(p.MAD.AttributeID) })
	ai.label = func(b []byte, p *Packet) []byte {
		return appendNamed(b, "Attribute ID", MADAttrString(p.MAD.MgmtClass, p.MAD.AttributeID))
	}
	uintField(mad, "rocetap.mad.reserved", "Reserved", FTUint16, BaseHex, 0, 18, 2, func(p *Packet) uint64 { return uint64(p.MAD.Reserved) })
	uintField(mad, "infiniband.mad.attributemodifier", "Attribute Modifier", FTUint32, BaseHex, 0, 20, 4, func(p *Packet) uint64 { return uint64(p.MAD.AttributeModifier) })
	bytesField(mad, "infiniband.mad.data", "MAD Data Payload", FTBytes, MADHeaderLen, MADDataLen, func(p *Packet) []byte {
		if len(p.MAD.Payload) == 0 {
			return nil
		}
		return p.MAD.Payload[:min(len(p.MAD.Payload), MADDataLen)]
	})
}
