package hca

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// QP is one of the responder's queue pairs.
type QP struct {
	QPN    uint32
	PD     uint32
	Type   string // RC, UC, UD or XRC
	Access Access
	MTU    int
	State  QPState

	ExpectedPSN uint32 // the next PSN the responder expects
	psnKnown    bool   // false: taken from the first request
	MSN         uint32 // messages completed, 24 bits

	MinRNRTimer     uint8
	MaxDestRdAtomic uint8
	QKey            uint32
	hasQKey         bool
	Remote          *MPTRemote
}

func newQP(q *MPTQP) *QP {
	qp := &QP{QPN: q.QPN, PD: q.PD, Type: q.Type, Access: q.Access, MTU: q.MTU, State: QPRTS,
		ExpectedPSN: q.ExpectedPSN, psnKnown: q.HasExpectedPSN, MinRNRTimer: q.MinRNRTimer,
		MaxDestRdAtomic: q.MaxDestRdAtomic, QKey: q.QKey, hasQKey: q.HasQKey, Remote: q.Remote}
	return qp
}

// Receive feeds the model one packet the capture shows arriving at the
// responder, at capture time ts, and returns what the responder does.
func (m *Model) Receive(p *decode.Packet, ts time.Time) *Result {
	_ = p
	_ = ts
	return &Result{}
}

// Finish ends the capture: it returns the requester completions implied by
// requests that never got a final answer (RNR retry exceeded after an RNR
// NAK, transport retry exceeded when nothing answered).
func (m *Model) Finish() []Completion { return nil }
