package hca

import (
	"fmt"

	"github.com/rocetap/rocetap/decode"
)

// QPState is a QP's state (IBA 10.3.1).
type QPState uint8

// QP states.
const (
	QPReset QPState = iota
	QPInit
	QPRTR
	QPRTS
	QPError
)

var qpStateNames = [...]string{"RESET", "INIT", "RTR", "RTS", "ERR"}

func (s QPState) String() string {
	if int(s) < len(qpStateNames) {
		return qpStateNames[s]
	}
	return "?"
}

// WCStatus is a work completion status, with the verbs values
// (enum ibv_wc_status).
type WCStatus uint8

// Completion statuses.
const (
	WCSuccess        WCStatus = 0
	WCLocLenErr      WCStatus = 1
	WCLocQPOpErr     WCStatus = 2
	WCLocProtErr     WCStatus = 4
	WCWRFlushErr     WCStatus = 5
	WCRemInvReqErr   WCStatus = 9
	WCRemAccessErr   WCStatus = 10
	WCRemOpErr       WCStatus = 11
	WCRetryExcErr    WCStatus = 12
	WCRNRRetryExcErr WCStatus = 13
)

// String returns ibv_wc_status_str's text ("remote access error"), as in
// the status fields of .expect.json files.
func (s WCStatus) String() string {
	switch s {
	case WCSuccess:
		return "success"
	case WCLocLenErr:
		return "local length error"
	case WCLocQPOpErr:
		return "local QP operation error"
	case WCLocProtErr:
		return "local protection error"
	case WCWRFlushErr:
		return "Work Request Flushed Error"
	case WCRemInvReqErr:
		return "remote invalid request error"
	case WCRemAccessErr:
		return "remote access error"
	case WCRemOpErr:
		return "remote operation error"
	case WCRetryExcErr:
		return "transport retry counter exceeded"
	case WCRNRRetryExcErr:
		return "RNR retry counter exceeded"
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// Name returns the verbs constant name ("IBV_WC_REM_ACCESS_ERR").
func (s WCStatus) Name() string {
	switch s {
	case WCSuccess:
		return "IBV_WC_SUCCESS"
	case WCLocLenErr:
		return "IBV_WC_LOC_LEN_ERR"
	case WCLocQPOpErr:
		return "IBV_WC_LOC_QP_OP_ERR"
	case WCLocProtErr:
		return "IBV_WC_LOC_PROT_ERR"
	case WCWRFlushErr:
		return "IBV_WC_WR_FLUSH_ERR"
	case WCRemInvReqErr:
		return "IBV_WC_REM_INV_REQ_ERR"
	case WCRemAccessErr:
		return "IBV_WC_REM_ACCESS_ERR"
	case WCRemOpErr:
		return "IBV_WC_REM_OP_ERR"
	case WCRetryExcErr:
		return "IBV_WC_RETRY_EXC_ERR"
	case WCRNRRetryExcErr:
		return "IBV_WC_RNR_RETRY_EXC_ERR"
	}
	return fmt.Sprintf("IBV_WC_%d", uint8(s))
}

// StatusForSyndrome returns the requester completion status an AETH
// syndrome implies: SUCCESS for an ACK, the remote error for a NAK.
// A PSN sequence error NAK and an RNR NAK make the requester retry; they
// return ok false.
func StatusForSyndrome(syn uint8) (s WCStatus, ok bool) {
	switch syn >> 5 & 3 {
	case decode.AETHAck:
		return WCSuccess, true
	case decode.AETHNak:
		switch syn & 0x1F {
		case 0:
			return 0, false
		case 1:
			return WCRemInvReqErr, true
		case 2:
			return WCRemAccessErr, true
		default:
			return WCRemOpErr, true
		}
	}
	return 0, false
}

// Response is one packet the modeled responder sends.
type Response struct {
	// Frame is the request frame (1-based, as Packet.Frame.Number) that
	// made the responder send it.
	Frame  int
	QPN    uint32        // the responder QP
	DestQP uint32        // the requester QP, the response's BTH.DestQP
	Opcode decode.Opcode // ACK, ATOMIC ACK or READ RESPONSE *
	PSN    decode.PSN

	HasAETH  bool
	Syndrome uint8
	MSN      uint32
	// SyndromeMask says which syndrome bits a captured response must
	// match: 0xFF, or 0xE0 for an ACK whose credit count the model does
	// not know (a responder with end-to-end credits advertises its own
	// receive queue, which the MPT does not describe).
	SyndromeMask uint8
	// Coalescable: an ACK of a SEND or WRITE that the responder may
	// coalesce with a later ACK (C9-150); a later acknowledgement of the
	// same QP covers it when it is missing.
	Coalescable bool
	// InMessage: an ACK of a FIRST or MIDDLE packet, whose message is not
	// complete. Its MSN counts the messages before it; the MSN of a
	// message not yet complete is not what acknowledging it promises, so
	// a responder's other count there is not a rule broken.
	InMessage bool

	// AtomicOrig is the ATOMIC ACK's original value, AtomicKnown whether
	// the model knew all 8 bytes, AtomicLearned whether any of them was
	// only learned from an earlier response (MTT.Learn): then the value
	// is what the model expects, and the responder's CPU may have changed
	// it since.
	AtomicOrig    uint64
	AtomicKnown   bool
	AtomicLearned bool

	// Payload is the READ response's data and Known which of its bytes
	// the model knows (bytes never written are unknown). Learned, nil when
	// there are none, says which of the known bytes the model only learned
	// from an earlier response (MTT.Learn) rather than from the requests
	// that wrote them: an expectation, which the memory's owner may have
	// changed since. All three are owned by the model, read-only, and
	// valid until the next Receive.
	Payload []byte
	Known   []bool
	Learned []bool
	// AllLearned: every byte of Payload is learned (Learned is all true),
	// so a consumer need not look at the mask: memory read again that
	// only earlier responses showed.
	AllLearned bool
	// Series, when not nil, makes this Response (READ RESPONSE First,
	// without Payload) stand for all the responses of a long READ
	// (Options.ReadSeriesAt).
	Series *ReadSeries

	// Duplicate: the answer to a duplicate request (re-ACK, READ
	// re-execution or ATOMIC replay).
	Duplicate bool
	// Why says why a NAK was sent ("rkey 0x1234: out of bounds by 256
	// bytes"); empty for ACKs and READ responses.
	Why string
}

// Completion is a work completion the model predicts.
type Completion struct {
	// Frame is the frame of the packet that completes the work request:
	// the last request packet for a receive completion, the response for
	// a requester completion.
	Frame int
	// Requester: a requester (send queue) completion; otherwise the
	// responder's receive completion.
	Requester bool
	QPN       uint32 // the QP that completes (for requester completions, the requester's QPN)
	Status    WCStatus
	// Opcode is the message's request opcode (the last packet's for
	// receive completions, e.g. SEND LAST with Immediate).
	Opcode  decode.Opcode
	PSN     decode.PSN // the first PSN of the message
	ByteLen uint64     // receive completions: bytes received
	Imm     uint32
	HasImm  bool
	// InvRKey is the rkey a SEND with Invalidate invalidated (HasInv).
	InvRKey uint32
	HasInv  bool
	SrcQP   uint32 // UD: the sender's QPN
}

// AckPoint is what an acknowledgement of one executed request packet
// carries: its PSN and the MSN, the messages completed up to and
// including it (MsgDone: the packet ends its message, which the MSN
// counts).
type AckPoint struct {
	Valid   bool
	MsgDone bool
	PSN     decode.PSN
	MSN     uint32
}

// Drop says why the model dropped a request without answering.
type Drop uint8

// Reasons for a silent drop.
const (
	DropNone          Drop = iota
	DropNotRequest         // not a request to the responder (a response, CNP, or not RDMA)
	DropUnknownQP          // no such QP
	DropWrongType          // the opcode's transport is not the QP's type
	DropQPState            // the QP is not in RTR/RTS (never connected, or reset)
	DropPSNOutOfOrder      // RC: out of sequence after the one PSN sequence NAK
	DropDuplicate          // a duplicate with nothing to replay
	DropUCGap              // UC: a MIDDLE or LAST while no message is in progress (its FIRST was lost or dropped)
	DropQKey               // UD: Q_Key mismatch
	DropNoReceive          // UC/UD: no receive WQE posted
	DropTooLong            // UC: message longer than the receive buffer
	DropTruncated          // the packet was truncated in the capture
	DropBadCRC             // the ICRC was wrong
	DropQPError            // the QP is in the error state after an earlier error
	DropLength             // UC/UD: a packet's payload does not fit the MTU or what is left of the WRITE
	DropQPAccess           // UC: the QP lacks the remote access flag the operation needs
	DropRKey               // UC: the WRITE's rkey check failed (key, state, PD, window's QP, access, bounds)
)

var dropNames = [...]string{
	DropNone: "", DropNotRequest: "not a request", DropUnknownQP: "unknown QP",
	DropWrongType: "opcode transport does not match the QP type",
	DropQPState:   "QP not ready to receive", DropPSNOutOfOrder: "out of sequence (already NAKed)",
	DropDuplicate: "duplicate with nothing to replay", DropUCGap: "UC: no message in progress (its FIRST was lost or dropped)",
	DropQKey: "UD: Q_Key mismatch", DropNoReceive: "no receive posted",
	DropTooLong: "longer than the receive buffer", DropTruncated: "truncated in the capture",
	DropBadCRC: "ICRC error", DropQPError: "QP in the error state after an earlier error",
	DropLength:   "payload length does not fit the MTU or the WRITE's DMA length",
	DropQPAccess: "QP lacks the remote access flag", DropRKey: "the rkey, PD, access or bounds check failed",
}

func (d Drop) String() string {
	if int(d) < len(dropNames) {
		return dropNames[d]
	}
	return "?"
}

// Result is what the model did with one request packet. Its slices are
// owned by the model and valid until the next Receive.
type Result struct {
	Responses   []Response
	Completions []Completion
	Drop        Drop
	// Why says what the failing check found when the request was dropped
	// ("rkey 0x00001234: out of bounds by 256 bytes", "QP 0x000011 lacks
	// REMOTE_WRITE"); empty when it has nothing to add to Drop.
	Why string
	// Check is the MPT check of the packet's RETH, AtomicETH or IETH
	// access (Verdict None when it carries none).
	Check Check
	// Executed: the request was new and was carried out (data written,
	// read or modified; receive consumed).
	Executed bool
	// Ack is what an acknowledgement of this packet says, should the
	// responder send one it was not asked for: a responder may
	// acknowledge any RC or XRC SEND or WRITE packet it executed, AckReq
	// or not, and one ACK may cover several (IBTA-NOTES, "More spec
	// facts"). Valid only for such packets; the model sends an ACK only
	// when AckReq asks for one (Responses).
	Ack AckPoint
	// Fault is an error of the emulated memory after the checks had
	// accepted the access (Model.Faults); nil normally.
	Fault error
}
