// Package learn infers an MPT file from a capture: the responder's QPs and
// the memory regions its answers prove exist. It is what `rocetap mpt
// learn` runs.
//
// The capture is read once, in order, through a flow.Tracker, which
// matches every response to the requests it answers
// (decode.Analysis.Acked, RequestFrame). From that:
//
//   - the responder is the node that sent the most responses (or the one
//     named in Options.Responder); when two sent as many, or none
//     answered, the one of them the capture's first request went to (with
//     rdma_cm, the CM REQ's destination: the side that accepted the
//     connection);
//   - its QPs are the destinations of the requests sent to it: QPN and
//     transport from the BTH; the expected PSN from the first request
//     (or from the PSN a PSN sequence error NAK names, when that is the
//     QP's first answer); the peer from the responses' destination; the
//     MTU from the tracker; the access flags from the operations the
//     responder executed;
//   - the memory regions are inferred per rkey from the accesses the
//     responder executed (ACKed WRITEs, READs answered with data, ATOMICs
//     answered with an ATOMIC ACK): the smallest range that covers them,
//     with the operations seen. NAKed accesses are not counted.
//
// Where the answers say more, the file says it too, so that the model
// built from it answers the capture's requests as the real responder did:
// RNR NAKs give the QP's min_rnr_timer and a receive queue with the
// receives the executed SENDs consumed; a SEND NAKed for its length gives
// a receive too small for it; a misaligned atomic NAKed with Invalid
// Request passed the rkey and bounds checks. Every inference is listed in
// Result.Notes.
package learn

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/text"
	"github.com/rocetap/rocetap/mpt"
)

// Options configure a Learner. The zero value is usable.
type Options struct {
	// Responder is the node to model (an IP address, GID or LID). Zero:
	// the node that sent the most responses.
	Responder decode.Node
	// Profile is the MPT file's responder profile. "": rxe when the
	// capture's NAKs show Soft-RoCE's answers, else left out (ibta).
	Profile string
	// TrustUC counts UC WRITEs as executed. UC has no acknowledgements:
	// without it, UC accesses add nothing to the file.
	TrustUC bool
	// MaxPending bounds the request packets remembered while their
	// answers are awaited (older ones are forgotten first). 0 means 1<<18.
	MaxPending int
	// DecodeAs names the upper-layer protocol of connections whose CM
	// exchange the capture lacks (flow.Options.DecodeAs, -d): a QP
	// carrying one gets a note.
	DecodeAs []flow.DecodeAs
}

// Result is the learned MPT file and how it was inferred.
type Result struct {
	File *mpt.File
	// ResponderFrom says how the responder was chosen.
	ResponderFrom string
	// Notes list every inference and every value the capture could not
	// give, one sentence each.
	Notes []string
}

// Learner collects what a capture shows. Feed it every packet in capture
// order with Add, then call Finish. It is not safe for concurrent use.
type Learner struct {
	opts Options
	tr   *flow.Tracker

	recs  map[int]*reqRec
	order []int // frames of recs, oldest first (for MaxPending)
	head  int
	cur   map[dirKey]*curMsg

	nodes     map[decode.Node]*node
	nodeOrder []decode.Node
	responses map[decode.Node]int
	respOrder []decode.Node

	forgotten int // request messages forgotten before their answer
	packets   int
}

// node is what the capture shows of one destination of requests.
type node struct {
	addr    decode.Node
	qps     map[uint32]*qpInfo
	qpOrder []uint32
	mrs     map[uint32]*mrInfo
	mrOrder []uint32
	skipped map[string]int // requests to QPs an MPT file does not hold, by reason
}

type qpInfo struct {
	qpn        uint32
	transport  decode.Transport
	firstPSN   decode.PSN
	session    uint32
	maxPayload int // largest request or READ response payload

	answered  bool
	seqNAK    bool // its first answer was a PSN sequence error NAK
	seqPSN    decode.PSN
	seqFrame  int
	remote    decode.Node
	remoteQPN uint32
	hasRemote bool

	acked      hca.Access // operations the responder executed
	nak62      hca.Access // operations NAKed with Remote Access Error
	nak61      hca.Access // aligned operations NAKed with Invalid Request
	nak61Frame int
	misaligned bool // an atomic on an unaligned address NAKed with Invalid Request

	rnr      bool
	rnrTimer uint8
	rnrFrame int
	recvs    []recvEv  // receives consumed by executed SENDs and WRITEs with immediate
	sendNAKs []sendNAK // SENDs NAKed with Invalid Request or Remote Operational Error

	ucUnconfirmed int // UC WRITEs not counted (no TrustUC)
	otherQPs      int // requests with another transport to the same QPN
}

