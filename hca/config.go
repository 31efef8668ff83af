package hca

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Config is what one responder has registered when the model starts: its
// protection domains, QPs, memory regions and bound memory windows.
// NewModel builds the model from it. Package mpt reads and writes it as
// the MPT file (docs/mpt-format.md); the model knows no file format.
type Config struct {
	// Responder is the node whose HCA is modeled: its IP address or GID,
	// or on native InfiniBand without GRHs its LID.
	Responder decode.Node
	PDs       []PDConfig
	QPs       []QPConfig
	MRs       []MRConfig
	MWs       []MWConfig
}

// PDConfig is a protection domain.
type PDConfig struct {
	ID uint32
}

// QPConfig is one of the responder's queue pairs. The Has* fields say
// whether the optional value next to them is given.
type QPConfig struct {
	QPN    uint32 // 24 bits
	PD     uint32
	Type   decode.Transport // RC, UC, UD or XRC
	Access Access           // QP-level remote access flags
	MTU    int              // 256, 512, 1024, 2048 or 4096; 0 is 1024

	// ExpectedPSN is the next PSN the QP expects; without it the QP
	// takes the first request's.
	ExpectedPSN    decode.PSN
	HasExpectedPSN bool
	// RQDepth is the number of receive WQEs posted; 0 means every SEND
	// meets an empty queue.
	RQDepth            uint32
	HasRQDepth         bool
	MaxDestRdAtomic    uint8
	HasMaxDestRdAtomic bool
	MinRNRTimer        uint8 // the 5-bit code, not milliseconds
	HasMinRNRTimer     bool
	QKey               uint32
	HasQKey            bool

	Remote *Peer // nil when not known

	// Recv lists the posted receive WQEs in posting order. HasRecv false
	// means a receive is always available; HasRecv with an empty Recv
	// means none was ever posted.
	Recv    []RecvWQE
	HasRecv bool
}

// NeverConnected reports whether a connected QP (RC, UC, XRC) has neither
// a peer nor an expected PSN: it never reached RTR, and drops everything,
// as a QP left in INIT does. The model starts such a QP in INIT; `rocetap
// mpt check` says so.
func (q *QPConfig) NeverConnected() bool {
	return q.Type.Connected() && q.Remote == nil && !q.HasExpectedPSN
}

// Peer is the peer of a connected QP.
type Peer struct {
	Addr decode.Node // an IP address, GID or LID, as Config.Responder
	QPN  uint32
}

// RecvWQE is one posted receive work request.
type RecvWQE struct {
	Length uint64 // buffer length in bytes
	// PostedAt is when it was posted, on the capture's clock (UTC).
	PostedAt    time.Time
	HasPostedAt bool
}

// MRConfig is a registered memory region.
type MRConfig struct {
	RKey   uint32 // 0 for MRs without remote access on rxe
	LKey   uint32
	VA     uint64 // first byte, or 0 with ZeroBased
	Length uint64
	PD     uint32
	Access Access
}

// MWConfig is a memory window bound when the model starts.
type MWConfig struct {
	RKey   uint32
	Type   int // 1 or 2
	VA     uint64
	Length uint64
	PD     uint32
	Access Access
	MRRKey uint32 // rkey of the MR it is bound to
	QPN    uint32 // type 2: the QP it is bound to
	HasQPN bool
}
