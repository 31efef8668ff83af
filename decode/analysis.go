package decode

import "time"

// Analysis is what a stateful tracker (package flow) found about a packet in
// the context of its session: the fields under rocetap.session.*,
// rocetap.msg.*, rocetap.analysis.* and rocetap.expert.*. Decode clears it;
// the tracker fills it. Frame numbers are 1-based; 0 means "none".
//
// decode owns only the shape of the findings and their field names, so the
// filter, -T fields and JSON see them like any other field; the rules that
// produce them live in package flow.
//
// Reset clears it for every packet: a small field goes where the
// alignment of the next one leaves room (Missing, QPError, Retries), so
// the struct does not grow.
type Analysis struct {
	Tracked bool   // a tracker looked at this packet (the fields exist only then)
	Session uint32 // session ID, 1-based in order of first appearance
	Learned Pairing
	Dir     Direction

	Events Event // findings, see the Event constants

	// PSN analysis of requests (and of responses against the requests).
	ExpectedPSN PSN // the PSN the stream expected next
	HasExpected bool
	Lost        uint32 // PSNs missing before this one (EventPSNGap)
	// Missing is, on a packet with EventIncomplete, how many PSNs of the
	// incomplete message the capture lacks.
	Missing    uint32
	OrigFrame  int // retransmission/duplicate/out-of-order: first frame with this PSN
	CauseFrame int // retransmission: the NAK or RNR NAK that asked for it
	Cause      RetransCause
	MTU        uint32 // path MTU inferred for the session (0: not known yet)

	// Responses: the request they answer and the time since it was sent.
	RequestFrame int
	RTT          time.Duration
	HasRTT       bool
	// QPError is set on the packets of a session sent to a QP that likely
	// went to the error state: the event that said so (EventRetryExc or
	// EventRNRRetryExc).
	QPError Event
	// Acked are the frames of the requests (the last packet of each
	// message) this response completes; several for a coalesced ACK. The
	// slice is reused from packet to packet.
	Acked []int

	// Message reassembly, set on the packet that completes a message.
	MsgKind MsgKind
	// Retries is, on a packet with EventRetryExc or EventRNRRetryExc, how
	// many times the requester sent the PSN again before it went silent.
	Retries    uint32
	MsgLength  uint64
	MsgFirst   int // frame of the message's first packet
	MsgPackets uint32
	MsgPartial bool // the message started before the capture did, or packets of it are missing

	// MPT is the check of the packet's remote access against the
	// responder's memory protection table (rocetap.mpt.*), when the
	// tracker was given one.
	MPT MPTCheck

	// MAD is the request/response match of a MAD and the RMPP
	// reassembly (rocetap.mad.*, rocetap.rmpp.*).
	MAD MADAnalysis
	// ULP is what the tracker's upper-layer protocol linker found about
	// the packet (NVMe-oF, RPC-over-RDMA, ...), nil when its connection
	// carries none; owned by the tracker, valid until the next packet.
	ULP *ULPInfo
	// Fabric is the fabric-health analysis (rocetap.cc.*, rocetap.pfc.*).
	Fabric Fabric
}

// Reset clears the analysis, keeping the Acked buffer.
func (a *Analysis) Reset() {
	acked := a.Acked[:0]
	*a = Analysis{Acked: acked}
}

// MPTCheck is what the tracker found checking a packet against an MPT. On
// a request it is the check of the RETH, AtomicETH or IETH access the
// packet carries, in the first transmission of that request; on a response
// (ACK, NAK, READ response, ATOMIC ACK) only Finding is set: how the
// responder's answer compares with the checks of the requests it answers.
//
// decode knows only the shape: the verdicts are package hca's (Verdict is
// an hca.Verdict and VerdictName its String), filled in by package flow.
// Every field is a value or a constant string, so filling it allocates
// nothing except Why.
type MPTCheck struct {
	Checked     bool  // the packet's access was checked (fields exist only then)
	Allowed     bool  // a responder following the MPT executes the access
	Window      bool  // the rkey names a memory window
	HasMR       bool  // MR is known
	HasRange    bool  // the key was found: Base and Size are the range it grants
	HasOffset   bool  // Offset is known (the VA is at or after Base)
	HasPA       bool  // PA is known (the first byte is inside the MR)
	HasCache    bool  // the first byte went through the translation cache: CacheHit is known
	CacheHit    bool  // the translation cache held the first page
	Op          MPTOp // the kind of access
	Verdict     uint8 // an hca.Verdict
	Finding     MPTFinding
	RKey        uint32 // the rkey the request names
	MR          uint32 // rkey of the MR behind the key (for a window, the MR it is bound to)
	VerdictName string // hca.Verdict.String(): "ok", "out_of_bounds", ...
	Why         string // a forbidden access: the verdict in words ("out of bounds by 256 bytes")
	Base, Size  uint64 // the range the key grants (the MR's or the window's)
	Offset      uint64 // the access's offset from Base
	PA          uint64 // physical address of the first byte
	Over        uint64 // bytes of the access outside the range
}

