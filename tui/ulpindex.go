package tui

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
)

// What the index keeps of the upper-layer protocol operations (NVMe-oF
// commands, RPCs), so that the packet list shows on every packet of an
// operation what `rocetap decode` shows on it, though the list renders a
// packet alone: the capsule reassembled from several SENDs on each of
// them, the command an RDMA READ/WRITE packet moved data for, the
// completion with its command's name.
//
// The index pass sees what the tracker found about each packet
// (p.Analysis.ULP) as it goes. Every operation gets one record in a side
// table (NVMe: the command, its completion and where its data went; RPC:
// the Info of its call and reply, and what the ULP view lists), and the
// packet's entry a tag naming the record and what the packet is to it, in
// 4 bytes that were padding: no per-packet memory is added.

// A tag is the kind (low ulpKindBits bits) and the record's index.
const (
	ulpKindBits = 4
	ulpKindMask = 1<<ulpKindBits - 1
	// maxULPRecs bounds the records of each table: past it, packets get no
	// tag (and show no ULP).
	maxULPRecs = 1<<(32-ulpKindBits) - 1
)

// Tag kinds.
const (
	ulpNone        = iota
	ulpNVMeCmd     // the command capsule (every SEND that carried it)
	ulpNVMeCQE     // the completion
	ulpNVMeData    // data moved with the command's key, at an offset (runs)
	ulpNVMeDataAny // data moved with the key, before the SGL's address
	ulpRPCMsg      // an RPC-over-RDMA message: the call, or one of no call
	ulpRPCReply    // the reply
	ulpRPCChunk    // + chunk kind - 1: data serving the call's read, write or reply chunk
)

// ulpText tags a message whose Info says what it is alone (iSER, SMB
// Direct): x.texts.
const ulpText = ulpRPCChunk + 3

// maxULPTexts bounds the distinct texts kept (iSER: one an opcode).
const maxULPTexts = 1 << 12

func ulpTag(kind, i int) uint32 { return uint32(kind) | uint32(i)<<ulpKindBits }

// nvmeRec is one NVMe-oF command (or a completion without one): about 90
// bytes.
type nvmeRec struct {
	cmd     nvmeCmd
	cqe     decode.NVMeCompletion
	qid     uint16
	hasQID  bool
	hasCmd  bool
	run     offRun // the offsets of its data packets (x.moreRuns: the runs after this one)
	connect *decode.NVMeConnectData
}

// nvmeCmd is what the Info of a command's packets shows of it
// (decode.NVMeInfo.AppendSummary): its name, details, cid, nsid and LBAs.
type nvmeCmd struct {
	cdw            [6]uint32
	nsid           uint32
	cid            uint16
	opcode, fctype uint8
	admin          bool
}

func nvmeCmdOf(c *decode.NVMeCommand) nvmeCmd {
	return nvmeCmd{cdw: c.CDW, nsid: c.NSID, cid: c.CID, opcode: c.Opcode, fctype: c.FCType, admin: c.Admin}
}

func (c *nvmeCmd) command() decode.NVMeCommand {
	return decode.NVMeCommand{CDW: c.cdw, NSID: c.nsid, CID: c.cid, Opcode: c.opcode, FCType: c.fctype, Admin: c.admin}
}

// offRun: n data packets from frame on, the first at PSN psn and SGL
// offset off, each next PSN step bytes further (a message's packets); n
// 0: none.
type offRun struct {
	frame int32
	psn   uint32
	n     uint32
	step  uint32
	off   uint64
}

// rpcRec is one RPC (or a message that belongs to no call).
type rpcRec struct {
	texts      [2]string // the Info of the call (or lone message) and of the reply
	name       string    // what the ULP view names it: "COMPOUND SEQUENCE PUTFH READ"
	status     string    // the reply's error, "" when it succeeded
	session    uint32
	xid        uint32
	callFrame  int32 // 0: a message that is no call
	replyFrame int32
	latency    time.Duration
	bytes      uint64 // moved by RDMA READ/WRITE for its chunks
	replied    bool
}

