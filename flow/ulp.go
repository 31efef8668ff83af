package flow

import (
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// The ULP framework: which upper-layer protocol (NVMe-oF, RPC-over-RDMA,
// iSER, SMB Direct) a connection carries, SEND reassembly, and the hand-off
// of messages and RDMA transfers to that protocol's linker.
//
// A connection's ULP comes from its CM REQ (the service ID names the
// port: decode.ULPByServiceID) or, for a capture that starts after the
// connection, from Options.DecodeAs (QP -> protocol, the -d
// 'infiniband.bth.destqp==0x12,nvme-rdma' option). Then, for every packet
// of the connection, in capture order:
//
//   - SEND First/Middle/Last are reassembled per direction, in PSN order
//     (a gap drops the message, a PSN already delivered is not delivered
//     again); the complete message (SEND Only at once) goes to the linker's
//     Message once, on its last packet, with the frames it came from, the
//     key a SEND with Invalidate invalidates and the immediate.
//   - RDMA WRITE packets (every one, with the RETH of the message's first
//     packet carried on: rkey and the address of this packet's first byte),
//     RDMA READ requests (RETH) and READ responses (matched by PSN to their
//     request, with the address each response's data came from) go to the
//     linker's Data.
//
// The linker (one per protocol and tracker, from the function given to
// RegisterULP) decodes messages with its decode/ function, links data
// transfers and replies to commands, fills p.Analysis.ULP (the tracker
// points it at a decode.ULPInfo reset for each packet of a ULP
// connection, Proto set) and reports expert events through ULPConn.Event.
// End is called once, at the end of the capture (Tracker.Flush).

// ULPLinker is a ULP's analysis of the connections that carry it.
type ULPLinker interface {
	// Message receives a complete SEND message, on the packet that
	// completes it (p). m and its slices are valid during the call.
	Message(c *ULPConn, m *ULPMessage, p *decode.Packet)
	// Data receives an RDMA READ request, READ response or WRITE packet.
	Data(c *ULPConn, d *ULPData, p *decode.Packet)
	// End ends the capture: what is still open is reported.
	End()
}

// ULPSeer is a ULPLinker that also wants the SEND First/Middle packets of
// its connections, which carry part of a message (NVMe-oF shows the queue
// ID on every packet, as tshark does).
type ULPSeer interface {
	Seen(c *ULPConn, p *decode.Packet)
}

var ulpLinkers [decode.NumULPs]func(t *Tracker) ULPLinker

// RegisterULP plugs a ULP's linker in: newLinker is called once per
// tracker, at the first connection carrying u. Call it from init.
func RegisterULP(u decode.ULP, newLinker func(t *Tracker) ULPLinker) {
	ulpLinkers[u] = newLinker
}

// DecodeAs names the ULP of a connection whose CM exchange is not in the
// capture: every packet to destination QP QP (either side's QPN) belongs to
// a connection carrying ULP.
type DecodeAs struct {
	QP  uint32
	ULP decode.ULP
}

// ULPConn is one connection carrying a ULP.
type ULPConn struct {
	ULP     decode.ULP
	Session uint32 // the tracker's session ID
	// Learned is how the ULP was found: "cm" (the REQ's service ID) or
	// "decode-as".
	Learned string
	// Initiator is the session side (0 A, 1 B) that sent the CM REQ (the
	// NVMe host, the NFS client); -1 when not known (decode-as).
	Initiator int8
	// Private is the ULP's part of the CM REQ private data (after the IP CM
	// header), RepPrivate the REP's; nil without CM.
	Private, RepPrivate []byte
	// State is the linker's own per-connection state.
	State any

	t    *Tracker
	dirs [2]ulpDir
}

// ULPMessage is one complete SEND message.
type ULPMessage struct {
	Side   uint8  // the session side that sent it
	Data   []byte // the message
	Frames []int  // the frames it came from, first to last
	Inv    bool   // SEND with Invalidate
	InvKey uint32 // the key it invalidates
	Imm    bool   // SEND with Immediate
	ImmVal uint32
}

// ULPData is one RDMA READ/WRITE packet of a ULP connection.
type ULPData struct {
	Side uint8        // the session side that sent this packet
	Op   decode.MPTOp // MPTOpRead (request or response) or MPTOpWrite
	// Request: a READ request; Len is the DMA length it asks for. Else the
	// packet carries Len bytes of data, to or from VA.
	Request bool
	RKey    uint32
	VA      uint64
	Len     uint64
	// First and Last: the packet starts or ends its RDMA message.
	First, Last bool
	// ReqFrame is the frame of the READ request a response answers (0 when
	// the request is not in the capture); MsgFrame that of the first
	// packet of the WRITE.
	ReqFrame int
	MsgFrame int
}

// maxULPMessage bounds a reassembled message (a capsule with in-capsule
// data, an RPC call): beyond it the message is dropped, not buffered.
const maxULPMessage = 4 << 20

// maxULPReads bounds the READ requests a direction keeps waiting for
// their responses.
const maxULPReads = 256

type ulpDir struct {
	// SEND reassembly
	buf       []byte
	frames    []int
	active    bool
	next      decode.PSN // the PSN the message continues with
	delivered decode.PSN // the last PSN of the last message delivered
	hasDeliv  bool
	// the RDMA WRITE in progress: its RETH, the bytes so far
	wKey   uint32
	wVA    uint64
	wOff   uint64
	wFrame int
	wNext  decode.PSN
	wOn    bool
	// READ requests this side sent, waiting for their responses
	reads []ulpRead
}

type ulpRead struct {
	psn   decode.PSN
	key   uint32
	va    uint64
	len   uint64
	got   uint64
	frame int
}

// ulpState is the tracker's ULP state; nil until a CM REQ names a ULP or
// DecodeAs is set.
type ulpState struct {
	conns    map[uint32]*ULPConn // by session ID
	pending  map[cmKey]ulpPending
	decodeAs map[uint32]decode.ULP
	linkers  [decode.NumULPs]ULPLinker
	info     decode.ULPInfo
	msg      ULPMessage
	data     ULPData
}

type ulpPending struct {
	ulp  decode.ULP
	priv []byte
}

func (t *Tracker) ulpInit() *ulpState {
	if t.ulp == nil {
		t.ulp = &ulpState{conns: map[uint32]*ULPConn{}, pending: map[cmKey]ulpPending{}}
		if len(t.opts.DecodeAs) > 0 {
			t.ulp.decodeAs = map[uint32]decode.ULP{}
			for _, d := range t.opts.DecodeAs {
				t.ulp.decodeAs[d.QP&0xFFFFFF] = d.ULP
			}
		}
	}
	return t.ulp
}

// ULPLinker returns the tracker's linker of u (nil when no connection
// carried u), for the reports.
func (t *Tracker) ULPLinker(u decode.ULP) ULPLinker {
	if t.ulp == nil {
		return nil
	}
	return t.ulp.linkers[u]
}

// ULPConns returns the ULP connections, by session ID.
func (t *Tracker) ULPConns() map[uint32]*ULPConn {
	if t.ulp == nil {
		return nil
	}
	return t.ulp.conns
}

// ulpREQ notes the ULP a CM REQ asks for, until its REP pairs the QPs.
func (t *Tracker) ulpREQ(p *decode.Packet, src, dst addr16) {
	u := decode.ULPByServiceID(p.CM.ServiceID)
	if u == decode.ULPNone || ulpLinkers[u] == nil {
		return
	}
	st := t.ulpInit()
	if len(st.pending) >= maxCMPending {
		return
	}
	var priv []byte
	if pd := p.CM.PrivateData; len(pd) > decode.CMIPPrivateLen {
		priv = append([]byte(nil), pd[decode.CMIPPrivateLen:]...)
	}
	st.pending[cmKey{src, dst, p.CM.LocalCommID}] = ulpPending{u, priv}
	st.info.Reset(u)
	if u == decode.ULPNVMe {
		n := &st.info.NVMe
		n.CMReq, n.HasCMReq = decode.DecodeNVMeCMReq(priv)
	}
	p.Analysis.ULP = &st.info
}

// ulpREP binds the session a CM REP created (n, side A the REQ's sender)
// to the ULP its REQ asked for.
func (t *Tracker) ulpREP(p *decode.Packet, k cmKey, n *Session) {
	if t.ulp == nil {
		return
	}
	pd, ok := t.ulp.pending[k]
	if !ok {
		return
	}
	delete(t.ulp.pending, k)
	c := t.newULPConn(n.ID, pd.ulp, "cm")
	c.Initiator = 0
	c.Private = pd.priv
	c.RepPrivate = append([]byte(nil), p.CM.PrivateData...)
	t.ulp.info.Reset(pd.ulp)
	if pd.ulp == decode.ULPNVMe {
		n := &t.ulp.info.NVMe
		n.CMRep, n.HasCMRep = decode.DecodeNVMeCMRep(c.RepPrivate)
	}
	p.Analysis.ULP = &t.ulp.info
}

func (t *Tracker) newULPConn(session uint32, u decode.ULP, learned string) *ULPConn {
	st := t.ulpInit()
	c := &ULPConn{ULP: u, Session: session, Learned: learned, Initiator: -1, t: t}
	st.conns[session] = c
	if s := t.Session(session); s != nil {
		s.f().ulp = c
	}
	if st.linkers[u] == nil {
		st.linkers[u] = ulpLinkers[u](t)
	}
	return c
}

// ulpPacket hands a packet of session s (sent by side) to its ULP, if the
// session carries one.
func (t *Tracker) ulpPacket(p *decode.Packet, s *Session, side uint8) {
	st := t.ulp
	c := s.ULP()
	if c == nil && len(st.decodeAs) > 0 {
		// the QP named may be either side's: this packet's destination,
		// or the other side's once the session knows it
		u, ok := st.decodeAs[p.BTH.DestQP]
		for _, e := range [2]*Endpoint{&s.A, &s.B} {
			if !ok && e.QPNKnown {
				u, ok = st.decodeAs[e.QPN]
			}
		}
		if !ok || ulpLinkers[u] == nil {
			return
		}
		c = t.newULPConn(s.ID, u, "decode-as")
	}
	if c == nil {
		return
	}
	op := p.BTH.Opcode
	if !op.IsRequest() && !op.Is(decode.PropReadResp) {
		return // an ACK: nothing of the ULP in it
	}
	st.info.Reset(c.ULP)
	p.Analysis.ULP = &st.info
	a := &p.Analysis
	if a.Events&(decode.EventDuplicate|decode.EventRetransmission) != 0 {
		return // the linker saw the first copy
	}
	if op.Is(decode.PropSend) && !op.Is(decode.PropEnd) {
		// a SEND First/Middle: the linker sees its message on its last
		// packet, and every READ/WRITE packet; this one only here
		if sn, ok := st.linkers[c.ULP].(ULPSeer); ok {
			sn.Seen(c, p)
		}
	}
	d := &c.dirs[side]
	switch {
	case op.Is(decode.PropSend):
		t.ulpSend(c, d, p, side)
	case op.Is(decode.PropWrite):
		t.ulpWrite(c, d, p, side)
	case op.Is(decode.PropRead):
		if p.Has&decode.HdrRETH == 0 {
			return
		}
		if len(d.reads) >= maxULPReads {
			d.reads = append(d.reads[:0], d.reads[1:]...)
		}
		d.reads = append(d.reads, ulpRead{psn: p.BTH.PSN, key: p.RETH.RKey, va: p.RETH.VA, len: uint64(p.RETH.DMALen), frame: p.Frame.Number})
		st.data = ULPData{Side: side, Op: decode.MPTOpRead, Request: true, RKey: p.RETH.RKey, VA: p.RETH.VA, Len: uint64(p.RETH.DMALen), First: true}
		st.linkers[c.ULP].Data(c, &st.data, p)
	case op.Is(decode.PropReadResp):
		t.ulpReadResp(c, &c.dirs[1-side], p, side)
	}
}

// ulpSend reassembles a SEND message.
func (t *Tracker) ulpSend(c *ULPConn, d *ulpDir, p *decode.Packet, side uint8) {
	op, psn := p.BTH.Opcode, p.BTH.PSN
	if d.hasDeliv && !psn.After(d.delivered) && d.delivered.Diff(psn) < restartDist {
		return // part of a message already delivered
	}
	st := t.ulp
	if op.Is(decode.PropStart) {
		d.active = false
		if op.Is(decode.PropEnd) {
			st.info.MsgFrames = append(st.info.MsgFrames[:0], p.Frame.Number)
			t.ulpDeliver(c, d, p, side, p.Payload, st.info.MsgFrames)
			return
		}
		d.active, d.buf, d.frames = true, append(d.buf[:0], p.Payload...), append(d.frames[:0], p.Frame.Number)
		d.next = psn.Next()
		return
	}
	if !d.active || psn != d.next {
		d.active = false // started before the capture, or a packet is missing
		return
	}
	if len(d.buf)+len(p.Payload) > maxULPMessage {
		d.active = false
		return
	}
	d.buf = append(d.buf, p.Payload...)
	d.frames = append(d.frames, p.Frame.Number)
	d.next = psn.Next()
	if op.Is(decode.PropEnd) {
		d.active = false
		st.info.MsgFrames = append(st.info.MsgFrames[:0], d.frames...)
		t.ulpDeliver(c, d, p, side, d.buf, st.info.MsgFrames)
	}
}

func (t *Tracker) ulpDeliver(c *ULPConn, d *ulpDir, p *decode.Packet, side uint8, data []byte, frames []int) {
	d.delivered, d.hasDeliv = p.BTH.PSN, true
	st := t.ulp
	st.info.Msg = data
	st.msg = ULPMessage{Side: side, Data: data, Frames: frames}
	if p.BTH.Opcode.Is(decode.PropInv) && p.Has&decode.HdrIETH != 0 {
		st.msg.Inv, st.msg.InvKey = true, p.IETH.RKey
	}
	if p.BTH.Opcode.Is(decode.PropImm) && p.Has&decode.HdrImmDt != 0 {
		st.msg.Imm, st.msg.ImmVal = true, p.ImmDt.Data
	}
	st.linkers[c.ULP].Message(c, &st.msg, p)
}

// ulpWrite hands an RDMA WRITE packet on, with the address of its data.
func (t *Tracker) ulpWrite(c *ULPConn, d *ulpDir, p *decode.Packet, side uint8) {
	op, psn := p.BTH.Opcode, p.BTH.PSN
	st := t.ulp
	if op.Is(decode.PropStart) {
		if p.Has&decode.HdrRETH == 0 {
			d.wOn = false
			return
		}
		d.wKey, d.wVA, d.wOff, d.wFrame, d.wOn = p.RETH.RKey, p.RETH.VA, 0, p.Frame.Number, true
	} else if !d.wOn || psn != d.wNext {
		d.wOn = false
		return
	}
	d.wNext = psn.Next()
	n := uint64(len(p.Payload))
	st.data = ULPData{Side: side, Op: decode.MPTOpWrite, RKey: d.wKey, VA: d.wVA + d.wOff, Len: n,
		First: op.Is(decode.PropStart), Last: op.Is(decode.PropEnd), MsgFrame: d.wFrame}
	d.wOff += n
	if op.Is(decode.PropEnd) {
		d.wOn = false
	}
	st.linkers[c.ULP].Data(c, &st.data, p)
}

// ulpReadResp hands a READ response on, matched by PSN to the request
// (sent by the other side: reqs) it answers.
func (t *Tracker) ulpReadResp(c *ULPConn, reqs *ulpDir, p *decode.Packet, side uint8) {
	psn := p.BTH.PSN
	idx := -1
	for i := len(reqs.reads) - 1; i >= 0; i-- {
		if d := psn.Diff(reqs.reads[i].psn); d >= 0 && d < restartDist {
			idx = i
			break
		}
	}
	if idx < 0 {
		return // the request is not in the capture
	}
	r := &reqs.reads[idx]
	op := p.BTH.Opcode
	n := uint64(len(p.Payload))
	st := t.ulp
	st.data = ULPData{Side: side, Op: decode.MPTOpRead, RKey: r.key, VA: r.va + r.got, Len: n,
		First: r.got == 0, Last: op.Is(decode.PropEnd), ReqFrame: r.frame}
	r.got += n
	if op.Is(decode.PropEnd) {
		// this READ is done, and so are those before it
		reqs.reads = append(reqs.reads[:0], reqs.reads[idx+1:]...)
	}
	st.linkers[c.ULP].Data(c, &st.data, p)
}

// ulpEnd ends the capture for every linker.
func (t *Tracker) ulpEnd() {
	if t.ulp == nil {
		return
	}
	for _, l := range t.ulp.linkers {
		if l != nil {
			l.End()
		}
	}
}

// Event reports an expert event about p, in c's session.
func (c *ULPConn) Event(p *decode.Packet, e decode.Event, text string) {
	c.t.event(p, e, c.Session, text)
}

// EventAt reports an expert event about an earlier frame (at: its time in
// Unix nanoseconds), found at the end of the capture.
func (c *ULPConn) EventAt(e decode.Event, frame int, at int64, text string) {
	c.t.emit(e, frame, at, c.Session, text)
}

// Hex24 formats a QPN as reports do (0x00002a); for linkers' texts.
func Hex24(v uint32) string { return hex24(v) }

// ParseDecodeAs reads the ULP form of -d: "infiniband.bth.destqp==QP,PROTO"
// (QP decimal or 0x hex; PROTO nvme-rdma, rpcordma, iser, smb_direct or an
// alias: decode.ULPByName). ok is false when s is not of that form (it
// may be another -d form); err says what is wrong with one that is.
func ParseDecodeAs(s string) (d DecodeAs, ok bool, err error) {
	const prefix = "infiniband.bth.destqp=="
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return DecodeAs{}, false, nil
	}
	rest := s[len(prefix):]
	i := 0
	for i < len(rest) && rest[i] != ',' {
		i++
	}
	num, proto := rest[:i], ""
	if i < len(rest) {
		proto = rest[i+1:]
	}
	qp, perr := strconv.ParseUint(num, 0, 32)
	u, uok := decode.ULPByName(proto)
	if perr != nil || qp > 0xFFFFFF || !uok {
		return DecodeAs{}, true, &decodeAsError{s}
	}
	return DecodeAs{QP: uint32(qp), ULP: u}, true, nil
}

