package decode

import "fmt"

// RPC-over-RDMA version 1 (RFC 8166; RDMA_MSGP from RFC 5666), the
// transport header NFS over RDMA puts in front of every ONC RPC message it
// SENDs:
//
//	 0                   1                   2                   3
//	+-------------------------------+-------------------------------+
//	|                              XID                              |
//	|                       Version (1)                             |
//	|                       Credits                                 |
//	|                 Procedure (RDMA_MSG 0, NOMSG 1, ...)          |
//	+---------------------------------------------------------------+
//	| read list:  {1, position, handle, length, offset(8)}* 0       |
//	| write list: {1, count, {handle, length, offset(8)}*count}* 0  |
//	| reply chunk: 0 | 1, count, {handle, length, offset(8)}*count  |
//	+---------------------------------------------------------------+
//	| the RPC message (RDMA_MSG, RDMA_MSGP after align and thresh)  |
//
// The peer RDMA READs the read chunks (handle = its rkey, offset = VA) and
// RDMA WRITEs the write chunks and the reply chunk.

// RPC-over-RDMA procedures (rpcordma.msg_type).
const (
	RPCRDMAMsg   = 0 // RDMA_MSG: an RPC message follows
	RPCRDMANoMsg = 1 // RDMA_NOMSG: the RPC message is in a chunk
	RPCRDMAMsgP  = 2 // RDMA_MSGP: padded (RFC 5666)
	RPCRDMADone  = 3 // RDMA_DONE (RFC 5666)
	RPCRDMAError = 4 // RDMA_ERROR
)

var rpcrdmaProcNames = [...]string{"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE", "RDMA_ERROR"}

// RPCRDMAProcName names an RPC-over-RDMA procedure as Wireshark does.
func RPCRDMAProcName(v uint32) string {
	if int(v) < len(rpcrdmaProcNames) {
		return rpcrdmaProcNames[v]
	}
	return ""
}

// RPCRDMAErrName names an RDMA_ERROR code as Wireshark does.
func RPCRDMAErrName(v uint32) string {
	switch v {
	case 1:
		return "ERR_VERS"
	case 2:
		return "ERR_CHUNK"
	}
	return ""
}

// RPCRDMASegment is one RDMA segment: the memory the peer reads or writes.
type RPCRDMASegment struct {
	Handle   uint32 // the rkey
	Length   uint32
	Offset   uint64 // the virtual address
	Position uint32 // read segments: the XDR position the chunk is inserted at
	Off      int    // where the segment sits in the header (Position's word for reads)
}

// RPCRDMAChunk is a write chunk or the reply chunk: a counted array of
// segments (Segs indexes RPCRDMA.Segs).
type RPCRDMAChunk struct {
	Count    uint32 // the segment count on the wire
	Off      int    // offset of the count in the header
	First, N int    // Segs[First:First+N] are its decoded segments
}

// RPCRDMA is a decoded RPC-over-RDMA header. Decode fills it as far as the
// bytes go: Have says how many of the four fixed words were present, and
// the lists hold the segments decoded before the end.
type RPCRDMA struct {
	XID, Version, Credits, Proc uint32
	Have                        int // fixed words present (0-4)

	Segs     []RPCRDMASegment // read segments, then write chunks', then the reply chunk's
	NReads   int              // Segs[:NReads] are the read list
	Writes   []RPCRDMAChunk   // the write list
	Reply    RPCRDMAChunk     // the reply chunk, when HasReply
	HasReply bool
	// ListsDone is set once the three lists were read to their end.
	ListsDone bool

	Align, Thresh                   uint32 // RDMA_MSGP
	ErrCode                         uint32 // RDMA_ERROR
	VersLow, VersHigh               uint32 // RDMA_ERROR ERR_VERS
	HasErrCode, HasVers, HasPadding bool

	HdrLen int    // bytes of the header (valid when ListsDone)
	Body   []byte // what follows the header: the RPC message of RDMA_MSG(P)
}

// maxRPCRDMASegs bounds the segments a header may list (a 1024-byte
// inline threshold holds at most 64 of them; Linux allows 8 + 1).
const maxRPCRDMASegs = 256

