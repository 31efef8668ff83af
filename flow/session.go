// Package flow rebuilds InfiniBand transport sessions from a stream of
// decoded packets: it pairs the two QPs of each connection (from CM
// REQ/REP, or from responses matched to requests), reassembles messages,
// analyzes PSNs (gaps, retransmissions, duplicates, out-of-order), matches
// ACKs, NAKs, READ responses and ATOMIC ACKs to their requests, and reports
// each finding as an expert event and in the packet's decode.Analysis.
//
// The Tracker is streaming: it keeps state per live session and per
// outstanding request, never per packet, so its memory does not grow with
// the length of the capture.
package flow

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Endpoint is one side of a session.
type Endpoint struct {
	Addr     netip.Addr // IP address, or GID for RoCEv1/native IB with GRH
	LID      uint16     // native IB without GRH
	QPN      uint32
	QPNKnown bool       // false until the session is paired (RC/UC) or for UD receivers
	StartPSN decode.PSN // first PSN this side sends requests with (CM), or first seen
	HasStart bool
}

// Node returns the endpoint's node: its address, or its LID when it has
// none.
func (e Endpoint) Node() decode.Node {
	if e.Addr.IsValid() {
		return decode.NodeAddr(e.Addr)
	}
	return decode.NodeLID(e.LID)
}

// String returns "node/qpn" ("10.77.0.1/0x000011", "lid:1/0x000011";
// "node/?" while the QPN is not known).
func (e Endpoint) String() string {
	a := e.Node().String()
	if !e.QPNKnown {
		return a + "/?"
	}
	return a + "/" + hex24(e.QPN)
}

// DirStats counts what one side sent.
type DirStats struct {
	Packets      uint64 `json:"packets"`
	Bytes        uint64 `json:"bytes"`         // frame bytes on the wire
	PayloadBytes uint64 `json:"payload_bytes"` // InfiniBand payload bytes
	Requests     uint64 `json:"requests"`      // request packets
	Responses    uint64 `json:"responses"`     // ACKs, NAKs, READ responses, ATOMIC ACKs
}

// Session is a pair of QPs (RC, UC, XRC, RD) or a UD flow (source QP,
// destination QP, Q_Key). A is the side that sent first (the CM REQ, or
// the first request seen).
type Session struct {
	ID         uint32
	Transport  string // RC, UC, UD, XRC, RD
	Learned    decode.Pairing
	A, B       Endpoint
	QKey       uint32 // UD
	MTU        uint32 // path MTU: from CM REQ, or inferred from full-size packets; 0 unknown
	MTUFrom    string // "cm", "payload", "read"
	CommID     uint32 // CM local communication ID of A (0 without CM)
	Closed     bool   // CM DREQ/DREP or REJ seen
	MergedInto uint32 // set when this provisional session turned out to be the other half of another
	// Merged are the provisional sessions folded into this one: the
	// frames tracked before the merge carry their IDs.
	Merged []uint32

	First, Last time.Time
	Sent        [2]DirStats // by A, by B

	Messages     [decode.NumMsgKinds]uint64 // completed messages by kind (requests and, for READ, the request)
	MessageBytes [decode.NumMsgKinds]uint64 // their lengths
	Partial      uint64                     // messages started before the capture or broken by loss

	NAKs          [32]uint64 // by NAK code (syndrome & 0x1f)
	RNRNaks       [32]uint64 // by RNR timer code
	Gaps          uint64     // PSN gaps found
	LostPSNs      uint64     // PSNs never seen (gaps not filled later)
	Retransmitted uint64
	Duplicates    uint64
	OutOfOrder    uint64
	Unmatched     uint64 // responses without an outstanding request
	OpcodeSeq     uint64
	CNPs          uint64
	ECNCE         uint64
	ICRCErrors    uint64
	Truncated     uint64
	NoResponse    uint64 // requests never answered by the end of the capture

	// With an MPT (Options.MPT): accesses checked, those the MPT forbids,
	// forbidden ones the responder executed, allowed ones it NAKed.
	MPTChecked, MPTViolations, MPTAccepted, MPTRejected uint64

	Latency [decode.NumMsgKinds]Latency // request→completion, by kind

	// GaveUp says, per side (A, B), whether the capture shows its
	// requester likely gave up a PSN (retry counter exceeded), its QP
	// likely in the error state from there on.
	GaveUp [2]GiveUp

	req   [2]reqStream // requests sent by A (answered by B), by B
	key   [2]halfKey   // the directions, once known
	has   [2]bool
	watch uint8 // bit per side: its requester resends a PSN, or likely gave up (watchRetries)
}

// Throughput returns the session's bits per second over its duration
// (0 when it lasted no time).
func (s *Session) Throughput() float64 {
	d := s.Last.Sub(s.First).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.Sent[0].Bytes+s.Sent[1].Bytes) * 8 / d
}

