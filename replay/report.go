package replay

import (
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// Kind is the kind of a divergence between the model and the capture.
type Kind uint8

// Divergence kinds.
const (
	// KindMissingResponse: the model answers a request, the capture has no
	// such response.
	KindMissingResponse Kind = iota + 1
	// KindExtraResponse: the capture has a response the model does not send.
	KindExtraResponse
	// KindOpcode: the response's opcode differs (READ RESPONSE First
	// instead of Only, ACK instead of ATOMIC ACK, ...).
	KindOpcode
	// KindPSN: the response answers the same request with another PSN.
	KindPSN
	// KindSyndrome: ACK versus NAK or RNR NAK, or another NAK code or
	// syndrome value.
	KindSyndrome
	// KindMSN: the AETH message sequence number differs.
	KindMSN
	// KindReadData: READ response bytes the model knows differ, or the
	// payload length does.
	KindReadData
	// KindAtomicOrig: the ATOMIC ACK's original value differs from the one
	// the model knows.
	KindAtomicOrig
	numKinds
)

var kindNames = [numKinds]string{"", "missing_response", "extra_response", "opcode", "psn", "syndrome", "msn", "read_data", "atomic_orig"}

// String returns the kind's name as in the JSON and JUnit outputs
// ("missing_response", "syndrome", ...).
func (k Kind) String() string {
	if k > 0 && k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Kinds lists every divergence kind in order.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := Kind(1); k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

// NoteKind is the kind of a note: something the responder did
// differently from the model that the rules allow, so it is reported for
// information and is not a divergence.
type NoteKind uint8

// Note kinds.
const (
	// NoteUnsolicitedACK: an ACK of a SEND or WRITE packet that did not
	// set AckReq. A responder may acknowledge any request it executed.
	NoteUnsolicitedACK NoteKind = iota + 1
	// NoteCoalescedACK: an ACK the model sends (AckReq) that the responder
	// covered with a later acknowledgement instead (C9-150).
	NoteCoalescedACK
	// NoteMSNInMessage: an ACK of a FIRST or MIDDLE packet with another
	// MSN than the messages completed before it; the MSN is checked once
	// the acknowledged message is complete.
	NoteMSNInMessage
	// NoteMemoryChanged: READ response bytes or an ATOMIC original value
	// that differ from what an earlier response showed of the same
	// memory: the responder's CPU may rewrite its buffer between two
	// remote accesses. Bytes a WRITE or ATOMIC of the capture stored stay
	// a hard check (read_data, atomic_orig).
	NoteMemoryChanged
	numNoteKinds
)

var noteKindNames = [numNoteKinds]string{"", "unsolicited_ack", "coalesced_ack", "msn_in_message", "memory_changed"}

// String returns the note kind's name as in the JSON output
// ("unsolicited_ack", ...).
func (k NoteKind) String() string {
	if k > 0 && k < numNoteKinds {
		return noteKindNames[k]
	}
	return "unknown"
}

// NoteKinds lists every note kind in order.
func NoteKinds() []NoteKind {
	out := make([]NoteKind, 0, numNoteKinds-1)
	for k := NoteKind(1); k < numNoteKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Note is one legal responder behaviour the model does not predict: the
// responder chose differently within the rules (see NoteKind).
type Note struct {
	Kind NoteKind
	// As in a Divergence; RequestFrame is the request the acknowledgement
	// or data concerns.
	Finding
}

// DroppedRequest is a request the model dropped without an answer, with
// its reason (Session.DropList, kept for sessions whose transport has no
// responses: UC).
type DroppedRequest struct {
	Frame  int
	PSN    decode.PSN
	Reason hca.Drop
	// Why is what the failing check found (hca.Result.Why), "" when the
	// reason says it all.
	Why string
}

// String is "frame 12 PSN 5: the rkey, PD, access or bounds check
// failed: rkey 0x00001234: out of bounds by 4 bytes".
func (d *DroppedRequest) String() string {
	s := "frame " + itoa(d.Frame) + " PSN " + itoa(int(d.PSN)) + ": " + d.Reason.String()
	if d.Why != "" {
		s += ": " + d.Why
	}
	return s
}

// maxDropList bounds Session.DropList.
const maxDropList = 100

// Divergence is one difference between what the model answers and what
// the responder in the capture answered.
type Divergence struct {
	Kind Kind
	Finding
}

// Finding is where and what a divergence or a note is: the fields
// Divergence and Note share.
type Finding struct {
	// Session is the ID of the session (Report.Sessions[Session-1]);
	// SessionName its name.
	Session     int
	SessionName string
	// QPN is the responder QP (HasQPN false when no responder QP is known:
	// a captured response no QP of the MPT is connected to). PeerQPN is the
	// requester's QP (HasPeerQPN).
	QPN        uint32
	HasQPN     bool
	PeerQPN    uint32
	HasPeerQPN bool
	// PSN is the model response's PSN, or the captured one's when the
	// model has none (extra responses).
	PSN decode.PSN
	// RequestFrame is the frame of the request the model answered (0 when
	// unknown: an extra response no dropped request explains);
	// ResponseFrame the captured response's frame (0 for a missing
	// response).
	RequestFrame  int
	ResponseFrame int
	// Expected is the model's value, Actual the capture's, as text (""
	// when that side has no response).
	Expected, Actual string
	// Offset and Count (read_data): the first differing byte of the
	// payload and how many of the known bytes differ.
	Offset, Count int
	// Message says it all in one line for humans, starting with the frame
	// numbers.
	Message string
}

// Frame is the frame the divergence is listed under: the request's, or
// the response's when the request is not known.
func (f *Finding) Frame() int {
	if f.RequestFrame != 0 {
		return f.RequestFrame
	}
	return f.ResponseFrame
}

// Session is what happened on one responder QP (or, for captured responses
// no QP of the MPT answers for, on one requester QP).
type Session struct {
	ID   int    // 1-based, in order of appearance (the MPT's QPs first)
	Name string // "QP 0x000011 ← 10.77.0.1 QP 0x000012"
	// QPN is the responder QP (HasQPN), InMPT whether the MPT describes
	// it and Type, when it does, its transport.
	QPN    uint32
	HasQPN bool
	Type   decode.Transport
	InMPT  bool
	// Peer is the requester: its node (an address or LID; invalid when
	// unknown) and QPN (HasPeerQPN), from the MPT's remote or learned from
	// the capture.
	PeerAddr   decode.Node
	PeerQPN    uint32
	HasPeerQPN bool

	Requests int // requests fed to the model
	Executed int // requests the model carried out
	// Dropped counts the requests the model dropped without an answer, by
	// reason (indexed by hca.Drop).
	Dropped [numDrops]int

	ModelResponses    int // responses the model sent
	CapturedResponses int // responses the capture shows
	Compared          int // pairs of model and captured responses compared
	// Coalesced: model ACKs the responder left out, covered by a later
	// acknowledgement (hca.Response.Coalescable).
	Coalesced int
	// Unsolicited: ACKs the responder sent that the model does not (no
	// AckReq), each of a packet it executed.
	Unsolicited int
	Divergences int
	Notes       int // notes about the session (Report.NoteList)

	// DropList lists the requests the model dropped, with their reasons,
	// for a UC session (UC has no responses: what the model dropped is
	// all the replay can say of it); at most 100, DropListOmitted more.
	DropList        []DroppedRequest
	DropListOmitted int
}

// NothingToCompare reports whether the session's transport sends no
// responses (UC), so the replay has nothing of its to compare.
func (s *Session) NothingToCompare() bool {
	return s.InMPT && s.Type == decode.TransportUC
}

// typeName is the session's transport, or "-" when the MPT does not
// describe its QP.
func (s *Session) typeName() string {
	if !s.InMPT {
		return "-"
	}
	return s.Type.String()
}

// numDrops bounds hca.Drop values.
const numDrops = 32

// DropCount is one reason for dropping requests, with its count.
type DropCount struct {
	Reason hca.Drop
	Count  int
}

// Drops lists the reasons the model dropped requests, most frequent first.
func (s *Session) Drops() []DropCount {
	var out []DropCount
	for d, n := range s.Dropped {
		if n > 0 && d != int(hca.DropNone) {
			out = append(out, DropCount{hca.Drop(d), n})
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Count > out[j-1].Count; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Ignored counts the packets that are neither requests to the responder
// nor its responses.
type Ignored struct {
	NotRDMA    int // no InfiniBand transport (not RoCE, or undecodable)
	Management int // QP0/QP1: subnet management and CM MADs
	CNP        int // congestion notification packets
	// OtherHosts: between two other hosts. NoAddress: no IP header, GRH
	// or LRH (no node to compare with the responder).
	OtherHosts int
	NoAddress  int
	// Reverse: the responder acting as a requester (its requests, the
	// responses it gets).
	Reverse int
	// Filtered: left out by the display filter (-Y).
	Filtered int
}

// Total returns the number of packets ignored.
func (g *Ignored) Total() int {
	return g.NotRDMA + g.Management + g.CNP + g.OtherHosts + g.NoAddress + g.Reverse + g.Filtered
}

// Completions are the work completions the model predicts: what the
// applications on both sides would see.
type Completions struct {
	// Requester and Responder count completions by status (indexed by
	// hca.WCStatus).
	Requester, Responder [256]int
	// List holds the completions in the order the model made them, up to
	// Options.MaxCompletions; Omitted counts those left out.
	List    []hca.Completion
	Omitted int
}

// Total returns the number of completions.
func (c *Completions) Total() int {
	n := 0
	for i := range c.Requester {
		n += c.Requester[i] + c.Responder[i]
	}
	return n
}

// Report is the outcome of a replay.
type Report struct {
	// Capture, MPT and Profile name the inputs (from Options, for the
	// outputs); Responder is the node replayed.
	Capture, MPT, Profile string
	Responder             decode.Node

	Packets           int // packets seen
	Requests          int // requests fed to the model
	ModelResponses    int
	CapturedResponses int
	Compared          int // pairs compared
	Ignored           Ignored
	// CutShort: the capture ended early (Replayer.CutShort); NotCompared
	// model responses were still waiting for theirs.
	CutShort    bool
	NotCompared int

	Sessions []*Session
	// Divergences holds the first Options.MaxDivergences divergences,
	// sorted by frame; DivergenceCount counts them all, ByKind by kind.
	Divergences        []Divergence
	DivergenceCount    int
	ByKind             [numKinds]int
	DivergencesOmitted int

	// NoteList holds the first Options.MaxNotes notes, sorted by frame;
	// NoteCount counts them all, NotesByKind by kind. Notes are legal
	// behaviour the model does not predict: they never fail a replay.
	NoteList     []Note
	NoteCount    int
	NotesByKind  [numNoteKinds]int
	NotesOmitted int

	Completions Completions

	// Cache is how the accesses used the model's translation cache (nil
	// when the model has none).
	Cache *CacheReport

	// RequestHosts lists (up to 8) nodes the capture's RDMA requests went
	// to, so a replay against the wrong address can say which addresses
	// would work.
	RequestHosts []decode.Node
}

// Pass reports whether the capture and the model agree.
func (r *Report) Pass() bool { return r.DivergenceCount == 0 }