// MPTOp is the kind of remote access an MPT check is about.
type MPTOp uint8

// Remote access kinds.
const (
	MPTOpNone       MPTOp = iota
	MPTOpRead             // RDMA READ request (RETH)
	MPTOpWrite            // RDMA WRITE FIRST or ONLY (RETH)
	MPTOpAtomic           // CmpSwap, FetchAdd (AtomicETH)
	MPTOpInvalidate       // SEND with Invalidate (IETH)
)

var mptOpNames = [...]string{"", "read", "write", "atomic", "invalidate"}

func (o MPTOp) String() string {
	if int(o) < len(mptOpNames) {
		return mptOpNames[o]
	}
	return "?"
}

// MPTFinding is how a packet relates to the MPT check of a request.
type MPTFinding uint8

// MPT findings.
const (
	MPTFindingNone MPTFinding = iota
	// MPTViolation: a request whose access the MPT forbids.
	MPTViolation
	// MPTAgrees: a response that does what the MPT says: it answers an
	// allowed access, or NAKs a forbidden one.
	MPTAgrees
	// MPTRejected: a NAK of an access the MPT allows.
	MPTRejected
	// MPTAccepted: a response that executes an access the MPT forbids.
	MPTAccepted
)

var mptFindingNames = [...]string{"", "violation", "agrees", "rejected", "accepted"}

func (f MPTFinding) String() string {
	if int(f) < len(mptFindingNames) {
		return mptFindingNames[f]
	}
	return "?"
}

// Pairing says how the tracker learned which two QPs form a session.
type Pairing uint8

// Pairings.
const (
	PairingNone     Pairing = iota // one direction seen so far
	PairingCM                      // CM REQ/REP (or SIDR REQ/REP) carried both QPNs
	PairingResponse                // a response matched an outstanding request
	PairingUD                      // UD: a flow of datagrams, no pairing
)

var pairingNames = [...]string{"unpaired", "cm", "response", "ud"}

func (p Pairing) String() string {
	if int(p) < len(pairingNames) {
		return pairingNames[p]
	}
	return "unknown"
}

// Direction is which side of the session sent the packet.
type Direction uint8

// Directions: A is the side that sent the session's first request (or the
// CM REQ), B the other.
const (
	DirAToB Direction = iota
	DirBToA
)

// RetransCause is why a packet was sent again.
type RetransCause uint8

// Retransmission causes.
const (
	CauseNone    RetransCause = iota
	CauseNAK                  // NAK PSN sequence error: go-back-N
	CauseRNR                  // RNR NAK
	CauseTimeout              // no answer within the transport timer
)

var causeNames = [...]string{"", "nak", "rnr", "timeout"}

func (c RetransCause) String() string { return causeNames[c&3] }

// MsgKind is the kind of message, as the statistics count them.
type MsgKind uint8

// Message kinds.
const (
	MsgNone MsgKind = iota
	MsgSend
	MsgSendImm
	MsgSendInv
	MsgWrite
	MsgWriteImm
	MsgRead
	MsgAtomic
	MsgOther // FLUSH, ATOMIC WRITE, RESYNC
	NumMsgKinds
)

var msgKindNames = [...]string{"", "SEND", "SEND_IMM", "SEND_INV", "WRITE", "WRITE_IMM", "READ", "ATOMIC", "OTHER"}

func (k MsgKind) String() string {
	if int(k) < len(msgKindNames) {
		return msgKindNames[k]
	}
	return "?"
}

// Severity is an expert event's severity, as Wireshark's expert info has them.
type Severity uint8

// Severities, lowest first.
const (
	SevChat Severity = iota
	SevNote
	SevWarning
	SevError
)

var sevNames = [...]string{"chat", "note", "warning", "error"}

