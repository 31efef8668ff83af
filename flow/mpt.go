package flow

// The MPT check: with Options.MPT, every remote access a request sends to
// the MPT's responder (the RETH of a READ request or a WRITE FIRST/ONLY,
// the AtomicETH of CmpSwap/FetchAdd, the IETH of a SEND with Invalidate)
// is checked against the responder's memory protection table, and the
// responder's answer is compared with the verdict: an access the MPT
// forbids is an mpt_violation (the NAK that follows is the expected
// outcome); one the responder executes anyway is mpt_accepted, on the
// response that executed it; an allowed access the responder NAKs is
// mpt_rejected, on the NAK.

import (
	"encoding/binary"
	"strconv"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// mptRec is the MPT check of a request message, kept with the message (and
// then with the outstanding request) until the responder answers it.
type mptRec struct {
	checked bool
	op      decode.MPTOp
	verdict hca.Verdict
	window  bool // rkey names a memory window
	rkey    uint32
	over    uint32 // bytes out of bounds (at most the access's length), for the description
}

func (r *mptRec) allowed() bool { return r.verdict.Allowed() }

// why describes the verdict in words, as hca's Check.Describe does; a
// verdict about a memory window names the window (the model keeps the
// window: the tracker only invalidates keys).
func (t *Tracker) why(r *mptRec) string {
	c := hca.Check{Verdict: r.verdict, Op: r.op, RKey: r.rkey, Over: uint64(r.over)}
	if r.window {
		if w := t.opts.MPT.MW(r.rkey); w != nil {
			c.Window, c.MW, c.MR = true, w, w.MR
		}
	}
	return c.Describe()
}

// mptWhat names the access: "WRITE of 512 bytes at VA 0x... with rkey
// 0x...", "SEND with Invalidate of rkey 0x...".
func mptWhat(op decode.MPTOp, rkey uint32, va, n uint64) string {
	switch op {
	case decode.MPTOpInvalidate:
		return "SEND with Invalidate of rkey " + hexN(rkey, 8)
	case decode.MPTOpAtomic:
		return "ATOMIC at VA " + hex64(va) + " with rkey " + hexN(rkey, 8)
	}
	what := "READ"
	if op == decode.MPTOpWrite {
		what = "WRITE"
	}
	return what + " of " + strconv.FormatUint(n, 10) + " bytes at VA " + hex64(va) + " with rkey " + hexN(rkey, 8)
}

func hex64(v uint64) string {
	h := strconv.FormatUint(v, 16)
	const zeros = "0000000000000000"
	return "0x" + zeros[:16-len(h)] + h
}

// mptKey returns the responder's node as addrs gives a packet's
// destination (IPv4 addresses IPv4-mapped, a LID marked) and whether it
// is a LID. A responder that is not valid gets a key no packet has: a LID
// with bytes addrs leaves zero.
func mptKey(n decode.Node) (k addr16, lid bool) {
	switch {
	case n.IsLID():
		k[0], k[1] = 0xff, 0xfe
		binary.BigEndian.PutUint16(k[14:], n.LID())
		return k, true
	case n.IsValid():
		return n.Addr().As16(), false
	}
	return addr16{0xff, 0xfe, 0xff, 0xff}, true
}

// checkMPT checks the remote access a fresh request packet carries, when
// it is sent to the MPT's responder: it fills p.Analysis.MPT, counts the
// check in s, reports a violation, and returns the check to keep with the
// request's message.
func (t *Tracker) checkMPT(p *decode.Packet, s *Session) mptRec {
	acc := p.Access()
	op, rkey, va, n := acc.Op, acc.RKey, acc.VA, acc.Len
	if op == decode.MPTOpNone {
		return mptRec{}
	}
	if _, dst, lid := addrs(p); dst != t.mptResp || lid != t.mptLID {
		return mptRec{}
	}
	var c hca.Check
	if op == decode.MPTOpInvalidate {
		c = t.checkInvalidate(p.BTH.DestQP, rkey)
	} else {
		c = t.opts.MPT.Check(p.BTH.DestQP, op, rkey, va, n)
	}
	m := &p.Analysis.MPT
	*m = decode.MPTCheck{Checked: true, Allowed: c.Verdict.Allowed(), Op: op, Verdict: uint8(c.Verdict),
		VerdictName: c.Verdict.String(), RKey: rkey, Window: c.Window, Over: c.Over}
	if c.MR != nil {
		m.HasMR, m.MR = true, c.MR.RKey
		m.HasRange, m.Base, m.Size = true, c.Base, c.Size
		if op != decode.MPTOpInvalidate && va >= c.Base {
			m.HasOffset, m.Offset = true, va-c.Base
		}
	}
	if c.HasPA {
		m.HasPA, m.PA = true, c.PA
		// Check looks the first page up in the translation cache when
		// the whole access is inside the range.
		m.HasCache, m.CacheHit = c.Over == 0, c.Hit
	}
	r := mptRec{checked: true, op: op, verdict: c.Verdict, window: c.Window, rkey: rkey, over: uint32(min(c.Over, 1<<32-1))}
	s.f().MPTChecked++
	if !m.Allowed {
		s.f().MPTViolations++
		m.Finding = decode.MPTViolation
		m.Why = t.why(&r)
		t.event(p, decode.EventMPTViolation, s.ID, "MPT forbids the "+mptWhat(op, rkey, va, n)+": "+m.Why+" ("+m.VerdictName+")")
	}
	return r
}

// checkInvalidate checks a SEND with Invalidate of rkey on QP qpn as the
// responder does before invalidating: the key must name a valid MR or type
// 2 memory window of the QP's protection domain.
func (t *Tracker) checkInvalidate(qpn, rkey uint32) hca.Check {
	m := t.opts.MPT
	c := hca.Check{RKey: rkey}
	qp := m.QP(qpn)
	if qp == nil {
		c.Verdict = hca.VerdictUnknownQP
		return c
	}
	var pd uint32
	var state hca.KeyState
	typ1 := false
	if w := m.MW(rkey); w != nil {
		c.Window, c.MW, c.MR, c.Base, c.Size = true, w, w.MR, w.VA, w.Length
		pd, state, typ1 = w.PD, w.State, w.Type != 2
	} else if mr := m.MRByKey(rkey); mr != nil {
		c.MR, c.Base, c.Size = mr, mr.VA, mr.Length
		pd, state = mr.PD, mr.State
	} else {
		c.Verdict = hca.VerdictUnknownRKey
		return c
	}
	switch {
	case state != hca.KeyValid:
		c.Verdict = hca.VerdictInvalidKey
	case pd != qp.PD:
		c.Verdict = hca.VerdictPDMismatch
	case typ1:
		c.Verdict = hca.VerdictAccessDenied
	default:
		c.Verdict = hca.VerdictOK
	}
	return c
}

// mptAnswer compares the responder's answer to a checked request with the
// request's check: executed says the responder carried it out (an ACK, a
// READ response, an ATOMIC ACK, or a later response acknowledging it),
// otherwise p is a NAK that rejects it. frame is the request's frame (the
// packet that carried the access). The check is used up: a request is
// judged once. Callers test r.checked first (the call is not inlined).
func (t *Tracker) mptAnswer(p *decode.Packet, s *Session, r *mptRec, frame int, executed bool) {
	r.checked = false
	f := decode.MPTAgrees
	switch {
	case executed && !r.allowed() && r.op != decode.MPTOpInvalidate:
		// A SEND with Invalidate whose invalidation fails is still
		// acknowledged (its receive completes in error): only a
		// memory access executed against the MPT is accepted.
		f = decode.MPTAccepted
		s.f().MPTAccepted++
		what := "an access the MPT forbids"
		switch {
		case r.window && r.verdict == hca.VerdictOutOfBounds:
			what = "an access outside MW " + hexN(r.rkey, 8)
		case r.window && r.verdict == hca.VerdictInvalidKey:
			what = "an access through MW " + hexN(r.rkey, 8) + ", which is no longer valid"
		case r.verdict == hca.VerdictUnknownRKey, r.verdict == hca.VerdictInvalidKey, r.verdict == hca.VerdictOutOfBounds:
			what = "an access outside any MR"
		}
		t.event(p, decode.EventMPTAccepted, s.ID, "responder accepted "+what+": the "+r.op.String()+" in frame "+
			strconv.Itoa(frame)+" (rkey "+hexN(r.rkey, 8)+": "+t.why(r)+")")
	case !executed && r.allowed():
		if r.op == decode.MPTOpInvalidate && p.AETH.Value() != decode.NakRemoteAccessError {
			// A SEND NAKed for another reason (its receive buffer,
			// ...) says nothing about the rkey.
			f = decode.MPTFindingNone
			break
		}
		f = decode.MPTRejected
		s.f().MPTRejected++
		t.event(p, decode.EventMPTRejected, s.ID, "responder NAKed an access the MPT allows: "+decode.SyndromeString(p.AETH.Syndrome)+
			" for the "+r.op.String()+" in frame "+strconv.Itoa(frame)+" (rkey "+hexN(r.rkey, 8)+", "+r.verdict.String()+")")
	}
	if executed && r.op == decode.MPTOpInvalidate && r.allowed() {
		// The responder executed the SEND with Invalidate: later
		// accesses with the key find it invalid.
		t.opts.MPT.Invalidate(r.rkey)
	}
	if a := &p.Analysis.MPT; f > a.Finding {
		a.Finding = f
	}
}

// mptFrame is the frame of the packet whose access a message's check is
// about: the FIRST/ONLY packet's RETH or AtomicETH, the last packet's IETH.
func mptFrame(r *mptRec, first, last int) int {
	if r.op == decode.MPTOpInvalidate {
		return last
	}
	return first
}
