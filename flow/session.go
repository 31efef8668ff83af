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
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Endpoint is one side of a session.
type Endpoint struct {
	addr     addr16 // Addr's 16 bytes, when hasAddr
	QPN      uint32
	StartPSN decode.PSN // first PSN this side sends requests with (CM), or first seen
	LID      uint16     // native IB without GRH
	QPNKnown bool       // false until the session is paired (RC/UC) or for UD receivers
	HasStart bool
	hasAddr  bool
}

// Addr returns the endpoint's IP address (IPv4-mapped for IPv4), or its
// GID for RoCEv1 and native IB with a GRH; the zero netip.Addr (not
// valid) when it has only a LID. It is kept as 16 bytes, not as a
// netip.Addr, whose zone is a pointer: the garbage collector would follow
// two in each of a million sessions on each of its cycles.
func (e Endpoint) Addr() netip.Addr {
	if !e.hasAddr {
		return netip.Addr{}
	}
	return netip.AddrFrom16(e.addr)
}

// Node returns the endpoint's node: its address, or its LID when it has
// none.
func (e Endpoint) Node() decode.Node {
	if e.hasAddr {
		return decode.NodeAddr(e.Addr())
	}
	return decode.NodeLID(e.LID)
}

// String returns "node/qpn" ("10.77.0.1/0x000011", "lid:1/0x000011";
// "node/?" while the QPN is not known).
func (e Endpoint) String() string {
	var b [64]byte
	return string(e.AppendTo(b[:0]))
}

// AppendTo appends e as String writes it (a report of millions of
// sessions writes their endpoints without a string each).
func (e Endpoint) AppendTo(dst []byte) []byte {
	dst = e.AppendNode(dst)
	if !e.QPNKnown {
		return append(dst, "/?"...)
	}
	return appendQPN(dst, e.QPN)
}

// AppendNode appends e's node as Node().String() writes it.
func (e Endpoint) AppendNode(dst []byte) []byte {
	if a, ok := e.IPv4(); ok {
		// the IPv4 (or IPv4-mapped) address Node would write, without
		// making the Node: a fifth of an endpoint's cost
		return decode.AppendIPv4(dst, a)
	}
	if n := e.Node(); n.IsValid() {
		return n.AppendTo(dst)
	}
	return append(dst, "invalid node"...)
}

// DirStats counts what one side sent. Its responses (ACKs, NAKs, READ
// responses, ATOMIC ACKs) are the rest of its packets but its CNPs:
// Session.Responses.
type DirStats struct {
	Packets      uint64 `json:"packets"`
	Bytes        uint64 `json:"bytes"`         // frame bytes on the wire
	PayloadBytes uint64 `json:"payload_bytes"` // InfiniBand payload bytes
	Requests     uint64 `json:"requests"`      // request packets
}

// Session is a pair of QPs (RC, UC, XRC, RD) or a UD flow (source QP,
// destination QP, Q_Key). A is the side that sent first (the CM REQ, or
// the first request seen).
//
// A session is kept small, because a capture may hold millions: what it
// needs only while traffic is in flight (recent PSNs, outstanding
// requests, messages being reassembled) lives in a state allocated on
// its first request and released once it has been idle for
// Options.IdleAfter; counters that stay zero on clean traffic are in
// Findings, allocated on the first; messages and latencies are kept per
// kind seen.
type Session struct {
	ID uint32
	// link is, by the session's state (flags), its address pair's ID
	// (Tracker.addrPairs) while in Tracker.unpaired (flagUnpaired), or
	// the session it merged into (flagMerged: MergedInto); else 0.
	link      uint32
	Transport decode.Transport // RC, UC, UD, XRC, RD (a name would be a pointer in every session)
	Learned   decode.Pairing
	Closed    bool    // CM DREQ/DREP or REJ seen
	has       [2]bool // the directions, once known (their keys come from A and B: key)
	watch     uint8   // bit per side: its requester resends a PSN, or likely gave up (watchRetries)
	flags     uint8   // flagQueued, flagRef, flagPackQueued, flagUnpaired, flagMerged
	mtuFrom   mtuSource
	memoFlags uint8 // memo's booleans: memoStarted, memoAcked, memoAnswered, shifted by 3 for side B
	nkinds    uint8 // kinds used
	A, B      Endpoint
	MTU       uint32 // path MTU: from CM REQ, or inferred from full-size packets; 0 unknown
	// qkeyComm is the Q_Key of a UD flow (QKey), or the CM local
	// communication ID of A of a session learned from CM (CommID): one
	// field, as no session has both.
	qkeyComm uint32
	memo     [2]psnMemo // the PSN state of each side's requests while live is released

	first, last int64       // Unix nanoseconds
	Sent        [2]DirStats // by A, by B

	// kinds are the messages and latencies of the first two kinds of
	// message seen (nkinds of them), more those of the others (a QP
	// mostly does one or two). Inline, not a slice into the session's
	// slab: that is a pointer the garbage collector would follow in each
	// of a million sessions on each of its cycles (an idle session of a
	// few messages on clean traffic holds no pointer that is not nil;
	// a kind's third latency brings its distribution, lat.more).
	kinds [2]kindStats
	more  *[]kindStats // (a slice here would be 16 bytes more a session)
	x     *Findings    // nil until the first finding
	live  *liveState   // nil while nothing is in flight
}

