package decode

// Performance management (PMA, class 0x04; IBA 16.1): after the MAD header
// come 40 reserved bytes and the 192-byte attribute. rocetap decodes the
// attributes Wireshark 4.0 decodes (ClassPortInfo, PortCounters,
// PortCountersExtended) under its field names; the others stay bytes
// (infiniband.smplid.smpdata, as in tshark).
//
// PortCounters (IBA 16.1.3.5), offsets in the attribute:
//
//	 0 Reserved (8) | PortSelect (8) | CounterSelect (16)
//	 4 SymbolErrorCounter (16) | LinkErrorRecoveryCounter (8) | LinkDownedCounter (8)
//	 8 PortRcvErrors (16) | PortRcvRemotePhysicalErrors (16)
//	12 PortRcvSwitchRelayErrors (16) | PortXmitDiscards (16)
//	16 PortXmitConstraintErrors (8) | PortRcvConstraintErrors (8) | Reserved (8) |
//	   LocalLinkIntegrityErrors (4) ExcessiveBufferOverrunErrors (4)
//	20 Reserved (16) | VL15Dropped (16)
//	24 PortXmitData (32)  28 PortRcvData (32)  32 PortXmitPkts (32)
//	36 PortRcvPkts (32)   40 PortXmitWait (32)
//
// PortCountersExtended (IBA 16.1.4.11): PortSelect at 1, CounterSelect at
// 2, then eight 64-bit counters from byte 8: PortXmitData, PortRcvData,
// PortXmitPkts, PortRcvPkts, PortUnicastXmitPkts, PortUnicastRcvPkts,
// PortMulticastXmitPkts, PortMulticastRcvPkts.
const (
	PMADataOff = 40  // offset of the attribute in the MAD data
	PMADataLen = 192 // bytes of attribute
)

// pmaDecoded reports whether rocetap (and Wireshark) decode a PMA
// attribute's fields.
func pmaDecoded(attr uint16) bool {
	return attr == PMAAttrClassPortInfo || attr == PMAAttrPortCounters || attr == PMAAttrPortCountersExtended
}

// pmaAttr returns a function giving the attribute bytes of p, cut at the
// end of the capture, when p is a PMA MAD of attribute attr.
func pmaAttr(attr uint16) func(*Packet) []byte {
	return func(p *Packet) []byte {
		if p.Has&HdrMAD == 0 || p.MAD.MgmtClass != MgmtClassPerf || p.MAD.AttributeID != attr {
			return nil
		}
		return sub(p.MAD.Payload, PMADataOff, PMADataLen)
	}
}

// classPortInfoData returns the ClassPortInfo attribute (IBA 13.4.8.1) of
// p: that of the PMA.
func classPortInfoData(p *Packet) []byte { return pmaAttr(PMAAttrClassPortInfo)(p) }

// noneField registers an FT_NONE item (tshark prints "1") present when
// data(p) is not nil.
func noneField(parent *Field, abbrev, name string, data func(*Packet) []byte) *Field {
	f := multiField(parent, abbrev, name, FTNone, BaseNone, HdrMAD, func(p *Packet, out []Value) []Value {
		if data(p) == nil {
			return out
		}
		return append(out, Value{U: 1})
	})
	f.span = data
	return f
}