// ulpIndex is the index's side table of operations. Build's goroutine
// writes it, holding mu to change what info reads.
type ulpIndex struct {
	mu   sync.RWMutex
	nvme []nvmeRec
	rpc  []rpcRec
	// texts are the distinct Infos of the messages of iSER and SMB
	// Direct, which name only the message's kind; textIdx indexes them
	texts   []string
	textIdx map[string]int
	textBuf []byte   // a text being made (Build's goroutine only)
	ops     []uint32 // a call's ops being named (Build's goroutine only)
	// open: the records of the commands and calls not yet completed, by
	// the frame of their capsule or call (Build's goroutine only)
	openNVMe map[int]int
	openRPC  map[int]int
	// moreRuns: the offset runs of the commands whose data came in more
	// than one run, by record (most have one)
	moreRuns map[int][]offRun
	// retro counts the tags given to packets already indexed (the first
	// SENDs of a message, tagged when its last one completes it): the
	// packet list drops the rows it rendered before.
	retro atomic.Uint64
}

// record notes what the tracker found about p (just tracked) and returns
// its tag, and the earlier frames of the message p completes, which get
// the same tag.
func (x *ulpIndex) record(p *decode.Packet) (tag uint32, earlier []int) {
	u := p.Analysis.ULP
	if u == nil {
		return 0, nil
	}
	switch u.Proto {
	case decode.ULPNVMe:
		tag = x.recordNVMe(p, &u.NVMe)
	case decode.ULPRPCRDMA:
		if u.RPC != nil {
			tag = x.recordRPC(p, u.RPC)
		}
	case decode.ULPISER, decode.ULPSMBDirect:
		if u.ISER != nil || u.SMBDirect != nil {
			tag = x.recordText(p)
		}
	}
	if tag != 0 && len(u.MsgFrames) > 1 { // (set only on the packet that completes a message)
		earlier = u.MsgFrames[:len(u.MsgFrames)-1]
	}
	return tag, earlier
}