// mtuSource is where a session's MTU came from.
type mtuSource uint8

const (
	mtuUnknown mtuSource = iota
	mtuCM
	mtuPayload
	mtuRead
)

var mtuSources = [...]string{"", "cm", "payload", "read"}

// MTUFrom says where the MTU came from: "cm" (the CM REQ), "payload"
// (full-size FIRST/MIDDLE packets), "read" (the PSNs a READ took); "" while
// it is not known.
func (s *Session) MTUFrom() string { return mtuSources[s.mtuFrom] }

// Findings are the counts of a session that stay zero on clean traffic:
// a session allocates them on its first.
type Findings struct {
	Partial       uint64     // messages started before the capture or broken by loss
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
	// cnpSent are the CNPs each side (A, B) sent: counted in its
	// Sent.Packets, neither requests nor responses (Responses).
	cnpSent [2]uint64
	// ulp is the upper-layer protocol the session carries (ulp.go): kept
	// here, not in Session, which stays within its memory budget.
	ulp *ULPConn

	// With an MPT (Options.MPT): accesses checked, those the MPT forbids,
	// forbidden ones the responder executed, allowed ones it NAKed.
	MPTChecked, MPTViolations, MPTAccepted, MPTRejected uint64

	// GaveUp says, per side (A, B), whether the capture shows its
	// requester likely gave up a PSN (retry counter exceeded), its QP
	// likely in the error state from there on.
	GaveUp [2]GiveUp

	// merged are the provisional sessions folded into this one: the
	// frames tracked before the merge carry their IDs.
	merged []uint32

	cc *Congestion // congestion control, once a CE mark or CNP was seen (cc.go)
}

// add adds o's counts to f.
func (f *Findings) add(o *Findings) {
	for i := range f.NAKs {
		f.NAKs[i] += o.NAKs[i]
		f.RNRNaks[i] += o.RNRNaks[i]
	}
	f.Partial += o.Partial
	f.Unmatched += o.Unmatched
	f.Gaps += o.Gaps
	f.LostPSNs += o.LostPSNs
	f.Retransmitted += o.Retransmitted
	f.Duplicates += o.Duplicates
	f.OutOfOrder += o.OutOfOrder
	f.OpcodeSeq += o.OpcodeSeq
	f.CNPs += o.CNPs
	f.ECNCE += o.ECNCE
	f.ICRCErrors += o.ICRCErrors
	f.Truncated += o.Truncated
	f.NoResponse += o.NoResponse
	f.MPTChecked += o.MPTChecked
	f.MPTViolations += o.MPTViolations
	f.MPTAccepted += o.MPTAccepted
	f.MPTRejected += o.MPTRejected
}

// NAKCount returns every NAK (not RNR NAK).
func (f *Findings) NAKCount() uint64 {
	var n uint64
	for _, m := range f.NAKs {
		n += m
	}
	return n
}

// RNRCount returns every RNR NAK.
func (f *Findings) RNRCount() uint64 {
	var n uint64
	for _, m := range f.RNRNaks {
		n += m
	}
	return n
}

// kindStats are the messages of one kind and their latencies. The kind
// shares a word with the count (a session holds two: 32 bytes less).
type kindStats struct {
	kc    uint64 // count << 8 | kind
	bytes uint64
	lat   Latency
}

func newKindStats(k decode.MsgKind) kindStats { return kindStats{kc: uint64(k)} }

