package hca

// The responder: what an HCA does with each request that reaches one of
// its QPs (IBA Vol. 1 ch. 9.7 for RC and XRC, 9.8 for UC and UD).
//
// As in the kernel's rxe_resp.c, a request goes through named checks in
// a fixed order (checks.go: checkQPState, checkPSN, checkOpSeq,
// checkOpValid, checkResources, checkLength, checkRKey), each returning
// an outcome; the checks are the same for every transport. The first
// outcome that is not ok decides what happens, through one table (fates,
// checks.go) that says per transport what it does: NAK, RNR NAK, the
// answer to a duplicate, or a silent drop. A request that passes every
// check is executed (execute.go). docs/model.md lists the same steps and
// the same table.

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// QP is one of the responder's queue pairs.
type QP struct {
	QPN    uint32
	PD     uint32
	Type   decode.Transport // RC, UC, UD or XRC
	Access Access
	MTU    int
	State  QPState

	ExpectedPSN decode.PSN // the next PSN the responder expects
	psnKnown    bool       // false: taken from the first request
	MSN         uint32     // messages completed, 24 bits

	MinRNRTimer     uint8
	MaxDestRdAtomic uint8
	hasMaxRdAtomic  bool
	QKey            uint32
	hasQKey         bool
	Remote          *Peer

	// Receive queue.
	recv      []RecvWQE
	recvNext  int
	recvAll   bool   // no "recv" list: a receive is always available
	recvCount uint32 // rq_depth without a list: WQEs left
	hasCount  bool

	nakSent bool // RC: a PSN sequence NAK is outstanding

	// The message in progress (after a FIRST or MIDDLE). UC drops every
	// MIDDLE and LAST while inMsg is false.
	inMsg    bool
	msgWrite bool // RDMA WRITE, else SEND
	msgPSN   decode.PSN
	msgLen   uint64 // bytes so far
	msgBuf   uint64 // SEND: receive buffer length (all ones: unlimited)
	wrMR     *MR
	wrKey    uint32
	wrVA     uint64
	wrResid  uint64
	reqFirst decode.PSN // UC: first PSN of the requester's current message

	res    []rdRes // READ/ATOMIC resources, a ring
	resPos int

	pend []pending // requester messages not yet completed, oldest first
}

// rdRes is a READ or ATOMIC the responder executed, kept for duplicates.
type rdRes struct {
	used        bool
	atomic      bool
	first       decode.PSN // first PSN
	n           uint32     // PSNs used
	va          uint64
	length      uint64
	rkey        uint32
	orig        uint64
	origKnown   bool
	origLearned bool // the original value came from learned bytes (MTT.Learn)
	msn         uint32
	fetchAdd    bool   // ATOMIC: FETCH_ADD, else CMP_SWAP
	swapAdd     uint64 // ATOMIC: swap or add operand
	compare     uint64 // CMP_SWAP: compare operand
	learned     bool   // Observe took the original value from the wire
}

// pending is a requester message the model has not completed.
type pending struct {
	first, last decode.PSN // PSN range (last grows as packets arrive)
	opcode      decode.Opcode
	frame       int
	rnr         bool // the last answer was an RNR NAK
	answered    bool
}

func newQP(q *QPConfig) *QP {
	qp := &QP{QPN: q.QPN, PD: q.PD, Type: q.Type, Access: q.Access, MTU: q.MTU, State: QPRTS,
		ExpectedPSN: q.ExpectedPSN, psnKnown: q.HasExpectedPSN, MinRNRTimer: q.MinRNRTimer,
		MaxDestRdAtomic: q.MaxDestRdAtomic, hasMaxRdAtomic: q.HasMaxDestRdAtomic,
		QKey: q.QKey, hasQKey: q.HasQKey, Remote: q.Remote}
	if qp.MTU == 0 {
		qp.MTU = 1024
	}
	if q.NeverConnected() {
		qp.State = QPInit
	}
	switch {
	case q.HasRecv:
		qp.recv = q.Recv
	case q.HasRQDepth:
		qp.recvCount, qp.hasCount = q.RQDepth, true
	default:
		qp.recvAll = true
	}
	n := 16
	if q.HasMaxDestRdAtomic && q.MaxDestRdAtomic > 0 {
		n = int(q.MaxDestRdAtomic)
	}
	qp.res = make([]rdRes, n)
	return qp
}

// reliable reports whether the QP uses the RC rules (RC and XRC).
func (qp *QP) reliable() bool { return qp.Type.Reliable() }