// Packets returns the packets of both directions.
func (s *Session) Packets() uint64 { return s.Sent[0].Packets + s.Sent[1].Packets }

// Bytes returns the frame bytes of both directions.
func (s *Session) Bytes() uint64 { return s.Sent[0].Bytes + s.Sent[1].Bytes }

// MessageCount returns the messages of every kind.
func (s *Session) MessageCount() uint64 {
	var n uint64
	for _, m := range s.Messages {
		n += m
	}
	return n
}

// NAKCount returns every NAK (not RNR NAK).
func (s *Session) NAKCount() uint64 {
	var n uint64
	for _, m := range s.NAKs {
		n += m
	}
	return n
}

// RNRCount returns every RNR NAK.
func (s *Session) RNRCount() uint64 {
	var n uint64
	for _, m := range s.RNRNaks {
		n += m
	}
	return n
}

// Message is one reassembled message, as OnMessage reports it.
type Message struct {
	Session    uint32
	Dir        decode.Direction // who sent the request
	Kind       decode.MsgKind
	Opcode     decode.Opcode // of the request's last (or only) packet
	PSN        decode.PSN    // first PSN of the request
	Packets    uint32        // request packets (READ, ATOMIC: 1)
	Length     uint64        // payload bytes (READ: the DMA length asked for; ATOMIC: 8)
	FirstFrame int
	LastFrame  int
	Partial    bool // started before the capture, or packets lost
	NAKed      bool // a NAK stopped it part-way: the rest was never sent
}

// Event is one expert finding.
type Event struct {
	Kind     decode.Event
	Severity decode.Severity
	Frame    int // 0 for findings at the end of the capture
	Time     time.Time
	Session  uint32
	Text     string
}

// Totals are capture-wide counts (rocetap stats).
type Totals struct {
	Packets     uint64
	Bytes       uint64
	IB          uint64 // packets with an InfiniBand transport
	Opcodes     [256]uint64
	Syndromes   [256]uint64 // AETH syndrome values
	CNPs        uint64
	ECNCE       uint64 // IB packets with ECN CE
	ECNCapable  uint64 // IB packets with ECT(0) or ECT(1)
	ICRCErrors  uint64
	Truncated   uint64
	PFCFrames   uint64
	PFCPauses   [8]uint64  // PFC frames pausing each priority (quanta > 0)
	PFCResumes  [8]uint64  // PFC frames resuming it (enabled, quanta 0)
	PauseFrames uint64     // 802.3x PAUSE
	CMMessages  [32]uint64 // by attribute ID - 0x10 (REQ..APR)
	Other       uint64     // packets without an InfiniBand transport or PFC
}

// hexN formats v as 0x and digits hex digits, as tshark shows QPNs (6)
// and keys (8).
func hexN(v uint32, digits int) string {
	h := strconv.FormatUint(uint64(v), 16)
	return "0x" + strings.Repeat("0", max(0, digits-len(h))) + h
}

func hex24(v uint32) string { return hexN(v, 6) }

// Add counts one packet. Commands call it for the packets their display
// filter selects (the Tracker itself sees every packet).
func (tt *Totals) Add(p *decode.Packet) {
	tt.Packets++
	tt.Bytes += uint64(p.Frame.Len)
	if p.Has&decode.HdrPFC != 0 {
		if p.Has&decode.HdrPause != 0 {
			tt.PauseFrames++
			return
		}
		tt.PFCFrames++
		for i := range 8 {
			if p.PFC.ClassEnable&(1<<i) == 0 {
				continue
			}
			if p.PFC.Quanta[i] > 0 {
				tt.PFCPauses[i]++
			} else {
				tt.PFCResumes[i]++
			}
		}
		return
	}
	if p.Has&decode.HdrBTH == 0 {
		tt.Other++
		return
	}
	tt.IB++
	op := p.BTH.Opcode
	tt.Opcodes[op]++
	if op == decode.CNP {
		tt.CNPs++
	}
	if p.Has&decode.HdrAETH != 0 {
		tt.Syndromes[p.AETH.Syndrome]++
	}
	if ecn, ok := p.ECN(); ok && ecn == 3 {
		tt.ECNCE++
	} else if ok && ecn != 0 {
		tt.ECNCapable++
	}
	if p.Flags&(decode.FlagICRCBad|decode.FlagVCRCBad) != 0 {
		tt.ICRCErrors++
	}
	if p.Flags&decode.FlagTruncated != 0 {
		tt.Truncated++
	}
	if p.Has&decode.HdrCM != 0 {
		if id := int(p.CM.AttributeID) - 0x10; id >= 0 && id < len(tt.CMMessages) {
			tt.CMMessages[id]++
		}
	}
}