func (ks *kindStats) kind() decode.MsgKind { return decode.MsgKind(ks.kc) }

func (ks *kindStats) count() uint64 { return ks.kc >> 8 }

// addCount adds n messages.
func (ks *kindStats) addCount(n uint64) { ks.kc += n << 8 }

// Session flags.
const (
	flagQueued     = 1 << iota // in Tracker.liveQ
	flagRef                    // a packet since the eviction clock last passed (Options.MaxSessions)
	flagPackQueued             // in Tracker.packQ
	flagUnpaired               // in Tracker.unpaired (link: its address pair)
	flagMerged                 // merged into another session (link: its ID)
)

// noFindings is what Findings returns for a session without any.
var noFindings Findings

// Findings returns the session's findings (all zero on clean traffic).
// The result must not be modified.
func (s *Session) Findings() *Findings {
	if s.x == nil {
		return &noFindings
	}
	return s.x
}

// f returns the findings to count in, allocating them on the first.
func (s *Session) f() *Findings {
	if s.x == nil {
		s.x = new(Findings)
	}
	return s.x
}

// Merged returns the IDs of the provisional sessions folded into this one:
// the frames tracked before the merge carry them.
func (s *Session) Merged() []uint32 {
	if s.x == nil {
		return nil
	}
	return s.x.merged
}

// GaveUp returns, per side (A, B), whether the capture shows its
// requester likely gave up a PSN (retry counter exceeded).
func (s *Session) GaveUp() [2]GiveUp { return s.Findings().GaveUp }

// First returns the time of the session's first packet.
func (s *Session) First() time.Time { return time.Unix(0, s.first) }

// Last returns the time of the session's latest packet.
func (s *Session) Last() time.Time { return time.Unix(0, s.last) }

// Duration returns the time from its first packet to its latest.
func (s *Session) Duration() time.Duration { return time.Duration(s.last - s.first) }

// Messages returns the completed messages of kind k (requests and, for
// READ, the request).
func (s *Session) Messages(k decode.MsgKind) uint64 {
	if ks := s.kind(k); ks != nil {
		return ks.count()
	}
	return 0
}

// MessageBytes returns the lengths of the messages of kind k.
func (s *Session) MessageBytes(k decode.MsgKind) uint64 {
	if ks := s.kind(k); ks != nil {
		return ks.bytes
	}
	return 0
}

// Latency returns the request→completion times of kind k.
func (s *Session) Latency(k decode.MsgKind) Latency {
	if ks := s.kind(k); ks != nil {
		return ks.lat
	}
	return Latency{}
}

func (s *Session) kind(k decode.MsgKind) *kindStats {
	for i := range s.nkinds {
		if s.kinds[i].kind() == k {
			return &s.kinds[i]
		}
	}
	if s.more != nil {
		for i, ks := range *s.more {
			if ks.kind() == k {
				return &(*s.more)[i]
			}
		}
	}
	return nil
}

// addKind returns the stats of kind k, adding them on its first message.
func (s *Session) addKind(k decode.MsgKind) *kindStats {
	if ks := s.kind(k); ks != nil {
		return ks
	}
	if int(s.nkinds) < len(s.kinds) {
		s.kinds[s.nkinds] = newKindStats(k)
		s.nkinds++
		return &s.kinds[s.nkinds-1]
	}
	if s.more == nil {
		s.more = new([]kindStats)
	}
	m := append(*s.more, newKindStats(k))
	*s.more = m
	return &m[len(m)-1]
}

// packLatencies packs the latencies of every kind (Latency.pack): s
// went idle, and what it keeps for the report should be small.
func (s *Session) packLatencies() { s.eachKind(func(ks *kindStats) { ks.lat.pack() }) }

// hasUnpacked reports whether a kind of s has latency samples not
// packed.
func (s *Session) hasUnpacked() (found bool) {
	s.eachKind(func(ks *kindStats) { found = found || ks.lat.unpacked() })
	return found
}

// eachKind calls fn with the stats of each kind seen.
func (s *Session) eachKind(fn func(ks *kindStats)) {
	for i := range s.nkinds {
		fn(&s.kinds[i])
	}
	if s.more != nil {
		for i := range *s.more {
			fn(&(*s.more)[i])
		}
	}
}

