package replay

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// session is a Session with the replay's working state.
type session struct {
	*Session
	q        ring     // model responses waiting for their captured counterparts
	drops    dropRing // the last requests the model dropped
	acks     ackRing  // what ACKs of the last executed SEND and WRITE packets carry
	overflow bool     // the session that takes QPs beyond maxSessions
	// lastPSN is the latest PSN of the requests fed (lastFrame its
	// frame; hasLast once there is one): an acknowledgement of a later
	// PSN acknowledges what the responder has not received.
	lastPSN   decode.PSN
	lastFrame int
	hasLast   bool
}

// name returns the session's name.
func (s *session) name() string {
	var b strings.Builder
	switch {
	case s.overflow:
		return "other QPs (more than " + strconv.Itoa(maxSessions) + " sessions)"
	case s.HasQPN:
		b.WriteString("QP " + hex24(s.QPN))
	default:
		b.WriteString("QP ?")
	}
	switch {
	case s.InMPT && s.Type == decode.TransportUD:
		b.WriteString(" (UD)")
	case s.HasPeerQPN || s.PeerAddr.IsValid():
		b.WriteString(" ← ")
		if s.PeerAddr.IsValid() {
			b.WriteString(s.PeerAddr.String() + " ")
		}
		if s.HasPeerQPN {
			b.WriteString("QP " + hex24(s.PeerQPN))
		} else {
			b.WriteString("QP ?")
		}
	case s.InMPT:
		b.WriteString(" (not connected)")
	}
	if s.HasQPN && !s.InMPT {
		b.WriteString(" (not in the MPT)")
	}
	return b.String()
}

// pending is a model response waiting for its captured counterpart: an
// hca.Response with its payload copied (the model reuses its own).
type pending struct {
	frame       int
	opcode      decode.Opcode
	psn         decode.PSN
	msn         uint32
	hasAETH     bool
	syndrome    uint8
	mask        uint8
	coalescable bool
	inMessage   bool // an ACK of a FIRST or MIDDLE: the MSN is not checked
	duplicate   bool
	atomicKnown bool
	atomicSoft  bool // the original value is only learned (hca.Response.AtomicLearned)
	atomicOrig  uint64
	why         string
	verdict     hca.Verdict // the request's failed MPT check, if any
	payload     []byte
	known       []bool // which payload bytes the model knows; empty when allKnown
	allKnown    bool
	learned     []bool // which known bytes are only learned (hca.Response.Learned); empty when none or all
	allLearned  bool   // every byte is only learned
	hasPayload  bool
	// learnable: the model did not know all of the response (READ data
	// or an ATOMIC's original value), so the captured one can teach it
	// (Model.Observe).
	learnable bool
	// cost is what the entry counts against Options.MaxPendingBytes.
	cost int
	// A long READ's responses, one entry for all (hca.ReadSeries): the
	// fields above describe response next of the series, whose first has
	// PSN firstPSN; pieceData and pieceKnown hold the pieces' bytes.
	isSeries     bool
	series       hca.ReadSeries
	next         uint32
	firstPSN     decode.PSN
	firstSyn     uint8
	pieceData    []byte
	pieceKnown   []bool
	pieceLearned []bool
}

// cost is what a model response counts against Options.MaxPendingBytes:
// its data, or the known data of a series.
func cost(m *hca.Response) int {
	if m.Series != nil {
		return m.Series.Bytes()
	}
	return len(m.Payload)
}

// setSeries makes e the entry of the series m carries, at its first
// response, copying the pieces the model knows.
func (e *pending) setSeries(m *hca.Response) {
	src := m.Series
	e.isSeries, e.next, e.firstPSN, e.firstSyn = true, 0, m.PSN, m.Syndrome
	e.series = hca.ReadSeries{Count: src.Count, MTU: src.MTU, Length: src.Length, Transport: src.Transport, HasData: src.HasData, Pieces: e.series.Pieces[:0]}
	e.pieceData, e.pieceKnown, e.pieceLearned = e.pieceData[:0], e.pieceKnown[:0], e.pieceLearned[:0]
	for _, p := range src.Pieces {
		e.pieceData = append(e.pieceData, p.Data...)
		e.pieceKnown = append(e.pieceKnown, p.Known...)
		if p.Learned != nil {
			e.pieceLearned = append(e.pieceLearned, p.Learned...)
		}
	}
	off, loff := 0, 0
	for _, p := range src.Pieces {
		n := len(p.Data)
		piece := hca.ReadPiece{Off: p.Off, Data: e.pieceData[off : off+n], Known: e.pieceKnown[off : off+n]}
		if p.Learned != nil {
			piece.Learned = e.pieceLearned[loff : loff+n]
			loff += n
		}
		e.series.Pieces = append(e.series.Pieces, piece)
		off += n
	}
	e.load()
}