type mrInfo struct {
	rkey       uint32
	lo, hi     uint64
	has        bool // lo/hi hold an executed access
	access     hca.Access
	accesses   int
	invalidate bool // a SEND with Invalidate named it
	misaligned bool // the range includes a misaligned atomic NAKed with Invalid Request
}

type recvEv struct {
	frame  int // the packet that consumed it
	at     time.Time
	length uint64
}

type sendNAK struct {
	code  uint8
	frame int // consuming packet
	at    time.Time
	bytes uint64 // message bytes up to and including the NAKed packet
	nak   int    // the NAK's frame
}

// access is the remote access a request message carries.
type access struct {
	op     hca.AccessOp // 0: none
	rkey   uint32
	va     uint64
	length uint64
	inv    bool // SEND with Invalidate of rkey
}

// reqRec is one request packet to an RC or XRC QP, kept until answered.
type reqRec struct {
	frame    int
	dst      decode.Node
	qpn      uint32
	kind     decode.MsgKind
	op       decode.Opcode
	latest   time.Time // its latest transmission
	msgFirst int       // frame of its message's first packet
	before   uint64    // message payload before this packet
	payload  uint64
	acc      access
	done     bool
}

type dirKey struct {
	src, dst decode.Node
	qpn      uint32
}

type curMsg struct {
	first int
	bytes uint64
	acc   access
}

// New returns a Learner.
func New(o Options) *Learner {
	if o.MaxPending <= 0 {
		o.MaxPending = 1 << 18
	}
	return &Learner{
		opts:      o,
		tr:        flow.New(flow.Options{DecodeAs: o.DecodeAs}),
		recs:      map[int]*reqRec{},
		cur:       map[dirKey]*curMsg{},
		nodes:     map[decode.Node]*node{},
		responses: map[decode.Node]int{},
	}
}

// Add tracks one decoded packet (in capture order) and learns from it.
// The Learner runs its own flow.Tracker: p.Analysis is overwritten.
func (l *Learner) Add(p *decode.Packet) {
	l.tr.Track(p)
	l.packets++
	if p.Has&decode.HdrBTH == 0 || !p.BTH.Opcode.Known() {
		return
	}
	op := p.BTH.Opcode
	if !op.IsRequest() && !op.IsResponse() {
		return
	}
	src, dst, ok := p.Nodes()
	if !ok {
		return
	}
	if op.IsRequest() {
		l.request(p, src, dst)
	} else {
		l.response(p, src, dst)
	}
}

// ulpConn returns the ULP connection of a QP's session (id, or s it was
// merged into), nil when it carries none.
func (l *Learner) ulpConn(id uint32, s *flow.Session) *flow.ULPConn {
	conns := l.tr.ULPConns()
	if c := conns[id]; c != nil {
		return c
	}
	if s != nil {
		return conns[s.ID]
	}
	return nil
}

func (l *Learner) node(a decode.Node) *node {
	n := l.nodes[a]
	if n == nil {
		n = &node{addr: a, qps: map[uint32]*qpInfo{}, mrs: map[uint32]*mrInfo{}, skipped: map[string]int{}}
		l.nodes[a] = n
		l.nodeOrder = append(l.nodeOrder, a)
	}
	return n
}

func (n *node) mr(rkey uint32) *mrInfo {
	m := n.mrs[rkey]
	if m == nil {
		m = &mrInfo{rkey: rkey}
		n.mrs[rkey] = m
		n.mrOrder = append(n.mrOrder, rkey)
	}
	return m
}

// add widens the range to cover [va, va+length) and adds op's flag.
func (m *mrInfo) add(op hca.AccessOp, va, length uint64) {
	end := va + length
	if end < va {
		end = ^uint64(0) // wraps: the responder cannot have executed it; keep the range sane
	}
	if !m.has || va < m.lo {
		m.lo = va
	}
	if !m.has || end > m.hi {
		m.hi = end
	}
	m.has = true
	m.access |= hca.AccessFlag(op)
}

