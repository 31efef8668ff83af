package hca

// Executing a request that passed every check (rxe_resp.c's EXECUTE and
// the states after it): the data moves, the receive completes, the
// expected PSN and the MSN advance, and the responses are sent. A
// duplicate is answered here too, without executing it again.

import (
	"fmt"

	"github.com/rocetap/rocetap/decode"
)

// execute carries out a request that passed every check.
// readResponse is the READ response family; InMessage picks FIRST,
// MIDDLE, LAST or ONLY (respond gives it the QP's transport).
const readResponse = decode.Opcode(decode.OpReadResponseFirst)

func (m *Model) execute(qp *QP, rq *request) {
	switch {
	case rq.is(decode.PropWrite):
		m.executeWrite(qp, rq)
	case rq.is(decode.PropSend) && qp.Type == decode.TransportUD:
		m.executeUD(qp, rq)
	case rq.is(decode.PropSend):
		m.executeSend(qp, rq)
	case rq.is(decode.PropRead):
		m.executeRead(qp, rq)
	case rq.is(decode.PropAtomic):
		m.executeAtomic(qp, rq)
	}
}

// accept marks the request executed; on RC and XRC the expected PSN
// moves past the n PSNs it used (UC moved it in checkPSN already).
func (m *Model) accept(qp *QP, n uint32) {
	m.res.Executed = true
	if qp.reliable() {
		qp.ExpectedPSN = qp.ExpectedPSN.Add(int(n))
	}
}

// delivered accepts a SEND or WRITE packet whose payload has been placed
// and reports whether it ends its message. A FIRST or MIDDLE leaves the
// message in progress, acknowledged on RC and XRC when the packet asks.
func (m *Model) delivered(qp *QP, rq *request) (last bool) {
	qp.msgLen += rq.payload()
	m.accept(qp, 1)
	if !rq.is(decode.PropEnd) {
		qp.inMsg = true
		if qp.reliable() {
			m.acked(qp, rq, false)
		}
		return false
	}
	qp.inMsg = false
	return true
}

// finishMsg completes a SEND or WRITE message: the MSN counts it, and on
// RC and XRC it is acknowledged when the last packet asks for it.
func (m *Model) finishMsg(qp *QP, rq *request) {
	qp.MSN = (qp.MSN + 1) & msnMask
	if qp.reliable() {
		m.acked(qp, rq, true)
	}
}

// recvDone appends the receive completion of the message that ends with
// rq.
func (m *Model) recvDone(qp *QP, rq *request) *Completion {
	c := Completion{Frame: m.frame, QPN: qp.QPN, Status: WCSuccess, Opcode: rq.op, PSN: qp.msgPSN, ByteLen: qp.msgLen}
	if rq.is(decode.PropImm) && rq.p.Has&decode.HdrImmDt != 0 {
		c.Imm, c.HasImm = rq.p.ImmDt.Data, true
	}
	m.res.Completions = append(m.res.Completions, c)
	return &m.res.Completions[len(m.res.Completions)-1]
}

// executeWrite stores a WRITE packet's payload where checkRKey placed the
// message (RC, XRC, UC).
func (m *Model) executeWrite(qp *QP, rq *request) {
	if rq.is(decode.PropStart) {
		qp.msgWrite, qp.msgPSN, qp.msgLen = true, rq.psn, 0
	}
	pay := rq.payload()
	if pay > 0 && qp.wrMR != nil {
		m.translate(qp.QPN, qp.wrKey, qp.wrMR.MTT, qp.wrVA, pay)
		// checkRKey put [wrVA, wrVA+pay) inside the MR.
		m.fault(&m.res, qp.wrMR.MTT.Write(qp.wrVA, rq.p.Payload))
	}
	qp.wrVA += pay
	qp.wrResid -= pay
	if !m.delivered(qp, rq) {
		return
	}
	if rq.is(decode.PropImm) {
		// WRITE with immediate consumes a receive WQE (checkResources
		// found one) and completes it.
		if _, _, ok := qp.takeRecv(rq.ts); ok {
			m.recvDone(qp, rq)
		}
	}
	m.finishMsg(qp, rq)
}