// load fills e's response fields with response e.next of its series.
func (e *pending) load() {
	s := &e.series
	var off, n uint64
	e.opcode, e.hasAETH, off, n = s.Response(e.next)
	e.psn = e.firstPSN.Add(int(e.next))
	e.syndrome = 0
	if e.hasAETH {
		e.syndrome = e.firstSyn
	}
	e.hasPayload = s.HasData
	e.payload = append(e.payload[:0], make([]byte, n)...)
	e.known = append(e.known[:0], make([]bool, n)...)
	e.allKnown = s.Fill(off, e.payload, e.known) == int(n)
	if e.allKnown {
		e.known = e.known[:0]
	}
	e.learned, e.allLearned = e.learned[:0], false
	if len(e.pieceLearned) > 0 {
		e.learned = append(e.learned, make([]bool, n)...)
		if !s.FillLearned(off, e.learned) {
			e.learned = e.learned[:0]
		}
	}
	e.learnable = !e.hasPayload || !e.allKnown
}

// last reports whether e is a single response or the last of its series.
func (e *pending) last() bool { return !e.isSeries || e.next+1 >= e.series.Count }

// lastPSN is the PSN of e's last response.
func (e *pending) lastPSN() decode.PSN {
	if !e.isSeries {
		return e.psn
	}
	return e.firstPSN.Add(int(e.series.Count) - 1)
}

func (e *pending) set(m *hca.Response, v hca.Verdict) {
	e.frame, e.opcode, e.psn, e.msn = m.Frame, m.Opcode, m.PSN, m.MSN
	e.hasAETH, e.syndrome, e.mask = m.HasAETH, m.Syndrome, m.SyndromeMask
	if e.mask == 0 {
		e.mask = 0xFF
	}
	e.coalescable, e.inMessage, e.duplicate = m.Coalescable, m.InMessage, m.Duplicate
	e.atomicKnown, e.atomicSoft, e.atomicOrig = m.AtomicKnown, m.AtomicLearned, m.AtomicOrig
	e.why, e.verdict = m.Why, v
	e.cost = cost(m)
	if m.Series != nil {
		e.setSeries(m)
		return
	}
	e.isSeries = false
	e.hasPayload = m.Payload != nil
	e.payload = append(e.payload[:0], m.Payload...)
	// Usually the model knows every byte: then the mask is not copied. A
	// model may give data without a mask: all of it is known.
	known := m.Known[:min(len(m.Known), len(m.Payload))]
	e.allKnown = allTrue(known)
	e.known = e.known[:0]
	if !e.allKnown {
		e.known = append(e.known, known...)
		for len(e.known) < len(e.payload) {
			e.known = append(e.known, true)
		}
	}
	e.learned, e.allLearned = e.learned[:0], false
	switch learned := m.Learned[:min(len(m.Learned), len(m.Payload))]; {
	case len(learned) == 0:
	case m.AllLearned, len(learned) == len(m.Payload) && allTrue(learned):
		e.allLearned = true // memory read again: no mask to copy
	default:
		e.learned = append(e.learned, learned...)
		for len(e.learned) < len(e.payload) {
			e.learned = append(e.learned, false)
		}
	}
	switch {
	case e.opcode.Is(decode.PropAtomicAck):
		e.learnable = !e.atomicKnown || e.atomicSoft
	case e.opcode.Is(decode.PropReadResp):
		e.learnable = !e.hasPayload || !e.allKnown
	default:
		e.learnable = false
	}
}

// knows reports whether the model knows payload byte i.
func (e *pending) knows(i int) bool { return e.allKnown || e.known[i] }

// soft reports whether the model only learned payload byte i from an
// earlier response: what it expects there, not what a request wrote.
func (e *pending) soft(i int) bool { return e.allLearned || len(e.learned) > 0 && e.learned[i] }

// ring is a FIFO of pending responses. Slots keep their payload buffers
// when reused, so a steady stream allocates nothing.
type ring struct {
	buf     []pending
	head, n int
}

func (r *ring) at(i int) *pending { return &r.buf[(r.head+i)%len(r.buf)] }

func (r *ring) front() *pending { return r.at(0) }