// packetAccess returns the access a request packet's RETH, AtomicETH or
// IETH carries.
func packetAccess(p *decode.Packet) access {
	a := p.Access()
	if a.Op == decode.MPTOpInvalidate {
		return access{inv: true, rkey: a.RKey}
	}
	return access{op: a.Op, rkey: a.RKey, va: a.VA, length: a.Len}
}

func (l *Learner) request(p *decode.Packet, src, dst decode.Node) {
	n := l.node(dst)
	qpn := p.BTH.DestQP
	t := p.BTH.Opcode.Transport()
	switch {
	case qpn <= 1:
		n.skipped["QP0/QP1 (management datagrams)"]++
		return
	case t == decode.TransportRD:
		n.skipped["RD (no MPT QP type)"]++
		return
	}
	q := n.qps[qpn]
	if q == nil {
		q = &qpInfo{qpn: qpn, transport: t, firstPSN: p.BTH.PSN, session: p.Analysis.Session}
		n.qps[qpn] = q
		n.qpOrder = append(n.qpOrder, qpn)
	} else if q.transport != t {
		q.otherQPs++
		return
	}
	q.maxPayload = max(q.maxPayload, len(p.Payload))
	op := p.BTH.Opcode
	a := &p.Analysis
	if a.OrigFrame != 0 {
		// A transmission again: the original's latest copy is this one.
		// Answers name the first transmission, so this packet needs no
		// record of its own.
		if r := l.recs[a.OrigFrame]; r != nil {
			r.latest = p.Frame.Time
		}
		return
	}
	switch t {
	case decode.TransportUD:
		return
	case decode.TransportUC:
		if acc := packetAccess(p); acc.op == hca.OpWrite {
			if l.opts.TrustUC {
				q.acked |= hca.RemoteWrite
				if acc.length > 0 {
					m := n.mr(acc.rkey)
					m.add(acc.op, acc.va, acc.length)
					m.accesses++
				}
			} else {
				q.ucUnconfirmed++
			}
		}
		return
	}
	// RC, XRC: remember the packet until the responder answers it, with
	// the message it belongs to.
	key := dirKey{src, dst, qpn}
	c := l.cur[key]
	if op.Is(decode.PropStart) || c == nil {
		c = &curMsg{first: p.Frame.Number, acc: packetAccess(p)}
		l.cur[key] = c
	}
	r := &reqRec{frame: p.Frame.Number, dst: dst, qpn: qpn, kind: op.MsgKind(), op: op, latest: p.Frame.Time,
		msgFirst: c.first, before: c.bytes, payload: uint64(len(p.Payload)), acc: c.acc}
	if pa := packetAccess(p); pa.inv {
		r.acc = pa
	}
	c.bytes += r.payload
	if op.Is(decode.PropEnd) {
		delete(l.cur, key)
	}
	l.recs[p.Frame.Number] = r
	l.order = append(l.order, p.Frame.Number)
	for len(l.recs) > l.opts.MaxPending && l.head < len(l.order) {
		f := l.order[l.head]
		l.head++
		if old := l.recs[f]; old != nil {
			if old.op.Is(decode.PropEnd) {
				l.forgotten++ // a message that was never answered, or whose answer is still to come
			}
			delete(l.recs, f)
		}
	}
	if l.head > 4096 && l.head*2 > len(l.order) {
		l.order = append(l.order[:0], l.order[l.head:]...)
		l.head = 0
	}
}

// respQP returns the responder QP a response comes from: the QP of the
// request it answers, else the session's side that sent it.
func (l *Learner) respQP(p *decode.Packet, src decode.Node) *qpInfo {
	a := &p.Analysis
	frames := append([]int{a.RequestFrame}, a.Acked...)
	for _, f := range frames {
		if r := l.recs[f]; r != nil {
			if n := l.nodes[r.dst]; n != nil {
				return n.qps[r.qpn]
			}
		}
	}
	s := l.tr.Session(l.tr.Resolve(a.Session))
	if s == nil {
		return nil
	}
	ep := s.A
	if a.Dir == decode.DirBToA {
		ep = s.B
	}
	n := l.nodes[src]
	if n == nil || !ep.QPNKnown {
		return nil
	}
	return n.qps[ep.QPN]
}

