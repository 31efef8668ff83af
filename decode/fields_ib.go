package decode

// The InfiniBand protocol item, payload, CRCs and rocetap's own per-packet
// decode fields. Each header's fields are registered next to the header
// (lrh.go, bth.go, reth.go, ...); fields.go's init calls them in order.

// registerInfiniBandField registers the "infiniband" protocol item, the
// parent of every InfiniBand header.
func registerInfiniBandField() *Field {
	// Its bytes are the whole InfiniBand packet, so that every header it
	// holds lies within them, as in tshark: LRH through VCRC (native), GRH
	// through ICRC (RoCEv1), BTH through ICRC (RoCEv2).
	ib := hdrField("infiniband", "InfiniBand", FTProtocol, 0, func(p *Packet) []byte { return p.ibPacket })
	// Present as soon as the encapsulation says InfiniBand, even when the
	// capture cuts the BTH short (as Wireshark).
	ib.SetPresence(0, func(p *Packet) bool { return p.Encap != EncapNone })
	return ib
}

// registerPayloadFields registers the payload, pad and CRC fields under ib.
func registerPayloadFields(ib *Field) {
	bytesField(ib, "infiniband.payload", "Payload", FTBytes, -1, 0, func(p *Packet) []byte {
		if p.Has&HdrPayload == 0 || p.Has&HdrMAD != 0 {
			return nil
		}
		return p.Payload
	})
	// Wireshark hands a payload no sub-dissector claims to its "data"
	// dissector; data.data and data.len are those names.
	// An IPoIB payload is dissected (ipoib.go): its data is what the
	// carried protocol leaves undissected (Packet.Data), as for ICMP and
	// TCP on Ethernet.
	data := hdrField("data", "Data", FTProtocol, 0, func(p *Packet) []byte { return dataBytes(p) })
	data.SetPresence(0, func(p *Packet) bool { return dataBytes(p) != nil })
	multiField(data, "data.data", "Data", FTBytes, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if b := dataBytes(p); b != nil {
			return append(out, Value{B: b})
		}
		return out
	})
	multiField(data, "data.len", "Length", FTInt32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if b := dataBytes(p); b != nil {
			return append(out, Value{U: uint64(len(b))})
		}
		return out
	})
	multiField(ib, "rocetap.pad", "Pad", FTBytes, BaseNone, HdrBTH, func(p *Packet, out []Value) []Value {
		if len(p.Pad) == 0 {
			return out
		}
		return append(out, Value{B: p.Pad})
	})
	icrc := uintField(ib, "infiniband.invariant.crc", "Invariant CRC", FTUint32, BaseHex, 0, -1, 4, func(p *Packet) uint64 { return uint64(p.ICRC.CRC) })
	icrc.hdr = HdrBTH | HdrICRC
	icrc.span = func(p *Packet) []byte { return p.ICRC.Contents }
	vcrc := uintField(ib, "infiniband.variant.crc", "Variant CRC", FTUint16, BaseHex, 0, -1, 2, func(p *Packet) uint64 { return uint64(p.VCRC.CRC) })
	vcrc.hdr = HdrLRH | HdrVCRC
	vcrc.span = func(p *Packet) []byte { return p.VCRC.Contents }
}

// dataBytes returns what tshark shows as data.data: the InfiniBand
// payload no header claims (not a MAD, not IPoIB), else the payload the
// innermost protocol leaves (Packet.Data), else nil.
func dataBytes(p *Packet) []byte {
	switch {
	case p.Has&HdrData != 0:
		return p.Data
	case p.Has&HdrPayload != 0 && p.Has&(HdrMAD|HdrIPoIB) == 0 && len(p.Payload) > 0:
		return p.Payload
	}
	return nil
}

// registerDecodeFields registers rocetap's own per-packet fields (rocetap.*:
// encapsulation, opcode name, CRC status, flags, decode error) and returns
// the "rocetap" protocol item.
func registerDecodeFields() *Field {
	rt := hdrField("rocetap", "rocetap analysis", FTProtocol, 0, nil)
	stringField(rt, "rocetap.encap", "Encapsulation", 0, func(p *Packet) string {
		if p.Encap == EncapNone {
			return ""
		}
		return p.Encap.String()
	})
	stringField(rt, "rocetap.opcode", "Opcode name", HdrBTH, func(p *Packet) string { return p.BTH.Opcode.String() })
	stringField(rt, "rocetap.transport", "Transport", HdrBTH, func(p *Packet) string { return p.BTH.Opcode.Transport().String() })
	stringField(rt, "rocetap.icrc.status", "ICRC status", 0, func(p *Packet) string {
		if p.ICRCStatus == CRCAbsent {
			return ""
		}
		return p.ICRCStatus.String()
	})
	multiField(rt, "rocetap.icrc.computed", "ICRC computed", FTUint32, BaseHex, HdrICRC, func(p *Packet, out []Value) []Value {
		if p.ICRCStatus != CRCGood && p.ICRCStatus != CRCBad {
			return out
		}
		return append(out, Value{U: uint64(p.ICRCComputed)})
	})
	stringField(rt, "rocetap.vcrc.status", "VCRC status", HdrLRH, func(p *Packet) string { return p.VCRCStatus.String() })
	multiField(rt, "rocetap.vcrc.computed", "VCRC computed", FTUint16, BaseHex, HdrVCRC, func(p *Packet, out []Value) []Value {
		return append(out, Value{U: uint64(p.VCRCComputed)})
	})
	multiField(rt, "rocetap.payload.length", "Payload length", FTUint32, BaseDec, HdrBTH, func(p *Packet, out []Value) []Value {
		return append(out, Value{U: uint64(len(p.Payload))})
	})
	stringField(rt, "rocetap.aeth.kind", "AETH kind", HdrAETH, func(p *Packet) string {
		return [4]string{"ACK", "RNR NAK", "Reserved", "NAK"}[p.AETH.Kind()]
	})
	stringField(rt, "rocetap.aeth.syndrome", "AETH syndrome meaning", HdrAETH, func(p *Packet) string { return SyndromeString(p.AETH.Syndrome) })
	flagBool := func(abbrev, name string, f Flag) {
		multiField(rt, abbrev, name, FTBoolean, BaseNone, 0, func(p *Packet, out []Value) []Value {
			if p.Flags&f == 0 {
				return out
			}
			return append(out, Value{U: 1})
		})
	}
	flagBool("rocetap.truncated", "Truncated by the capture", FlagTruncated)
	flagBool("rocetap.malformed", "Malformed", FlagMalformed)
	flagBool("rocetap.unknown_opcode", "Unknown opcode", FlagUnknownOpcode)
	flagBool("rocetap.icrc.bad", "ICRC bad", FlagICRCBad)
	flagBool("rocetap.icrc.unverifiable", "ICRC unverifiable", FlagICRCUnverifiable)
	flagBool("rocetap.vcrc.bad", "VCRC bad", FlagVCRCBad)
	multiField(rt, "rocetap.error", "Decode error", FTString, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if p.Err == nil {
			return out
		}
		return append(out, Value{S: p.Err.Error()})
	})
	return rt
}