func (qp *QP) destQP() uint32 {
	if qp.Remote != nil {
		return qp.Remote.QPN
	}
	return 0
}

// msnMask keeps the 24 bits of an MSN.
const msnMask = 1<<24 - 1

// request is one request packet on its way through the checks (on
// Receive's stack: nothing keeps it).
type request struct {
	p     *decode.Packet
	op    decode.Opcode
	props decode.OpProp // op.Props(): what decode's opcode table says op is
	psn   decode.PSN
	ts    time.Time
	// kind is the remote access the operation needs on the QP (write,
	// read, atomic; 0 for SEND), acc what its RETH or AtomicETH names
	// (zero on MIDDLE and LAST packets).
	kind AccessOp
	acc  decode.RemoteAccess
	npsn uint32 // PSNs it uses: ⌈DMA length/MTU⌉ (at least 1) for a READ, else 1
	mr   *MR    // READ, ATOMIC: the MR checkRKey found
	why  string // what the failing check found, for the NAK's Why
}

func (rq *request) payload() uint64 { return uint64(len(rq.p.Payload)) }

// is and isAny are op.Is and op.IsAny on the properties looked up once.
func (rq *request) is(p decode.OpProp) bool    { return rq.props&p == p }
func (rq *request) isAny(p decode.OpProp) bool { return rq.props&p != 0 }

// accessKind is the remote access an operation needs, from its opcode
// properties.
func accessKind(props decode.OpProp) AccessOp {
	switch {
	case props&decode.PropWrite != 0:
		return OpWrite
	case props&decode.PropRead != 0:
		return OpRead
	case props&decode.PropAtomic != 0:
		return OpAtomic
	}
	return 0
}

// Receive feeds the model one packet the capture shows arriving at the
// responder, at capture time ts, and returns what the responder does. The
// Result and its slices are reused by the next call.
func (m *Model) Receive(p *decode.Packet, ts time.Time) *Result {
	r := &m.res
	r.Responses = r.Responses[:0]
	r.Completions = r.Completions[:0]
	r.Drop, r.Why, r.Check, r.Executed, r.Fault, r.Ack = DropNone, "", Check{}, false, nil, AckPoint{}
	m.arena = m.arena[:0]
	m.known = m.known[:0]
	m.learned = m.learned[:0]

	// What the HCA looks at before the responder (rxe_rcv, hdr_check):
	// a request, whole, with a good ICRC, to a QP of the opcode's
	// transport, asking for an operation the model carries out.
	op := p.BTH.Opcode
	if p.Has&decode.HdrBTH == 0 || !op.IsRequest() {
		r.Drop = DropNotRequest
		return r
	}
	if p.Flags&decode.FlagTruncated != 0 {
		r.Drop = DropTruncated
		return r
	}
	if p.ICRCStatus == decode.CRCBad {
		r.Drop = DropBadCRC
		return r
	}
	qp := m.qps[p.BTH.DestQP]
	if qp == nil {
		r.Drop = DropUnknownQP
		return r
	}
	if op.Transport() != qp.Type {
		r.Drop = DropWrongType
		return r
	}
	// FLUSH, ATOMIC WRITE and RESYNC are not modeled; a UD SEND needs
	// its DETH.
	if !op.IsAny(decode.PropSend|decode.PropWrite|decode.PropRead|decode.PropAtomic) ||
		qp.Type == decode.TransportUD && p.Has&decode.HdrDETH == 0 {
		r.Drop = DropNotRequest
		return r
	}
	m.frame = p.Frame.Number

	props := op.Props()
	rq := &request{p: p, op: op, props: props, psn: p.BTH.PSN, ts: ts, kind: accessKind(props), acc: p.Access(), npsn: 1}
	if rq.is(decode.PropRead) {
		rq.npsn = readPSNs(rq.acc.Len, qp.MTU)
	}
	if !m.goOn(qp, rq, m.checkQPState(qp, rq)) {
		return r
	}
	m.sent(qp, rq)
	// The responder's checks, in order (rxe_resp.c's RESPST_CHK_*).
	if m.goOn(qp, rq, m.checkPSN(qp, rq)) &&
		m.goOn(qp, rq, m.checkOpSeq(qp, rq)) &&
		m.goOn(qp, rq, m.checkOpValid(qp, rq)) &&
		m.goOn(qp, rq, m.checkResources(qp, rq)) &&
		m.goOn(qp, rq, m.checkLength(qp, rq)) &&
		m.goOn(qp, rq, m.checkRKey(qp, rq)) {
		m.execute(qp, rq)
	}
	return r
}

