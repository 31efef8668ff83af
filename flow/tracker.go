package flow

import (
	"encoding/binary"
	"iter"
	"slices"
	"time"
	"unsafe"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// defaultMaxOutstanding is Options.MaxOutstanding's default: requests
// kept per direction while they wait for an answer.
const defaultMaxOutstanding = 16384

// Options configure a Tracker. The zero value is usable.
type Options struct {
	// DupWindow separates a duplicate from a retransmission: a PSN seen
	// again with no NAK to explain it is a retransmission (by timeout) when
	// at least DupWindow passed since the first copy, a duplicate otherwise.
	// 0 means 500 µs (below the smallest useful transport timer).
	DupWindow time.Duration
	// NoResponseAfter is how long before the end of the capture a request
	// must have been sent to count as never answered. 0 means 1 ms.
	NoResponseAfter time.Duration
	// MaxOutstanding bounds the requests kept per direction while waiting
	// for their responses (a real send queue holds a few thousand); the
	// oldest are dropped beyond it. 0 means 16384 (defaultMaxOutstanding).
	MaxOutstanding int
	// IdleAfter releases what a session keeps while traffic is in flight
	// (recent PSNs, answered requests, the last NAK) once it has sent
	// nothing for this long, capture time, with nothing outstanding: a
	// capture of millions of QPs keeps only their counters. A packet of
	// it later finds its PSNs where they were, but not which frame first
	// carried an older PSN. 0 means 1 s; negative: never for idleness
	// (past maxLive sessions in flight, the least recent quiet ones are
	// released all the same).
	IdleAfter time.Duration
	// MaxSessions bounds the sessions kept. Past it, the least recently
	// active one (approximately: a CLOCK over the sessions) is evicted:
	// what it has in flight ends as at the end of the capture (its
	// unanswered requests and incomplete messages are reported), its
	// counts go to Evicted, it leaves Sessions, and a later packet of its
	// QPs starts a new session. 0: no bound. The commands' default is
	// DefaultMaxSessions.
	MaxSessions int
	// OnEvicting, when set, is called once, just before the first
	// session is evicted (MaxSessions): until then the sessions the
	// tracker keeps are all still held, from then on each one evicted is
	// garbage (the commands let the heap grow further between
	// collections until then).
	OnEvicting func()
	// OnEvent, when set, receives every expert event. The Event is reused
	// after the call returns.
	OnEvent func(*Event)
	// OnMessage, when set, receives every reassembled message.
	OnMessage func(*Message)
	// MPT, when set, is the model of a responder (its memory protection
	// table): every remote access sent to MPT.Responder (RETH, AtomicETH,
	// IETH) is checked against it (rocetap.mpt.*) and the responder's
	// answers compared with the verdicts (mpt_violation, mpt_accepted,
	// mpt_rejected). The tracker changes the model as the responder does:
	// an acknowledged SEND with Invalidate invalidates its rkey. nil: no
	// checks.
	MPT *hca.Model
	// RecordMADAnswers keeps, for MADAnswers, the frame of the response
	// to every MAD request; MADAnswers, when set (from such an earlier
	// pass over the same capture), gives the requests their
	// rocetap.mad.response_in, which one pass cannot know when it shows
	// the request.
	RecordMADAnswers bool
	MADAnswers       map[int]int
	// DecodeAs names the ULP of connections whose CM exchange the capture
	// lacks (see ulp.go).
	DecodeAs []DecodeAs
	// Prior is a tracker that already saw the whole capture (a first
	// pass): the ULP linkers take what it learned later in the capture (a
	// command's completion, data, latency) onto every packet of the
	// command, not only those after it.
	Prior *Tracker
	// KeepULP keeps every ULP command to the end of the capture (a first
	// pass that will be a Prior; tests): otherwise a command is forgotten
	// once completed, and the linker's memory follows the commands in
	// flight.
	KeepULP bool
	// ULPOps records every ULP operation compactly as it completes (and
	// those never completed, at the end) for a list of operations: the
	// TUI's ULP view (NVMeLinker.Ops).
	ULPOps bool

	// Fabric health (fabric.go, cc.go, pfc.go).
	//
	// CNPTimeout: a CE mark with no CNP to its sender's QP within it is
	// ce_without_cnp. 0 means DefaultCNPTimeout (1 ms).
	CNPTimeout time.Duration
	// RateWindow is the window of the sender-rate estimate around a CNP.
	// 0 means DefaultRateWindow (100 µs).
	RateWindow time.Duration
	// StormAfter: a priority paused continuously for longer is a
	// pfc_storm. 0 means DefaultStormAfter (100 ms).
	StormAfter time.Duration
	// LinkSpeed (bits/s) converts pause quanta to time; 0: the capture
	// interface's speed (InterfaceSpeed), else DefaultLinkSpeed.
	LinkSpeed uint64
	// InterfaceSpeed, when set, returns the speed (bits/s) a capture
	// interface's description gives (pcapng if_speed), 0 when none.
	InterfaceSpeed func(iface int) uint64
	// PrioMap says how a RoCE packet's priority is found; nil: the VLAN
	// PCP when tagged, else DSCP >> 3.
	PrioMap *PrioMap
}

// Tracker rebuilds sessions from packets given in capture order.
type Tracker struct {
	opts Options

	// halves maps a direction (dirKey) to its session: ID << 1 | side.
	// A million QP pairs share a few address pairs, so the addresses are
	// interned (addrPairs) and a direction's key is 8 bytes, not 36.
	halves    dirTable
	addrPairs map[pairKey]uint32
	// pre is what Prefetch worked out for the packets of the next two
	// frames, by frame number's parity: the stream decodes a packet
	// (and Prefetch runs) before it tracks the one before it.
	pre [2]preKey
	// dirGen counts the changes to what a direction maps to (halves,
	// and the cache with it) and to addrPairs: what Prefetch found
	// before one of them is looked up again.
	dirGen uint32
	// pairCache is a direct-mapped cache in front of addrPairs: a new
	// QP pair looks its address pairs up several times (its direction,
	// the opposite one, pairing, adding), between any of a fabric's host
	// pairs; the map hashes 32 bytes each time, the cache compares them.
	pairCache [pairCacheSize]pairEntry
	// cache is a direct-mapped cache in front of halves: a map lookup
	// hashes the 36-byte key, the cache compares it.
	cache    [cacheSize]cacheEntry
	ud       map[udKey]*Session
	unpaired [][]*Session // by address pair (addrPairs): the sessions not yet paired
	cmReqs   map[cmKey]cmReq
	sessions sessTable // by ID - 1
	slab     []Session // where the next sessions go (newSession)
	end      time.Time // time of the last packet
	now      int64     // the same, in Unix nanoseconds

	// liveQ holds the sessions with in-flight state (Session.live), by
	// the time they were queued: sweep releases those idle for
	// opts.IdleAfter.
	liveQ stampQueue
	// packQ holds the sessions released while still active (past
	// maxLive), whose latencies are to be packed once they are idle
	// (packWhenIdle), by the time they were queued.
	packQ stampQueue
	free  []*liveState // released, to be reused: no garbage per idle session

	// ccIDs are the sessions that had a congestion state (cc), for ccEnd
	// (an evicted one's ID stays, its session nil).
	ccIDs   []uint32
	ccPrune int // with MaxSessions: the length of ccIDs at which to prune it
	// merges counts the provisional sessions merged into others
	// (MergedInto): while there is none, Sessions need not look.
	merges int

	// With MaxSessions: the sessions kept, in a ring the eviction clock
	// goes round, and what was evicted.
	resQ     idQueue
	resident int
	evicted  Evicted

	ev  Event
	msg Message

	mptResp addr16 // MPT.Responder as addrs gives addresses (mptKey)
	mptLID  bool

	madSt madState  // MAD matching and RMPP reassembly (mad.go)
	ulp   *ulpState // nil until a connection carries a ULP (ulp.go)
	fab   *fabric   // fabric health: congestion control, PFC
}

type addr16 = [16]byte

// eq16 reports whether a and b are equal, in two 8-byte compares (== on
// the arrays of a key calls the runtime's memequal).
func eq16(a, b *addr16) bool {
	return binary.LittleEndian.Uint64(a[:8]) == binary.LittleEndian.Uint64(b[:8]) &&
		binary.LittleEndian.Uint64(a[8:]) == binary.LittleEndian.Uint64(b[8:])
}

const (
	pairCacheBits = 8
	pairCacheSize = 1 << pairCacheBits
)

type pairEntry struct {
	key pairKey
	id  uint32 // + 1: 0 is an empty entry
}

// pairSlot returns the entry of pairCache of the address pair a, b:
// addresses differ in their last bytes (IPv4 in an addr16, LIDs, the
// interface IDs of GIDs).
func pairSlot(a, b *addr16) int {
	x := (binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9
	return int(x >> (64 - pairCacheBits))
}

// halfKey is one direction of a connection: packets from src to dst for
// the destination QP qp.
const cacheSize = 1024

type cacheEntry struct {
	key halfKey
	h   half
}

// holds returns e's session half when e is k's.
func (e *cacheEntry) holds(k *halfKey) (half, bool) {
	if e.h.s != nil && e.key.qp == k.qp && eq16(&e.key.src, &k.src) && eq16(&e.key.dst, &k.dst) {
		return e.h, true
	}
	return half{}, false
}

type liveEntry struct {
	id    uint32
	stamp int64
}

func (k *halfKey) slot() int {
	x := k.qp*0x9e3779b1 ^ uint32(k.src[15])<<8 ^ uint32(k.src[14])<<16 ^ uint32(k.dst[15]) ^ uint32(k.dst[13])<<24
	return int(x>>16^x) & (cacheSize - 1)
}

// dirKey is a direction as the halves map keys it: its address pair
// (interned) and its destination QP.
type dirKey uint64

// dirKey returns the key of direction k; new interns its addresses when
// they are not yet. ok is false when they are not (and not new).
func (t *Tracker) dirKey(k *halfKey, new bool) (dirKey, bool) {
	i, ok := t.pairID(&k.src, &k.dst, new)
	if !ok {
		return 0, false
	}
	return dirKey(uint64(i)<<24 | uint64(k.qp&0xffffff)), true
}

// pairID returns the ID the address pair a, b is interned as
// (addrPairs); new interns it when it is not yet. ok is false when it is
// not (and not new).
//
// The addresses come by pointer, and are read 8 bytes at a time until
// the cache misses: a key is usually just written (setAddrs), 8 bytes a
// store, and copying it whole at once (16-byte loads) would wait for
// those stores to reach the cache, which no load that spans two of them
// can take its bytes from.
func (t *Tracker) pairID(a, b *addr16, new bool) (uint32, bool) {
	e := &t.pairCache[pairSlot(a, b)]
	if e.id != 0 && eq16(&e.key.a, a) && eq16(&e.key.b, b) {
		return e.id - 1, true
	}
	pk := pairKey{*a, *b}
	i, ok := t.addrPairs[pk]
	if !ok {
		if !new {
			return 0, false
		}
		i = uint32(len(t.addrPairs))
		t.addrPairs[pk] = i
		t.dirGen++
	}
	e.key, e.id = pk, i+1
	return i, true
}

// setHalf maps a direction to its session (and keeps the cache right).
func (t *Tracker) setHalf(k *halfKey, h half) {
	dk, _ := t.dirKey(k, true)
	t.halves.set(dk, h.id())
	t.dirGen++
	// the direction's next packet is likely near: cache it now (a
	// million QPs would otherwise each miss the map twice more)
	t.cache[k.slot()] = cacheEntry{*k, h}
}

// lookup finds a direction's session. k comes by pointer, as to pairID.
func (t *Tracker) lookup(k *halfKey) (half, bool) {
	e := &t.cache[k.slot()]
	if h, ok := e.holds(k); ok {
		return h, true
	}
	dk, interned := t.dirKey(k, false)
	return t.lookupTable(e, k, dk, interned)
}

// lookupTable finds direction k, whose table key is dk (when its address
// pair is interned: else it is not in the table), and caches it in e.
func (t *Tracker) lookupTable(e *cacheEntry, k *halfKey, dk dirKey, interned bool) (half, bool) {
	if !interned {
		return half{}, false
	}
	v, ok := t.halves.get(dk)
	if !ok {
		return half{}, false
	}
	h := t.half(v)
	e.key, e.h = *k, h
	return h, true
}

// half unpacks a halves value.
func (t *Tracker) half(v uint32) half {
	return half{t.sessions.at(int(v>>1) - 1), uint8(v & 1)}
}

// get returns the session a direction maps to.
func (t *Tracker) get(k halfKey) (half, bool) {
	dk, ok := t.dirKey(&k, false)
	if !ok {
		return half{}, false
	}
	v, ok := t.halves.get(dk)
	if !ok {
		return half{}, false
	}
	return t.half(v), true
}

type halfKey struct {
	src, dst addr16
	qp       uint32
}

type half struct {
	s    *Session
	side uint8 // the session side that sends on this direction
}

// id packs h as the halves map keeps it: the session ID and the side.
func (h half) id() uint32 { return h.s.ID<<1 | uint32(h.side) }

// key returns the direction side of s sends on: from its node to the
// other side's QP.
func (s *Session) key(side int) halfKey {
	from, to := &s.A, &s.B
	if side == 1 {
		from, to = to, from
	}
	return halfKey{from.key(), to.key(), to.QPN}
}

// key returns the endpoint's node as addrs gives it.
func (e *Endpoint) key() addr16 {
	if e.hasAddr {
		return e.addr
	}
	var k addr16
	k[0], k[1] = 0xff, 0xfe
	binary.BigEndian.PutUint16(k[14:], e.LID)
	return k
}

type udKey struct {
	src, dst     addr16
	srcQP, dstQP uint32
	qkey         uint32
}

type pairKey struct{ a, b addr16 }

type cmKey struct {
	src, dst addr16
	comm     uint32
}

type cmReq struct {
	qpn       uint32
	psn       decode.PSN
	mtu       uint32
	transport uint8
	frame     int
}

const maxCMPending = 4096

// New returns a Tracker.
func New(o Options) *Tracker {
	if o.DupWindow == 0 {
		o.DupWindow = 500 * time.Microsecond
	}
	if o.NoResponseAfter == 0 {
		o.NoResponseAfter = time.Millisecond
	}
	if o.MaxOutstanding == 0 {
		o.MaxOutstanding = defaultMaxOutstanding
	}
	if o.IdleAfter == 0 {
		o.IdleAfter = time.Second
	} else if o.IdleAfter < 0 {
		o.IdleAfter = 1<<63 - 1
	}
	t := &Tracker{
		opts:      o,
		addrPairs: make(map[pairKey]uint32),
		ud:        make(map[udKey]*Session),
		cmReqs:    make(map[cmKey]cmReq),
	}
	if o.MPT != nil {
		t.mptResp, t.mptLID = mptKey(o.MPT.Responder)
	}
	if len(o.DecodeAs) > 0 {
		t.ulpInit()
	}
	t.fab = newFabric(&t.opts)
	return t
}

// Sessions returns the sessions found so far in order of first appearance.
// Provisional sessions merged into another are left out: the session that
// absorbed one lists its ID in Merged (frames tracked before the merge
// carry it).
func (t *Tracker) Sessions() []*Session {
	if t.merges == 0 && t.evicted.Sessions == 0 {
		// every session is one: none is read (a million of them would
		// each be read from memory)
		return t.sessions.appendTo(make([]*Session, 0, t.sessions.len()))
	}
	out := make([]*Session, 0, t.sessions.len())
	for _, c := range t.sessions.chunks {
		for _, s := range c {
			if s != nil && s.MergedInto() == 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

// sessionsOf yields the sessions of ids still kept (not evicted), each
// once, in session order (ids is sorted in place): for the end of the
// capture, which reads only the sessions it has to, as the reports'
// order is the sessions'.
func (t *Tracker) sessionsOf(ids []uint32) iter.Seq[*Session] {
	slices.Sort(ids)
	return func(yield func(*Session) bool) {
		for i, id := range ids {
			if i > 0 && id == ids[i-1] {
				continue
			}
			if s := t.sessions.at(int(id) - 1); s != nil && !yield(s) {
				return
			}
		}
	}
}

// Resolve returns the ID of the session of the list (Sessions) that a
// frame's or an event's session ID now stands for: the ID itself, or the
// session a provisional one merged into. 0 stays 0.
func (t *Tracker) Resolve(id uint32) uint32 {
	for s := t.Session(id); s != nil && s.MergedInto() != 0; s = t.Session(id) {
		id = s.MergedInto()
	}
	return id
}

// Session returns the session with the given ID, or nil.
func (t *Tracker) Session(id uint32) *Session {
	if id == 0 || int(id) > t.sessions.len() {
		return nil
	}
	return t.sessions.at(int(id) - 1)
}

// addrs returns the packet's source and destination: IP addresses
// (IPv4-mapped), GIDs, or LIDs (marked 0xff 0xfe … LID).
func addrs(p *decode.Packet) (src, dst addr16, lid bool) {
	var k halfKey
	lid = setAddrs(&k, p)
	return k.src, k.dst, lid
}

// setAddrs sets k's addresses to p's (addrs) in place: Prefetch, on
// every packet, would otherwise copy them through the stack three times.
// An IPv4 address goes in as two 8-byte stores, each composed in a
// register: the key is read at once, 8 bytes at a time (eq16, pairSlot),
// and a load can take its bytes from one store still on its way to the
// cache, not from several (bytes 8-11 and 12-15 stored apart made every
// packet wait for them; stats on the 8-pair capture: 6% of its CPU).
// For the same reason a key just set is passed on by pointer (lookup,
// pairID, setHalf), not copied whole.
func setAddrs(k *halfKey, p *decode.Packet) (lid bool) {
	src, dst := &k.src, &k.dst
	switch {
	case p.Has&decode.HdrIPv4 != 0 && !p.IPIsPayload():
		binary.LittleEndian.PutUint64(src[:8], 0)
		binary.LittleEndian.PutUint64(dst[:8], 0)
		binary.LittleEndian.PutUint64(src[8:], 0xffff0000|uint64(binary.LittleEndian.Uint32(p.IPv4.Src[:]))<<32)
		binary.LittleEndian.PutUint64(dst[8:], 0xffff0000|uint64(binary.LittleEndian.Uint32(p.IPv4.Dst[:]))<<32)
	case p.Has&decode.HdrIPv6 != 0 && !p.IPIsPayload():
		*src, *dst = p.IPv6.Src, p.IPv6.Dst
	case p.Has&decode.HdrGRH != 0:
		*src, *dst = p.GRH.SGID, p.GRH.DGID
	case p.Has&decode.HdrLRH != 0:
		*src, *dst = addr16{0xff, 0xfe}, addr16{0xff, 0xfe}
		binary.BigEndian.PutUint16(src[14:], p.LRH.SLID)
		binary.BigEndian.PutUint16(dst[14:], p.LRH.DLID)
		return true
	default:
		*src, *dst = addr16{}, addr16{}
	}
	return false
}

func endpoint(a addr16, lid bool) Endpoint {
	if lid {
		return Endpoint{LID: binary.BigEndian.Uint16(a[14:])}
	}
	return Endpoint{addr: a, hasAddr: true}
}

// Track analyzes one packet, in capture order, and fills p.Analysis.
func (t *Tracker) Track(p *decode.Packet) {
	a := &p.Analysis
	a.Reset()
	a.Tracked = true
	t.end = p.Frame.Time
	now := p.Frame.Time.UnixNano()
	t.now = now
	if n := t.liveQ.len(); n > 0 && (t.due(t.liveQ.front().stamp) || n > maxLive) {
		t.sweep()
	}
	if t.packQ.len() > 0 && t.due(t.packQ.front().stamp) {
		t.packIdle()
	}
	if t.fab.start == 0 {
		t.fab.start = now
	}
	if p.Has&decode.HdrBTH == 0 {
		if p.Has&(decode.HdrPFC|decode.HdrPause) != 0 {
			t.pfcFrame(p)
		}
		return
	}
	op := p.BTH.Opcode
	var lid bool
	key := halfKey{qp: p.BTH.DestQP}
	pr := &t.pre[p.Frame.Number&1]
	pre, preFresh := false, false
	var preH half
	if pr.ok {
		pre = pr.frame == p.Frame.Number && pr.key.qp == p.BTH.DestQP
		preH, preFresh = pr.h, pre && pr.gen == t.dirGen
		pr.ok, pr.h = false, half{} // (h not kept past its packet: it would pin the session's slab)
	}
	if pre {
		key.src, key.dst, lid = pr.key.src, pr.key.dst, pr.lid
	} else {
		lid = setAddrs(&key, p)
	}

	if op == decode.CNP {
		// A CNP goes from the notification point back to the sender of
		// the marked packets: its destination QP is that sender's QP.
		h, ok := t.get(key)
		if ok {
			t.annotate(p, h.s, h.side)
			f := h.s.f()
			f.CNPs++
			f.cnpSent[h.side]++
			h.s.Sent[h.side].Packets++
			h.s.Sent[h.side].Bytes += uint64(p.Frame.Len)
			h.s.last = now
		}
		t.ccCNP(p, h, ok, key.src, key.dst)
		t.event(p, decode.EventCNP, a.Session, "CNP to QP "+hex24(p.BTH.DestQP))
		t.pfcTraffic(p)
		return
	}
	if !op.Known() {
		return
	}
	if op.Transport() == decode.TransportUD {
		t.udPacket(p, key.src, key.dst, lid)
		return
	}

	var h half
	var ok bool
	switch {
	case preFresh && preH.s != nil:
		h, ok = preH, true // (Prefetch found it in the cache)
	case preFresh: // (Prefetch found the cache without it, and its key)
		h, ok = t.lookupTable(&t.cache[key.slot()], &key, pr.dk, pr.interned)
	default:
		h, ok = t.lookup(&key)
	}
	if !ok {
		if s := t.findPair(&key, p); s != nil {
			// the first response of a direction: it answers an
			// unpaired session's requests
			t.pair(s, &key)
			h = half{s, 1}
		} else {
			h = t.newHalf(p, &key, lid)
		}
	}
	s, side := h.s, h.side
	if op.IsResponse() && s.Learned == decode.PairingNone && !s.has[1] && hasResponses(s) {
		if s2, ok := t.tryPair(s, &key, p); ok {
			s, side = s2, 1
		}
	}

	d := &s.Sent[side]
	d.Packets++
	d.Bytes += uint64(p.Frame.Len)
	d.PayloadBytes += uint64(len(p.Payload))
	s.last = now
	t.annotate(p, s, side)
	t.packetState(p, s)
	if op.IsRequest() {
		d.Requests++
		t.request(p, s, side)
	} else {
		t.response(p, s, side) // (a response: Session.Responses)
	}
	if s.watch != 0 {
		t.watchRetries(p, s, side)
	}
	if s.MTU != 0 {
		a.MTU = s.MTU
	}
	if t.ulp != nil {
		t.ulpPacket(p, s, side)
	}
	t.fabricPacket(p, s, side)
}

// packetState counts and reports what the packet itself shows: an ECN CE
// mark, a bad ICRC/VCRC, a cut by the capture.
func (t *Tracker) packetState(p *decode.Packet, s *Session) {
	if ecn, ok := p.ECN(); ok && ecn == 3 {
		s.f().ECNCE++
		t.event(p, decode.EventECNCE, s.ID, "ECN Congestion Experienced")
	}
	if p.Flags&(decode.FlagICRCBad|decode.FlagVCRCBad) != 0 {
		s.f().ICRCErrors++
		t.event(p, decode.EventICRCBad, s.ID, "ICRC error: the packet is corrupt and a receiver drops it")
	}
	if p.Flags&decode.FlagTruncated != 0 {
		s.f().Truncated++
		t.event(p, decode.EventTruncated, s.ID, "truncated by the capture: payload length unknown")
	}
}

// annotate sets the session fields of p.Analysis.
func (t *Tracker) annotate(p *decode.Packet, s *Session, side uint8) {
	a := &p.Analysis
	a.Session = s.ID
	a.Learned = s.Learned
	a.Dir = decode.Direction(side)
	s.flags |= flagRef
}

func hasResponses(s *Session) bool {
	return s.Transport == decode.TransportRC || s.Transport == decode.TransportXRC || s.Transport == decode.TransportRD
}

// slabMax is the most sessions allocated together (slab): as many as
// fit in 96 KiB, which is 12 of the Go heap's 8 KiB pages (a large
// object takes whole pages: 256 sessions of 360 bytes took 12 pages for
// 11.25 of them, 6% of a million sessions' memory unused).
const slabMax = 96 << 10 / int(unsafe.Sizeof(Session{}))

// newSession registers a session.
func (t *Tracker) newSession(transport decode.Transport, now time.Time) *Session {
	ns := now.UnixNano()
	// Sessions are allocated in slabs, each session with room for the
	// kinds of message it will most likely send. A million QP pairs make
	// a million sessions: one allocation each cost more than tracking
	// their packets, and the garbage collector, marking a million small
	// objects scattered in the heap on each cycle, as much again; a slab
	// is one object, scanned in order. Slabs grow from 4 sessions to
	// slabMax, so a small capture allocates little. An evicted session's
	// memory (Options.MaxSessions) is returned with its slab's, once no
	// session of the slab is kept.
	if len(t.slab) == 0 {
		n := min(slabMax, max(4, t.sessions.len()))
		if t.evicted.Sessions > 0 {
			// A slab lives as long as the longest-lived of its sessions:
			// once MaxSessions is reached, one of them kept could keep
			// the memory of slabMax-1 evicted. Past the first eviction,
			// sessions are allocated one by one (the slabs made before
			// hold at most MaxSessions sessions' worth).
			n = 1
		}
		t.slab = make([]Session, n)
		if len(t.slab) == slabMax {
			populateSlab(t.slab) // (a full slab is its own pages)
		}
	}
	s := &t.slab[0] // zero (make): set field by field, not rewritten whole
	t.slab = t.slab[1:]
	s.ID, s.Transport, s.first, s.last, s.flags = uint32(t.sessions.len()+1), transport, ns, ns, flagRef
	t.sessions.add(s)
	if t.opts.MaxSessions > 0 {
		if t.resident >= t.opts.MaxSessions {
			t.evictOne()
		}
		t.resQ.push(s.ID)
		t.resident++
	}
	return s
}

// newHalf starts a provisional session for a direction not seen before:
// its sender is side A. A response on it may later merge it into the
// session of the requests it answers (tryPair).
func (t *Tracker) newHalf(p *decode.Packet, key *halfKey, lid bool) half {
	s := t.newSession(p.BTH.Opcode.Transport(), p.Frame.Time)
	s.A = endpoint(key.src, lid)
	s.B = endpoint(key.dst, lid)
	s.B.QPN, s.B.QPNKnown = key.qp, true
	s.has[0] = true
	h := half{s, 0}
	t.setHalf(key, h)
	if hasResponses(s) {
		id, _ := t.pairID(&key.src, &key.dst, true) // (setHalf interned it)
		if int(id) >= len(t.unpaired) {
			t.unpaired = append(t.unpaired, make([][]*Session, int(id)+1-len(t.unpaired))...)
		}
		t.unpaired[id] = append(t.unpaired[id], s)
		s.link, s.flags = id, s.flags|flagUnpaired
	}
	t.ccNewUC(s, *key)
	return h
}

// findPair looks for the session whose requests the response p (sent on
// direction key) answers: a session from p's destination to p's source,
// not yet paired, with an outstanding request at p's PSN (or at least a
// PSN window holding it).
func (t *Tracker) findPair(key *halfKey, p *decode.Packet) *Session {
	if !p.BTH.Opcode.IsResponse() {
		return nil
	}
	id, ok := t.pairID(&key.dst, &key.src, false)
	if !ok || int(id) >= len(t.unpaired) {
		return nil
	}
	cands := t.unpaired[id]
	psn := p.BTH.PSN
	var best *Session
	bestScore := 0
	for _, c := range cands {
		if c.has[1] || c.Learned != decode.PairingNone || c.live == nil || !c.live.req[0].started {
			continue
		}
		st := &c.live.req[0]
		score := 0
		if st.outstandingAt(psn) >= 0 || st.readCovering(psn, c.MTU) >= 0 {
			score = 3
		} else if st.doneAt(psn) {
			score = 2
		} else if psn.InWindow(st.first.Add(-1<<16), st.next) {
			// a NAK carries the PSN the responder expected, which may
			// precede every request in the capture
			score = 1
		}
		if score > bestScore || score == bestScore && score > 0 && c.last > best.last {
			best, bestScore = c, score
		}
	}
	return best
}

// pair makes direction key s's side B.
func (t *Tracker) pair(s *Session, key *halfKey) {
	s.has[1] = true
	t.setHalf(key, half{s, 1})
	s.Learned = decode.PairingResponse
	s.A.QPN, s.A.QPNKnown = key.qp, true
	t.dropUnpaired(s)
}

// tryPair pairs the provisional session prov (one direction, key) with
// the session whose requests its response p answers, merging prov into it.
func (t *Tracker) tryPair(prov *Session, key *halfKey, p *decode.Packet) (*Session, bool) {
	best := t.findPair(key, p)
	if best == nil || best == prov {
		return nil, false
	}
	t.merge(prov, best, *key)
	t.pair(best, key)
	return best, true
}

// merge folds the provisional one-direction session prov (its side A
// sends on key) into s as s's side B.
//
// Everything prov counted moves to s. (A one-direction session answers
// none of its own requests: it has no latencies, and no unanswered
// requests before the end.)
func (t *Tracker) merge(prov, s *Session, key halfKey) {
	t.dropUnpaired(prov)
	prov.link, prov.flags = s.ID, prov.flags|flagMerged // (dropUnpaired cleared link)
	t.merges++
	f := s.f()
	f.merged = append(f.merged, prov.ID)
	f.merged = append(f.merged, prov.Merged()...)
	if prov.first < s.first {
		s.first = prov.first
	}
	s.Sent[1] = prov.Sent[0]
	f.cnpSent[1] = prov.Findings().cnpSent[0]
	st, pst := t.stream(s, 1), t.stream(prov, 0)
	*st = *pst
	f.GaveUp[1] = prov.Findings().GaveUp[0]
	s.watch |= prov.watch & 1 << 1
	// prov's responses answered the requests of s's side A
	t.mergeAnswers(t.stream(s, 0), t.stream(prov, 1))
	prov.eachKind(func(k *kindStats) {
		ks := s.addKind(k.kind())
		ks.addCount(k.count())
		ks.bytes += k.bytes
	})
	if prov.x != nil {
		px := *prov.x
		px.GaveUp, px.merged = [2]GiveUp{}, nil
		f.add(&px)
	}
	if s.MTU == 0 {
		s.MTU, s.mtuFrom = prov.MTU, prov.mtuFrom
	}
	// prov is only a name now (Resolve): it keeps no state
	t.ccMerge(prov, s)
	prov.live, prov.kinds, prov.more, prov.nkinds, prov.x = nil, [2]kindStats{}, nil, 0, nil
	if t.opts.MaxSessions > 0 {
		t.resident--
	}
}

// mergeAnswers carries into st what the responses of a provisional
// session found about st's requests before the two were paired: the NAK
// a retransmission answers, the rest of a READ whose request came before
// the capture, and the requests answered before the capture showed them.
func (t *Tracker) mergeAnswers(st, pr *reqStream) {
	if pr.nak.valid && (!st.nak.valid || pr.nak.frame > st.nak.frame) {
		st.nak = pr.nak
	}
	if pr.rr.active && !st.rr.active {
		st.rr = pr.rr
	}
	if !pr.early {
		return
	}
	for i := 0; i < len(st.out); {
		if o := st.out[i]; o.psn.Diff(pr.earlyPSN) <= 0 && pr.earlyPSN.Diff(o.psn) < restartDist {
			st.out = append(st.out[:i], st.out[i+1:]...)
			st.addDone(o)
			continue
		}
		i++
	}
	if !st.started {
		st.early, st.earlyPSN = true, pr.earlyPSN
	}
}

func (t *Tracker) dropUnpaired(s *Session) {
	if s.flags&flagUnpaired == 0 {
		return
	}
	id := s.link
	s.link, s.flags = 0, s.flags&^flagUnpaired
	l := t.unpaired[id]
	for i, c := range l {
		if c == s {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 && cap(l) > maxUnpairedKept {
		l = nil
	}
	// else an empty list stays, its room kept: a million QP pairs
	// between a few hosts would otherwise drop and make their address
	// pair's list once each
	t.unpaired[id] = l
}

// maxUnpairedKept is the room an empty list of unpaired sessions keeps.
const maxUnpairedKept = 16

// event reports an expert event and marks the packet.
func (t *Tracker) event(p *decode.Packet, e decode.Event, session uint32, text string) {
	p.Analysis.Events |= e
	t.emit(e, p.Frame.Number, p.Frame.Time.UnixNano(), session, text)
}

func (t *Tracker) emit(e decode.Event, frame int, at int64, session uint32, text string) {
	if t.opts.OnEvent == nil {
		return
	}
	_, sev, _ := decode.EventInfo(e)
	t.ev = Event{Kind: e, Severity: sev, Frame: frame, Time: time.Unix(0, at), Session: session, Text: text}
	t.opts.OnEvent(&t.ev)
}

// udPacket tracks a UD datagram: one flow per (source QP, destination QP,
// Q_Key) between two addresses; every packet is a whole message. UD has no
// PSN analysis: a UD QP numbers its sends to every destination from one
// sequence, so a flow's PSNs legitimately skip.
func (t *Tracker) udPacket(p *decode.Packet, src, dst addr16, lid bool) {
	var k udKey
	k.src, k.dst, k.dstQP = src, dst, p.BTH.DestQP
	if p.Has&decode.HdrDETH != 0 {
		k.srcQP, k.qkey = p.DETH.SrcQP, p.DETH.QKey
	}
	s, ok := t.ud[k]
	if !ok {
		s = t.newSession(decode.TransportUD, p.Frame.Time)
		s.Learned = decode.PairingUD
		s.A = endpoint(src, lid)
		s.A.QPN, s.A.QPNKnown = k.srcQP, p.Has&decode.HdrDETH != 0
		s.B = endpoint(dst, lid)
		s.B.QPN, s.B.QPNKnown = k.dstQP, true
		s.qkeyComm = k.qkey
		t.ud[k] = s
		if p.Has&decode.HdrDETH != 0 {
			t.fab.udSender[udSenderKey{src, dst, k.srcQP}] = s
		}
	}
	d := &s.Sent[0]
	d.Packets++
	d.Bytes += uint64(p.Frame.Len)
	d.PayloadBytes += uint64(len(p.Payload))
	d.Requests++
	s.last = t.now
	t.annotate(p, s, 0)
	t.packetState(p, s)
	t.fabricPacket(p, s, 0)
	kind := p.BTH.Opcode.MsgKind()
	n := uint64(len(p.Payload))
	s.countMessage(kind, n)
	a := &p.Analysis
	a.MsgKind, a.MsgLength, a.MsgFirst, a.MsgPackets = kind, n, p.Frame.Number, 1
	if t.opts.OnMessage != nil {
		t.msg = Message{Session: s.ID, Kind: kind, Opcode: p.BTH.Opcode, PSN: p.BTH.PSN, Packets: 1, Length: n,
			FirstFrame: p.Frame.Number, LastFrame: p.Frame.Number}
		t.opts.OnMessage(&t.msg)
	}
	if p.Has&decode.HdrCM != 0 {
		t.cm(p, src, dst, lid)
	}
	if p.Has&decode.HdrMAD != 0 {
		t.mad(p, s.ID)
		t.madMatch(p, src, dst)
	}
}

// liveState is what a session needs only while traffic is in flight:
// the analysis of each side's requests.
type liveState struct {
	req  [2]reqStream // requests sent by A (answered by B), by B
	rate [2]rateEst   // the rate each side sends at (cc.go)
}

// psnMemo is what a side's reqStream keeps while the session's live
// state is released: where its PSNs are.
type psnMemo struct {
	first, next decode.PSN
	softLen     uint32 // a READ sent while the MTU was not known (reqStream.soft): its length
}

// Session.memoFlags, for side A (side B's are shifted by memoSide).
const (
	memoStarted  = 1 << iota // reqStream.started
	memoAcked                // reqStream.hasAcked (lastAcked: the PSN before next, as nothing is outstanding)
	memoAnswered             // reqStream.answered
	memoSide     = 3
)

// stream returns the requests side of s sends, allocating the session's
// live state when it has none (and queueing it for release: sweep).
func (t *Tracker) stream(s *Session, side uint8) *reqStream {
	if s.live == nil {
		t.revive(s)
	}
	return &s.live.req[side]
}

func (t *Tracker) revive(s *Session) {
	var l *liveState
	if n := len(t.free); n > 0 {
		l, t.free = t.free[n-1], t.free[:n-1]
	} else {
		l = new(liveState)
	}
	for i := range l.req {
		m, st, f := &s.memo[i], &l.req[i], s.memoFlags>>(memoSide*i)
		st.started, st.first, st.next = f&memoStarted != 0, m.first, m.next
		st.hasAcked, st.answered = f&memoAcked != 0, f&memoAnswered != 0
		if st.hasAcked {
			st.lastAcked = m.next.Add(-1)
		}
		if m.softLen != 0 { // the READ is the PSN before next
			st.soft, st.softLen, st.softPSN = true, m.softLen, m.next.Add(-1)
			st.softHi = st.softPSN.Add(int((m.softLen + 255) / 256))
		}
	}
	l.rate = [2]rateEst{}
	s.live = l
	if s.flags&flagQueued == 0 {
		s.flags |= flagQueued
		t.liveQ.push(s.ID, t.now)
	}
}

// quiet reports whether nothing of st is in flight: its state reduces to
// a psnMemo.
func (st *reqStream) quiet() bool {
	return len(st.out) == 0 && len(st.pend) == 0 && len(st.missing) == 0 && !st.rr.active && !st.retry.active &&
		st.dead == 0 && !st.early && st.forgotten == 0 && (!st.soft || st.softPSN.Next() == st.next)
}

// release drops the live state of s when nothing is in flight, keeping
// where its PSNs are. It reports whether it did.
func (t *Tracker) release(s *Session) bool {
	l := s.live
	if l == nil {
		return true
	}
	if s.watch != 0 || !l.req[0].quiet() || !l.req[1].quiet() {
		return false
	}
	s.memoFlags = 0
	for i := range l.req {
		st := &l.req[i]
		s.memo[i] = psnMemo{first: st.first, next: st.next}
		if st.soft {
			s.memo[i].softLen = st.softLen
		}
		var f uint8
		if st.started {
			f |= memoStarted
		}
		if st.hasAcked {
			f |= memoAcked
		}
		if st.answered {
			f |= memoAnswered
		}
		s.memoFlags |= f << (memoSide * i)
	}
	s.live = nil
	if len(t.free) < maxFree {
		for i := range l.req {
			st := &l.req[i] // cleared, its buffers kept
			// (reslicing a slice into itself writes its length only)
			st.reqState = reqState{}
			st.missing = st.missing[:0]
			st.pend = st.pend[:0]
			st.out = st.out[:0]
			st.done = st.done[:0]
			st.recent = st.recent[:0]
		}
		t.free = append(t.free, l)
	}
	return true
}

// Bounds of the live states.
const (
	// maxLive: past this many sessions with a live state, the least
	// recently queued are released whether or not they were idle for
	// IdleAfter (when nothing of them is in flight). A 100 Gb/s link can
	// carry 10 million packets in the default IdleAfter. 1,024 live states
	// (about 1.4 MB with their sessions) are still in cache when released:
	// on 1M QP pairs of 4 packets, `expert` took 2.65 CPU s against 3.14 s
	// with 16,384 (one core, median of 3 interleaved runs; the 8-pair
	// capture of as many packets is unchanged, 1.00 s), the release
	// reading sessions long out of cache. 256 took 0.09 s less again, but
	// then a capture of a few hundred QPs live at once, quiet between
	// messages, would lose their rings of recent packets and answers at
	// every gap; since release no longer goes through the write barrier
	// (reqState), most of that gain is had anyway.
	maxLive = 1 << 10
	// maxFree released live states are kept for reuse.
	maxFree = 128
	// sweepWork bounds the sessions a sweep for maxLive looks at: when
	// most have something in flight it cannot release them, and must not
	// go through them all on every packet.
	sweepWork = 4
)

// sweep releases the live state of the sessions idle for IdleAfter (and,
// past maxLive, of the least recently queued ones); the others go back
// in the queue, to be looked at again an IdleAfter later.
func (t *Tracker) sweep() {
	idle := int64(t.opts.IdleAfter)
	work := sweepWork
	for t.liveQ.len() > 0 {
		e := t.liveQ.front()
		over := t.liveQ.len() > maxLive
		if !t.due(e.stamp) && (!over || work == 0) {
			break
		}
		work--
		t.liveQ.pop()
		s := t.sessions.at(int(e.id) - 1)
		if s == nil {
			continue
		}
		if s.live == nil {
			s.flags &^= flagQueued
			continue
		}
		if (over || t.now-s.last >= idle) && t.retire(s) {
			s.flags &^= flagQueued
			continue
		}
		t.liveQ.push(e.id, t.now)
	}
	t.liveQ.compact()
	// The next sweep, past maxLive a packet later, looks at the front
	// first: start loading its live state (1 KiB, last touched about
	// maxLive sessions ago, out of the core's caches) now, not when
	// release reads it. stats at a million QP pairs (4 packets a pair):
	// 1.306 CPU s against 1.350 without (median of 9 interleaved runs,
	// all cores); in the profile, release's reads of the live state had
	// taken 0.16 s a run.
	if t.liveQ.len() > 0 {
		if s := t.sessions.at(int(t.liveQ.front().id) - 1); s != nil && s.live != nil {
			prefetchLines(unsafe.Pointer(s.live), (unsafe.Sizeof(liveState{})+63)/64)
		}
	}
}

// retire releases the live state of s when nothing is in flight
// (release) and packs its latencies when it is idle (packWhenIdle); it
// reports whether it released it. Eviction releases without packing: the
// session is dropped.
func (t *Tracker) retire(s *Session) bool {
	if !t.release(s) {
		return false
	}
	t.packWhenIdle(s)
	return true
}

// packWhenIdle packs the latencies of s, whose live state was just
// released (Session.packLatencies), when it is idle: quiet for
// IdleAfter, or closed. A session released while still active, past
// maxLive, may get its next latency in a moment, which would unpack them
// again (4 KiB and a pass over the histogram for each kind): it is
// queued, and packed an IdleAfter later if it stayed quiet (packIdle).
func (t *Tracker) packWhenIdle(s *Session) {
	if s.Closed || t.now-s.last >= int64(t.opts.IdleAfter) {
		s.packLatencies()
		return
	}
	if s.flags&flagPackQueued == 0 && s.hasUnpacked() {
		s.flags |= flagPackQueued
		t.packQ.push(s.ID, t.now)
	}
}

// packIdle packs the latencies of the sessions queued by packWhenIdle an
// IdleAfter ago and quiet since (as sweep releases the idle ones: each
// is looked at once an IdleAfter); one live again is left to its next
// release, one active since is queued again.
func (t *Tracker) packIdle() {
	for t.packQ.len() > 0 {
		e := t.packQ.front()
		if !t.due(e.stamp) {
			break
		}
		t.packQ.pop()
		s := t.sessions.at(int(e.id) - 1)
		if s == nil { // evicted
			continue
		}
		s.flags &^= flagPackQueued
		if s.live == nil {
			t.packWhenIdle(s)
		}
	}
	t.packQ.compact()
}

// due reports whether a session queued at stamp (liveQ, packQ) is due to
// be looked at again: an IdleAfter ago, or in the future (a packet's
// time went back since: waiting for it would stall the queue behind it).
func (t *Tracker) due(stamp int64) bool {
	d := t.now - stamp
	return d >= int64(t.opts.IdleAfter) || d < 0
}

// stampQueue is a queue of sessions by the time they were queued, oldest
// first (liveQ, packQ).
type stampQueue struct {
	q    []liveEntry
	head int
}

func (q *stampQueue) len() int                { return len(q.q) - q.head }
func (q *stampQueue) front() liveEntry        { return q.q[q.head] }
func (q *stampQueue) pop()                    { q.head++ }
func (q *stampQueue) push(id uint32, t int64) { q.q = append(q.q, liveEntry{id, t}) }

// entries returns the sessions queued, oldest first.
func (q *stampQueue) entries() []liveEntry { return q.q[q.head:] }

// compact moves the queue to the front of its slice once most of it was
// popped, and gives its memory back when a burst is over.
func (q *stampQueue) compact() {
	if q.head > 1024 && q.head > len(q.q)/2 {
		s := q.q
		if n := q.len(); cap(s) > 4*n+4096 {
			s = make([]liveEntry, 0, 2*n)
		}
		q.q = append(s[:0], q.q[q.head:]...)
		q.head = 0
	}
}

// Evicted sums the sessions evicted past Options.MaxSessions.
type Evicted struct {
	Sessions uint64 // sessions evicted
	Packets  uint64
	Bytes    uint64
	Messages uint64
	Findings Findings // their findings, summed
}

// Evicted returns what the sessions evicted past Options.MaxSessions
// counted.
func (t *Tracker) Evicted() Evicted { return t.evicted }

// DefaultMaxSessions is the commands' --max-sessions (and the TUI's): it
// keeps the tracker near half a gigabyte, an idle session taking about
// 390 bytes (TestIdleSessionBudget), more with its latencies packed: 530
// for 132 messages over 8 values (TestBusyIdleSessionBudget), up to a
// few KiB for latencies spread over the whole histogram.
const DefaultMaxSessions = 1000000

// MaxSessions returns Options.MaxSessions: how many sessions it keeps (0:
// no limit).
func (t *Tracker) MaxSessions() int { return t.opts.MaxSessions }

// evictOne evicts the least recently active session: the clock goes
// round the sessions kept, sparing (once) those with a packet since it
// last passed.
func (t *Tracker) evictOne() {
	for range 2*t.resQ.len() + 1 {
		id, ok := t.resQ.pop()
		if !ok {
			return
		}
		s := t.sessions.at(int(id) - 1)
		if s == nil || s.MergedInto() != 0 {
			continue // evicted, or merged into another (which the ring holds)
		}
		if s.flags&flagRef != 0 {
			s.flags &^= flagRef
			t.resQ.push(id)
			continue
		}
		t.evict(s)
		return
	}
}

// evict ends what s has in flight, adds its counts to t.evicted and
// forgets it: the maps no longer lead to it, and Sessions leaves it out.
func (t *Tracker) evict(s *Session) {
	if t.evicted.Sessions == 0 && t.opts.OnEvicting != nil {
		t.opts.OnEvicting()
	}
	t.flushSession(s)
	if s.live != nil {
		t.release(s) // (flushSession emptied it)
		s.live = nil
	}
	e := &t.evicted
	e.Sessions++
	e.Packets += s.Packets()
	e.Bytes += s.Bytes()
	e.Messages += s.MessageCount()
	if s.x != nil {
		e.Findings.add(s.x)
	}
	t.dropUnpaired(s)
	t.ccEvict(s)
	if s.Learned == decode.PairingUD {
		k := udKey{src: s.A.key(), dst: s.B.key(), srcQP: s.A.QPN, dstQP: s.B.QPN, qkey: s.qkeyComm}
		if t.ud[k] == s {
			delete(t.ud, k)
		}
	}
	t.dirGen++
	for side := range s.has {
		if !s.has[side] {
			continue
		}
		k := s.key(side)
		if dk, ok := t.dirKey(&k, false); ok {
			if v, _ := t.halves.get(dk); v == s.ID<<1|uint32(side) {
				t.halves.delete(dk)
			}
		}
		if c := &t.cache[k.slot()]; c.h.s == s {
			*c = cacheEntry{}
		}
	}
	t.sessions.drop(int(s.ID) - 1)
	t.resident--
}
