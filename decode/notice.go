package decode

// registerNoticeFields registers the fields of a Notice (IBA 13.4.8.2,
// Table 153) under parent, data giving the attribute bytes (nil when p
// holds no Notice), and those of the generic traps' data details (IBA
// 14.2.5.1, Table 131, laid out as OpenSM's ib_mad_notice_attr), under
// Wireshark's infiniband.trap.* names.
//
//	0 IsGeneric (1) Type (7) | ProducerType/VendorID (24)
//	4 TrapNumber/DeviceID (16) | IssuerLID (16)
//	8 NoticeToggle (1) NoticeCount (15) | DataDetails (432) from byte 10
func registerNoticeFields(parent *Field, data func(*Packet) []byte) {
	attrFields(parent, data, 1, 0, []attrField{
		{"infiniband.notice.isgeneric", "IsGeneric", FTUint8, 0x80, 0},
		{"infiniband.notice.type", "Type", FTUint8, 0x7f, 0},
		{"infiniband.notice.producertypevendorid", "ProducerTypeVendorID", FTUint24, 0, 1},
		{"infiniband.notice.trapnumberdeviceid", "TrapNumberDeviceID", FTUint16, 0, 4},
		{"infiniband.notice.issuerlid", "IssuerLID", FTUint16, 0, 6},
		{"infiniband.notice.noticetoggle", "NoticeToggle", FTUint8, 0x80, 8},
		{"infiniband.notice.noticecount", "NoticeCount", FTUint16, 0x7fff, 8},
	})
	attrBytes(parent, data, "infiniband.notice.datadetails", "DataDetails", 10, 54)

	// trap returns the Notice bytes of a generic notice with one of the
	// trap numbers.
	trap := func(nums ...uint16) func(*Packet) []byte {
		return func(p *Packet) []byte {
			a := data(p)
			n, ok := genericTrap(a)
			if !ok {
				return nil
			}
			for _, t := range nums {
				if n == t {
					return a
				}
			}
			return nil
		}
	}
	gid := func(d func(*Packet) []byte, abbrev, name string, off int) {
		bytesField(parent, abbrev, name, FTIPv6, off, 16, func(p *Packet) []byte { return full(d(p), off, 16) })
	}
	// 64-67: a GID in or out of service, a multicast group created or
	// deleted.
	gid(trap(64, 65, 66, 67), "infiniband.trap.gidaddr", "GIDADDR", 16)
	// 68, 69: paths no longer valid, recomputed.
	attrFields(parent, trap(68, 69), 1, 0, []attrField{
		{"infiniband.trap.comp_mask", "COMP_MASK", FTUint64, 0, 10},
		{"infiniband.trap.wait_for_repath", "WAIT_FOR_REPATH", FTUint8, 0x80, 18},
	})
	// 128: link state change at a switch; 129-131: local link integrity,
	// buffer overrun, flow control watchdog at a port; 144: capability
	// mask or node description change; 145: system image GUID change;
	// 256: bad M_Key.
	multiField(parent, "infiniband.trap.lidaddr", "LIDADDR", FTUint16, BaseHex, 0, func(p *Packet, out []Value) []Value {
		if a := trap(128)(p); len(a) >= 12 {
			return append(out, Value{U: beUint(a[10:12])})
		}
		if a := trap(129, 130, 131, 144, 145, 256)(p); len(a) >= 14 {
			return append(out, Value{U: beUint(a[12:14])})
		}
		return out
	})
	// PORTNO: the port of traps 129-131 (byte 14), and the switch port
	// of trap 259 (byte 60).
	trapUint(parent, data, "infiniband.trap.portno", "PORTNO", FTUint8, 0, map[uint16]int{129: 14, 130: 14, 131: 14, 259: 60})
	attrFields(parent, trap(144), 1, 0, []attrField{
		{"infiniband.trap.otherlocalchanges", "OtherLocalChanges", FTUint8, 0x01, 15},
		{"infiniband.trap.capabilitymask", "CAPABILITYMASK", FTUint32, 0, 16},
		{"infiniband.trap.linkspeecenabledchange", "LinkSpeecEnabledChange", FTUint8, 0x04, 21},
		{"infiniband.trap.linkwidthenabledchange", "LinkWidthEnabledChange", FTUint8, 0x02, 21},
		{"infiniband.trap.nodedescriptionchange", "NodeDescriptionChange", FTUint8, 0x01, 21},
	})
	registerTrap144ExtFields(parent, trap(144)) // notice_ext.go
	attrFields(parent, trap(145), 1, 0, []attrField{
		{"infiniband.trap.systemimageguid", "SYSTEMIMAGEGUID", FTUint64, 0, 16},
	})
	t256 := trap(256)
	attrFields(parent, t256, 1, 0, []attrField{
		{"infiniband.trap.drslid", "DRSLID", FTUint16, 0, 14},
		{"infiniband.trap.method", "METHOD", FTUint8, 0, 16},
		{"infiniband.trap.attributeid", "ATTRIBUTEID", FTUint16, 0, 18},
		{"infiniband.trap.attributemodifier", "ATTRIBUTEMODIFIER", FTUint32, 0, 20},
		{"infiniband.trap.mkey", "MKEY", FTUint64, 0, 24},
		{"infiniband.trap.drnotice", "DRNotice", FTUint8, 0x80, 33},
		{"infiniband.trap.drpathtruncated", "DRPathTruncated", FTUint8, 0x40, 33},
		{"infiniband.trap.drhopcount", "DRHopCount", FTUint8, 0x3f, 33},
	})
	// After the M_Key a reserved byte (32), then the DR flags and hop
	// count (33) and the 30-byte return path (34-63): OpenSM's ntc_256,
	// Linux's ib_mad_notice_attr and Wireshark agree.
	attrBytes(parent, t256, "infiniband.trap.drnoticereturnpath", "DRNoticeReturnPath", 34, 30)
	// 257, 258: bad P_Key, bad Q_Key; 259: bad P_Key at a switch
	// external port, which has a 16-bit P_Key where 257 has a 32-bit key,
	// so its SL, QPs and GIDs come 2 bytes earlier, then the switch's LID
	// and port (OpenSM's ntc_257_258 and ntc_259).
	attrFields(parent, trap(257, 258, 259), 1, 0, []attrField{
		{"infiniband.trap.lidaddr1", "LIDADDR1", FTUint16, 0, 12},
		{"infiniband.trap.lidaddr2", "LIDADDR2", FTUint16, 0, 14},
	})
	attrFields(parent, trap(257, 258), 1, 0, []attrField{
		{"infiniband.trap.key", "KEY", FTUint32, 0, 16},
	})
	at := func(o257 int) map[uint16]int { return map[uint16]int{257: o257, 258: o257, 259: o257 - 2} }
	trapUint(parent, data, "infiniband.trap.sl", "SL", FTUint8, 0xf0, at(20))
	trapUint(parent, data, "infiniband.trap.qp1", "QP1", FTUint24, 0, at(21))
	trapUint(parent, data, "infiniband.trap.qp2", "QP2", FTUint24, 0, at(25))
	trapGID(parent, data, "infiniband.trap.gidaddr1", "GIDADDR1", at(28))
	trapGID(parent, data, "infiniband.trap.gidaddr2", "GIDADDR2", at(44))
	registerTrap259Fields(parent, trap(259)) // notice_ext.go
}