// registerPMAFields registers the ClassPortInfo, PortCounters and
// PortCountersExtended fields under ib, named, typed and based as
// Wireshark 4.0 declares them.
func registerPMAFields(ib *Field) {
	cpi := noneField(ib, "infiniband.classportinfo", "ClassPortInfo", classPortInfoData)
	attrFields(cpi, classPortInfoData, 1, 0, []attrField{
		{"infiniband.classportinfo.baseversion", "BaseVersion", FTUint8, 0, 0},
		{"infiniband.classportinfo.classversion", "ClassVersion", FTUint8, 0, 1},
		{"infiniband.classportinfo.capabilitymask", "CapabilityMask", FTUint16, 0, 2},
		{"infiniband.classportinfo.capabilitymask2", "CapabilityMask2", FTUint32, 0xffffffe0, 4},
		{"infiniband.classportinfo.resptimevalue", "RespTimeValue", FTUint8, 0x1f, 7},
	})
	gid := func(abbrev, name string, off int) {
		bytesField(cpi, abbrev, name, FTIPv6, off, 16, func(p *Packet) []byte { return full(classPortInfoData(p), off, 16) })
	}
	gid("infiniband.classportinfo.redirectgid", "RedirectGID", 8)
	attrFields(cpi, classPortInfoData, 1, 0, []attrField{
		{"infiniband.classportinfo.redirecttc", "RedirectTC", FTUint8, 0, 24},
		{"infiniband.classportinfo.redirectsl", "RedirectSL", FTUint8, 0xf0, 25},
		{"infiniband.classportinfo.redirectfl", "RedirectFL", FTUint24, 0xfffff, 25},
		{"infiniband.classportinfo.redirectlid", "RedirectLID", FTUint16, 0, 28},
		{"infiniband.classportinfo.redirectpkey", "RedirectP_Key", FTUint16, 0, 30},
	})
	// Wireshark shows the reserved byte before RedirectQP and TrapHL
	// (the trap hop limit) under one name: two occurrences.
	multiField(cpi, "infiniband.classportinfo.reserved", "Reserved", FTUint8, BaseHex, HdrMAD, func(p *Packet, out []Value) []Value {
		a := classPortInfoData(p)
		for _, off := range []int{32, 64} {
			if len(a) > off {
				out = append(out, Value{U: uint64(a[off])})
			}
		}
		return out
	})
	attrFields(cpi, classPortInfoData, 1, 0, []attrField{
		{"infiniband.classportinfo.redirectqp", "RedirectQP", FTUint24, 0, 33},
		{"infiniband.classportinfo.redirectqkey", "RedirectQ_Key", FTUint32, 0, 36},
	})
	gid("infiniband.classportinfo.trapgid", "TrapGID", 40)
	attrFields(cpi, classPortInfoData, 1, 0, []attrField{
		{"infiniband.classportinfo.traptc", "TrapTC", FTUint8, 0, 56},
		{"infiniband.classportinfo.trapsl", "TrapSL", FTUint8, 0xf0, 57},
		{"infiniband.classportinfo.trapfl", "TrapFL", FTUint24, 0xfffff, 57},
		{"infiniband.classportinfo.traplid", "TrapLID", FTUint16, 0, 60},
		{"infiniband.classportinfo.trappkey", "TrapP_Key", FTUint16, 0, 62},
		{"infiniband.classportinfo.trapqp", "TrapQP", FTUint24, 0, 65},
		{"infiniband.classportinfo.trapqkey", "TrapQ_Key", FTUint32, 0, 68},
	})

	pcData := pmaAttr(PMAAttrPortCounters)
	pc := noneField(ib, "infiniband.portcounters", "Port Counters", pcData)
	attrFields(pc, pcData, 1, 0, []attrField{
		{"infiniband.portcounters.portselect", "PortSelect", FTUint8, 0, 1},
		{"infiniband.portcounters.counterselect", "CounterSelect", FTUint16, 0, 2},
	})
	dec := attrFields(pc, pcData, 1, 0, []attrField{
		{"infiniband.portcounters.symbolerrorcounter", "SymbolErrorCounter", FTUint16, 0, 4},
		{"infiniband.portcounters.linkerrorrecoverycounter", "LinkErrorRecoveryCounter", FTUint8, 0, 6},
		{"infiniband.portcounters.linkdownedcounter", "LinkDownedCounter", FTUint8, 0, 7},
		{"infiniband.portcounters.portrcverrors", "PortRcvErrors", FTUint16, 0, 8},
		{"infiniband.portcounters.portrcvremotephysicalerrors", "PortRcvRemotePhysicalErrors", FTUint16, 0, 10},
		{"infiniband.portcounters.portrcvswitchrelayerrors", "PortRcvSwitchRelayErrors", FTUint16, 0, 12},
		{"infiniband.portcounters.portxmitdiscards", "PortXmitDiscards", FTUint16, 0, 14},
		{"infiniband.portcounters.portxmitconstrainterrors", "PortXmitConstraintErrors", FTUint8, 0, 16},
		{"infiniband.portcounters.portrcvconstrainterrors", "PortRcvConstraintErrors", FTUint8, 0, 17},
		{"infiniband.portcounters.locallinkintegrityerrors", "LocalLinkIntegrityErrors", FTUint8, 0xf0, 19},
		{"infiniband.portcounters.excessivebufferoverrunerrors", "ExcessiveBufferOverrunErrors", FTUint8, 0x0f, 19},
		{"infiniband.portcounters.vl15dropped", "VL15Dropped", FTUint16, 0, 22},
		{"infiniband.portcounters.portxmitdata", "PortXmitData", FTUint32, 0, 24},
		{"infiniband.portcounters.portrcvdata", "PortRcvData", FTUint32, 0, 28},
		{"infiniband.portcounters.portxmitpkts", "PortXmitPkts", FTUint32, 0, 32},
		{"infiniband.portcounters.portrcvpkts", "PortRcvPkts", FTUint32, 0, 36},
		// Not in Wireshark 4.0 (IBA 1.2 added it).
		{"rocetap.portcounters.portxmitwait", "PortXmitWait", FTUint32, 0, 40},
	})
	for _, f := range dec {
		f.Base = BaseDec
		f.Bitmask = 0 // tshark declares the two 4-bit counters without a mask
	}

	peData := pmaAttr(PMAAttrPortCountersExtended)
	pe := noneField(ib, "infiniband.portcounters_ext", "Port Counters Extended", peData)
	attrFields(pe, peData, 1, 0, []attrField{
		{"infiniband.portcounters_ext.portselect", "PortSelect", FTUint8, 0, 1},
		{"infiniband.portcounters_ext.counterselect", "CounterSelect", FTUint16, 0, 2},
	})
	ext := attrFields(pe, peData, 1, 0, []attrField{
		{"infiniband.portcounters_ext.portxmitdata", "PortXmitData", FTUint64, 0, 8},
		{"infiniband.portcounters_ext.portrcvdata", "PortRcvData", FTUint64, 0, 16},
		{"infiniband.portcounters_ext.portxmitpkts", "PortXmitPkts", FTUint64, 0, 24},
		{"infiniband.portcounters_ext.portrcvpkts", "PortRcvPkts", FTUint64, 0, 32},
		{"infiniband.portcounters_ext.portunicastxmitpkts", "PortUnicastXmitPkts", FTUint64, 0, 40},
		{"infiniband.portcounters_ext.portunicastrcvpkts", "PortUnicastRcvPkts", FTUint64, 0, 48},
		{"infiniband.portcounters_ext.portmulticastxmitpkts", "PortMulticastXmitPkts", FTUint64, 0, 56},
		{"infiniband.portcounters_ext.portmulticastrcvpkts", "PortMulticastRcvPkts", FTUint64, 0, 64},
	})
	for _, f := range ext {
		f.Base = BaseDec
	}
}
