package decode

// Trap details Wireshark 4.0 does not decode, or decodes under a type
// that cannot hold them, laid out as OpenSM's ib_mad_notice_attr_t
// (include/iba/ib_types.h) and IBA 1.3 14.2.5.1 have them; offsets are
// from the start of the Notice (its data details start at byte 10).

// genericTrap returns the trap number of a generic Notice a, and false
// when a is no generic Notice or too short to say.
func genericTrap(a []byte) (uint16, bool) {
	if len(a) < 6 || a[0]&0x80 == 0 {
		return 0, false
	}
	return uint16(a[4])<<8 | uint16(a[5]), true
}

// trapOffset returns the offset at gives for the trap number of the
// generic Notice a, and false when a is no such Notice.
func trapOffset(a []byte, at map[uint16]int) (int, bool) {
	n, ok := genericTrap(a)
	if !ok {
		return 0, false
	}
	off, ok := at[n]
	return off, ok
}

// trapUint registers an integer field of the data details whose offset
// depends on the trap number (at: offset by trap), for the Wireshark
// names several traps share at different places.
func trapUint(parent *Field, data func(*Packet) []byte, abbrev, name string, t FieldType, mask uint64, at map[uint16]int) *Field {
	f := multiField(parent, abbrev, name, t, BaseHex, 0, func(p *Packet, out []Value) []Value {
		a := data(p)
		off, ok := trapOffset(a, at)
		if !ok {
			return out
		}
		af := attrField{t: t, mask: mask, off: off}
		if v, ok := af.extract(a, 0); ok {
			out = append(out, Value{U: v})
		}
		return out
	})
	f.Bitmask = mask
	return f
}

// trapGID registers a GID of the data details at an offset that depends
// on the trap number, as trapUint does.
func trapGID(parent *Field, data func(*Packet) []byte, abbrev, name string, at map[uint16]int) *Field {
	return multiField(parent, abbrev, name, FTIPv6, BaseNone, 0, func(p *Packet, out []Value) []Value {
		a := data(p)
		off, ok := trapOffset(a, at)
		if !ok {
			return out
		}
		if b := full(a, off, 16); b != nil {
			out = append(out, Value{B: b})
		}
		return out
	})
}

// registerTrap144ExtFields registers what IBA 1.3 added to trap 144
// (local changes at a port), t144 giving the Notice of a trap 144:
//
//	20 Reserved (10) | CapabilityMask2Change (1) | HierarchyInfoChange (1) |
//	   SMPriorityChange (1) | LinkSpeedEnabledChange, LinkWidthEnabledChange,
//	   NodeDescriptionChange (Wireshark's, 3)
//	22 CapabilityMask2 (16)
func registerTrap144ExtFields(parent *Field, t144 func(*Packet) []byte) {
	attrFields(parent, t144, 1, 0, []attrField{
		{"rocetap.trap.capabilitymask2change", "CapabilityMask2Change", FTUint8, 0x20, 21},
		{"rocetap.trap.hierarchyinfochange", "HierarchyInfoChange", FTUint8, 0x10, 21},
		{"rocetap.trap.smprioritychange", "SMPriorityChange", FTUint8, 0x08, 21},
		{"rocetap.trap.capabilitymask2", "CAPABILITYMASK2", FTUint16, 0, 22},
	})
}

// registerTrap259Fields registers the fields of trap 259 (bad P_Key at a
// switch external port) that trap 257 lacks, t259 giving the Notice of a
// trap 259. Wireshark 4.0 declares DataValid and SWLIDADDR as IPv6
// addresses (FT_IPv6), which 16 bits cannot be, so they are rocetap's:
//
//	10 DataValid (16) | LIDADDR1 (16)      14 LIDADDR2 (16) | PKEY (16)
//	18 SL (4) Reserved (4) QP1 (24)        22 Reserved (8) QP2 (24)
//	26 GIDADDR1 (128)  42 GIDADDR2 (128)   58 SWLIDADDR (16) | PORTNO (8)
func registerTrap259Fields(parent *Field, t259 func(*Packet) []byte) {
	attrFields(parent, t259, 1, 0, []attrField{
		{"rocetap.trap.datavalid", "DataValid", FTUint16, 0, 10},
		{"infiniband.trap.pkey", "PKEY", FTUint16, 0, 16},
		{"rocetap.trap.swlidaddr", "SWLIDADDR", FTUint16, 0, 58},
	})
}