func (l *Learner) response(p *decode.Packet, src, dst decode.Node) {
	if _, ok := l.responses[src]; !ok {
		l.respOrder = append(l.respOrder, src)
	}
	l.responses[src]++
	a := &p.Analysis
	q := l.respQP(p, src)
	op := p.BTH.Opcode
	if q != nil {
		if !q.hasRemote {
			q.remote, q.remoteQPN, q.hasRemote = dst, p.BTH.DestQP, true
		}
		if op.Is(decode.PropReadResp) {
			q.maxPayload = max(q.maxPayload, len(p.Payload))
		}
	}
	for _, f := range a.Acked {
		l.executed(l.recs[f])
	}
	switch {
	case op.Is(decode.PropReadResp | decode.PropStart), op.Is(decode.PropAtomicAck):
		l.executed(l.recs[a.RequestFrame])
	case op.Is(decode.PropAck):
		if p.Has&decode.HdrAETH == 0 {
			break
		}
		switch p.AETH.Kind() {
		case decode.AETHNak:
			code := p.AETH.Value()
			if code == decode.NakPSNSequenceError {
				if q != nil && !q.answered {
					q.seqNAK, q.seqPSN, q.seqFrame = true, p.BTH.PSN, p.Frame.Number
				}
				break
			}
			l.naked(l.recs[a.RequestFrame], code, p.Frame.Number)
		case decode.AETHRNRNak:
			if q != nil && !q.rnr {
				q.rnr, q.rnrTimer, q.rnrFrame = true, p.AETH.Value(), p.Frame.Number
			}
		}
	}
	if q != nil {
		q.answered = true
	}
}

func (l *Learner) qpOf(r *reqRec) (*node, *qpInfo) {
	n := l.nodes[r.dst]
	if n == nil {
		return nil, nil
	}
	return n, n.qps[r.qpn]
}

// consumer returns the packet that consumed a message's receive (SEND: its
// first packet; WRITE with immediate: its last, r) and when it last
// arrived.
func (l *Learner) consumer(r *reqRec) (int, time.Time) {
	if r.kind == decode.MsgWriteImm {
		return r.frame, r.latest
	}
	if f := l.recs[r.msgFirst]; f != nil {
		return r.msgFirst, f.latest
	}
	return r.msgFirst, r.latest
}

// executed counts a request message the responder executed; r is its last
// packet.
func (l *Learner) executed(r *reqRec) {
	if r == nil || r.done {
		return
	}
	r.done = true
	defer l.forget(r)
	n, q := l.qpOf(r)
	if q == nil {
		return
	}
	switch r.kind {
	case decode.MsgWrite, decode.MsgWriteImm, decode.MsgRead, decode.MsgAtomic:
		if r.acc.op == 0 {
			break // its first packet is not in the capture
		}
		q.acked |= hca.AccessFlag(r.acc.op)
		if r.acc.length > 0 {
			m := n.mr(r.acc.rkey)
			m.add(r.acc.op, r.acc.va, r.acc.length)
			m.accesses++
		}
	case decode.MsgSendInv:
		if r.acc.inv {
			n.mr(r.acc.rkey).invalidate = true
		}
	}
	switch r.kind {
	case decode.MsgSend, decode.MsgSendImm, decode.MsgSendInv, decode.MsgWriteImm:
		cf, at := l.consumer(r)
		length := r.before + r.payload
		if r.kind == decode.MsgWriteImm {
			length = 0 // the data goes to the MR, not to the receive buffer
		}
		q.recvs = append(q.recvs, recvEv{frame: cf, at: at, length: length})
	}
}

// forget drops the records of an answered message's first and last
// packets (its middle ones age out).
func (l *Learner) forget(r *reqRec) {
	if f := l.recs[r.msgFirst]; f != nil && f.dst == r.dst && f.qpn == r.qpn {
		delete(l.recs, r.msgFirst)
	}
	if l.recs[r.frame] == r {
		delete(l.recs, r.frame)
	}
}