func (s Severity) String() string { return sevNames[s&3] }

// Event is a bit set of findings about one packet.
type Event uint64

// Events. Each is an expert event kind (see EventInfo) and a boolean field
// rocetap.analysis.<name>.
const (
	EventPSNGap            Event = 1 << iota // PSNs skipped: packets lost before the capture point
	EventRetransmission                      // a PSN sent again by the requester
	EventDuplicate                           // a PSN seen again with no NAK or timeout to explain it
	EventOutOfOrder                          // a PSN older than expected that had not been seen
	EventNAK                                 // NAK: PSN sequence error, invalid request, access or operational error
	EventRNRNak                              // RNR NAK: receiver not ready
	EventAckCoalesced                        // one ACK completes several requests
	EventUnmatched                           // a response with no outstanding request (lost, or before the capture)
	EventMidStream                           // the session or message started before the capture: context unknown
	EventOpcodeSeq                           // FIRST/MIDDLE/LAST out of sequence
	EventCNP                                 // congestion notification packet
	EventECNCE                               // IP ECN Congestion Experienced
	EventICRCBad                             // ICRC wrong
	EventTruncated                           // cut short by the capture: analysis partial
	EventConnect                             // CM: connection request, reply, ready to use
	EventDisconnect                          // CM: disconnect request/reply
	EventReject                              // CM: connection rejected
	EventNoResponse                          // a request that was never answered (reported at the end)
	EventMPTViolation                        // a request the MPT forbids (rkey, bounds, access, PD, ...)
	EventMPTAccepted                         // the responder executed an access the MPT forbids
	EventMPTRejected                         // the responder NAKed an access the MPT allows
	EventIncomplete                          // a message that will not complete in the capture: PSNs of it are missing
	EventRetryExc                            // likely: the requester gave up resending a PSN nobody answered (transport retry counter exceeded)
	EventRNRRetryExc                         // likely: the requester gave up after RNR NAKs (RNR retry counter exceeded)
	EventMADStatus                           // a MAD response whose status reports an error
	EventMADTrap                             // a MAD Trap(): a notice sent to the subnet manager
	EventMADNoResponse                       // a MAD request (SA query, SMP Get, CM REQ, ...) never answered (reported at the end)
	EventULPError                            // ULP: a completion or reply with an error status
	EventULPNoCommand                        // ULP: a completion or reply that matches no outstanding command
	EventULPNoCompletion                     // ULP: a command never completed in the capture (reported at the end)
	EventULPLength                           // ULP: the data moved differs from the command's length
	EventULPKeyInvalidated                   // ULP: a key used after it was invalidated
	EventULPOutside                          // ULP: a data transfer outside the command's buffer (SGL, chunk)
	EventCEWithoutCNP                        // a CE mark the receiver answered with no CNP in time (rocetap.cc.*)
	EventCNPWithoutCE                        // a CNP with no CE mark of its flow before it
	EventNoRateCut                           // the sender did not slow down after a CNP
	EventCNPUnknownQP                        // a CNP to a QP no flow of the capture has
	EventPFCStorm                            // a priority paused continuously past the storm threshold (rocetap.pfc.*)
	EventPFCPaused                           // RoCE traffic of a priority sent while it was paused
	EventPFCUnusedPrio                       // pause frames for a priority that carries no RoCE
	EventULPMalformed                        // ULP: a message decoded only in part: an unknown op or a value its XDR does not allow
	numEvents              = iota
)

type eventInfo struct {
	name    string
	sev     Severity
	summary string
}

