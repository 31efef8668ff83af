package flow

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Unit tests drive the tracker with packets built as decode.Packet values
// (the decoder is tested against tshark elsewhere; here only the tracker's
// rules are under test). Real captures: rxe_test.go; injected faults:
// faults_test.go.

var (
	hostA = [4]byte{10, 0, 0, 1}
	hostB = [4]byte{10, 0, 0, 2}
	epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// gen builds a packet sequence between hostA (QP qa) and hostB (QP qb).
type gen struct {
	qa, qb uint32
	frames []decode.Packet
	t      time.Duration
}

type opt func(p *decode.Packet)

func payload(n int) opt {
	return func(p *decode.Packet) { p.Payload = make([]byte, n); p.Has |= decode.HdrPayload }
}
func reth(l uint32) opt {
	return func(p *decode.Packet) { p.Has |= decode.HdrRETH; p.RETH.DMALen = l; p.RETH.RKey = 0x1234 }
}
func aeth(syn uint8) opt {
	return func(p *decode.Packet) { p.Has |= decode.HdrAETH; p.AETH.Syndrome = syn }
}
func after(d time.Duration) opt { return func(p *decode.Packet) { p.Frame.Time = p.Frame.Time.Add(d) } }
func flags(f decode.Flag) opt   { return func(p *decode.Packet) { p.Flags |= f } }
func ecnCE() opt                { return func(p *decode.Packet) { p.IPv4.TOS = 3 } }

// req appends a packet from A to B; resp one from B to A.
func (g *gen) req(op decode.Opcode, psn uint32, o ...opt) *gen {
	return g.add(hostA, hostB, g.qb, op, psn, o)
}
func (g *gen) resp(op decode.Opcode, psn uint32, o ...opt) *gen {
	return g.add(hostB, hostA, g.qa, op, psn, o)
}

func (g *gen) add(src, dst [4]byte, qp uint32, op decode.Opcode, psn uint32, o []opt) *gen {
	g.t += 10 * time.Microsecond
	var p decode.Packet
	p.Frame = decode.Frame{Number: len(g.frames) + 1, Time: epoch.Add(g.t), Len: 100}
	p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
	p.Encap = decode.EncapRoCEv2
	p.IPv4.Src, p.IPv4.Dst = src, dst
	p.BTH.Opcode = op
	p.BTH.DestQP = qp
	p.BTH.PSN = decode.PSNOf(psn)
	for _, f := range o {
		f(&p)
	}
	if p.Frame.Time.After(epoch.Add(g.t)) {
		g.t = p.Frame.Time.Sub(epoch)
	}
	g.frames = append(g.frames, p)
	return g
}

// result is what a run produced.
type result struct {
	tr       *Tracker
	pkts     []decode.Packet
	events   []Event
	messages []Message
}

func run(frames []decode.Packet, o Options) *result {
	r := &result{}
	o.OnEvent = func(e *Event) { r.events = append(r.events, *e) }
	o.OnMessage = func(m *Message) { r.messages = append(r.messages, *m) }
	r.tr = New(o)
	for i := range frames {
		p := frames[i]
		p.Analysis = decode.Analysis{}
		r.tr.Track(&p)
		p.Analysis.Acked = append([]int(nil), p.Analysis.Acked...)
		r.pkts = append(r.pkts, p)
	}
	r.tr.Flush()
	return r
}

// eventSummary lists events as "frame:name" in order.
func (r *result) eventSummary() string {
	var s []string
	for _, e := range r.events {
		name, _, _ := decode.EventInfo(e.Kind)
		s = append(s, fmt.Sprintf("%d:%s", e.Frame, name))
	}
	return strings.Join(s, " ")
}

const (
	rcSendFirst  = decode.Opcode(decode.TransportRC | decode.OpSendFirst)
	rcSendMiddle = decode.Opcode(decode.TransportRC | decode.OpSendMiddle)
	rcSendLast   = decode.Opcode(decode.TransportRC | decode.OpSendLast)
	rcSendOnly   = decode.Opcode(decode.TransportRC | decode.OpSendOnly)
	rcWriteFirst = decode.Opcode(decode.TransportRC | decode.OpWriteFirst)
	rcWriteMid   = decode.Opcode(decode.TransportRC | decode.OpWriteMiddle)
	rcWriteLast  = decode.Opcode(decode.TransportRC | decode.OpWriteLast)
	rcWriteOnly  = decode.Opcode(decode.TransportRC | decode.OpWriteOnly)
	rcReadReq    = decode.Opcode(decode.TransportRC | decode.OpReadRequest)
	rcReadFirst  = decode.Opcode(decode.TransportRC | decode.OpReadResponseFirst)
	rcReadMiddle = decode.Opcode(decode.TransportRC | decode.OpReadResponseMiddle)
	rcReadLast   = decode.Opcode(decode.TransportRC | decode.OpReadResponseLast)
	rcReadOnly   = decode.Opcode(decode.TransportRC | decode.OpReadResponseOnly)
	rcAck        = decode.Opcode(decode.TransportRC | decode.OpAcknowledge)
	rcAtomicAck  = decode.Opcode(decode.TransportRC | decode.OpAtomicAcknowledge)
	rcFetchAdd   = decode.Opcode(decode.TransportRC | decode.OpFetchAdd)
	ucWriteOnly  = decode.Opcode(decode.TransportUC | decode.OpWriteOnly)
	ack          = 0x1f
	nakSeq       = 0x60
	nakAccess    = 0x62
	rnr1         = 0x21
)

func TestTrackerScenarios(t *testing.T) {
	tests := []struct {
		name   string
		build  func(g *gen)
		events string // expected "frame:kind" sequence
		check  func(t *testing.T, r *result)
	}{
		{
			name: "clean writes, one ACK each",
			build: func(g *gen) {
				g.req(rcWriteOnly, 100, reth(64), payload(64)).resp(rcAck, 100, aeth(ack))
				g.req(rcWriteFirst, 101, reth(2500), payload(1024)).req(rcWriteMid, 102, payload(1024)).req(rcWriteLast, 103, payload(452)).resp(rcAck, 103, aeth(ack))
			},
			events: "",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Learned != decode.PairingResponse || !s.A.QPNKnown || s.A.QPN != 0x11 || s.B.QPN != 0x22 {
					t.Errorf("pairing: %v A=%v B=%v", s.Learned, s.A, s.B)
				}
				if s.Messages(decode.MsgWrite) != 2 || s.MessageBytes(decode.MsgWrite) != 2564 {
					t.Errorf("messages %d bytes %d", s.Messages(decode.MsgWrite), s.MessageBytes(decode.MsgWrite))
				}
				if s.MTU != 1024 {
					t.Errorf("MTU %d, want 1024 (from the FIRST payload)", s.MTU)
				}
				a := r.pkts[4].Analysis
				if a.MsgKind != decode.MsgWrite || a.MsgLength != 2500 || a.MsgFirst != 3 || a.MsgPackets != 3 {
					t.Errorf("reassembly on frame 5: %+v", a)
				}
				if a := r.pkts[5].Analysis; a.RequestFrame != 5 || !a.HasRTT || a.RTT != 10*time.Microsecond {
					t.Errorf("ACK frame 6: request %d rtt %v", a.RequestFrame, a.RTT)
				}
				if l := s.Latency(decode.MsgWrite); l.N != 2 || l.Min != 10*time.Microsecond || l.Max != 30*time.Microsecond {
					t.Errorf("latency %+v", l)
				}
			},
		},
		{
			name: "PSN wraps at 0xFFFFFF",
			build: func(g *gen) {
				for psn := uint32(0xfffffd); psn != 3; psn = (psn + 1) & decode.PSNMask {
					g.req(rcSendOnly, psn, payload(8)).resp(rcAck, psn, aeth(ack))
				}
			},
			events: "",
			check: func(t *testing.T, r *result) {
				if n := r.tr.Sessions()[0].Messages(decode.MsgSend); n != 6 {
					t.Errorf("%d sends, want 6", n)
				}
			},
		},
		{
			name: "one ACK covers three writes",
			build: func(g *gen) {
				g.req(rcWriteOnly, 10, reth(8), payload(8)).req(rcWriteOnly, 11, reth(8), payload(8)).req(rcWriteOnly, 12, reth(8), payload(8))
				g.resp(rcAck, 12, aeth(ack))
			},
			events: "4:ack_coalesced",
			check: func(t *testing.T, r *result) {
				a := r.pkts[3].Analysis
				if fmt.Sprint(a.Acked) != "[1 2 3]" || a.RequestFrame != 3 {
					t.Errorf("acked %v request %d", a.Acked, a.RequestFrame)
				}
			},
		},
		{
			name: "lost packet, NAK, go-back-N",
			build: func(g *gen) {
				g.req(rcWriteOnly, 10, reth(8), payload(8)).resp(rcAck, 10, aeth(ack))
				// PSN 11 lost before the capture point
				g.req(rcWriteOnly, 12, reth(8), payload(8))
				g.resp(rcAck, 11, aeth(nakSeq))
				g.req(rcWriteOnly, 11, reth(8), payload(8)).req(rcWriteOnly, 12, reth(8), payload(8))
				g.resp(rcAck, 12, aeth(ack))
			},
			events: "3:psn_gap 4:nak 5:retransmission 6:retransmission 7:ack_coalesced",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Findings().Gaps != 1 || s.Findings().LostPSNs != 0 || s.Findings().Retransmitted != 2 || s.Messages(decode.MsgWrite) != 3 || s.Findings().NAKs[0] != 1 {
					t.Errorf("gaps %d lost %d retrans %d writes %d naks %v", s.Findings().Gaps, s.Findings().LostPSNs, s.Findings().Retransmitted, s.Messages(decode.MsgWrite), s.Findings().NAKs[0])
				}
				if a := r.pkts[2].Analysis; a.Lost != 1 || a.ExpectedPSN != 11 {
					t.Errorf("gap: %+v", a)
				}
				for _, f := range []int{5, 6} {
					a := r.pkts[f-1].Analysis
					if a.Cause != decode.CauseNAK || a.CauseFrame != 4 {
						t.Errorf("frame %d: cause %v frame %d", f, a.Cause, a.CauseFrame)
					}
				}
				if a := r.pkts[5].Analysis; a.OrigFrame != 3 {
					t.Errorf("frame 6 first sent in %d, want 3", a.OrigFrame)
				}
			},
		},
		{
			name: "a multi-packet message with a lost middle completes after go-back-N",
			build: func(g *gen) {
				g.req(rcSendFirst, 1, payload(256)).req(rcSendLast, 3, payload(10))
				g.resp(rcAck, 2, aeth(nakSeq))
				g.req(rcSendMiddle, 2, payload(256)).req(rcSendLast, 3, payload(10))
				g.resp(rcAck, 3, aeth(ack))
			},
			events: "2:psn_gap 3:nak 4:retransmission 5:retransmission",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Messages(decode.MsgSend) != 1 || s.MessageBytes(decode.MsgSend) != 522 || s.Findings().Partial != 0 {
					t.Errorf("sends %d bytes %d partial %d", s.Messages(decode.MsgSend), s.MessageBytes(decode.MsgSend), s.Findings().Partial)
				}
				if a := r.pkts[3].Analysis; a.MsgLength != 522 || a.MsgFirst != 1 || a.MsgPackets != 3 {
					t.Errorf("completion: %+v", a)
				}
			},
		},
		{
			name: "duplicate copy",
			build: func(g *gen) {
				g.req(rcWriteOnly, 5, reth(8), payload(8)).req(rcWriteOnly, 5, reth(8), payload(8), after(time.Microsecond))
				g.resp(rcAck, 5, aeth(ack))
			},
			events: "2:duplicate",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[1].Analysis; a.OrigFrame != 1 {
					t.Errorf("original %d", a.OrigFrame)
				}
				if n := r.tr.Sessions()[0].Messages(decode.MsgWrite); n != 1 {
					t.Errorf("%d writes, want 1", n)
				}
			},
		},
		{
			name: "reordered pair",
			build: func(g *gen) {
				g.req(rcWriteOnly, 5, reth(8), payload(8)).req(rcWriteOnly, 7, reth(8), payload(8)).req(rcWriteOnly, 6, reth(8), payload(8))
				g.resp(rcAck, 7, aeth(ack))
			},
			events: "2:psn_gap 3:out_of_order 4:ack_coalesced",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Findings().LostPSNs != 0 || s.Findings().OutOfOrder != 1 || s.Messages(decode.MsgWrite) != 3 {
					t.Errorf("lost %d ooo %d writes %d", s.Findings().LostPSNs, s.Findings().OutOfOrder, s.Messages(decode.MsgWrite))
				}
			},
		},
		{
			name: "retransmission by timeout, then never answered",
			build: func(g *gen) {
				g.req(rcWriteOnly, 9, reth(8), payload(8))
				g.req(rcWriteOnly, 9, reth(8), payload(8), after(16*time.Millisecond))
			},
			events: "2:retransmission 1:no_response",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[1].Analysis; a.Cause != decode.CauseTimeout || a.OrigFrame != 1 {
					t.Errorf("cause %v orig %d", a.Cause, a.OrigFrame)
				}
				if s := r.tr.Sessions()[0]; s.Learned != decode.PairingNone || s.A.QPNKnown {
					t.Errorf("no response: the requester's QPN cannot be known: %v %v", s.Learned, s.A)
				}
			},
		},
		{
			name: "RNR NAK then retry",
			build: func(g *gen) {
				g.req(rcSendOnly, 50, payload(8)).resp(rcAck, 50, aeth(rnr1))
				g.req(rcSendOnly, 50, payload(8), after(time.Millisecond)).resp(rcAck, 50, aeth(ack))
			},
			events: "2:rnr_nak 3:retransmission",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Findings().RNRNaks[1] != 1 || s.Messages(decode.MsgSend) != 1 || s.Findings().NoResponse != 0 {
					t.Errorf("rnr %v sends %d", s.Findings().RNRNaks[1], s.Messages(decode.MsgSend))
				}
				if a := r.pkts[2].Analysis; a.Cause != decode.CauseRNR || a.CauseFrame != 2 {
					t.Errorf("cause %v %d", a.Cause, a.CauseFrame)
				}
				if a := r.pkts[3].Analysis; a.RequestFrame != 1 {
					t.Errorf("ACK answers frame %d, want 1 (the first transmission)", a.RequestFrame)
				}
			},
		},
		{
			name: "NAK remote access error rejects a write",
			build: func(g *gen) {
				g.req(rcWriteOnly, 7, reth(8), payload(8)).resp(rcAck, 7, aeth(nakAccess))
			},
			events: "2:nak",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[1].Analysis; a.RequestFrame != 1 {
					t.Errorf("NAK request frame %d", a.RequestFrame)
				}
				if s := r.tr.Sessions()[0]; s.Findings().NAKs[2] != 1 || s.Findings().NoResponse != 0 {
					t.Errorf("naks %v noresp %d", s.Findings().NAKs, s.Findings().NoResponse)
				}
			},
		},
		{
			name: "READ with the MTU learned from its responses, then an ATOMIC",
			build: func(g *gen) {
				g.req(rcReadReq, 20, reth(2100))
				g.resp(rcReadFirst, 20, aeth(ack), payload(1024)).resp(rcReadMiddle, 21, payload(1024)).resp(rcReadLast, 22, aeth(ack), payload(52))
				g.req(rcFetchAdd, 23).resp(rcAtomicAck, 23, aeth(ack))
			},
			events: "",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.MTU != 1024 || s.Messages(decode.MsgRead) != 1 || s.Messages(decode.MsgAtomic) != 1 {
					t.Errorf("mtu %d reads %d atomics %d", s.MTU, s.Messages(decode.MsgRead), s.Messages(decode.MsgAtomic))
				}
				a := r.pkts[3].Analysis
				if a.MsgKind != decode.MsgRead || a.MsgLength != 2100 || a.MsgPackets != 3 || a.RequestFrame != 1 {
					t.Errorf("read completion: %+v", a)
				}
				if a := r.pkts[5].Analysis; a.RequestFrame != 5 || a.MsgKind != decode.MsgAtomic {
					t.Errorf("atomic ack: %+v", a)
				}
				if a := r.pkts[4].Analysis; a.ExpectedPSN != 23 {
					t.Errorf("after a 3-packet READ the next PSN is 23, got %d", a.ExpectedPSN)
				}
			},
		},
		{
			// issue 14: the late MIDDLE used to be "READ response PSN 1
			// again [Duplicate]", and the session counted 1 lost, 0 out of
			// order
			name: "READ responses reordered: out of order, nothing lost",
			build: func(g *gen) {
				g.req(rcReadReq, 0, reth(3500))
				g.resp(rcReadFirst, 0, aeth(ack), payload(1024)).resp(rcReadMiddle, 2, payload(1024))
				g.resp(rcReadMiddle, 1, payload(1024)).resp(rcReadLast, 3, aeth(ack), payload(428))
			},
			events: "3:psn_gap 4:out_of_order",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Findings().LostPSNs != 0 || s.Findings().OutOfOrder != 1 || s.Findings().Duplicates != 0 || s.Findings().Partial != 0 {
					t.Errorf("lost %d out of order %d duplicates %d partial %d", s.Findings().LostPSNs, s.Findings().OutOfOrder, s.Findings().Duplicates, s.Findings().Partial)
				}
				if a := r.pkts[4].Analysis; a.MsgKind != decode.MsgRead || a.MsgLength != 3500 || a.MsgPackets != 4 || a.MsgPartial {
					t.Errorf("read completion: %+v", a)
				}
				if l := s.Latency(decode.MsgRead); l.N != 1 {
					t.Errorf("%d READ latencies, want 1", l.N)
				}
			},
		},
		{
			name: "READ response lost: the READ is incomplete, never a shorter complete READ",
			build: func(g *gen) {
				g.req(rcReadReq, 0, reth(3500)).req(rcSendOnly, 4, payload(8))
				g.resp(rcReadFirst, 0, aeth(ack), payload(1024)).resp(rcReadMiddle, 1, payload(1024))
				g.resp(rcReadLast, 3, aeth(ack), payload(428)) // PSN 2 lost
				g.resp(rcAck, 4, aeth(ack))
			},
			events: "5:psn_gap 6:incomplete",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()[0]
				if s.Findings().LostPSNs != 1 || s.Findings().Partial != 1 || s.Latency(decode.MsgRead).N != 0 {
					t.Errorf("lost %d partial %d read latencies %d", s.Findings().LostPSNs, s.Findings().Partial, s.Latency(decode.MsgRead).N)
				}
				for _, p := range r.pkts {
					if a := p.Analysis; a.MsgKind == decode.MsgRead {
						t.Errorf("frame %d completes the READ: %+v", p.Frame.Number, a)
					}
				}
				if a := r.pkts[5].Analysis; a.Missing != 1 || fmt.Sprint(a.Acked) != "[2]" {
					t.Errorf("incomplete on the ACK: missing %d, acked %v", a.Missing, a.Acked)
				}
				if e := r.events[1]; !strings.Contains(e.Text, "response PSN 2 missing") {
					t.Errorf("incomplete event: %q", e.Text)
				}
			},
		},
		{
			name: "READ before the MTU is known: the next PSN tells it",
			build: func(g *gen) {
				g.req(rcReadReq, 20, reth(3000)).req(rcSendOnly, 23, payload(8))
			},
			events: "",
			check: func(t *testing.T, r *result) {
				if s := r.tr.Sessions()[0]; s.MTU != 1024 || s.MTUFrom() != "read" {
					t.Errorf("mtu %d from %q", s.MTU, s.MTUFrom())
				}
			},
		},
		{
			name: "capture starts mid-message and mid-connection",
			build: func(g *gen) {
				g.resp(rcAck, 99, aeth(ack)) // answers a request before the capture
				g.req(rcWriteMid, 100, payload(1024)).req(rcWriteLast, 101, payload(10))
				g.resp(rcAck, 101, aeth(ack))
				g.req(rcWriteOnly, 102, reth(8), payload(8)).resp(rcAck, 102, aeth(ack))
			},
			events: "1:mid_stream 2:mid_stream",
			check: func(t *testing.T, r *result) {
				s := r.tr.Sessions()
				var partial uint64
				for _, x := range s {
					partial += x.Findings().Partial
					if x.Findings().Gaps+x.Findings().OpcodeSeq+x.Findings().Unmatched+x.Findings().Retransmitted != 0 {
						t.Errorf("false alarm in %+v", x)
					}
				}
				if partial != 1 {
					t.Errorf("partial messages %d, want 1", partial)
				}
				if a := r.pkts[2].Analysis; !a.MsgPartial || a.MsgLength != 1034 {
					t.Errorf("partial message: %+v", a)
				}
			},
		},
		{
			name: "NAK part-way through a multi-packet WRITE",
			build: func(g *gen) {
				g.req(rcWriteFirst, 4480, reth(6000), payload(1024)).req(rcWriteMid, 4481, payload(1024))
				g.resp(rcAck, 4481, aeth(nakAccess))
			},
			events: "3:nak",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[2].Analysis; a.RequestFrame != 2 || a.RTT != 10*time.Microsecond {
					t.Errorf("NAK answers frame %d after %v, want frame 2 after 10µs", a.RequestFrame, a.RTT)
				}
				m := r.messages[0]
				if len(r.messages) != 1 || !m.NAKed || m.LastFrame != 2 || m.Length != 2048 || m.Packets != 2 || m.Opcode.Op() != decode.OpWriteMiddle {
					t.Errorf("messages %+v", r.messages)
				}
				if s := r.tr.Sessions()[0]; s.Findings().Partial != 0 || s.Findings().NoResponse != 0 {
					t.Errorf("partial %d noresp %d", s.Findings().Partial, s.Findings().NoResponse)
				}
			},
		},
		{
			name: "NAK PSN sequence error for a PSN never sent is not a go-back-N cause",
			build: func(g *gen) {
				g.req(rcWriteOnly, 6144, reth(8), payload(8)).resp(rcAck, 6139, aeth(nakSeq))
				g.req(rcWriteOnly, 6144, reth(8), payload(8), after(20*time.Millisecond))
				g.req(rcWriteOnly, 6144, reth(8), payload(8), after(20*time.Millisecond))
			},
			// three transmissions and silence (err_psn_seq): the
			// requester likely gave up (issue 14.4)
			events: "2:nak 3:retransmission 4:retransmission 0:retry_exceeded 1:no_response",
			check: func(t *testing.T, r *result) {
				for _, f := range []int{3, 4} {
					if a := r.pkts[f-1].Analysis; a.Cause != decode.CauseTimeout || a.OrigFrame != 1 {
						t.Errorf("frame %d: cause %v orig %d", f, a.Cause, a.OrigFrame)
					}
				}
			},
		},
		{
			name: "RNR retries exhausted: the packets later sent to that QP say it is likely in error",
			build: func(g *gen) {
				g.req(rcSendOnly, 100, payload(8)).resp(rcAck, 100, aeth(rnr1))
				g.req(rcSendOnly, 100, payload(8), after(10*time.Millisecond)).resp(rcAck, 100, aeth(rnr1))
				g.req(rcSendOnly, 100, payload(8), after(10*time.Millisecond)).resp(rcAck, 100, aeth(rnr1))
				// B's own SENDs to A, 100 ms later: A never retried
				g.resp(rcSendOnly, 500, payload(8), after(100*time.Millisecond))
				g.resp(rcSendOnly, 501, payload(8), after(time.Millisecond))
			},
			events: "2:rnr_nak 3:retransmission 4:rnr_nak 5:retransmission 6:rnr_nak 7:rnr_retry_exceeded 7:no_response",
			check: func(t *testing.T, r *result) {
				for i, p := range r.pkts {
					want := decode.Event(0)
					if i >= 6 {
						want = decode.EventRNRRetryExc
					}
					if p.Analysis.QPError != want {
						t.Errorf("frame %d: QPError %v, want %v", i+1, p.Analysis.QPError, want)
					}
				}
				if a := r.pkts[6].Analysis; a.Retries != 2 {
					t.Errorf("retries %d, want 2", a.Retries)
				}
				g := r.tr.Sessions()[0].GaveUp()
				if g[0].Cause != decode.EventRNRRetryExc || g[0].PSN != 100 || g[0].Sent != 3 || g[0].RNRNaks != 3 || g[0].Frame != 7 ||
					g[0].NAKFrame != 6 || g[0].Silence < 100*time.Millisecond || g[1].Cause != 0 {
					t.Errorf("GaveUp %+v", g)
				}
				if !strings.Contains(r.events[5].Text, "no retry after the RNR NAK in frame 6 for 100.01ms, until frame 7") {
					t.Errorf("text: %q", r.events[5].Text)
				}
			},
		},
		{
			name: "transport retries exhausted, then the QP sends again: alive",
			build: func(g *gen) {
				g.req(rcWriteOnly, 9, reth(8), payload(8)).resp(rcAck, 9, aeth(ack)) // pairs the QPs
				g.req(rcWriteOnly, 10, reth(8), payload(8))
				g.req(rcWriteOnly, 10, reth(8), payload(8), after(20*time.Millisecond))
				g.req(rcWriteOnly, 10, reth(8), payload(8), after(20*time.Millisecond))
				g.resp(rcSendOnly, 900, payload(8), after(100*time.Millisecond)) // to the silent QP
				g.req(rcSendOnly, 11, payload(8), after(time.Millisecond))       // it sends again
				g.resp(rcSendOnly, 901, payload(8))
			},
			events: "4:retransmission 5:retransmission 6:retry_exceeded 3:no_response 6:no_response",
			check: func(t *testing.T, r *result) {
				for i, want := range []decode.Event{0, 0, 0, 0, 0, decode.EventRetryExc, 0, 0} {
					if got := r.pkts[i].Analysis.QPError; got != want {
						t.Errorf("frame %d: QPError %v, want %v", i+1, got, want)
					}
				}
				if g := r.tr.Sessions()[0].GaveUp()[0]; g.Cause != decode.EventRetryExc || g.Sent != 3 || g.LastFrame != 5 || g.Frame != 6 {
					t.Errorf("GaveUp %+v", g)
				}
			},
		},
		{
			name: "resends, then other traffic from the requester once the next resend was due: answered out of sight",
			build: func(g *gen) {
				g.req(rcWriteOnly, 10, reth(8), payload(8))
				g.req(rcWriteOnly, 10, reth(8), payload(8), after(20*time.Millisecond))
				g.req(rcWriteOnly, 10, reth(8), payload(8), after(20*time.Millisecond))
				g.req(rcWriteOnly, 11, reth(8), payload(8), after(30*time.Millisecond))
			},
			events: "2:retransmission 3:retransmission 1:no_response",
			check: func(t *testing.T, r *result) {
				if g := r.tr.Sessions()[0].GaveUp(); g[0].Cause != 0 {
					t.Errorf("GaveUp %+v", g)
				}
			},
		},
		{
			name: "ACK for a middle packet (AckReq mid-message) is not an error",
			build: func(g *gen) {
				g.req(rcWriteFirst, 30, reth(3000), payload(1024)).req(rcWriteMid, 31, payload(1024))
				g.resp(rcAck, 31, aeth(ack))
				g.req(rcWriteLast, 32, payload(952)).resp(rcAck, 32, aeth(ack))
			},
			events: "",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[2].Analysis; a.RequestFrame != 2 || len(a.Acked) != 0 {
					t.Errorf("middle ACK: request %d acked %v", a.RequestFrame, a.Acked)
				}
				if a := r.pkts[4].Analysis; fmt.Sprint(a.Acked) != "[4]" {
					t.Errorf("final ACK acked %v", a.Acked)
				}
			},
		},
		{
			name: "ACK lost, the request resent by timeout, ACKed again",
			build: func(g *gen) {
				g.req(rcSendOnly, 70, payload(8)).resp(rcAck, 70, aeth(ack))
				g.req(rcSendOnly, 70, payload(8), after(20*time.Millisecond)).resp(rcAck, 70, aeth(ack))
			},
			events: "3:retransmission",
			check: func(t *testing.T, r *result) {
				if a := r.pkts[3].Analysis; a.RequestFrame != 3 {
					t.Errorf("repeated ACK answers frame %d, want the copy in 3", a.RequestFrame)
				}
			},
		},
		{
			name: "both sides send requests, no CM: one session",
			build: func(g *gen) {
				g.req(rcSendOnly, 1000, payload(8))
				g.resp(rcSendOnly, 5000, payload(8)) // B's own request, before any answer
				g.resp(rcAck, 1000, aeth(ack))
				g.req(rcAck, 5000, aeth(ack))
			},
			events: "",
			check: func(t *testing.T, r *result) {
				ss := r.tr.Sessions()
				if len(ss) != 1 || ss[0].Learned != decode.PairingResponse || ss[0].Messages(decode.MsgSend) != 2 || ss[0].Sent[1].Requests != 1 {
					t.Fatalf("sessions: %d, first %+v", len(ss), ss[0])
				}
				if a := r.pkts[3].Analysis; a.RequestFrame != 2 || a.Session != ss[0].ID {
					t.Errorf("A's ACK of B's SEND: request %d session %d", a.RequestFrame, a.Session)
				}
			},
		},
		{
			name: "a PSN jump of millions is a new connection, not a loss",
			build: func(g *gen) {
				g.req(rcWriteOnly, 10, reth(8), payload(8)).resp(rcAck, 10, aeth(ack))
				g.req(rcWriteOnly, 0x800010, reth(8), payload(8)).resp(rcAck, 0x800010, aeth(ack))
				g.req(rcWriteOnly, 0x800011, reth(8), payload(8)).resp(rcAck, 0x800011, aeth(ack))
			},
			events: "3:mid_stream",
			check: func(t *testing.T, r *result) {
				if s := r.tr.Sessions()[0]; s.Findings().Gaps != 0 || s.Findings().LostPSNs != 0 || s.Messages(decode.MsgWrite) != 3 {
					t.Errorf("gaps %d lost %d writes %d", s.Findings().Gaps, s.Findings().LostPSNs, s.Messages(decode.MsgWrite))
				}
			},
		},
		{
			name: "opcode out of sequence",
			build: func(g *gen) {
				g.req(rcWriteFirst, 1, reth(4096), payload(1024)).req(rcWriteOnly, 2, reth(8), payload(8))
			},
			events: "2:opcode_sequence",
		},
		{
			name: "UC: no responses, still PSN analysis",
			build: func(g *gen) {
				g.req(ucWriteOnly, 1, reth(8), payload(8)).req(ucWriteOnly, 3, reth(8), payload(8))
			},
			events: "2:psn_gap",
			check: func(t *testing.T, r *result) {
				if s := r.tr.Sessions()[0]; s.Transport != decode.TransportUC || s.Findings().NoResponse != 0 {
					t.Errorf("%s noresp %d", s.Transport, s.Findings().NoResponse)
				}
			},
		},
		{
			name: "truncated, ICRC error and ECN CE are reported",
			build: func(g *gen) {
				g.req(rcWriteOnly, 1, reth(8), payload(8), flags(decode.FlagTruncated))
				g.req(rcWriteOnly, 2, reth(8), payload(8), flags(decode.FlagICRCBad), ecnCE())
				g.resp(rcAck, 2, aeth(ack))
			},
			events: "1:truncated 2:ecn_ce 2:icrc_bad 3:ack_coalesced",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &gen{qa: 0x11, qb: 0x22}
			tc.build(g)
			r := run(g.frames, Options{})
			if got := r.eventSummary(); got != tc.events {
				t.Errorf("events:\n got %q\nwant %q", got, tc.events)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// Thousands of QP pairs interleaved: every pair is found, nothing is
// reported, and the state kept is per session.
func TestTrackerManyQPs(t *testing.T) {
	const pairs = 3000
	var frames []decode.Packet
	n := 0
	add := func(src, dst [4]byte, qp uint32, op decode.Opcode, psn uint32, o ...opt) {
		g := &gen{}
		g.add(src, dst, qp, op, psn, o)
		p := g.frames[0]
		n++
		p.Frame.Number = n
		p.Frame.Time = epoch.Add(time.Duration(n) * time.Microsecond)
		frames = append(frames, p)
	}
	for round := range 3 {
		for i := range pairs {
			qb := uint32(0x9000 + i)
			psn := uint32(i*7+round) & decode.PSNMask
			add(hostA, hostB, qb, rcWriteOnly, psn, reth(8), payload(8))
		}
		for i := range pairs {
			qa := uint32(0x1000 + i)
			psn := uint32(i*7+round) & decode.PSNMask
			add(hostB, hostA, qa, rcAck, psn, aeth(ack))
		}
	}
	r := run(frames, Options{})
	if len(r.events) != 0 {
		t.Fatalf("%d events on clean traffic, first: %+v", len(r.events), r.events[0])
	}
	s := r.tr.Sessions()
	if len(s) != pairs {
		t.Fatalf("%d sessions, want %d", len(s), pairs)
	}
	for _, x := range s {
		if x.Learned != decode.PairingResponse || x.A.QPN+0x8000 != x.B.QPN || x.Messages(decode.MsgWrite) != 3 {
			t.Fatalf("session %d: %v %v %v writes %d", x.ID, x.Learned, x.A, x.B, x.Messages(decode.MsgWrite))
		}
	}
}

// A side's responses are its packets but its requests and its CNPs
// (Session.Responses), on a session paired directly and on one that a
// provisional session merged into, whose CNPs were counted on the
// provisional one's side A before it became side B.
func TestResponsesLessCNPs(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *gen
		want [2]DirStats
		resp [2]uint64
	}{
		{"paired by response", (&gen{qa: 0x11, qb: 0x22}).
			req(rcWriteOnly, 100, reth(8), payload(8)).
			resp(rcAck, 100, aeth(ack)).
			resp(decode.CNP, 0),
			[2]DirStats{{Packets: 1, Bytes: 100, PayloadBytes: 8, Requests: 1}, {Packets: 2, Bytes: 200}}, [2]uint64{0, 1}},
		{"merged", (&gen{qa: 0x11, qb: 0x22}).
			resp(rcSendOnly, 500, payload(4)).
			resp(decode.CNP, 0).
			req(rcWriteOnly, 100, reth(8), payload(8)).
			resp(rcAck, 100, aeth(ack)).
			req(rcAck, 500, aeth(ack)),
			[2]DirStats{{Packets: 2, Bytes: 200, PayloadBytes: 8, Requests: 1}, {Packets: 3, Bytes: 300, PayloadBytes: 4, Requests: 1}}, [2]uint64{1, 1}},
	} {
		r := run(c.g.frames, Options{})
		ss := r.tr.Sessions()
		if len(ss) != 1 {
			t.Fatalf("%s: %d sessions, want 1", c.name, len(ss))
		}
		s := ss[0]
		for side := range 2 {
			if s.Sent[side] != c.want[side] || s.Responses(side) != c.resp[side] {
				t.Errorf("%s: side %d sent %+v, %d responses; want %+v, %d", c.name, side, s.Sent[side], s.Responses(side), c.want[side], c.resp[side])
			}
		}
		if f := s.Findings(); f.CNPs != 1 {
			t.Errorf("%s: %d CNPs, want 1", c.name, f.CNPs)
		}
	}
}

// A capture of one direction only: every request waits for an answer that
// is not in it. Memory stays bounded and the finding is one event.
//
// The issue's case (20,000 READs unanswered from frame 1, reported "from
// frame 4097 on") with the default limit, and WRITEs with a small one.
func TestTrackerOneDirection(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		name  string
		op    decode.Opcode
		o     []opt
		opts  Options
		kind  decode.MsgKind
		limit int // the outstanding list's capacity may reach twice this (0: not checked)
	}{
		{"writes, 1024 kept", rcWriteOnly, []opt{reth(8), payload(8)}, Options{MaxOutstanding: 1024}, decode.MsgWrite, 1024},
		{"reads, the default", rcReadReq, []opt{reth(8)}, Options{}, decode.MsgRead, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gen{qa: 1, qb: 2}
			for i := range n {
				g.req(tc.op, uint32(i), tc.o...)
			}
			r := run(g.frames, tc.opts)
			if len(r.events) != 1 || r.events[0].Kind != decode.EventNoResponse {
				t.Fatalf("events %q, want one no_response", r.eventSummary())
			}
			// the finding starts at the first request, though the oldest
			// were forgotten to bound memory
			if e := r.events[0]; e.Frame != 1 || !strings.Contains(e.Text, strconv.Itoa(n-100)+" requests from frame 1 on") {
				t.Errorf("no_response at frame %d: %q", e.Frame, e.Text)
			}
			s := r.tr.Sessions()[0]
			// the last 100 (1 ms at 10 µs apart) were not due an answer yet
			if s.Findings().NoResponse != n-100 || s.Messages(tc.kind) != n {
				t.Errorf("unanswered %d, messages %d", s.Findings().NoResponse, s.Messages(tc.kind))
			}
			// (with the default, 16384, n is too few to tell)
			if c := cap(s.live.req[0].out); tc.limit > 0 && c > 2*tc.limit {
				t.Errorf("outstanding list grew to %d", c)
			}
		})
	}
}

