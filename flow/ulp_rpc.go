package flow

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// The RPC-over-RDMA linker (NFS over RDMA, RFC 8166): it decodes each
// SEND (the RPC-over-RDMA header, the ONC RPC message, an NFSv4
// COMPOUND's ops and statuses), matches each reply to its call by XID,
// and links the call to the RDMA transfers that serve its chunks: the
// server's RDMA READs of a read chunk (handle = the READ's rkey, offset =
// its address) and its RDMA WRITEs into a write chunk or the reply chunk.
// An RDMA_NOMSG reply's RPC message is the bytes the server wrote into the
// reply chunk, which the linker keeps for it; an RDMA_NOMSG call's (a long
// call) is in its position-zero read chunk, the bytes the server's RDMA
// READ responses carry, decoded on the response that completes them.
//
// Memory follows the calls in flight, not the calls made: a call is
// counted in the statistics as it goes (its procedure when sent, its data,
// its reply) and forgotten once answered, unless the tracker keeps every
// call (Options.KeepULP: a first pass, tests). A connection keeps at most
// maxRPCCalls calls waiting: past it the oldest is given up as never
// answered, as those still waiting at the end of the capture are.

func init() {
	RegisterULP(decode.ULPRPCRDMA, func(t *Tracker) ULPLinker {
		l := &RPCLinker{t: t, keepAll: t.opts.KeepULP, procs: map[string]int{}, ops: map[string]int{}, errs: map[string]int{}}
		if t.opts.Prior != nil {
			if pl, ok := t.opts.Prior.ULPLinker(decode.ULPRPCRDMA).(*RPCLinker); ok {
				l.prior = map[int]*RPCCall{}
				for _, c := range pl.calls {
					if c.CallFrame != 0 {
						l.prior[c.CallFrame] = c
					}
				}
			}
		}
		return l
	})
}

// maxRPCCalls bounds the calls a connection keeps waiting for a reply (a
// var for the tests);
// maxReplyChunk the bytes kept of a reply chunk segment, maxReplyKept
// those of all the reply chunks waiting for their reply (a hostile
// capture cannot make the linker hold more).
var maxRPCCalls = 1 << 16

const (
	maxReplyChunk = 1 << 20
	maxReplyKept  = 64 << 20
)

// RPCLinker is the analysis of the NFS-over-RDMA connections of a
// tracker; Calls lists what it found, for the reports.
type RPCLinker struct {
	t    *Tracker
	info decode.RPCInfo
	// keepAll: every call is kept to the end (Options.KeepULP), in calls,
	// with the unmatched replies, in capture order
	keepAll bool
	calls   []*RPCCall
	// st: the statistics, counted as the calls go; procs, ops and errs
	// index its lists by name
	st               RPCStats
	procs, ops, errs map[string]int
	chunk            []byte
	at               []int // reduced's
	kept             int   // bytes of reply chunks kept (maxReplyKept)
	// prior: the calls a first pass over the capture found, by the frame
	// of their call (Options.Prior), so every packet of an RPC shows its
	// reply, data and latency.
	prior map[int]*RPCCall
}

// RPCCall is one RPC: its call, the RDMA transfers serving its chunks and
// its reply.
type RPCCall struct {
	XID                         uint32
	Session                     uint32
	CallFrame                   int // 0: a reply whose call the capture lacks
	CallTime                    time.Time
	HasProc                     bool
	Program, Version, Procedure uint32
	Ops                         []uint32 // an NFSv4 COMPOUND's op codes
	DataFrames                  []int
	DataBytes                   uint64
	ReplyFrame                  int
	Latency                     time.Duration
	Error                       string // what failed, from the reply ("" when it succeeded)

	segs     []rpcSeg
	proc     int  // index in the stats' ByProc
	inFlight bool // in its connection's tables, waiting for its reply
	// long: an RDMA_NOMSG call, its RPC message in the position-zero read
	// chunk, not decoded yet; counted: in the stats (a long call is
	// counted once decoded, or answered, or given up)
	long, counted bool
}

