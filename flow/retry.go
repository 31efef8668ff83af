package flow

import (
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// What a requester gave up. A requester resends a PSN nobody answers when
// its transport timer expires (or a NAK PSN sequence error asks), and a
// PSN answered by an RNR NAK after the RNR timer; after retry_cnt (or
// rnr_retry) resends it stops, completes the request with
// IBV_WC_RETRY_EXC_ERR (IBV_WC_RNR_RETRY_EXC_ERR) and the QP goes to the
// error state, where it sends nothing more. The capture cannot see the
// completion, only the evidence: the same PSN sent again and again, then
// silence. The tracker follows the oldest PSN a requester resends and
// calls it likely given up (EventRetryExc, EventRNRRetryExc) when the PSN
// was sent at least giveUpTries times with no answer but RNR NAKs, and
//
//   - a packet of the session sent to the requester comes more than twice
//     the longest interval between the resends after the last resend (or
//     RNR NAK) with no resend since: the event is on that packet, and the
//     later packets sent to that QP carry rocetap.analysis.qp_error; or
//   - the capture ends with no resend since: the event is at the end, and
//     its text says how long the capture went on (it may have been cut
//     right before the next resend).
//
// Any answer to the PSN clears it; so does the requester sending anything
// else once its next resend was due (it is alive, and something the
// capture lacks answered the PSN).
const giveUpTries = 3 // the first transmission and two resends

// retryRec follows the oldest PSN a requester sent again.
type retryRec struct {
	active     bool
	psn        decode.PSN
	kind       decode.MsgKind
	tries      uint32        // transmissions seen, the first included
	rnrs       uint32        // RNR NAKs for it
	firstFrame int           // its first transmission
	lastFrame  int           // its latest transmission
	lastT      int64         // Unix nanoseconds
	gap        time.Duration // the longest time between two of its transmissions
	nakFrame   int           // an RNR NAK answering its latest transmission (0: none)
	nakT       int64
}

// GiveUp is a requester that likely gave up on a PSN: it sent it at
// least three times without an answer (transport retries) or answered by
// RNR NAKs only (RNR retries), then went silent. Its QP is likely in the
// error state from there on.
type GiveUp struct {
	Cause      decode.Event // decode.EventRetryExc or decode.EventRNRRetryExc; 0: none
	PSN        decode.PSN
	Kind       decode.MsgKind // of the request at PSN, when known
	Sent       uint32         // transmissions of PSN (the retries and the first)
	RNRNaks    uint32         // RNR NAKs answering them
	FirstFrame int            // first and last transmission of PSN
	LastFrame  int
	NAKFrame   int           // the last RNR NAK (RNR retries)
	Interval   time.Duration // the longest time between two transmissions
	Silence    time.Duration // no retry for this long: until Frame, or until the capture ends
	Frame      int           // the packet that showed it; 0: the end of the capture
}

// wait is how long the requester takes at most between two resends.
func (r *retryRec) wait(min time.Duration) time.Duration {
	return max(r.gap, min)
}

// since is the time the next resend is counted from: the RNR NAK that
// asked for it, or the latest transmission.
func (r *retryRec) since() int64 {
	if r.nakFrame != 0 {
		return r.nakT
	}
	return r.lastT
}

// noteRetry counts a resend of psn by side (frame p); prev is the time of
// the previous transmission (zero when not known), first the frame of the
// first one.
func (t *Tracker) noteRetry(p *decode.Packet, s *Session, side uint8, psn decode.PSN, prev int64, first int) {
	st := t.stream(s, side)
	r := &st.retry
	switch {
	case r.active && r.psn == psn:
		r.tries++
	case !r.active || psn.Diff(r.psn) < 0:
		*r = retryRec{active: true, psn: psn, tries: 2, firstFrame: first}
		if i := st.outstandingAt(psn); i >= 0 {
			r.kind = st.out[i].kind
		}
		s.watch |= 1 << side
	default:
		return // a later PSN of the same go-back-N round
	}
	if prev != 0 {
		r.gap = max(r.gap, time.Duration(t.now-prev))
	}
	r.lastFrame, r.lastT, r.nakFrame = p.Frame.Number, t.now, 0
}

// noteRNR counts an RNR NAK p for psn, answering the requests of side.
func (t *Tracker) noteRNR(p *decode.Packet, s *Session, side uint8, psn decode.PSN) {
	st := t.stream(s, side)
	r := &st.retry
	if !r.active || r.psn != psn {
		i := st.outstandingAt(psn)
		if i < 0 {
			return
		}
		o := &st.out[i]
		*r = retryRec{active: true, psn: psn, kind: o.kind, tries: 1, firstFrame: o.firstFrame, lastFrame: o.lastFrame, lastT: o.lastTime}
		if rec := st.original(psn); rec != nil {
			r.lastFrame, r.lastT = rec.lastFrame, rec.lastT
		}
		s.watch |= 1 << side
	}
	r.rnrs++
	r.nakFrame, r.nakT = p.Frame.Number, t.now
}

// settled clears the retry record when a response answers PSNs lo..hi.
func (st *reqStream) settled(lo, hi decode.PSN) {
	if st.retry.active && st.retry.psn.In(lo, hi) {
		st.retry = retryRec{}
	}
}

// watchRetries runs on the packets of a session where a requester
// resends a PSN or likely gave up (s.watch), after the packet p from side
// was tracked.
func (t *Tracker) watchRetries(p *decode.Packet, s *Session, side uint8) {
	now := t.now
	for x := range uint8(2) {
		st := t.stream(s, x)
		r := &st.retry
		switch {
		case x == side:
			// the requester itself: alive
			st.dead = 0
			if r.active && r.lastFrame != p.Frame.Number && time.Duration(now-r.since()) > r.wait(t.opts.DupWindow) {
				// sending something else when the next resend was due:
				// an answer the capture lacks settled the PSN
				st.retry = retryRec{}
			}
		case r.active && r.tries >= giveUpTries && time.Duration(now-r.since()) > 2*r.wait(t.opts.DupWindow):
			t.giveUp(p, s, x)
		}
		if x != side && st.dead != 0 {
			p.Analysis.QPError = st.dead
		}
		if !r.active && st.dead == 0 {
			s.watch &^= 1 << x
		}
	}
}

// giveUp reports that the requester of side likely gave up the PSN it
// resent; p is the packet that shows it (nil: the end of the capture).
func (t *Tracker) giveUp(p *decode.Packet, s *Session, side uint8) {
	st := t.stream(s, side)
	r := st.retry
	st.retry = retryRec{}
	g := GiveUp{Cause: decode.EventRetryExc, PSN: r.psn, Kind: r.kind, Sent: r.tries, RNRNaks: r.rnrs,
		FirstFrame: r.firstFrame, LastFrame: r.lastFrame, NAKFrame: r.nakFrame, Interval: r.gap}
	if r.nakFrame != 0 {
		g.Cause = decode.EventRNRRetryExc
	}
	at := t.now
	if p != nil {
		g.Frame = p.Frame.Number
	}
	g.Silence = time.Duration(at - r.since())
	s.f().GaveUp[side] = g
	st.dead = g.Cause
	s.watch |= 1 << side
	text := g.text(t.opts.DupWindow)
	if p == nil {
		t.emit(g.Cause, 0, at, s.ID, text)
		return
	}
	p.Analysis.Retries = r.tries - 1
	t.event(p, g.Cause, s.ID, text)
}

// text says what the capture shows and how sure the tracker is.
func (g *GiveUp) text(min time.Duration) string {
	what := "PSN " + strconv.Itoa(int(g.PSN))
	if g.Kind != decode.MsgNone {
		what += " (" + g.Kind.String() + ", first sent in frame " + strconv.Itoa(g.FirstFrame) + ")"
	}
	retries := strconv.Itoa(int(g.Sent-1)) + " retries"
	if g.Sent == 2 {
		retries = "1 retry"
	}
	dur := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	var b string
	if g.Cause == decode.EventRNRRetryExc {
		b = "likely RNR retry counter exceeded: " + what + " sent " + strconv.Itoa(int(g.Sent)) + " times, answered by " +
			nof(uint64(g.RNRNaks), "RNR NAK") + " only (" + retries + ", up to " + dur(g.Interval) + " apart); no retry after the RNR NAK in frame " + strconv.Itoa(g.NAKFrame)
	} else {
		b = "likely transport retry counter exceeded: " + what + " sent " + strconv.Itoa(int(g.Sent)) + " times without an answer (" +
			retries + ", up to " + dur(g.Interval) + " apart, the last in frame " + strconv.Itoa(g.LastFrame) + "); no retry after it"
	}
	due := 2 * max(g.Interval, min)
	switch {
	case g.Frame != 0:
		b += " for " + dur(g.Silence) + ", until frame " + strconv.Itoa(g.Frame) + " (more than twice the time between its retries)"
	case g.Silence > due:
		b += " in the " + dur(g.Silence) + " until the capture ends (more than twice the time between its retries)"
	default:
		b += " in the " + dur(g.Silence) + " until the capture ends, which may have cut it short of the next one"
	}
	return b + ": that QP is likely in the error state from there on"
}
