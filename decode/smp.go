package decode

import (
	"encoding/binary"
	"math/bits"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// SMP sizes (IBA 14.2.1): the 232 bytes after the MAD header of a subnet
// management packet hold the M_Key, 32 bytes of routing information, the
// 64-byte SMP data (the attribute) and 128 bytes that are reserved
// (LID routed) or the initial and return paths (directed route).
const (
	SMPDataOff = 40 // offset of the SMP data in the MAD data
	SMPDataLen = 64
	SMPPathLen = 64
	smpInitOff = SMPDataOff + SMPDataLen // initial path, directed route
	smpRetOff  = smpInitOff + SMPPathLen // return path, directed route
)

// SMP is the class-specific part of a subnet management packet (IBA
// 14.2.1.1 and 14.2.1.2): the 232 bytes after the MAD header of a MAD of
// class 0x01 (LID routed) or 0x81 (directed route). A directed-route SMP
// keeps its hop pointer and hop count in the MAD header's class-specific
// field and its D bit in the top bit of the status (see MAD.HopPointer,
// MAD.HopCount, MAD.Direction).
//
//	LID routed                         directed route
//	 0 M_Key (64)                       0 M_Key (64)
//	 8 Reserved (256)                   8 DrSLID (16) | DrDLID (16)
//	                                   12 Reserved (224)
//	40 SMP data (512): the attribute   40 SMP data (512)
//	104 Reserved (1024)               104 Initial path (512)
//	                                  168 Return path (512)
type SMP struct {
	layers.BaseLayer
	Directed    bool // class 0x81
	MKey        uint64
	DrSLID      uint16 // directed route
	DrDLID      uint16 // directed route
	Reserved    []byte // LID routed: bytes 8-39; directed route: 12-39
	Data        []byte // the attribute, up to SMPDataLen bytes
	InitialPath []byte // directed route, up to SMPPathLen bytes
	ReturnPath  []byte // directed route, up to SMPPathLen bytes
	Reserved2   []byte // LID routed: bytes 104-231
}

// LayerType returns LayerTypeSMP.
func (s *SMP) LayerType() gopacket.LayerType { return LayerTypeSMP }

// CanDecode returns LayerTypeSMP.
func (s *SMP) CanDecode() gopacket.LayerClass { return LayerTypeSMP }

// NextLayerType returns the payload layer (bytes after the 232 bytes,
// normally none).
func (s *SMP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes the SMP part of a MAD (the MAD data). Directed
// must be set first (from the MAD's class). A short SMP decodes as far as
// it goes and returns an error wrapping ErrTruncated.
func (s *SMP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	dir := s.Directed
	*s = SMP{Directed: dir}
	n := min(len(data), MADDataLen)
	s.Contents, s.Payload = data[:n], data[n:]
	d := data[:n]
	if len(d) >= 8 {
		s.MKey = binary.BigEndian.Uint64(d)
	}
	if dir {
		if len(d) >= 12 {
			s.DrSLID = binary.BigEndian.Uint16(d[8:])
			s.DrDLID = binary.BigEndian.Uint16(d[10:])
		}
		s.Reserved = sub(d, 12, SMPDataOff-12)
		s.InitialPath = sub(d, smpInitOff, SMPPathLen)
		s.ReturnPath = sub(d, smpRetOff, SMPPathLen)
	} else {
		s.Reserved = sub(d, 8, SMPDataOff-8)
		s.Reserved2 = sub(d, smpInitOff, MADDataLen-smpInitOff)
	}
	s.Data = sub(d, SMPDataOff, SMPDataLen)
	if n < MADDataLen {
		df.SetTruncated()
		return truncated("smp", MADDataLen, n)
	}
	return nil
}

// SerializeTo prepends the 232 bytes; fields left nil are zeros.
func (s *SMP) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(MADDataLen)
	if err != nil {
		return err
	}
	clear(d)
	binary.BigEndian.PutUint64(d, s.MKey)
	if s.Directed {
		binary.BigEndian.PutUint16(d[8:], s.DrSLID)
		binary.BigEndian.PutUint16(d[10:], s.DrDLID)
		copy(d[12:SMPDataOff], s.Reserved)
		copy(d[smpInitOff:smpRetOff], s.InitialPath)
		copy(d[smpRetOff:], s.ReturnPath)
	} else {
		copy(d[8:SMPDataOff], s.Reserved)
		copy(d[smpInitOff:], s.Reserved2)
	}
	copy(d[SMPDataOff:smpInitOff], s.Data)
	return nil
}

// HopPointer is the hop pointer of a directed-route SMP: the top byte of
// the class-specific field.
func (m *MAD) HopPointer() uint8 { return uint8(m.ClassSpecific >> 8) }

// HopCount is the hop count of a directed-route SMP: the low byte of the
// class-specific field.
func (m *MAD) HopCount() uint8 { return uint8(m.ClassSpecific) }

// Direction is the D bit of a directed-route SMP (the top bit of the
// status): set on the way back from the destination.
func (m *MAD) Direction() bool { return m.Status&MADStatusDirectionBit != 0 }

// smpData returns the SMP data (the attribute) of an SMP, cut at the end
// of the capture, or nil when p holds no SMP.
func smpData(p *Packet) []byte {
	if p.Has&HdrMAD == 0 || !IsSMP(p.MAD.MgmtClass) {
		return nil
	}
	return sub(p.MAD.Payload, SMPDataOff, SMPDataLen)
}

// beUint reads b (at most 8 bytes) as a big-endian integer.
func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// ftLen is the number of bytes of an integer field type.
func ftLen(t FieldType) int {
	switch t {
	case FTUint8:
		return 1
	case FTUint16:
		return 2
	case FTUint24:
		return 3
	case FTUint32:
		return 4
	}
	return 8
}

// attrField is one integer field of a MAD attribute: type, bit mask (0 for
// the whole bytes) and offset within the attribute.
type attrField struct {
	abbrev, name string
	t            FieldType
	mask         uint64
	off          int
}

// extract reads the field from attribute bytes a at off+at (at: the
// offset of a table entry), shifted down by its mask; ok is false when a
// is too short.
func (f *attrField) extract(a []byte, at int) (uint64, bool) {
	n := ftLen(f.t)
	o := f.off + at
	if o+n > len(a) {
		return 0, false
	}
	v := beUint(a[o : o+n])
	if f.mask != 0 {
		v = (v & f.mask) >> bits.TrailingZeros64(f.mask)
	}
	return v, true
}

// attrFields registers the fields of one attribute under parent: data
// returns the attribute bytes when p holds that attribute (nil otherwise),
// count entries of stride bytes each (1 and 0 for a plain attribute).
func attrFields(parent *Field, data func(*Packet) []byte, count, stride int, fs []attrField) map[string]*Field {
	out := make(map[string]*Field, len(fs))
	for i := range fs {
		f := &fs[i]
		if count == 1 {
			out[f.abbrev] = condUint(parent, f.abbrev, f.name, f.t, BaseHex, f.mask, f.off, ftLen(f.t),
				func(p *Packet) bool { _, ok := f.extract(data(p), 0); return ok },
				func(p *Packet) uint64 { v, _ := f.extract(data(p), 0); return v })
			continue
		}
		fl := multiField(parent, f.abbrev, f.name, f.t, BaseHex, 0, func(p *Packet, vs []Value) []Value {
			a := data(p)
			for e := 0; e < count; e++ {
				v, ok := f.extract(a, e*stride)
				if !ok {
					break
				}
				vs = append(vs, Value{U: v})
			}
			return vs
		})
		fl.Bitmask = f.mask
		out[f.abbrev] = fl
	}
	return out
}

// attrBytes registers a bytes field of an attribute: data's bytes
// [off, off+n), cut at the end of the capture, absent when data is nil or
// ends before off.
func attrBytes(parent *Field, data func(*Packet) []byte, abbrev, name string, off, n int) *Field {
	return bytesField(parent, abbrev, name, FTBytes, off, n, func(p *Packet) []byte { return sub(data(p), off, n) })
}

// smpAttr returns a function giving the SMP data of p when p is an SMP of
// attribute attr.
func smpAttr(attr uint16) func(*Packet) []byte {
	return func(p *Packet) []byte {
		if p.Has&HdrMAD != 0 && p.SA.Valid {
			return saEmbedded(p, attr) // an SA record holding the attribute (sa.go)
		}
		if p.Has&HdrMAD == 0 || p.MAD.AttributeID != attr {
			return nil
		}
		return smpData(p)
	}
}

// smpdataValue is what Wireshark shows as infiniband.smplid.smpdata for a
// MAD that is not CM: the SMP data of an SMP; the whole MAD data of the
// classes it leaves as bytes (BM, DevMgt, SNMP, vendor, application, and
// PMA attributes other than ClassPortInfo, PortCounters and
// PortCountersExtended).
func smpdataValue(p *Packet) []byte {
	c := p.MAD.MgmtClass
	switch {
	case IsSMP(c):
		return smpData(p)
	case c == MgmtClassPerf && pmaDecoded(p.MAD.AttributeID):
		return nil
	case c == MgmtClassPerf, c == MgmtClassBM, c == MgmtClassDevMgt, c == MgmtClassSNMP, c >= 0x09 && c <= 0x4F:
		if len(p.MAD.Payload) == 0 {
			return nil
		}
		return p.MAD.Payload[:min(len(p.MAD.Payload), MADDataLen)]
	}
	return nil
}

var (
	portStateNames = map[uint64]string{0: "No State Change", 1: "Down (includes failed links)", 2: "Initialized", 3: "Armed", 4: "Active"}
	physStateNames = map[uint64]string{0: "No State Change", 1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "Phy Test"}
	widthNames     = map[uint64]string{1: "1x", 2: "4x", 4: "8x", 8: "12x", 16: "2x"}
	speedNames     = map[uint64]string{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps"}
	mtuNames       = map[uint64]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	vlCapNames     = map[uint64]string{1: "VL0", 2: "VL0, VL1", 3: "VL0 - VL3", 4: "VL0 - VL7", 5: "VL0 - VL14"}
	nodeTypeNames  = map[uint64]string{1: "Channel Adapter", 2: "Switch", 3: "Router"}
	smStateNames   = map[uint64]string{0: "Not Active", 1: "Discovering", 2: "Standby", 3: "Master"}
)

func names(m map[uint64]string) func(uint64) string { return func(v uint64) string { return m[v] } }

// registerSMPFields registers the SMP fields under ib, named, typed and
// based as Wireshark 4.0 declares them (tshark -G fields). It also makes
// infiniband.smplid.smpdata, which CM registers for its attribute, carry
// the SMP data of an SMP and the bytes of the classes left undecoded, as
// tshark does.
func registerSMPFields(ib *Field) {
	isLID := func(p *Packet) bool { return p.MAD.MgmtClass == MgmtClassSubnLIDRouted }
	isDR := func(p *Packet) bool { return p.MAD.MgmtClass == MgmtClassSubnDirectRoute }
	isSMP := func(p *Packet) bool { return IsSMP(p.MAD.MgmtClass) }
	has := func(off, n int) func(*Packet) bool {
		return func(p *Packet) bool { return len(p.MAD.Payload) >= off+n }
	}
	// Wireshark's SMP items cover the whole MAD.
	lid := hdrField("infiniband.smplid", "Subnet Management Packet (LID Routed)", FTBytes, HdrMAD, func(p *Packet) []byte { return p.MAD.Bytes() })
	lid.Parent = ib
	lid.SetPresence(HdrMAD, isLID)
	dr := hdrField("infiniband.smpdirected", "Subnet Management Packet (Directed Route)", FTBytes, HdrMAD, func(p *Packet) []byte { return p.MAD.Bytes() })
	dr.Parent = ib
	dr.SetPresence(HdrMAD, isDR)
	mk := condUint(lid, "infiniband.smplid.mkey", "M_Key", FTUint64, BaseHex, 0, MADHeaderLen, 8,
		func(p *Packet) bool { return isSMP(p) && has(0, 8)(p) },
		func(p *Packet) uint64 { return binary.BigEndian.Uint64(p.MAD.Payload) })
	mk.hdr = HdrMAD

	condUint(dr, "infiniband.smpdirected.smpstatus", "Status", FTUint16, BaseHex, 0, 4, 2, isDR, func(p *Packet) uint64 { return uint64(p.MAD.Status) })
	condUint(dr, "infiniband.smpdirected.hoppointer", "Hop Pointer", FTUint8, BaseHex, 0, 6, 1, isDR, func(p *Packet) uint64 { return uint64(p.MAD.HopPointer()) })
	condUint(dr, "infiniband.smpdirected.hopcount", "Hop Count", FTUint8, BaseHex, 0, 7, 1, isDR, func(p *Packet) uint64 { return uint64(p.MAD.HopCount()) })
	drAt := func(off, n int) func(*Packet) bool {
		return func(p *Packet) bool { return isDR(p) && has(off, n)(p) }
	}
	condUint(dr, "infiniband.smpdirected.drslid", "DrSLID", FTUint16, BaseHex, 0, MADHeaderLen+8, 2, drAt(8, 2), func(p *Packet) uint64 { return uint64(binary.BigEndian.Uint16(p.MAD.Payload[8:])) })
	condUint(dr, "infiniband.smpdirected.drdlid", "DrDLID", FTUint16, BaseHex, 0, MADHeaderLen+10, 2, drAt(10, 2), func(p *Packet) uint64 { return uint64(binary.BigEndian.Uint16(p.MAD.Payload[10:])) })
	condUint(dr, "infiniband.smpdirected.d", "D (Direction Bit)", FTUint64, BaseHex, 0x8000, 4, 2, isDR, func(p *Packet) uint64 { return b2u(p.MAD.Direction()) })
	path := func(off int) func(*Packet) []byte {
		return func(p *Packet) []byte {
			if !isDR(p) {
				return nil
			}
			return sub(p.MAD.Payload, off, SMPPathLen)
		}
	}
	bytesField(dr, "infiniband.smpdirected.initialpath", "Initial Path", FTBytes, MADHeaderLen+smpInitOff, SMPPathLen, path(smpInitOff))
	bytesField(dr, "infiniband.smpdirected.returnpath", "Return Path", FTBytes, MADHeaderLen+smpRetOff, SMPPathLen, path(smpRetOff))

	// A vendor class with OUI (0x30-0x4F) names its vendor after the RMPP
	// header and a reserved byte (IBA 13.4.4); Wireshark 4.0 shows it as
	// bytes only.
	condUint(ib, "rocetap.mad.oui", "Vendor OUI", FTUint24, BaseHex, 0, MADHeaderLen+13, 3,
		func(p *Packet) bool {
			return p.Has&HdrMAD != 0 && IsVendorOUIClass(p.MAD.MgmtClass) && len(p.MAD.Payload) >= 16
		},
		func(p *Packet) uint64 { return beUint(p.MAD.Payload[13:16]) })

	// infiniband.smplid.smpdata: registered by CM (with its CM fields
	// under it); extended here to the SMP data and undecoded classes.
	sd := byName["infiniband.smplid.smpdata"]
	cmSpan, cmLabel := sd.span, sd.label
	sd.hdr = HdrMAD
	sd.span = func(p *Packet) []byte {
		if p.Has&HdrCM != 0 {
			return cmSpan(p)
		}
		return smpdataValue(p)
	}
	sd.values = func(p *Packet, out []Value) []Value {
		if b := sd.span(p); b != nil {
			return append(out, Value{B: b})
		}
		return out
	}
	sd.label = func(b []byte, p *Packet) []byte {
		if p.Has&HdrMAD == 0 || p.MAD.MgmtClass == MgmtClassCM {
			return cmLabel(b, p)
		}
		return b
	}
	// The attribute fields hang under an item of their own, registered
	// after the SMP header (the verbose tree nests in registration order),
	// named as tshark's tree names it: "Attribute (PortInfo)". Their
	// offsets are from its start.
	at := hdrField("rocetap.smp.attribute", "Attribute", FTBytes, HdrMAD, smpData)
	at.Parent = ib
	at.SetPresence(HdrMAD, func(p *Packet) bool { return smpData(p) != nil })
	at.label = func(b []byte, p *Packet) []byte {
		return appendNamed(b, "Attribute", MADAttrString(p.MAD.MgmtClass, p.MAD.AttributeID))
	}
	nd := smpAttr(SMPAttrNodeDescription)
	stringField(at, "infiniband.nodedescription.nodestring", "NodeString", HdrMAD, func(p *Packet) string { return nodeString(nd(p)) })

	ni := attrFields(at, smpAttr(SMPAttrNodeInfo), 1, 0, []attrField{
		{"infiniband.nodeinfo.baseversion", "BaseVersion", FTUint8, 0, 0},
		{"infiniband.nodeinfo.classversion", "ClassVersion", FTUint8, 0, 1},
		{"infiniband.nodeinfo.nodetype", "NodeType", FTUint8, 0, 2},
		{"infiniband.nodeinfo.numports", "NumPorts", FTUint8, 0, 3},
		{"infiniband.nodeinfo.systemimageguid", "SystemImageGUID", FTUint64, 0, 4},
		{"infiniband.nodeinfo.nodeguid", "NodeGUID", FTUint64, 0, 12},
		{"infiniband.nodeinfo.portguid", "PortGUID", FTUint64, 0, 20},
		{"infiniband.nodeinfo.partitioncap", "PartitionCap", FTUint16, 0, 28},
		{"infiniband.nodeinfo.deviceid", "DeviceID", FTUint16, 0, 30},
		{"infiniband.nodeinfo.revision", "Revision", FTUint32, 0, 32},
		{"infiniband.nodeinfo.localportnum", "LocalPortNum", FTUint8, 0, 36},
		{"infiniband.nodeinfo.vendorid", "VendorID", FTUint24, 0, 37},
	})
	ni["infiniband.nodeinfo.nodetype"].names = names(nodeTypeNames)

	attrFields(at, smpAttr(SMPAttrSwitchInfo), 1, 0, []attrField{
		{"infiniband.switchinfo.linearfdbcap", "LinearFDBCap", FTUint16, 0, 0},
		{"infiniband.switchinfo.randomfdbcap", "RandomFDBCap", FTUint16, 0, 2},
		{"infiniband.switchinfo.multicastfdbcap", "MulticastFDBCap", FTUint16, 0, 4},
		{"infiniband.switchinfo.linearfdbtop", "LinearFDBTop", FTUint16, 0, 6},
		{"infiniband.switchinfo.defaultport", "DefaultPort", FTUint8, 0, 8},
		{"infiniband.switchinfo.defaultmulticastprimaryport", "DefaultMulticastPrimaryPort", FTUint8, 0, 9},
		{"infiniband.switchinfo.defaultmulticastnotprimaryport", "DefaultMulticastNotPrimaryPort", FTUint8, 0, 10},
		{"infiniband.switchinfo.lifetimevalue", "LifeTimeValue", FTUint8, 0xf8, 11},
		{"infiniband.switchinfo.portstatechange", "PortStateChange", FTUint8, 0x04, 11},
		{"infiniband.switchinfo.optimizedsltovlmappingprogramming", "OptimizedSLtoVLMappingProgramming", FTUint8, 0x03, 11},
		{"infiniband.switchinfo.lidsperport", "LIDsPerPort", FTUint16, 0, 12},
		{"infiniband.switchinfo.partitionenforcementcap", "PartitionEnforcementCap", FTUint16, 0, 14},
		{"infiniband.switchinfo.inboundenforcementcap", "InboundEnforcementCap", FTUint8, 0x80, 16},
		{"infiniband.switchinfo.outboundenforcementcap", "OutboundEnforcementCap", FTUint8, 0x40, 16},
		{"infiniband.switchinfo.filterrawinboundcap", "FilterRawInboundCap", FTUint8, 0x20, 16},
		{"infiniband.switchinfo.filterrawoutboundcap", "FilterRawOutboundCap", FTUint8, 0x10, 16},
		{"infiniband.switchinfo.enhancedportzero", "EnhancedPortZero", FTUint8, 0x08, 16},
	})
	// Wireshark shows the eight GUIDs of a GUIDInfo block under the name
	// infiniband.switchinfo.guid.
	attrFields(at, smpAttr(SMPAttrGUIDInfo), 8, 8, []attrField{
		{"infiniband.switchinfo.guid", "GUID", FTUint64, 0, 0},
	})

	pi := attrFields(at, smpAttr(SMPAttrPortInfo), 1, 0, portInfoFields)
	pi["infiniband.portinfo.portstate"].names = names(portStateNames)
	pi["infiniband.portinfo.portphysicalstate"].names = names(physStateNames)
	pi["infiniband.portinfo.linkdowndefaultstate"].names = names(physStateNames)
	pi["infiniband.portinfo.linkwidthactive"].names = names(widthNames)
	pi["infiniband.portinfo.linkspeedactive"].names = names(speedNames)
	pi["infiniband.portinfo.neighbormtu"].names = names(mtuNames)
	pi["infiniband.portinfo.mtucap"].names = names(mtuNames)
	pi["infiniband.portinfo.vlcap"].names = names(vlCapNames)
	registerPortInfoExtFields(at, smpAttr(SMPAttrPortInfo)) // portinfo_ext.go

	pk := smpAttr(SMPAttrPKeyTable)
	attrBytes(at, pk, "infiniband.p_keytable.p_keytableblock", "P_KeyTableBlock", 0, SMPDataLen)
	attrFields(at, pk, 32, 2, []attrField{
		{"infiniband.p_keytable.membershiptype", "MembershipType", FTUint8, 0x80, 0},
		{"infiniband.p_keytable.p_keybase", "P_KeyBase", FTUint16, 0x7fff, 0},
	})
	attrFields(at, smpAttr(SMPAttrSLtoVLMappingTable), 8, 1, []attrField{
		{"infiniband.sltovlmappingtable.sltovlhighbits", "SL(x)toVL", FTUint8, 0xf0, 0},
		{"infiniband.sltovlmappingtable.sltovllowbits", "SL(x)toVL", FTUint8, 0x0f, 0},
	})
	attrFields(at, smpAttr(SMPAttrVLArbitrationTable), 32, 2, []attrField{
		{"infiniband.vlarbitrationtable.vl", "VL", FTUint8, 0x0f, 0},
		{"infiniband.vlarbitrationtable.weight", "Weight", FTUint8, 0, 1},
	})
	attrFields(at, smpAttr(SMPAttrLinearForwardingTable), 64, 1, []attrField{
		{"infiniband.linearforwardingtable.port", "Port", FTUint8, 0, 0},
	})
	attrFields(at, smpAttr(SMPAttrRandomForwardingTable), 16, 4, []attrField{
		{"infiniband.randomforwardingtable.lid", "LID", FTUint16, 0, 0},
		{"infiniband.randomforwardingtable.valid", "Valid", FTUint8, 0x80, 2},
		{"infiniband.randomforwardingtable.lmc", "LMC", FTUint8, 0x70, 2},
		{"infiniband.randomforwardingtable.port", "Port", FTUint8, 0, 3},
	})
	attrFields(at, smpAttr(SMPAttrMulticastForwardingTable), 32, 2, []attrField{
		{"infiniband.multicastforwardingtable.portmask", "PortMask", FTUint16, 0, 0},
	})
	sm := attrFields(at, smpAttr(SMPAttrSMInfo), 1, 0, []attrField{
		{"infiniband.sminfo.guid", "GUID", FTUint64, 0, 0},
		{"infiniband.sminfo.sm_key", "SM_Key", FTUint64, 0, 8},
		{"infiniband.sminfo.actcount", "ActCount", FTUint32, 0, 16},
		{"infiniband.sminfo.priority", "Priority", FTUint8, 0xf0, 20},
		{"infiniband.sminfo.smstate", "SMState", FTUint8, 0x0f, 20},
	})
	sm["infiniband.sminfo.smstate"].names = names(smStateNames)
	vd := smpAttr(SMPAttrVendorDiag)
	attrFields(at, vd, 1, 0, []attrField{{"infiniband.vendordiag.nextindex", "NextIndex", FTUint16, 0, 0}})
	attrBytes(at, vd, "infiniband.vendordiag.diagdata", "DiagData", 4, SMPDataLen-4)
	lw := smpAttr(SMPAttrLinkSpeedWidthPairsTable)
	attrFields(at, lw, 1, 0, []attrField{{"infiniband.linkspeedwidthpairstable.numtables", "NumTables", FTUint8, 0, 0}})
	attrBytes(at, lw, "infiniband.linkspeedwidthpairstable.portmask", "PortMask", 1, 32)
	attrFields(at, lw, 1, 0, []attrField{
		{"infiniband.linkspeedwidthpairstable.speedtwofive", "Speed 2.5 Gbps", FTUint8, 0x80, 33},
		{"infiniband.linkspeedwidthpairstable.speedfive", "Speed 5 Gbps", FTUint8, 0x80, 34},
		{"infiniband.linkspeedwidthpairstable.speedten", "Speed 10 Gbps", FTUint8, 0x80, 35},
	})
	attrFields(at, smpAttr(SMPAttrLedInfo), 1, 0, []attrField{{"infiniband.ledinfo.ledmask", "LedMask", FTUint8, 0x80, 0}})
	registerNoticeFields(at, smpAttr(SMPAttrNotice))
}

// portInfoFields: PortInfo (IBA 14.2.5.6, Table 152), offsets in bytes.
var portInfoFields = []attrField{
	{"infiniband.portinfo.m_key", "M_Key", FTUint64, 0, 0},
	{"infiniband.portinfo.guid", "GidPrefix", FTUint64, 0, 8},
	{"infiniband.portinfo.lid", "LID", FTUint16, 0, 16},
	{"infiniband.portinfo.mastersmlid", "MasterSMLID", FTUint16, 0, 18},
	{"infiniband.portinfo.capabilitymask", "CapabilityMask", FTUint32, 0, 20},
	{"infiniband.portinfo.capabilitymask.issm", "SM", FTUint32, 0x2, 20},
	{"infiniband.portinfo.capabilitymask.noticesupported", "NoticeSupported", FTUint32, 0x4, 20},
	{"infiniband.portinfo.capabilitymask.trapsupported", "TrapSupported", FTUint32, 0x8, 20},
	{"infiniband.portinfo.capabilitymask.optionalipdsupported", "OptionalIPDSupported", FTUint32, 0x10, 20},
	{"infiniband.portinfo.capabilitymask.automaticmigrationsupported", "AutomaticMigrationSupported", FTUint32, 0x20, 20},
	{"infiniband.portinfo.capabilitymask.slmappingsupported", "SLMappingSupported", FTUint32, 0x40, 20},
	{"infiniband.portinfo.capabilitymask.mkeynvram", "MKeyNVRAM", FTUint32, 0x80, 20},
	{"infiniband.portinfo.capabilitymask.pkeynvram", "PKeyNVRAM", FTUint32, 0x100, 20},
	{"infiniband.portinfo.capabilitymask.ledinfosupported", "LEDInfoSupported", FTUint32, 0x200, 20},
	{"infiniband.portinfo.capabilitymask.smdisabled", "SMdisabled", FTUint32, 0x400, 20},
	{"infiniband.portinfo.capabilitymask.systemimageguidsupported", "SystemImageGUIDSupported", FTUint32, 0x800, 20},
	{"infiniband.portinfo.capabilitymask.pkeyswitchexternalporttrapsupported", "PKeySwitchExternalPortTrapSupported", FTUint32, 0x1000, 20},
	{"rocetap.portinfo.capabilitymask.isextendedspeedssupported", "IsExtendedSpeedsSupported", FTUint32, PortCapExtendedSpeeds, 20},    // IBA 1.3 (portinfo_ext.go);
	{"rocetap.portinfo.capabilitymask.iscapabilitymask2supported", "IsCapabilityMask2Supported", FTUint32, PortCapCapabilityMask2, 20}, // Wireshark 4.0 names neither
	{"infiniband.portinfo.capabilitymask.communicationmanagementsupported", "CommunicationManagementSupported", FTUint32, 0x10000, 20},
	{"infiniband.portinfo.capabilitymask.snmptunnelingsupported", "SNMPTunnelingSupported", FTUint32, 0x20000, 20},
	{"infiniband.portinfo.capabilitymask.reinitsupported", "ReinitSupported", FTUint32, 0x40000, 20},
	{"infiniband.portinfo.capabilitymask.devicemanagementsupported", "DeviceManagementSupported", FTUint32, 0x80000, 20},
	{"infiniband.portinfo.capabilitymask.vendorclasssupported", "VendorClassSupported", FTUint32, 0x100000, 20},
	{"infiniband.portinfo.capabilitymask.drnoticesupported", "DRNoticeSupported", FTUint32, 0x200000, 20},
	{"infiniband.portinfo.capabilitymask.capabilitymasknoticesupported", "CapabilityMaskNoticeSupported", FTUint32, 0x400000, 20},
	{"infiniband.portinfo.capabilitymask.bootmanagementsupported", "BootManagementSupported", FTUint32, 0x800000, 20},
	{"infiniband.portinfo.capabilitymask.linkroundtriplatencysupported", "LinkRoundTripLatencySupported", FTUint32, 0x1000000, 20},
	{"infiniband.portinfo.capabilitymask.clientregistrationsupported", "ClientRegistrationSupported", FTUint32, 0x2000000, 20},
	{"infiniband.portinfo.capabilitymask.otherlocalchangesnoticesupported", "OtherLocalChangesNoticeSupported", FTUint32, 0x4000000, 20},
	{"infiniband.portinfo.capabilitymask.linkspeedwidthpairstablesupported", "LinkSpeedWIdthPairsTableSupported", FTUint32, 0x8000000, 20},
	{"infiniband.portinfo.diagcode", "DiagCode", FTUint16, 0, 24},
	{"infiniband.portinfo.m_keyleaseperiod", "M_KeyLeasePeriod", FTUint16, 0, 26},
	{"infiniband.portinfo.localportnum", "LocalPortNum", FTUint8, 0, 28},
	{"infiniband.portinfo.linkwidthenabled", "LinkWidthEnabled", FTUint8, 0, 29},
	{"infiniband.portinfo.linkwidthsupported", "LinkWidthSupported", FTUint8, 0, 30},
	{"infiniband.portinfo.linkwidthactive", "LinkWidthActive", FTUint8, 0, 31},
	{"infiniband.portinfo.linkspeedsupported", "LinkSpeedSupported", FTUint8, 0xf0, 32},
	{"infiniband.portinfo.portstate", "PortState", FTUint8, 0x0f, 32},
	{"infiniband.portinfo.portphysicalstate", "PortPhysicalState", FTUint8, 0xf0, 33},
	{"infiniband.portinfo.linkdowndefaultstate", "LinkDownDefaultState", FTUint8, 0x0f, 33},
	{"infiniband.portinfo.m_keyprotectbits", "M_KeyProtectBits", FTUint8, 0xc0, 34},
	{"infiniband.portinfo.lmc", "LMC", FTUint8, 0x07, 34},
	{"infiniband.portinfo.linkspeedactive", "LinkSpeedActive", FTUint8, 0xf0, 35},
	{"infiniband.portinfo.linkspeedenabled", "LinkSpeedEnabled", FTUint8, 0x0f, 35},
	{"infiniband.portinfo.neighbormtu", "NeighborMTU", FTUint8, 0xf0, 36},
	{"infiniband.portinfo.mastersmsl", "MasterSMSL", FTUint8, 0x0f, 36},
	{"infiniband.portinfo.vlcap", "VLCap", FTUint8, 0xf0, 37},
	{"infiniband.portinfo.inittype", "InitType", FTUint8, 0x0f, 37},
	{"infiniband.portinfo.vlhighlimit", "VLHighLimit", FTUint8, 0, 38},
	{"infiniband.portinfo.vlarbitrationhighcap", "VLArbitrationHighCap", FTUint8, 0, 39},
	{"infiniband.portinfo.vlarbitrationlowcap", "VLArbitrationLowCap", FTUint8, 0, 40},
	{"infiniband.portinfo.inittypereply", "InitTypeReply", FTUint8, 0xf0, 41},
	{"infiniband.portinfo.mtucap", "MTUCap", FTUint8, 0x0f, 41},
	{"infiniband.portinfo.vlstallcount", "VLStallCount", FTUint8, 0xe0, 42},
	{"infiniband.portinfo.hoqlife", "HOQLife", FTUint8, 0x1f, 42},
	{"infiniband.portinfo.operationalvls", "OperationalVLs", FTUint8, 0xf0, 43},
	{"infiniband.portinfo.partitionenforcementinbound", "PartitionEnforcementInbound", FTUint8, 0x08, 43},
	{"infiniband.portinfo.partitionenforcementoutbound", "PartitionEnforcementOutbound", FTUint8, 0x04, 43},
	{"infiniband.portinfo.filterrawinbound", "FilterRawInbound", FTUint8, 0x02, 43},
	{"infiniband.portinfo.filterrawoutbound", "FilterRawOutbound", FTUint8, 0x01, 43},
	{"infiniband.portinfo.m_keyviolations", "M_KeyViolations", FTUint16, 0, 44},
	{"infiniband.portinfo.p_keyviolations", "P_KeyViolations", FTUint16, 0, 46},
	{"infiniband.portinfo.q_keyviolations", "Q_KeyViolations", FTUint16, 0, 48},
	{"infiniband.portinfo.guidcap", "GUIDCap", FTUint8, 0, 50},
	{"infiniband.portinfo.clientreregister", "ClientReregister", FTUint8, 0x80, 51},
	{"rocetap.portinfo.multicastpkeytrapsuppressionenabled", "MulticastPKeyTrapSuppressionEnabled", FTUint8, 0x60, 51}, // IBA 1.2.1, not in Wireshark 4.0
	{"infiniband.portinfo.subnettimeout", "SubnetTimeOut", FTUint8, 0x1f, 51},
	{"infiniband.portinfo.resptimevalue", "RespTimeValue", FTUint8, 0x1f, 52},
	{"infiniband.portinfo.localphyerrors", "LocalPhyErrors", FTUint8, 0xf0, 53},
	{"infiniband.portinfo.overrunerrors", "OverrunErrors", FTUint8, 0x0f, 53},
	{"infiniband.portinfo.maxcredithint", "MaxCreditHint", FTUint16, 0, 54},
	{"infiniband.portinfo.linkroundtriplatency", "LinkRoundTripLatency", FTUint24, 0, 57},
}

// nodeString is a NodeDescription's text: the bytes up to the first NUL,
// with control characters replaced (it is shown on a terminal).
func nodeString(b []byte) string {
	if b == nil {
		return ""
	}
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// decodeSMPLayer decodes an SMP on its own: directed route when the MAD
// layer already in the packet says so.
func decodeSMPLayer(data []byte, p gopacket.PacketBuilder) error {
	s := &SMP{}
	if pk, ok := p.(gopacket.Packet); ok {
		if m, ok := pk.Layer(LayerTypeMAD).(*MAD); ok {
			s.Directed = m.MgmtClass == MgmtClassSubnDirectRoute
		}
	}
	_ = s.DecodeFromBytes(data, p)
	p.AddLayer(s)
	if len(s.Payload) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}
