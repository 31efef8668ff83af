package hca

import (
	"encoding/binary"

	"github.com/rocetap/rocetap/decode"
)

// Observe shows the model a response the real responder sent, so it can
// learn memory it did not know: the bytes of a READ response where the
// model's memory is unknown (never written in the capture) or only
// learned before, and the original value of an ATOMIC on such memory
// (and so the value the ATOMIC left behind). What it learns is an
// expectation, not a fact (MTT.Learn): the responder's CPU owns its
// memory and may change it between two READs, so a later response that
// disagrees replaces it. Bytes requests of the capture wrote are never
// overwritten: a READ response that disagrees with them stays a
// divergence. Call it after comparing the response with the model's own.
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
			if mr := m.keyMR(r.rkey); mr != nil && mr.State != KeyFree && len(data) > 0 {
				// Inside the MR: the READ's range passed checkRKey.
				m.fault(nil, mr.MTT.Learn(r.va+off, data))
			}
			return
		}
	case op.Is(decode.PropAtomicAck):
		if p.Has&decode.HdrAtomicAckETH == 0 {
			return
		}
		for i := range qp.res {
			r := &qp.res[i]
			if !r.used || !r.atomic || r.first != psn || r.origKnown && !r.origLearned || r.learned {
				continue
			}
			r.learned = true
			mr := m.keyMR(r.rkey)
			if mr == nil || mr.State == KeyFree {
				return
			}
			orig := p.AtomicAckETH.OrigRemData
			after, wrote := orig, true
			switch {
			case r.fetchAdd:
				after = orig + r.swapAdd
			case orig == r.compare:
				after = r.swapAdd
			default:
				wrote = false // a compare that failed only showed the value
			}
			// Only if no request wrote the 8 bytes since (they are
			// unknown, or learned, as the model's own ATOMIC on learned
			// memory left them).
			var b [8]byte
			if nKnown, nLearned, err := mr.MTT.ReadState(r.va, b[:], nil, nil); err == nil && nKnown == nLearned {
				binary.LittleEndian.PutUint64(b[:], after)
				// The read of the same 8 bytes just succeeded. What the
				// ATOMIC wrote is a fact, what it only showed is learned.
				if wrote {
					m.fault(nil, mr.MTT.Write(r.va, b[:]))
				} else {
					m.fault(nil, mr.MTT.Learn(r.va, b[:]))
				}
			}
			return
		}
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