var eventTable = [numEvents]eventInfo{
	{"psn_gap", SevError, "PSN gap: packets lost before the capture point"},
	{"retransmission", SevWarning, "Retransmission"},
	{"duplicate", SevWarning, "Duplicate packet"},
	{"out_of_order", SevWarning, "Out-of-order packet"},
	{"nak", SevError, "NAK"},
	{"rnr_nak", SevWarning, "RNR NAK: receiver not ready"},
	{"ack_coalesced", SevChat, "ACK covers several requests"},
	{"unmatched", SevNote, "Response without an outstanding request"},
	{"mid_stream", SevNote, "Started before the capture: context unknown"},
	{"opcode_sequence", SevError, "Opcode out of sequence"},
	{"cnp", SevNote, "Congestion notification (CNP)"},
	{"ecn_ce", SevNote, "ECN Congestion Experienced"},
	{"icrc_bad", SevError, "ICRC error"},
	{"truncated", SevNote, "Truncated packet: analysis partial"},
	{"connect", SevChat, "Connection setup (CM)"},
	{"disconnect", SevChat, "Disconnect (CM)"},
	{"reject", SevWarning, "Connection rejected (CM)"},
	{"no_response", SevWarning, "Request never answered"},
	{"mpt_violation", SevWarning, "Access the MPT forbids"},
	{"mpt_accepted", SevError, "Responder accepted an access the MPT forbids"},
	{"mpt_rejected", SevError, "Responder NAKed an access the MPT allows"},
	{"incomplete", SevWarning, "Message incomplete: packets missing"},
	{"retry_exceeded", SevError, "Requester likely gave up: transport retry counter exceeded"},
	{"rnr_retry_exceeded", SevError, "Requester likely gave up: RNR retry counter exceeded"},
	{"mad_status_error", SevWarning, "MAD response with an error status"},
	{"mad_trap", SevNote, "Trap: a notice to the subnet manager"},
	{"mad_no_response", SevWarning, "MAD request never answered"},
	{"ulp_error_status", SevWarning, "ULP completion with an error status"},
	{"ulp_no_command", SevWarning, "ULP completion without a command"},
	{"ulp_no_completion", SevWarning, "ULP command never completed"},
	{"ulp_length_mismatch", SevError, "ULP data moved differs from the command's length"},
	{"ulp_key_invalidated", SevError, "ULP key used after it was invalidated"},
	{"ulp_outside_buffer", SevError, "ULP data transfer outside the command's buffer"},
	{"ce_without_cnp", SevWarning, "CE mark with no CNP in time: ECN not enabled on the receiving NIC?"},
	{"cnp_without_ce", SevNote, "CNP with no CE mark seen: marked after the capture point, or a misconfigured switch"},
	{"no_rate_reduction", SevWarning, "Sender did not slow down after CNPs"},
	{"cnp_unknown_qp", SevWarning, "CNP to a QP not in the capture"},
	{"pfc_storm", SevError, "PFC storm: priority paused continuously past the threshold"},
	{"pfc_paused_traffic", SevWarning, "RoCE traffic sent on a paused priority"},
	{"pfc_unused_priority", SevNote, "Pause frames for a priority that carries no RoCE"},
	{"ulp_malformed", SevWarning, "ULP message malformed: decoded only in part"},
}

// NumEvents is the number of event kinds.
const NumEvents = numEvents

// EventInfo returns an event kind's name (as in rocetap.analysis.<name>),
// severity and one-line summary. e must have exactly one bit set.
func EventInfo(e Event) (name string, sev Severity, summary string) {
	for i := range numEvents {
		if e == 1<<i {
			in := &eventTable[i]
			return in.name, in.sev, in.summary
		}
	}
	return "", SevChat, ""
}

// MaxSeverity returns the highest severity among the events, and false
// when there are none.
func (e Event) MaxSeverity() (Severity, bool) {
	if e == 0 {
		return SevChat, false
	}
	s := SevChat
	for i := range numEvents {
		if e&(1<<i) != 0 && eventTable[i].sev > s {
			s = eventTable[i].sev
		}
	}
	return s, true
}