// Name names the RPC for reports: "COMPOUND SEQUENCE PUTFH READ", "NULL",
// "program 100005 v3 procedure 1".
func (c *RPCCall) Name() string {
	switch {
	case !c.HasProc:
		return "unknown"
	case c.Program == decode.NFSProgram && c.Procedure == decode.NFS4ProcNull:
		return "NULL"
	case c.Program == decode.NFSProgram && c.Version == 4 && c.Procedure == decode.NFS4ProcCompound:
		ops := make([]decode.NFS4Op, len(c.Ops))
		for i, o := range c.Ops {
			ops[i].Opcode = o
		}
		return "COMPOUND " + decode.NFS4OpList(ops)
	}
	return "program " + strconv.FormatUint(uint64(c.Program), 10) + " v" + strconv.FormatUint(uint64(c.Version), 10) +
		" procedure " + strconv.FormatUint(uint64(c.Procedure), 10)
}

type rpcSeg struct {
	kind   decode.RPCChunkKind
	pos    uint32 // a read segment's XDR position
	handle uint32
	va     uint64
	length uint32
	buf    []byte // reply chunk, long call: the bytes moved so far, at their offsets
}

type rpcConn struct {
	out  map[uint32]*RPCCall   // calls waiting for their reply, by XID
	keys map[uint32][]*RPCCall // by the handle of a chunk segment
	// order holds the calls waiting, oldest first from head; those
	// answered since are skipped, and swept out when they outnumber the
	// waiting ones
	order []*RPCCall
	head  int
}

// Calls returns every RPC the linker saw, in the order of their calls
// (replies without a call where they came), when the tracker keeps them
// all (Options.KeepULP); else nil.
func (l *RPCLinker) Calls() []*RPCCall { return l.calls }

func (l *RPCLinker) conn(c *ULPConn) *rpcConn {
	rc, _ := c.State.(*rpcConn)
	if rc == nil {
		rc = &rpcConn{out: map[uint32]*RPCCall{}, keys: map[uint32][]*RPCCall{}}
		c.State = rc
	}
	return rc
}

func (l *RPCLinker) start(p *decode.Packet) *decode.RPCInfo {
	l.info.Reset()
	p.Analysis.ULP.RPC = &l.info
	return &l.info
}

// Message decodes a SEND and links it.
func (l *RPCLinker) Message(c *ULPConn, m *ULPMessage, p *decode.Packet) {
	rc := l.conn(c)
	in := l.start(p)
	_ = in.Hdr.Decode(m.Data)
	in.HasHdr = in.Hdr.Have > 0
	if in.Hdr.Have < 4 {
		return
	}
	xid := in.Hdr.XID
	switch in.Hdr.Proc {
	case decode.RPCRDMAMsg, decode.RPCRDMAMsgP:
		if !in.Hdr.ListsDone {
			return
		}
		_ = in.RPC.Decode(in.Hdr.Body)
		in.HasRPC = in.RPC.Have > 0
		if in.RPC.Have >= 2 && in.RPC.MsgType == decode.RPCCall {
			l.call(c, rc, in, p)
		} else if in.RPC.Have >= 2 && in.RPC.MsgType == decode.RPCReply {
			l.reply(c, rc, in, p, xid)
		}
	case decode.RPCRDMANoMsg:
		if !in.Hdr.ListsDone {
			return
		}
		if call := rc.out[xid]; call != nil && call.CallFrame != 0 {
			// The server's reply: its RPC message is in the reply chunk.
			l.gather(call, in)
			in.FromChunk = true
			l.reply(c, rc, in, p, xid)
		} else {
			// A call sent in a position-zero read chunk: its RPC
			// message is what the server RDMA READs.
			l.call(c, rc, in, p)
		}
	case decode.RPCRDMAError:
		l.reply(c, rc, in, p, xid)
	}
}

