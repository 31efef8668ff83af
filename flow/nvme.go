package flow

import (
	"slices"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// NVMe-oF/RDMA linker: each command capsule is matched to its completion
// (its CID on that queue), to the RDMA READ/WRITE packets that moved its
// data (by the keyed SGL's key, each transfer checked against the SGL's
// address range) and to the SEND with Invalidate of its key. Expert
// findings: an error status, a completion with no command, a command never
// completed (but an Asynchronous Event Request, outstanding by design), data
// moved different from the command's length, a key used after it was
// invalidated, a transfer outside the SGL.
//
// A capsule of 16 bytes is a completion, one of 64 and more a command, so
// a connection found by decode-as needs no roles. The queue ID comes from
// the CM REQ private data, else from a Connect; a queue whose ID is not
// known is taken for an I/O queue (a capture that starts mid-stream is
// mostly I/O).

func init() {
	RegisterULP(decode.ULPNVMe, func(t *Tracker) ULPLinker {
		l := &NVMeLinker{t: t, keep: t.opts.KeepULP, queues: map[uint64]int{}, status: map[uint16]int{}}
		if t.opts.Prior != nil {
			if pl, ok := t.opts.Prior.ULPLinker(decode.ULPNVMe).(*NVMeLinker); ok {
				l.prior = map[int]*NVMeCommand{}
				pl.each(func(k *NVMeCommand) { l.prior[k.Frame] = k })
			}
		}
		return l
	})
}

// NVMeLinker is the NVMe-oF linker of a tracker; the reports read its
// commands.
type NVMeLinker struct {
	t *Tracker
	// keep: every command is kept to the end (Options.KeepULP); else a
	// command is forgotten, and its place reused, once completed: memory
	// follows the commands in flight, not the capture's length.
	keep bool
	// the commands, in capture order, in slabs of 256 (one allocation
	// for many); n of them; free: completed ones to reuse
	slabs [][]NVMeCommand
	n     int
	free  []*NVMeCommand
	// lost: commands whose cid was reused before a completion came
	lost  []NVMeCommand
	conns []*nvmeConn
	// st: the statistics, counted as the commands go
	st     NVMeStats
	ops    [3][256]int32  // ByOp index + 1, by queue kind and opcode
	queues map[uint64]int // ByQueue index by session ID << 16 | queue ID
	status map[uint16]int
	// ops2: the operations' records (Options.ULPOps)
	ops2 []NVMeOp
	// Orphans counts completions that matched no command.
	Orphans int
	// prior: the commands a first pass over the capture found, by the
	// frame of their capsule (Options.Prior)
	prior map[int]*NVMeCommand
	slab  []NVMeCommand
	arena []int
}

// NVMeCommand is one command as the capture shows it.
type NVMeCommand struct {
	Session uint32
	QID     uint16
	HasQID  bool
	Cmd     decode.NVMeCommand // Data is nil
	Frame   int                // the capsule's last packet
	Time    int64              // Unix nanoseconds (no time.Time: its pointer makes the GC scan every command)
	Frames  []int              // the capsule's packets
	// InCapsule is the bytes of data the capsule carried.
	InCapsule int
	// The completion.
	Done     bool
	CQE      decode.NVMeCompletion
	CQEFrame int
	CQETime  int64
	// The data moved with the SGL's key: packets carrying data (WRITE
	// packets, READ responses) and their bytes; DataToHost is true when the
	// target wrote it (RDMA WRITE), false when it read it.
	DataFrames []int
	DataBytes  uint64
	DataToHost bool
	// ReadRequests are the target's RDMA READ requests for the data.
	ReadRequests []int
	// InvFrame is the SEND with Invalidate of the key.
	InvFrame int
	Outside  bool  // a transfer fell outside the SGL
	op       int32 // index in the stats' ByOp
}

// Latency is the time from the capsule to the completion.
func (c *NVMeCommand) Latency() (time.Duration, bool) {
	if !c.Done {
		return 0, false
	}
	return time.Duration(c.CQETime - c.Time), true
}

// alloc returns a new command from a slab: one allocation for many
// (measured: one allocation per command cost a third of the linker).
func (l *NVMeLinker) alloc() *NVMeCommand {
	if n := len(l.free); n > 0 {
		k := l.free[n-1]
		l.free = l.free[:n-1]
		*k = NVMeCommand{Frames: k.Frames[:0], ReadRequests: k.ReadRequests[:0]}
		return k
	}
	if len(l.slab) == cap(l.slab) {
		l.slab = make([]NVMeCommand, 0, 256)
		l.slabs = append(l.slabs, l.slab)
	}
	l.slabs[len(l.slabs)-1] = l.slab[:len(l.slab)+1]
	l.slab = l.slab[:len(l.slab)+1]
	return &l.slab[len(l.slab)-1]
}

// frames returns an empty frame list with room for n+extra frames, cut
// from a shared arena.
func (l *NVMeLinker) frames(n, extra int) []int {
	c := n + extra
	if c == 0 {
		return nil
	}
	if c > 64 {
		return make([]int, 0, c)
	}
	if len(l.arena)+c > cap(l.arena) {
		l.arena = make([]int, 0, 4096)
	}
	s := l.arena[len(l.arena) : len(l.arena) : len(l.arena)+c]
	l.arena = l.arena[:len(l.arena)+c]
	return s
}

// release forgets a completed command (unless every command is kept):
// its place serves the next one.
func (l *NVMeLinker) release(nc *nvmeConn, k *NVMeCommand) {
	if k == nc.identCmd {
		nc.identCmd = nil // an Identify lost to CID reuse (its place may serve the next command)
	}
	if l.keep {
		return
	}
	if k.Cmd.SGL.Keyed() && nc.byKey[k.Cmd.SGL.Key] == k {
		delete(nc.byKey, k.Cmd.SGL.Key) // data with the key after this is no command's
	}
	l.free = append(l.free, k)
}

// Commands returns every command, in capture order, when the tracker
// keeps them all (Options.KeepULP); else nil.
func (l *NVMeLinker) Commands() []*NVMeCommand {
	if !l.keep {
		return nil
	}
	out := make([]*NVMeCommand, 0, l.n)
	for _, s := range l.slabs {
		for i := range s {
			out = append(out, &s[i])
		}
	}
	return out
}

// each calls fn for every command, in capture order.
func (l *NVMeLinker) each(fn func(k *NVMeCommand)) {
	for _, s := range l.slabs {
		for i := range s {
			fn(&s[i])
		}
	}
}

// nvmeConn is the linker's state of one queue (connection).
type nvmeConn struct {
	// queue depth: the commands outstanding, the most there were, and
	// depth × time summed (ns) since the first command, for the mean
	maxDepth  int
	depthSum  float64
	depthFrom int64 // when the depth last changed
	firstCmd  int64
	stat      int // index in the stats' ByQueue
	qid       uint16
	hasQID    bool
	pending   map[uint32]*NVMeCommand // outstanding, by CID (uint32: the map's fast path)
	byKey     map[uint32]*NVMeCommand // the keyed commands whose key is valid
	// invalid holds the last keys invalidated (a ring, looked up only
	// when a transfer's key belongs to no command): a map of them cost
	// more than the rest of the linker.
	invalid [maxInvalid]invalidKey
	invNext int
	// identify namespace data, being written, and the block sizes found
	identBuf []byte
	identCmd *NVMeCommand
	blocks   map[uint32]uint32 // by NSID
}

type invalidKey struct {
	key   uint32
	frame int // 0: empty
}

// maxInvalid bounds the invalidated keys a queue remembers.
const maxInvalid = 64

func (l *NVMeLinker) conn(c *ULPConn) *nvmeConn {
	if nc, ok := c.State.(*nvmeConn); ok {
		return nc
	}
	nc := &nvmeConn{pending: map[uint32]*NVMeCommand{}, byKey: map[uint32]*NVMeCommand{}, blocks: map[uint32]uint32{}}
	if r, ok := decode.DecodeNVMeCMReq(c.Private); ok {
		nc.qid, nc.hasQID = r.QID, true
	}
	c.State = nc
	l.conns = append(l.conns, nc)
	return nc
}

// NVMeQueue returns the NVMe queue ID of a ULP connection, for sessions.
func NVMeQueue(c *ULPConn) (uint16, bool) {
	if nc, ok := c.State.(*nvmeConn); ok {
		return nc.qid, nc.hasQID
	}
	if r, ok := decode.DecodeNVMeCMReq(c.Private); ok {
		return r.QID, true
	}
	return 0, false
}

func (l *NVMeLinker) info(p *decode.Packet, nc *nvmeConn) *decode.NVMeInfo {
	n := &p.Analysis.ULP.NVMe
	n.QID, n.HasQID = nc.qid, nc.hasQID
	return n
}

// Seen shows the queue ID on every packet of the queue.
func (l *NVMeLinker) Seen(c *ULPConn, p *decode.Packet) { l.info(p, l.conn(c)) }

// Message decodes a capsule and links it.
func (l *NVMeLinker) Message(c *ULPConn, m *ULPMessage, p *decode.Packet) {
	nc := l.conn(c)
	switch {
	case len(m.Data) == decode.NVMeCQELen:
		l.completion(c, nc, m, p)
	case len(m.Data) >= decode.NVMeSQELen:
		l.command(c, nc, m, p)
	}
}

func (l *NVMeLinker) command(c *ULPConn, nc *nvmeConn, m *ULPMessage, p *decode.Packet) {
	k := l.alloc()
	// A recycled command's frame lists serve again (alloc emptied them),
	// but for its data frames: a packet's links (n.Link.DataFrames) may
	// still show those.
	*k = NVMeCommand{Session: c.Session, QID: nc.qid, HasQID: nc.hasQID, Frame: p.Frame.Number, Time: p.Frame.Time.UnixNano(), Frames: k.Frames, ReadRequests: k.ReadRequests}
	k.Cmd, _ = decode.DecodeNVMeCommand(m.Data, nc.hasQID && nc.qid == 0)
	cmd := &k.Cmd
	n := l.info(p, nc)
	if cmd.Fabrics() && cmd.FCType == decode.NVMeFCConnect {
		if !nc.hasQID {
			nc.qid, nc.hasQID = uint16(cmd.CDW[0]>>16), true
			n.QID, n.HasQID = nc.qid, true
			k.QID, k.HasQID = nc.qid, true
			cmd.Admin = nc.qid == 0
		}
		if d, ok := decode.DecodeNVMeConnectData(cmd.Data); ok {
			n.Connect = &d
		}
	}
	k.InCapsule = len(cmd.Data)
	cmd.Data = nil
	n.Kind, n.Cmd = decode.NVMeCmd, cmd
	if cap(k.Frames) < len(m.Frames) {
		k.Frames = l.frames(len(m.Frames), 0)
	}
	k.Frames = append(k.Frames, m.Frames...)
	if cmd.SGL.Keyed() && cmd.SGL.Len > 0 && cap(k.DataFrames) == 0 {
		k.DataFrames = l.frames(0, min(int(cmd.SGL.Len>>10)+1, 8))
	}
	if old := nc.pending[uint32(cmd.CID)]; old != nil {
		// the CID is reused: the old command's completion is not in the
		// capture
		delete(nc.pending, uint32(cmd.CID))
		lost := *old // End reads none of its lists, which serve the next command once it is released
		lost.Frames, lost.DataFrames, lost.ReadRequests = nil, nil, nil
		l.lost = append(l.lost, lost)
		l.release(nc, old)
	}
	l.count(k, nc)
	nc.depth(k.Time)
	nc.pending[uint32(cmd.CID)] = k
	nc.maxDepth = max(nc.maxDepth, len(nc.pending))
	if cmd.SGL.Keyed() && cmd.SGL.Len > 0 {
		nc.byKey[cmd.SGL.Key] = k // (a key registered again is found here before among the invalidated)
	}
	if cmd.Admin && cmd.Opcode == 0x06 && uint8(cmd.CDW[0]) == 0 && cmd.SGL.Keyed() {
		nc.identCmd, nc.identBuf = k, nc.identBuf[:0]
	}
	l.n++
	l.link(n, k)
}

// link fills the packet's links from what is known of k so far.
func (l *NVMeLinker) link(n *decode.NVMeInfo, k *NVMeCommand) {
	if f := l.prior[k.Frame]; f != nil {
		k = f // the whole story, from the first pass
	}
	n.Link.Linked = true
	n.Link.CmdFrame = k.Frame
	n.Link.CQEFrame = k.CQEFrame
	n.Link.InvFrame = k.InvFrame
	n.Link.DataFrames = k.DataFrames // (appends to it leave this view alone)
	n.Link.DataBytes = k.DataBytes
	n.Link.Latency, n.Link.HasLatency = k.Latency()
}

func (l *NVMeLinker) completion(c *ULPConn, nc *nvmeConn, m *ULPMessage, p *decode.Packet) {
	cqe, _ := decode.DecodeNVMeCompletion(m.Data)
	n := l.info(p, nc)
	n.Kind, n.CQE = decode.NVMeCQE, cqe
	if m.Inv {
		nc.invalidate(m.InvKey, p.Frame.Number)
	}
	k := nc.pending[uint32(cqe.CID)]
	if k == nil {
		l.Orphans++
		c.Event(p, decode.EventULPNoCommand, "NVMe completion of cid "+strconv.Itoa(int(cqe.CID))+" on queue "+qidString(nc)+": no outstanding command with that cid (sent before the capture, or lost)")
		return
	}
	nc.depth(p.Frame.Time.UnixNano())
	delete(nc.pending, uint32(cqe.CID))
	k.Done, k.CQE, k.CQEFrame, k.CQETime = true, cqe, p.Frame.Number, p.Frame.Time.UnixNano()
	if m.Inv && k.Cmd.SGL.Keyed() && m.InvKey == k.Cmd.SGL.Key {
		k.InvFrame = p.Frame.Number
	}
	n.Cmd = &k.Cmd
	l.link(n, k)
	if cqe.Code() != 0 && !(k.Cmd.Admin && k.Cmd.Opcode == 0x0C) {
		c.Event(p, decode.EventULPError, "NVMe "+k.Cmd.OpName()+" cid "+strconv.Itoa(int(k.Cmd.CID))+" (frame "+strconv.Itoa(k.Frame)+") failed: "+cqe.StatusName()+" (SCT "+strconv.Itoa(int(cqe.SCT()))+", SC 0x"+strconv.FormatUint(uint64(cqe.SC()), 16)+")")
	}
	if k == nc.identCmd {
		nc.identDone()
	}
	if want, ok := nc.length(k); ok && cqe.Code() == 0 && k.DataBytes != want {
		c.Event(p, decode.EventULPLength, "NVMe "+k.Cmd.OpName()+" cid "+strconv.Itoa(int(k.Cmd.CID))+" (frame "+strconv.Itoa(k.Frame)+") moved "+strconv.FormatUint(k.DataBytes, 10)+" bytes with key 0x"+strconv.FormatUint(uint64(k.Cmd.SGL.Key), 16)+", the command asks for "+strconv.FormatUint(want, 10))
	}
	l.countDone(k)
	if l.t.opts.ULPOps {
		l.ops2 = append(l.ops2, opOf(k))
	}
	l.release(nc, k)
}

// length is the bytes a keyed command should move: the LBAs times the
// namespace's block size when Identify Namespace told it, else the SGL's
// length.
func (nc *nvmeConn) length(k *NVMeCommand) (uint64, bool) {
	if !k.Cmd.SGL.Keyed() || k.Cmd.SGL.Len == 0 {
		return 0, false
	}
	if k.Cmd.HasLBA() && (k.Cmd.Opcode == 0x01 || k.Cmd.Opcode == 0x02) {
		if bs, ok := nc.blocks[k.Cmd.NSID]; ok {
			return uint64(k.Cmd.NLB()+1) * uint64(bs), true
		}
	}
	return uint64(k.Cmd.SGL.Len), true
}

func (nc *nvmeConn) invalidate(key uint32, frame int) {
	if k := nc.byKey[key]; k != nil {
		delete(nc.byKey, key)
	}
	nc.invalid[nc.invNext] = invalidKey{key, frame}
	nc.invNext = (nc.invNext + 1) % maxInvalid
}

// invalidated returns the frame that invalidated key, if it is among the
// last keys invalidated.
func (nc *nvmeConn) invalidated(key uint32) (int, bool) {
	for _, e := range &nc.invalid {
		if e.frame != 0 && e.key == key {
			return e.frame, true
		}
	}
	return 0, false
}

// identDone reads the block size of the namespace an Identify Namespace
// described (FLBAS byte 26 picks the LBA format; each format's LBADS, byte
// 2 of its 4 bytes from byte 128, is log2 of the block size).
func (nc *nvmeConn) identDone() {
	b, k := nc.identBuf, nc.identCmd
	nc.identCmd = nil
	if len(b) < 192 {
		return
	}
	f := int(b[26] & 0xF)
	lbads := b[128+4*f+2]
	if lbads >= 9 && lbads < 32 {
		nc.blocks[k.Cmd.NSID] = 1 << lbads
	}
}

// Data links an RDMA READ/WRITE packet to the command whose key it uses.
func (l *NVMeLinker) Data(c *ULPConn, d *ULPData, p *decode.Packet) {
	nc := l.conn(c)
	k := nc.byKey[d.RKey]
	if k == nil {
		if f, ok := nc.invalidated(d.RKey); ok {
			l.info(p, nc)
			c.Event(p, decode.EventULPKeyInvalidated, "NVMe: RDMA "+d.Op.String()+" with key 0x"+strconv.FormatUint(uint64(d.RKey), 16)+", which frame "+strconv.Itoa(f)+" invalidated")
		}
		return
	}
	n := l.info(p, nc)
	n.Kind, n.Cmd = decode.NVMeData, &k.Cmd
	sgl := k.Cmd.SGL
	if d.VA >= sgl.Addr {
		n.Link.Offset, n.Link.HasOffset = d.VA-sgl.Addr, true
	}
	if (d.VA < sgl.Addr || d.VA+d.Len > sgl.Addr+uint64(sgl.Len)) && !k.Outside {
		k.Outside = true
		c.Event(p, decode.EventULPOutside, "NVMe "+k.Cmd.OpName()+" cid "+strconv.Itoa(int(k.Cmd.CID))+" (frame "+strconv.Itoa(k.Frame)+"): RDMA "+d.Op.String()+" of "+strconv.FormatUint(d.Len, 10)+" bytes at 0x"+strconv.FormatUint(d.VA, 16)+" is outside its SGL (0x"+strconv.FormatUint(sgl.Addr, 16)+", "+strconv.FormatUint(uint64(sgl.Len), 10)+" bytes)")
	}
	if d.Request {
		k.ReadRequests = append(k.ReadRequests, p.Frame.Number)
	} else {
		k.DataFrames = append(k.DataFrames, p.Frame.Number)
		k.DataBytes += d.Len
		k.DataToHost = d.Op == decode.MPTOpWrite
		l.st.ByOp[k.op].Bytes += d.Len
		if k.DataToHost {
			l.st.ToHost += d.Len
		} else {
			l.st.FromHost += d.Len
		}
		if c := &k.Cmd; c.Fabrics() && c.FCType == decode.NVMeFCConnect && n.Link.Offset == 0 {
			// the Connect's data, read from the host in one packet
			if cd, ok := decode.DecodeNVMeConnectData(p.Payload); ok {
				n.Connect = &cd
			}
		}
		if k == nc.identCmd && n.Link.HasOffset && n.Link.Offset < 4096 {
			off := int(n.Link.Offset)
			if len(nc.identBuf) < off+len(p.Payload) {
				nc.identBuf = append(nc.identBuf, make([]byte, off+len(p.Payload)-len(nc.identBuf))...)
			}
			copy(nc.identBuf[off:], p.Payload)
		}
	}
	l.link(n, k)
}

// End reports the commands never completed: those still outstanding, and
// those whose cid was reused before a completion came, in capture order.
func (l *NVMeLinker) End() {
	open := append([]NVMeCommand(nil), l.lost...)
	for _, nc := range l.conns {
		for _, k := range nc.pending {
			open = append(open, *k)
		}
	}
	slices.SortFunc(open, func(a, b NVMeCommand) int { return a.Frame - b.Frame })
	for i := range open {
		k := &open[i]
		if l.t.opts.ULPOps {
			l.ops2 = append(l.ops2, opOf(k))
		}
		if k.Cmd.Admin && k.Cmd.Opcode == 0x0C {
			continue // an Asynchronous Event Request waits for an event: outstanding by design
		}
		if l.t.now-k.Time < int64(l.t.opts.NoResponseAfter) {
			continue // sent just before the capture ended
		}
		l.t.emit(decode.EventULPNoCompletion, k.Frame, k.Time, k.Session, "NVMe "+k.Cmd.OpName()+" cid "+strconv.Itoa(int(k.Cmd.CID))+" on queue "+qidOf(k)+" (frame "+strconv.Itoa(k.Frame)+") was never completed")
	}
}

func qidString(nc *nvmeConn) string {
	if !nc.hasQID {
		return "?"
	}
	return strconv.Itoa(int(nc.qid))
}

// NVMeStats summarizes the NVMe-oF commands of a capture (rocetap stats).
type NVMeStats struct {
	Commands  int // commands seen
	Completed int
	Errors    int // completed with an error status
	Orphans   int // completions without a command
	// ByOp counts commands by kind and name, in order of first appearance:
	// their number, latency (command to completion) and bytes moved.
	ByOp []NVMeOpStats
	// ByQueue counts commands per queue (session and queue ID).
	ByQueue []NVMeQueueStats
	// Bytes moved: written by the target into host memory (RDMA WRITE,
	// reads), read by the target from host memory (RDMA READ, writes), in
	// capsules.
	ToHost, FromHost, InCapsule uint64
	// Status counts completions by status name, in order of first
	// appearance.
	Status []NVMeStatusCount
}

// NVMeOpStats is one line of NVMeStats.ByOp.
type NVMeOpStats struct {
	Queue   string // "admin", "io" or "fabrics"
	Name    string
	Count   int
	Latency Latency
	Bytes   uint64
}

// NVMeQueueStats is one line of NVMeStats.ByQueue.
type NVMeQueueStats struct {
	Session  uint32 `json:"session"`
	QID      uint16 `json:"qid"`
	HasQID   bool   `json:"qid_known"`
	Commands int    `json:"commands"`
	// MaxDepth is the most commands outstanding at once; MeanDepth their
	// number averaged over time, from the queue's first command to its
	// last completion or command.
	MaxDepth  int     `json:"max_depth"`
	MeanDepth float64 `json:"mean_depth"`
}

// NVMeStatusCount is one line of NVMeStats.Status.
type NVMeStatusCount struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

// depth adds the time since the depth last changed, at the depth it had,
// before it changes at now.
func (nc *nvmeConn) depth(now int64) {
	if nc.depthFrom == 0 {
		nc.firstCmd = now
	} else {
		nc.depthSum += float64(len(nc.pending)) * float64(now-nc.depthFrom)
	}
	nc.depthFrom = now
}

// count counts a new command of connection nc in the statistics.
func (l *NVMeLinker) count(k *NVMeCommand, nc *nvmeConn) {
	st := &l.st
	st.Commands++
	q, op := 0, k.Cmd.Opcode
	switch {
	case k.Cmd.Fabrics():
		q, op = 2, k.Cmd.FCType
	case k.Cmd.Admin:
		q = 1
	}
	i := l.ops[q][op] - 1
	if i < 0 {
		i = int32(len(st.ByOp))
		l.ops[q][op] = i + 1
		st.ByOp = append(st.ByOp, NVMeOpStats{Queue: [3]string{"io", "admin", "fabrics"}[q], Name: k.Cmd.OpName()})
	}
	k.op = i
	st.ByOp[i].Count++
	st.ByOp[i].Bytes += uint64(k.InCapsule)
	st.InCapsule += uint64(k.InCapsule)
	// the connection's queue (nc.stat) is that of its last command but
	// for the first, and the Connect that tells the queue ID
	j := nc.stat - 1
	if j < 0 || st.ByQueue[j].Session != k.Session || st.ByQueue[j].QID != k.QID {
		qk := uint64(k.Session)<<16 | uint64(k.QID)
		var ok bool
		if j, ok = l.queues[qk]; !ok {
			j = len(st.ByQueue)
			l.queues[qk] = j
			st.ByQueue = append(st.ByQueue, NVMeQueueStats{Session: k.Session, QID: k.QID, HasQID: k.HasQID})
		}
		nc.stat = j + 1
	}
	st.ByQueue[j].Commands++
}

// countDone counts a completion in the statistics.
func (l *NVMeLinker) countDone(k *NVMeCommand) {
	st := &l.st
	st.Completed++
	if d, ok := k.Latency(); ok {
		st.ByOp[k.op].Latency.Add(d)
	}
	code := k.CQE.Code()
	if code != 0 {
		st.Errors++
	}
	x, ok := l.status[code]
	if !ok {
		x = len(st.Status)
		l.status[code] = x
		st.Status = append(st.Status, NVMeStatusCount{Status: k.CQE.StatusName()})
	}
	st.Status[x].Count++
}

// Stats summarizes the commands.
func (l *NVMeLinker) Stats() *NVMeStats {
	st := l.st
	st.Orphans = l.Orphans
	st.ByQueue = append([]NVMeQueueStats(nil), l.st.ByQueue...)
	for _, nc := range l.conns {
		if nc.stat == 0 {
			continue
		}
		q := &st.ByQueue[nc.stat-1]
		q.MaxDepth = nc.maxDepth
		if span := nc.depthFrom - nc.firstCmd; span > 0 {
			q.MeanDepth = nc.depthSum / float64(span)
		}
	}
	return &st
}

func qidOf(k *NVMeCommand) string {
	if !k.HasQID {
		return "?"
	}
	return strconv.Itoa(int(k.QID))
}

// NVMeOp is the compact record of one command for a list of operations
// (the TUI's ULP view, with Options.ULPOps): about 64 bytes.
type NVMeOp struct {
	Frame, CQEFrame int32 // the capsule's last packet; the completion (0: none)
	Session         uint32
	QID             uint16
	HasQID, Done    bool
	Admin           bool
	Opcode, FCType  uint8
	CID             uint16
	NLB             uint16 // 0-based, as on the wire
	NSID            uint32
	Status          uint16 // SCT<<8 | SC (0: success)
	HasLBA          bool
	SLBA            uint64
	Latency         time.Duration
	Bytes           uint64 // moved with the key, or in the capsule
}

// Command returns the command's name ("Read", "Property Get").
func (o *NVMeOp) Command() string {
	c := decode.NVMeCommand{Opcode: o.Opcode, FCType: o.FCType, Admin: o.Admin}
	return c.OpName()
}

// StatusName names the completion's status.
func (o *NVMeOp) StatusName() string {
	c := decode.NVMeCompletion{Status: o.Status << 1}
	return c.StatusName()
}

func opOf(k *NVMeCommand) NVMeOp {
	o := NVMeOp{Frame: int32(k.Frame), CQEFrame: int32(k.CQEFrame), Session: k.Session, QID: k.QID, HasQID: k.HasQID, Done: k.Done,
		Admin: k.Cmd.Admin, Opcode: k.Cmd.Opcode, FCType: k.Cmd.FCType, CID: k.Cmd.CID, NSID: k.Cmd.NSID, Status: k.CQE.Code(),
		HasLBA: k.Cmd.HasLBA(), Bytes: k.DataBytes + uint64(k.InCapsule)}
	if o.HasLBA {
		o.SLBA, o.NLB = k.Cmd.SLBA(), k.Cmd.NLB()
	}
	o.Latency, _ = k.Latency()
	return o
}

// Ops returns the operations recorded (Options.ULPOps): each command as it
// completed, then, after the end of the capture, those never completed.
// The slice is the linker's: read it while the tracker stands still.
func (l *NVMeLinker) Ops() []NVMeOp { return l.ops2 }
