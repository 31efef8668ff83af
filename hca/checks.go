package hca

// The responder's checks, in the order it makes them (rxe_resp.c's
// RESPST_CHK_* states), and the one table that says what each transport
// does with a request that fails one. docs/model.md has the same list and
// the same table (TestDocsOutcomeTable keeps them so).

import (
	"fmt"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

// outcome is what a check found: outOK, or why the request cannot go on.
type outcome uint8

// Outcomes, grouped by the check that finds them.
const (
	outOK outcome = iota

	// checkQPState
	outQPNotReady // the QP is not in RTR or RTS (never connected, reset)
	outQPError    // the QP is in the error state after an earlier error

	// checkPSN
	outPSNAhead  // the PSN is after the expected one: packets were lost
	outPSNBehind // the PSN is before the expected one: a duplicate

	// checkOpSeq
	outSeqNoFirst     // a MIDDLE or LAST with no message in progress
	outSeqInterrupted // a FIRST or ONLY, or another operation, while a message is in progress

	// checkOpValid
	outQPAccess // the QP lacks the REMOTE_WRITE, REMOTE_READ or REMOTE_ATOMIC flag the operation needs
	outQKey     // UD: the DETH's Q_Key is not the QP's

	// checkResources
	outNoRdAtomic // a READ or ATOMIC on a QP with max_dest_rd_atomic 0
	outNoReceive  // a SEND (FIRST, ONLY) or WRITE with immediate finds no receive WQE posted

	// checkLength
	outLength // the payload does not fit the MTU: ONLY > MTU, FIRST or MIDDLE ≠ MTU, LAST 0 or > MTU

	// checkRKey
	outRKey        // the MPT check failed: unknown key, invalid, other PD, window of another QP, no access, out of bounds
	outMisaligned  // an ATOMIC at an address not 8-byte aligned
	outWriteLength // a WRITE packet's payload disagrees with the bytes left of its DMA length

	// execute
	outRecvTooShort // a SEND longer than its receive buffer
	outInvalidate   // a SEND with Invalidate whose rkey cannot be invalidated

	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	outOK: "ok", outQPNotReady: "qp_not_ready", outQPError: "qp_error",
	outPSNAhead: "psn_ahead", outPSNBehind: "psn_behind",
	outSeqNoFirst: "seq_no_first", outSeqInterrupted: "seq_interrupted",
	outQPAccess: "qp_access", outQKey: "qkey",
	outNoRdAtomic: "no_rd_atomic", outNoReceive: "no_receive",
	outLength: "length",
	outRKey:   "rkey", outMisaligned: "misaligned", outWriteLength: "write_length",
	outRecvTooShort: "recv_too_short", outInvalidate: "invalidate_failed",
}

func (o outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// checkQPState: a QP takes requests in RTR and RTS only. A connected QP
// the configuration gives neither a peer nor an expected PSN never
// reached RTR (QPConfig.NeverConnected) and stays in INIT; a class A
// error left the QP in the error state.
func (m *Model) checkQPState(qp *QP, rq *request) outcome {
	switch qp.State {
	case QPRTR, QPRTS:
		return outOK
	case QPError:
		return outQPError
	}
	return outQPNotReady
}

// checkPSN compares the PSN with the one the QP expects (C9-91 ff.). UD
// checks none. UC expects the next PSN after every packet, whatever
// happens to it.
func (m *Model) checkPSN(qp *QP, rq *request) outcome {
	if qp.Type == decode.TransportUD {
		return outOK
	}
	d := rq.psn.Diff(qp.ExpectedPSN)
	if d > 0 {
		rq.why = fmt.Sprintf("PSN %#06x is ahead of the expected PSN %#06x", rq.psn, qp.ExpectedPSN)
	}
	if !qp.reliable() {
		qp.ExpectedPSN = rq.psn.Next()
	}
	switch {
	case d > 0:
		return outPSNAhead
	case d < 0:
		return outPSNBehind
	}
	qp.nakSent = false
	return outOK
}

// checkOpSeq checks the opcode against the message in progress: a MIDDLE
// or LAST continues a FIRST or MIDDLE of the same operation; a FIRST or
// ONLY starts a message when none is in progress.
func (m *Model) checkOpSeq(qp *QP, rq *request) outcome {
	start := rq.is(decode.PropStart)
	if !qp.inMsg {
		if !start {
			rq.why = rq.op.String() + " without a FIRST"
			return outSeqNoFirst
		}
		return outOK
	}
	if start || rq.is(decode.PropWrite) != qp.msgWrite || rq.is(decode.PropSend) == qp.msgWrite {
		rq.why = "a new request while a multi-packet message is in progress"
		return outSeqInterrupted
	}
	return outOK
}

// checkOpValid checks that the QP takes the operation: its own
// REMOTE_WRITE, REMOTE_READ or REMOTE_ATOMIC flag (RC, UC, XRC), or the
// Q_Key (UD).
func (m *Model) checkOpValid(qp *QP, rq *request) outcome {
	if qp.Type == decode.TransportUD {
		if qp.hasQKey && rq.p.DETH.QKey != qp.QKey {
			return outQKey
		}
		return outOK
	}
	if rq.kind != 0 && qp.Access&AccessFlag(rq.kind) == 0 {
		m.res.Check = Check{Verdict: VerdictQPAccess, Op: rq.kind}
		rq.why = fmt.Sprintf("QP %#06x lacks REMOTE_%s", qp.QPN, strings.ToUpper(rq.kind.String()))
		return outQPAccess
	}
	return outOK
}

// checkResources checks what the request consumes: a READ/ATOMIC
// resource (max_dest_rd_atomic), and for a SEND (FIRST, ONLY) or a WRITE
// with immediate a receive WQE posted by the packet's capture time.
func (m *Model) checkResources(qp *QP, rq *request) outcome {
	if rq.kind == OpRead || rq.kind == OpAtomic {
		if qp.hasMaxRdAtomic && qp.MaxDestRdAtomic == 0 {
			rq.why = "max_dest_rd_atomic is 0"
			return outNoRdAtomic
		}
	}
	if (rq.is(decode.PropSend|decode.PropStart) || rq.is(decode.PropWrite|decode.PropImm)) && !qp.peekRecv(rq.ts) {
		return outNoReceive
	}
	return outOK
}

// checkLength checks a SEND or WRITE packet's payload against the MTU:
// an ONLY carries at most the MTU, a FIRST or MIDDLE exactly the MTU, a
// LAST 1 byte to the MTU.
func (m *Model) checkLength(qp *QP, rq *request) outcome {
	if !rq.isAny(decode.PropSend | decode.PropWrite) {
		return outOK
	}
	pay, mtu := rq.payload(), uint64(qp.MTU)
	var what string
	switch start, end := rq.is(decode.PropStart), rq.is(decode.PropEnd); {
	case start && end:
		if pay > mtu {
			what = "an ONLY"
		}
	case !end:
		if pay != mtu {
			what = "a FIRST/MIDDLE"
		}
	default:
		if pay == 0 || pay > mtu {
			what = "a LAST"
		}
	}
	if what != "" {
		rq.why = fmt.Sprintf("%d-byte payload in %s packet, MTU %d", pay, what, mtu)
		return outLength
	}
	return outOK
}

// checkRKey checks the remote access a WRITE (FIRST, ONLY), READ or
// ATOMIC names against the MPT (Model.Check: key, state, PD, window's QP,
// access, bounds, atomic alignment; a zero-length READ or WRITE is not
// checked), then every WRITE packet's payload against what is left of
// the DMA length (as rxe's check_rkey ends).
func (m *Model) checkRKey(qp *QP, rq *request) outcome {
	if rq.kind != 0 && rq.is(decode.PropStart) {
		a := &rq.acc
		c := m.check(qp.QPN, rq.kind, a.RKey, a.VA, a.Len, false)
		m.res.Check = c
		if !c.Verdict.Allowed() {
			rq.why = c.Describe()
			if c.MW == nil || c.describeMW() == "" {
				// (a window's description names it by its rkey)
				rq.why = fmt.Sprintf("rkey %#08x: %s", a.RKey, rq.why)
			}
			if c.Verdict == VerdictMisaligned {
				return outMisaligned
			}
			return outRKey
		}
		rq.mr = c.MR
		if rq.kind == OpWrite {
			qp.wrMR, qp.wrKey, qp.wrVA, qp.wrResid = c.MR, a.RKey, a.VA, a.Len
		}
	}
	if rq.kind == OpWrite {
		pay, mtu, pad := rq.payload(), uint64(qp.MTU), uint64(rq.p.BTH.PadCount)
		if qp.wrResid > mtu && (pay != mtu || pad != 0) || qp.wrResid <= mtu && (pay != qp.wrResid || pad != -qp.wrResid&3) {
			rq.why = fmt.Sprintf("%d-byte payload with %d bytes of the WRITE left", pay, qp.wrResid)
			return outWriteLength
		}
	}
	return outOK
}

// fateKind is what a transport does with a request whose check failed.
type fateKind uint8

const (
	doNone       fateKind = iota // the check cannot fail on this transport
	doNAK                        // class A NAK: the QP goes to the error state, the requester's message completes in error
	doRNRNAK                     // RNR NAK with the QP's min_rnr_timer; the expected PSN does not move
	doPSNNAK                     // one NAK PSN Sequence Error with the expected PSN, then silence until it arrives
	doDuplicate                  // answer again without executing again, or drop when there is nothing to answer
	doDrop                       // silent drop; UC loses the message in progress
	doLoseMsg                    // UC: the message in progress is lost; a FIRST or ONLY goes on, anything else is dropped
	doUnanswered                 // silent drop; the requester retries until it gives up (RETRY_EXC_ERR at Finish)
	doACKError                   // the message is ACKed, then the QP goes to the error state
)

// fate is what one transport does with one failing outcome.
type fate struct {
	do fateKind
	// doNAK: the NAK code, and the one the rxe profile sends.
	code, rxeCode uint8
	// doNAK: the receive completion it leaves (0: none), per profile.
	recv, rxeRecv WCStatus
	// doDrop, doUnanswered: why.
	drop Drop
}

func nakFate(code uint8) fate { return fate{do: doNAK, code: code, rxeCode: code} }
func dropFate(d Drop) fate    { return fate{do: doDrop, drop: d} }

// fates says, for every outcome, what RC and XRC, UC and UD do.
var fates = [numOutcomes]struct{ rc, uc, ud fate }{
	outQPNotReady:     {fate{do: doUnanswered, drop: DropQPState}, dropFate(DropQPState), dropFate(DropQPState)},
	outQPError:        {dropFate(DropQPError), dropFate(DropQPError), dropFate(DropQPError)},
	outPSNAhead:       {rc: fate{do: doPSNNAK}, uc: fate{do: doLoseMsg}},
	outPSNBehind:      {rc: fate{do: doDuplicate}, uc: fate{do: doLoseMsg}},
	outSeqNoFirst:     {rc: nakFate(decode.NakInvalidRequest), uc: dropFate(DropUCGap)},
	outSeqInterrupted: {rc: nakFate(decode.NakInvalidRequest), uc: fate{do: doLoseMsg}},
	outQPAccess: {rc: fate{do: doNAK, code: decode.NakRemoteAccessError, rxeCode: decode.NakInvalidRequest},
		uc: dropFate(DropQPAccess)},
	outQKey:        {ud: dropFate(DropQKey)},
	outNoRdAtomic:  {rc: nakFate(decode.NakInvalidRequest)},
	outNoReceive:   {fate{do: doRNRNAK}, dropFate(DropNoReceive), dropFate(DropNoReceive)},
	outLength:      {nakFate(decode.NakInvalidRequest), dropFate(DropLength), dropFate(DropLength)},
	outRKey:        {rc: nakFate(decode.NakRemoteAccessError), uc: dropFate(DropRKey)},
	outMisaligned:  {rc: nakFate(decode.NakInvalidRequest)},
	outWriteLength: {rc: nakFate(decode.NakInvalidRequest), uc: dropFate(DropLength)},
	outRecvTooShort: {rc: fate{do: doNAK, code: decode.NakInvalidRequest, rxeCode: decode.NakRemoteOperational,
		recv: WCLocLenErr, rxeRecv: WCLocQPOpErr}, uc: dropFate(DropTooLong)},
	outInvalidate: {rc: fate{do: doACKError}},
}

// fateOf returns what qp's transport does with outcome o.
func fateOf(qp *QP, o outcome) fate {
	f := &fates[o]
	switch {
	case qp.reliable():
		return f.rc
	case qp.Type == decode.TransportUC:
		return f.uc
	}
	return f.ud
}

// fail carries out the fate of a failed check and reports whether the
// request goes on to the next check (UC, when a FIRST or ONLY starts a
// new message after the one in progress was lost).
func (m *Model) fail(qp *QP, rq *request, o outcome) bool {
	f := fateOf(qp, o)
	switch f.do {
	case doNAK:
		code, recv := f.code, f.recv
		if m.Profile == ProfileRXE {
			code, recv = f.rxeCode, f.rxeRecv
		}
		if recv != 0 {
			m.res.Completions = append(m.res.Completions, Completion{Frame: m.frame, QPN: qp.QPN,
				Status: recv, Opcode: rq.op, PSN: qp.msgPSN})
		}
		m.nak(qp, rq.psn, code, rq.why)
	case doRNRNAK:
		m.rnrNak(qp, rq.psn)
	case doPSNNAK:
		if qp.nakSent {
			m.res.Drop = DropPSNOutOfOrder
			break
		}
		qp.nakSent = true
		m.respond(qp, decode.OpAcknowledge, qp.ExpectedPSN, nakSyn(decode.NakPSNSequenceError), true, rq.why)
	case doDuplicate:
		m.duplicate(qp, rq)
	case doDrop:
		qp.inMsg = false
		m.res.Drop = f.drop
	case doLoseMsg:
		qp.inMsg = false
		if rq.is(decode.PropStart) {
			rq.why = "" // the new message goes on: what was lost is not its reason for anything
			return true
		}
		m.res.Drop = DropUCGap
	case doUnanswered:
		qp.track(rq, rq.psn)
		m.res.Drop = f.drop
	case doACKError:
		qp.MSN = (qp.MSN + 1) & msnMask
		m.acked(qp, rq, true)
		qp.State = QPError
	default:
		// No check returns an outcome its transport has no fate for; if
		// one did, the request is dropped and the model's bug counted.
		m.fault(&m.res, fmt.Errorf("%s QP %#06x: check outcome %s has no fate", qp.Type, qp.QPN, o))
		m.res.Drop = DropNotRequest
	}
	if m.res.Drop != DropNone {
		m.res.Why = rq.why
	}
	return false
}