// call records a call and its chunks.
func (l *RPCLinker) call(c *ULPConn, rc *rpcConn, in *decode.RPCInfo, p *decode.Packet) {
	call := &RPCCall{XID: in.Hdr.XID, Session: c.Session, CallFrame: p.Frame.Number, CallTime: p.Frame.Time} // its procedure: decodeCall
	h := &in.Hdr
	for _, s := range h.Reads() {
		call.segs = append(call.segs, rpcSeg{kind: decode.RPCChunkRead, pos: s.Position, handle: s.Handle, va: s.Offset, length: s.Length})
		call.long = call.long || h.Proc == decode.RPCRDMANoMsg && s.Position == 0
	}
	for _, w := range h.Writes {
		for _, s := range h.ChunkSegs(w) {
			call.segs = append(call.segs, rpcSeg{kind: decode.RPCChunkWrite, handle: s.Handle, va: s.Offset, length: s.Length})
		}
	}
	if h.HasReply {
		for _, s := range h.ChunkSegs(h.Reply) {
			call.segs = append(call.segs, rpcSeg{kind: decode.RPCChunkReply, handle: s.Handle, va: s.Offset, length: s.Length})
		}
	}
	if !call.long {
		l.decodeCall(c, call, in, p, len(in.Hdr.Body))
	}
	if old := rc.out[call.XID]; old != nil {
		l.forget(rc, old) // sent again: the new call replaces it
		l.settle(old)
	}
	if len(rc.out) >= maxRPCCalls {
		l.giveUp(c, rc)
	}
	rc.out[call.XID] = call
	for _, s := range call.segs {
		rc.keys[s.handle] = append(rc.keys[s.handle], call)
	}
	call.inFlight = true
	rc.push(call)
	if !call.long {
		l.count(call)
	}
	if l.keepAll {
		l.calls = append(l.calls, call)
	}
	l.link(in, call)
}

// push queues a call waiting for its reply, sweeping out those answered
// when they are more than those waiting.
func (rc *rpcConn) push(call *RPCCall) {
	if n := len(rc.order) - rc.head; n >= 64 && n > 2*len(rc.out) {
		live := rc.order[:0]
		for _, c := range rc.order[rc.head:] {
			if c.inFlight {
				live = append(live, c)
			}
		}
		clear(rc.order[len(live):])
		rc.order, rc.head = live, 0
	}
	rc.order = append(rc.order, call)
}

// giveUp forgets the oldest call still waiting on a connection that has
// too many: it is reported as never answered.
func (l *RPCLinker) giveUp(c *ULPConn, rc *rpcConn) {
	for rc.head < len(rc.order) {
		old := rc.order[rc.head]
		rc.order[rc.head] = nil
		rc.head++
		if old.inFlight {
			l.forget(rc, old)
			l.settle(old)
			l.noReply(c, old)
			return
		}
	}
}

// noReply reports a call never answered.
func (l *RPCLinker) noReply(c *ULPConn, call *RPCCall) {
	c.EventAt(decode.EventULPNoCompletion, call.CallFrame, call.CallTime.UnixNano(), "RPC call xid="+hexN(call.XID, 8)+" "+call.Name()+" never answered")
}

// decodeCall takes the procedure and an NFSv4 COMPOUND's ops of a call
// from its RPC message, decoded in in.RPC; msgLen is the length of the
// RPC message (the chunks' XDR positions count from its start).
func (l *RPCLinker) decodeCall(c *ULPConn, call *RPCCall, in *decode.RPCInfo, p *decode.Packet, msgLen int) {
	if in.HasRPC && in.RPC.Have >= 5 {
		call.HasProc, call.Program, call.Version, call.Procedure = true, in.RPC.Program, in.RPC.ProgVersion, in.RPC.Procedure
	}
	in.HasProc, in.Program, in.Version, in.Procedure = call.HasProc, call.Program, call.Version, call.Procedure
	if l.isCompound(call) && in.RPC.Complete() {
		err := in.NFS.DecodeCallReduced(in.RPC.Body, l.reduced(call, msgLen-len(in.RPC.Body)))
		l.malformed(c, p, call.XID, err)
		in.HasNFS = in.NFS.Have > 0
		for _, o := range in.NFS.Ops {
			call.Ops = append(call.Ops, o.Opcode)
		}
	}
}

// reduced returns the offsets in a call's RPC body (at off in the RPC
// message) where the data items its read chunks carry were, for the NFS
// decoder to step over.
func (l *RPCLinker) reduced(call *RPCCall, off int) []int {
	l.at = l.at[:0]
	for _, s := range call.segs {
		if p := int(s.pos) - off; s.kind == decode.RPCChunkRead && s.pos != 0 && p >= 0 && !slices.Contains(l.at, p) {
			l.at = append(l.at, p)
		}
	}
	slices.Sort(l.at)
	return l.at
}