func TestLatencyQuantiles(t *testing.T) {
	var l Latency
	for i := 1; i <= 10; i++ {
		l.Add(time.Duration(i) * time.Microsecond)
	}
	if l.Quantile(0.5) != 5*time.Microsecond || l.Quantile(0.99) != 10*time.Microsecond || l.Min != time.Microsecond {
		t.Errorf("exact: median %v p99 %v", l.Quantile(0.5), l.Quantile(0.99))
	}
	// the 0-quantile is the least value (its rank was 0 - 1, wrapped to
	// the last)
	if q0 := l.Quantile(0); q0 != time.Microsecond {
		t.Errorf("exact: q0 %v, want the minimum", q0)
	}
	var h Latency
	for i := 1; i <= 100000; i++ {
		h.Add(time.Duration(i) * time.Nanosecond * 10)
	}
	for _, q := range []float64{0.5, 0.99} {
		want := float64(q * 1e6)
		got := float64(h.Quantile(q))
		if got < want*0.96 || got > want*1.04 {
			t.Errorf("histogram q%.2f = %v, want about %v", q, time.Duration(got), time.Duration(want))
		}
	}
	if q0 := h.Quantile(0); q0 != h.Min {
		t.Errorf("histogram: q0 %v, want the minimum %v", q0, h.Min)
	}
	if h.more.exact != nil || h.Max != time.Millisecond {
		t.Errorf("histogram mode: exact %d max %v", len(h.more.exact), h.Max)
	}
	// one or two values keep no samples: Min and Max are them
	for _, n := range []int{1, 2} {
		var l Latency
		for i := n; i >= 1; i-- {
			l.Add(time.Duration(i) * time.Microsecond)
		}
		if l.more != nil || l.Quantile(0.5) != time.Microsecond || l.Quantile(0.99) != time.Duration(n)*time.Microsecond {
			t.Errorf("%d values: samples %v, median %v, p99 %v", n, l.more != nil, l.Quantile(0.5), l.Quantile(0.99))
		}
	}
}
