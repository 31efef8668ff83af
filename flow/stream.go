package flow

import (
	"slices"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// reqStream is the requests one side sends (its send queue) and the
// responses the other side returns for them.
type reqStream struct {
	reqBufs
	reqState
}

// reqBufs are a request stream's lists: their room is kept when the
// session's live state is released, for the next to use (release).
type reqBufs struct {
	missing []psnRange // PSNs skipped by a gap and not seen since
	pend    []pmsg     // messages being reassembled
	out     []outReq   // complete requests waiting for their response
	done    []outReq   // recently answered (up to maxDone), to recognize repeated responses
	recent  []pktRec   // recent first transmissions (up to maxRecent), for original_frame
}

// reqState is the rest of a request stream: no pointers, so that
// clearing it is a plain clear (release: a million QP pairs release a
// million live states, and a struct with pointers is cleared through
// the garbage collector's write barrier while it marks).
type reqState struct {
	started bool
	first   decode.PSN // first PSN seen
	next    decode.PSN // next new PSN
	// A READ request consumes ⌈length/MTU⌉ PSNs. While the MTU is not
	// known, any next PSN in [next, softHi] is in order (and tells the MTU).
	soft            bool
	softHi, softPSN decode.PSN
	softLen         uint32
	doneN           int
	recentN         int
	nak             nakRec // the last NAK / RNR NAK: what retransmissions answer
	skipOut         bool   // the request being assembled was already answered
	resent          bool   // a PSN was sent again (resentPSN the highest): repeated answers are due
	resentPSN       decode.PSN
	answered        bool // a response for this stream was seen
	// early: responses came before any request of the stream (the
	// capture starts between a request and its answer, or reordered
	// them); earlyPSN is the highest PSN they answer. A request up to it
	// that arrives later needs no answer.
	early     bool
	earlyPSN  decode.PSN
	forgotten uint64 // outstanding requests dropped to bound memory
	// the oldest of them (the no_response finding starts there)
	forgotFrame int
	forgotT     int64
	rr          readResp
	lastAcked   decode.PSN
	hasAcked    bool
	retry       retryRec     // the oldest PSN sent again, while nothing answers it
	dead        decode.Event // the requester likely gave up (retry counter exceeded): why
}

// psnRange is PSNs [lo, hi) a gap skipped. answered: a response showed
// they were sent (and answered) though the capture lacks them.
type psnRange struct {
	lo, hi   decode.PSN
	answered bool
}

// pktRec is a recent PSN: its first transmission (frame, t) and its
// latest (lastFrame, lastT).
type pktRec struct {
	psn       decode.PSN
	frame     int
	t         int64 // Unix nanoseconds
	lastFrame int
	lastT     int64
}

type nakRec struct {
	valid bool
	frame int
	psn   decode.PSN
	cause decode.RetransCause
}

// pmsg is a message being reassembled from its packets, in PSN order.
type pmsg struct {
	kind       decode.MsgKind
	op         decode.Opcode
	first      decode.PSN // PSN of FIRST (or of the first packet seen)
	last       decode.PSN // PSN of LAST (haveLast), else the highest seen
	haveFirst  bool
	haveLast   bool
	count      uint32
	length     uint64
	firstFrame int
	firstTime  int64 // Unix nanoseconds
	lastFrame  int   // the latest packet added
	lastOp     decode.Opcode
	partial    bool
	mpt        mptRec // the MPT check of its RETH, AtomicETH or IETH
}

// outReq is a request waiting for its response.
type outReq struct {
	kind       decode.MsgKind
	mpt        mptRec
	psn, last  decode.PSN // request PSNs (READ: its PSN; responses use psn.. psn+n-1)
	length     uint64
	firstFrame int
	lastFrame  int
	firstTime  int64 // Unix nanoseconds
	lastTime   int64
	rnr        bool // answered by an RNR NAK (the requester may give up)
}

// readResp is the READ whose responses are being reassembled.
type readResp struct {
	active   bool
	orphan   bool // its request is not in the capture
	haveLast bool // its LAST (or ONLY) response was seen
	hasEnd   bool // end is known (the MTU, or the LAST, tells it)
	req      outReq
	next     decode.PSN // the PSN after the highest response PSN seen
	end      decode.PSN // its last response PSN
	length   uint64
	pkts     uint32
	lastT    int64 // the latest response packet (Unix nanoseconds)
	holes    holes // response PSNs a gap skipped, not seen since
}

const (
	// restartDist: a PSN this far from the expected one starts the
	// stream over instead of counting a gap or a retransmission.
	restartDist = 1 << 20
	maxMissing  = 32
	maxPending  = 8
	maxDone     = 16
	maxRecent   = 64
)

func (st *reqStream) outstandingAt(psn decode.PSN) int {
	for i := range st.out {
		o := &st.out[i]
		if psn.In(o.psn, o.last) {
			return i
		}
	}
	return -1
}

func (st *reqStream) doneAt(psn decode.PSN) bool {
	for i := range st.done {
		o := &st.done[i]
		if psn.In(o.psn, o.last) {
			return true
		}
	}
	return false
}

func (st *reqStream) inMissing(psn decode.PSN) int {
	for i, r := range st.missing {
		if psn.InWindow(r.lo, r.hi) {
			return i
		}
	}
	return -1
}

// fill removes psn from the missing ranges.
func (st *reqStream) fill(i int, psn decode.PSN) {
	r := st.missing[i]
	switch {
	case r.lo == psn && r.lo.Next() == r.hi:
		st.missing = append(st.missing[:i], st.missing[i+1:]...)
	case r.lo == psn:
		st.missing[i].lo = psn.Next()
	case psn.Next() == r.hi:
		st.missing[i].hi = psn
	default:
		st.missing[i].hi = psn
		if len(st.missing) < maxMissing {
			st.missing = append(st.missing, psnRange{psn.Next(), r.hi, r.answered})
		}
	}
}

// remember records the first transmission of psn. The ring grows with the
// traffic up to maxRecent: a QP that sends a few requests keeps a few.
func (st *reqStream) remember(psn decode.PSN, frame int, at int64) {
	r := pktRec{psn, frame, at, frame, at}
	if len(st.recent) < maxRecent {
		st.recent = append(st.recent, r)
	} else {
		st.recent[st.recentN%maxRecent] = r
	}
	st.recentN++
}

// addDone records an answered request (the ring grows up to maxDone).
func (st *reqStream) addDone(o outReq) {
	if len(st.done) < maxDone {
		st.done = append(st.done, o)
	} else {
		st.done[st.doneN%maxDone] = o
	}
	st.doneN++
}

// original returns the record of psn (nil when it is no longer kept).
func (st *reqStream) original(psn decode.PSN) *pktRec {
	n := len(st.recent)
	for i := 1; i <= n; i++ {
		r := &st.recent[(st.recentN-i)%len(st.recent)]
		if r.psn == psn {
			return r
		}
	}
	return nil
}

// position of an opcode within a message.
const (
	posOnly = iota
	posFirst
	posMiddle
	posLast
)

func msgPos(op decode.Opcode) int {
	switch p := op.Props(); {
	case p&decode.PropMiddle != 0:
		return posMiddle
	case p&decode.PropOnly == decode.PropStart:
		return posFirst
	case p&decode.PropOnly == decode.PropEnd:
		return posLast
	}
	return posOnly
}

// sameFamily reports whether a MIDDLE/LAST of kind k continues a message
// started as kind m (a SEND FIRST may end as SEND LAST with Immediate).
func sameFamily(m, k decode.MsgKind) bool {
	send := func(k decode.MsgKind) bool {
		return k == decode.MsgSend || k == decode.MsgSendImm || k == decode.MsgSendInv
	}
	write := func(k decode.MsgKind) bool { return k == decode.MsgWrite || k == decode.MsgWriteImm }
	return send(m) && send(k) || write(m) && write(k)
}

// psnSpan returns the PSNs a request consumes and whether the count is
// certain (a READ's depends on the MTU).
func psnSpan(p *decode.Packet, mtu uint32) (uint32, bool) {
	if !p.BTH.Opcode.Is(decode.PropRead) || p.Has&decode.HdrRETH == 0 {
		return 1, true
	}
	l := p.RETH.DMALen
	if l <= 256 {
		return 1, true
	}
	if mtu == 0 {
		return 1, false
	}
	return (l + mtu - 1) / mtu, true
}

// resolveSoft sets the next PSN after a READ sent while the MTU was not
// known, now that it is (learned from the READ's responses).
func (st *reqStream) resolveSoft(mtu uint32) {
	st.next = st.softPSN.Add(int((st.softLen + mtu - 1) / mtu))
	st.soft = false
}

// request analyzes a request packet sent by side.
func (t *Tracker) request(p *decode.Packet, s *Session, side uint8) {
	st := t.stream(s, side)
	a := &p.Analysis
	psn := p.BTH.PSN
	now := t.now
	fresh := true // the first transmission of this PSN
	n, sure := psnSpan(p, s.MTU)
	ep := &s.A
	if side == 1 {
		ep = &s.B
	}
	if st.started {
		if d := psn.Diff(st.next); d > restartDist || d < -restartDist {
			// Far from anything this QP sent: a new connection reusing
			// the QPN (set up out of the capture's sight), not a loss of
			// a million packets. Start over.
			t.event(p, decode.EventMidStream, s.ID, "PSN jumps from "+strconv.Itoa(int(st.next))+" to "+strconv.Itoa(int(psn))+": a new connection on this QP? PSN analysis starts over")
			s.f().Partial += uint64(len(st.pend))
			*st = reqStream{reqBufs: reqBufs{recent: st.recent[:0], done: st.done[:0]}}
			ep.HasStart = false
		}
	}
	if !st.started {
		st.started = true
		st.first = psn
		st.next = psn
		if ep.HasStart && psn != ep.StartPSN {
			if d := psn.Diff(ep.StartPSN); d > 0 {
				st.next = ep.StartPSN
				st.first = ep.StartPSN
			}
		}
		if !ep.HasStart {
			ep.StartPSN, ep.HasStart = psn, true
		}
	}
	if st.soft && s.MTU != 0 {
		st.resolveSoft(s.MTU)
	}
	a.ExpectedPSN, a.HasExpected = st.next, true
	d := psn.Diff(st.next)
	if st.soft && d >= 0 && psn.Diff(st.softHi) <= 0 {
		t.inferReadMTU(s, st.softLen, uint32(psn.Diff(st.softPSN)))
		st.soft = false
		d = 0
	}
	switch {
	case d == 0:
	case d > 0:
		a.Lost = uint32(d)
		s.f().Gaps++
		s.f().LostPSNs += uint64(d)
		if len(st.missing) < maxMissing {
			st.missing = append(st.missing, psnRange{lo: st.next, hi: psn})
		}
		t.event(p, decode.EventPSNGap, s.ID, "PSN gap: expected "+strconv.Itoa(int(st.next))+", got "+strconv.Itoa(int(psn))+": "+strconv.Itoa(int(d))+" packet(s) lost before the capture point")
	default:
		fresh = false
		if i := st.inMissing(psn); i >= 0 {
			// A PSN a gap skipped: the lost packet sent again after a
			// NAK, or a late (reordered) one.
			st.skipOut = st.missing[i].answered
			st.fill(i, psn)
			s.f().LostPSNs--
			fresh = true
			if st.nak.valid && st.nak.cause == decode.CauseNAK && psn.Diff(st.nak.psn) >= 0 {
				a.Cause, a.CauseFrame = st.nak.cause, st.nak.frame
				s.f().Retransmitted++
				t.event(p, decode.EventRetransmission, s.ID, "Retransmission of lost PSN "+strconv.Itoa(int(psn))+" (go-back-N after the NAK in frame "+strconv.Itoa(st.nak.frame)+")")
			} else {
				s.f().OutOfOrder++
				t.event(p, decode.EventOutOfOrder, s.ID, "Out-of-order: PSN "+strconv.Itoa(int(psn))+" arrives after later PSNs (expected "+strconv.Itoa(int(st.next))+")")
			}
			break
		}
		if !st.resent || psn.Diff(st.resentPSN) > 0 {
			st.resent, st.resentPSN = true, psn
		}
		orig := st.original(psn)
		found := orig != nil
		var prev pktRec // the latest transmission before this one
		if found {
			a.OrigFrame = orig.frame
			prev = pktRec{frame: orig.lastFrame, t: orig.lastT}
			orig.lastFrame, orig.lastT = p.Frame.Number, now
		}
		first := p.Frame.Number
		if found {
			first = orig.frame
		}
		switch {
		case st.nak.valid && (!found || st.nak.frame > prev.frame) && psn.Diff(st.nak.psn) >= 0:
			a.Cause, a.CauseFrame = st.nak.cause, st.nak.frame
			t.noteRetry(p, s, side, psn, prev.t, first)
			s.f().Retransmitted++
			how := "go-back-N after the NAK in frame "
			if st.nak.cause == decode.CauseRNR {
				how = "after the RNR NAK in frame "
			}
			t.event(p, decode.EventRetransmission, s.ID, "Retransmission of PSN "+strconv.Itoa(int(psn))+" ("+how+strconv.Itoa(st.nak.frame)+")")
		case !found || time.Duration(now-prev.t) >= t.opts.DupWindow:
			a.Cause = decode.CauseTimeout
			t.noteRetry(p, s, side, psn, prev.t, first)
			s.f().Retransmitted++
			text := "Retransmission of PSN " + strconv.Itoa(int(psn)) + " (no response: transport timer)"
			if found {
				text = "Retransmission of PSN " + strconv.Itoa(int(psn)) + " (last sent in frame " + strconv.Itoa(prev.frame) + ", " + time.Duration(now-prev.t).String() + " earlier, no response: transport timer)"
			}
			t.event(p, decode.EventRetransmission, s.ID, text)
		default:
			s.f().Duplicates++
			t.event(p, decode.EventDuplicate, s.ID, "Duplicate of frame "+strconv.Itoa(prev.frame)+" (PSN "+strconv.Itoa(int(psn))+", "+time.Duration(now-prev.t).String()+" later, nothing asked for it)")
		}
	}
	if d >= 0 {
		st.next = psn.Add(int(n))
		st.soft = !sure
		if !sure {
			st.softPSN, st.softLen = psn, p.RETH.DMALen
			st.softHi = psn.Add(int((p.RETH.DMALen + 255) / 256))
		}
	}
	if !fresh {
		return
	}
	st.remember(psn, p.Frame.Number, now)
	t.inferMTU(s, p)
	t.assemble(p, s, side, st)
	st.skipOut = false
}

// assemble adds a first-time request packet to its message.
func (t *Tracker) assemble(p *decode.Packet, s *Session, side uint8, st *reqStream) {
	kind := p.BTH.Opcode.MsgKind()
	psn := p.BTH.PSN
	plen := uint64(len(p.Payload))
	switch kind {
	case decode.MsgRead:
		plen = uint64(p.RETH.DMALen)
	case decode.MsgAtomic:
		plen = 8
	}
	pos := msgPos(p.BTH.Opcode)
	if pos == posFirst || pos == posOnly {
		t.abandonStale(p, s, st, psn)
	}
	var check mptRec
	if t.opts.MPT != nil {
		check = t.checkMPT(p, s)
	}
	var m *pmsg
	switch pos {
	case posOnly:
		m = &pmsg{kind: kind, op: p.BTH.Opcode, first: psn, last: psn, haveFirst: true, haveLast: true, count: 1,
			length: plen, firstFrame: p.Frame.Number, firstTime: t.now, lastFrame: p.Frame.Number, mpt: check}
		t.completeReq(p, s, side, st, m)
		return
	case posFirst:
		// A FIRST that fills a gap joins the MIDDLE/LAST packets that
		// arrived before it.
		for i := range st.pend {
			c := &st.pend[i]
			if !c.haveFirst && sameFamily(c.kind, kind) && c.first.Diff(psn) > 0 && c.first.Diff(psn) < 1<<16 {
				c.haveFirst, c.first, c.partial = true, psn, false
				c.count++
				c.length += plen
				c.firstFrame, c.firstTime = p.Frame.Number, t.now
				c.lastFrame = p.Frame.Number
				c.mpt = check
				t.maybeComplete(p, s, side, st, i)
				return
			}
		}
		if len(st.pend) >= maxPending {
			t.dropPending(s, st, 0)
		}
		st.pend = append(st.pend, pmsg{kind: kind, op: p.BTH.Opcode, first: psn, last: psn, haveFirst: true, count: 1, lastFrame: p.Frame.Number, lastOp: p.BTH.Opcode,
			length: plen, firstFrame: p.Frame.Number, firstTime: t.now, mpt: check})
		return
	}
	// MIDDLE or LAST: the newest pending message that can hold it (one
	// whose FIRST is missing may begin before the packets seen of it).
	idx := -1
	for i := len(st.pend) - 1; i >= 0; i-- {
		c := &st.pend[i]
		if !sameFamily(c.kind, kind) || c.haveLast && psn.Diff(c.last) > 0 {
			continue
		}
		if d := psn.Diff(c.first); d > 0 && d < 1<<16 || !c.haveFirst && pos == posMiddle && d < 0 && d > -1<<16 {
			idx = i
			break
		}
	}
	if idx < 0 {
		switch {
		case st.recentN <= 1 && s.Learned != decode.PairingCM:
			t.event(p, decode.EventMidStream, s.ID, "Message started before the capture: its first packets are not in it")
		case len(st.missing) > 0:
			// the FIRST may be among the lost packets
		default:
			s.f().OpcodeSeq++
			t.event(p, decode.EventOpcodeSeq, s.ID, p.BTH.Opcode.String()+" without a FIRST packet before it")
		}
		if len(st.pend) >= maxPending {
			t.dropPending(s, st, 0)
		}
		st.pend = append(st.pend, pmsg{kind: kind, op: p.BTH.Opcode, first: psn, last: psn, count: 0, partial: true,
			firstFrame: p.Frame.Number, firstTime: t.now})
		idx = len(st.pend) - 1
	}
	c := &st.pend[idx]
	c.count++
	c.lastFrame, c.lastOp = p.Frame.Number, p.BTH.Opcode
	if psn.Diff(c.first) < 0 {
		c.first = psn // a late packet of a message whose FIRST is missing
	}
	if psn.Diff(c.last) > 0 {
		c.last = psn
	}
	c.length += plen
	if check.checked {
		c.mpt = check // the IETH of a SEND LAST with Invalidate
	}
	if c.kind == decode.MsgSend && kind != decode.MsgSend {
		c.kind = kind // SEND LAST with Immediate / Invalidate
	}
	if c.kind == decode.MsgWrite && kind == decode.MsgWriteImm {
		c.kind = kind
	}
	if pos == posLast {
		c.haveLast, c.op = true, p.BTH.Opcode
	}
	t.maybeComplete(p, s, side, st, idx)
}

// abandonStale ends pending messages that can no longer complete: a new
// message starts at psn while an older one still waits for its LAST with
// no lost packet to explain it.
func (t *Tracker) abandonStale(p *decode.Packet, s *Session, st *reqStream, psn decode.PSN) {
	for i := 0; i < len(st.pend); {
		c := &st.pend[i]
		if !c.haveLast && psn.Diff(c.first) > 0 && !st.missingBetween(c.first, psn) {
			s.f().OpcodeSeq++
			t.event(p, decode.EventOpcodeSeq, s.ID, p.BTH.Opcode.String()+" while the message that began in frame "+strconv.Itoa(c.firstFrame)+" has no LAST packet")
			t.dropPending(s, st, i)
			continue
		}
		i++
	}
}

func (st *reqStream) missingBetween(lo, hi decode.PSN) bool {
	for _, r := range st.missing {
		if r.lo.InWindow(lo, hi) || lo.InWindow(r.lo, r.hi) {
			return true
		}
	}
	return false
}

// dropPending gives up on pending message i: counted as partial.
func (t *Tracker) dropPending(s *Session, st *reqStream, i int) {
	s.f().Partial++
	st.pend = append(st.pend[:i], st.pend[i+1:]...)
}

func (t *Tracker) maybeComplete(p *decode.Packet, s *Session, side uint8, st *reqStream, i int) {
	c := &st.pend[i]
	if !c.haveLast {
		return
	}
	if c.haveFirst && c.count != uint32(c.last.Diff(c.first))+1 {
		return // packets still missing: a retransmission may fill them
	}
	if !c.haveFirst && st.inMissing(c.first.Add(-1)) >= 0 {
		return // its FIRST may be among the PSNs still missing
	}
	m := *c
	st.pend = append(st.pend[:i], st.pend[i+1:]...)
	t.completeReq(p, s, side, st, &m)
}

// completeReq records a request message; p is the packet that completed
// it (its last request packet, or the ACK that ends a message whose
// missing packets the responder got).
func (t *Tracker) completeReq(p *decode.Packet, s *Session, side uint8, st *reqStream, m *pmsg) {
	s.countMessage(m.kind, m.length)
	if m.partial {
		s.f().Partial++
	}
	a := &p.Analysis
	if m.kind != decode.MsgRead && m.kind != decode.MsgAtomic {
		a.MsgKind, a.MsgLength, a.MsgFirst, a.MsgPackets, a.MsgPartial = m.kind, m.length, m.firstFrame, m.count, m.partial
	}
	if t.opts.OnMessage != nil {
		t.msg = Message{Session: s.ID, Dir: decode.Direction(side), Kind: m.kind, Opcode: m.op, PSN: m.first, Packets: m.count,
			Length: m.length, FirstFrame: m.firstFrame, LastFrame: m.lastFrame, Partial: m.partial}
		t.opts.OnMessage(&t.msg)
	}
	if !hasResponses(s) || st.skipOut {
		return
	}
	if st.early {
		if m.first.Diff(st.earlyPSN) <= 0 {
			return // answered before the capture showed it
		}
		st.early = false
	}
	if len(st.out) >= t.opts.MaxOutstanding {
		// no answers for this long: the capture may hold one direction
		// only. Forget the oldest quarter at once (amortized O(1)).
		drop := max(1, len(st.out)/4)
		if st.forgotten == 0 {
			st.forgotFrame, st.forgotT = st.out[0].lastFrame, st.out[0].lastTime
		}
		st.forgotten += uint64(drop)
		st.out = append(st.out[:0], st.out[drop:]...)
	}
	// Keep the list in PSN order (a packet that fills a gap completes a
	// message older than the newest): ackUpTo stops at the first request
	// past the ACK.
	o := outReq{kind: m.kind, psn: m.first, last: m.last, length: m.length,
		firstFrame: m.firstFrame, lastFrame: m.lastFrame, firstTime: m.firstTime, lastTime: t.now, mpt: m.mpt}
	if !p.BTH.Opcode.IsRequest() {
		o.lastTime = st.lastSent(m) // the ACK that ends it (pendingAcked)
	}
	i := len(st.out)
	for i > 0 && (st.out[i-1].psn).Diff(o.psn) > 0 {
		i--
	}
	st.out = slices.Insert(st.out, i, o)
}

// inferMTU learns the path MTU from a FIRST or MIDDLE packet: their
// payload is exactly one MTU.
func (t *Tracker) inferMTU(s *Session, p *decode.Packet) {
	if s.MTU != 0 || p.Flags&decode.FlagTruncated != 0 {
		return
	}
	// A FIRST or MIDDLE of a SEND, WRITE or READ response.
	if op := p.BTH.Opcode; op.Is(decode.PropEnd) || !op.IsAny(decode.PropSend|decode.PropWrite|decode.PropReadResp) {
		return
	}
	if l := uint32(len(p.Payload)); l >= 256 && l <= 4096 && l&(l-1) == 0 {
		s.MTU, s.mtuFrom = l, mtuPayload
	}
}

// inferReadMTU learns the MTU from the PSNs a READ of length l consumed,
// when exactly one MTU gives that count.
func (t *Tracker) inferReadMTU(s *Session, l, n uint32) {
	if s.MTU != 0 || n == 0 {
		return
	}
	var found uint32
	for mtu := uint32(256); mtu <= 4096; mtu *= 2 {
		if (l+mtu-1)/mtu == n {
			if found != 0 {
				return // ambiguous
			}
			found = mtu
		}
	}
	if found != 0 {
		s.MTU, s.mtuFrom = found, mtuRead
	}
}

// response analyzes an ACK, NAK, READ response or ATOMIC ACK sent by side:
// it answers the requests of the other side.
func (t *Tracker) response(p *decode.Packet, s *Session, side uint8) {
	st := t.stream(s, 1-side)
	st.answered = true
	a := &p.Analysis
	psn := p.BTH.PSN
	op := p.BTH.Opcode
	if st.soft && s.MTU != 0 {
		st.resolveSoft(s.MTU)
	}
	if rr := &st.rr; rr.active && !rr.orphan && rr.beyond(psn, op) {
		// the responder is done with the READ: what is missing of it
		// will not come
		t.readIncomplete(p, s, st)
	}
	switch {
	case op.Is(decode.PropAck):
		if p.Has&decode.HdrAETH == 0 {
			return
		}
		switch p.AETH.Kind() {
		case decode.AETHAck:
			if len(st.pend) > 0 && !st.ahead(psn) {
				// (an ACK ahead of the requests seen may have overtaken
				// them: the missing packets may still come)
				t.pendingAcked(p, s, 1-side, st, psn)
			}
			n := t.ackUpTo(p, s, st, psn, true)
			if st.ahead(psn) {
				t.unseen(p, s, st, "ACK")
			} else if n == 0 {
				t.noMatch(p, s, st, "ACK")
			}
		case decode.AETHRNRNak:
			timer := p.AETH.Value()
			s.f().RNRNaks[timer]++
			t.ackUpTo(p, s, st, psn, false)
			t.matchRequest(p, st, psn)
			if i := st.outstandingAt(psn); i >= 0 {
				st.out[i].rnr = true
			}
			t.noteRNR(p, s, 1-side, psn)
			st.nak = nakRec{true, p.Frame.Number, psn, decode.CauseRNR}
			t.event(p, decode.EventRNRNak, s.ID, "RNR NAK for PSN "+strconv.Itoa(int(psn))+": receiver not ready, retry after "+rnrString(timer))
		case decode.AETHNak:
			code := p.AETH.Value()
			s.f().NAKs[code]++
			t.ackUpTo(p, s, st, psn, false)
			text := decode.SyndromeString(p.AETH.Syndrome)
			if code == decode.NakPSNSequenceError {
				t.matchRequest(p, st, psn)
				if st.inMissing(psn) >= 0 || psn.InWindow(st.first, st.next.Next()) {
					st.nak = nakRec{true, p.Frame.Number, psn, decode.CauseNAK}
					text += ": the responder expected PSN " + strconv.Itoa(int(psn)) + "; the requester must resend from there (go-back-N)"
				} else {
					// older than anything the requester sent: a requester
					// takes it for a stale response and ignores it
					text += ": the responder expects PSN " + strconv.Itoa(int(psn)) + ", which the requester never sent (QPs set up with different PSNs?); the requester ignores it"
				}
			} else {
				if i := st.outstandingAt(psn); i >= 0 {
					o := st.out[i]
					t.answer(p, s, st, i, false)
					text += " for the " + o.kind.String() + " in frame " + strconv.Itoa(o.firstFrame)
				} else if i := st.pendingAt(psn); i >= 0 {
					// the NAK stops a multi-packet message part-way
					c := st.pend[i]
					st.pend = append(st.pend[:i], st.pend[i+1:]...)
					st.settled(c.first, c.last)
					if c.mpt.checked {
						t.mptAnswer(p, s, &c.mpt, mptFrame(&c.mpt, c.firstFrame, c.lastFrame), false)
					}
					s.countMessage(c.kind, c.length)
					if t.opts.OnMessage != nil {
						t.msg = Message{Session: s.ID, Dir: decode.Direction(1 - side), Kind: c.kind, Opcode: c.lastOp, PSN: c.first, Packets: c.count,
							Length: c.length, FirstFrame: c.firstFrame, LastFrame: c.lastFrame, Partial: c.partial, NAKed: true}
						t.opts.OnMessage(&t.msg)
					}
					// the packet the NAK rejects
					a.RequestFrame = c.lastFrame
					a.RTT, a.HasRTT = 0, false
					if r := st.original(psn); r != nil {
						a.RequestFrame = r.frame
						a.RTT, a.HasRTT = time.Duration(t.now-r.t), true
					}
					text += " for the " + c.kind.String() + " that began in frame " + strconv.Itoa(c.firstFrame) + " (its other packets are never sent)"
				}
			}
			t.event(p, decode.EventNAK, s.ID, text)
		}
	case op.Is(decode.PropReadResp | decode.PropStart):
		t.inferMTU(s, p)
		if rr := &st.rr; rr.active && !rr.orphan && psn.Diff(rr.req.psn) >= 0 {
			// inside the READ being reassembled: its FIRST arriving
			// late, or the responder answering the requester's READ
			// again from a lost PSN on
			t.readPacket(p, s, st)
			return
		}
		i, ok := t.matchOwn(p, s, st, decode.MsgRead, "READ response")
		if !ok {
			return
		}
		if op.Is(decode.PropEnd) { // READ response ONLY
			req := st.out[i]
			t.answer(p, s, st, i, true)
			t.readDone(p, req, uint64(len(p.Payload)), 1)
			return
		}
		t.startRead(p, s, st, i)
		t.readPacket(p, s, st)
	case op.Is(decode.PropReadResp):
		t.inferMTU(s, p)
		rr := &st.rr
		if !rr.active {
			i := st.readCovering(psn, s.MTU)
			if i < 0 {
				t.noMatch(p, s, st, "READ response")
				return
			}
			// the READ's first response packets are not in the
			// capture; like its FIRST would, this one acknowledges the
			// requests before the READ
			t.ackUpTo(p, s, st, st.out[i].psn, false)
			t.startRead(p, s, st, st.readCovering(psn, s.MTU))
		}
		if rr.orphan {
			// the rest of a READ whose request the capture lacks
			if psn.Diff(st.next) >= 0 {
				st.next = psn.Next()
			}
			if op.Is(decode.PropEnd) {
				rr.active = false
			}
			return
		}
		t.readPacket(p, s, st)
	case op.Is(decode.PropAtomicAck):
		i, ok := t.matchOwn(p, s, st, decode.MsgAtomic, "ATOMIC ACK")
		if !ok {
			return
		}
		req := st.out[i]
		t.answer(p, s, st, i, true)
		a.MsgKind, a.MsgLength, a.MsgFirst, a.MsgPackets = decode.MsgAtomic, 8, req.firstFrame, 1
	}
}

// matchOwn finds the READ or ATOMIC that a READ response (First or Only)
// or an ATOMIC ACK answers: the outstanding request of that kind at the
// response's PSN. Requests before it are acknowledged with it; p points at
// the request. It returns the request's index in st.out.
func (t *Tracker) matchOwn(p *decode.Packet, s *Session, st *reqStream, kind decode.MsgKind, what string) (int, bool) {
	psn := p.BTH.PSN
	if i := st.outstandingAt(psn); i < 0 || st.out[i].kind != kind || st.out[i].psn != psn {
		t.noMatch(p, s, st, what)
		return 0, false
	}
	t.ackUpTo(p, s, st, psn, false)
	i := st.outstandingAt(psn)
	req := &st.out[i]
	p.Analysis.RequestFrame = req.lastFrame
	p.Analysis.RTT, p.Analysis.HasRTT = time.Duration(t.now-req.lastTime), true
	return i, true
}

func (st *reqStream) pendingAt(psn decode.PSN) int {
	for i := range st.pend {
		c := &st.pend[i]
		if psn.Diff(c.first) >= 0 && (!c.haveLast || psn.Diff(c.last) <= 0) && psn.Diff(c.first) < 1<<16 {
			return i
		}
	}
	return -1
}

func (t *Tracker) readDone(p *decode.Packet, req outReq, length uint64, pkts uint32) {
	a := &p.Analysis
	a.MsgKind, a.MsgLength, a.MsgFirst, a.MsgPackets = decode.MsgRead, length, req.firstFrame, pkts
}

// matchRequest points a NAK at the request it rejects (when that request
// is in the capture).
func (t *Tracker) matchRequest(p *decode.Packet, st *reqStream, psn decode.PSN) {
	if i := st.outstandingAt(psn); i >= 0 {
		o := &st.out[i]
		p.Analysis.RequestFrame = o.lastFrame
		p.Analysis.RTT, p.Analysis.HasRTT = time.Duration(t.now-o.lastTime), true
	}
}

// ackUpTo completes the SEND/WRITE requests up to psn (inclusive for an
// ACK; exclusive for a NAK or a READ/ATOMIC response, which acknowledge
// everything before their PSN). It returns how many it completed.
func (t *Tracker) ackUpTo(p *decode.Packet, s *Session, st *reqStream, psn decode.PSN, inclusive bool) int {
	a := &p.Analysis
	n := 0
	for i := 0; i < len(st.out); {
		o := &st.out[i]
		d := psn.Diff(o.last)
		if d < 0 || !inclusive && d == 0 {
			if o.psn.Diff(psn) > 0 {
				break // the list is in PSN order: nothing further is covered
			}
			i++
			continue
		}
		if o.kind == decode.MsgRead || o.kind == decode.MsgAtomic {
			// answered only by its own response; a response past all
			// of it shows that response was sent, and lost before the
			// capture point
			if !t.responseLost(p, s, st, i, psn) {
				i++
			}
			continue
		}
		if inclusive && d == 0 || a.RequestFrame == 0 || o.last.Diff(psn) == 0 {
			a.RequestFrame = o.lastFrame
			a.RTT, a.HasRTT = time.Duration(t.now-o.lastTime), true
		}
		t.answer(p, s, st, i, true)
		n++
	}
	if n > 1 {
		what := "ACK for PSN " + strconv.Itoa(int(psn)) + " completes "
		if !inclusive {
			what = p.BTH.Opcode.String() + " for PSN " + strconv.Itoa(int(psn)) + " also acknowledges the earlier "
		}
		t.event(p, decode.EventAckCoalesced, s.ID, what+strconv.Itoa(n)+" requests")
	}
	if n > 0 {
		st.lastAcked, st.hasAcked = psn, true
	}
	return n
}

// answer completes outstanding request i; ok says it succeeded (its
// latency counts).
func (t *Tracker) answer(p *decode.Packet, s *Session, st *reqStream, i int, ok bool) {
	o := st.out[i]
	st.out = append(st.out[:i], st.out[i+1:]...)
	if s.watch != 0 {
		st.settled(o.psn, o.last)
	}
	if ok {
		t.completed(p, s, st, o, true)
	} else {
		if o.mpt.checked {
			t.mptAnswer(p, s, &o.mpt, mptFrame(&o.mpt, o.firstFrame, o.lastFrame), false)
		}
		st.addDone(o)
		p.Analysis.RequestFrame = o.lastFrame
		p.Analysis.RTT, p.Analysis.HasRTT = time.Duration(t.now-o.lastTime), true
	}
}

func (t *Tracker) completed(p *decode.Packet, s *Session, st *reqStream, o outReq, ok bool) {
	if s.watch != 0 {
		st.settled(o.psn, o.last)
	}
	p.Analysis.Acked = append(p.Analysis.Acked, o.lastFrame)
	if o.mpt.checked {
		t.mptAnswer(p, s, &o.mpt, mptFrame(&o.mpt, o.firstFrame, o.lastFrame), true)
	}
	s.addKind(o.kind).lat.Add(time.Duration(t.now - o.firstTime))
	st.addDone(o)
}

// noMatch classifies a response that answers no outstanding request.
func (t *Tracker) noMatch(p *decode.Packet, s *Session, st *reqStream, what string) {
	psn := p.BTH.PSN
	switch {
	case st.ahead(psn):
		t.unseen(p, s, st, what)
	case st.outstandingAt(psn) >= 0 || st.pendingAt(psn) >= 0:
		// an ACK inside a message: the responder acknowledges its packets
		// so far (AckReq on a middle packet, or coalescing on the way)
		if r := st.original(psn); r != nil {
			p.Analysis.RequestFrame = r.frame
			p.Analysis.RTT, p.Analysis.HasRTT = time.Duration(t.now-r.t), true
		}
	case (st.doneAt(psn) || st.hasAcked && psn.Diff(st.lastAcked) <= 0 && st.started) && st.resent && psn.Diff(st.resentPSN) <= 0:
		// the requester sent the request again: the responder answers
		// the copy as the spec asks (a repeated ACK or READ response)
		if r := st.original(psn); r != nil {
			p.Analysis.RequestFrame = r.lastFrame
			p.Analysis.RTT, p.Analysis.HasRTT = time.Duration(t.now-r.lastT), true
		}
	case st.doneAt(psn) || st.hasAcked && psn.Diff(st.lastAcked) <= 0 && st.started:
		s.f().Duplicates++
		t.event(p, decode.EventDuplicate, s.ID, what+" for PSN "+strconv.Itoa(int(psn))+" again (the request was already answered)")
	case !st.started || psn.Diff(st.first) < 0:
		t.event(p, decode.EventMidStream, s.ID, what+" for PSN "+strconv.Itoa(int(psn))+": its request is before the capture")
		if !st.started {
			// the request may yet come, reordered
			if !st.early || psn.Diff(st.earlyPSN) > 0 {
				st.early, st.earlyPSN = true, psn
			}
			if op := p.BTH.Opcode; op.Is(decode.PropReadResp|decode.PropStart) && !op.Is(decode.PropEnd) {
				st.rr = readResp{active: true, orphan: true}
			}
		}
	default:
		s.f().Unmatched++
		t.event(p, decode.EventUnmatched, s.ID, what+" for PSN "+strconv.Itoa(int(psn))+" matches no outstanding request")
	}
}

func rnrString(code uint8) string {
	us := decode.RNRTimerMicros(code)
	return (time.Duration(us) * time.Microsecond).String()
}

// Flush ends the capture: requests still waiting for a response are
// reported (when the capture went on long enough after them that an
// answer was due), and messages still being reassembled count as partial.
func (t *Tracker) Flush() {
	// Only a session with a live state has anything in flight, and each
	// is in the live queue (revive): the others, a million idle ones at
	// times, are not read again. In session order, as before.
	ids := make([]uint32, 0, t.liveQ.len())
	for _, e := range t.liveQ.entries() {
		ids = append(ids, e.id)
	}
	for s := range t.sessionsOf(ids) {
		if s.MergedInto() == 0 {
			t.flushSession(s)
		}
	}
	t.flushMADs()
	t.ulpEnd()
	t.fabricEnd()
}

// flushSession ends what s has in flight, as at the end of the capture.
func (t *Tracker) flushSession(s *Session) {
	if s.live == nil {
		return
	}
	for side := range s.live.req {
		st := &s.live.req[side]
		if r := &st.retry; r.active && r.tries >= giveUpTries {
			t.giveUp(nil, s, uint8(side))
		}
		for len(st.pend) > 0 {
			t.pendingEnd(s, st)
		}
		if rr := &st.rr; rr.active {
			if !rr.orphan && (rr.holes.n > 0 || time.Duration(t.now-rr.lastT) >= t.opts.NoResponseAfter) {
				t.readIncomplete(nil, s, st)
			} else {
				s.f().Partial++
				rr.active = false
			}
		}
		var due []outReq
		for _, o := range st.out {
			if o.rnr || time.Duration(t.now-o.firstTime) < t.opts.NoResponseAfter {
				continue // RNR NAKed: the requester ran out of RNR retries
			}
			due = append(due, o)
		}
		if n := uint64(len(due)) + st.forgotten; n > 0 {
			s.f().NoResponse += n
		}
		if !st.answered && len(due)+int(st.forgotten) > 16 && len(st.out) > 0 {
			// not one answer in the whole capture: one finding, not
			// thousands
			frame, at := st.out[0].lastFrame, st.out[0].lastTime
			if st.forgotten > 0 {
				frame, at = st.forgotFrame, st.forgotT
			}
			t.emit(decode.EventNoResponse, frame, at, s.ID, strconv.Itoa(len(due)+int(st.forgotten))+" requests from frame "+strconv.Itoa(frame)+" on were never answered: no response in the capture at all (does it hold only one direction?)")
			due = nil
		}
		for _, o := range due {
			t.emit(decode.EventNoResponse, o.lastFrame, o.lastTime, s.ID, o.kind.String()+" in frame "+strconv.Itoa(o.lastFrame)+" (PSN "+strconv.Itoa(int(o.last))+") was never answered")
		}
		st.out = st.out[:0]
		st.forgotten = 0
	}
}

// unseen handles a response for a PSN the requester has not been seen to
// send: the requests from st.next through it were lost before the capture
// point (the responder got them). It is a PSN gap on the request stream;
// requests that arrive later to fill it are out of order, and need no
// response any more.
func (t *Tracker) unseen(p *decode.Packet, s *Session, st *reqStream, what string) {
	psn := p.BTH.PSN
	lost := uint32(psn.Diff(st.next)) + 1
	p.Analysis.Lost = lost
	p.Analysis.ExpectedPSN, p.Analysis.HasExpected = st.next, true
	s.f().Gaps++
	s.f().LostPSNs += uint64(lost)
	if len(st.missing) < maxMissing {
		st.missing = append(st.missing, psnRange{st.next, psn.Next(), true})
	}
	t.event(p, decode.EventPSNGap, s.ID, what+" for PSN "+strconv.Itoa(int(psn))+": the request is not in the capture ("+strconv.Itoa(int(lost))+" PSN(s) from "+strconv.Itoa(int(st.next))+" lost before the capture point)")
	st.next = psn.Next()
	st.soft = false
	if p.BTH.Opcode.Is(decode.PropReadResp|decode.PropStart) && !p.BTH.Opcode.Is(decode.PropEnd) {
		st.rr = readResp{active: true, orphan: true}
	}
}

// ahead reports whether psn is at or after the next PSN the requester
// has not been seen to send (but near enough to be the same connection).
func (st *reqStream) ahead(psn decode.PSN) bool {
	d := psn.Diff(st.next)
	return st.started && d >= 0 && d < restartDist
}
