package hca

// The responder: what an HCA does with each request that reaches one of
// its QPs (IBA Vol. 1 ch. 9.7 for RC, 9.8 for UC and UD), in the order
// the checks are made: QP state, PSN, opcode sequence, QP access,
// resources, length, rkey, execution, response.

import (
	"fmt"
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

	// The message in progress (after a FIRST or MIDDLE).
	inMsg    bool
	msgWrite bool // RDMA WRITE, else SEND
	msgPSN   decode.PSN
	msgLen   uint64 // bytes so far
	msgBuf   uint64 // SEND: receive buffer length (0 with recvAll: unlimited)
	msgHasWQ bool   // SEND/WRITE-imm: a receive WQE was taken
	wrMR     *MR
	wrKey    uint32
	wrVA     uint64
	wrResid  uint64
	ucDrop   bool       // UC: drop until the next FIRST/ONLY
	reqFirst decode.PSN // UC: first PSN of the requester's current message

	res    []rdRes // READ/ATOMIC resources, a ring
	resPos int

	pend []pending // requester messages not yet completed, oldest first
}

// rdRes is a READ or ATOMIC the responder executed, kept for duplicates.
type rdRes struct {
	used      bool
	atomic    bool
	first     decode.PSN // first PSN
	n         uint32     // PSNs used
	va        uint64
	length    uint64
	rkey      uint32
	orig      uint64
	origKnown bool
	msn       uint32
	fetchAdd  bool   // ATOMIC: FETCH_ADD, else CMP_SWAP
	swapAdd   uint64 // ATOMIC: swap or add operand
	compare   uint64 // CMP_SWAP: compare operand
	learned   bool   // Observe took the original value from the wire
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
	// A connected QP the file gives neither a peer nor an expected PSN
	// never reached RTR: it drops everything, as a QP left in INIT does.
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

// connected reports whether the QP uses the RC rules (RC and XRC).
func (qp *QP) reliable() bool { return qp.Type.Reliable() }

func (qp *QP) destQP() uint32 {
	if qp.Remote != nil {
		return qp.Remote.QPN
	}
	return 0
}

// msnMask keeps the 24 bits of an MSN.
const msnMask = 1<<24 - 1

// opcode positions.
const (
	posFirst = 1 << iota
	posMiddle
	posLast
)

// opInfo classifies the operation part of a request opcode.
type opInfo struct {
	send, write, read, atomic bool
	pos                       uint8 // posFirst|posLast for ONLY
	imm, inv                  bool
}

func classify(op uint8) (opInfo, bool) {
	switch op {
	case decode.OpSendFirst:
		return opInfo{send: true, pos: posFirst}, true
	case decode.OpSendMiddle:
		return opInfo{send: true, pos: posMiddle}, true
	case decode.OpSendLast:
		return opInfo{send: true, pos: posLast}, true
	case decode.OpSendLastImm:
		return opInfo{send: true, pos: posLast, imm: true}, true
	case decode.OpSendOnly:
		return opInfo{send: true, pos: posFirst | posLast}, true
	case decode.OpSendOnlyImm:
		return opInfo{send: true, pos: posFirst | posLast, imm: true}, true
	case decode.OpSendLastInv:
		return opInfo{send: true, pos: posLast, inv: true}, true
	case decode.OpSendOnlyInv:
		return opInfo{send: true, pos: posFirst | posLast, inv: true}, true
	case decode.OpWriteFirst:
		return opInfo{write: true, pos: posFirst}, true
	case decode.OpWriteMiddle:
		return opInfo{write: true, pos: posMiddle}, true
	case decode.OpWriteLast:
		return opInfo{write: true, pos: posLast}, true
	case decode.OpWriteLastImm:
		return opInfo{write: true, pos: posLast, imm: true}, true
	case decode.OpWriteOnly:
		return opInfo{write: true, pos: posFirst | posLast}, true
	case decode.OpWriteOnlyImm:
		return opInfo{write: true, pos: posFirst | posLast, imm: true}, true
	case decode.OpReadRequest:
		return opInfo{read: true, pos: posFirst | posLast}, true
	case decode.OpCompareSwap, decode.OpFetchAdd:
		return opInfo{atomic: true, pos: posFirst | posLast}, true
	}
	return opInfo{}, false
}

// Receive feeds the model one packet the capture shows arriving at the
// responder, at capture time ts, and returns what the responder does. The
// Result and its slices are reused by the next call.
func (m *Model) Receive(p *decode.Packet, ts time.Time) *Result {
	r := &m.res
	r.Responses = r.Responses[:0]
	r.Completions = r.Completions[:0]
	r.Drop, r.Check, r.Executed = DropNone, Check{}, false
	m.arena = m.arena[:0]
	m.known = m.known[:0]

	if p.Has&decode.HdrBTH == 0 || !p.BTH.Opcode.IsRequest() {
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
	if p.BTH.Opcode.Transport() != qp.Type {
		r.Drop = DropWrongType
		return r
	}
	info, ok := classify(p.BTH.Opcode.Op())
	if !ok {
		r.Drop = DropNotRequest
		return r
	}
	m.frame = p.Frame.Number
	if qp.State != QPRTR && qp.State != QPRTS {
		if qp.reliable() && qp.State != QPError {
			// Nothing will answer: the requester's retries run out.
			qp.track(p, info, p.BTH.PSN)
		}
		r.Drop = DropQPState
		if qp.State == QPError {
			r.Drop = DropQPError
		}
		return r
	}
	switch {
	case qp.reliable():
		m.rc(qp, p, info, ts)
	case qp.Type == decode.TransportUC:
		m.uc(qp, p, info, ts)
	default:
		m.ud(qp, p, info, ts)
	}
	return r
}

// nakCode is an AETH NAK syndrome.
func nakSyn(code uint8) uint8 { return decode.AETHNak<<5 | code }

const synACK = 0x1F // ACK with the credit field "invalid" (no end-to-end credits)

func (m *Model) respond(qp *QP, op decode.Opcode, psn decode.PSN, syn uint8, aeth bool, why string) *Response {
	mask := uint8(0xFF)
	if aeth && syn>>5 == decode.AETHAck && m.Profile != ProfileRXE {
		mask = 0xE0
	}
	m.res.Responses = append(m.res.Responses, Response{Frame: m.frame, QPN: qp.QPN, DestQP: qp.destQP(),
		Opcode: op, PSN: psn, HasAETH: aeth, Syndrome: syn, SyndromeMask: mask, MSN: qp.MSN, Why: why})
	return &m.res.Responses[len(m.res.Responses)-1]
}

func (m *Model) ack(qp *QP, psn decode.PSN) {
	m.respond(qp, decode.OpAcknowledge, psn, synACK, true, "").Coalescable = true
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

// track records a request packet on the requester's side, so the model can
// say how each message completes.
func (qp *QP) track(p *decode.Packet, info opInfo, last decode.PSN) {
	psn := p.BTH.PSN
	for i := range qp.pend {
		pe := &qp.pend[i]
		if psn.In(pe.first, pe.last) {
			return
		}
		if info.pos&posFirst == 0 && psn.Diff(pe.last) == 1 && pe.opcode != decode.OpReadRequest && !isAtomicOp(pe.opcode) {
			pe.last = psn
			pe.opcode = p.BTH.Opcode
			return
		}
	}
	if info.pos&posFirst == 0 {
		return // a MIDDLE/LAST whose FIRST is not known
	}
	const maxPending = 4096
	if len(qp.pend) == maxPending {
		qp.pend = qp.pend[:copy(qp.pend, qp.pend[1:])]
	}
	qp.pend = append(qp.pend, pending{first: psn, last: last, opcode: p.BTH.Opcode, frame: p.Frame.Number})
}

func isAtomicOp(o decode.Opcode) bool {
	return o.Op() == decode.OpCompareSwap || o.Op() == decode.OpFetchAdd
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
			if pe.opcode == decode.OpReadRequest || isAtomicOp(pe.opcode) {
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

func (m *Model) qpAccessCode() uint8 {
	if m.Profile == ProfileRXE {
		return decode.NakInvalidRequest
	}
	return decode.NakRemoteAccessError
}

// rc applies the RC (and XRC) responder rules to one request packet.
func (m *Model) rc(qp *QP, p *decode.Packet, info opInfo, ts time.Time) {
	psn := p.BTH.PSN
	if !qp.psnKnown {
		qp.ExpectedPSN, qp.psnKnown = psn, true
	}
	npsn := uint32(1)
	if info.read && p.Has&decode.HdrRETH != 0 {
		npsn = readPSNs(uint64(p.RETH.DMALen), qp.MTU)
	}
	qp.track(p, info, psn.Add(int(npsn)-1))

	// PSN check (C9-91 ff.).
	d := psn.Diff(qp.ExpectedPSN)
	switch {
	case d > 0:
		if qp.nakSent {
			m.res.Drop = DropPSNOutOfOrder
			return
		}
		qp.nakSent = true
		m.respond(qp, decode.OpAcknowledge, qp.ExpectedPSN, nakSyn(decode.NakPSNSequenceError), true,
			fmt.Sprintf("PSN %#06x is ahead of the expected PSN %#06x", psn, qp.ExpectedPSN))
		return
	case d < 0:
		m.duplicate(qp, p, info)
		return
	}
	qp.nakSent = false

	// Opcode sequence.
	if qp.inMsg {
		if info.pos&posFirst != 0 || info.write != qp.msgWrite || info.send != !qp.msgWrite {
			m.nak(qp, psn, decode.NakInvalidRequest, "a new request while a multi-packet message is in progress")
			return
		}
	} else if info.pos&posFirst == 0 {
		m.nak(qp, psn, decode.NakInvalidRequest, fmt.Sprintf("%s without a FIRST", p.BTH.Opcode))
		return
	}

	// QP access.
	var op AccessOp
	switch {
	case info.write:
		op = OpWrite
	case info.read:
		op = OpRead
	case info.atomic:
		op = OpAtomic
	}
	if op != 0 && qp.Access&AccessFlag(op) == 0 {
		m.res.Check = Check{Verdict: VerdictQPAccess, Op: op}
		m.nak(qp, psn, m.qpAccessCode(), fmt.Sprintf("QP %#06x lacks REMOTE_%s", qp.QPN, upper(op.String())))
		return
	}

	// Resources.
	if (info.read || info.atomic) && qp.hasMaxRdAtomic && qp.MaxDestRdAtomic == 0 {
		m.nak(qp, psn, decode.NakInvalidRequest, "max_dest_rd_atomic is 0")
		return
	}
	needRecv := (info.send && info.pos&posFirst != 0) || (info.write && info.imm)
	if needRecv && !(info.write && qp.inMsg && qp.msgHasWQ) && !qp.peekRecv(ts) {
		m.rnrNak(qp, psn)
		return
	}

	// Length.
	pay := uint64(len(p.Payload))
	mtu := uint64(qp.MTU)
	if info.send || info.write {
		switch info.pos {
		case posFirst | posLast:
			if pay > mtu {
				m.nak(qp, psn, decode.NakInvalidRequest, fmt.Sprintf("%d-byte payload in an ONLY packet, MTU %d", pay, mtu))
				return
			}
		case posFirst, posMiddle:
			if pay != mtu {
				m.nak(qp, psn, decode.NakInvalidRequest, fmt.Sprintf("%d-byte payload in a FIRST/MIDDLE packet, MTU %d", pay, mtu))
				return
			}
		case posLast:
			if pay == 0 || pay > mtu {
				m.nak(qp, psn, decode.NakInvalidRequest, fmt.Sprintf("%d-byte payload in a LAST packet, MTU %d", pay, mtu))
				return
			}
		}
	}

	// rkey, execution and response.
	switch {
	case info.write:
		m.rcWrite(qp, p, info, ts)
	case info.send:
		m.rcSend(qp, p, info, ts)
	case info.read:
		m.rcRead(qp, p, npsn)
	case info.atomic:
		m.rcAtomic(qp, p)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// readPSNs is the number of PSNs a READ of n bytes uses: ⌈n/MTU⌉, at
// least 1.
func readPSNs(n uint64, mtu int) uint32 {
	if n == 0 {
		return 1
	}
	return uint32((n + uint64(mtu) - 1) / uint64(mtu))
}

// accessNak is the NAK code for a failed MPT check.
func (m *Model) accessNak(v Verdict) uint8 {
	switch v {
	case VerdictMisaligned:
		return decode.NakInvalidRequest
	case VerdictQPAccess:
		return m.qpAccessCode()
	}
	return decode.NakRemoteAccessError
}

// advance accepts the packet: the expected PSN moves past it.
func (qp *QP) advance(n uint32) { qp.ExpectedPSN = qp.ExpectedPSN.Add(int(n)) }

func (m *Model) rcWrite(qp *QP, p *decode.Packet, info opInfo, ts time.Time) {
	psn := p.BTH.PSN
	if info.pos&posFirst != 0 {
		va, length, rkey := p.RETH.VA, uint64(p.RETH.DMALen), p.RETH.RKey
		c := m.check(qp.QPN, OpWrite, rkey, va, length, false)
		m.res.Check = c
		if !c.Verdict.Allowed() {
			m.nak(qp, psn, m.accessNak(c.Verdict), fmt.Sprintf("rkey %#08x: %s", rkey, c.Describe()))
			return
		}
		qp.wrMR, qp.wrKey, qp.wrVA, qp.wrResid = c.MR, rkey, va, length
		qp.msgWrite, qp.msgPSN, qp.msgLen, qp.msgHasWQ = true, psn, 0, false
	}
	pay := uint64(len(p.Payload))
	mtu := uint64(qp.MTU)
	if qp.wrResid > mtu && (pay != mtu || p.BTH.PadCount != 0) ||
		qp.wrResid <= mtu && (pay != qp.wrResid || uint64(p.BTH.PadCount) != -qp.wrResid&3) {
		m.nak(qp, psn, decode.NakInvalidRequest, fmt.Sprintf("%d-byte payload with %d bytes of the WRITE left", pay, qp.wrResid))
		return
	}
	if pay > 0 && qp.wrMR != nil {
		m.translate(qp.QPN, qp.wrKey, qp.wrMR.MTT, qp.wrVA, pay)
		_ = qp.wrMR.MTT.Write(qp.wrVA, p.Payload)
	}
	qp.wrVA += pay
	qp.wrResid -= pay
	qp.msgLen += pay
	qp.advance(1)
	m.res.Executed = true
	if info.pos&posLast == 0 {
		qp.inMsg = true
		if p.BTH.AckReq {
			m.ack(qp, psn)
		}
		return
	}
	qp.inMsg = false
	if info.imm {
		// WRITE with immediate consumes a receive WQE and completes it.
		if _, _, ok := qp.takeRecv(ts); ok {
			m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, QPN: qp.QPN,
				Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: qp.msgPSN, ByteLen: qp.msgLen,
				Imm: p.ImmDt.Data, HasImm: p.Has&decode.HdrImmDt != 0})
		}
	}
	m.finishMsg(qp, p)
}

// finishMsg completes a SEND or WRITE message: MSN, and the ACK when asked.
func (m *Model) finishMsg(qp *QP, p *decode.Packet) {
	qp.MSN = (qp.MSN + 1) & msnMask
	if p.BTH.AckReq {
		m.ack(qp, p.BTH.PSN)
		m.completeRequester(qp, p.BTH.PSN, WCSuccess, false)
	}
}

func (m *Model) rcSend(qp *QP, p *decode.Packet, info opInfo, ts time.Time) {
	psn := p.BTH.PSN
	pay := uint64(len(p.Payload))
	if info.pos&posFirst != 0 {
		length, unlimited, _ := qp.takeRecv(ts)
		qp.msgWrite, qp.msgPSN, qp.msgLen, qp.msgHasWQ = false, psn, 0, true
		qp.msgBuf = length
		if unlimited {
			qp.msgBuf = 1<<64 - 1
		}
	}
	if qp.msgLen+pay > qp.msgBuf {
		// The message does not fit the receive buffer: the receive
		// completes in error.
		m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, QPN: qp.QPN,
			Status: WCLocLenErr, Opcode: p.BTH.Opcode, PSN: qp.msgPSN})
		code := uint8(decode.NakInvalidRequest)
		if m.Profile == ProfileRXE {
			code = decode.NakRemoteOperational
			m.res.Completions[len(m.res.Completions)-1].Status = WCLocQPOpErr
		}
		m.nak(qp, psn, code, fmt.Sprintf("%d-byte SEND into a %d-byte receive buffer", qp.msgLen+pay, qp.msgBuf))
		return
	}
	qp.msgLen += pay
	qp.advance(1)
	m.res.Executed = true
	if info.pos&posLast == 0 {
		qp.inMsg = true
		if p.BTH.AckReq {
			m.ack(qp, psn)
		}
		return
	}
	qp.inMsg = false
	c := Completion{Frame: m.frame, QPN: qp.QPN, Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: qp.msgPSN,
		ByteLen: qp.msgLen}
	if info.imm && p.Has&decode.HdrImmDt != 0 {
		c.Imm, c.HasImm = p.ImmDt.Data, true
	}
	if info.inv && p.Has&decode.HdrIETH != 0 {
		if m.Profile != ProfileRXE {
			// Observed on rxe (send_inv.expect.json): the rkey is
			// invalidated (the next WRITE with it is NAKed) but the
			// application's receive completion reports no invalidated
			// rkey, most likely because rxe sets the kernel's
			// IB_WC_WITH_INVALIDATE bit, which is not libibverbs'
			// IBV_WC_WITH_INV.
			c.InvRKey, c.HasInv = p.IETH.RKey, true
		}
		if !m.remoteInvalidate(qp, p.IETH.RKey) {
			// The invalidation fails: the receive completes in error and
			// the QP goes to the error state (the message is ACKed).
			c.Status = WCRemInvReqErr
			m.res.Completions = append(m.res.Completions, c)
			qp.MSN = (qp.MSN + 1) & msnMask
			if p.BTH.AckReq {
				m.ack(qp, psn)
				m.completeRequester(qp, psn, WCSuccess, false)
			}
			qp.State = QPError
			return
		}
	}
	m.res.Completions = append(m.res.Completions, c)
	m.finishMsg(qp, p)
}

// remoteInvalidate invalidates rkey for a SEND with Invalidate on qp: a
// type 2 window or an MR of the QP's PD.
func (m *Model) remoteInvalidate(qp *QP, rkey uint32) bool {
	if w := m.mws[rkey]; w != nil {
		if w.Type != 2 || w.PD != qp.PD || w.State != KeyValid {
			return false
		}
		return m.Invalidate(rkey)
	}
	if mr := m.byKey[rkey]; mr != nil && mr.PD == qp.PD {
		return m.Invalidate(rkey)
	}
	return false
}

func (m *Model) rcRead(qp *QP, p *decode.Packet, npsn uint32) {
	psn := p.BTH.PSN
	va, length, rkey := p.RETH.VA, uint64(p.RETH.DMALen), p.RETH.RKey
	c := m.check(qp.QPN, OpRead, rkey, va, length, false)
	m.res.Check = c
	if !c.Verdict.Allowed() {
		m.nak(qp, psn, m.accessNak(c.Verdict), fmt.Sprintf("rkey %#08x: %s", rkey, c.Describe()))
		return
	}
	qp.advance(npsn)
	qp.MSN = (qp.MSN + 1) & msnMask
	m.res.Executed = true
	res := qp.newRes()
	*res = rdRes{used: true, first: psn, n: npsn, va: va, length: length, rkey: rkey, msn: qp.MSN}
	m.readResponses(qp, c.MR, rkey, psn, va, length, false)
	m.completeRequester(qp, psn.Add(int(npsn)-1), WCSuccess, false)
}

func (qp *QP) newRes() *rdRes {
	r := &qp.res[qp.resPos]
	qp.resPos = (qp.resPos + 1) % len(qp.res)
	return r
}

// readResponses sends the READ responses for [va, va+length) from psn.
func (m *Model) readResponses(qp *QP, mr *MR, rkey uint32, psn decode.PSN, va, length uint64, dup bool) {
	mtu := uint64(qp.MTU)
	n := readPSNs(length, qp.MTU)
	if int64(n) > int64(m.readSeriesAt) {
		m.readSeries(qp, mr, rkey, psn, va, length, n, dup)
		return
	}
	for i := uint32(0); i < n; i++ {
		chunk := min(mtu, length)
		var op decode.Opcode
		switch {
		case n == 1:
			op = decode.OpReadResponseOnly
		case i == 0:
			op = decode.OpReadResponseFirst
		case i == n-1:
			op = decode.OpReadResponseLast
		default:
			op = decode.OpReadResponseMiddle
		}
		aeth := op != decode.OpReadResponseMiddle
		syn := uint8(0)
		if aeth {
			syn = synACK
		}
		r := m.respond(qp, op, psn.Add(int(i)), syn, aeth, "")
		r.Duplicate = dup
		if chunk > 0 && mr != nil {
			start := len(m.arena)
			m.arena = append(m.arena, make([]byte, chunk)...)
			m.known = append(m.known, make([]bool, chunk)...)
			data, known := m.arena[start:start+int(chunk)], m.known[start:start+int(chunk)]
			m.translate(qp.QPN, rkey, mr.MTT, va, chunk)
			if _, err := mr.MTT.Read(va, data, known); err != nil {
				clear(known)
			}
			r.Payload, r.Known = data, known
		}
		va += chunk
		length -= chunk
	}
	// Payload slices point into the arena, which append may have moved:
	// point them again at the final arena.
	m.fixPayloads()
}

func (m *Model) rcAtomic(qp *QP, p *decode.Packet) {
	psn := p.BTH.PSN
	a := &p.AtomicETH
	c := m.check(qp.QPN, OpAtomic, a.RKey, a.VA, 8, false)
	m.res.Check = c
	if !c.Verdict.Allowed() {
		m.nak(qp, psn, m.accessNak(c.Verdict), fmt.Sprintf("rkey %#08x: %s", a.RKey, c.Describe()))
		return
	}
	m.translate(qp.QPN, a.RKey, c.MR.MTT, a.VA, 8)
	var orig uint64
	var known bool
	if p.BTH.Opcode.Op() == decode.OpFetchAdd {
		orig, known, _ = c.MR.MTT.FetchAdd(a.VA, a.SwapAddData)
	} else {
		orig, known, _ = c.MR.MTT.CompareSwap(a.VA, a.CompareData, a.SwapAddData)
	}
	qp.advance(1)
	qp.MSN = (qp.MSN + 1) & msnMask
	m.res.Executed = true
	res := qp.newRes()
	*res = rdRes{used: true, atomic: true, first: psn, n: 1, va: a.VA, length: 8, rkey: a.RKey,
		orig: orig, origKnown: known, msn: qp.MSN, fetchAdd: p.BTH.Opcode.Op() == decode.OpFetchAdd,
		swapAdd: a.SwapAddData, compare: a.CompareData}
	r := m.respond(qp, decode.OpAtomicAcknowledge, psn, synACK, true, "")
	r.AtomicOrig, r.AtomicKnown = orig, known
	m.completeRequester(qp, psn, WCSuccess, false)
}

// duplicate answers a request whose PSN is before the expected PSN
// (C9-104 ff.): SEND and WRITE are acknowledged again without being
// executed, a READ is executed again from its resource, an ATOMIC's saved
// result is sent again.
func (m *Model) duplicate(qp *QP, p *decode.Packet, info opInfo) {
	psn := p.BTH.PSN
	switch {
	case info.send || info.write:
		r := m.respond(qp, decode.OpAcknowledge, qp.ExpectedPSN.Add(-1), synACK, true, "")
		r.Duplicate, r.Coalescable = true, true
	case info.read:
		for i := range qp.res {
			res := &qp.res[i]
			if !res.used || res.atomic || !psn.In(res.first, res.first.Add(int(res.n)-1)) {
				continue
			}
			va, length := p.RETH.VA, uint64(p.RETH.DMALen)
			if res.rkey != p.RETH.RKey || va < res.va || va+length > res.va+res.length {
				break
			}
			mr := m.keyMR(res.rkey)
			save := qp.MSN
			qp.MSN = res.msn
			m.readResponses(qp, mr, res.rkey, psn, va, length, true)
			qp.MSN = save
			return
		}
		m.res.Drop = DropDuplicate
	case info.atomic:
		for i := range qp.res {
			res := &qp.res[i]
			if res.used && res.atomic && res.first == psn {
				save := qp.MSN
				qp.MSN = res.msn
				r := m.respond(qp, decode.OpAtomicAcknowledge, psn, synACK, true, "")
				qp.MSN = save
				r.AtomicOrig, r.AtomicKnown, r.Duplicate = res.orig, res.origKnown, true
				return
			}
		}
		m.res.Drop = DropDuplicate
	}
}

// keyMR returns the MR behind an rkey (an MR's or an MW's).
func (m *Model) keyMR(rkey uint32) *MR {
	if w := m.mws[rkey]; w != nil {
		return w.MR
	}
	return m.byKey[rkey]
}

// uc applies the UC rules: no responses; a PSN gap or an error drops the
// message, and the QP waits for the next FIRST or ONLY.
func (m *Model) uc(qp *QP, p *decode.Packet, info opInfo, ts time.Time) {
	psn := p.BTH.PSN
	if !qp.psnKnown {
		qp.ExpectedPSN, qp.psnKnown = psn, true
	}
	if info.pos&posFirst != 0 {
		qp.reqFirst = psn
	}
	if info.pos&posLast != 0 {
		// A UC message completes on the requester once sent.
		m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, Requester: true,
			QPN: qp.destQP(), Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: qp.reqFirst})
	}
	if psn != qp.ExpectedPSN {
		qp.inMsg, qp.ucDrop = false, true
	}
	qp.ExpectedPSN = psn.Next()
	if qp.ucDrop || qp.inMsg && info.pos&posFirst != 0 || !qp.inMsg && info.pos&posFirst == 0 {
		if info.pos&posFirst == 0 {
			qp.inMsg = false
			m.res.Drop = DropUCGap
			return
		}
		qp.inMsg, qp.ucDrop = false, false
	}
	if info.read || info.atomic || (info.write && qp.Access&RemoteWrite == 0) {
		qp.ucDrop = info.pos&posLast == 0
		m.res.Drop = DropUCGap
		return
	}
	pay := uint64(len(p.Payload))
	if info.write && info.pos&posFirst != 0 {
		c := m.check(qp.QPN, OpWrite, p.RETH.RKey, p.RETH.VA, uint64(p.RETH.DMALen), false)
		m.res.Check = c
		if !c.Verdict.Allowed() {
			qp.ucDrop = info.pos&posLast == 0
			m.res.Drop = DropUCGap
			return
		}
		qp.wrMR, qp.wrKey, qp.wrVA, qp.wrResid = c.MR, p.RETH.RKey, p.RETH.VA, uint64(p.RETH.DMALen)
		qp.msgWrite, qp.msgPSN, qp.msgLen = true, psn, 0
	}
	if info.send && info.pos&posFirst != 0 {
		length, unlimited, ok := qp.takeRecv(ts)
		if !ok {
			qp.ucDrop = info.pos&posLast == 0
			m.res.Drop = DropNoReceive
			return
		}
		qp.msgWrite, qp.msgPSN, qp.msgLen, qp.msgBuf = false, psn, 0, length
		if unlimited {
			qp.msgBuf = 1<<64 - 1
		}
	}
	if info.write {
		if pay > qp.wrResid {
			qp.ucDrop, qp.inMsg = info.pos&posLast == 0, false
			m.res.Drop = DropTooLong
			return
		}
		if pay > 0 && qp.wrMR != nil {
			m.translate(qp.QPN, qp.wrKey, qp.wrMR.MTT, qp.wrVA, pay)
			_ = qp.wrMR.MTT.Write(qp.wrVA, p.Payload)
		}
		qp.wrVA += pay
		qp.wrResid -= pay
	} else if qp.msgLen+pay > qp.msgBuf {
		qp.ucDrop, qp.inMsg = info.pos&posLast == 0, false
		m.res.Drop = DropTooLong
		return
	}
	qp.msgLen += pay
	m.res.Executed = true
	if info.pos&posLast == 0 {
		qp.inMsg = true
		return
	}
	qp.inMsg = false
	qp.MSN = (qp.MSN + 1) & msnMask
	if info.send || info.imm {
		if info.write {
			if _, _, ok := qp.takeRecv(ts); !ok {
				return
			}
		}
		c := Completion{Frame: m.frame, QPN: qp.QPN, Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: qp.msgPSN, ByteLen: qp.msgLen}
		if info.imm && p.Has&decode.HdrImmDt != 0 {
			c.Imm, c.HasImm = p.ImmDt.Data, true
		}
		m.res.Completions = append(m.res.Completions, c)
	}
}

// udGRH is the room a UD receive buffer gives the GRH (or its RoCEv2
// stand-in): the receive completion's byte count includes it.
const udGRH = 40

// ud applies the UD rules: Q_Key check, a receive per message, no
// responses.
func (m *Model) ud(qp *QP, p *decode.Packet, info opInfo, ts time.Time) {
	if !info.send || info.pos != posFirst|posLast || p.Has&decode.HdrDETH == 0 {
		m.res.Drop = DropNotRequest
		return
	}
	m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, Requester: true,
		QPN: p.DETH.SrcQP, Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: p.BTH.PSN})
	if qp.hasQKey && p.DETH.QKey != qp.QKey {
		m.res.Drop = DropQKey
		return
	}
	pay := uint64(len(p.Payload))
	if pay > uint64(qp.MTU) {
		m.res.Drop = DropTooLong
		return
	}
	length, unlimited, ok := qp.takeRecv(ts)
	if !ok {
		m.res.Drop = DropNoReceive
		return
	}
	m.res.Executed = true
	c := Completion{Frame: m.frame, QPN: qp.QPN, Status: WCSuccess, Opcode: p.BTH.Opcode, PSN: p.BTH.PSN,
		ByteLen: pay + udGRH, SrcQP: p.DETH.SrcQP}
	if !unlimited && pay+udGRH > length {
		c.Status, c.ByteLen = WCLocLenErr, 0
	}
	if info.imm && p.Has&decode.HdrImmDt != 0 {
		c.Imm, c.HasImm = p.ImmDt.Data, true
	}
	m.res.Completions = append(m.res.Completions, c)
}

// translate runs the translation of [va, va+n) through the cache, one
// lookup per page, as an HCA's DMA engine does.
func (m *Model) translate(qpn, key uint32, t *MTT, va, n uint64) {
	ps := t.PageSize()
	end := va + n
	for a := va; a < end; a = (a/ps + 1) * ps {
		m.cache.Lookup(qpn, key, t, a)
	}
}

// fixPayloads re-points the READ response payloads at the arena after it
// grew.
func (m *Model) fixPayloads() {
	off := 0
	for i := range m.res.Responses {
		r := &m.res.Responses[i]
		if n := len(r.Payload); n > 0 {
			r.Payload, r.Known = m.arena[off:off+n], m.known[off:off+n]
			off += n
		}
	}
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
