package flow

import (
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// A message is complete only when the capture holds every PSN of it: each
// request packet of a SEND or WRITE, each response packet of a READ, the
// ATOMIC ACK of an ATOMIC. A packet missing from the middle of a message
// may still arrive (reordered, or resent after a NAK), so the message
// waits; it is reported incomplete (EventIncomplete, Session.Partial) once
// it no longer can complete: the responder answered past it, or the
// capture ended. This file holds those rules.

// holes are PSNs that a gap skipped and that have not been seen since, as
// a few ranges [lo, hi). Past len(r) ranges the last one grows to cover
// the new one too: the count gets coarse, the memory stays bounded.
type holes struct {
	r [4]psnRange
	n uint8
}

func (h *holes) add(lo, hi decode.PSN) {
	if h.n == uint8(len(h.r)) {
		h.r[h.n-1].hi = hi
		return
	}
	h.r[h.n] = psnRange{lo: lo, hi: hi}
	h.n++
}

// fill removes psn from the holes and reports whether it was in one.
func (h *holes) fill(psn decode.PSN) bool {
	for i := 0; i < int(h.n); i++ {
		r := &h.r[i]
		if !psn.InWindow(r.lo, r.hi) {
			continue
		}
		switch {
		case r.lo == psn && r.lo.Next() == r.hi:
			copy(h.r[i:], h.r[i+1:h.n])
			h.n--
		case r.lo == psn:
			r.lo = psn.Next()
		case psn.Next() == r.hi:
			r.hi = psn
		default:
			hi := r.hi
			r.hi = psn
			h.add(psn.Next(), hi)
		}
		return true
	}
	return false
}

// count returns how many PSNs the holes hold.
func (h *holes) count() uint32 {
	var n uint32
	for _, r := range h.r[:h.n] {
		n += r.hi.Dist(r.lo)
	}
	return n
}

// appendPSNs appends PSN ranges as text: "772", "772-774, 780".
func appendPSNs(b []byte, rs []psnRange) []byte {
	for i, r := range rs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, uint64(r.lo), 10)
		if last := r.hi.Add(-1); last != r.lo {
			b = append(b, '-')
			b = strconv.AppendUint(b, uint64(last), 10)
		}
	}
	return b
}

// readSpan returns the PSNs the responses to READ o take: exact with the
// MTU, the most a READ of its length may take (256-byte MTU) without it.
func readSpan(o *outReq, mtu uint32) uint32 {
	if mtu == 0 {
		mtu = 256
	}
	return max(1, uint32((o.length+uint64(mtu)-1)/uint64(mtu)))
}

// readCovering returns the outstanding READ whose responses take psn
// after their first PSN (a READ response MIDDLE or LAST whose FIRST the
// capture lacks), or -1.
func (st *reqStream) readCovering(psn decode.PSN, mtu uint32) int {
	for i := range st.out {
		o := &st.out[i]
		if o.kind == decode.MsgRead && psn.Diff(o.psn) > 0 && psn.Dist(o.psn) < readSpan(o, mtu) {
			return i
		}
	}
	return -1
}

// startRead begins the reassembly of the responses to outstanding READ i
// (taken out of st.out), none seen yet.
func (t *Tracker) startRead(p *decode.Packet, s *Session, st *reqStream, i int) {
	req := st.out[i]
	st.out = append(st.out[:i], st.out[i+1:]...)
	st.settled(req.psn, req.psn)
	// the first response packet shows the READ executed
	if req.mpt.checked {
		t.mptAnswer(p, s, &req.mpt, req.firstFrame, true)
	}
	rr := &st.rr // field by field: no need to clear all of it
	rr.active, rr.orphan, rr.haveLast, rr.hasEnd = true, false, false, false
	rr.req, rr.next, rr.length, rr.pkts, rr.holes.n = req, req.psn, 0, 0, 0
	if s.MTU != 0 {
		rr.end, rr.hasEnd = req.psn.Add(int(readSpan(&req, s.MTU))-1), true
	}
}