// trapNames say what the generic traps report (IBA 14.2.5.1, Table 131).
var trapNames = map[uint16]string{
	64:  "GID in service",
	65:  "GID out of service",
	66:  "multicast group created",
	67:  "multicast group deleted",
	68:  "paths no longer valid",
	69:  "paths recomputed",
	128: "link state of a switch port changed",
	129: "local link integrity threshold reached",
	130: "excessive buffer overrun threshold reached",
	131: "flow control update watchdog timer expired",
	144: "capability mask, node description, link width or speed changed",
	145: "system image GUID changed",
	256: "bad M_Key",
	257: "bad P_Key",
	258: "bad Q_Key",
	259: "bad P_Key at a switch port",
}

// TrapString says what a generic trap number reports, or returns "".
func TrapString(num uint16) string { return trapNames[num] }

// Notice is the head of a Notice attribute (IBA 13.4.8.2).
type Notice struct {
	Generic    bool
	Type       uint8  // 0 fatal, 1 urgent, 2 security, 3 subnet management, 4 informational
	TrapNumber uint16 // generic notices; the device ID of vendor notices
	IssuerLID  uint16
}

// SMPNotice returns the Notice an SMP carries (a SubnTrap, SubnTrapRepress
// or SubnGet/Set of attribute Notice), and false when p holds none or the
// capture cuts its head short.
func (p *Packet) SMPNotice() (Notice, bool) {
	a := smpAttr(SMPAttrNotice)(p)
	if len(a) < 8 {
		return Notice{}, false
	}
	return Notice{Generic: a[0]&0x80 != 0, Type: a[0] & 0x7F, TrapNumber: uint16(a[4])<<8 | uint16(a[5]), IssuerLID: uint16(a[6])<<8 | uint16(a[7])}, true
}