// goOn reports whether a request goes on after a check: when it found
// nothing, or when the fate of what it found lets the request go on
// (fail).
func (m *Model) goOn(qp *QP, rq *request, o outcome) bool {
	return o == outOK || m.fail(qp, rq, o)
}

// sent records what the requester's side of the QP sees of the request,
// so the model can say how each message completes: RC and XRC messages
// complete with their answer (or at Finish), UC and UD messages when they
// are sent. It runs for every request that reaches a ready QP, before the
// checks.
func (m *Model) sent(qp *QP, rq *request) {
	switch {
	case qp.reliable():
		if !qp.psnKnown {
			qp.ExpectedPSN, qp.psnKnown = rq.psn, true
		}
		qp.track(rq, rq.psn.Add(int(rq.npsn)-1))
	case qp.Type == decode.TransportUC:
		if !qp.psnKnown {
			qp.ExpectedPSN, qp.psnKnown = rq.psn, true
		}
		if rq.is(decode.PropStart) {
			qp.reqFirst = rq.psn
		}
		if rq.is(decode.PropEnd) {
			m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, Requester: true,
				QPN: qp.destQP(), Status: WCSuccess, Opcode: rq.op, PSN: qp.reqFirst})
		}
	default: // UD
		m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, Requester: true,
			QPN: rq.p.DETH.SrcQP, Status: WCSuccess, Opcode: rq.op, PSN: rq.psn})
	}
}

// nakSyn is an AETH NAK syndrome.
func nakSyn(code uint8) uint8 { return decode.AETHNak<<5 | code }

const synACK = 0x1F // ACK with the credit field "invalid" (no end-to-end credits)

func (m *Model) respond(qp *QP, op decode.Opcode, psn decode.PSN, syn uint8, aeth bool, why string) *Response {
	mask := uint8(0xFF)
	if aeth && syn>>5 == decode.AETHAck && m.Profile != ProfileRXE {
		mask = 0xE0
	}
	// A response carries the opcode of the QP's transport: RC's, or XRC's
	// for an XRC target (op names the operation).
	m.res.Responses = append(m.res.Responses, Response{Frame: m.frame, QPN: qp.QPN, DestQP: qp.destQP(),
		Opcode: qp.Type.Opcode(op.Op()), PSN: psn, HasAETH: aeth, Syndrome: syn, SyndromeMask: mask, MSN: qp.MSN, Why: why})
	return &m.res.Responses[len(m.res.Responses)-1]
}

func (m *Model) ack(qp *QP, psn decode.PSN) *Response {
	r := m.respond(qp, decode.OpAcknowledge, psn, synACK, true, "")
	r.Coalescable = true
	return r
}

// acked records what an acknowledgement of the RC or XRC SEND or WRITE
// packet rq, which the responder executed, carries (Result.Ack) and sends
// it when the packet asks for one. msgDone: rq ends its message, which
// qp.MSN already counts.
func (m *Model) acked(qp *QP, rq *request, msgDone bool) {
	m.res.Ack = AckPoint{Valid: true, MsgDone: msgDone, PSN: rq.psn, MSN: qp.MSN}
	if rq.p.BTH.AckReq {
		m.ack(qp, rq.psn).InMessage = !msgDone
		if msgDone {
			m.completeRequester(qp, rq.psn, WCSuccess, false)
		}
	}
}

// nak sends a class A NAK (invalid request, remote access, remote
// operational error): the QP goes to the error state and the requester's
// message completes with the matching error.
func (m *Model) nak(qp *QP, psn decode.PSN, code uint8, why string) {
	syn := nakSyn(code)
	m.respond(qp, decode.OpAcknowledge, psn, syn, true, why)
	qp.State = QPError
	qp.inMsg = false
	st, _ := StatusForSyndrome(syn)
	m.completeRequester(qp, psn, st, true)
}

func (m *Model) rnrNak(qp *QP, psn decode.PSN) {
	m.respond(qp, decode.OpAcknowledge, psn, decode.AETHRNRNak<<5|qp.MinRNRTimer&0x1F, true, "no receive WQE posted")
	for i := range qp.pend {
		if pe := &qp.pend[i]; psn.In(pe.first, pe.last) {
			pe.rnr, pe.answered = true, true
		}
	}
}