// readPacket adds a READ response packet to the READ being reassembled:
// in order, after a gap, filling a gap late (out of order), or seen
// before (a duplicate). The READ completes on the packet after which
// every PSN of it was seen, LAST included.
func (t *Tracker) readPacket(p *decode.Packet, s *Session, st *reqStream) {
	rr := &st.rr
	a := &p.Analysis
	psn := p.BTH.PSN
	if !a.HasRTT { // (a FIRST: matchOwn did it)
		a.RequestFrame = rr.req.lastFrame
		a.RTT, a.HasRTT = time.Duration(t.now-rr.req.lastTime), true
	}
	switch d := psn.Diff(rr.next); {
	case d == 0:
		rr.next = psn.Next()
	case d > 0:
		rr.holes.add(rr.next, psn)
		s.f().Gaps++
		s.f().LostPSNs += uint64(d)
		a.Lost += uint32(d)
		t.event(p, decode.EventPSNGap, s.ID, "READ response PSN gap: expected "+strconv.Itoa(int(rr.next))+", got "+strconv.Itoa(int(psn)))
		rr.next = psn.Next()
	case rr.holes.fill(psn):
		s.f().LostPSNs--
		s.f().OutOfOrder++
		t.event(p, decode.EventOutOfOrder, s.ID, "Out-of-order: READ response PSN "+strconv.Itoa(int(psn))+" arrives after later ones (the READ in frame "+strconv.Itoa(rr.req.firstFrame)+")")
	default:
		s.f().Duplicates++
		t.event(p, decode.EventDuplicate, s.ID, "READ response PSN "+strconv.Itoa(int(psn))+" again")
		return
	}
	rr.length += uint64(len(p.Payload))
	rr.pkts++
	rr.lastT = t.now
	if p.BTH.Opcode.Is(decode.PropEnd) {
		rr.haveLast, rr.end, rr.hasEnd = true, psn, true
	}
	if rr.haveLast && rr.holes.n == 0 {
		rr.active = false
		req := rr.req
		req.last = rr.end // answered: a response repeated later is recognized
		t.completed(p, s, st, req, true)
		t.readDone(p, req, rr.length, rr.pkts)
	}
}

// beyond reports whether a response for psn shows that the responder
// is done with the READ being reassembled: its PSN is past the READ's
// (or, with the READ's end unknown, past every PSN of it seen, and not a
// MIDDLE or LAST that may belong to it).
func (rr *readResp) beyond(psn decode.PSN, op decode.Opcode) bool {
	if rr.hasEnd {
		return psn.Diff(rr.end) > 0
	}
	return psn.Diff(rr.next) >= 0 && !(op.Is(decode.PropReadResp) && !op.Is(decode.PropStart))
}

// readIncomplete ends the reassembly of a READ that will not complete:
// p (nil at the end of the capture) is the response that shows the
// responder is done with it. The PSNs it lacks at the end are lost when a
// later response shows it; at the end of the capture they are only
// missing.
func (t *Tracker) readIncomplete(p *decode.Packet, s *Session, st *reqStream) {
	rr := &st.rr
	rr.active = false
	s.f().Partial++
	missing := rr.holes
	if !rr.haveLast && rr.hasEnd && rr.end.Diff(rr.next) >= 0 {
		tail := rr.end.Next().Dist(rr.next)
		missing.add(rr.next, rr.end.Next())
		if p != nil {
			t.lostResponses(p, s, tail, "READ response PSN "+psnText(rr.next, rr.end.Next())+" of the READ in frame "+strconv.Itoa(rr.req.firstFrame))
		}
	}
	text := "READ of " + strconv.FormatUint(rr.req.length, 10) + " B in frame " + strconv.Itoa(rr.req.firstFrame) + " incomplete: "
	switch {
	case missing.n > 0:
		text += "response PSN " + string(appendPSNs(nil, missing.r[:missing.n])) + " missing"
	default:
		text += "its responses from PSN " + strconv.Itoa(int(rr.next)) + " on are missing"
	}
	text += " (seen: " + nof(uint64(rr.pkts), "response packet") + ", " + strconv.FormatUint(rr.length, 10) + " B)"
	t.incomplete(p, s, missing.count(), text)
}

// lostResponses counts response PSNs that a later response p shows were
// sent but are not in the capture.
func (t *Tracker) lostResponses(p *decode.Packet, s *Session, n uint32, what string) {
	s.f().Gaps++
	s.f().LostPSNs += uint64(n)
	p.Analysis.Lost += n
	t.event(p, decode.EventPSNGap, s.ID, what+" not in the capture: lost before the capture point (the response in this frame comes after it)")
}

// responseLost ends outstanding READ or ATOMIC i, which a response for
// psn shows the responder answered: its response is not in the capture.
// It reports whether it did (o's responses all precede psn).
func (t *Tracker) responseLost(p *decode.Packet, s *Session, st *reqStream, i int, psn decode.PSN) bool {
	o := st.out[i]
	n := uint32(1)
	what := "ATOMIC ACK for PSN " + strconv.Itoa(int(o.psn))
	if o.kind == decode.MsgRead {
		n = readSpan(&o, s.MTU)
		what = "READ response PSN " + psnText(o.psn, o.psn.Add(int(n)))
		if s.MTU == 0 && n > 1 {
			return false // how many PSNs it takes is not known
		}
	}
	if psn.Diff(o.psn.Add(int(n)-1)) <= 0 {
		return false
	}
	st.out = append(st.out[:i], st.out[i+1:]...)
	st.settled(o.psn, o.psn)
	s.f().Partial++
	t.lostResponses(p, s, n, what+" (the "+o.kind.String()+" in frame "+strconv.Itoa(o.firstFrame)+")")
	text := "ATOMIC in frame " + strconv.Itoa(o.firstFrame) + " incomplete: its ATOMIC ACK is missing"
	if o.kind == decode.MsgRead {
		text = "READ of " + strconv.FormatUint(o.length, 10) + " B in frame " + strconv.Itoa(o.firstFrame) + " incomplete: response PSN " + psnText(o.psn, o.psn.Add(int(n))) + " missing (no response packet seen)"
	}
	t.incomplete(p, s, n, text)
	return true
}

