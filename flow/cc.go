package flow

import (
	"slices"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Congestion control (DCQCN) per flow. A switch marks a packet ECN CE
// (IP ECN 3); the receiver (the notification point) answers with a CNP
// (BTH opcode 0x81) to the sender's QP; the sender (the reaction point)
// cuts its rate. A flow is one side's sends in a session: the CNP that
// answers it travels the other way, to the QP of the marked flow's sender.
//
// The sender's rate is estimated from the bytes (frame lengths) of the
// flow's packets at the capture point over a window W (Options.RateWindow,
// 100 µs): before a CNP, as a sliding-window rate limiter does, from two
// consecutive fixed windows (bytes of the previous one in proportion to
// the part of it still inside the last W, plus the current one); after
// it, exactly, from the bytes of the window [CNP, CNP+W). CNPs within a
// window join it. A window whose rate after is at least 95% of the rate
// before is no_rate_reduction.

// rateEst is the two-window rate estimate of one flow.
type rateEst struct {
	start     int64 // the current window [start, start+W)
	cur, prev uint64
}

func (r *rateEst) roll(now, w int64) {
	if r.start == 0 {
		r.start = now
		return
	}
	if k := (now - r.start) / w; k > 0 {
		r.prev = 0
		if k == 1 {
			r.prev = r.cur
		}
		r.cur = 0
		r.start += k * w
	}
}

func (r *rateEst) add(now, w int64, n uint64) {
	r.roll(now, w)
	r.cur += n
}

// bps returns the rate over [now-W, now) in bits/s.
func (r *rateEst) bps(now, w int64) uint64 {
	r.roll(now, w)
	frac := float64(now-r.start) / float64(w)
	bytes := float64(r.prev)*(1-frac) + float64(r.cur)
	return uint64(bytes * 8 * float64(time.Second) / float64(w))
}

// Congestion is the congestion control of one session, by the side whose
// sends were marked (and whose QP the CNPs went to).
type Congestion struct {
	Dir [2]CCDir
}

// CCDir is the congestion control of one flow.
type CCDir struct {
	CE, CNPs          uint64
	CEWithoutCNP      uint64
	CNPWithoutCE      uint64
	CNPDelay          Latency // CE mark → CNP
	FirstCNP, LastCNP time.Time
	Reactions         uint64  // windows after a CNP with a verdict
	RateCut           uint64  // those where the sender slowed down
	NoRateReduction   uint64  // those where it did not
	CutRatio          float64 // of the cut ones: rate after / rate before, summed

	// in flight
	pend        bool // a CE mark waits for its CNP
	pendFrame   uint32
	pendT       int64
	lastCE      int64
	hasCE       bool
	lastCNP     int64
	react       bool // a window after a CNP is open
	reactFrame  uint32
	reactT      int64
	reactBefore uint64
	reactBytes  uint64
	rate        rateEst // UD flows (an RC session keeps its rates in its live state)
}

// CNPRate returns CNPs per second, from the first CNP to the last (0
// with fewer than two).
func (d *CCDir) CNPRate() float64 {
	if d.CNPs < 2 || !d.LastCNP.After(d.FirstCNP) {
		return 0
	}
	return float64(d.CNPs-1) / d.LastCNP.Sub(d.FirstCNP).Seconds()
}

// Congestion returns the session's congestion control, nil when it saw
// no CE mark and no CNP.
func (s *Session) Congestion() *Congestion {
	if s.x == nil {
		return nil
	}
	return s.x.cc
}

func (t *Tracker) cc(s *Session) *Congestion {
	f := s.f()
	if f.cc == nil {
		f.cc = new(Congestion)
		if t.opts.MaxSessions > 0 && len(t.ccIDs) >= t.ccPrune {
			// evicted sessions' IDs go, and merged ones' (their state
			// moved), or they would pile up; the next pruning waits for
			// as many again
			t.ccIDs = slices.DeleteFunc(t.ccIDs, func(id uint32) bool {
				s := t.sessions.at(int(id) - 1)
				return s == nil || s.MergedInto() != 0
			})
			t.ccPrune = 2*len(t.ccIDs) + 1024
		}
		t.ccIDs = append(t.ccIDs, s.ID)
	}
	return f.cc
}

// rate returns the rate estimate of side's sends in s, nil when there is
// none: an RC session idle long enough to have released its live state,
// or a UD flow (which has no live state) before its first CE mark or CNP.
func (t *Tracker) rate(s *Session, side uint8) *rateEst {
	if s.live != nil {
		return &s.live.rate[side]
	}
	if c := s.Congestion(); c != nil && s.Learned == decode.PairingUD {
		return &c.Dir[side].rate
	}
	return nil
}

// ccSent counts a packet of side's flow in s (not a CNP): its bytes in
// the rate, a CE mark, and what its time ends (a CE mark's wait for a
// CNP, the window after a CNP).
func (t *Tracker) ccSent(p *decode.Packet, s *Session, side uint8) {
	f := t.fab
	now := t.now
	n := uint64(p.Frame.Len)
	ce := false
	if ecn, ok := p.ECN(); ok && ecn == 3 {
		ce = true
		t.cc(s)
	}
	if r := t.rate(s, side); r != nil {
		r.add(now, f.window, n)
	}
	c := s.Congestion()
	if c == nil {
		return
	}
	for i := range c.Dir {
		t.ccExpire(p, s, &c.Dir[i])
	}
	d := &c.Dir[side]
	if d.react {
		if now-d.reactT >= f.window {
			t.ccReaction(p, s, d)
		} else {
			d.reactBytes += n
		}
	}
	if ce {
		d.CE++
		f.stats.CE++
		f.stats.CESeries.add(f.start, now, 1)
		if !d.pend {
			d.pend, d.pendFrame, d.pendT = true, uint32(p.Frame.Number), now
		}
		d.lastCE, d.hasCE = now, true
	}
}

// ccExpire reports d's CE mark waiting for a CNP when its time is up
// (on p; at the end of the capture when p is nil).
func (t *Tracker) ccExpire(p *decode.Packet, s *Session, d *CCDir) {
	if !d.pend || t.now-d.pendT <= t.fab.timeout {
		return
	}
	d.pend = false
	d.CEWithoutCNP++
	t.fab.stats.CEWithoutCNP++
	text := "no CNP within " + time.Duration(t.fab.timeout).String() + " of the CE mark in frame " + strconv.Itoa(int(d.pendFrame))
	if p == nil {
		t.emit(decode.EventCEWithoutCNP, int(d.pendFrame), d.pendT, s.ID, text+" (by the end of the capture)")
		return
	}
	p.Analysis.Fabric.CEFrame = d.pendFrame
	t.event(p, decode.EventCEWithoutCNP, s.ID, text)
}

// ccReaction closes the window after a CNP of d: the sender's rate after
// it against the rate before (on p; at the end when p is nil).
func (t *Tracker) ccReaction(p *decode.Packet, s *Session, d *CCDir) {
	d.react = false
	before := d.reactBefore
	after := uint64(float64(d.reactBytes) * 8 * float64(time.Second) / float64(t.fab.window))
	if p != nil {
		x := &p.Analysis.Fabric
		x.HasReaction, x.CNPFrame, x.RateAfter = true, d.reactFrame, after
		if !x.HasRate {
			x.HasRate, x.RateBefore = true, before
		}
	}
	if before == 0 {
		return // the sender was idle before the CNP: nothing to cut
	}
	d.Reactions++
	t.fab.stats.Reactions++
	if after*100 < before*rateKeptPercent {
		d.RateCut++
		t.fab.stats.RateCut++
		d.CutRatio += float64(after) / float64(before)
		return
	}
	d.NoRateReduction++
	t.fab.stats.NoRateReduction++
	text := "the sender kept " + rateString(after) + " after the CNP in frame " + strconv.Itoa(int(d.reactFrame)) + " (" + rateString(before) + " before)"
	if p == nil {
		t.emit(decode.EventNoRateCut, int(d.reactFrame), d.reactT, s.ID, text)
		return
	}
	t.event(p, decode.EventNoRateCut, s.ID, text)
}

// AppendBitRate appends a bit rate as the reports write it: "2.50 Gbit/s",
// "640.00 kbit/s", "12 bit/s". The expert texts here and the printer's
// tables use it.
func AppendBitRate(dst []byte, bps float64) []byte {
	v, prec, unit := bitRateUnit(bps)
	return append(appendFixed(dst, v, prec), unit...)
}

func rateString(bps uint64) string { return string(AppendBitRate(nil, float64(bps))) }

// ccCNP analyzes a CNP: h is the direction it travels (found: ok), from
// the notification point to the sender of the marked flow.
func (t *Tracker) ccCNP(p *decode.Packet, h half, ok bool, src, dst addr16) {
	f := t.fab
	now := t.now
	f.stats.CNPs++
	f.stats.CNPSeries.add(f.start, now, 1)
	s, side := h.s, 1-h.side
	if !ok {
		if s, ok = f.udSender[udSenderKey{dst, src, p.BTH.DestQP}]; !ok {
			s, ok = t.ucSenderOf(dst, src)
		}
		if !ok {
			f.stats.CNPUnknownQP++
			t.event(p, decode.EventCNPUnknownQP, 0, "CNP to QP "+hex24(p.BTH.DestQP)+", which no flow of the capture sends from")
			return
		}
		side = 0
		t.annotate(p, s, 1)
		s.f().CNPs++
	}
	c := t.cc(s)
	for i := range c.Dir {
		t.ccExpire(p, s, &c.Dir[i])
	}
	d := &c.Dir[side]
	x := &p.Analysis.Fabric
	d.CNPs++
	if d.pend {
		d.pend = false
		x.CEFrame, x.CNPDelay, x.HasDelay = d.pendFrame, time.Duration(now-d.pendT), true
		d.CNPDelay.Add(x.CNPDelay)
		f.stats.CNPDelay.Add(x.CNPDelay)
	}
	if !d.hasCE || now-d.lastCE > f.timeout {
		d.CNPWithoutCE++
		f.stats.CNPWithoutCE++
		t.event(p, decode.EventCNPWithoutCE, s.ID, "CNP to QP "+hex24(p.BTH.DestQP)+" with no CE mark of its flow in the "+time.Duration(f.timeout).String()+" before")
	}
	at := time.Unix(0, now)
	if d.FirstCNP.IsZero() {
		d.FirstCNP = at
	} else {
		x.CNPGap, x.HasGap = time.Duration(now-d.lastCNP), true
	}
	d.LastCNP, d.lastCNP = at, now
	if x.HasGap {
		x.CNPRate = uint32(min(d.CNPRate(), 1<<32-1))
	}
	var before uint64
	if r := t.rate(s, side); r != nil {
		before = r.bps(now, f.window)
	}
	x.RateBefore, x.HasRate = before, true
	if d.react && now-d.reactT >= f.window {
		t.ccReaction(p, s, d)
	}
	if !d.react {
		d.react, d.reactFrame, d.reactT, d.reactBefore, d.reactBytes = true, uint32(p.Frame.Number), now, before, 0
	}
}

// ccMerge moves the congestion state of a provisional session (its side
// A) into s's side B.
func (t *Tracker) ccMerge(prov, s *Session) {
	if prov.live != nil && s.live != nil {
		s.live.rate[1] = prov.live.rate[0]
	}
	pc := prov.Congestion()
	if pc == nil {
		return
	}
	c := t.cc(s)
	c.Dir[1] = pc.Dir[0]
	prov.x.cc = nil
}

// ccEnd reports, at the end of the capture, the CE marks whose CNP was
// due and the windows after a CNP that are over.
func (t *Tracker) ccEnd() {
	// only the sessions that had a congestion state (ccIDs), in session
	// order: the others, a million idle ones at times, are not read
	for s := range t.sessionsOf(t.ccIDs) {
		t.ccClose(s)
	}
}

// ccClose reports what s's congestion state still holds (a CE mark with
// no CNP yet, a rate cut to judge), at the end of the capture or when s is
// evicted.
func (t *Tracker) ccClose(s *Session) {
	c := s.Congestion()
	if c == nil {
		return
	}
	for i := range c.Dir {
		d := &c.Dir[i]
		t.ccExpire(nil, s, d)
		if d.react && t.now-d.reactT >= t.fab.window {
			t.ccReaction(nil, s, d)
		}
	}
}

// ccNewUC indexes a new UC session by its addresses (ucSenderOf).
func (t *Tracker) ccNewUC(s *Session, key halfKey) {
	if s.Transport == decode.TransportUC {
		pk := pairKey{key.src, key.dst}
		t.fab.ucSender[pk] = append(t.fab.ucSender[pk], s)
	}
}

// ucSenderOf returns the UC session from src to dst whose sender's QP a
// CNP from dst to src may name: one whose sender QP the capture never
// showed (no CM) and that was marked CE within the CNP timeout (the most
// recently marked). Without such a mark the CNP stays cnp_unknown_qp.
func (t *Tracker) ucSenderOf(src, dst addr16) (*Session, bool) {
	var best *Session
	var bestCE int64
	for _, s := range t.fab.ucSender[pairKey{src, dst}] {
		c := s.Congestion()
		if s.A.QPNKnown || s.MergedInto() != 0 || c == nil || !c.Dir[0].hasCE || t.now-c.Dir[0].lastCE > t.fab.timeout {
			continue
		}
		if ce := c.Dir[0].lastCE; best == nil || ce > bestCE {
			best, bestCE = s, ce
		}
	}
	return best, best != nil
}

// ccEvict reports what an evicted session's congestion state still holds
// (ccClose) and forgets what the fabric analysis keeps of it.
func (t *Tracker) ccEvict(s *Session) {
	t.ccClose(s)
	if s.Transport == decode.TransportUC {
		k := s.key(0)
		pk := pairKey{k.src, k.dst}
		l := t.fab.ucSender[pk]
		if i := slices.Index(l, s); i >= 0 {
			l = slices.Delete(l, i, i+1)
		}
		if len(l) == 0 {
			delete(t.fab.ucSender, pk)
		} else {
			t.fab.ucSender[pk] = l
		}
	}
	if s.Learned == decode.PairingUD && s.A.QPNKnown {
		k := udSenderKey{s.A.key(), s.B.key(), s.A.QPN}
		if t.fab.udSender[k] == s {
			delete(t.fab.udSender, k)
		}
	}
}