// executeSend places a SEND packet's payload in the receive WQE its FIRST
// or ONLY took (RC, XRC, UC).
func (m *Model) executeSend(qp *QP, rq *request) {
	pay := rq.payload()
	if rq.is(decode.PropStart) {
		length, unlimited, _ := qp.takeRecv(rq.ts) // checkResources found one
		qp.msgWrite, qp.msgPSN, qp.msgLen = false, rq.psn, 0
		qp.msgBuf = length
		if unlimited {
			qp.msgBuf = 1<<64 - 1
		}
	}
	if qp.msgLen+pay > qp.msgBuf {
		rq.why = fmt.Sprintf("%d-byte SEND into a %d-byte receive buffer", qp.msgLen+pay, qp.msgBuf)
		m.fail(qp, rq, outRecvTooShort)
		return
	}
	if !m.delivered(qp, rq) {
		return
	}
	c := m.recvDone(qp, rq)
	if rq.is(decode.PropInv) && rq.p.Has&decode.HdrIETH != 0 {
		rkey := rq.p.IETH.RKey
		if m.Profile != ProfileRXE {
			// Observed on rxe (send_inv.expect.json): the rkey is
			// invalidated (the next WRITE with it is NAKed) but the
			// application's receive completion reports no invalidated
			// rkey, most likely because rxe sets the kernel's
			// IB_WC_WITH_INVALIDATE bit, which is not libibverbs'
			// IBV_WC_WITH_INV.
			c.InvRKey, c.HasInv = rkey, true
		}
		if !m.remoteInvalidate(qp, rkey) {
			// The receive completes in error; the message itself was
			// delivered.
			c.Status = WCRemInvReqErr
			m.fail(qp, rq, outInvalidate)
			return
		}
	}
	m.finishMsg(qp, rq)
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
	if mr := m.mrs.byKey(rkey); mr != nil && mr.PD == qp.PD {
		return m.Invalidate(rkey)
	}
	return false
}

