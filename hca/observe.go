package hca

import (
	"encoding/binary"

	"github.com/rocetap/rocetap/decode"
)

// Observe shows the model a response the real responder sent, so it can
// learn memory it did not know: the bytes of a READ response where the
// model's memory is unknown (never written in the capture), and the
// original value of an ATOMIC on unknown memory (and so the value the
// ATOMIC left behind). Bytes the model knows are never overwritten: a
// READ response that disagrees with them stays a divergence. Call it after
// comparing the response with the model's own.
func (m *Model) Observe(p *decode.Packet) {
	if p.Has&decode.HdrBTH == 0 || p.Flags&decode.FlagTruncated != 0 || p.ICRCStatus == decode.CRCBad {
		return
	}
	qp := m.qpByRemote(p.BTH.DestQP)
	if qp == nil {
		return
	}
	psn := p.BTH.PSN
	switch op := p.BTH.Opcode; {
	case op.Is(decode.PropReadResp):
		for i := range qp.res {
			r := &qp.res[i]
			if !r.used || r.atomic || !psn.In(r.first, r.first.Add(int(r.n)-1)) {
				continue
			}
			off := uint64(psn.Diff(r.first)) * uint64(qp.MTU)
			if off >= r.length {
				return
			}
			data := p.Payload[:min(uint64(len(p.Payload)), r.length-off)]
			if mr := m.keyMR(r.rkey); mr != nil && mr.State != KeyFree {
				m.learn(mr.MTT, r.va+off, data)
			}
			return
		}
	case op.Is(decode.PropAtomicAck):
		if p.Has&decode.HdrAtomicAckETH == 0 {
			return
		}
		for i := range qp.res {
			r := &qp.res[i]
			if !r.used || !r.atomic || r.first != psn || r.origKnown || r.learned {
				continue
			}
			r.learned = true
			mr := m.keyMR(r.rkey)
			if mr == nil || mr.State == KeyFree {
				return
			}
			orig := p.AtomicAckETH.OrigRemData
			after := orig
			switch {
			case r.fetchAdd:
				after = orig + r.swapAdd
			case orig == r.compare:
				after = r.swapAdd
			}
			// Only if the 8 bytes are still unknown: a later request may
			// have written them already.
			var b [8]byte
			var k [8]bool
			if n, err := mr.MTT.Read(r.va, b[:], k[:]); err == nil && n == 0 {
				binary.LittleEndian.PutUint64(b[:], after)
				// The Read of the same 8 bytes just succeeded.
				m.fault(nil, mr.MTT.Write(r.va, b[:]))
			}
			return
		}
	}
}

// learn writes data at va where the MTT's bytes are unknown.
func (m *Model) learn(t *MTT, va uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	if cap(m.learnKnown) < len(data) {
		m.learnKnown = make([]bool, len(data))
		m.learnBuf = make([]byte, len(data))
	}
	known := m.learnKnown[:len(data)]
	n, err := t.Read(va, m.learnBuf[:len(data)], known)
	if err != nil || n == len(data) {
		return
	}
	for i := 0; i < len(data); {
		if known[i] {
			i++
			continue
		}
		j := i
		for j < len(data) && !known[j] {
			j++
		}
		// Inside the range the Read above accepted.
		m.fault(nil, t.Write(va+uint64(i), data[i:j]))
		i = j
	}
}

// qpByRemote returns the responder QP whose peer is the requester QP qpn
// (a response's BTH.DestQP), or nil.
func (m *Model) qpByRemote(qpn uint32) *QP {
	for _, qp := range m.qpOrd {
		if qp.Remote != nil && qp.Remote.QPN == qpn && qp.reliable() {
			return qp
		}
	}
	return nil
}