// registerAnalysisFields registers the fields of the session analysis
// under rt: rocetap.session.*, .msg.*, .analysis.*, .expert.* and .mpt.*.
// They exist only on packets a tracker looked at; Field.Stateful marks
// them so a command knows to run the tracker when a filter or -e names one.
func registerAnalysisFields(rt *Field) {
	tracked := func(p *Packet) bool { return p.Analysis.Tracked }
	var all []*Field
	u := func(abbrev, name string, t FieldType, base Base, ok func(*Packet) bool, get func(*Packet) uint64) {
		all = append(all, condUint(rt, abbrev, name, t, base, 0, -1, 0, func(p *Packet) bool { return p.Analysis.Tracked && ok(p) }, get))
	}
	s := func(abbrev, name string, get func(*Packet) string) {
		all = append(all, stringField(rt, abbrev, name, 0, func(p *Packet) string {
			if !p.Analysis.Tracked {
				return ""
			}
			return get(p)
		}))
	}
	frame := func(abbrev, name string, get func(a *Analysis) int) {
		u(abbrev, name, FTUint32, BaseDec, func(p *Packet) bool { return get(&p.Analysis) > 0 }, func(p *Packet) uint64 { return uint64(get(&p.Analysis)) })
	}
	a := func(p *Packet) *Analysis { return &p.Analysis }

	u("rocetap.session.id", "Session", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Session > 0 }, func(p *Packet) uint64 { return uint64(a(p).Session) })
	s("rocetap.session.pairing", "Session pairing learned from", func(p *Packet) string {
		if a(p).Session == 0 {
			return ""
		}
		return a(p).Learned.String()
	})
	s("rocetap.session.direction", "Direction", func(p *Packet) string {
		if a(p).Session == 0 {
			return ""
		}
		return [2]string{"A->B", "B->A"}[a(p).Dir&1]
	})

	s("rocetap.msg.kind", "Message kind", func(p *Packet) string { return a(p).MsgKind.String() })
	msg := func(p *Packet) bool { return a(p).MsgKind != MsgNone }
	u("rocetap.msg.length", "Message length", FTUint64, BaseDec, msg, func(p *Packet) uint64 { return a(p).MsgLength })
	frame("rocetap.msg.first_frame", "Message starts in frame", func(a *Analysis) int { return a.MsgFirst })
	u("rocetap.msg.packets", "Message packets", FTUint32, BaseDec, msg, func(p *Packet) uint64 { return uint64(a(p).MsgPackets) })
	u("rocetap.msg.partial", "Message incomplete (started before the capture, or packets missing)", FTBoolean, BaseNone, func(p *Packet) bool { return msg(p) && a(p).MsgPartial }, func(p *Packet) uint64 { return 1 })

	u("rocetap.analysis.expected_psn", "Expected PSN", FTUint24, BaseDec, func(p *Packet) bool { return a(p).HasExpected }, func(p *Packet) uint64 { return uint64(a(p).ExpectedPSN) })
	u("rocetap.analysis.psn_gap", "PSNs missing before this packet", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Events&EventPSNGap != 0 }, func(p *Packet) uint64 { return uint64(a(p).Lost) })
	for i := range numEvents {
		e := Event(1) << i
		if e == EventPSNGap {
			continue
		}
		in := &eventTable[i]
		abbrev := "rocetap.analysis." + in.name
		if f, ok := fabricEventFields[e]; ok {
			abbrev = f
		}
		u(abbrev, in.summary, FTBoolean, BaseNone, func(p *Packet) bool { return a(p).Events&e != 0 }, func(p *Packet) uint64 { return 1 })
	}
	frame("rocetap.analysis.original_frame", "First sent in frame", func(a *Analysis) int { return a.OrigFrame })
	s("rocetap.analysis.cause", "Retransmission cause", func(p *Packet) string { return a(p).Cause.String() })
	frame("rocetap.analysis.cause_frame", "Retransmission asked for in frame", func(a *Analysis) int { return a.CauseFrame })
	frame("rocetap.analysis.request_frame", "Response to the request in frame", func(a *Analysis) int { return a.RequestFrame })
	u("rocetap.analysis.ack_rtt", "Time since the request", FTRelTime, BaseNone, func(p *Packet) bool { return a(p).HasRTT }, func(p *Packet) uint64 { return uint64(a(p).RTT) })
	acked := multiField(rt, "rocetap.analysis.acked_frame", "Completes the request in frame", FTUint32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if !p.Analysis.Tracked {
			return out
		}
		for _, f := range p.Analysis.Acked {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	})
	all = append(all, acked)
	u("rocetap.analysis.acked_count", "Requests completed", FTUint32, BaseDec, func(p *Packet) bool { return len(a(p).Acked) > 0 }, func(p *Packet) uint64 { return uint64(len(a(p).Acked)) })
	u("rocetap.analysis.missing", "PSNs of the incomplete message missing", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Events&EventIncomplete != 0 }, func(p *Packet) uint64 { return uint64(a(p).Missing) })
	u("rocetap.analysis.retries", "Times the PSN was sent again before the requester gave up", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Events&(EventRetryExc|EventRNRRetryExc) != 0 }, func(p *Packet) uint64 { return uint64(a(p).Retries) })
	s("rocetap.analysis.qp_error", "Sent to a QP likely in the error state (why)", func(p *Packet) string {
		if a(p).QPError == 0 {
			return ""
		}
		name, _, _ := EventInfo(a(p).QPError)
		return name
	})
	u("rocetap.analysis.mtu", "Path MTU (inferred)", FTUint32, BaseDec, func(p *Packet) bool { return a(p).MTU > 0 }, func(p *Packet) uint64 { return uint64(a(p).MTU) })

	s("rocetap.expert.severity", "Expert severity", func(p *Packet) string {
		if s, ok := a(p).Events.MaxSeverity(); ok {
			return s.String()
		}
		return ""
	})
	all = append(all, multiField(rt, "rocetap.expert.kind", "Expert event", FTString, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if !tracked(p) {
			return out
		}
		for i := range numEvents {
			if p.Analysis.Events&(1<<i) != 0 {
				out = append(out, Value{S: eventTable[i].name})
			}
		}
		return out
	}))
	all = append(all, mptFields(rt)...)
	all = append(all, madAnalysisFields(rt)...)
	registerFabricFields(rt)
	for _, f := range all {
		f.Stateful = true
	}
}