// track records a request packet of an RC or XRC QP on the requester's
// side: a FIRST or ONLY starts a message, a MIDDLE or LAST extends the
// SEND or WRITE before it. last is the message's last PSN so far.
func (qp *QP) track(rq *request, last decode.PSN) {
	psn := rq.psn
	start := rq.is(decode.PropStart)
	for i := range qp.pend {
		pe := &qp.pend[i]
		if psn.In(pe.first, pe.last) {
			return
		}
		if !start && psn.Diff(pe.last) == 1 && !pe.opcode.IsAny(decode.PropRead|decode.PropAtomic) {
			pe.last = psn
			pe.opcode = rq.op
			return
		}
	}
	if !start {
		return // a MIDDLE/LAST whose FIRST is not known
	}
	const maxPending = 4096
	if len(qp.pend) == maxPending {
		qp.pend = qp.pend[:copy(qp.pend, qp.pend[1:])]
	}
	qp.pend = append(qp.pend, pending{first: psn, last: last, opcode: rq.op, frame: rq.p.Frame.Number})
}

// completeRequester completes requester messages: with an ACK of psn
// (upTo), every message whose last PSN is at or before psn succeeds; with
// a NAK, the message holding psn completes with st and the later ones are
// flushed (they never reach the wire, so they are dropped from the list).
func (m *Model) completeRequester(qp *QP, psn decode.PSN, st WCStatus, nak bool) {
	keep := qp.pend[:0]
	for i, pe := range qp.pend {
		switch {
		case nak && psn.In(pe.first, pe.last):
			m.requesterDone(qp, pe, st)
			qp.pend = keep
			return
		case nak && pe.last.Diff(psn) < 0:
			// implicitly acknowledged by the NAK of a later PSN
			m.requesterDone(qp, pe, WCSuccess)
		case !nak && pe.last.Diff(psn) <= 0:
			if pe.opcode.IsAny(decode.PropRead | decode.PropAtomic) {
				// completed by its own response, not by a later ACK
				if psn.In(pe.first, pe.last) {
					m.requesterDone(qp, pe, st)
					continue
				}
				keep = append(keep, qp.pend[i])
				continue
			}
			m.requesterDone(qp, pe, st)
		default:
			keep = append(keep, qp.pend[i])
		}
	}
	qp.pend = keep
}

func (m *Model) requesterDone(qp *QP, pe pending, st WCStatus) {
	m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, Requester: true,
		QPN: qp.destQP(), Status: st, Opcode: pe.opcode, PSN: pe.first})
}

// takeRecv takes the next receive WQE posted by ts; ok false when the
// queue is empty. length 0 with unlimited true means "any length".
func (qp *QP) takeRecv(ts time.Time) (length uint64, unlimited, ok bool) {
	switch {
	case qp.recvAll:
		return 0, true, true
	case qp.hasCount:
		if qp.recvCount == 0 {
			return 0, false, false
		}
		qp.recvCount--
		return 0, true, true
	}
	if qp.recvNext >= len(qp.recv) {
		return 0, false, false
	}
	w := qp.recv[qp.recvNext]
	if w.HasPostedAt && w.PostedAt.After(ts) {
		return 0, false, false
	}
	qp.recvNext++
	return w.Length, false, true
}

// peekRecv is takeRecv without taking.
func (qp *QP) peekRecv(ts time.Time) bool {
	switch {
	case qp.recvAll:
		return true
	case qp.hasCount:
		return qp.recvCount > 0
	}
	return qp.recvNext < len(qp.recv) && !(qp.recv[qp.recvNext].HasPostedAt && qp.recv[qp.recvNext].PostedAt.After(ts))
}

// readPSNs is the number of PSNs a READ of n bytes uses: ⌈n/MTU⌉, at
// least 1.
func readPSNs(n uint64, mtu int) uint32 {
	if n == 0 {
		return 1
	}
	return uint32((n + uint64(mtu) - 1) / uint64(mtu))
}

// Finish ends the capture: it returns the requester completions implied by
// requests that never got a final answer: RNR retry exceeded after an RNR
// NAK, transport retry exceeded when nothing answered.
func (m *Model) Finish() []Completion {
	var out []Completion
	for _, qp := range m.qpOrd {
		for _, pe := range qp.pend {
			st := WCRetryExcErr
			if pe.rnr {
				st = WCRNRRetryExcErr
			}
			out = append(out, Completion{Frame: pe.frame, Requester: true, QPN: qp.destQP(), Status: st,
				Opcode: pe.opcode, PSN: pe.first})
		}
		qp.pend = qp.pend[:0]
	}
	return out
}