// longCall decodes a long call's RPC message once the READ responses
// have brought every byte of its position-zero read chunk (its segments
// in order), on the packet p that completes them.
func (l *RPCLinker) longCall(c *ULPConn, call *RPCCall, in *decode.RPCInfo, p *decode.Packet) {
	l.chunk = l.chunk[:0]
	for i := range call.segs {
		s := &call.segs[i]
		if s.kind != decode.RPCChunkRead || s.pos != 0 {
			continue
		}
		if len(s.buf) < int(min(s.length, maxReplyChunk)) {
			return // more to come
		}
		l.chunk = append(l.chunk, s.buf...)
	}
	call.long = false
	for i := range call.segs {
		if s := &call.segs[i]; s.kind == decode.RPCChunkRead && s.pos == 0 {
			l.kept -= len(s.buf)
			s.buf = nil
		}
	}
	_ = in.RPC.Decode(l.chunk)
	in.HasRPC, in.FromChunk = in.RPC.Have > 0, true
	if in.RPC.Have >= 2 && in.RPC.MsgType == decode.RPCCall {
		l.decodeCall(c, call, in, p, len(l.chunk))
	}
	l.countOnce(call)
}

// countOnce counts a call in the statistics unless it is already.
func (l *RPCLinker) countOnce(call *RPCCall) {
	if !call.counted {
		l.count(call)
	}
}

// settle counts a call that leaves the connection's tables (answered,
// sent again, given up, never answered): the bytes its chunks moved.
func (l *RPCLinker) settle(call *RPCCall) {
	l.countOnce(call)
	l.st.ByProc[call.proc].Bytes += call.DataBytes
}

// writtenChunks counts the write chunks a reply's header says the server
// wrote (a segment length not 0): each holds a data item of the reply.
func writtenChunks(h *decode.RPCRDMA) int {
	n := 0
	for _, w := range h.Writes {
		for _, s := range h.ChunkSegs(w) {
			if s.Length > 0 {
				n++
				break
			}
		}
	}
	return n
}

// malformed reports a COMPOUND whose ops stop early: an unknown op, a
// value its XDR does not allow, or a message shorter than its ops (unless
// the capture cut the packet: then it is the capture's doing).
func (l *RPCLinker) malformed(c *ULPConn, p *decode.Packet, xid uint32, err error) {
	if errors.Is(err, decode.ErrMalformed) || errors.Is(err, decode.ErrTruncated) && p.Flags&decode.FlagTruncated == 0 {
		c.Event(p, decode.EventULPMalformed, "NFS COMPOUND xid="+hexN(xid, 8)+": "+err.Error())
	}
}

// link fills the packet's links from what is known of call so far (all
// of it when a first pass saw the capture).
func (l *RPCLinker) link(in *decode.RPCInfo, call *RPCCall) {
	if f := l.prior[call.CallFrame]; f != nil && call.CallFrame != 0 {
		call = f
	}
	in.Linked, in.XID, in.CallFrame, in.ReplyFrame = true, call.XID, call.CallFrame, call.ReplyFrame
	in.DataFrames = append(in.DataFrames[:0], call.DataFrames...)
	in.DataBytes = call.DataBytes
	if call.ReplyFrame != 0 {
		in.Latency, in.HasLatency = call.Latency, true
	}
}

func (l *RPCLinker) isCompound(c *RPCCall) bool {
	return c.HasProc && c.Program == decode.NFSProgram && c.Version == 4 && c.Procedure == decode.NFS4ProcCompound
}

// forget drops a call from the connection's tables and the reply chunk
// bytes it kept.
func (l *RPCLinker) forget(rc *rpcConn, call *RPCCall) {
	delete(rc.out, call.XID)
	call.inFlight = false
	for rc.head < len(rc.order) && !rc.order[rc.head].inFlight {
		rc.order[rc.head] = nil
		rc.head++
	}
	if rc.head == len(rc.order) {
		rc.order, rc.head = rc.order[:0], 0
	}
	for i := range call.segs {
		l.kept -= len(call.segs[i].buf)
		call.segs[i].buf = nil
	}
	for _, s := range call.segs {
		calls := slices.DeleteFunc(rc.keys[s.handle], func(c *RPCCall) bool { return c == call })
		if len(calls) == 0 {
			delete(rc.keys, s.handle)
		} else {
			rc.keys[s.handle] = calls
		}
	}
}