// executeRead answers a READ with its responses and keeps it as a
// resource for a duplicate (RC, XRC).
func (m *Model) executeRead(qp *QP, rq *request) {
	a := &rq.acc
	m.accept(qp, rq.npsn)
	qp.MSN = (qp.MSN + 1) & msnMask
	res := qp.newRes()
	*res = rdRes{used: true, first: rq.psn, n: rq.npsn, va: a.VA, length: a.Len, rkey: a.RKey, msn: qp.MSN}
	m.readResponses(qp, rq.mr, a.RKey, rq.psn, a.VA, a.Len, false)
	m.completeRequester(qp, rq.psn.Add(int(rq.npsn)-1), WCSuccess, false)
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
		op := readResponse.InMessage(int(i), int(n))
		aeth := !op.Is(decode.PropMiddle)
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
			switch _, nLearned, err := mr.MTT.readState(va, data, known, nil); {
			case err != nil:
				clear(known) // nothing the model cannot read is compared
			case nLearned == int(chunk) && chunk <= uint64(len(allLearned)):
				// Memory read again that only responses showed: no mask
				// to build.
				r.Learned, r.AllLearned = allLearned[:chunk:chunk], true
			case nLearned > 0:
				// Learned and written bytes mixed: which are which.
				r.Learned = m.learnedMask(start, int(chunk))
				mr.MTT.readState(va, data, known, r.Learned) // the range read a moment ago
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

// learnedMask returns the learned mask of arena bytes [start, start+n),
// growing m.learned (which stays shorter than the arena until a response
// has learned bytes) to cover them.
func (m *Model) learnedMask(start, n int) []bool {
	if len(m.learned) < start {
		m.learned = append(m.learned, make([]bool, start-len(m.learned))...)
	}
	m.learned = append(m.learned[:start], make([]bool, n)...)
	return m.learned[start : start+n]
}

// executeAtomic carries out a CMP_SWAP or FETCH_ADD on the 8 bytes
// checkRKey found, answers the original value and keeps it for a
// duplicate (RC, XRC).
func (m *Model) executeAtomic(qp *QP, rq *request) {
	a := &rq.p.AtomicETH
	va, rkey := rq.acc.VA, rq.acc.RKey
	fetchAdd := rq.op.Op() == decode.OpFetchAdd // the one thing the opcode table does not tell apart
	m.translate(qp.QPN, rkey, rq.mr.MTT, va, 8)
	op := compareSwap(a.CompareData, a.SwapAddData)
	if fetchAdd {
		op = func(v uint64) uint64 { return v + a.SwapAddData }
	}
	// checkRKey found the 8 bytes aligned and inside the MR.
	orig, known, learned, err := rq.mr.MTT.atomic(va, op)
	m.fault(&m.res, err)
	m.accept(qp, 1)
	qp.MSN = (qp.MSN + 1) & msnMask
	res := qp.newRes()
	*res = rdRes{used: true, atomic: true, first: rq.psn, n: 1, va: va, length: 8, rkey: rkey,
		orig: orig, origKnown: known, origLearned: learned, msn: qp.MSN, fetchAdd: fetchAdd, swapAdd: a.SwapAddData, compare: a.CompareData}
	r := m.respond(qp, decode.OpAtomicAcknowledge, rq.psn, synACK, true, "")
	r.AtomicOrig, r.AtomicKnown, r.AtomicLearned = orig, known, learned
	m.completeRequester(qp, rq.psn, WCSuccess, false)
}

// duplicate answers a request whose PSN is before the expected PSN
// (C9-104 ff.): SEND and WRITE are acknowledged again without being
// executed, a READ is executed again from its resource, an ATOMIC's saved
// result is sent again.
func (m *Model) duplicate(qp *QP, rq *request) {
	psn := rq.psn
	switch {
	case rq.isAny(decode.PropSend | decode.PropWrite):
		r := m.respond(qp, decode.OpAcknowledge, qp.ExpectedPSN.Add(-1), synACK, true, "")
		r.Duplicate, r.Coalescable = true, true
	case rq.is(decode.PropRead):
		for i := range qp.res {
			res := &qp.res[i]
			if !res.used || res.atomic || !psn.In(res.first, res.first.Add(int(res.n)-1)) {
				continue
			}
			va, length := rq.acc.VA, rq.acc.Len
			if res.rkey != rq.acc.RKey || va < res.va || va-res.va > res.length || length > res.length-(va-res.va) { // no sum that may pass 2^64
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
	case rq.is(decode.PropAtomic):
		for i := range qp.res {
			res := &qp.res[i]
			if res.used && res.atomic && res.first == psn {
				save := qp.MSN
				qp.MSN = res.msn
				r := m.respond(qp, decode.OpAtomicAcknowledge, psn, synACK, true, "")
				qp.MSN = save
				r.AtomicOrig, r.AtomicKnown, r.AtomicLearned, r.Duplicate = res.orig, res.origKnown, res.origLearned, true
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
	return m.mrs.byKey(rkey)
}

// udGRH is the room a UD receive buffer gives the GRH (or its RoCEv2
// stand-in): the receive completion's byte count includes it.
const udGRH = 40

// executeUD delivers a UD SEND into the receive WQE checkResources found;
// a message longer than the buffer completes it with LOC_LEN_ERR.
func (m *Model) executeUD(qp *QP, rq *request) {
	length, unlimited, _ := qp.takeRecv(rq.ts)
	m.res.Executed = true
	pay := rq.payload()
	c := Completion{Frame: m.frame, QPN: qp.QPN, Status: WCSuccess, Opcode: rq.op, PSN: rq.psn,
		ByteLen: pay + udGRH, SrcQP: rq.p.DETH.SrcQP}
	if !unlimited && pay+udGRH > length {
		c.Status, c.ByteLen = WCLocLenErr, 0
	}
	if rq.is(decode.PropImm) && rq.p.Has&decode.HdrImmDt != 0 {
		c.Imm, c.HasImm = rq.p.ImmDt.Data, true
	}
	m.res.Completions = append(m.res.Completions, c)
}

// translate runs the translation of [va, va+n) through the cache, one
// lookup per page, as an HCA's DMA engine does.
func (m *Model) translate(qpn, key uint32, t *MTT, va, n uint64) {
	ps := t.PageSize()
	// Page by page, counting what is left: va+n may be 2^64 (an MR at the
	// top of memory), where an end address wraps to 0.
	for a, left := va, n; left > 0; {
		m.cache.Lookup(qpn, key, t, a)
		step := ps - a%ps
		if step >= left {
			break
		}
		a, left = a+step, left-step
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
			if r.Learned != nil && &r.Learned[0] != &allLearned[0] {
				r.Learned = m.learned[off : off+n]
			}
			off += n
		}
	}
}

// fault records an error of the emulated memory (MTT write, atomic,
// segments, deregistration) that the model's own checks should have made
// impossible: the rkey and bounds checks passed, yet the MTT refused.
// It happens when an MR is deregistered (DeregisterMR) while a
// multi-packet WRITE into it is in flight, or through a bug in the
// model. It never changes what the responder answers (the bytes are just
// not stored); it is counted (Faults) and, during Receive, reported in
// the Result (r not nil).
func (m *Model) fault(r *Result, err error) {
	if err == nil {
		return
	}
	m.faults++
	if m.firstFault == nil {
		m.firstFault = err
	}
	if r != nil && r.Fault == nil {
		r.Fault = err
	}
}

// Faults returns how many errors of the emulated memory the model met
// after its checks had accepted the access, and the first of them (see
// Result.Fault). Zero unless an MR was deregistered under a request in
// flight or the model has a bug.
func (m *Model) Faults() (n int, first error) { return m.faults, m.firstFault }