// naked notes a NAK (other than a PSN sequence error) of the request
// packet r.
func (l *Learner) naked(r *reqRec, code uint8, nakFrame int) {
	if r == nil || r.done {
		return
	}
	r.done = true
	defer l.forget(r)
	n, q := l.qpOf(r)
	if q == nil {
		return
	}
	switch r.kind {
	case decode.MsgWrite, decode.MsgWriteImm, decode.MsgRead, decode.MsgAtomic:
		if r.acc.op == 0 {
			return
		}
		flag := hca.AccessFlag(r.acc.op)
		switch {
		case code == decode.NakRemoteAccessError:
			q.nak62 |= flag
		case code == decode.NakInvalidRequest && r.acc.op == hca.OpAtomic && r.acc.va&7 != 0:
			// The model checks alignment after the QP, rkey and
			// bounds: an Invalid Request NAK of a misaligned atomic
			// says those passed.
			q.misaligned = true
			m := n.mr(r.acc.rkey)
			m.add(r.acc.op, r.acc.va, 8)
			m.misaligned = true
		case code == decode.NakInvalidRequest && r.op.Is(decode.PropStart):
			if q.nak61&flag == 0 && q.nak61 == 0 {
				q.nak61Frame = nakFrame
			}
			q.nak61 |= flag
		}
	case decode.MsgSend, decode.MsgSendImm, decode.MsgSendInv:
		if code == decode.NakInvalidRequest || code == decode.NakRemoteOperational {
			cf, at := l.consumer(r)
			q.sendNAKs = append(q.sendNAKs, sendNAK{code: code, frame: cf, at: at, bytes: r.before + r.payload, nak: nakFrame})
		}
	}
}

