package replay

import (
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// Model is the responder a capture is replayed into; *hca.Model is one.
// Tests inject fakes.
type Model interface {
	// Receive answers one request packet at capture time ts. The Result
	// and its slices may be reused by the next call.
	Receive(p *decode.Packet, ts time.Time) *hca.Result
	// Observe shows the model a response the real responder sent, after it
	// was compared, so it learns memory it did not know. The replayer
	// skips it for responses the model predicted in full that matched.
	Observe(p *decode.Packet)
	// Finish returns the completions still pending at the end.
	Finish() []hca.Completion
}

var _ Model = (*hca.Model)(nil)

// Options configure a Replayer.
type Options struct {
	// Responder is the node whose HCA is modeled: its IPv4 or IPv6
	// address or GID, or its LID (native InfiniBand without GRHs).
	// Required.
	Responder decode.Node
	// QPs are the responder's QPs as the MPT file describes them: they
	// name the sessions and pair captured responses (whose BTH names the
	// requester's QP) with the responder QP that sent them.
	QPs []hca.QPConfig
	// MaxPending is how many model responses a session keeps waiting for
	// their captured counterparts; when it is full the oldest is reported
	// missing. 0 is DefaultMaxPending.
	MaxPending int
	// MaxPendingBytes bounds the READ data of all waiting model responses
	// together: a session that would go over it reports its oldest
	// waiting responses missing first. 0 is DefaultMaxPendingBytes.
	MaxPendingBytes int
	// MaxDivergences and MaxCompletions are how many divergences and
	// completions the report keeps in detail (all are counted); 0 keeps
	// all.
	MaxDivergences int
	MaxCompletions int
	// MaxNotes is how many notes the report keeps in detail (all are
	// counted); 0 keeps as many as MaxDivergences.
	MaxNotes int
	// Capture, MPT and Profile name the inputs in the report.
	Capture, MPT, Profile string
}

// Defaults of Options.MaxPending and Options.MaxPendingBytes: a READ of
// 64 MiB at an MTU of 1024 waits in full.
const (
	DefaultMaxPending      = 1 << 16
	DefaultMaxPendingBytes = 256 << 20
)

// maxSessions bounds the sessions a hostile capture can create (requests
// to QPs the MPT does not have, responses to unknown requester QPs); the
// packets of any further such QP are counted in one overflow session.
const maxSessions = 4096

// Replayer replays one capture into a model. Feed it every packet in
// capture order, then call Finish. It is not safe for concurrent use.
type Replayer struct {
	m   Model
	opt Options
	// resp4 is the responder's IPv4 address when is4, for the fast path.
	resp4 [4]byte
	is4   bool

	rep      Report
	byQPN    map[uint32]*session // responder QP → session
	byPeer   peers               // requester (address, QPN) → session
	sessions []*session
	overflow *session
	hosts    map[decode.Node]bool
	// pendingBytes is the READ data of all waiting model responses.
	pendingBytes int
}

// peers maps a requester (node, QPN) to its session. It is keyed by the
// QPN, cheap to hash, then searched by node.
type peers map[uint32][]peerEntry

type peerEntry struct {
	addr decode.Node
	s    *session
}

func (m peers) get(addr decode.Node, qpn uint32) *session {
	for _, e := range m[qpn] {
		if e.addr == addr {
			return e.s
		}
	}
	return nil
}

func (m peers) set(addr decode.Node, qpn uint32, s *session) {
	es := m[qpn]
	for i := range es {
		if es[i].addr == addr {
			es[i].s = s
			return
		}
	}
	m[qpn] = append(es, peerEntry{addr, s})
}

// ErrNoResponder is returned by New when Options.Responder is not set.
var ErrNoResponder = errors.New("replay: no responder address")

// New returns a Replayer that feeds m.
func New(m Model, opt Options) (*Replayer, error) {
	if !opt.Responder.IsValid() {
		return nil, ErrNoResponder
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = DefaultMaxPending
	}
	if opt.MaxPendingBytes <= 0 {
		opt.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if opt.MaxNotes <= 0 {
		opt.MaxNotes = opt.MaxDivergences
	}
	r := &Replayer{m: m, opt: opt, byQPN: map[uint32]*session{}, byPeer: peers{}, hosts: map[decode.Node]bool{}}
	if a := opt.Responder.Addr(); a.Is4() {
		r.resp4, r.is4 = a.As4(), true
	}
	r.rep.Capture, r.rep.MPT, r.rep.Profile, r.rep.Responder = opt.Capture, opt.MPT, opt.Profile, opt.Responder
	for i := range opt.QPs {
		q := &opt.QPs[i]
		s := r.newSession(q.QPN, true)
		s.Type, s.InMPT = q.Type, true
		if q.Remote != nil && q.Type != decode.TransportUD {
			s.PeerAddr, s.PeerQPN, s.HasPeerQPN = q.Remote.Addr, q.Remote.QPN, true
			r.byPeer.set(q.Remote.Addr, q.Remote.QPN, s)
		}
	}
	return r, nil
}

// newSession adds a session; qpn is the responder QP when hasQPN.
func (r *Replayer) newSession(qpn uint32, hasQPN bool) *session {
	s := &session{Session: &Session{ID: len(r.sessions) + 1, QPN: qpn, HasQPN: hasQPN}}
	r.sessions = append(r.sessions, s)
	if hasQPN {
		r.byQPN[qpn] = s
	}
	return s
}

// sessionFor returns the session of responder QP qpn, creating it (or
// using the overflow session) for a QP the MPT does not have.
func (r *Replayer) sessionFor(qpn uint32) *session {
	if s := r.byQPN[qpn]; s != nil {
		return s
	}
	if len(r.sessions) >= maxSessions {
		return r.overflowSession()
	}
	return r.newSession(qpn, true)
}

func (r *Replayer) overflowSession() *session {
	if r.overflow == nil {
		r.overflow = r.newSession(0, false)
		r.overflow.overflow = true
	}
	return r.overflow
}

// Skip counts a packet the caller left out (a display filter).
func (r *Replayer) Skip() {
	r.rep.Packets++
	r.rep.Ignored.Filtered++
}

// Feed hands the replayer the next packet of the capture. p is not kept.
func (r *Replayer) Feed(p *decode.Packet) {
	r.rep.Packets++
	if p.Has&decode.HdrBTH == 0 {
		r.rep.Ignored.NotRDMA++
		return
	}
	op := p.BTH.Opcode
	if op == decode.CNP {
		r.rep.Ignored.CNP++
		return
	}
	if p.BTH.DestQP <= 1 {
		r.rep.Ignored.Management++
		return
	}
	toResp, fromResp, ok := r.direction(p)
	if !ok {
		r.rep.Ignored.NoAddress++
		return
	}
	isResp := op.IsResponse()
	switch {
	case toResp && !isResp:
		r.request(p)
	case fromResp && isResp:
		r.response(p)
	case toResp || fromResp:
		r.rep.Ignored.Reverse++
	default:
		r.rep.Ignored.OtherHosts++
		if !isResp && len(r.hosts) < 8 {
			if _, dst, ok := p.Nodes(); ok {
				r.hosts[dst] = true
			}
		}
	}
}

// direction says whether p goes to or comes from the responder; ok is
// false when p has no address (no IP header, GRH or LRH).
func (r *Replayer) direction(p *decode.Packet) (to, from, ok bool) {
	if p.Has&decode.HdrIPv4 != 0 && !p.IPIsPayload() && r.is4 {
		return p.IPv4.Dst == r.resp4, p.IPv4.Src == r.resp4, true
	}
	src, dst, ok := p.Nodes()
	return dst == r.opt.Responder, src == r.opt.Responder, ok
}

// request feeds a request to the model and queues its responses.
func (r *Replayer) request(p *decode.Packet) {
	r.rep.Requests++
	s := r.sessionFor(p.BTH.DestQP)
	s.Requests++
	if !s.overflow && s.Type != decode.TransportUD {
		r.learnPeerAddr(s, p)
	}
	res := r.m.Receive(p, p.Frame.Time)
	if !s.hasLast || p.BTH.PSN.Diff(s.lastPSN) > 0 {
		s.lastPSN, s.lastFrame, s.hasLast = p.BTH.PSN, p.Frame.Number, true
	}
	if res.Executed {
		s.Executed++
	}
	if res.Ack.Valid {
		s.acks.add(res.Ack, p.Frame.Number)
	}
	if res.Drop != hca.DropNone {
		if int(res.Drop) < numDrops {
			s.Dropped[res.Drop]++
		}
		s.drops.add(p.BTH.PSN, p.Frame.Number, res.Drop)
		if s.NothingToCompare() {
			if len(s.DropList) < maxDropList {
				s.DropList = append(s.DropList, DroppedRequest{Frame: p.Frame.Number, PSN: p.BTH.PSN, Reason: res.Drop, Why: res.Why})
			} else {
				s.DropListOmitted++
			}
		}
	}
	verdict := hca.VerdictNone
	if !res.Check.Verdict.Allowed() {
		verdict = res.Check.Verdict
	}
	for i := range res.Responses {
		m := &res.Responses[i]
		rs := s
		if m.QPN != p.BTH.DestQP {
			rs = r.sessionFor(m.QPN)
		}
		r.rep.ModelResponses++
		rs.ModelResponses++
		if rs.q.n >= r.opt.MaxPending {
			r.missing(rs, rs.q.front(), "no captured response came while "+itoa(r.opt.MaxPending)+" later model responses of the session waited")
			r.pop(rs)
		}
		for rs.q.n > 0 && r.pendingBytes+cost(m) > r.opt.MaxPendingBytes {
			r.missing(rs, rs.q.front(), "no captured response came while "+byteSize(r.opt.MaxPendingBytes)+" of later READ data waited")
			r.pop(rs)
		}
		e := rs.q.push()
		e.set(m, verdict)
		r.pendingBytes += e.cost
	}
	r.completions(res.Completions)
}

// byteSize is "256 MiB", or "1000 bytes" below a MiB.
func byteSize(n int) string {
	if n >= 1<<20 {
		return itoa(n>>20) + " MiB"
	}
	return itoa(n) + " bytes"
}

// pop removes the oldest waiting model response of s.
func (r *Replayer) pop(s *session) {
	e := s.q.front()
	if !e.last() {
		e.next++ // the next response of a series
		e.load()
		return
	}
	r.pendingBytes -= e.cost
	s.q.pop()
}

// learnPeerAddr records the requester's address of a connected session
// from its requests: the MPT may not name it, or name another.
func (r *Replayer) learnPeerAddr(s *session, p *decode.Packet) {
	var src decode.Node
	if p.Has&decode.HdrIPv4 != 0 && !p.IPIsPayload() {
		if a := s.PeerAddr.Addr(); a.Is4() && a.As4() == p.IPv4.Src {
			return
		}
		src = decode.NodeAddr(netip.AddrFrom4(p.IPv4.Src))
	} else {
		a, _, ok := p.Nodes()
		if !ok || a == s.PeerAddr {
			return
		}
		src = a
	}
	if s.HasPeerQPN {
		if r.byPeer.get(src, s.PeerQPN) == nil {
			r.byPeer.set(src, s.PeerQPN, s)
		}
	}
	if !s.PeerAddr.IsValid() || !s.HasPeerQPN {
		s.PeerAddr = src
	}
}

func (r *Replayer) completions(cs []hca.Completion) {
	c := &r.rep.Completions
	for i := range cs {
		if cs[i].Requester {
			c.Requester[cs[i].Status]++
		} else {
			c.Responder[cs[i].Status]++
		}
		if r.opt.MaxCompletions == 0 || len(c.List) < r.opt.MaxCompletions {
			c.List = append(c.List, cs[i])
		} else {
			c.Omitted++
		}
	}
}

// response aligns a captured response with the model's.
func (r *Replayer) response(p *decode.Packet) {
	r.rep.CapturedResponses++
	_, dst, _ := p.Nodes()
	s := r.byPeer.get(dst, p.BTH.DestQP)
	if s == nil {
		s = r.bindPeer(dst, p)
	}
	if s == nil {
		s = r.unpaired(dst, p.BTH.DestQP)
		s.CapturedResponses++
		r.extra(s, p, "no responder QP in the MPT is connected to "+dst.String()+" QP "+hex24(p.BTH.DestQP))
		r.m.Observe(p)
		return
	}
	s.CapturedResponses++
	r.align(s, p) // and shows the model what it can learn from p
}

// bindPeer pairs a captured response with a connected session whose
// requester QP is not known (an MPT QP without "remote"): the session
// whose waiting model responses include the response's PSN, from the
// same requester address.
func (r *Replayer) bindPeer(dst decode.Node, p *decode.Packet) *session {
	for _, s := range r.sessions {
		if s.HasPeerQPN || !s.HasQPN || s.Type == decode.TransportUD || s.PeerAddr.IsValid() && s.PeerAddr != dst {
			continue
		}
		if s.q.find(p.BTH.PSN) < 0 {
			continue
		}
		s.PeerAddr, s.PeerQPN, s.HasPeerQPN = dst, p.BTH.DestQP, true
		r.byPeer.set(dst, p.BTH.DestQP, s)
		return s
	}
	return nil
}

// unpaired returns the session of captured responses to requester
// (addr, qpn) that no responder QP answers for.
func (r *Replayer) unpaired(addr decode.Node, qpn uint32) *session {
	if s := r.byPeer.get(addr, qpn); s != nil {
		return s
	}
	if len(r.sessions) >= maxSessions {
		return r.overflowSession()
	}
	s := r.newSession(0, false)
	s.PeerAddr, s.PeerQPN, s.HasPeerQPN = addr, qpn, true
	r.byPeer.set(addr, qpn, s)
	return s
}

// CutShort says the capture ended before its end (a corrupt file): Finish
// then counts the model responses still waiting as not compared
// (Report.NotCompared) rather than missing.
func (r *Replayer) CutShort() { r.rep.CutShort = true }

// Finish ends the capture: model responses still waiting are missing, the
// model's last completions are collected, and the report is returned.
func (r *Replayer) Finish() *Report {
	for _, s := range r.sessions {
		for s.q.n > 0 {
			if r.rep.CutShort {
				r.rep.NotCompared++
			} else {
				r.missing(s, s.q.front(), "the capture ends without it")
			}
			r.pop(s)
		}
	}
	r.completions(r.m.Finish())
	rep := &r.rep
	if cm, ok := r.m.(cacheModel); ok {
		rep.Cache = newCacheReport(cm)
	}
	rep.Sessions = rep.Sessions[:0]
	for _, s := range r.sessions {
		s.Name = s.name()
		rep.Sessions = append(rep.Sessions, s.Session)
	}
	for i := range rep.Divergences {
		d := &rep.Divergences[i]
		d.SessionName = rep.Sessions[d.Session-1].Name
	}
	slices.SortStableFunc(rep.Divergences, func(a, b Divergence) int { return a.Frame() - b.Frame() })
	for i := range rep.NoteList {
		n := &rep.NoteList[i]
		n.SessionName = rep.Sessions[n.Session-1].Name
	}
	slices.SortStableFunc(rep.NoteList, func(a, b Note) int { return a.Frame() - b.Frame() })
	rep.RequestHosts = rep.RequestHosts[:0]
	for a := range r.hosts {
		rep.RequestHosts = append(rep.RequestHosts, a)
	}
	slices.SortFunc(rep.RequestHosts, decode.Node.Compare)
	return rep
}
