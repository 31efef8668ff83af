package decode

import (
	"strconv"
	"time"
)

// RPCInfo is what the RPC-over-RDMA linker (package flow) found about one
// packet of an NFS-over-RDMA connection: the message the packet completes,
// decoded, and how the packet belongs to an RPC (its call, the RDMA
// READ/WRITE packets serving its chunks, its reply).
//
// The links are those known when the packet is tracked: in one pass over
// the capture a call and the data packets name the call, and the reply,
// which comes last, names everything; with a first pass (flow
// Options.Prior, decode -V/-T json/-e rocetap.rpc.*) every packet of the
// RPC does.
type RPCInfo struct {
	HasHdr bool    // the packet completes an RPC-over-RDMA message
	Hdr    RPCRDMA // its header
	// HasRPC: the ONC RPC message, from the SEND (RDMA_MSG) or, for an
	// RDMA_NOMSG reply, from the bytes the server wrote into the reply
	// chunk (FromChunk).
	HasRPC    bool
	RPC       RPCMsg
	FromChunk bool
	// The call's program, version and procedure (on a reply: of the call
	// it answers, when that is in the capture).
	HasProc                     bool
	Program, Version, Procedure uint32
	HasNFS                      bool // an NFSv4 COMPOUND
	NFS                         NFS4Compound

	// Linked: the packet is part of an RPC the linker follows (its call,
	// a data packet, its reply).
	Linked     bool
	XID        uint32
	CallFrame  int
	ReplyFrame int          // 0: not known (yet)
	Chunk      RPCChunkKind // on a data packet: the chunk it serves
	DataFrames []int        // the data packets of the RPC known so far
	DataBytes  uint64       // the bytes they moved
	Latency    time.Duration
	HasLatency bool
}

// Reset clears the info, keeping its buffers.
func (r *RPCInfo) Reset() {
	segs, writes, ops, attrs, frames := r.Hdr.Segs[:0], r.Hdr.Writes[:0], r.NFS.Ops[:0], r.NFS.AttrStatus[:0], r.DataFrames[:0]
	*r = RPCInfo{}
	r.Hdr.Segs, r.Hdr.Writes, r.NFS.Ops, r.NFS.AttrStatus, r.DataFrames = segs, writes, ops, attrs, frames
}

// RPCChunkKind says which chunk of an RPC an RDMA transfer serves.
type RPCChunkKind uint8

// Chunk kinds.
const (
	RPCChunkNone  RPCChunkKind = iota
	RPCChunkRead               // the server RDMA READs the client's read chunk
	RPCChunkWrite              // the server RDMA WRITEs a write chunk
	RPCChunkReply              // the server RDMA WRITEs the reply chunk
)

var rpcChunkNames = [...]string{"", "read", "write", "reply"}

func (k RPCChunkKind) String() string { return rpcChunkNames[k] }

// NFS4OpList names a COMPOUND's ops, space-separated ("SEQUENCE PUTFH
// READ"); an unknown op shows as its number.
func NFS4OpList(ops []NFS4Op) string {
	var b [64]byte // (most lists fit: one allocation, the string)
	return string(appendNFS4OpList(b[:0], ops))
}

func appendNFS4OpList(b []byte, ops []NFS4Op) []byte {
	for i, o := range ops {
		if i > 0 {
			b = append(b, ' ')
		}
		if n := NFS4OpName(o.Opcode); n != "" {
			b = append(b, n...)
		} else {
			b = strconv.AppendUint(b, uint64(o.Opcode), 10)
		}
	}
	return b
}

// AppendSummary appends the Info column of a packet with an
// RPC-over-RDMA message: "NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661
// Call", "NFS COMPOUND ... Reply NFS4ERR_NOENT", "RPC-over-RDMA
// RDMA_NOMSG xid=..."; nothing when the packet has none. Appended, not
// returned as a string: the Info column shows it on every message, and a
// string built for it was several allocations per packet.
func (r *RPCInfo) AppendSummary(b []byte) []byte {
	if r == nil || !r.HasHdr && !r.HasRPC {
		return b
	}
	xid := r.Hdr.XID
	if !r.HasHdr {
		xid = r.RPC.XID
	}
	switch {
	case r.HasNFS:
		b = append(b, "NFS COMPOUND "...)
		b = appendNFS4OpList(b, r.NFS.Ops)
	case r.HasProc && r.Program == NFSProgram && r.Procedure == NFS4ProcNull:
		b = append(b, "NFS NULL"...)
	case r.HasProc:
		b = append(b, "RPC program "...)
		b = strconv.AppendUint(b, uint64(r.Program), 10)
		b = append(b, " procedure "...)
		b = strconv.AppendUint(b, uint64(r.Procedure), 10)
	default:
		b = append(b, "RPC-over-RDMA "...)
		b = append(b, RPCRDMAProcName(r.Hdr.Proc)...)
	}
	b = append(b, " xid="...)
	b = appendHexInt(b, uint64(xid), 8)
	if r.HasHdr && r.Hdr.Proc == RPCRDMAError {
		b = append(b, ' ')
		b = append(b, r.ReplyError()...)
	}
	if r.HasRPC {
		if r.RPC.MsgType == RPCCall {
			b = append(b, " Call"...)
		} else {
			b = append(b, " Reply"...)
			if s := r.ReplyError(); s != "" {
				b = append(b, ' ')
				b = append(b, s...)
			}
		}
	}
	return b
}

// ReplyError names what failed in a reply: the RPC (denied, or not
// executed) or the NFS COMPOUND's status; "" for a success or a call.
func (r *RPCInfo) ReplyError() string {
	if r.HasHdr && r.Hdr.Proc == RPCRDMAError {
		if n := RPCRDMAErrName(r.Hdr.ErrCode); r.Hdr.HasErrCode && n != "" {
			return "RDMA_ERROR " + n
		}
		return "RDMA_ERROR"
	}
	if !r.HasRPC || r.RPC.MsgType != RPCReply {
		return ""
	}
	m := &r.RPC
	switch {
	case m.Have >= rpcHaveVersion && m.ReplyStat == RPCMsgDenied:
		return "RPC denied"
	case m.Have >= rpcHaveProgVers && m.AcceptStat != RPCSuccess:
		return "RPC " + RPCAcceptName(m.AcceptStat)
	case r.HasNFS && r.NFS.Have >= 1 && r.NFS.Status != 0:
		if n := NFS4StatusName(r.NFS.Status); n != "" {
			return n
		}
		return "NFS4 status " + itoa(uint64(r.NFS.Status))
	}
	return ""
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