func (x *ulpIndex) recordNVMe(p *decode.Packet, n *decode.NVMeInfo) uint32 {
	if x.openNVMe == nil {
		x.openNVMe = map[int]int{}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	i, open := -1, false
	if n.Link.Linked {
		i, open = x.openNVMe[n.Link.CmdFrame]
	}
	newRec := func() bool {
		if len(x.nvme) >= maxULPRecs {
			return false
		}
		r := nvmeRec{qid: n.QID, hasQID: n.HasQID}
		if n.Cmd != nil {
			r.cmd, r.hasCmd = nvmeCmdOf(n.Cmd), true
		}
		i = len(x.nvme)
		x.nvme = append(x.nvme, r)
		return true
	}
	switch n.Kind {
	case decode.NVMeCmd:
		if n.Cmd == nil || !newRec() {
			return 0
		}
		if n.Connect != nil {
			c := *n.Connect
			c.HostID = slices.Clone(c.HostID)
			x.nvme[i].connect = &c
		}
		x.openNVMe[p.Frame.Number] = i
		return ulpTag(ulpNVMeCmd, i)
	case decode.NVMeCQE:
		if open {
			delete(x.openNVMe, n.Link.CmdFrame)
		} else if !newRec() {
			return 0
		}
		x.nvme[i].cqe = n.CQE
		return ulpTag(ulpNVMeCQE, i)
	case decode.NVMeData:
		if !open && (n.Cmd == nil || !newRec()) {
			return 0
		}
		if !n.Link.HasOffset {
			return ulpTag(ulpNVMeDataAny, i)
		}
		x.addOffset(i, int32(p.Frame.Number), uint32(p.BTH.PSN), n.Link.Offset)
		return ulpTag(ulpNVMeData, i)
	}
	return 0
}

// addOffset notes the offset of a data packet of record i: in its last
// run when it continues it (the next PSN at the run's stride, or the
// request's own offset again on a READ's first response).
func (x *ulpIndex) addOffset(i int, frame int32, psn uint32, off uint64) {
	r := &x.nvme[i]
	l := &r.run
	if more := x.moreRuns[i]; len(more) > 0 {
		l = &more[len(more)-1]
	}
	switch next := (l.psn + l.n) & psnMask; {
	case l.n == 0:
		*l = offRun{frame: frame, psn: psn, n: 1, off: off}
		return
	case l.n == 1 && psn == l.psn && off == l.off:
		return
	case l.n == 1 && psn == next && off > l.off && off-l.off <= 1<<31:
		l.step, l.n = uint32(off-l.off), 2
		return
	case l.n > 1 && psn == next && off == l.off+uint64(l.n)*uint64(l.step):
		l.n++
		return
	}
	if x.moreRuns == nil {
		x.moreRuns = map[int][]offRun{}
	}
	x.moreRuns[i] = append(x.moreRuns[i], offRun{frame: frame, psn: psn, n: 1, off: off})
}

const psnMask = 1<<24 - 1

// offset is the SGL offset of record i's data packet at frame with PSN
// psn: from the last run that holds it.
func (x *ulpIndex) offset(i int, frame int32, psn uint32) (uint64, bool) {
	more := x.moreRuns[i]
	for k := len(more); k >= 0; k-- {
		l := &x.nvme[i].run
		if k > 0 {
			l = &more[k-1]
		}
		if d := (psn - l.psn) & psnMask; frame >= l.frame && d < l.n {
			return l.off + uint64(d)*uint64(l.step), true
		}
	}
	return 0, false
}

func (x *ulpIndex) recordRPC(p *decode.Packet, in *decode.RPCInfo) uint32 {
	if x.openRPC == nil {
		x.openRPC = map[int]int{}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	frame := p.Frame.Number
	i, open := x.openRPC[in.CallFrame]
	switch {
	case in.HasHdr || in.HasRPC: // a message
		x.textBuf = printer.AppendULPText(x.textBuf[:0], p)
		text := func() string { return string(x.textBuf) } // (a record's one string, made when kept)
		switch {
		case in.Linked && in.CallFrame == frame: // a call
			if len(x.rpc) >= maxULPRecs {
				return 0
			}
			i = len(x.rpc)
			x.rpc = append(x.rpc, rpcRec{texts: [2]string{text()}, name: x.rpcName(in), session: p.Analysis.Session, xid: in.XID,
				callFrame: int32(frame)})
			x.openRPC[frame] = i
			return ulpTag(ulpRPCMsg, i)
		case in.Linked && open && in.ReplyFrame == frame: // its reply
			delete(x.openRPC, in.CallFrame)
			r := &x.rpc[i]
			r.texts[1], r.status, r.replied = text(), in.ReplyError(), true
			r.replyFrame, r.latency, r.bytes = int32(frame), in.Latency, in.DataBytes
			return ulpTag(ulpRPCReply, i)
		case in.Linked && open && in.HasProc:
			// The READ response that completes an RDMA_NOMSG call carries
			// the call its header alone did not name: the view names it.
			x.rpc[i].name = x.rpcName(in)
		}
		if len(x.textBuf) == 0 || len(x.rpc) >= maxULPRecs {
			return 0
		}
		x.rpc = append(x.rpc, rpcRec{texts: [2]string{text()}, session: p.Analysis.Session, xid: in.XID})
		return ulpTag(ulpRPCMsg, len(x.rpc)-1)
	case in.Linked && in.Chunk != decode.RPCChunkNone:
		if !open {
			if len(x.rpc) >= maxULPRecs {
				return 0
			}
			i = len(x.rpc)
			x.rpc = append(x.rpc, rpcRec{session: p.Analysis.Session, xid: in.XID})
		}
		x.rpc[i].bytes = in.DataBytes
		return ulpTag(ulpRPCChunk+int(in.Chunk)-1, i)
	}
	return 0
}

// rpcName is what the ULP view names a call: "COMPOUND SEQUENCE PUTFH READ".
func (x *ulpIndex) rpcName(in *decode.RPCInfo) string {
	c := flow.RPCCall{HasProc: in.HasProc, Program: in.Program, Version: in.Version, Procedure: in.Procedure}
	if in.HasNFS {
		x.ops = x.ops[:0]
		for _, o := range in.NFS.Ops {
			x.ops = append(x.ops, o.Opcode)
		}
		c.Ops = x.ops
	}
	return c.Name()
}

// recordText tags a message by its Info, kept once: a text seen before
// is looked up without making a string.
func (x *ulpIndex) recordText(p *decode.Packet) uint32 {
	x.textBuf = printer.AppendULPText(x.textBuf[:0], p)
	if len(x.textBuf) == 0 {
		return 0
	}
	i, ok := x.textIdx[string(x.textBuf)]
	if !ok {
		if len(x.texts) >= maxULPTexts {
			return 0
		}
		if x.textIdx == nil {
			x.textIdx = map[string]int{}
		}
		text := string(x.textBuf)
		x.mu.Lock()
		i = len(x.texts)
		x.texts = append(x.texts, text)
		x.mu.Unlock()
		x.textIdx[text] = i
	}
	return ulpTag(ulpText, i)
}

// info returns what the packet list shows of a packet's ULP: p's
// analysis as the tracker set it (the printer formats it), made in s, or
// the text of an RPC message.
func (x *ulpIndex) info(p *decode.Packet, tag uint32, s *ulpScratch) (u *decode.ULPInfo, text string) {
	kind, i := int(tag&ulpKindMask), int(tag>>ulpKindBits)
	x.mu.RLock()
	defer x.mu.RUnlock()
	switch kind {
	case ulpNVMeCmd, ulpNVMeCQE, ulpNVMeData, ulpNVMeDataAny:
		if i >= len(x.nvme) {
			return nil, ""
		}
		r := &x.nvme[i]
		s.u = decode.ULPInfo{Proto: decode.ULPNVMe}
		u = &s.u
		n := &u.NVMe
		n.QID, n.HasQID = r.qid, r.hasQID
		if r.hasCmd {
			s.cmd = r.cmd.command()
			n.Cmd = &s.cmd
		}
		switch kind {
		case ulpNVMeCmd:
			n.Kind, n.Connect = decode.NVMeCmd, r.connect
		case ulpNVMeCQE:
			n.Kind, n.CQE = decode.NVMeCQE, r.cqe
		case ulpNVMeData:
			n.Kind = decode.NVMeData
			n.Link.Offset, n.Link.HasOffset = x.offset(i, int32(p.Frame.Number), uint32(p.BTH.PSN))
		case ulpNVMeDataAny:
			n.Kind = decode.NVMeData
		}
		return u, ""
	case ulpRPCMsg, ulpRPCReply:
		if i >= len(x.rpc) {
			return nil, ""
		}
		return nil, x.rpc[i].texts[kind-ulpRPCMsg]
	case ulpText:
		if i >= len(x.texts) {
			return nil, ""
		}
		return nil, x.texts[i]
	case ulpRPCChunk, ulpRPCChunk + 1, ulpRPCChunk + 2:
		if i >= len(x.rpc) {
			return nil, ""
		}
		s.rpc = decode.RPCInfo{Linked: true, XID: x.rpc[i].xid, Chunk: decode.RPCChunkKind(kind - ulpRPCChunk + 1)}
		s.u = decode.ULPInfo{Proto: decode.ULPRPCRDMA, RPC: &s.rpc}
		return &s.u, ""
	}
	return nil, ""
}

// rpcCalls calls fn with each RPC call recorded so far, in capture order;
// the records are valid during the call only.
func (x *ulpIndex) rpcCalls(fn func(r *rpcRec)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := range x.rpc {
		if x.rpc[i].callFrame != 0 {
			fn(&x.rpc[i])
		}
	}
}

// tagEarlier gives the packets of frames (before the one being indexed)
// tag: in local, the packets Build has not published yet, or in the
// index (the rows the list rendered of them are then stale).
func (ix *Index) tagEarlier(frames []int, tag uint32, local []entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, f := range frames {
		switch i := f - 1; {
		case i >= 0 && i < ix.n:
			ix.at(i).ulp = tag
			ix.ulp.retro.Add(1)
		case i >= ix.n && i-ix.n < len(local):
			local[i-ix.n].ulp = tag
		}
	}
}