// mptFields registers the rocetap.mpt.* fields under rt and returns them.
func mptFields(rt *Field) []*Field {
	var all []*Field
	m := func(p *Packet) *MPTCheck { return &p.Analysis.MPT }
	checked := func(p *Packet) bool { return p.Analysis.Tracked && p.Analysis.MPT.Checked }
	u := func(abbrev, name string, t FieldType, base Base, ok func(*MPTCheck) bool, get func(*MPTCheck) uint64) {
		all = append(all, condUint(rt, abbrev, name, t, base, 0, -1, 0,
			func(p *Packet) bool { return checked(p) && ok(m(p)) },
			func(p *Packet) uint64 { return get(m(p)) }))
	}
	always := func(*MPTCheck) bool { return true }
	one := func(*MPTCheck) uint64 { return 1 }
	s := func(abbrev, name string, get func(*MPTCheck) string) {
		all = append(all, stringField(rt, abbrev, name, 0, func(p *Packet) string {
			if !p.Analysis.Tracked {
				return ""
			}
			return get(m(p))
		}))
	}

	u("rocetap.mpt.checked", "Checked against the MPT", FTBoolean, BaseNone, always, one)
	s("rocetap.mpt.op", "MPT access", func(c *MPTCheck) string {
		if !c.Checked {
			return ""
		}
		return c.Op.String()
	})
	s("rocetap.mpt.verdict", "MPT verdict", func(c *MPTCheck) string {
		if !c.Checked {
			return ""
		}
		return c.VerdictName
	})
	u("rocetap.mpt.violation", "The MPT forbids this access", FTBoolean, BaseNone, func(c *MPTCheck) bool { return !c.Allowed }, one)
	u("rocetap.mpt.rkey", "MPT R_Key", FTUint32, BaseHex, always, func(c *MPTCheck) uint64 { return uint64(c.RKey) })
	u("rocetap.mpt.mr", "MPT memory region (R_Key)", FTUint32, BaseHex, func(c *MPTCheck) bool { return c.HasMR }, func(c *MPTCheck) uint64 { return uint64(c.MR) })
	u("rocetap.mpt.window", "Memory window", FTBoolean, BaseNone, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return b2u(c.Window) })
	u("rocetap.mpt.mr_va", "Range granted: start", FTUint64, BaseHex, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return c.Base })
	u("rocetap.mpt.mr_len", "Range granted: length", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.HasRange }, func(c *MPTCheck) uint64 { return c.Size })
	u("rocetap.mpt.offset", "Offset into the range", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.HasOffset }, func(c *MPTCheck) uint64 { return c.Offset })
	u("rocetap.mpt.pa", "Physical address of the first byte", FTUint64, BaseHex, func(c *MPTCheck) bool { return c.HasPA }, func(c *MPTCheck) uint64 { return c.PA })
	u("rocetap.mpt.over", "Bytes out of bounds", FTUint64, BaseDec, func(c *MPTCheck) bool { return c.Over > 0 }, func(c *MPTCheck) uint64 { return c.Over })
	u("rocetap.mpt.cache_hit", "Translation cache hit", FTBoolean, BaseNone, func(c *MPTCheck) bool { return c.HasCache }, func(c *MPTCheck) uint64 { return b2u(c.CacheHit) })
	s("rocetap.mpt.finding", "MPT finding", func(c *MPTCheck) string { return c.Finding.String() })
	return all
}