type decodeAsError struct{ s string }

func (e *decodeAsError) Error() string {
	names := ""
	for i, n := range decode.ULPNames() {
		if i > 0 {
			names += ", "
		}
		names += n
	}
	return "-d " + strconv.Quote(e.s) + ": want infiniband.bth.destqp==QP,PROTO with QP a 24-bit QPN (0x12 or 18) and PROTO one of " + names
}

// ULPLinkerFactory returns the function RegisterULP registered for u (nil
// when none).
func ULPLinkerFactory(u decode.ULP) func(t *Tracker) ULPLinker { return ulpLinkers[u] }

// String describes the connection for the reports: the protocol, what it
// is to the protocol (NVMe-oF: "nvme-rdma queue 1"), and how it was
// found when not by CM.
func (c *ULPConn) String() string {
	s := c.ULP.String()
	if c.ULP == decode.ULPNVMe {
		if q, ok := NVMeQueue(c); ok {
			s += " queue " + strconv.Itoa(int(q))
			if q == 0 {
				s += " (admin)"
			}
		}
	}
	if c.Learned != "cm" {
		s += " (" + c.Learned + ")"
	}
	return s
}

// ULPOf returns the ULP session id carries (after merges), and for
// NVMe-oF its queue ID; decode.ULPNone when it carries none.
func (t *Tracker) ULPOf(id uint32) (u decode.ULP, qid uint16, hasQID bool) {
	s := t.Session(t.Resolve(id))
	if s == nil || s.ULP() == nil {
		return decode.ULPNone, 0, false
	}
	c := s.ULP()
	if c.ULP == decode.ULPNVMe {
		qid, hasQID = NVMeQueue(c)
	}
	return c.ULP, qid, hasQID
}