// Decode decodes the header at the start of b, reusing r's slices. An
// error wraps ErrTruncated when b ends inside the header (r holds what came
// before), ErrMalformed for a version other than 1 or an absurd list.
func (r *RPCRDMA) Decode(b []byte) error {
	*r = RPCRDMA{Segs: r.Segs[:0], Writes: r.Writes[:0]}
	x := xdr{b: b}
	for _, p := range []*uint32{&r.XID, &r.Version, &r.Credits, &r.Proc} {
		v := x.u32()
		if !x.ok() {
			return truncated("rpcordma", 16, len(b))
		}
		*p = v
		r.Have++
	}
	if r.Version != 1 {
		return fmt.Errorf("rpcordma: version %d: %w", r.Version, ErrMalformed)
	}
	switch r.Proc {
	case RPCRDMADone:
		r.ListsDone, r.HdrLen, r.Body = true, x.off, b[x.off:]
		return nil
	case RPCRDMAError:
		r.ErrCode = x.u32()
		if !x.ok() {
			return truncated("rpcordma", 20, len(b))
		}
		r.HasErrCode = true
		if r.ErrCode == 1 { // ERR_VERS
			r.VersLow, r.VersHigh = x.u32(), x.u32()
			if !x.ok() {
				return truncated("rpcordma", 28, len(b))
			}
			r.HasVers = true
		}
		r.ListsDone, r.HdrLen, r.Body = true, x.off, b[x.off:]
		return nil
	case RPCRDMAMsgP:
		r.Align, r.Thresh = x.u32(), x.u32()
		if !x.ok() {
			return truncated("rpcordma", 24, len(b))
		}
		r.HasPadding = true
	case RPCRDMAMsg, RPCRDMANoMsg:
	default:
		return fmt.Errorf("rpcordma: procedure %d: %w", r.Proc, ErrMalformed)
	}
	if err := r.lists(&x); err != nil {
		return err
	}
	r.ListsDone, r.HdrLen, r.Body = true, x.off, b[x.off:]
	return nil
}

func (r *RPCRDMA) lists(x *xdr) error {
	short := func() error { return truncated("rpcordma", x.off+4, len(x.b)) }
	// Read list: optional-data items of one read segment each.
	for {
		follows := x.u32()
		if !x.ok() {
			return short()
		}
		if follows == 0 {
			break
		}
		off := x.off
		s := RPCRDMASegment{Position: x.u32(), Handle: x.u32(), Length: x.u32(), Offset: x.u64(), Off: off}
		if !x.ok() {
			return short()
		}
		if len(r.Segs) == maxRPCRDMASegs {
			return fmt.Errorf("rpcordma: more than %d segments: %w", maxRPCRDMASegs, ErrMalformed)
		}
		r.Segs = append(r.Segs, s)
		r.NReads++
	}
	// Write list: optional-data items of one write chunk each.
	for {
		follows := x.u32()
		if !x.ok() {
			return short()
		}
		if follows == 0 {
			break
		}
		c, err := r.chunk(x)
		r.Writes = append(r.Writes, c)
		if err != nil {
			return err
		}
	}
	follows := x.u32()
	if !x.ok() {
		return short()
	}
	if follows != 0 {
		c, err := r.chunk(x)
		r.Reply, r.HasReply = c, true
		if err != nil {
			return err
		}
	}
	return nil
}

// chunk reads a write chunk's count and segments.
func (r *RPCRDMA) chunk(x *xdr) (RPCRDMAChunk, error) {
	c := RPCRDMAChunk{Off: x.off, Count: x.u32(), First: len(r.Segs)}
	if !x.ok() {
		return c, truncated("rpcordma", x.off+4, len(x.b))
	}
	for range c.Count {
		off := x.off
		s := RPCRDMASegment{Handle: x.u32(), Length: x.u32(), Offset: x.u64(), Off: off}
		if !x.ok() {
			return c, truncated("rpcordma", off+16, len(x.b))
		}
		if len(r.Segs) == maxRPCRDMASegs {
			return c, fmt.Errorf("rpcordma: more than %d segments: %w", maxRPCRDMASegs, ErrMalformed)
		}
		r.Segs = append(r.Segs, s)
		c.N++
	}
	return c, nil
}

// Reads returns the read list's segments.
func (r *RPCRDMA) Reads() []RPCRDMASegment { return r.Segs[:r.NReads] }

// ChunkSegs returns a write or reply chunk's decoded segments.
func (r *RPCRDMA) ChunkSegs(c RPCRDMAChunk) []RPCRDMASegment { return r.Segs[c.First : c.First+c.N] }
