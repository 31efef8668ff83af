package decode

// InfiniBand fields, named, typed and based as Wireshark 4.0 declares them
// (tshark -G fields), so -T fields output matches tshark's.

func init() {
	ib := hdrField("infiniband", "InfiniBand", FTProtocol, 0, func(p *Packet) []byte { return p.IB })
	// Present as soon as the encapsulation says InfiniBand, even when the
	// capture cuts the BTH short (as Wireshark).
	ib.SetPresence(0, func(p *Packet) bool { return p.Encap != EncapNone })

	lrh := hdrField("infiniband.lrh", "Local Route Header", FTBytes, HdrLRH, func(p *Packet) []byte { return p.LRH.Contents })
	lrh.Parent = ib
	uintField(lrh, "infiniband.lrh.vl", "Virtual Lane", FTUint8, BaseHex, 0xf0, 0, 1, func(p *Packet) uint64 { return uint64(p.LRH.VL) })
	uintField(lrh, "infiniband.lrh.lver", "Link Version", FTUint8, BaseDec, 0x0f, 0, 1, func(p *Packet) uint64 { return uint64(p.LRH.LVer) })
	uintField(lrh, "infiniband.lrh.sl", "Service Level", FTUint8, BaseDec, 0xf0, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.SL) })
	uintField(lrh, "infiniband.lrh.reserved2", "Reserved (2 bits)", FTUint8, BaseDec, 0x0c, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.Reserved2) })
	uintField(lrh, "infiniband.lrh.lnh", "Link Next Header", FTUint8, BaseHex, 0x03, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.LNH) })
	uintField(lrh, "infiniband.lrh.dlid", "Destination Local ID", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.LRH.DLID) })
	uintField(lrh, "infiniband.lrh.reserved5", "Reserved (5 bits)", FTUint16, BaseDec, 0xf800, 4, 2, func(p *Packet) uint64 { return uint64(p.LRH.Reserved5) })
	uintField(lrh, "infiniband.lrh.pktlen", "Packet Length", FTUint16, BaseDec, 0x07ff, 4, 2, func(p *Packet) uint64 { return uint64(p.LRH.PktLen) })
	uintField(lrh, "infiniband.lrh.slid", "Source Local ID", FTUint16, BaseDec, 0, 6, 2, func(p *Packet) uint64 { return uint64(p.LRH.SLID) })

	grh := hdrField("infiniband.grh", "Global Route Header", FTBytes, HdrGRH, func(p *Packet) []byte { return p.GRH.Contents })
	grh.Parent = ib
	uintField(grh, "infiniband.grh.ipver", "IP Version", FTUint8, BaseDec, 0xf0, 0, 1, func(p *Packet) uint64 { return uint64(p.GRH.IPVer) })
	uintField(grh, "infiniband.grh.tclass", "Traffic Class", FTUint16, BaseDec, 0x0ff0, 0, 2, func(p *Packet) uint64 { return uint64(p.GRH.TrafficClass) })
	uintField(grh, "infiniband.grh.flowlabel", "Flow Label", FTUint32, BaseDec, 0xfffff, 0, 4, func(p *Packet) uint64 { return uint64(p.GRH.FlowLabel) })
	uintField(grh, "infiniband.grh.paylen", "Payload Length", FTUint16, BaseDec, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.GRH.PayLen) })
	uintField(grh, "infiniband.grh.nxthdr", "Next Header", FTUint8, BaseDec, 0, 6, 1, func(p *Packet) uint64 { return uint64(p.GRH.NextHeader) })
	uintField(grh, "infiniband.grh.hoplmt", "Hop Limit", FTUint8, BaseDec, 0, 7, 1, func(p *Packet) uint64 { return uint64(p.GRH.HopLimit) })
	bytesField(grh, "infiniband.grh.sgid", "Source GID", FTIPv6, 8, 16, func(p *Packet) []byte { return p.GRH.SGID[:] })
	bytesField(grh, "infiniband.grh.dgid", "Destination GID", FTIPv6, 24, 16, func(p *Packet) []byte { return p.GRH.DGID[:] })

	bth := hdrField("infiniband.bth", "Base Transport Header", FTBytes, HdrBTH, func(p *Packet) []byte { return p.BTH.Contents })
	bth.Parent = ib
	op := uintField(bth, "infiniband.bth.opcode", "Opcode", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.BTH.Opcode) })
	op.names = func(v uint64) string { return Opcode(v).String() }
	boolField(bth, "infiniband.bth.se", "Solicited Event", 0x80, 1, func(p *Packet) bool { return p.BTH.SE })
	boolField(bth, "infiniband.bth.m", "MigReq", 0x40, 1, func(p *Packet) bool { return p.BTH.MigReq })
	uintField(bth, "infiniband.bth.padcnt", "Pad Count", FTUint8, BaseDec, 0x30, 1, 1, func(p *Packet) uint64 { return uint64(p.BTH.PadCount) })
	uintField(bth, "infiniband.bth.tver", "Header Version", FTUint8, BaseDec, 0x0f, 1, 1, func(p *Packet) uint64 { return uint64(p.BTH.TVer) })
	uintField(bth, "infiniband.bth.p_key", "Partition Key", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.BTH.PKey) })
	boolField(bth, "rocetap.bth.fecn", "Forward ECN", 0x80, 4, func(p *Packet) bool { return p.BTH.FECN })
	boolField(bth, "rocetap.bth.becn", "Backward ECN", 0x40, 4, func(p *Packet) bool { return p.BTH.BECN })
	uintField(bth, "rocetap.bth.reserved6", "Reserved (6 bits)", FTUint8, BaseHex, 0x3f, 4, 1, func(p *Packet) uint64 { return uint64(p.BTH.Reserved6) })
	uintField(bth, "infiniband.bth.destqp", "Destination Queue Pair", FTUint24, BaseHex, 0, 5, 3, func(p *Packet) uint64 { return uint64(p.BTH.DestQP) })
	boolField(bth, "infiniband.bth.a", "Acknowledge Request", 0x80, 8, func(p *Packet) bool { return p.BTH.AckReq })
	uintField(bth, "infiniband.bth.reserved7", "Reserved (7 bits)", FTUint8, BaseDec, 0x7f, 8, 1, func(p *Packet) uint64 { return uint64(p.BTH.Reserved7) })
	uintField(bth, "infiniband.bth.psn", "Packet Sequence Number", FTUint24, BaseDec, 0, 9, 3, func(p *Packet) uint64 { return uint64(p.BTH.PSN) })

	rdeth := hdrField("infiniband.rdeth", "RD Extended Transport Header", FTBytes, HdrRDETH, func(p *Packet) []byte { return p.RDETH.Contents })
	rdeth.Parent = ib
	uintField(rdeth, "infiniband.rdeth.eecnxt", "E2E Context", FTUint24, BaseDec, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.RDETH.EECnxt) })

	deth := hdrField("infiniband.deth", "Datagram Extended Transport Header", FTBytes, HdrDETH, func(p *Packet) []byte { return p.DETH.Contents })
	deth.Parent = ib
	uintField(deth, "infiniband.deth.q_key", "Queue Key", FTUint64, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.DETH.QKey) })
	uintField(deth, "infiniband.deth.srcqp", "Source Queue Pair", FTUint32, BaseHex, 0, 5, 3, func(p *Packet) uint64 { return uint64(p.DETH.SrcQP) })

	xrceth := hdrField("rocetap.xrceth", "XRC Extended Transport Header", FTBytes, HdrXRCETH, func(p *Packet) []byte { return p.XRCETH.Contents })
	xrceth.Parent = ib
	uintField(xrceth, "rocetap.xrceth.xrcsrq", "XRC Shared Receive Queue", FTUint24, BaseHex, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.XRCETH.XRCSRQ) })

	feth := hdrField("rocetap.feth", "FLUSH Extended Transport Header", FTBytes, HdrFETH, func(p *Packet) []byte { return p.FETH.Contents })
	feth.Parent = ib
	uintField(feth, "rocetap.feth.sel", "Selectivity Level", FTUint8, BaseDec, 0x30, 3, 1, func(p *Packet) uint64 { return uint64(p.FETH.Selectivity) })
	uintField(feth, "rocetap.feth.plt", "Placement Type", FTUint8, BaseDec, 0x0f, 3, 1, func(p *Packet) uint64 { return uint64(p.FETH.Placement) })

	// Wireshark shows the VA and R_Key of an AtomicETH under the RETH
	// names; rocetap does the same and adds rocetap.atomiceth.* names.
	hasVA := func(p *Packet) bool { return p.Has&(HdrRETH|HdrAtomicETH) != 0 }
	reth := hdrField("infiniband.reth", "RDMA Extended Transport Header", FTBytes, HdrRETH, func(p *Packet) []byte { return p.RETH.Contents })
	reth.Parent = ib
	vaF := condUint(reth, "infiniband.reth.va", "Virtual Address", FTUint64, BaseHex, 0, 0, 8, hasVA, func(p *Packet) uint64 {
		if p.Has&HdrRETH != 0 {
			return p.RETH.VA
		}
		return p.AtomicETH.VA
	})
	vaF.hdr = 0
	rk := condUint(reth, "infiniband.reth.r_key", "Remote Key", FTUint32, BaseHex, 0, 8, 4, hasVA, func(p *Packet) uint64 {
		if p.Has&HdrRETH != 0 {
			return uint64(p.RETH.RKey)
		}
		return uint64(p.AtomicETH.RKey)
	})
	rk.hdr = 0
	uintField(reth, "infiniband.reth.dmalen", "DMA Length", FTUint32, BaseDecHex, 0, 12, 4, func(p *Packet) uint64 { return uint64(p.RETH.DMALen) })

	aeth := hdrField("infiniband.atomiceth", "Atomic Extended Transport Header", FTBytes, HdrAtomicETH, func(p *Packet) []byte { return p.AtomicETH.Contents })
	aeth.Parent = ib
	uintField(aeth, "rocetap.atomiceth.va", "Virtual Address", FTUint64, BaseHex, 0, 0, 8, func(p *Packet) uint64 { return p.AtomicETH.VA })
	uintField(aeth, "rocetap.atomiceth.r_key", "Remote Key", FTUint32, BaseHex, 0, 8, 4, func(p *Packet) uint64 { return uint64(p.AtomicETH.RKey) })
	uintField(aeth, "infiniband.atomiceth.swapdt", "Swap (Or Add) Data", FTUint64, BaseDec, 0, 12, 8, func(p *Packet) uint64 { return p.AtomicETH.SwapAddData })
	uintField(aeth, "infiniband.atomiceth.cmpdt", "Compare Data", FTUint64, BaseDec, 0, 20, 8, func(p *Packet) uint64 { return p.AtomicETH.CompareData })

	ack := hdrField("infiniband.aeth", "ACK Extended Transport Header", FTBytes, HdrAETH, func(p *Packet) []byte { return p.AETH.Contents })
	ack.Parent = ib
	syn := uintField(ack, "infiniband.aeth.syndrome", "Syndrome", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Syndrome) })
	syn.names = func(v uint64) string { return SyndromeString(uint8(v)) }
	uintField(ack, "infiniband.aeth.syndrome.reserved", "Reserved", FTUint8, BaseDec, 0x80, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Syndrome >> 7) })
	kind := uintField(ack, "infiniband.aeth.syndrome.opcode", "OpCode", FTUint8, BaseDec, 0x60, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Kind()) })
	kind.names = func(v uint64) string { return [4]string{"Acknowledge", "RNR NAK", "Reserved", "NAK"}[v&3] }
	isKind := func(k uint8) func(*Packet) bool { return func(p *Packet) bool { return p.AETH.Kind() == k } }
	low := func(p *Packet) uint64 { return uint64(p.AETH.Value()) }
	condUint(ack, "infiniband.aeth.syndrome.credit_count", "Credit Count", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHAck), low)
	condUint(ack, "infiniband.aeth.syndrome.timer", "Timer", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHRNRNak), low)
	condUint(ack, "infiniband.aeth.syndrome.reserved_value", "Reserved (Invalid Opcode)", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHReserved), low)
	ec := condUint(ack, "infiniband.aeth.syndrome.error_code", "Error Code", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHNak), low)
	ec.names = func(v uint64) string {
		if v < uint64(len(nakNames)) {
			return nakNames[v]
		}
		return ""
	}
	uintField(ack, "infiniband.aeth.msn", "Message Sequence Number", FTUint24, BaseDec, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.AETH.MSN) })

	aack := hdrField("infiniband.atomicacketh", "Atomic ACK Extended Transport Header", FTBytes, HdrAtomicAckETH, func(p *Packet) []byte { return p.AtomicAckETH.Contents })
	aack.Parent = ib
	uintField(aack, "infiniband.atomicacketh.origremdt", "Original Remote Data", FTUint64, BaseDec, 0, 0, 8, func(p *Packet) uint64 { return p.AtomicAckETH.OrigRemData })

	imm := hdrField("infiniband.immdt", "Immediate Data", FTBytes, HdrImmDt, func(p *Packet) []byte { return p.ImmDt.Contents })
	imm.Parent = ib
	uintField(imm, "rocetap.immdt.value", "Immediate Data", FTUint32, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.ImmDt.Data) })

	ieth := hdrField("infiniband.ieth", "RKey", FTBytes, HdrIETH, func(p *Packet) []byte { return p.IETH.Contents })
	ieth.Parent = ib
	uintField(ieth, "rocetap.ieth.r_key", "Invalidated Remote Key", FTUint32, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.IETH.RKey) })

	cnp := hdrField("rocetap.cnp", "CNP Reserved", FTBytes, HdrCNP, func(p *Packet) []byte { return p.CNP.Contents })
	cnp.Parent = ib

	bytesField(ib, "infiniband.payload", "Payload", FTBytes, -1, 0, func(p *Packet) []byte {
		if p.Has&HdrPayload == 0 || p.Has&HdrMAD != 0 {
			return nil
		}
		return p.Payload
	})
	// Wireshark hands a payload no sub-dissector claims to its "data"
	// dissector; data.data and data.len are those names.
	data := hdrField("data", "Data", FTProtocol, HdrPayload, func(p *Packet) []byte { return p.Payload })
	undissected := func(p *Packet) bool { return p.Has&HdrMAD == 0 && len(p.Payload) > 0 }
	data.SetPresence(HdrPayload, undissected)
	multiField(data, "data.data", "Data", FTBytes, BaseNone, HdrPayload, func(p *Packet, out []Value) []Value {
		if !undissected(p) {
			return out
		}
		return append(out, Value{B: p.Payload})
	})
	multiField(data, "data.len", "Length", FTInt32, BaseDec, HdrPayload, func(p *Packet, out []Value) []Value {
		if !undissected(p) {
			return out
		}
		return append(out, Value{U: uint64(len(p.Payload))})
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

	// rocetap's own fields.
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
}
