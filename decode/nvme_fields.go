package decode

// registerNVMeFields registers the NVMe-oF fields: Wireshark's nvme-rdma.*,
// nvme.cmd.*, nvme.fabrics.*, nvme.cqe.* (types and bases as tshark 4.0's)
// and rocetap's links under rocetap.nvme.*. They read p.Analysis.ULP,
// which the tracker fills: all are Stateful.
func registerNVMeFields(rt *Field) {
	var all []*Field
	nv := func(p *Packet) *NVMeInfo {
		if u := p.Analysis.ULP; u != nil && u.Proto == ULPNVMe {
			return &u.NVMe
		}
		return nil
	}
	cmd := func(p *Packet) bool { n := nv(p); return n != nil && n.Kind == NVMeCmd && n.Cmd != nil }
	plain := func(p *Packet) bool { return cmd(p) && !nv(p).Cmd.Fabrics() }
	fabrics := func(p *Packet) bool { return cmd(p) && nv(p).Cmd.Fabrics() }
	fc := func(t uint8) func(p *Packet) bool {
		return func(p *Packet) bool { return fabrics(p) && nv(p).Cmd.FCType == t }
	}
	admin := func(op uint8) func(p *Packet) bool {
		return func(p *Packet) bool { return plain(p) && nv(p).Cmd.Admin && nv(p).Cmd.Opcode == op }
	}
	cqe := func(p *Packet) bool { n := nv(p); return n != nil && n.Kind == NVMeCQE }
	c := func(p *Packet) *NVMeCommand { return nv(p).Cmd }
	q := func(p *Packet) *NVMeCompletion { return &nv(p).CQE }
	proto := func(abbrev, name string, ok func(*Packet) bool) *Field {
		f := register(&Field{Abbrev: abbrev, Name: name, Type: FTProtocol, Off: -1,
			values: func(p *Packet, out []Value) []Value {
				if ok(p) {
					return append(out, Value{})
				}
				return out
			}})
		all = append(all, f)
		return f
	}
	u := func(parent *Field, abbrev, name string, t FieldType, base Base, mask uint64, ok func(*Packet) bool, get func(*Packet) uint64) *Field {
		f := condUint(parent, abbrev, name, t, base, mask, -1, 0, ok, get)
		all = append(all, f)
		return f
	}
	s := func(parent *Field, abbrev, name string, get func(*Packet) string) {
		all = append(all, stringField(parent, abbrev, name, 0, get))
	}
	by := func(parent *Field, abbrev, name string, get func(*Packet) []byte) {
		all = append(all, bytesField(parent, abbrev, name, FTBytes, -1, 0, get))
	}
	hasQID := func(p *Packet) bool { n := nv(p); return n != nil && n.HasQID }

	rdma := proto("nvme-rdma", "NVM Express Fabrics RDMA", func(p *Packet) bool { return nv(p) != nil })
	u(rdma, "nvme-rdma.cmd.qid", "Cmd Qid", FTUint16, BaseHex, 0, hasQID, func(p *Packet) uint64 { return uint64(nv(p).QID) })

	creq := func(p *Packet) bool { n := nv(p); return n != nil && n.HasCMReq }
	crep := func(p *Packet) bool { n := nv(p); return n != nil && n.HasCMRep }
	u(rdma, "nvme-rdma.cm.req.recfmt", "Record Format", FTUint16, BaseDec, 0, creq, func(p *Packet) uint64 { return uint64(nv(p).CMReq.RecFmt) })
	u(rdma, "nvme-rdma.cm.req.hrqsize", "RDMA QP Host Receive Queue Size", FTUint16, BaseDec, 0, creq, func(p *Packet) uint64 { return uint64(nv(p).CMReq.HRQSize) })
	u(rdma, "nvme-rdma.cm.req.cntlid", "Controller ID", FTUint16, BaseHex, 0, creq, func(p *Packet) uint64 { return uint64(nv(p).CMReq.CntlID) })
	u(rdma, "nvme-rdma.cm.rsp.recfmt", "Record Format", FTUint16, BaseDec, 0, crep, func(p *Packet) uint64 { return uint64(nv(p).CMRep.RecFmt) })
	u(rdma, "nvme-rdma.cm.rsp.crqsize", "RDMA QP Controller Receive Queue Size", FTUint16, BaseDec, 0, crep, func(p *Packet) uint64 { return uint64(nv(p).CMRep.CRQSize) })
	// (tshark shows the queue ID and the host send queue size with
	// custom formats: rocetap.nvme.cm.qid and .hsqsize)
	u(rt, "rocetap.nvme.cm.qid", "NVMe queue the connection is for (CM REQ)", FTUint16, BaseDec, 0, creq, func(p *Packet) uint64 { return uint64(nv(p).CMReq.QID) })
	u(rt, "rocetap.nvme.cm.hsqsize", "RDMA QP Host Send Queue Size (CM REQ)", FTUint16, BaseDec, 0, creq, func(p *Packet) uint64 { return uint64(nv(p).CMReq.HSQSize) })

	nvme := proto("nvme", "NVM Express", func(p *Packet) bool { return cmd(p) || cqe(p) })
	// fabrics commands
	by(nvme, "nvme.fabrics.cmd.opc", "Opcode", func(p *Packet) []byte {
		if !fabrics(p) {
			return nil
		}
		return []byte{NVMeFabrics}
	})
	u(nvme, "nvme.fabrics.cmd.cid", "Command Identifier", FTUint16, BaseHex, 0, fabrics, func(p *Packet) uint64 { return uint64(c(p).CID) })
	fct := u(nvme, "nvme.fabrics.cmd.fctype", "Fabric Command Type", FTUint8, BaseHex, 0, fabrics, func(p *Packet) uint64 { return uint64(c(p).FCType) })
	fct.label = func(b []byte, p *Packet) []byte {
		if !fabrics(p) {
			return b // Label of a packet without the field (it must not panic)
		}
		return appendNamed(b, "Fabric Command Type", c(p).OpName())
	}
	conn := fc(NVMeFCConnect)
	u(nvme, "nvme.fabrics.cmd.connect.recfmt", "Record Format", FTUint16, BaseDec, 0, conn, func(p *Packet) uint64 { return uint64(uint16(c(p).CDW[0])) })
	u(nvme, "nvme.fabrics.cmd.connect.cattr", "Connect Attributes", FTUint8, BaseHex, 0, conn, func(p *Packet) uint64 { return uint64(uint8(c(p).CDW[1] >> 16)) })
	u(nvme, "nvme.fabrics.cmd.connect.kato", "Keep Alive Timeout", FTUint32, BaseDec, 0, conn, func(p *Packet) uint64 { return uint64(c(p).CDW[2]) })
	hasConn := func(p *Packet) bool { n := nv(p); return n != nil && n.Connect != nil }
	by(nvme, "nvme.fabrics.cmd.connect.data.hostid", "Host Identifier", func(p *Packet) []byte {
		if !hasConn(p) {
			return nil
		}
		return nv(p).Connect.HostID
	})
	u(nvme, "nvme.fabrics.cmd.connect.data.cntrlid", "Controller ID", FTUint16, BaseHex, 0, hasConn, func(p *Packet) uint64 { return uint64(nv(p).Connect.CntlID) })
	s(nvme, "nvme.fabrics.cmd.connect.data.subnqn", "Subsystem NQN", func(p *Packet) string {
		if !hasConn(p) {
			return ""
		}
		return nv(p).Connect.SubNQN
	})
	s(nvme, "nvme.fabrics.cmd.connect.data.hostnqn", "Host NQN", func(p *Packet) string {
		if !hasConn(p) {
			return ""
		}
		return nv(p).Connect.HostNQN
	})
	pget, pset := fc(NVMeFCPropertyGet), fc(NVMeFCPropertySet)
	prop := func(p *Packet) bool { return pget(p) || pset(p) }
	u(nvme, "nvme.fabrics.cmd.prop_get_set.attrib", "Attributes", FTUint8, BaseHex, 0, prop, func(p *Packet) uint64 { return uint64(uint8(c(p).CDW[0])) })
	u(nvme, "nvme.fabrics.cmd.prop_get_set.offset", "Offset", FTUint32, BaseHex, 0, prop, func(p *Packet) uint64 { return uint64(c(p).PropOffset()) })

	// NVMe commands
	opc := u(nvme, "nvme.cmd.opc", "Opcode", FTUint8, BaseHex, 0, plain, func(p *Packet) uint64 { return uint64(c(p).Opcode) })
	opc.label = func(b []byte, p *Packet) []byte {
		if !plain(p) {
			return b // Label of a packet without the field (it must not panic)
		}
		return appendNamed(b, "Opcode", c(p).OpName())
	}
	u(nvme, "nvme.cmd.fuse_op", "Fuse Operation", FTUint8, BaseHex, 0x03, plain, func(p *Packet) uint64 { return uint64(c(p).Fuse) })
	u(nvme, "nvme.cmd.psdt", "PRP Or SGL", FTUint8, BaseHex, 0xC0, plain, func(p *Packet) uint64 { return uint64(c(p).PSDT) })
	u(nvme, "nvme.cmd.cid", "Command ID", FTUint16, BaseHex, 0, plain, func(p *Packet) uint64 { return uint64(c(p).CID) })
	u(nvme, "nvme.cmd.nsid", "Namespace Id", FTUint32, BaseHex, 0, plain, func(p *Packet) uint64 { return uint64(c(p).NSID) })
	u(nvme, "nvme.cmd.mptr", "Metadata Pointer", FTUint64, BaseHex, 0, plain, func(p *Packet) uint64 { return c(p).MPTR })
	// tshark shows SGL1 on NVMe commands and on a Connect
	sgl := func(p *Packet) bool { return plain(p) || conn(p) }
	u(nvme, "nvme.cmd.sgl.type", "Descriptor Type", FTUint8, BaseHex, 0xF0, sgl, func(p *Packet) uint64 { return uint64(c(p).SGL.Type) })
	u(nvme, "nvme.cmd.sgl.subtype", "Descriptor Sub Type", FTUint8, BaseHex, 0x0F, sgl, func(p *Packet) uint64 { return uint64(c(p).SGL.Sub) })
	u(nvme, "nvme.cmd.sgl1.addr", "Address", FTUint64, BaseHex, 0, sgl, func(p *Packet) uint64 { return c(p).SGL.Addr })
	u(nvme, "nvme.cmd.sgl1.len", "Length", FTUint32, BaseDec, 0, sgl, func(p *Packet) uint64 { return uint64(c(p).SGL.Len) })
	u(nvme, "nvme.cmd.sgl1.key", "Key", FTUint32, BaseHex, 0, func(p *Packet) bool { return sgl(p) && c(p).SGL.Keyed() }, func(p *Packet) uint64 { return uint64(c(p).SGL.Key) })
	lba := func(p *Packet) bool { return plain(p) && c(p).HasLBA() }
	u(nvme, "nvme.cmd.slba", "Start LBA", FTUint64, BaseHex, 0, lba, func(p *Packet) uint64 { return c(p).SLBA() })
	// tshark's nvme.cmd.nlb is the block count (the 0-based field + 1);
	// rocetap.nvme.nlb is the field as on the wire
	u(nvme, "nvme.cmd.nlb", "Absolute Number of Logical Blocks", FTUint16, BaseDecHex, 0, lba, func(p *Packet) uint64 { return uint64(c(p).NLB()) + 1 })
	ident := admin(0x06)
	u(nvme, "nvme.cmd.identify.dword10.cns", "Controller or Namespace Structure (CNS)", FTUint32, BaseHex, 0xFF, ident, func(p *Packet) uint64 { return uint64(c(p).CDW[0] & 0xFF) })
	u(nvme, "nvme.cmd.identify.dword10.cntid", "Controller Identifier (CNTID)", FTUint32, BaseHex, 0xFFFF0000, ident, func(p *Packet) uint64 { return uint64(c(p).CDW[0] >> 16) })
	logp := admin(0x02)
	u(nvme, "nvme.cmd.get_logpage.numd", "Number of Dwords", FTUint32, BaseDec, 0, logp, func(p *Packet) uint64 {
		return uint64(c(p).CDW[0]>>16 | c(p).CDW[1]<<16) // 0-based, as tshark shows it
	})

	// completions: a fabrics command's result is its own (tshark shows no
	// DWORD0/1 and no phase tag for it)
	fcqe := func(p *Packet) bool { return cqe(p) && c(p) != nil && c(p).Fabrics() }
	ncqe := func(p *Packet) bool { return cqe(p) && !fcqe(p) }
	fres := func(t uint8, prop uint32) func(p *Packet) bool {
		return func(p *Packet) bool {
			return fcqe(p) && c(p).FCType == t && (t == NVMeFCConnect || c(p).PropOffset() == prop)
		}
	}
	u(nvme, "nvme.fabrics.cqe.connect.cntrlid", "Controller ID", FTUint16, BaseHex, 0, fres(NVMeFCConnect, 0), func(p *Packet) uint64 { return uint64(uint16(q(p).DW0)) })
	u(nvme, "nvme.fabrics.prop_get.ccap", "Controller Capabilities", FTUint64, BaseHex, 0, fres(NVMeFCPropertyGet, 0x00), func(p *Packet) uint64 { return uint64(q(p).DW0) | uint64(q(p).DW1)<<32 })
	u(nvme, "nvme.fabrics.prop_get.vs", "Version", FTUint32, BaseHex, 0, fres(NVMeFCPropertyGet, 0x08), func(p *Packet) uint64 { return uint64(q(p).DW0) })
	// CC and CSTS: the value a Property Get returns or a Property Set sets
	propReg := func(off uint32) (func(p *Packet) bool, func(p *Packet) uint64) {
		get := fres(NVMeFCPropertyGet, off)
		ok := func(p *Packet) bool { return get(p) || pset(p) && c(p).PropOffset() == off }
		return ok, func(p *Packet) uint64 {
			if cqe(p) {
				return uint64(q(p).DW0)
			}
			return uint64(uint32(c(p).PropValue()))
		}
	}
	ccOK, ccGet := propReg(0x14)
	u(nvme, "nvme.fabrics.prop_get_set.cc", "Controller Configuration", FTUint32, BaseHex, 0, ccOK, ccGet)
	cstsOK, cstsGet := propReg(0x1C)
	u(nvme, "nvme.fabrics.prop_get_set.csts", "Controller Status", FTUint32, BaseHex, 0, cstsOK, cstsGet)
	// tshark shows a Set Features Number of Queues result in place of DWORD0
	nq := func(p *Packet) bool {
		return ncqe(p) && c(p) != nil && c(p).Admin && c(p).Opcode == 0x09 && uint8(c(p).CDW[0]) == 0x07
	}
	u(nvme, "nvme.cqe.dword0.set_features.nq", "DWORD0: Set Feature Number of Queues Result", FTUint32, BaseHex, 0, nq, func(p *Packet) uint64 { return uint64(q(p).DW0) })
	u(nvme, "nvme.cqe.dword0", "DWORD0", FTUint32, BaseHex, 0, func(p *Packet) bool { return ncqe(p) && !nq(p) }, func(p *Packet) uint64 { return uint64(q(p).DW0) })
	u(nvme, "nvme.cqe.dword1", "DWORD1", FTUint32, BaseHex, 0, ncqe, func(p *Packet) uint64 { return uint64(q(p).DW1) })
	u(nvme, "nvme.cqe.sqhd", "SQ Head Pointer", FTUint16, BaseHex, 0, cqe, func(p *Packet) uint64 { return uint64(q(p).SQHD) })
	u(nvme, "nvme.cqe.sqid", "SQ Identifier", FTUint16, BaseHex, 0, cqe, func(p *Packet) uint64 { return uint64(q(p).SQID) })
	u(nvme, "nvme.cqe.cid", "Command Identifier", FTUint16, BaseHex, 0, cqe, func(p *Packet) uint64 { return uint64(q(p).CID) })
	u(nvme, "nvme.cqe.status", "Status Field", FTUint16, BaseHex, 0, cqe, func(p *Packet) uint64 { return uint64(q(p).Status) })
	u(nvme, "nvme.cqe.status.p", "Phase Tag", FTUint16, BaseHex, 0x0001, ncqe, func(p *Packet) uint64 { return uint64(q(p).Status & 1) })
	u(nvme, "nvme.cqe.status.rsvd", "Reserved", FTUint16, BaseHex, 0x0001, fcqe, func(p *Packet) uint64 { return uint64(q(p).Status & 1) })
	sc := u(nvme, "nvme.cqe.status.sc", "Status Code", FTUint16, BaseHex, 0x01FE, cqe, func(p *Packet) uint64 { return uint64(q(p).SC()) })
	sc.label = func(b []byte, p *Packet) []byte {
		if !cqe(p) {
			return b
		}
		return appendNamed(b, "Status Code", NVMeStatusName(q(p).SCT(), q(p).SC()))
	}
	u(nvme, "nvme.cqe.status.sct", "Status Code Type", FTUint16, BaseHex, 0x0E00, cqe, func(p *Packet) uint64 { return uint64(q(p).SCT()) })
	u(nvme, "nvme.cqe.status.crd", "Command Retry Delay", FTUint16, BaseHex, 0x3000, cqe, func(p *Packet) uint64 { return uint64(q(p).Status>>12) & 3 })
	u(nvme, "nvme.cqe.status.m", "More Infornation in Log Page", FTBoolean, BaseNone, 0x4000, cqe, func(p *Packet) uint64 { return uint64(q(p).Status>>14) & 1 })
	u(nvme, "nvme.cqe.status.dnr", "Do not Retry", FTBoolean, BaseNone, 0x8000, cqe, func(p *Packet) uint64 { return uint64(q(p).Status >> 15) })

	// rocetap's: names, the capsule's frames, the links
	rn := func(abbrev, name string, t FieldType, base Base, ok func(*Packet) bool, get func(*Packet) uint64) {
		u(rt, abbrev, name, t, base, 0, ok, get)
	}
	linked := func(p *Packet) bool { n := nv(p); return n != nil && n.Link.Linked }
	named := func(p *Packet) bool { n := nv(p); return n != nil && n.Cmd != nil }
	rn("rocetap.nvme.qid", "NVMe queue", FTUint16, BaseDec, hasQID, func(p *Packet) uint64 { return uint64(nv(p).QID) })
	s(rt, "rocetap.nvme.kind", "NVMe packet", func(p *Packet) string {
		if n := nv(p); n != nil && n.Kind != NVMeNone {
			return [...]string{"", "command", "completion", "data"}[n.Kind&3]
		}
		return ""
	})
	s(rt, "rocetap.nvme.opcode", "NVMe command", func(p *Packet) string {
		if !named(p) {
			return ""
		}
		return c(p).OpName()
	})
	s(rt, "rocetap.nvme.detail", "NVMe command detail (property, CNS, log page, feature)", func(p *Packet) string {
		if !named(p) {
			return ""
		}
		return c(p).Detail()
	})
	rn("rocetap.nvme.cid", "NVMe command identifier", FTUint16, BaseHex, func(p *Packet) bool { return named(p) || cqe(p) }, func(p *Packet) uint64 {
		if cqe(p) {
			return uint64(q(p).CID)
		}
		return uint64(c(p).CID)
	})
	rn("rocetap.nvme.nlb", "Number of logical blocks, 0-based as on the wire", FTUint16, BaseDec, func(p *Packet) bool { return named(p) && c(p).HasLBA() }, func(p *Packet) uint64 { return uint64(c(p).NLB()) })
	rn("rocetap.nvme.blocks", "Logical blocks", FTUint32, BaseDec, func(p *Packet) bool { return named(p) && c(p).HasLBA() }, func(p *Packet) uint64 { return uint64(c(p).NLB()) + 1 })
	s(rt, "rocetap.nvme.status", "NVMe status", func(p *Packet) string {
		if !cqe(p) {
			return ""
		}
		return q(p).StatusName()
	})
	all = append(all, multiField(rt, "rocetap.nvme.capsule_frames", "Capsule reassembled from frames", FTUint32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if n := nv(p); n == nil || n.Kind != NVMeCmd && n.Kind != NVMeCQE || len(p.Analysis.ULP.MsgFrames) < 2 {
			return out
		}
		for _, f := range p.Analysis.ULP.MsgFrames {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	}))
	frame := func(abbrev, name string, get func(l *NVMeLink) int) {
		rn(abbrev, name, FTUint32, BaseDec, func(p *Packet) bool { return linked(p) && get(&nv(p).Link) > 0 }, func(p *Packet) uint64 { return uint64(get(&nv(p).Link)) })
	}
	frame("rocetap.nvme.cmd_frame", "Command in frame", func(l *NVMeLink) int { return l.CmdFrame })
	frame("rocetap.nvme.cqe_frame", "Completion in frame", func(l *NVMeLink) int { return l.CQEFrame })
	frame("rocetap.nvme.inv_frame", "Key invalidated in frame", func(l *NVMeLink) int { return l.InvFrame })
	all = append(all, multiField(rt, "rocetap.nvme.data_frames", "Data moved in frames", FTUint32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if !linked(p) {
			return out
		}
		for _, f := range nv(p).Link.DataFrames {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	}))
	rn("rocetap.nvme.data_bytes", "Data bytes moved with the command's key", FTUint64, BaseDec, linked, func(p *Packet) uint64 { return nv(p).Link.DataBytes })
	rn("rocetap.nvme.data_offset", "Offset of this packet's data in the command's buffer", FTUint64, BaseDec, func(p *Packet) bool { return linked(p) && nv(p).Link.HasOffset }, func(p *Packet) uint64 { return nv(p).Link.Offset })
	rn("rocetap.nvme.latency", "Command to completion", FTRelTime, BaseNone, func(p *Packet) bool { return linked(p) && nv(p).Link.HasLatency }, func(p *Packet) uint64 { return uint64(nv(p).Link.Latency) })

	for _, f := range all {
		f.Stateful = true
	}
}
