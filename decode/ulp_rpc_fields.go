package decode

// registerRPCFields registers the fields of NFS over RDMA: Wireshark's
// rpcordma.*, rpc.* and nfs.* (the values tshark's dissectors print) and
// rocetap.rpc.* (the links tshark does not make). They read
// p.Analysis.ULP.RPC, so they exist only on tracked packets (Stateful).
func registerRPCFields(rt *Field) {
	var all []*Field
	info := func(p *Packet) *RPCInfo {
		if u := p.Analysis.ULP; u != nil && p.Analysis.Tracked {
			return u.RPC
		}
		return nil
	}
	when := func(ok func(r *RPCInfo) bool) func(p *Packet) bool {
		return func(p *Packet) bool {
			r := info(p)
			return r != nil && ok(r)
		}
	}
	proto := func(abbrev, name string, ok func(r *RPCInfo) bool, bytes func(p *Packet) []byte) *Field {
		f := hdrField(abbrev, name, FTProtocol, 0, bytes)
		f.SetPresence(0, when(ok))
		all = append(all, f)
		return f
	}
	u := func(parent *Field, abbrev, name string, t FieldType, base Base, ok func(r *RPCInfo) bool, get func(r *RPCInfo) uint64) *Field {
		f := condUint(parent, abbrev, name, t, base, 0, -1, 0, when(ok), func(p *Packet) uint64 { return get(info(p)) })
		all = append(all, f)
		return f
	}
	multi := func(parent *Field, abbrev, name string, t FieldType, base Base, vals func(r *RPCInfo, out []Value) []Value) *Field {
		f := multiField(parent, abbrev, name, t, base, 0, func(p *Packet, out []Value) []Value {
			if r := info(p); r != nil {
				return vals(r, out)
			}
			return out
		})
		all = append(all, f)
		return f
	}
	names := func(f *Field, n func(v uint64) string) { f.names = n }

	// RPC-over-RDMA.
	hdr := func(r *RPCInfo) bool { return r.HasHdr }
	rdma := proto("rpcordma", "RPC over RDMA", hdr, func(p *Packet) []byte {
		if r := info(p); r != nil && r.HasHdr {
			return p.Analysis.ULP.Msg
		}
		return nil
	})
	u(rdma, "rpcordma.xid", "XID", FTUint32, BaseHex, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.Have >= 1 }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.XID) })
	u(rdma, "rpcordma.version", "Version", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.Have >= 2 }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.Version) })
	u(rdma, "rpcordma.flow_control", "Flow Control", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.Have >= 3 }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.Credits) })
	mt := u(rdma, "rpcordma.msg_type", "Message Type", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.Have >= 4 }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.Proc) })
	names(mt, func(v uint64) string { return RPCRDMAProcName(uint32(v)) })
	chunks := func(r *RPCInfo) bool {
		return r.HasHdr && r.Hdr.Have >= 4 && (r.Hdr.Proc == RPCRDMAMsg || r.Hdr.Proc == RPCRDMANoMsg || r.Hdr.Proc == RPCRDMAMsgP)
	}
	u(rdma, "rpcordma.rdma_align", "RDMA align", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.HasPadding }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.Align) })
	u(rdma, "rpcordma.rdma_thresh", "RDMA threshold", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.HasPadding }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.Thresh) })
	u(rdma, "rpcordma.reads_count", "Read list", FTUint32, BaseDec, func(r *RPCInfo) bool { return chunks(r) && r.Hdr.ListsDone }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.NReads) })
	u(rdma, "rpcordma.writes_count", "Write list", FTUint32, BaseDec, func(r *RPCInfo) bool { return chunks(r) && r.Hdr.ListsDone }, func(r *RPCInfo) uint64 { return uint64(len(r.Hdr.Writes)) })
	u(rdma, "rpcordma.reply_count", "Reply list", FTUint32, BaseDec, func(r *RPCInfo) bool { return chunks(r) && r.Hdr.ListsDone }, func(r *RPCInfo) uint64 { return b2u(r.Hdr.HasReply) })
	multi(rdma, "rpcordma.segment_count", "Write chunk segment count", FTUint32, BaseDec, func(r *RPCInfo, out []Value) []Value {
		if !r.HasHdr {
			return out
		}
		for _, w := range r.Hdr.Writes {
			out = append(out, Value{U: uint64(w.Count)})
		}
		if r.Hdr.HasReply {
			out = append(out, Value{U: uint64(r.Hdr.Reply.Count)})
		}
		return out
	})
	seg := func(abbrev, name string, t FieldType, base Base, reads bool, get func(s *RPCRDMASegment) uint64) {
		multi(rdma, abbrev, name, t, base, func(r *RPCInfo, out []Value) []Value {
			if !r.HasHdr {
				return out
			}
			segs := r.Hdr.Segs
			if reads {
				segs = r.Hdr.Reads()
			}
			for i := range segs {
				out = append(out, Value{U: get(&segs[i])})
			}
			return out
		})
	}
	seg("rpcordma.position", "Position in XDR", FTUint32, BaseDec, true, func(s *RPCRDMASegment) uint64 { return uint64(s.Position) })
	seg("rpcordma.rdma_handle", "RDMA handle", FTUint32, BaseHex, false, func(s *RPCRDMASegment) uint64 { return uint64(s.Handle) })
	seg("rpcordma.rdma_length", "RDMA length", FTUint32, BaseDec, false, func(s *RPCRDMASegment) uint64 { return uint64(s.Length) })
	seg("rpcordma.rdma_offset", "RDMA offset", FTUint64, BaseHex, false, func(s *RPCRDMASegment) uint64 { return s.Offset })
	errcode := u(rdma, "rpcordma.errcode", "Error code", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.HasErrCode }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.ErrCode) })
	names(errcode, func(v uint64) string { return RPCRDMAErrName(uint32(v)) })
	u(rdma, "rpcordma.vers_low", "Version low", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.HasVers }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.VersLow) })
	u(rdma, "rpcordma.vers_high", "Version high", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.HasHdr && r.Hdr.HasVers }, func(r *RPCInfo) uint64 { return uint64(r.Hdr.VersHigh) })

	// ONC RPC.
	has := func(n int) func(r *RPCInfo) bool { return func(r *RPCInfo) bool { return r.HasRPC && r.RPC.Have >= n } }
	call := func(n int) func(r *RPCInfo) bool {
		return func(r *RPCInfo) bool { return r.HasRPC && r.RPC.MsgType == RPCCall && r.RPC.Have >= n }
	}
	reply := func(n int) func(r *RPCInfo) bool {
		return func(r *RPCInfo) bool { return r.HasRPC && r.RPC.MsgType == RPCReply && r.RPC.Have >= n }
	}
	rpc := proto("rpc", "Remote Procedure Call", has(1), nil)
	u(rpc, "rpc.xid", "XID", FTUint32, BaseHexDec, has(rpcHaveXID), func(r *RPCInfo) uint64 { return uint64(r.RPC.XID) })
	mtyp := u(rpc, "rpc.msgtyp", "Message Type", FTUint32, BaseDec, has(rpcHaveType), func(r *RPCInfo) uint64 { return uint64(r.RPC.MsgType) })
	names(mtyp, func(v uint64) string { return [2]string{"Call", "Reply"}[v&1] })
	rstat := u(rpc, "rpc.replystat", "Reply State", FTUint32, BaseDec, reply(rpcHaveVersion), func(r *RPCInfo) uint64 { return uint64(r.RPC.ReplyStat) })
	names(rstat, func(v uint64) string { return [2]string{"accepted", "denied"}[v&1] })
	accepted := func(r *RPCInfo) bool { return reply(rpcHaveProgVers)(r) && r.RPC.ReplyStat == RPCMsgAccepted }
	denied := func(r *RPCInfo) bool { return reply(rpcHaveProgram)(r) && r.RPC.ReplyStat == RPCMsgDenied }
	u(rpc, "rpc.state_reject", "Reject State", FTUint32, BaseDec, denied, func(r *RPCInfo) uint64 { return uint64(r.RPC.RejectStat) })
	u(rpc, "rpc.version", "RPC Version", FTUint32, BaseDec, call(rpcHaveVersion), func(r *RPCInfo) uint64 { return uint64(r.RPC.RPCVersion) })
	// A reply shows its call's program, version and procedure, as tshark
	// does when it has seen the call; NFS repeats the version.
	prog := func(r *RPCInfo) bool { return r.HasRPC && r.HasProc }
	u(rpc, "rpc.program", "Program", FTUint32, BaseDec, prog, func(r *RPCInfo) uint64 { return uint64(r.Program) })
	multi(rpc, "rpc.programversion", "Program Version", FTUint32, BaseDec, func(r *RPCInfo, out []Value) []Value {
		if !prog(r) {
			return out
		}
		out = append(out, Value{U: uint64(r.Version)})
		if r.Program == NFSProgram {
			out = append(out, Value{U: uint64(r.Version)})
		}
		return out
	})
	u(rpc, "rpc.procedure", "Procedure", FTUint32, BaseDec, prog, func(r *RPCInfo) uint64 { return uint64(r.Procedure) })
	acc := u(rpc, "rpc.state_accept", "Accept State", FTUint32, BaseDec, accepted, func(r *RPCInfo) uint64 { return uint64(r.RPC.AcceptStat) })
	names(acc, func(v uint64) string { return RPCAcceptName(uint32(v)) })

	// NFSv4 COMPOUND.
	nfsHas := func(n int) func(r *RPCInfo) bool { return func(r *RPCInfo) bool { return r.HasNFS && r.NFS.Have >= n } }
	nfs := proto("nfs", "Network File System", func(r *RPCInfo) bool { return r.HasProc && r.Program == NFSProgram && r.HasRPC && r.RPC.Complete() }, nil)
	all = append(all, stringField(nfs, "nfs.tag", "Tag", 0, func(p *Packet) string {
		if r := info(p); r != nil && r.HasNFS && r.NFS.Have >= 1+b2i(r.NFS.Reply) {
			return string(r.NFS.Tag)
		}
		return ""
	}))
	u(nfs, "nfs.minorversion", "minorversion", FTUint32, BaseDec, func(r *RPCInfo) bool { return nfsHas(2)(r) && !r.NFS.Reply }, func(r *RPCInfo) uint64 { return uint64(r.NFS.MinorVersion) })
	op := multi(nfs, "nfs.opcode", "Opcode", FTUint32, BaseDec, func(r *RPCInfo, out []Value) []Value {
		if !r.HasNFS {
			return out
		}
		for _, o := range r.NFS.Ops {
			out = append(out, Value{U: uint64(o.Opcode)})
		}
		return out
	})
	names(op, func(v uint64) string { return NFS4OpName(uint32(v)) })
	st := multi(nfs, "nfs.status", "Status", FTUint32, BaseDec, func(r *RPCInfo, out []Value) []Value {
		if !r.HasNFS || r.NFS.Have < 1 {
			return out
		}
		if r.NFS.Reply {
			out = append(out, Value{U: uint64(r.NFS.Status)})
		}
		attrs := r.NFS.AttrStatus
		for _, o := range r.NFS.Ops {
			if o.HasStatus {
				out = append(out, Value{U: uint64(o.Status)})
			}
			for _, a := range attrs[:min(o.Attrs, len(attrs))] {
				out = append(out, Value{U: uint64(a)})
			}
			attrs = attrs[min(o.Attrs, len(attrs)):]
		}
		return out
	})
	names(st, func(v uint64) string { return NFS4StatusName(uint32(v)) })

	// rocetap's links.
	linked := func(r *RPCInfo) bool { return r.Linked }
	u(rt, "rocetap.rpc.xid", "RPC XID", FTUint32, BaseHex, linked, func(r *RPCInfo) uint64 { return uint64(r.XID) })
	u(rt, "rocetap.rpc.call_frame", "RPC call in frame", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.Linked && r.CallFrame > 0 }, func(r *RPCInfo) uint64 { return uint64(r.CallFrame) })
	u(rt, "rocetap.rpc.reply_frame", "RPC reply in frame", FTUint32, BaseDec, func(r *RPCInfo) bool { return r.Linked && r.ReplyFrame > 0 }, func(r *RPCInfo) uint64 { return uint64(r.ReplyFrame) })
	all = append(all, stringField(rt, "rocetap.rpc.chunk", "RDMA transfer for the RPC's chunk", 0, func(p *Packet) string {
		if r := info(p); r != nil && r.Linked {
			return r.Chunk.String()
		}
		return ""
	}))
	multi(rt, "rocetap.rpc.data_frames", "RPC data in frames", FTUint32, BaseDec, func(r *RPCInfo, out []Value) []Value {
		for _, f := range r.DataFrames {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	})
	u(rt, "rocetap.rpc.data_bytes", "RPC bytes moved by RDMA READ/WRITE", FTUint64, BaseDec, linked, func(r *RPCInfo) uint64 { return r.DataBytes })
	u(rt, "rocetap.rpc.latency", "RPC call to reply", FTRelTime, BaseNone, func(r *RPCInfo) bool { return r.HasLatency }, func(r *RPCInfo) uint64 { return uint64(r.Latency) })
	all = append(all, stringField(rt, "rocetap.rpc.error", "RPC or NFS error", 0, func(p *Packet) string {
		if r := info(p); r != nil {
			return r.ReplyError()
		}
		return ""
	}))
	for _, f := range all {
		f.Stateful = true
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
