package flow

import (
	"slices"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// MAD matching and RMPP reassembly.
//
// Requests and responses (IBA 13.4.6): a MAD request that expects an
// answer (Get, Set, Report, Trap, GetTable, GetTraceTable, GetMulti,
// Delete, and the CM's REQ, DREQ, LAP and SIDR_REQ) is kept by (its
// sender, management class, transaction ID); the response (method with
// the R bit, TrapRepress, the CM's REP/REJ, DREP, APR, SIDR_REP) comes
// back to the sender with the same transaction ID. Subnet management
// packets are kept by class and TID alone: directed-route SMPs travel
// with permissive LIDs, so the sender's address does not name it.
//
// Retries: a requester that gets no answer sends the MAD again with the
// same transaction ID (IBA 13.4.6.4). A request whose TID is outstanding
// is such a retry: it is marked rocetap.mad.original_frame (the first
// copy) and the response time is measured from the first copy, the time
// the requester has been waiting. A request with a TID already answered
// starts a new transaction.
//
// RMPP (IBA 13.6): the DATA segments of one transfer (sender, receiver,
// class, TID) are kept in segment order; a segment already kept (a
// retransmission within the window) is skipped, one after a missing
// segment breaks the transfer (nothing is reassembled), a First segment
// starts it again. On the Last segment the SA data of every segment, cut
// to the length the Last segment's PayloadLength gives, becomes
// Analysis.MAD.Reassembled, which the SA record fields decode. ACK, STOP
// and ABORT belong to the transfer: STOP and ABORT end it. Reassembly is
// this tracker's job because it needs the segments before; decode decodes
// the bytes it is handed.

// madKey names a MAD transaction.
type madKey struct {
	node  addr16 // the requester (zero for SMPs)
	class uint8
	tid   uint64
}

type madReq struct {
	frame, last int // first and last copy
	at          int64
	session     uint32
	copies      int
	class       uint8
	method      uint8
	attr        uint16
	answered    bool
}

type rmppKey struct {
	src, dst addr16
	class    uint8
	tid      uint64
}

type rmppXfer struct {
	next   uint32 // segment expected next
	frames []int
	data   []byte
	broken bool
}

// madState is the tracker's MAD matching and RMPP reassembly state.
type madState struct {
	reqs map[madKey]*madReq
	rmpp map[rmppKey]*rmppXfer
	// answers records request frame → response frame, for a later pass
	// (Options.MADAnswers); kept only when Options.RecordMADAnswers.
	answers map[int]int
}

// Bounds on what is kept: a subnet sweep sends thousands of MADs, each
// answered at once; what stays is what is outstanding.
const (
	maxMADPending = 16384
	maxRMPP       = 1024
)

// MADAnswers returns, after a pass with Options.RecordMADAnswers, the
// frame of the response to each request frame: for a second pass's
// Options.MADAnswers (rocetap.mad.response_in).
func (t *Tracker) MADAnswers() map[int]int { return t.madSt.answers }

// madExpectsResponse reports whether a MAD is a request an answer is due
// for, and madIsResponse whether it is one.
func madExpectsResponse(class, method uint8, attr uint16) bool {
	if class == decode.MgmtClassCM {
		switch attr {
		case decode.CMAttrREQ, decode.CMAttrDREQ, decode.CMAttrLAP, decode.CMAttrSIDRREQ:
			return true
		}
		return false
	}
	switch method {
	case decode.MADMethodGet, decode.MADMethodSet, decode.MADMethodReport, decode.MADMethodTrap,
		decode.MADMethodGetTable, decode.MADMethodGetTraceTable, decode.MADMethodGetMulti, decode.MADMethodDelete:
		return true
	}
	return false
}

func madIsResponse(class, method uint8, attr uint16) bool {
	if class == decode.MgmtClassCM {
		switch attr {
		case decode.CMAttrREP, decode.CMAttrREJ, decode.CMAttrDREP, decode.CMAttrAPR, decode.CMAttrSIDRREP:
			return true
		}
		return false
	}
	return method&0x80 != 0 || method == decode.MADMethodTrapRepress
}

// madNode returns the requester's key for a MAD sent by src.
func madNode(class uint8, src addr16) addr16 {
	if decode.IsSMP(class) {
		return addr16{}
	}
	return src
}

// madMatch matches a MAD with its request or response and reassembles RMPP
// transfers. src and dst are the packet's addresses (addrs).
func (t *Tracker) madMatch(p *decode.Packet, src, dst addr16) {
	m := &t.madSt
	if m.reqs == nil {
		m.reqs = make(map[madKey]*madReq)
		m.rmpp = make(map[rmppKey]*rmppXfer)
		if t.opts.RecordMADAnswers {
			m.answers = make(map[int]int)
		}
	}
	class, method, attr := p.MAD.MgmtClass, p.MAD.MethodByte(), p.MAD.AttributeID
	tid := p.MAD.TransactionID
	a := &p.Analysis.MAD
	if r := &p.SA.RMPP; p.SA.Valid && r.Active() && r.Type != decode.RMPPTypeData {
		// ACK, STOP, ABORT: the transfer's control, neither request nor
		// response (an ACK carries the response's header with the R bit
		// flipped).
		if r.Type == decode.RMPPTypeStop || r.Type == decode.RMPPTypeAbort {
			// The transfer ends, whichever side ends it; its request
			// was answered by the first segment.
			delete(m.rmpp, rmppKey{dst, src, class, tid})
			delete(m.rmpp, rmppKey{src, dst, class, tid})
			for _, n := range [2]addr16{src, dst} {
				k := madKey{madNode(class, n), class, tid}
				if q, ok := m.reqs[k]; ok && q.answered {
					delete(m.reqs, k)
				}
			}
		}
		return
	}
	now := p.Frame.Time.UnixNano()
	switch {
	case madIsResponse(class, method, attr):
		k := madKey{madNode(class, dst), class, tid}
		if q, ok := m.reqs[k]; ok {
			a.ResponseTo, a.Time = q.frame, time.Duration(now-q.at)
			if m.answers != nil {
				if _, seen := m.answers[q.frame]; !seen {
					m.answers[q.frame] = p.Frame.Number
				}
			}
			q.answered = true
			if !p.SA.Valid || !p.SA.RMPP.Segmented() || p.SA.RMPP.Flags&decode.RMPPFlagLast != 0 {
				delete(m.reqs, k)
			}
		}
		if p.SA.Valid && p.SA.RMPP.Segmented() {
			t.rmppSegment(p, rmppKey{src, dst, class, tid})
		}
	case madExpectsResponse(class, method, attr):
		if n := t.opts.MADAnswers[p.Frame.Number]; n > 0 {
			a.ResponseIn = n
		}
		k := madKey{madNode(class, src), class, tid}
		if q, ok := m.reqs[k]; ok && !q.answered {
			a.OrigFrame = q.frame
			q.copies++
			q.last = p.Frame.Number
			return
		}
		if len(m.reqs) >= maxMADPending {
			return
		}
		m.reqs[k] = &madReq{frame: p.Frame.Number, last: p.Frame.Number, at: now, session: p.Analysis.Session,
			copies: 1, class: class, method: method, attr: attr}
	}
}

// rmppSegment adds a DATA segment of a transfer of several to its
// reassembly and, on the last segment, hands the reassembled SA data to
// the packet.
func (t *Tracker) rmppSegment(p *decode.Packet, k rmppKey) {
	m := &t.madSt
	r := &p.SA.RMPP
	x := m.rmpp[k]
	if r.Flags&decode.RMPPFlagFirst != 0 {
		if x == nil && len(m.rmpp) >= maxRMPP {
			return
		}
		x = &rmppXfer{next: 1}
		m.rmpp[k] = x
	}
	if x == nil {
		return // started before the capture
	}
	last := r.Flags&decode.RMPPFlagLast != 0
	switch seg := r.Data1; {
	case seg < x.next:
		return // a retransmitted segment, already kept
	case seg > x.next, !last && len(p.SA.Data) < decode.SADataLen:
		x.broken = true // a segment missing, or cut by the capture
	default:
		x.data = append(x.data, p.SA.Data...)
		x.frames = append(x.frames, p.Frame.Number)
		x.next++
	}
	if !last {
		return
	}
	delete(m.rmpp, k)
	if x.broken {
		return
	}
	n := len(x.data)
	if pl := int(r.Data2) - decode.SAHeaderLen; pl >= 0 && pl <= decode.SADataLen {
		n = min(n, (len(x.frames)-1)*decode.SADataLen+pl)
	}
	a := &p.Analysis.MAD
	a.Reassembled, a.Segments = x.data[:n], x.frames
}

// flushMADs reports the requests never answered, in frame order: those
// sent at least NoResponseAfter before the end of the capture.
func (t *Tracker) flushMADs() {
	var due []*madReq
	for _, q := range t.madSt.reqs {
		if !q.answered && time.Duration(t.now-q.at) >= t.opts.NoResponseAfter {
			due = append(due, q)
		}
	}
	slices.SortFunc(due, func(a, b *madReq) int { return a.frame - b.frame })
	for _, q := range due {
		text := string(decode.AppendMADInfo(nil, q.class, q.method, q.attr)) + " in frame " + strconv.Itoa(q.frame) + " was never answered"
		if q.copies > 1 {
			text += " (sent " + strconv.Itoa(q.copies) + " times, last in frame " + strconv.Itoa(q.last) + ")"
		}
		t.emit(decode.EventMADNoResponse, q.frame, q.at, q.session, text)
	}
	clear(t.madSt.reqs)
}