// gather decodes an RDMA_NOMSG reply's RPC message from the bytes written
// into the reply chunk: as many of each segment as the reply's own reply
// chunk says were written.
func (l *RPCLinker) gather(call *RPCCall, in *decode.RPCInfo) {
	h := &in.Hdr
	if !h.HasReply {
		return
	}
	l.chunk = l.chunk[:0]
	for _, s := range h.ChunkSegs(h.Reply) {
		for i := range call.segs {
			cs := &call.segs[i]
			if cs.kind != decode.RPCChunkReply || cs.handle != s.Handle || s.Offset < cs.va {
				continue
			}
			off := s.Offset - cs.va
			n := min(uint64(s.Length), uint64(len(cs.buf))-min(off, uint64(len(cs.buf))))
			if off <= uint64(len(cs.buf)) {
				l.chunk = append(l.chunk, cs.buf[off:off+n]...)
			}
			break
		}
	}
	if len(l.chunk) == 0 {
		return
	}
	_ = in.RPC.Decode(l.chunk)
	in.HasRPC = in.RPC.Have > 0
}

// reply matches a reply (RPC reply, RDMA_NOMSG or RDMA_ERROR) to its call.
func (l *RPCLinker) reply(c *ULPConn, rc *rpcConn, in *decode.RPCInfo, p *decode.Packet, xid uint32) {
	call := rc.out[xid]
	if call == nil {
		l.st.Orphans++
		if l.keepAll {
			l.calls = append(l.calls, &RPCCall{XID: xid, Session: c.Session, ReplyFrame: p.Frame.Number})
		}
		c.Event(p, decode.EventULPNoCommand, "RPC reply xid="+hexN(xid, 8)+" matches no call")
		return
	}
	l.forget(rc, call)
	l.settle(call)
	call.ReplyFrame = p.Frame.Number
	call.Latency = p.Frame.Time.Sub(call.CallTime)
	in.HasProc, in.Program, in.Version, in.Procedure = call.HasProc, call.Program, call.Version, call.Procedure
	if in.HasRPC && l.isCompound(call) && in.RPC.Complete() && in.RPC.AcceptStat == decode.RPCSuccess && in.RPC.ReplyStat == decode.RPCMsgAccepted {
		l.malformed(c, p, xid, in.NFS.DecodeReplyReduced(in.RPC.Body, writtenChunks(&in.Hdr)))
		in.HasNFS = in.NFS.Have > 0
	}
	l.link(in, call)
	call.Error = in.ReplyError()
	l.countReply(call)
	if call.Error != "" {
		c.Event(p, decode.EventULPError, "RPC xid="+hexN(xid, 8)+" "+call.Name()+": "+call.Error)
	}
}

// Data links an RDMA READ request, READ response or WRITE packet to the
// call whose chunk segment holds its address.
func (l *RPCLinker) Data(c *ULPConn, d *ULPData, p *decode.Packet) {
	rc := l.conn(c)
	calls := rc.keys[d.RKey]
	for i := len(calls) - 1; i >= 0; i-- {
		call := calls[i]
		for j := range call.segs {
			s := &call.segs[j]
			if s.handle != d.RKey || d.VA < s.va || d.VA-s.va >= uint64(s.length) {
				continue
			}
			if (d.Op == decode.MPTOpRead) != (s.kind == decode.RPCChunkRead) {
				continue
			}
			call.DataFrames = append(call.DataFrames, p.Frame.Number)
			if !d.Request {
				call.DataBytes += d.Len
			}
			in := l.start(p)
			pos0 := call.long && s.kind == decode.RPCChunkRead && s.pos == 0 // the long call's message
			if (s.kind == decode.RPCChunkReply || pos0) && !d.Request {
				l.keep(s, d.VA-s.va, p.Payload)
				if pos0 {
					l.longCall(c, call, in, p)
				}
			}
			l.link(in, call)
			in.Chunk = s.kind
			return
		}
	}
}