// incomplete reports a message that will not complete in the capture,
// missing PSNs of it, on p (nil: at the end of the capture). The caller
// counts it in Session.Partial.
func (t *Tracker) incomplete(p *decode.Packet, s *Session, missing uint32, text string) {
	if p == nil {
		t.emit(decode.EventIncomplete, 0, t.now, s.ID, text)
		return
	}
	p.Analysis.Missing += missing
	t.event(p, decode.EventIncomplete, s.ID, text)
}

// nof formats a count of things: "1 packet", "2 packets".
func nof(n uint64, what string) string {
	s := strconv.FormatUint(n, 10) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// psnText formats [lo, hi) as "772" or "772-774".
func psnText(lo, hi decode.PSN) string {
	return string(appendPSNs(nil, []psnRange{{lo: lo, hi: hi}}))
}

// pendingMissing returns the PSNs of pending message c that the capture
// lacks: the holes of st.missing inside it (and before it, when its FIRST
// is among them).
func (st *reqStream) pendingMissing(c *pmsg) (rs []psnRange, n uint32) {
	lo, hi := c.first, c.last.Next()
	for _, r := range st.missing {
		if !c.haveFirst && r.hi == c.first {
			rs = append(rs, r) // its FIRST may be in there
			n += r.hi.Dist(r.lo)
			continue
		}
		a, b := r.lo, r.hi
		if a.Diff(lo) < 0 {
			a = lo
		}
		if b.Diff(hi) > 0 {
			b = hi
		}
		if a.Diff(b) < 0 {
			rs = append(rs, psnRange{lo: a, hi: b})
			n += b.Dist(a)
		}
	}
	return rs, n
}

// lastSent returns when the latest packet of pending message c was sent
// (its first packet's time when that is no longer remembered).
func (st *reqStream) lastSent(c *pmsg) int64 {
	n := len(st.recent)
	for i := 1; i <= n; i++ {
		if r := &st.recent[(st.recentN-i)%len(st.recent)]; r.frame == c.lastFrame {
			return r.t
		}
	}
	return c.firstTime
}

// pendingAcked ends the pending messages that a positive ACK for psn
// covers: ACKs are cumulative, so the responder got every packet of them,
// and those the capture lacks were lost before the capture point. Each
// is reported incomplete and completes as partial; the ACK answers it.
func (t *Tracker) pendingAcked(p *decode.Packet, s *Session, side uint8, st *reqStream, psn decode.PSN) {
	for i := 0; i < len(st.pend); {
		c := &st.pend[i]
		if d := psn.Diff(c.last); d < 0 || d == 0 && !c.haveLast {
			i++
			continue
		}
		m := *c
		m.partial = true
		rs, n := st.pendingMissing(c)
		text := m.kind.String() + " that began in frame " + strconv.Itoa(m.firstFrame) + " incomplete: "
		if len(rs) > 0 {
			text += "PSN " + string(appendPSNs(nil, rs)) + " not in the capture"
		} else {
			text += "its last packets are not in the capture"
		}
		text += "; the ACK for PSN " + strconv.Itoa(int(psn)) + " shows the responder got them (lost before the capture point)"
		st.pend = append(st.pend[:i], st.pend[i+1:]...)
		t.incomplete(p, s, n, text)
		t.completeReq(p, s, side, st, &m)
	}
}

// pendingEnd ends the first pending message at the end of the capture:
// incomplete when packets in it are missing, or when the capture went on
// long enough after its last packet that the rest was due; otherwise the
// capture ended while it was being sent, and it only counts as partial.
func (t *Tracker) pendingEnd(s *Session, st *reqStream) {
	c := st.pend[0]
	st.pend = append(st.pend[:0], st.pend[1:]...)
	s.f().Partial++
	rs, n := st.pendingMissing(&c)
	if n == 0 && time.Duration(t.now-st.lastSent(&c)) < t.opts.NoResponseAfter {
		return
	}
	text := c.kind.String() + " that began in frame " + strconv.Itoa(c.firstFrame) + " incomplete: "
	if len(rs) > 0 {
		text += "PSN " + string(appendPSNs(nil, rs)) + " missing"
	} else {
		text += "its LAST packet is not in the capture"
	}
	text += " (seen: " + nof(uint64(c.count), "packet") + ", " + strconv.FormatUint(c.length, 10) + " B)"
	t.incomplete(nil, s, n, text)
}