// Finish ends the capture and returns the learned MPT file.
func (l *Learner) Finish() (*Result, error) {
	l.tr.Flush()
	res := &Result{}
	note := func(format string, args ...any) { res.Notes = append(res.Notes, fmt.Sprintf(format, args...)) }

	// The responder.
	resp := l.opts.Responder
	switch {
	case resp.IsValid():
		res.ResponderFrom = "given"
		if l.nodes[resp] == nil {
			return nil, fmt.Errorf("no request in the capture is sent to %s%s", resp, l.destinations())
		}
	case len(l.respOrder) == 0:
		var dests []decode.Node
		for _, a := range l.nodeOrder {
			if len(l.nodes[a].qps) > 0 {
				dests = append(dests, a)
			}
		}
		switch len(dests) {
		case 0:
			if len(l.nodeOrder) > 0 {
				// Requests went only to QP0/QP1 (CM, subnet
				// management): no QP, MR or access to learn.
				return nil, fmt.Errorf("no node answered a request: the capture's requests are management datagrams only%s; an MPT file describes QPs and MRs, and there are none to learn (replay needs RDMA traffic)", l.destinations())
			}
			return nil, fmt.Errorf("no node answered a request%s: an MPT file describes a responder's QPs and MRs, and there is nothing to learn them from", l.destinations())
		case 1:
			res.ResponderFrom = "no node answered; the only node requests were sent to"
			note("responder %s: no node answered a request; it is the only node requests were sent to", dests[0])
		default:
			res.ResponderFrom = "no node answered; the first node requests were sent to"
			note("responder %s: no node answered a request; requests went to %s, and %s is the one the capture's first request went to (name another with the responder option)",
				dests[0], addrList(dests), dests[0])
		}
		resp = dests[0]
	default:
		order := slices.Clone(l.respOrder)
		sort.SliceStable(order, func(i, j int) bool { return l.responses[order[i]] > l.responses[order[j]] })
		if len(order) > 1 && l.responses[order[0]] == l.responses[order[1]] {
			// As many answers from each: the answers do not tell which
			// node is the one to model; the one the first request went
			// to is (rdma_cm: the CM REQ's destination, the side that
			// accepted the connection).
			n := l.responses[order[0]]
			var tied []decode.Node
			for _, a := range l.nodeOrder {
				if l.responses[a] == n && len(l.nodes[a].qps) > 0 {
					tied = append(tied, a)
				}
			}
			if len(tied) == 0 {
				return nil, fmt.Errorf("%s and %s both sent %d responses: name the node to model", order[0], order[1], n)
			}
			i := slices.Index(order, tied[0])
			order[0], order[i] = order[i], order[0]
			note("responder %s: %s each sent %d responses; %s is the one the capture's first request went to",
				tied[0], addrList(tied), n, tied[0])
		}
		resp = order[0]
		total := 0
		for _, a := range order {
			total += l.responses[a]
		}
		res.ResponderFrom = fmt.Sprintf("sent %d of the capture's %d responses", l.responses[resp], total)
		for _, a := range order[1:] {
			note("%s answered %d requests too; name it as the responder to model it instead", a, l.responses[a])
		}
		if l.nodes[resp] == nil {
			return nil, fmt.Errorf("%s sent responses but no request to it is in the capture%s: name the node to model", resp, l.destinations())
		}
	}
	n := l.nodes[resp]

	// The profile: evidence of Soft-RoCE's answers, where the spec's
	// differ.
	profile := l.opts.Profile
	if profile != "" {
		p, err := hca.ProfileByName(profile)
		if err != nil {
			return nil, err
		}
		profile = p.String()
	} else {
		for _, qpn := range n.qpOrder {
			q := n.qps[qpn]
			if ev := q.nak61 &^ (q.acked | q.nak62); ev != 0 && profile == "" {
				profile = "rxe"
				note("profile rxe: frame %d NAKs a %s on QP %#06x with Invalid Request and the QP executed none; Soft-RoCE NAKs a QP access violation so, the spec with Remote Access Error", q.nak61Frame, opNames(ev), q.qpn)
			}
			for _, s := range q.sendNAKs {
				if s.code == decode.NakRemoteOperational && profile == "" {
					profile = "rxe"
					note("profile rxe: frame %d NAKs a SEND on QP %#06x with Remote Operational Error, as Soft-RoCE does for a SEND longer than its receive buffer (the spec: Invalid Request)", s.nak, q.qpn)
				}
			}
		}
		if profile == "" {
			profile = "ibta"
			note("profile left out (ibta): no NAK in the capture tells Soft-RoCE's answers from the spec's; name rxe for a Soft-RoCE responder")
		}
	}
	tooSmall := uint8(decode.NakInvalidRequest)
	if profile == "rxe" {
		tooSmall = decode.NakRemoteOperational
	}

	f := &mpt.File{Version: 1, Profile: profile, Config: hca.Config{Responder: resp, PDs: []hca.PDConfig{{ID: 0}}}}
	var neverAnswered, defaultMTU, ucNoPeer, udQKey []string
	for _, qpn := range n.qpOrder {
		q := n.qps[qpn]
		name := fmt.Sprintf("QP %#06x", qpn)
		qp := hca.QPConfig{QPN: qpn, PD: 0}
		switch q.transport {
		case decode.TransportRC, decode.TransportUC, decode.TransportUD, decode.TransportXRC:
			qp.Type = q.transport
		default:
			n.skipped[fmt.Sprintf("transport %#02x", q.transport)]++
			continue
		}
		reliable := qp.Type.Reliable()
		qp.Access = q.acked | q.nak62
		if q.misaligned {
			qp.Access |= hca.RemoteAtomic
		}
		if q.nak62&^q.acked != 0 {
			note("%s: %s counted as allowed on the QP though NAKed with Remote Access Error (frames before the NAK passed the QP check on Soft-RoCE; under the spec either check gives that NAK)", name, opNames(q.nak62&^q.acked))
		}
		if q.otherQPs > 0 {
			note("%s: %d requests with another transport than its first ignored", name, q.otherQPs)
		}

		// MTU: the tracker's, else the smallest that carries the
		// largest payload seen.
		s := l.tr.Session(l.tr.Resolve(q.session))
		switch {
		case s != nil && s.MTU != 0:
			qp.MTU = int(s.MTU)
			from := map[string]string{"cm": "the CM REQ", "payload": "full-size FIRST/MIDDLE packets", "read": "the PSNs a READ took"}[s.MTUFrom()]
			if from == "" {
				from = "the tracker"
			}
			note("%s: MTU %d from %s", name, qp.MTU, from)
		case q.maxPayload > 1024:
			qp.MTU = 2048
			if q.maxPayload > 2048 {
				qp.MTU = 4096
			}
			note("%s: MTU %d, the smallest that carries its largest payload (%d bytes); no full-size FIRST/MIDDLE packet shows the path MTU", name, qp.MTU, q.maxPayload)
		default:
			qp.MTU = 1024
			defaultMTU = append(defaultMTU, fmt.Sprintf("%#06x", qpn))
		}
		if c := l.ulpConn(q.session, s); c != nil {
			from := map[string]string{"cm": "the CM REQ's service ID", "decode-as": "decode-as"}[c.Learned]
			note("%s: carries %s (from %s): the MRs its requests reach are the protocol's buffers, which its hosts usually register for one command each", name, c.ULP.Title(), from)
		}

		switch {
		case reliable && !q.answered:
			// Never answered: no expected PSN and no peer keep the
			// model's QP out of RTR, so it drops the requests too.
			neverAnswered = append(neverAnswered, fmt.Sprintf("%#06x", qpn))
		case reliable:
			qp.ExpectedPSN, qp.HasExpectedPSN = q.firstPSN, true
			if q.seqNAK {
				qp.ExpectedPSN = q.seqPSN
				note("%s: expected_psn %#06x from the PSN sequence error NAK in frame %d, its first answer (the first request had PSN %#06x)", name, q.seqPSN, q.seqFrame, q.firstPSN)
			}
			if q.hasRemote {
				qp.Remote = &hca.Peer{Addr: q.remote, QPN: q.remoteQPN}
			}
		case qp.Type == decode.TransportUC:
			qp.ExpectedPSN, qp.HasExpectedPSN = q.firstPSN, true
			if s != nil && s.A.QPNKnown && s.B.QPN == qpn {
				qp.Remote = &hca.Peer{Addr: s.A.Node(), QPN: s.A.QPN}
			} else {
				ucNoPeer = append(ucNoPeer, fmt.Sprintf("%#06x", qpn))
			}
		case qp.Type == decode.TransportUD:
			udQKey = append(udQKey, fmt.Sprintf("%#06x", qpn))
		}
		if q.ucUnconfirmed > 0 {
			note("%s: %d UC WRITE(s) not counted: UC has no acknowledgements, so nothing shows the responder executed them (count them with the trust-UC option)", name, q.ucUnconfirmed)
		}

		if q.rnr {
			qp.MinRNRTimer, qp.HasMinRNRTimer = q.rnrTimer, true
			note("%s: min_rnr_timer %d from the RNR NAK in frame %d", name, q.rnrTimer, q.rnrFrame)
		}
		recvs := slices.Clone(q.recvs)
		small := 0
		for _, sn := range q.sendNAKs {
			if sn.code != tooSmall || sn.bytes == 0 {
				continue
			}
			recvs = append(recvs, recvEv{frame: sn.frame, at: sn.at, length: sn.bytes - 1})
			small++
		}
		if reliable && (q.rnr || small > 0) {
			sort.SliceStable(recvs, func(i, j int) bool { return recvs[i].frame < recvs[j].frame })
			// Posted no later than consumed, in posting order.
			for i := len(recvs) - 2; i >= 0; i-- {
				if recvs[i].at.After(recvs[i+1].at) {
					recvs[i].at = recvs[i+1].at
				}
			}
			qp.HasRecv, qp.Recv = true, make([]hca.RecvWQE, 0, len(recvs))
			for _, r := range recvs {
				qp.Recv = append(qp.Recv, hca.RecvWQE{Length: r.length, PostedAt: r.at, HasPostedAt: !r.at.IsZero()})
			}
			why := "RNR NAKs show its receive queue ran empty"
			if !q.rnr {
				why = "a SEND NAKed for its length shows a receive too small for it"
			}
			what := text.Plural(len(recvs)-small, "receive") + " consumed by executed SENDs and WRITEs with immediate (each as long as its message, posted when the message last arrived)"
			for _, sn := range q.sendNAKs {
				if sn.code == tooSmall && sn.bytes > 0 {
					what += fmt.Sprintf(", and one too small for the SEND NAKed in frame %d (1 byte shorter than the %d bytes that had arrived)", sn.nak, sn.bytes)
				}
			}
			note("%s: recv lists %s: %s", name, what, why)
		}
		f.QPs = append(f.QPs, qp)
	}

	// MRs.
	var zeroKey []string
	for _, rkey := range n.mrOrder {
		m := n.mrs[rkey]
		if rkey == 0 {
			zeroKey = append(zeroKey, strconv.Itoa(m.accesses))
			continue
		}
		mr := hca.MRConfig{RKey: rkey, LKey: rkey, PD: 0, Access: m.access | hca.LocalWrite}
		switch {
		case m.has:
			mr.VA, mr.Length = m.lo, m.hi-m.lo
			what := fmt.Sprintf("the %d access(es) the responder executed", m.accesses)
			if m.misaligned {
				what += " and the misaligned atomic(s) it NAKed with Invalid Request"
			}
			note("MR rkey %#08x: [%#x, +%d) is the smallest range covering %s (%s); the registered region may be larger", rkey, mr.VA, mr.Length, what, opNames(m.access))
		case m.invalidate:
			note("MR rkey %#08x: named only by an executed SEND with Invalidate: registered with length 0 at VA 0 so the invalidation succeeds", rkey)
		default:
			continue
		}
		f.MRs = append(f.MRs, mr)
	}
	if len(f.MRs) > 0 {
		note("MRs: lkey = rkey, PD 0, LOCAL_WRITE added (verbs require it with REMOTE_WRITE and REMOTE_ATOMIC); a memory window's rkey is learned as an MR")
	}
	if len(zeroKey) > 0 {
		note("accesses with rkey 0 left out: no MR can hold key 0 for remote access")
	}
	if len(neverAnswered) > 0 {
		note("QPs that never answered, left without expected_psn and remote so the model keeps them out of RTR and drops their requests too: %s", strings.Join(neverAnswered, ", "))
	}
	if len(defaultMTU) > 0 {
		note("MTU 1024 (not seen: no full-size packet, and every payload fits 1024 bytes) for QPs %s", strings.Join(defaultMTU, ", "))
	}
	if len(ucNoPeer) > 0 {
		note("UC QPs without remote (UC requests do not name their sender's QP): %s", strings.Join(ucNoPeer, ", "))
	}
	if len(udQKey) > 0 {
		note("UD QPs without q_key (the capture shows the Q_Keys senders used, not the one the QP has; the model accepts every Q_Key): %s", strings.Join(udQKey, ", "))
	}
	if len(f.QPs) > 0 {
		note("not inferred, left out: max_dest_rd_atomic and rq_depth")
	}
	var skipped []string
	for why, k := range n.skipped {
		skipped = append(skipped, fmt.Sprintf("%d to %s", k, why))
	}
	if len(skipped) > 0 {
		slices.Sort(skipped)
		note("requests left out: %s", strings.Join(skipped, ", "))
	}
	if l.forgotten > 0 {
		note("%s forgotten unanswered (more than %s waiting): the accesses of those answered later are not counted", text.Plural(l.forgotten, "request message"), text.Plural(l.opts.MaxPending, "packet"))
	}
	if len(f.QPs) == 0 {
		return nil, fmt.Errorf("no request to %s reached a QP an MPT file can hold (RC, UC, UD or XRC, not QP0/QP1)", resp)
	}

	// What is written must read back.
	out, err := mpt.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("learned MPT file: %w", err)
	}
	back, err := mpt.Parse("learned", out)
	if err != nil {
		return nil, fmt.Errorf("learned MPT file does not read back (a bug in rocetap): %w", err)
	}
	res.File = back
	return res, nil
}

// destinations lists the addresses requests were sent to, for messages.
func (l *Learner) destinations() string {
	if len(l.nodeOrder) == 0 {
		return " (the capture has no RDMA request)"
	}
	var s []string
	for _, a := range l.nodeOrder {
		if k := len(l.nodes[a].qps); k > 0 {
			s = append(s, a.String()+" ("+text.Plural(k, "QP")+")")
		} else {
			s = append(s, a.String()+" (QP0/QP1 only)")
		}
	}
	return "; requests go to " + strings.Join(s, ", ")
}

// addrList is "10.77.0.2 and 10.77.0.1", or "a, b and c".
func addrList(as []decode.Node) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func opNames(a hca.Access) string {
	var s []string
	if a&hca.RemoteWrite != 0 {
		s = append(s, "WRITE")
	}
	if a&hca.RemoteRead != 0 {
		s = append(s, "READ")
	}
	if a&hca.RemoteAtomic != 0 {
		s = append(s, "ATOMIC")
	}
	if len(s) == 0 {
		return "no access"
	}
	return strings.Join(s, "/")
}