// countMessage counts a message of kind k, n bytes long.
func (s *Session) countMessage(k decode.MsgKind, n uint64) {
	ks := s.addKind(k)
	ks.addCount(1)
	ks.bytes += n
}

// Throughput returns the session's bits per second over its duration
// (0 when it lasted no time).
func (s *Session) Throughput() float64 {
	d := s.Duration().Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.Sent[0].Bytes+s.Sent[1].Bytes) * 8 / d
}

// MergedInto returns the session this provisional one turned out to be
// the other half of, once merged into it; else 0.
func (s *Session) MergedInto() uint32 {
	if s.flags&flagMerged == 0 {
		return 0
	}
	return s.link
}

// QKey returns the Q_Key of a UD flow (0 for other sessions).
func (s *Session) QKey() uint32 {
	if s.Transport != decode.TransportUD {
		return 0
	}
	return s.qkeyComm
}

// CommID returns the CM local communication ID of A of a session
// learned from the CM (0 for the others).
func (s *Session) CommID() uint32 {
	if s.Learned != decode.PairingCM {
		return 0
	}
	return s.qkeyComm
}

// Responses returns the responses side (0: A, 1: B) sent: ACKs, NAKs,
// READ responses, ATOMIC ACKs. They are not counted one by one but are
// the side's packets other than its requests and CNPs, which keeps a
// million sessions 16 bytes smaller each.
func (s *Session) Responses(side int) uint64 {
	d := &s.Sent[side]
	n := d.Packets - d.Requests
	if s.x != nil {
		n -= s.x.cnpSent[side]
	}
	return n
}

// Packets returns the packets of both directions.
func (s *Session) Packets() uint64 { return s.Sent[0].Packets + s.Sent[1].Packets }

// Bytes returns the frame bytes of both directions.
func (s *Session) Bytes() uint64 { return s.Sent[0].Bytes + s.Sent[1].Bytes }

// MessageCount returns the messages of every kind.
func (s *Session) MessageCount() uint64 {
	var n uint64
	s.eachKind(func(ks *kindStats) { n += ks.count() })
	return n
}

// NAKCount returns every NAK (not RNR NAK).
func (s *Session) NAKCount() uint64 { return s.Findings().NAKCount() }

// RNRCount returns every RNR NAK.
func (s *Session) RNRCount() uint64 { return s.Findings().RNRCount() }

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
	// CMOther counts CM MADs of the attribute IDs outside 0x10-0x2f
	// (vendor, reserved): never dropped, never merged (CMCounts).
	CMOther map[uint16]uint64
	Other   uint64 // packets without an InfiniBand transport or PFC
	// MADs counts management datagrams by class, method and attribute,
	// their error statuses and traps (issue 19).
	MADs MADTotals
	// Fabric, when set, is the tracker's fabric health (Tracker.Fabric,
	// or a copy): the congestion report prints it.
	Fabric *FabricStats
}

// CMCount is the number of CM MADs of one attribute ID.
type CMCount struct {
	Attr uint16
	N    uint64
}

// CMCounts returns the CM MADs counted, by attribute ID, in ID order.
func (tt *Totals) CMCounts() []CMCount {
	var out []CMCount
	for i, n := range tt.CMMessages {
		if n > 0 {
			out = append(out, CMCount{uint16(0x10 + i), n})
		}
	}
	for id, n := range tt.CMOther {
		out = append(out, CMCount{id, n})
	}
	slices.SortFunc(out, func(a, b CMCount) int { return int(a.Attr) - int(b.Attr) })
	return out
}

// hexN formats v as 0x and digits hex digits, as tshark shows QPNs (6)
// and keys (8).
func hexN(v uint32, digits int) string {
	var b [16]byte
	return string(appendHexN(b[:0], v, digits))
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
	if p.Has&decode.HdrMAD != 0 {
		tt.MADs.add(p)
	}
	if p.Has&decode.HdrCM != 0 {
		if id := int(p.CM.AttributeID) - 0x10; id >= 0 && id < len(tt.CMMessages) {
			tt.CMMessages[id]++
		} else {
			if tt.CMOther == nil {
				tt.CMOther = map[uint16]uint64{}
			}
			tt.CMOther[p.CM.AttributeID]++
		}
	}
}

// ULP returns the upper-layer protocol connection the session carries, nil
// when none is known.
func (s *Session) ULP() *ULPConn {
	if s.x == nil {
		return nil
	}
	return s.x.ulp
}