func (r *ring) pop() {
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

// push returns the slot at the back, growing the ring when full.
func (r *ring) push() *pending {
	if r.n == len(r.buf) {
		nb := make([]pending, max(8, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = *r.at(i)
		}
		// Slots past the old contents take over nothing; the old ones'
		// buffers move with them.
		r.buf, r.head = nb, 0
	}
	e := r.at(r.n)
	r.n++
	return e
}

// find returns the index of the oldest pending response with the PSN, or
// -1.
func (r *ring) find(psn decode.PSN) int {
	for i := 0; i < r.n; i++ {
		e := r.at(i)
		if e.psn == psn || e.isSeries && psn.Diff(e.psn) > 0 && psn.Diff(e.lastPSN()) <= 0 {
			return i
		}
	}
	return -1
}

// dropRing remembers the last requests the model dropped, to explain an
// extra response.
type dropRing struct {
	e [8]struct {
		psn   decode.PSN
		frame int
		why   hca.Drop
	}
	n int
}

func (d *dropRing) add(psn decode.PSN, frame int, why hca.Drop) {
	e := &d.e[d.n%len(d.e)]
	e.psn, e.frame, e.why = psn, frame, why
	d.n++
}

// find returns the latest dropped request with the PSN.
func (d *dropRing) find(psn decode.PSN) (frame int, why hca.Drop, ok bool) {
	for i := 0; i < min(d.n, len(d.e)); i++ {
		e := &d.e[(d.n-1-i)%len(d.e)]
		if e.psn == psn {
			return e.frame, e.why, true
		}
	}
	return 0, 0, false
}

// ackRing remembers what an ACK of each of the last RC and XRC SEND and
// WRITE packets the model executed carries (hca.Result.Ack), with the
// request's frame: the responder may acknowledge any of them unasked.
type ackRing struct {
	e []ackEntry // ackRingSize entries, allocated with the first
	n int        // entries added
}

type ackEntry struct {
	pt    hca.AckPoint
	frame int
}

// ackRingSize is how many executed packets back an unsolicited ACK's MSN
// is checked; an ACK of an older one is still legal, its MSN unchecked.
const ackRingSize = 512

func (a *ackRing) add(pt hca.AckPoint, frame int) {
	if a.e == nil {
		a.e = make([]ackEntry, ackRingSize)
	}
	a.e[a.n%ackRingSize] = ackEntry{pt, frame}
	a.n++
}

// find returns the latest entry with the PSN (ok), or says whether the
// PSN lies before the oldest entry kept when older ones were forgotten: a
// packet executed too long ago to be remembered.
func (a *ackRing) find(psn decode.PSN) (e ackEntry, ok, forgotten bool) {
	k := min(a.n, ackRingSize)
	for i := 1; i <= k; i++ {
		if x := &a.e[(a.n-i)%ackRingSize]; x.pt.PSN == psn {
			return *x, true, false
		}
	}
	if a.n > ackRingSize {
		d := psn.Diff(a.e[a.n%ackRingSize].pt.PSN)
		forgotten = d < 0 && d > -1<<20
	}
	return ackEntry{}, false, forgotten
}

// align pairs captured response p with a waiting model response of s.
func (r *Replayer) align(s *session, p *decode.Packet) {
	psn := p.BTH.PSN
	i := s.q.find(psn)
	if i < 0 {
		if r.unasked(s, p) {
			return
		}
		// Acknowledgements the responder coalesced into this later one;
		// an ACK of a PSN not received yet covers nothing.
		ahead := r.notReceived(s, p)
		for ahead == "" && s.q.n > 0 && s.q.front().coalescable && psn.Diff(s.q.front().psn) > 0 {
			r.skip(s, s.q.front(), p)
		}
		if s.q.n == 0 || s.q.front().opcode != p.BTH.Opcode {
			r.extra(s, p, ahead)
			r.m.Observe(p)
			return
		}
		i = 0 // the same answer to the same request, with another PSN
	}
	for ; i > 0; i-- {
		for e := s.q.front(); !e.last(); e = s.q.front() {
			r.skip(s, e, p) // the rest of a series
		}
		r.skip(s, s.q.front(), p)
	}
	// Within a series: the responses before this one are missing.
	for e := s.q.front(); e.isSeries && e.psn != psn && psn.Diff(e.psn) > 0; e = s.q.front() {
		r.skip(s, e, p)
	}
	s.Compared++
	r.rep.Compared++
	e := s.q.front()
	n, changed := r.rep.DivergenceCount, r.rep.NotesByKind[NoteMemoryChanged]
	r.compare(s, e, p)
	// The model learns from the capture what it did not know, or what it
	// only expected and the responder's memory no longer holds. A response
	// it predicted in full and that matched has nothing to teach it.
	if e.learnable || r.rep.DivergenceCount != n || r.rep.NotesByKind[NoteMemoryChanged] != changed {
		r.m.Observe(p)
	}
	r.pop(s)
}

// skip pops model response e, which the responder did not send before
// captured response p: an ACK is covered by p (coalesced, legal), anything
// else is missing (responders answer in order).
func (r *Replayer) skip(s *session, e *pending, p *decode.Packet) {
	if e.coalescable {
		s.Coalesced++
		if n := r.note(s, NoteCoalescedACK); n != nil {
			n.PSN, n.RequestFrame, n.ResponseFrame = e.psn, e.frame, p.Frame.Number
			n.Expected, n.Actual = e.describe(), describePacket(p)
			n.Message = "frame " + itoa(e.frame) + ": coalesced ACK: the model acknowledges PSN " + itoa(int(e.psn)) +
				" (AckReq); the responder's " + p.BTH.Opcode.String() + " PSN " + itoa(int(p.BTH.PSN)) + " in frame " +
				itoa(p.Frame.Number) + " covers it — legal: one acknowledgement may cover several requests"
		}
	} else {
		r.missing(s, e, "the responder answered PSN "+itoa(int(p.BTH.PSN))+" in frame "+itoa(p.Frame.Number)+" without it")
	}
	r.pop(s)
}

// unasked takes a captured ACK or NAK that no waiting model response has
// the PSN of, when the PSN is a SEND or WRITE packet the model executed:
// the responder may acknowledge any of those without AckReq, and one ACK
// covers the waiting ACKs before it. What it says is checked against
// what the model knows of the packet (hca.Result.Ack): an ACK, not a NAK,
// and once the packet's message is complete, its MSN. It reports whether
// p was such a response.
func (r *Replayer) unasked(s *session, p *decode.Packet) bool {
	if !p.BTH.Opcode.Is(decode.PropAck) || p.Has&decode.HdrAETH == 0 || s.acks.n == 0 {
		return false
	}
	psn := p.BTH.PSN
	a, ok, forgotten := s.acks.find(psn)
	if !ok && !forgotten {
		return false
	}
	for s.q.n > 0 && psn.Diff(s.q.front().lastPSN()) > 0 {
		r.skip(s, s.q.front(), p)
	}
	s.Compared++
	r.rep.Compared++
	syn := p.AETH.Syndrome
	if k := synKind(true, syn); k != decode.AETHAck {
		if d := r.add(s, KindSyndrome); d != nil {
			d.PSN, d.RequestFrame, d.ResponseFrame = psn, a.frame, p.Frame.Number
			d.Expected, d.Actual = "ACK (executed)", synText(syn, "")
			d.Message = "frame " + itoa(a.frame) + " → " + itoa(p.Frame.Number) + ": syndrome: the model executed PSN " + itoa(int(psn)) +
				", which an ACK may acknowledge; captured " + p.BTH.Opcode.String() + " " + d.Actual + " — " + kindWhy(decode.AETHAck, k, hca.VerdictNone)
		}
		r.m.Observe(p)
		return true
	}
	s.Unsolicited++
	msn := p.AETH.MSN
	if n := r.note(s, NoteUnsolicitedACK); n != nil {
		n.PSN, n.RequestFrame, n.ResponseFrame = psn, a.frame, p.Frame.Number
		n.Actual = describePacket(p)
		n.Message = "frame " + itoa(p.Frame.Number) + ": unsolicited ACK: the responder acknowledged PSN " + itoa(int(psn))
		if ok {
			n.Expected = "MSN " + itoa(int(a.pt.MSN))
			n.Message = "frame " + itoa(a.frame) + " → " + itoa(p.Frame.Number) + ": unsolicited ACK: the responder acknowledged PSN " + itoa(int(psn)) +
				" (MSN " + itoa(int(msn)) + "), which did not ask for an ACK — legal: a responder may acknowledge any request it executed"
		} else {
			n.Message += ", executed too long before for the replay to check its MSN — legal: a responder may acknowledge any request it executed"
		}
	}
	if ok && msn != a.pt.MSN {
		if a.pt.MsgDone {
			if d := r.add(s, KindMSN); d != nil {
				d.PSN, d.RequestFrame, d.ResponseFrame = psn, a.frame, p.Frame.Number
				d.Expected, d.Actual = itoa(int(a.pt.MSN)), itoa(int(msn))
				d.Message = "frame " + itoa(a.frame) + " → " + itoa(p.Frame.Number) + ": msn: model MSN " + d.Expected + ", captured MSN " + d.Actual +
					" (" + p.BTH.Opcode.String() + " PSN " + itoa(int(psn)) + ", unsolicited, ending a message)"
			}
		} else {
			r.msnInMessage(s, psn, a.frame, a.pt.MSN, p)
		}
	}
	return true
}

// msnInMessage notes an ACK of a packet whose message is not complete
// with another MSN than the messages completed before it.
func (r *Replayer) msnInMessage(s *session, psn decode.PSN, frame int, model uint32, p *decode.Packet) {
	n := r.note(s, NoteMSNInMessage)
	if n == nil {
		return
	}
	n.PSN, n.RequestFrame, n.ResponseFrame = psn, frame, p.Frame.Number
	n.Expected, n.Actual = itoa(int(model)), itoa(int(p.AETH.MSN))
	n.Message = "frame " + itoa(frame) + " → " + itoa(p.Frame.Number) + ": MSN in a message: model MSN " + n.Expected + ", captured MSN " + n.Actual +
		" (" + p.BTH.Opcode.String() + " PSN " + itoa(int(psn)) + " of a message not yet complete; its MSN is checked once the message is)"
}

// notReceived explains a captured ACK of a PSN after every request the
// capture has shown the responder: "" when p is not one.
func (r *Replayer) notReceived(s *session, p *decode.Packet) string {
	if !p.BTH.Opcode.Is(decode.PropAck) || p.Has&decode.HdrAETH == 0 || p.AETH.Kind() != decode.AETHAck {
		return ""
	}
	if !s.hasLast {
		return "it acknowledges PSN " + itoa(int(p.BTH.PSN)) + ", and the responder has received no request on this QP"
	}
	if p.BTH.PSN.Diff(s.lastPSN) <= 0 {
		return ""
	}
	return "it acknowledges PSN " + itoa(int(p.BTH.PSN)) + ", which the responder has not received (the latest request, frame " +
		itoa(s.lastFrame) + ", has PSN " + itoa(int(s.lastPSN)) + ")"
}

// note counts a note of s and returns the record to fill in, or nil when
// the report keeps no more in detail.
func (r *Replayer) note(s *session, k NoteKind) *Note {
	s.Notes++
	r.rep.NoteCount++
	r.rep.NotesByKind[k]++
	if r.opt.MaxNotes > 0 && len(r.rep.NoteList) >= r.opt.MaxNotes {
		r.rep.NotesOmitted++
		return nil
	}
	r.rep.NoteList = append(r.rep.NoteList, Note{Kind: k, Finding: s.finding()})
	return &r.rep.NoteList[len(r.rep.NoteList)-1]
}

// add counts a divergence of s and returns the record to fill in, or nil
// when the report keeps no more in detail.
func (r *Replayer) add(s *session, k Kind) *Divergence {
	s.Divergences++
	r.rep.DivergenceCount++
	r.rep.ByKind[k]++
	if r.opt.MaxDivergences > 0 && len(r.rep.Divergences) >= r.opt.MaxDivergences {
		r.rep.DivergencesOmitted++
		return nil
	}
	r.rep.Divergences = append(r.rep.Divergences, Divergence{Kind: k, Finding: s.finding()})
	return &r.rep.Divergences[len(r.rep.Divergences)-1]
}

// missing reports model response e as never sent by the responder.
func (r *Replayer) missing(s *session, e *pending, why string) {
	d := r.add(s, KindMissingResponse)
	if d == nil {
		return
	}
	d.PSN, d.RequestFrame = e.psn, e.frame
	d.Expected = e.describe()
	d.Message = "frame " + strconv.Itoa(e.frame) + ": missing response: model " + d.Expected + ", captured none — " + why
}

// extra reports captured response p as one the model does not send.
func (r *Replayer) extra(s *session, p *decode.Packet, why string) {
	d := r.add(s, KindExtraResponse)
	if d == nil {
		return
	}
	d.PSN, d.ResponseFrame = p.BTH.PSN, p.Frame.Number
	d.Actual = describePacket(p)
	if why == "" {
		if f, drop, ok := s.drops.find(p.BTH.PSN); ok {
			d.RequestFrame = f
			why = "the model dropped the request in frame " + strconv.Itoa(f) + " (" + drop.String() + ")"
		} else {
			why = "the model sends no response with PSN " + strconv.Itoa(int(p.BTH.PSN))
		}
	}
	d.Message = "frame " + strconv.Itoa(p.Frame.Number) + ": extra response: model none, captured " + d.Actual + " — " + why
}

// pairMsg starts the message of a divergence between a paired model and
// captured response: "frame 7 → 8: syndrome: ".
func pairMsg(e *pending, p *decode.Packet, k Kind) string {
	return "frame " + strconv.Itoa(e.frame) + " → " + strconv.Itoa(p.Frame.Number) + ": " + k.String() + ": "
}

func (r *Replayer) pairDiv(s *session, k Kind, e *pending, p *decode.Packet) *Divergence {
	d := r.add(s, k)
	if d != nil {
		d.PSN, d.RequestFrame, d.ResponseFrame = e.psn, e.frame, p.Frame.Number
	}
	return d
}

// compare reports every way captured response p differs from model
// response e.
func (r *Replayer) compare(s *session, e *pending, p *decode.Packet) {
	hasAETH := p.Has&decode.HdrAETH != 0
	var syn uint8
	if hasAETH {
		syn = p.AETH.Syndrome
	}
	// ACK versus NAK: the one difference that matters; the opcode, MSN and
	// data differ as a consequence.
	mk, ck := synKind(e.hasAETH, e.syndrome), synKind(hasAETH, syn)
	if mk != ck {
		if d := r.pairDiv(s, KindSyndrome, e, p); d != nil {
			d.Expected, d.Actual = synText(e.syndrome, e.why), synText(syn, "")
			if e.opcode != p.BTH.Opcode {
				// A NAK instead of a READ response: say both opcodes.
				d.Expected, d.Actual = e.opcode.String()+" "+d.Expected, p.BTH.Opcode.String()+" "+d.Actual
				if !e.hasAETH {
					d.Expected = e.opcode.String()
				}
				if !hasAETH {
					d.Actual = p.BTH.Opcode.String()
				}
			}
			d.Message = pairMsg(e, p, KindSyndrome) + "model " + d.Expected + ", captured " + d.Actual + " — " + kindWhy(mk, ck, e.verdict)
		}
		return
	}
	if e.opcode != p.BTH.Opcode {
		if d := r.pairDiv(s, KindOpcode, e, p); d != nil {
			d.Expected, d.Actual = e.opcode.String(), p.BTH.Opcode.String()
			d.Message = pairMsg(e, p, KindOpcode) + "model " + d.Expected + ", captured " + d.Actual + " (PSN " + strconv.Itoa(int(e.psn)) + ")"
		}
	}
	if e.psn != p.BTH.PSN {
		if d := r.pairDiv(s, KindPSN, e, p); d != nil {
			d.Expected, d.Actual = strconv.Itoa(int(e.psn)), strconv.Itoa(int(p.BTH.PSN))
			why := r.notReceived(s, p)
			if why == "" {
				why = "the responder answers the same request with another PSN"
			}
			d.Message = pairMsg(e, p, KindPSN) + "model " + e.opcode.String() + " PSN " + d.Expected + ", captured PSN " + d.Actual + " — " + why
		}
	}
	if e.hasAETH && hasAETH {
		if (e.syndrome^syn)&e.mask != 0 {
			if d := r.pairDiv(s, KindSyndrome, e, p); d != nil {
				d.Expected, d.Actual = synText(e.syndrome, e.why), synText(syn, "")
				why := "another syndrome"
				if mk == decode.AETHNak {
					why = "both reject the request, with different NAK codes"
				}
				d.Message = pairMsg(e, p, KindSyndrome) + "model " + d.Expected + ", captured " + d.Actual + " — " + why
			}
		}
		switch {
		case e.msn == p.AETH.MSN:
		case e.inMessage:
			r.msnInMessage(s, e.psn, e.frame, e.msn, p)
		default:
			if d := r.pairDiv(s, KindMSN, e, p); d != nil {
				d.Expected, d.Actual = strconv.Itoa(int(e.msn)), strconv.Itoa(int(p.AETH.MSN))
				d.Message = pairMsg(e, p, KindMSN) + "model MSN " + d.Expected + ", captured MSN " + d.Actual + " (" + p.BTH.Opcode.String() + " PSN " + strconv.Itoa(int(p.BTH.PSN)) + ")"
			}
		}
	}
	if e.opcode.Is(decode.PropReadResp) && p.BTH.Opcode.Is(decode.PropReadResp) && e.hasPayload {
		r.compareData(s, e, p)
	}
	if e.opcode.Is(decode.PropAtomicAck) && p.BTH.Opcode.Is(decode.PropAtomicAck) &&
		e.atomicKnown && p.Has&decode.HdrAtomicAckETH != 0 && p.AtomicAckETH.OrigRemData != e.atomicOrig {
		if e.atomicSoft {
			if n := r.note(s, NoteMemoryChanged); n != nil {
				n.PSN, n.RequestFrame, n.ResponseFrame = e.psn, e.frame, p.Frame.Number
				n.Expected, n.Actual = hex64(e.atomicOrig), hex64(p.AtomicAckETH.OrigRemData)
				n.Message = "frame " + itoa(e.frame) + " → " + itoa(p.Frame.Number) + ": memory changed: original value " + n.Actual +
					", where an earlier response showed " + n.Expected + " — legal: the responder's CPU may change its memory between two remote accesses"
			}
			return
		}
		if d := r.pairDiv(s, KindAtomicOrig, e, p); d != nil {
			d.Expected, d.Actual = hex64(e.atomicOrig), hex64(p.AtomicAckETH.OrigRemData)
			d.Message = pairMsg(e, p, KindAtomicOrig) + "model original value " + d.Expected + ", captured " + d.Actual +
				" — the responder's memory held another value than the requests written so far leave there"
		}
	}
}

// compareData compares a READ response's payload: only the bytes the
// model knows, and the length unless the capture cut the packet short.
func (r *Replayer) compareData(s *session, e *pending, p *decode.Packet) {
	got := p.Payload
	truncated := p.Flags&decode.FlagTruncated != 0
	if bytes.Equal(got, e.payload) {
		return
	}
	n := min(len(got), len(e.payload))
	// Bytes written by the capture's requests that differ are a
	// divergence; bytes only learned from an earlier response that
	// differ are the responder's memory changing (a note). Memory the
	// model knows nothing of (a first READ of it) has no byte to compare.
	first, count, softFirst, softCount := -1, 0, -1, 0
	if !e.allKnown && !anyTrue(e.known) {
		n = 0
	}
	for i := 0; i < n; i++ {
		if got[i] != e.payload[i] && e.knows(i) {
			if e.soft(i) {
				if softFirst < 0 {
					softFirst = i
				}
				softCount++
				continue
			}
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if softCount > 0 {
		if nt := r.note(s, NoteMemoryChanged); nt != nil {
			nt.PSN, nt.RequestFrame, nt.ResponseFrame = e.psn, e.frame, p.Frame.Number
			nt.Offset, nt.Count = softFirst, softCount
			nt.Expected, nt.Actual = hexBytes(e.payload, e.knows, softFirst), hexBytes(got, nil, softFirst)
			nt.Message = "frame " + itoa(e.frame) + " → " + itoa(p.Frame.Number) + ": memory changed: " + itoa(softCount) + " of the " + itoa(len(e.payload)) +
				" bytes differ from what earlier responses showed, the first at offset " + itoa(softFirst) + ": expected " + nt.Expected +
				", captured " + nt.Actual + " (" + p.BTH.Opcode.String() + " PSN " + itoa(int(p.BTH.PSN)) +
				") — legal: the responder's CPU may change its memory between two remote READs"
		}
	}
	lenDiffers := len(got) != len(e.payload) && !(truncated && len(got) < len(e.payload))
	if count == 0 && !lenDiffers {
		return
	}
	d := r.pairDiv(s, KindReadData, e, p)
	if d == nil {
		return
	}
	var b strings.Builder
	b.WriteString(pairMsg(e, p, KindReadData))
	if count > 0 {
		d.Offset, d.Count = first, count
		d.Expected, d.Actual = hexBytes(e.payload, e.knows, first), hexBytes(got, nil, first)
		b.WriteString(strconv.Itoa(count) + " of the " + strconv.Itoa(len(e.payload)) + " bytes differ from the model's memory, the first at offset " +
			strconv.Itoa(first) + ": model " + d.Expected + ", captured " + d.Actual)
	}
	if lenDiffers {
		if count > 0 {
			b.WriteString("; ")
		} else {
			d.Offset = n
			d.Expected, d.Actual = strconv.Itoa(len(e.payload))+" bytes", strconv.Itoa(len(got))+" bytes"
		}
		b.WriteString("model " + strconv.Itoa(len(e.payload)) + " bytes of data, captured " + strconv.Itoa(len(got)))
	}
	b.WriteString(" (" + p.BTH.Opcode.String() + " PSN " + strconv.Itoa(int(p.BTH.PSN)) + ")")
	d.Message = b.String()
}

// hexBytes shows up to 8 bytes from off, "??" for bytes the model does
// not know (known nil: all known).
func hexBytes(b []byte, known func(int) bool, off int) string {
	var sb strings.Builder
	for i := off; i < len(b) && i < off+8; i++ {
		if i > off {
			sb.WriteByte(' ')
		}
		if known != nil && !known(i) {
			sb.WriteString("??")
			continue
		}
		sb.WriteString(hexDigits[b[i]>>4 : b[i]>>4+1])
		sb.WriteString(hexDigits[b[i]&15 : b[i]&15+1])
	}
	return sb.String()
}

const hexDigits = "0123456789abcdef"

// synKind is the AETH kind (ACK, RNR NAK, NAK); a response without an
// AETH (READ RESPONSE Middle) counts as an ACK.
func synKind(hasAETH bool, syn uint8) uint8 {
	if !hasAETH {
		return decode.AETHAck
	}
	return syn >> 5 & 3
}

// synText describes a syndrome: "ACK (0x1f)", "RNR NAK timer 14 (0x2e)",
// "NAK Remote Access Error (0x62: why)".
func synText(syn uint8, why string) string {
	var s string
	switch syn >> 5 & 3 {
	case decode.AETHAck:
		s = "ACK"
	case decode.AETHRNRNak:
		s = "RNR NAK timer " + strconv.Itoa(int(syn&0x1F))
	default:
		s = decode.SyndromeString(syn)
	}
	s += " (" + hex8(syn)
	if why != "" {
		s += ": " + why
	}
	return s + ")"
}

// kindWhy explains an ACK/NAK disagreement.
func kindWhy(model, captured uint8, v hca.Verdict) string {
	switch {
	case model != decode.AETHAck && captured == decode.AETHAck:
		if model == decode.AETHRNRNak {
			return "the responder had a receive posted where the model has none (check the QP's recv list in the MPT)"
		}
		switch v {
		case hca.VerdictOutOfBounds:
			return "the responder accepted an access outside the memory region or window its rkey names"
		case hca.VerdictUnknownRKey, hca.VerdictInvalidKey:
			return "the responder accepted an rkey that no valid MR or MW has"
		case hca.VerdictAccessDenied, hca.VerdictQPAccess:
			return "the responder allowed an access the registration does not permit"
		case hca.VerdictPDMismatch, hca.VerdictMWQP:
			return "the responder accepted a key of another protection domain or QP"
		case hca.VerdictMisaligned:
			return "the responder executed a misaligned atomic"
		}
		return "the responder accepted a request the model rejects"
	case model == decode.AETHAck && captured == decode.AETHRNRNak:
		return "the responder found no receive posted where the model has one (check the QP's recv list in the MPT)"
	case model == decode.AETHAck:
		return "the responder rejected a request the model accepts"
	}
	return "the responder and the model reject the request differently"
}

// describe is a model response in words: "RC Acknowledge PSN 4097 NAK
// Remote Access Error (0x62: why) MSN 1".
func (e *pending) describe() string {
	s := e.opcode.String() + " PSN " + strconv.Itoa(int(e.psn))
	if e.hasAETH {
		s += " " + synText(e.syndrome, e.why) + " MSN " + strconv.Itoa(int(e.msn))
	}
	if e.duplicate {
		s += " (answer to a duplicate request)"
	}
	return s
}

// describePacket is a captured response in words.
func describePacket(p *decode.Packet) string {
	s := p.BTH.Opcode.String() + " PSN " + strconv.Itoa(int(p.BTH.PSN))
	if p.Has&decode.HdrAETH != 0 {
		s += " " + synText(p.AETH.Syndrome, "") + " MSN " + strconv.Itoa(int(p.AETH.MSN))
	}
	return s
}

func hex8(v uint8) string {
	return "0x" + hexDigits[v>>4:v>>4+1] + hexDigits[v&15:v&15+1]
}

// hex24 formats a QPN like Wireshark: 0x000011.
func hex24(v uint32) string {
	s := strconv.FormatUint(uint64(v&0xFFFFFF)|1<<24, 16)
	return "0x" + s[1:]
}

func hex64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func itoa(n int) string { return strconv.Itoa(n) }

// finding starts a divergence's or a note's record with the session's QPs.
func (s *session) finding() Finding {
	return Finding{Session: s.ID, QPN: s.QPN, HasQPN: s.HasQPN, PeerQPN: s.PeerQPN, HasPeerQPN: s.HasPeerQPN}
}
