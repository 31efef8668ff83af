package decode

import "encoding/binary"

// MAD and CM fields, named, typed and based as Wireshark 4.0 declares them
// (tshark -G fields), so -T fields output matches tshark's. Wireshark's
// own quirks are kept where they change what it prints (see the comments);
// what Wireshark lacks (MRA, SIDR, LAP, APR, the spec values it gets wrong)
// is under rocetap.mad.* and rocetap.cm.*.
//
// registerMADFields runs from mad.go's init rather than from an init here:
// init functions run in file-name order, and these fields need the
// "infiniband" protocol field that fields_ib.go registers.
func registerMADFields() {
	ib := FieldByName("infiniband")

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
	// Attribute IDs are named as CM attributes, the class rocetap decodes.
	ai := uintField(mad, "infiniband.mad.attributeid", "Attribute ID", FTUint16, BaseHex, 0, 16, 2, func(p *Packet) uint64 { return uint64(p.MAD.AttributeID) })
	ai.names = func(v uint64) string { return CMAttrString(uint16(v)) }
	uintField(mad, "rocetap.mad.reserved", "Reserved", FTUint16, BaseHex, 0, 18, 2, func(p *Packet) uint64 { return uint64(p.MAD.Reserved) })
	uintField(mad, "infiniband.mad.attributemodifier", "Attribute Modifier", FTUint32, BaseHex, 0, 20, 4, func(p *Packet) uint64 { return uint64(p.MAD.AttributeModifier) })
	bytesField(mad, "infiniband.mad.data", "MAD Data Payload", FTBytes, MADHeaderLen, MADDataLen, func(p *Packet) []byte {
		if len(p.MAD.Payload) == 0 {
			return nil
		}
		return p.MAD.Payload[:min(len(p.MAD.Payload), MADDataLen)]
	})

	// Wireshark puts a CM attribute under an item named
	// infiniband.smplid.smpdata; CM fields' offsets are from its start.
	cm := hdrField("infiniband.smplid.smpdata", "SMP Data", FTBytes, HdrCM, func(p *Packet) []byte { return p.CM.Contents })
	cm.Parent = ib
	stringField(cm, "rocetap.cm.attribute", "CM attribute", HdrCM, func(p *Packet) string { return CMAttrString(p.CM.AttributeID) })

	// u registers an integer field of attribute attr, present when the
	// capture holds its bytes and when(p), if given, holds.
	u := func(attr uint16, when func(*Packet) bool, abbrev, name string, t FieldType, base Base, mask uint64, off, ln int, get func(c *CM) uint64) *Field {
		return condUint(cm, abbrev, name, t, base, mask, off, ln,
			func(p *Packet) bool {
				return p.CM.AttributeID == attr && p.CM.Has(off, ln) && (when == nil || when(p))
			},
			func(p *Packet) uint64 { return get(&p.CM) })
	}
	// bs registers a bytes field of attribute attr; get returns nil when
	// the field is absent.
	bs := func(attr uint16, when func(*Packet) bool, abbrev, name string, t FieldType, off, ln int, get func(c *CM) []byte) *Field {
		return bytesField(cm, abbrev, name, t, off, ln, func(p *Packet) []byte {
			if p.CM.AttributeID != attr || (when != nil && !when(p)) {
				return nil
			}
			return get(&p.CM)
		})
	}
	// gid returns a GID as an FT_IPv6 value, when the capture holds it.
	gid := func(off int, g func(c *CM) *[16]byte) func(c *CM) []byte {
		return func(c *CM) []byte {
			if !c.Has(off, 16) {
				return nil
			}
			return g(c)[:]
		}
	}
	ipv4 := func(g *[16]byte) uint64 { return uint64(binary.BigEndian.Uint32(g[12:])) }
	reason := func(f *Field, names func(uint64) string) { f.names = names }

	// REQ. Wireshark shows the primary GIDs as IPv4 addresses (bytes
	// 12-15) when the frame's destination is an IPv4 address, else as
	// IPv6; the IP CM fields replace the private data when the Service ID
	// is an IP CM one.
	const req = CMAttrREQ
	overIPv4 := func(p *Packet) bool { return p.Has&HdrIPv4 != 0 }
	notIPv4 := func(p *Packet) bool { return p.Has&HdrIPv4 == 0 }
	ipcm := func(p *Packet) bool { return p.CM.IsIPCM() }
	notIPCM := func(p *Packet) bool { return !p.CM.IsIPCM() }
	u(req, nil, "infiniband.cm.req", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(req, nil, "infiniband.cm.req.serviceid", "ServiceID", FTUint64, BaseHex, 0, 8, 8, func(c *CM) uint64 { return c.ServiceID })
	bs(req, ipcm, "infiniband.cm.req.serviceid.prefix", "Prefix", FTBytes, 8, 5, func(c *CM) []byte { return full(c.Contents, 8, 5) })
	u(req, ipcm, "infiniband.cm.req.serviceid.protocol", "Protocol", FTUint8, BaseHex, 0, 13, 1, func(c *CM) uint64 { return c.ServiceID >> 16 & 0xFF })
	u(req, ipcm, "infiniband.cm.req.serviceid.dport", "Destination Port", FTUint16, BaseHex, 0, 14, 2, func(c *CM) uint64 { return c.ServiceID & 0xFFFF })
	u(req, nil, "infiniband.cm.req.localcaguid", "Local CA GUID", FTUint64, BaseHex, 0, 16, 8, func(c *CM) uint64 { return c.LocalCAGUID })
	u(req, nil, "infiniband.cm.req.localqkey", "Local Q_Key", FTUint32, BaseHex, 0, 28, 4, func(c *CM) uint64 { return uint64(c.LocalQKey) })
	u(req, nil, "infiniband.cm.req.localqpn", "Local QPN", FTUint24, BaseHex, 0, 32, 3, func(c *CM) uint64 { return uint64(c.LocalQPN) })
	u(req, nil, "infiniband.cm.req.responderres", "Responder Resources", FTUint8, BaseHex, 0, 35, 1, func(c *CM) uint64 { return uint64(c.ResponderResources) })
	u(req, nil, "infiniband.cm.req.localeecn", "Local EECN", FTUint24, BaseHex, 0, 36, 3, func(c *CM) uint64 { return uint64(c.LocalEECN) })
	u(req, nil, "infiniband.cm.req.initdepth", "Initiator Depth", FTUint8, BaseHex, 0, 39, 1, func(c *CM) uint64 { return uint64(c.InitiatorDepth) })
	u(req, nil, "infiniband.cm.req.remoteeecn", "Remote EECN", FTUint24, BaseHex, 0, 40, 3, func(c *CM) uint64 { return uint64(c.RemoteEECN) })
	u(req, nil, "infiniband.cm.req.remoteresptout", "Remote CM Response Timeout", FTUint8, BaseHex, 0xf8, 43, 1, func(c *CM) uint64 { return uint64(c.RemoteCMResponseTimeout) })
	tst := u(req, nil, "infiniband.cm.req.transpsvctype", "Transport Service Type", FTUint8, BaseHex, 0x6, 43, 1, func(c *CM) uint64 { return uint64(c.TransportServiceType) })
	reason(tst, func(v uint64) string { return [4]string{"RC", "UC", "RD", "Extended"}[v&3] })
	u(req, nil, "infiniband.cm.req.e2eflowctrl", "End-to-End Flow Control", FTUint8, BaseHex, 0x1, 43, 1, func(c *CM) uint64 { return b2u(c.EndToEndFlowControl) })
	u(req, nil, "infiniband.cm.req.startpsn", "Starting PSN", FTUint24, BaseHex, 0, 44, 3, func(c *CM) uint64 { return uint64(c.StartingPSN) })
	u(req, nil, "infiniband.cm.req.localresptout", "Local CM Response Timeout", FTUint8, BaseHex, 0xf8, 47, 1, func(c *CM) uint64 { return uint64(c.LocalCMResponseTimeout) })
	u(req, nil, "infiniband.cm.req.retrcount", "Retry Count", FTUint8, BaseHex, 0x7, 47, 1, func(c *CM) uint64 { return uint64(c.RetryCount) })
	u(req, nil, "infiniband.cm.req.pkey", "Partition Key", FTUint16, BaseHex, 0, 48, 2, func(c *CM) uint64 { return uint64(c.PKey) })
	mtu := u(req, nil, "infiniband.cm.req.pppmtu", "Path Packet Payload MTU", FTUint8, BaseHex, 0xf0, 50, 1, func(c *CM) uint64 { return uint64(c.PathMTU) })
	reason(mtu, func(v uint64) string {
		if v >= 1 && v <= 5 {
			return [...]string{"256", "512", "1024", "2048", "4096"}[v-1]
		}
		return ""
	})
	u(req, nil, "infiniband.cm.req.rdcexist", "RDC Exists", FTUint8, BaseHex, 0x8, 50, 1, func(c *CM) uint64 { return b2u(c.RDCExists) })
	u(req, nil, "infiniband.cm.req.rnrretrcount", "RNR Retry Count", FTUint8, BaseHex, 0x7, 50, 1, func(c *CM) uint64 { return uint64(c.RNRRetryCount) })
	u(req, nil, "infiniband.cm.req.maxcmretr", "Max CM Retries", FTUint8, BaseHex, 0xf0, 51, 1, func(c *CM) uint64 { return uint64(c.MaxCMRetries) })
	u(req, nil, "infiniband.cm.req.srq", "SRQ", FTUint8, BaseHex, 0x8, 51, 1, func(c *CM) uint64 { return b2u(c.SRQ) })
	u(req, nil, "infiniband.cm.req.ext_transport", "Extended Transport", FTUint8, BaseHex, 0x7, 51, 1, func(c *CM) uint64 { return uint64(c.ExtendedTransportType) })
	u(req, nil, "infiniband.cm.req.prim_locallid", "Primary Local Port LID", FTUint16, BaseDec, 0, 52, 2, func(c *CM) uint64 { return uint64(c.Primary.LocalLID) })
	u(req, nil, "infiniband.cm.req.prim_remotelid", "Primary Remote Port LID", FTUint16, BaseDec, 0, 54, 2, func(c *CM) uint64 { return uint64(c.Primary.RemoteLID) })
	bs(req, notIPv4, "infiniband.cm.req.prim_localgid", "Primary Local Port GID", FTIPv6, 56, 16, gid(56, func(c *CM) *[16]byte { return &c.Primary.LocalGID }))
	bs(req, notIPv4, "infiniband.cm.req.prim_remotegid", "Primary Remote Port GID", FTIPv6, 72, 16, gid(72, func(c *CM) *[16]byte { return &c.Primary.RemoteGID }))
	u(req, overIPv4, "infiniband.cm.req.prim_localgid_ipv4", "Primary Local Port GID", FTIPv4, BaseNone, 0, 68, 4, func(c *CM) uint64 { return ipv4(&c.Primary.LocalGID) })
	u(req, overIPv4, "infiniband.cm.req.prim_remotegid_ipv4", "Primary Remote Port GID", FTIPv4, BaseNone, 0, 84, 4, func(c *CM) uint64 { return ipv4(&c.Primary.RemoteGID) })
	// Wireshark reads the flow label as the top 20 bits of the first 3
	// bytes (so it shows only the label's top 12 bits), and the reserved
	// bits and packet rate from the first byte. rocetap.cm.req.* has the
	// spec values.
	u(req, nil, "infiniband.cm.req.prim_flowlabel", "Primary Flow Label", FTUint32, BaseHex, 0xfffff000, 88, 3, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 8) })
	u(req, nil, "infiniband.cm.req.prim_reserved0", "Reserved", FTUint32, BaseHex, 0xfc0, 88, 1, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 18 & 3) })
	u(req, nil, "infiniband.cm.req.prim_pktrate", "Primary Packet Rate", FTUint32, BaseHex, 0x3f, 88, 1, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 12 & 0x3f) })
	u(req, nil, "infiniband.cm.req.prim_tfcclass", "Primary Traffic Class", FTUint8, BaseHex, 0, 92, 1, func(c *CM) uint64 { return uint64(c.Primary.TrafficClass) })
	u(req, nil, "infiniband.cm.req.prim_hoplim", "Primary Hop Limit", FTUint8, BaseHex, 0, 93, 1, func(c *CM) uint64 { return uint64(c.Primary.HopLimit) })
	u(req, nil, "infiniband.cm.req.prim_sl", "Primary SL", FTUint8, BaseHex, 0xf0, 94, 1, func(c *CM) uint64 { return uint64(c.Primary.SL) })
	u(req, nil, "infiniband.cm.req.prim_subnetlocal", "Primary Subnet Local", FTUint8, BaseHex, 0x8, 94, 1, func(c *CM) uint64 { return b2u(c.Primary.SubnetLocal) })
	u(req, nil, "infiniband.cm.req.prim_reserved1", "Reserved", FTUint8, BaseHex, 0x7, 94, 1, func(c *CM) uint64 { return uint64(c.Primary.Reserved1) })
	u(req, nil, "infiniband.cm.req.prim_localacktout", "Primary Local ACK Timeout", FTUint8, BaseHex, 0xf8, 95, 1, func(c *CM) uint64 { return uint64(c.Primary.LocalACKTimeout) })
	u(req, nil, "infiniband.cm.req.prim_reserved2", "Reserved", FTUint8, BaseHex, 0x7, 95, 1, func(c *CM) uint64 { return uint64(c.Primary.Reserved2) })
	u(req, nil, "infiniband.cm.req.alt_locallid", "Alternate Local Port LID", FTUint16, BaseDec, 0, 96, 2, func(c *CM) uint64 { return uint64(c.Alternate.LocalLID) })
	u(req, nil, "infiniband.cm.req.alt_remotelid", "Alternate Remote Port LID", FTUint16, BaseDec, 0, 98, 2, func(c *CM) uint64 { return uint64(c.Alternate.RemoteLID) })
	bs(req, nil, "infiniband.cm.req.alt_localgid", "Alternate Local Port GID", FTBytes, 100, 16, gid(100, func(c *CM) *[16]byte { return &c.Alternate.LocalGID }))
	bs(req, nil, "infiniband.cm.req.alt_remotegid", "Alternate Remote Port GID", FTBytes, 116, 16, gid(116, func(c *CM) *[16]byte { return &c.Alternate.RemoteGID }))
	u(req, nil, "infiniband.cm.req.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 132, 3, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 8) })
	u(req, nil, "infiniband.cm.req.alt_reserved0", "Reserved", FTUint32, BaseHex, 0xfc0, 132, 1, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 18 & 3) })
	u(req, nil, "infiniband.cm.req.alt_pktrate", "Alternate Packet Rate", FTUint32, BaseHex, 0x3f, 132, 1, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 12 & 0x3f) })
	u(req, nil, "infiniband.cm.req.alt_tfcclass", "Alternate Traffic Class", FTUint8, BaseHex, 0, 136, 1, func(c *CM) uint64 { return uint64(c.Alternate.TrafficClass) })
	u(req, nil, "infiniband.cm.req.alt_hoplim", "Alternate Hop Limit", FTUint8, BaseHex, 0, 137, 1, func(c *CM) uint64 { return uint64(c.Alternate.HopLimit) })
	u(req, nil, "infiniband.cm.req.alt_sl", "Alternate SL", FTUint8, BaseHex, 0xf0, 138, 1, func(c *CM) uint64 { return uint64(c.Alternate.SL) })
	u(req, nil, "infiniband.cm.req.alt_subnetlocal", "Alternate Subnet Local", FTUint8, BaseHex, 0x8, 138, 1, func(c *CM) uint64 { return b2u(c.Alternate.SubnetLocal) })
	// Wireshark registers the reserved bits after the alternate local ACK
	// timeout under the same name as those after the subnet local bit, so
	// the field occurs twice.
	ar1 := multiField(cm, "infiniband.cm.req.alt_reserved1", "Reserved", FTUint8, BaseHex, 0, func(p *Packet, out []Value) []Value {
		c := &p.CM
		if c.AttributeID != req {
			return out
		}
		if c.Has(138, 1) {
			out = append(out, Value{U: uint64(c.Alternate.Reserved1)})
		}
		if c.Has(139, 1) {
			out = append(out, Value{U: uint64(c.Alternate.Reserved2)})
		}
		return out
	})
	ar1.Bitmask, ar1.Off, ar1.Len = 0x7, 138, 2
	u(req, nil, "infiniband.cm.req.alt_localacktout", "Alternate Local ACK Timeout", FTUint8, BaseHex, 0xf8, 139, 1, func(c *CM) uint64 { return uint64(c.Alternate.LocalACKTimeout) })
	bs(req, notIPCM, "infiniband.cm.req.private", "PrivateData", FTBytes, 140, 92, func(c *CM) []byte { return c.PrivateData })
	bs(req, ipcm, "infiniband.cm.req.ip_cm", "IP CM Request Msg", FTBytes, 140, 92, func(c *CM) []byte { return c.PrivateData })
	u(req, ipcm, "infiniband.cm.req.ip_cm.majv", "IP CM Major Version", FTUint8, BaseHex, 0xf0, 140, 1, func(c *CM) uint64 { return uint64(c.Contents[140] >> 4) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.minv", "IP CM Minor Version", FTUint8, BaseHex, 0xf, 140, 1, func(c *CM) uint64 { return uint64(c.Contents[140] & 0xF) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.ipv", "IP CM IP Version", FTUint8, BaseHex, 0xf0, 141, 1, func(c *CM) uint64 { return uint64(c.Contents[141] >> 4) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.reserved", "IP CM Reserved", FTUint8, BaseHex, 0xf, 141, 1, func(c *CM) uint64 { return uint64(c.Contents[141] & 0xF) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.sport", "IP CM Source Port", FTUint16, BaseHex, 0, 142, 2, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint16(c.Contents[142:])) })
	ipcmV4 := func(p *Packet) bool { return p.CM.IsIPCM() && p.CM.Has(141, 1) && p.CM.Contents[141]>>4 == 4 }
	ipcmV6 := func(p *Packet) bool { return p.CM.IsIPCM() && p.CM.Has(141, 1) && p.CM.Contents[141]>>4 != 4 }
	bs(req, ipcmV6, "infiniband.cm.req.ip_cm.sip6", "IP CM Source IP", FTIPv6, 144, 16, func(c *CM) []byte { return full(c.Contents, 144, 16) })
	bs(req, ipcmV6, "infiniband.cm.req.ip_cm.dip6", "IP CM Destination IP", FTIPv6, 160, 16, func(c *CM) []byte { return full(c.Contents, 160, 16) })
	u(req, ipcmV4, "infiniband.cm.req.ip_cm.sip4", "IP CM Source IP", FTIPv4, BaseNone, 0, 156, 4, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint32(c.Contents[156:])) })
	u(req, ipcmV4, "infiniband.cm.req.ip_cm.dip4", "IP CM Destination IP", FTIPv4, BaseNone, 0, 172, 4, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint32(c.Contents[172:])) })
	bs(req, ipcm, "infiniband.cm.req.ip_cm.private", "IP CM Consumer PrivateData", FTBytes, 176, 56, func(c *CM) []byte { return sub(c.Contents, 176, 56) })
	u(req, nil, "rocetap.cm.req.prim_flowlabel", "Primary Flow Label", FTUint32, BaseHex, 0xfffff000, 88, 4, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel) })
	u(req, nil, "rocetap.cm.req.prim_pktrate", "Primary Packet Rate", FTUint8, BaseHex, 0x3f, 91, 1, func(c *CM) uint64 { return uint64(c.Primary.PacketRate) })
	u(req, nil, "rocetap.cm.req.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 132, 4, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel) })
	u(req, nil, "rocetap.cm.req.alt_pktrate", "Alternate Packet Rate", FTUint8, BaseHex, 0x3f, 135, 1, func(c *CM) uint64 { return uint64(c.Alternate.PacketRate) })
	u(req, nil, "rocetap.cm.req.sapsupported", "SAP Supported", FTBoolean, BaseNone, 0x04, 139, 1, func(c *CM) uint64 { return uint64(c.Alternate.Reserved2 >> 2 & 1) })

	// REP.
	const rep = CMAttrREP
	u(rep, nil, "infiniband.cm.rep", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rep, nil, "infiniband.cm.rep.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(rep, nil, "infiniband.cm.rep.localqkey", "Local Q_Key", FTUint32, BaseHex, 0, 8, 4, func(c *CM) uint64 { return uint64(c.LocalQKey) })
	u(rep, nil, "infiniband.cm.rep.localqpn", "Local QPN", FTUint24, BaseHex, 0, 12, 3, func(c *CM) uint64 { return uint64(c.LocalQPN) })
	u(rep, nil, "infiniband.cm.rep.localeecn", "Local EE Context Number", FTUint24, BaseHex, 0, 16, 3, func(c *CM) uint64 { return uint64(c.LocalEECN) })
	u(rep, nil, "infiniband.cm.rep.startpsn", "Starting PSN", FTUint24, BaseHex, 0, 20, 3, func(c *CM) uint64 { return uint64(c.StartingPSN) })
	u(rep, nil, "infiniband.cm.rep.respres", "Responder Resources", FTUint8, BaseHex, 0, 24, 1, func(c *CM) uint64 { return uint64(c.ResponderResources) })
	u(rep, nil, "infiniband.cm.rep.initdepth", "Initiator Depth", FTUint8, BaseHex, 0, 25, 1, func(c *CM) uint64 { return uint64(c.InitiatorDepth) })
	u(rep, nil, "infiniband.cm.rep.tgtackdelay", "Target ACK Delay", FTUint8, BaseHex, 0xf8, 26, 1, func(c *CM) uint64 { return uint64(c.TargetACKDelay) })
	u(rep, nil, "infiniband.cm.rep.failoveracc", "Failover Accepted", FTUint8, BaseHex, 0x6, 26, 1, func(c *CM) uint64 { return uint64(c.FailoverAccepted) })
	u(rep, nil, "infiniband.cm.rep.e2eflowctrl", "End-To-End Flow Control", FTUint8, BaseHex, 0x1, 26, 1, func(c *CM) uint64 { return b2u(c.EndToEndFlowControl) })
	u(rep, nil, "infiniband.cm.rep.rnrretrcount", "RNR Retry Count", FTUint8, BaseHex, 0xe0, 27, 1, func(c *CM) uint64 { return uint64(c.RNRRetryCount) })
	u(rep, nil, "infiniband.cm.rep.srq", "SRQ", FTUint8, BaseHex, 0x10, 27, 1, func(c *CM) uint64 { return b2u(c.SRQ) })
	u(rep, nil, "infiniband.cm.rep.reserved", "Reserved", FTUint8, BaseHex, 0xf, 27, 1, func(c *CM) uint64 { return uint64(c.Reserved0) })
	u(rep, nil, "infiniband.cm.rep.localcaguid", "Local CA GUID", FTUint64, BaseHex, 0, 28, 8, func(c *CM) uint64 { return c.LocalCAGUID })
	bs(rep, nil, "infiniband.cm.rep.private", "PrivateData", FTBytes, 36, 196, func(c *CM) []byte { return c.PrivateData })

	// RTU.
	const rtu = CMAttrRTU
	u(rtu, nil, "infiniband.cm.rtu.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rtu, nil, "infiniband.cm.rtu.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	bs(rtu, nil, "infiniband.cm.rtu.private", "PrivateData", FTBytes, 8, 224, func(c *CM) []byte { return c.PrivateData })

	// REJ. Wireshark's reserved0 masks only the low 2 of the 6 reserved
	// bits after Message REJected.
	const rej = CMAttrREJ
	u(rej, nil, "infiniband.cm.rej.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rej, nil, "infiniband.cm.rej.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	mr := u(rej, nil, "infiniband.cm.rej.msgrej", "Message REJected", FTUint8, BaseHex, 0xc0, 8, 1, func(c *CM) uint64 { return uint64(c.MessageRejected) })
	reason(mr, func(v uint64) string { return [4]string{"REQ", "REP", "No message", ""}[v&3] })
	u(rej, nil, "infiniband.cm.rej.reserved0", "Reserved", FTUint8, BaseHex, 0x3, 8, 1, func(c *CM) uint64 { return uint64(c.Reserved0 & 3) })
	u(rej, nil, "infiniband.cm.rej.rejinfolen", "Reject Info Length", FTUint8, BaseHex, 0xfe, 9, 1, func(c *CM) uint64 { return uint64(c.RejectInfoLength) })
	u(rej, nil, "infiniband.cm.rej.reserved1", "Reserved", FTUint8, BaseHex, 0x1, 9, 1, func(c *CM) uint64 { return uint64(c.Reserved1) })
	rr := u(rej, nil, "infiniband.cm.rej.reason", "Reason", FTUint16, BaseHex, 0, 10, 2, func(c *CM) uint64 { return uint64(c.Reason) })
	reason(rr, func(v uint64) string { return CMRejReasonString(uint16(v)) })
	bs(rej, nil, "infiniband.cm.rej.ari", "Additional Reject Information (ARI)", FTBytes, 12, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(rej, nil, "infiniband.cm.rej.private", "PrivateData", FTBytes, 84, 148, func(c *CM) []byte { return c.PrivateData })

	// DREQ. Wireshark names the remote QPN under infiniband.cm.req.
	const dreq = CMAttrDREQ
	u(dreq, nil, "infiniband.cm.dreq.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(dreq, nil, "infiniband.cm.dreq.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(dreq, nil, "infiniband.cm.req.remoteqpneecn", "Remote QPN/EECN", FTUint24, BaseHex, 0, 8, 3, func(c *CM) uint64 { return uint64(c.RemoteQPN) })
	bs(dreq, nil, "infiniband.cm.dreq.private", "PrivateData", FTBytes, 12, 220, func(c *CM) []byte { return c.PrivateData })

	// DREP.
	const drep = CMAttrDREP
	u(drep, nil, "infiniband.cm.drsp.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(drep, nil, "infiniband.cm.drsp.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	bs(drep, nil, "infiniband.cm.drsp.private", "PrivateData", FTBytes, 8, 224, func(c *CM) []byte { return c.PrivateData })

	// MRA: Wireshark 4.0 does not decode it.
	const mra = CMAttrMRA
	u(mra, nil, "rocetap.cm.mra.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(mra, nil, "rocetap.cm.mra.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	mm := u(mra, nil, "rocetap.cm.mra.msgmraed", "Message MRAed", FTUint8, BaseHex, 0xc0, 8, 1, func(c *CM) uint64 { return uint64(c.MessageMRAed) })
	reason(mm, func(v uint64) string { return [4]string{"REQ", "REP", "LAP", ""}[v&3] })
	u(mra, nil, "rocetap.cm.mra.servicetimeout", "Service Timeout", FTUint8, BaseHex, 0xf8, 9, 1, func(c *CM) uint64 { return uint64(c.ServiceTimeout) })
	bs(mra, nil, "rocetap.cm.mra.private", "PrivateData", FTBytes, 10, 222, func(c *CM) []byte { return c.PrivateData })

	// SIDR_REQ and SIDR_REP: Wireshark 4.0 does not decode them.
	const sreq, srep = CMAttrSIDRREQ, CMAttrSIDRREP
	u(sreq, nil, "rocetap.cm.sidr_req.requestid", "Request ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.RequestID) })
	u(sreq, nil, "rocetap.cm.sidr_req.pkey", "Partition Key", FTUint16, BaseHex, 0, 4, 2, func(c *CM) uint64 { return uint64(c.PKey) })
	u(sreq, nil, "rocetap.cm.sidr_req.serviceid", "ServiceID", FTUint64, BaseHex, 0, 8, 8, func(c *CM) uint64 { return c.ServiceID })
	bs(sreq, nil, "rocetap.cm.sidr_req.private", "PrivateData", FTBytes, 16, 216, func(c *CM) []byte { return c.PrivateData })
	u(srep, nil, "rocetap.cm.sidr_rep.requestid", "Request ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.RequestID) })
	st := u(srep, nil, "rocetap.cm.sidr_rep.status", "Status", FTUint8, BaseHex, 0, 4, 1, func(c *CM) uint64 { return uint64(c.Status) })
	reason(st, func(v uint64) string {
		if v < 6 {
			return [...]string{"Valid QPN", "Service ID not supported", "Rejected by service provider", "No QP available", "Redirect", "Unsupported class version"}[v]
		}
		return ""
	})
	u(srep, nil, "rocetap.cm.sidr_rep.addinfolen", "Additional Information Length", FTUint8, BaseHex, 0, 5, 1, func(c *CM) uint64 { return uint64(c.AddInfoLength) })
	u(srep, nil, "rocetap.cm.sidr_rep.qpn", "QPN", FTUint24, BaseHex, 0, 8, 3, func(c *CM) uint64 { return uint64(c.QPN) })
	u(srep, nil, "rocetap.cm.sidr_rep.serviceid", "ServiceID", FTUint64, BaseHex, 0, 12, 8, func(c *CM) uint64 { return c.ServiceID })
	u(srep, nil, "rocetap.cm.sidr_rep.qkey", "Q_Key", FTUint32, BaseHex, 0, 20, 4, func(c *CM) uint64 { return uint64(c.QKey) })
	bs(srep, nil, "rocetap.cm.sidr_rep.addinfo", "ClassPortInfo", FTBytes, 24, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(srep, nil, "rocetap.cm.sidr_rep.private", "PrivateData", FTBytes, 96, 136, func(c *CM) []byte { return c.PrivateData })

	// LAP and APR: Wireshark 4.0 does not decode them.
	const lap, apr = CMAttrLAP, CMAttrAPR
	u(lap, nil, "rocetap.cm.lap.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(lap, nil, "rocetap.cm.lap.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(lap, nil, "rocetap.cm.lap.remoteqpneecn", "Remote QPN/EECN", FTUint24, BaseHex, 0, 12, 3, func(c *CM) uint64 { return uint64(c.RemoteQPN) })
	u(lap, nil, "rocetap.cm.lap.remoteresptout", "Remote CM Response Timeout", FTUint8, BaseHex, 0xf8, 15, 1, func(c *CM) uint64 { return uint64(c.RemoteCMResponseTimeout) })
	u(lap, nil, "rocetap.cm.lap.alt_locallid", "Alternate Local Port LID", FTUint16, BaseDec, 0, 20, 2, func(c *CM) uint64 { return uint64(c.Alternate.LocalLID) })
	u(lap, nil, "rocetap.cm.lap.alt_remotelid", "Alternate Remote Port LID", FTUint16, BaseDec, 0, 22, 2, func(c *CM) uint64 { return uint64(c.Alternate.RemoteLID) })
	bs(lap, nil, "rocetap.cm.lap.alt_localgid", "Alternate Local Port GID", FTIPv6, 24, 16, gid(24, func(c *CM) *[16]byte { return &c.Alternate.LocalGID }))
	bs(lap, nil, "rocetap.cm.lap.alt_remotegid", "Alternate Remote Port GID", FTIPv6, 40, 16, gid(40, func(c *CM) *[16]byte { return &c.Alternate.RemoteGID }))
	u(lap, nil, "rocetap.cm.lap.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 56, 4, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel) })
	u(lap, nil, "rocetap.cm.lap.alt_tfcclass", "Alternate Traffic Class", FTUint8, BaseHex, 0, 59, 1, func(c *CM) uint64 { return uint64(c.Alternate.TrafficClass) })
	u(lap, nil, "rocetap.cm.lap.alt_hoplim", "Alternate Hop Limit", FTUint8, BaseHex, 0, 60, 1, func(c *CM) uint64 { return uint64(c.Alternate.HopLimit) })
	u(lap, nil, "rocetap.cm.lap.alt_pktrate", "Alternate Packet Rate", FTUint8, BaseHex, 0x3f, 61, 1, func(c *CM) uint64 { return uint64(c.Alternate.PacketRate) })
	u(lap, nil, "rocetap.cm.lap.alt_sl", "Alternate SL", FTUint8, BaseHex, 0xf0, 62, 1, func(c *CM) uint64 { return uint64(c.Alternate.SL) })
	u(lap, nil, "rocetap.cm.lap.alt_subnetlocal", "Alternate Subnet Local", FTUint8, BaseHex, 0x8, 62, 1, func(c *CM) uint64 { return b2u(c.Alternate.SubnetLocal) })
	u(lap, nil, "rocetap.cm.lap.alt_localacktout", "Alternate Local ACK Timeout", FTUint8, BaseHex, 0xf8, 63, 1, func(c *CM) uint64 { return uint64(c.Alternate.LocalACKTimeout) })
	bs(lap, nil, "rocetap.cm.lap.private", "PrivateData", FTBytes, 64, 168, func(c *CM) []byte { return c.PrivateData })
	u(apr, nil, "rocetap.cm.apr.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(apr, nil, "rocetap.cm.apr.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(apr, nil, "rocetap.cm.apr.addinfolen", "Additional Information Length", FTUint8, BaseHex, 0, 8, 1, func(c *CM) uint64 { return uint64(c.AddInfoLength) })
	as := u(apr, nil, "rocetap.cm.apr.apstatus", "AP Status", FTUint8, BaseHex, 0, 9, 1, func(c *CM) uint64 { return uint64(c.Status) })
	reason(as, func(v uint64) string {
		if v < 14 {
			return [...]string{"Path loaded", "Invalid Communication ID", "Unsupported request", "Rejected", "Redirect", "Is current path", "Invalid QPN/EECN", "Invalid LID", "Invalid GID", "Invalid Flow Label", "Invalid Traffic Class", "Invalid Hop Limit", "Invalid Packet Rate", "Invalid SL"}[v]
		}
		return ""
	})
	bs(apr, nil, "rocetap.cm.apr.addinfo", "Additional Information", FTBytes, 12, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(apr, nil, "rocetap.cm.apr.private", "PrivateData", FTBytes, 84, 148, func(c *CM) []byte { return c.PrivateData })
}

// full returns b[off:off+n] when b holds all of it, else nil.
func full(b []byte, off, n int) []byte {
	if len(b) < off+n {
		return nil
	}
	return b[off : off+n]
}