// keep copies bytes written into a reply chunk segment at offset off.
func (l *RPCLinker) keep(s *rpcSeg, off uint64, b []byte) {
	end := min(off+uint64(len(b)), uint64(s.length), maxReplyChunk)
	if off >= end {
		return
	}
	if grow := int(end) - len(s.buf); grow > 0 {
		if l.kept+grow > maxReplyKept {
			return
		}
		l.kept += grow
		s.buf = append(s.buf, make([]byte, grow)...)
	}
	copy(s.buf[off:end], b)
}

// End reports the calls never answered.
func (l *RPCLinker) End() {
	for _, c := range l.t.ULPConns() {
		rc, _ := c.State.(*rpcConn)
		if rc == nil {
			continue
		}
		open := make([]*RPCCall, 0, len(rc.out))
		for _, call := range rc.out {
			open = append(open, call)
		}
		sort.Slice(open, func(i, j int) bool { return open[i].CallFrame < open[j].CallFrame })
		for _, call := range open {
			l.settle(call)
			l.noReply(c, call)
		}
	}
}

// RPCStats sums up the RPCs of a capture for `rocetap stats`.
type RPCStats struct {
	Calls      int // calls seen
	Replied    int
	Errors     int // replies saying the RPC or NFS failed
	Unanswered int // calls never answered in the capture
	Orphans    int // replies to no call
	// ByProc counts calls by procedure and, for an NFSv4 COMPOUND, op
	// list, in order of first appearance.
	ByProc []RPCProcStats
	// ByOp counts the NFSv4 ops of every COMPOUND call.
	ByOp []RPCCount
	// ByError counts the failed replies by what failed.
	ByError []RPCCount
}

// RPCProcStats is one line of RPCStats.ByProc.
type RPCProcStats struct {
	Procedure string // "COMPOUND", "NULL", "program 100005 v3 procedure 1"
	Ops       string // a COMPOUND's ops: "SEQUENCE PUTFH READ"
	Count     int
	Errors    int
	Latency   Latency // call to reply
	Bytes     uint64  // moved by RDMA READ/WRITE for its chunks
}

// RPCCount is a name and how many times it occurred.
type RPCCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// count counts a new call in the statistics.
func (l *RPCLinker) count(c *RPCCall) {
	st := &l.st
	st.Calls++
	c.counted = true
	name := c.Name()
	i, ok := l.procs[name]
	if !ok {
		proc, opList, _ := strings.Cut(name, " ")
		if proc != "COMPOUND" {
			proc, opList = name, ""
		}
		i = len(st.ByProc)
		l.procs[name] = i
		st.ByProc = append(st.ByProc, RPCProcStats{Procedure: proc, Ops: opList})
	}
	c.proc = i
	st.ByProc[i].Count++
	for _, o := range c.Ops {
		n := decode.NFS4OpName(o)
		if n == "" {
			n = strconv.FormatUint(uint64(o), 10)
		}
		countName(&st.ByOp, l.ops, n)
	}
}

// countReply counts a call's reply in the statistics.
func (l *RPCLinker) countReply(c *RPCCall) {
	st := &l.st
	p := &st.ByProc[c.proc]
	st.Replied++
	p.Latency.Add(c.Latency)
	if c.Error != "" {
		st.Errors++
		p.Errors++
		countName(&st.ByError, l.errs, c.Error)
	}
}

// countName counts one more of name in list, idx indexing list by name.
func countName(list *[]RPCCount, idx map[string]int, name string) {
	i, ok := idx[name]
	if !ok {
		i = len(*list)
		idx[name] = i
		*list = append(*list, RPCCount{Name: name})
	}
	(*list)[i].Count++
}

// Stats returns the summary of the RPCs the linker saw: the calls not
// answered (yet) are the unanswered.
func (l *RPCLinker) Stats() *RPCStats {
	st := l.st
	st.ByProc = slices.Clone(l.st.ByProc)
	st.ByOp = slices.Clone(l.st.ByOp)
	st.ByError = slices.Clone(l.st.ByError)
	st.Unanswered = st.Calls - st.Replied
	return &st
}
