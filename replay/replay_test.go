package replay

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// fakeModel answers each request with the next scripted Result, so the
// aligner is tested without the responder rules. Like hca.Model it reuses
// its Result and the payload buffer between calls.
type fakeModel struct {
	script   []hca.Result
	next     int
	res      hca.Result
	buf      []byte
	observed []decode.PSN // PSNs of the responses observed
	finish   []hca.Completion
}

func (f *fakeModel) Receive(p *decode.Packet, ts time.Time) *hca.Result {
	f.res = hca.Result{}
	if f.next < len(f.script) {
		f.res = f.script[f.next]
		f.next++
	}
	// Reuse one buffer for every payload, as the model's arena is reused,
	// and scribble over the previous contents.
	for i := range f.buf {
		f.buf[i] = 0xEE
	}
	f.buf = f.buf[:0]
	resp := make([]hca.Response, len(f.res.Responses))
	copy(resp, f.res.Responses)
	for i := range resp {
		if resp[i].Payload != nil {
			start := len(f.buf)
			f.buf = append(f.buf, resp[i].Payload...)
			resp[i].Payload = f.buf[start:len(f.buf):len(f.buf)]
		}
		if resp[i].Frame == 0 {
			resp[i].Frame = p.Frame.Number
		}
		if resp[i].QPN == 0 {
			resp[i].QPN = p.BTH.DestQP
		}
	}
	f.res.Responses = resp
	return &f.res
}

func (f *fakeModel) Observe(p *decode.Packet) { f.observed = append(f.observed, p.BTH.PSN) }

func (f *fakeModel) Finish() []hca.Completion { return f.finish }

var (
	requester = netip.MustParseAddr("10.0.0.1")
	responder = netip.MustParseAddr("10.0.0.2")
	otherHost = netip.MustParseAddr("10.0.0.3")
)

const (
	respQP = 0x11 // the responder's QP in the tests
	reqQP  = 0x12 // its peer
)

// testQPs: QP 0x11 (RC, peer 10.0.0.1 QP 0x12), QP 0x21 (RC, peer not
// named), QP 0x31 (UD).
func testQPs() []hca.QPConfig {
	return []hca.QPConfig{
		{QPN: respQP, Type: decode.TransportRC, Remote: &hca.Peer{Addr: decode.NodeAddr(requester), QPN: reqQP}},
		{QPN: 0x21, Type: decode.TransportRC, ExpectedPSN: 1, HasExpectedPSN: true},
		{QPN: 0x31, Type: decode.TransportUD},
	}
}

func ipPacket(frame int, src, dst netip.Addr, op decode.Opcode, destQP uint32, psn decode.PSN) *decode.Packet {
	p := &decode.Packet{}
	p.Frame.Number = frame
	p.Frame.Time = time.Unix(1767225600, int64(frame)*1000)
	p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
	p.IPv4.Src, p.IPv4.Dst = src.As4(), dst.As4()
	p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = op, destQP, psn
	return p
}

// req is a request to the responder's QP 0x11.
func req(frame int, psn decode.PSN, op decode.Opcode) *decode.Packet {
	return ipPacket(frame, requester, responder, op, respQP, psn)
}

// resp is a captured response to the requester's QP 0x12.
func resp(frame int, psn decode.PSN, op decode.Opcode, syn uint8, msn uint32) *decode.Packet {
	p := ipPacket(frame, responder, requester, op, reqQP, psn)
	if op != decode.OpReadResponseMiddle {
		p.Has |= decode.HdrAETH
		p.AETH.Syndrome, p.AETH.MSN = syn, msn
	}
	return p
}

func withPayload(p *decode.Packet, b []byte) *decode.Packet { p.Payload = b; return p }

func withOrig(p *decode.Packet, v uint64) *decode.Packet {
	p.Has |= decode.HdrAtomicAckETH
	p.AtomicAckETH.OrigRemData = v
	return p
}

func ack(psn decode.PSN, msn uint32) hca.Response {
	return hca.Response{Opcode: decode.OpAcknowledge, PSN: psn, HasAETH: true, Syndrome: 0x1F, SyndromeMask: 0xFF, MSN: msn, DestQP: reqQP}
}

func coalescable(r hca.Response) hca.Response { r.Coalescable = true; return r }

func nak(psn decode.PSN, syn uint8, msn uint32, why string) hca.Response {
	r := ack(psn, msn)
	r.Syndrome, r.Why = syn, why
	return r
}

func readResp(op decode.Opcode, psn decode.PSN, msn uint32, data []byte, known []bool) hca.Response {
	r := hca.Response{Opcode: op, PSN: psn, HasAETH: op != decode.OpReadResponseMiddle, MSN: msn, Payload: data, Known: known, DestQP: reqQP}
	if r.HasAETH {
		r.Syndrome, r.SyndromeMask = 0x1F, 0xFF
	}
	return r
}

func answers(rs ...hca.Response) hca.Result { return hca.Result{Responses: rs, Executed: true} }

// step is one packet of a scripted capture: a request with the model's
// answer to it, or a captured packet.
type step struct {
	p   *decode.Packet
	res *hca.Result // set for requests
}

func toModel(p *decode.Packet, res hca.Result) step { return step{p, &res} }
func captured(p *decode.Packet) step                { return step{p: p} }

// wantDiv is a divergence expected in a test, by kind and frames, with
// words its message must contain.
type wantDiv struct {
	kind          Kind
	reqFrame      int
	respFrame     int
	msgHas        []string
	offset, count int
}

func runSteps(t *testing.T, opt Options, steps []step) (*Report, *fakeModel) {
	t.Helper()
	f := &fakeModel{}
	for _, s := range steps {
		if s.res != nil {
			f.script = append(f.script, *s.res)
		}
	}
	if !opt.Responder.IsValid() {
		opt.Responder = decode.NodeAddr(responder)
	}
	if opt.QPs == nil {
		opt.QPs = testQPs()
	}
	r, err := New(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		r.Feed(s.p)
	}
	rep := r.Finish()
	if r.pendingBytes != 0 {
		t.Errorf("%d bytes still counted as waiting after Finish", r.pendingBytes)
	}
	return rep, f
}

func checkDivs(t *testing.T, rep *Report, want []wantDiv) {
	t.Helper()
	if len(rep.Divergences) != len(want) {
		for _, d := range rep.Divergences {
			t.Logf("got: %s", d.Message)
		}
		t.Fatalf("%d divergences, want %d", len(rep.Divergences), len(want))
	}
	for i, w := range want {
		d := rep.Divergences[i]
		if d.Kind != w.kind || d.RequestFrame != w.reqFrame || d.ResponseFrame != w.respFrame {
			t.Errorf("divergence %d: %s request frame %d response frame %d, want %s %d %d\n%s", i, d.Kind, d.RequestFrame, d.ResponseFrame, w.kind, w.reqFrame, w.respFrame, d.Message)
		}
		for _, s := range w.msgHas {
			if !strings.Contains(d.Message, s) {
				t.Errorf("divergence %d: message %q lacks %q", i, d.Message, s)
			}
		}
		if w.kind == KindReadData && (d.Offset != w.offset || d.Count != w.count) {
			t.Errorf("read_data: offset %d count %d, want %d %d", d.Offset, d.Count, w.offset, w.count)
		}
		if d.SessionName == "" || d.Message == "" || !strings.HasPrefix(d.Message, "frame ") {
			t.Errorf("divergence %d: session %q message %q", i, d.SessionName, d.Message)
		}
	}
}

func TestAlign(t *testing.T) {
	const (
		wo  = decode.OpWriteOnly
		rr  = decode.OpReadRequest
		ak  = decode.OpAcknowledge
		rro = decode.OpReadResponseOnly
		rrf = decode.OpReadResponseFirst
		rrm = decode.OpReadResponseMiddle
		rrl = decode.OpReadResponseLast
		cs  = decode.OpCompareSwap
		aa  = decode.OpAtomicAcknowledge
	)
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	allKnown := []bool{true, true, true, true, true, true, true, true}
	halfKnown := []bool{true, true, true, true, false, false, false, false}
	atomic := func(psn decode.PSN, orig uint64, known bool) hca.Response {
		r := hca.Response{Opcode: aa, PSN: psn, HasAETH: true, Syndrome: 0x1F, SyndromeMask: 0xFF, MSN: 1,
			AtomicOrig: orig, AtomicKnown: known, DestQP: reqQP}
		return r
	}
	oob := answers(nak(5, 0x62, 0, "rkey 0x00001234: out of bounds by 256 bytes"))
	oob.Check.Verdict = hca.VerdictOutOfBounds

	cases := []struct {
		name     string
		steps    []step
		want     []wantDiv
		compared int
	}{
		{"match", []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
			captured(resp(2, 5, ak, 0x1F, 1)),
		}, nil, 1},
		{"missing at the end", []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
		}, []wantDiv{{KindMissingResponse, 1, 0, []string{"frame 1: missing response", "PSN 5", "the capture ends"}, 0, 0}}, 0},
		{"extra", []step{
			toModel(req(1, 5, wo), hca.Result{}),
			captured(resp(2, 5, ak, 0x1F, 1)),
		}, []wantDiv{{KindExtraResponse, 0, 2, []string{"frame 2: extra response", "model none", "ACK (0x1f)"}, 0, 0}}, 0},
		{"extra explained by a drop", []step{
			toModel(req(1, 7, wo), hca.Result{Drop: hca.DropPSNOutOfOrder}),
			captured(resp(2, 7, ak, 0x1F, 1)),
		}, []wantDiv{{KindExtraResponse, 1, 2, []string{"dropped the request in frame 1", "out of sequence"}, 0, 0}}, 0},
		{"opcode", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, allKnown))),
			captured(withPayload(resp(2, 5, rrf, 0x1F, 1), data)),
		}, []wantDiv{{KindOpcode, 1, 2, []string{"frame 1 → 2: opcode", "model RC RDMA Read Response Only", "captured RC RDMA Read Response First"}, 0, 0}}, 1},
		{"psn: same answer, another PSN", []step{
			toModel(req(1, 9, wo), answers(nak(5, 0x60, 0, "PSN 9 is ahead of the expected PSN 5"))),
			captured(resp(2, 9, ak, 0x60, 0)),
		}, []wantDiv{{KindPSN, 1, 2, []string{"model RC Acknowledge PSN 5, captured PSN 9"}, 0, 0}}, 1},
		{"syndrome: the responder accepts what the model NAKs", []step{
			toModel(req(7, 5, wo), oob),
			captured(resp(8, 5, ak, 0x1F, 1)),
		}, []wantDiv{{KindSyndrome, 7, 8, []string{"frame 7 → 8: syndrome: model NAK Remote Access Error (0x62: rkey 0x00001234: out of bounds by 256 bytes), captured ACK (0x1f)",
			"accepted an access outside the memory region"}, 0, 0}}, 1},
		{"syndrome: NAK instead of a READ response", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, allKnown))),
			captured(resp(2, 5, ak, 0x62, 0)),
		}, []wantDiv{{KindSyndrome, 1, 2, []string{"model RC RDMA Read Response Only", "captured RC Acknowledge NAK Remote Access Error (0x62)", "rejected a request the model accepts"}, 0, 0}}, 1},
		{"syndrome: other NAK code", []step{
			toModel(req(1, 5, wo), answers(nak(5, 0x62, 0, "QP 0x000011 lacks REMOTE_WRITE"))),
			captured(resp(2, 5, ak, 0x61, 0)),
		}, []wantDiv{{KindSyndrome, 1, 2, []string{"different NAK codes", "captured NAK Invalid Request (0x61)"}, 0, 0}}, 1},
		{"syndrome: RNR NAK where the model has a receive", []step{
			toModel(req(1, 5, decode.OpSendOnly), answers(ack(5, 1))),
			captured(resp(2, 5, ak, 0x2E, 0)),
		}, []wantDiv{{KindSyndrome, 1, 2, []string{"RNR NAK timer 14 (0x2e)", "no receive posted"}, 0, 0}}, 1},
		{"syndrome: credits masked", []step{
			toModel(req(1, 5, wo), answers(func() hca.Response { r := ack(5, 1); r.SyndromeMask = 0xE0; return r }())),
			captured(resp(2, 5, ak, 0x05, 1)),
		}, nil, 1},
		{"msn", []step{
			toModel(req(1, 5, wo), answers(ack(5, 3))),
			captured(resp(2, 5, ak, 0x1F, 4)),
		}, []wantDiv{{KindMSN, 1, 2, []string{"model MSN 3, captured MSN 4"}, 0, 0}}, 1},
		{"read data: a known byte differs", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, allKnown))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), []byte{1, 2, 9, 4, 5, 6, 9, 8})),
		}, []wantDiv{{KindReadData, 1, 2, []string{"2 of the 8 bytes differ", "offset 2", "model 03 04 05 06 07 08, captured 09 04 05 06 09 08"}, 2, 2}}, 1},
		{"read data: unknown bytes are not compared", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, halfKnown))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), []byte{1, 2, 3, 4, 0, 0, 0, 0})),
		}, nil, 1},
		{"read data: unknown bytes shown as ??", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, halfKnown))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), []byte{1, 2, 3, 0, 0, 0, 0, 0})),
		}, []wantDiv{{KindReadData, 1, 2, []string{"1 of the 8 bytes", "model 04 ?? ?? ?? ??, captured 00 00 00 00 00"}, 3, 1}}, 1},
		{"read data: length", []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, allKnown))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), data[:4])),
		}, []wantDiv{{KindReadData, 1, 2, []string{"model 8 bytes of data, captured 4"}, 4, 0}}, 1},
		{"read data: multi-packet, the middle one differs", []step{
			toModel(req(1, 5, rr), answers(readResp(rrf, 5, 1, data, allKnown), readResp(rrm, 6, 1, data, allKnown), readResp(rrl, 7, 1, data, allKnown))),
			captured(withPayload(resp(2, 5, rrf, 0x1F, 1), data)),
			captured(withPayload(resp(3, 6, rrm, 0, 0), []byte{1, 2, 3, 4, 5, 6, 7, 0})),
			captured(withPayload(resp(4, 7, rrl, 0x1F, 1), data)),
		}, []wantDiv{{KindReadData, 1, 3, []string{"offset 7", "Read Response Middle PSN 6"}, 7, 1}}, 3},
		{"atomic original value", []step{
			toModel(req(1, 5, cs), answers(atomic(5, 42, true))),
			captured(withOrig(resp(2, 5, aa, 0x1F, 1), 41)),
		}, []wantDiv{{KindAtomicOrig, 1, 2, []string{"model original value 0x2a, captured 0x29"}, 0, 0}}, 1},
		{"atomic original value unknown to the model", []step{
			toModel(req(1, 5, cs), answers(atomic(5, 0, false))),
			captured(withOrig(resp(2, 5, aa, 0x1F, 1), 41)),
		}, nil, 1},
		{"FIFO: a duplicate's answer pairs with the second response", []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
			toModel(req(3, 5, wo), answers(func() hca.Response { r := ack(5, 1); r.Duplicate = true; return r }())),
			captured(resp(4, 5, ak, 0x1F, 1)),
		}, []wantDiv{{KindMissingResponse, 3, 0, []string{"answer to a duplicate request", "the capture ends"}, 0, 0}}, 1},
		{"FIFO: both answers of a retransmission", []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
			captured(resp(2, 5, ak, 0x1F, 1)),
			toModel(req(3, 5, wo), answers(ack(5, 1))),
			captured(resp(4, 5, ak, 0x1F, 1)),
		}, nil, 2},
		{"skipped: missing as soon as a later response comes", []step{
			toModel(req(1, 5, decode.OpSendOnly), answers(nak(5, 0x2E, 0, "no receive WQE posted"))),
			toModel(req(2, 6, wo), answers(ack(6, 1))),
			captured(resp(3, 6, ak, 0x1F, 1)),
		}, []wantDiv{{KindMissingResponse, 1, 0, []string{"RNR NAK timer 14", "answered PSN 6 in frame 3 without it"}, 0, 0}}, 1},
		{"coalesced ACK covered by a later one", []step{
			toModel(req(1, 5, wo), answers(coalescable(ack(5, 1)))),
			toModel(req(2, 6, wo), answers(coalescable(ack(6, 2)))),
			captured(resp(3, 6, ak, 0x1F, 2)),
		}, nil, 1},
		{"coalesced ACK, then an ACK the model does not send", []step{
			toModel(req(1, 5, wo), answers(coalescable(ack(5, 1)))),
			toModel(req(2, 6, wo), hca.Result{Drop: hca.DropQPState}),
			captured(resp(3, 6, ak, 0x1F, 2)),
		}, []wantDiv{{KindExtraResponse, 2, 3, []string{"QP not ready to receive"}, 0, 0}}, 0},
		{"coalesced ACK missing at the end", []step{
			toModel(req(1, 5, wo), answers(coalescable(ack(5, 1)))),
		}, []wantDiv{{KindMissingResponse, 1, 0, nil, 0, 0}}, 0},
		{"response to a requester QP no responder QP serves", []step{
			captured(ipPacket(2, responder, requester, ak, 0x99, 5)),
		}, []wantDiv{{KindExtraResponse, 0, 2, []string{"no responder QP in the MPT is connected to 10.0.0.1 QP 0x000099"}, 0, 0}}, 0},
		{"QP without a named peer: learned from the response", []step{
			toModel(ipPacket(1, requester, responder, wo, 0x21, 1), answers(hca.Response{Opcode: ak, PSN: 1, HasAETH: true, Syndrome: 0x1F, MSN: 1})),
			captured(withAETH(ipPacket(2, responder, requester, ak, 0x55, 1), 0x1F, 1)),
		}, nil, 1},
		{"divergences sorted by frame", []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
			captured(resp(2, 9, aa, 0x1F, 1)), // extra (frame 2), found first
		}, []wantDiv{{KindMissingResponse, 1, 0, nil, 0, 0}, {KindExtraResponse, 0, 2, nil, 0, 0}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, _ := runSteps(t, Options{}, c.steps)
			checkDivs(t, rep, c.want)
			if rep.Compared != c.compared {
				t.Errorf("compared %d, want %d", rep.Compared, c.compared)
			}
			if rep.DivergenceCount != len(c.want) || rep.Pass() != (len(c.want) == 0) {
				t.Errorf("count %d pass %v, want %d", rep.DivergenceCount, rep.Pass(), len(c.want))
			}
		})
	}
}

func withAETH(p *decode.Packet, syn uint8, msn uint32) *decode.Packet {
	p.Has |= decode.HdrAETH
	p.AETH.Syndrome, p.AETH.MSN = syn, msn
	return p
}

// TestModelBuffersCopied: the model reuses its payload buffer at the next
// Receive; the waiting response must keep its own copy.
func TestModelBuffersCopied(t *testing.T) {
	data := []byte{1, 2, 3, 4}
	rep, _ := runSteps(t, Options{}, []step{
		toModel(req(1, 5, decode.OpReadRequest), answers(readResp(decode.OpReadResponseOnly, 5, 1, data, []bool{true, true, true, true}))),
		toModel(req(2, 6, decode.OpWriteOnly), answers(ack(6, 2))), // the fake scribbles over its buffer
		captured(withPayload(resp(3, 5, decode.OpReadResponseOnly, 0x1F, 1), []byte{1, 2, 3, 4})),
		captured(resp(4, 6, decode.OpAcknowledge, 0x1F, 2)),
	})
	checkDivs(t, rep, nil)
}

func TestSessionsAndCounts(t *testing.T) {
	const wo = decode.OpWriteOnly
	mad := ipPacket(3, requester, responder, decode.Opcode(decode.TransportUD|decode.OpSendOnly), 1, 0)
	cnp := ipPacket(4, responder, requester, decode.CNP, reqQP, 0)
	other := ipPacket(5, requester, otherHost, wo, 0x77, 1)
	reverseReq := ipPacket(6, responder, requester, wo, reqQP, 1)
	notRDMA := &decode.Packet{Has: decode.HdrEth | decode.HdrIPv4}
	noAddr := &decode.Packet{Has: decode.HdrBTH} // no IP header, GRH or LRH: no node
	noAddr.BTH.DestQP = 5
	grh := &decode.Packet{Has: decode.HdrLRH | decode.HdrGRH | decode.HdrBTH}
	grh.GRH.DGID = netip.AddrFrom4(responder.As4()).As16() // ::ffff:10.0.0.2
	grh.GRH.SGID = netip.AddrFrom4(requester.As4()).As16()
	grh.BTH = decode.BTH{Opcode: decode.Opcode(decode.TransportUD | decode.OpSendOnly), DestQP: 0x31}
	grh.Frame.Number = 9
	unknownQP := ipPacket(10, requester, responder, wo, 0x44, 1)
	rep, f := runSteps(t, Options{MaxCompletions: 2}, []step{
		toModel(req(1, 5, wo), hca.Result{Responses: []hca.Response{ack(5, 1)}, Executed: true,
			Completions: []hca.Completion{{Frame: 1, Requester: true, QPN: reqQP, Status: hca.WCSuccess}}}),
		captured(resp(2, 5, decode.OpAcknowledge, 0x1F, 1)),
		captured(mad), captured(cnp), captured(other), captured(reverseReq), captured(notRDMA), captured(noAddr),
		toModel(grh, hca.Result{Executed: true, Completions: []hca.Completion{{Frame: 9, QPN: 0x31, Status: hca.WCSuccess}, {Frame: 9, QPN: 0x31, Status: hca.WCLocLenErr}}}),
		toModel(unknownQP, hca.Result{Drop: hca.DropUnknownQP}),
	})
	g := rep.Ignored
	if g.Management != 1 || g.CNP != 1 || g.OtherHosts != 1 || g.Reverse != 1 || g.NotRDMA != 1 || g.NoAddress != 1 || g.Total() != 6 {
		t.Errorf("ignored %+v", g)
	}
	if rep.Packets != 10 || rep.Requests != 3 || rep.CapturedResponses != 1 || rep.Compared != 1 || rep.ModelResponses != 1 {
		t.Errorf("packets %d requests %d captured %d compared %d model %d", rep.Packets, rep.Requests, rep.CapturedResponses, rep.Compared, rep.ModelResponses)
	}
	if len(f.observed) != 0 {
		t.Errorf("observed %v: the one captured response was an ACK the model predicted", f.observed)
	}
	names := []string{}
	for _, s := range rep.Sessions {
		names = append(names, s.Name)
	}
	want := []string{"QP 0x000011 ← 10.0.0.1 QP 0x000012", "QP 0x000021 (not connected)", "QP 0x000031 (UD)", "QP 0x000044 ← 10.0.0.1 QP ? (not in the MPT)"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("sessions %q, want %q", names, want)
	}
	if s := rep.Sessions[3]; s.Requests != 1 || s.Dropped[hca.DropUnknownQP] != 1 || s.Drops()[0].Reason != hca.DropUnknownQP {
		t.Errorf("unknown QP session %+v", s)
	}
	if s := rep.Sessions[2]; s.Requests != 1 || s.Executed != 1 {
		t.Errorf("UD session over a GRH %+v", s)
	}
	c := rep.Completions
	if c.Total() != 3 || c.Requester[hca.WCSuccess] != 1 || c.Responder[hca.WCLocLenErr] != 1 || len(c.List) != 2 || c.Omitted != 1 {
		t.Errorf("completions total %d list %d omitted %d", c.Total(), len(c.List), c.Omitted)
	}
	notes := strings.Join(rep.Notes(), "\n")
	if !strings.Contains(notes, "1 request went to QPs the MPT file does not describe (QP 0x000044)") {
		t.Errorf("notes %q", notes)
	}
	if len(rep.RequestHosts) != 1 || rep.RequestHosts[0] != decode.NodeAddr(otherHost) {
		t.Errorf("request hosts %v", rep.RequestHosts)
	}
}

func TestLimits(t *testing.T) {
	const wo = decode.OpWriteOnly
	t.Run("MaxPending", func(t *testing.T) {
		rep, _ := runSteps(t, Options{MaxPending: 2}, []step{
			toModel(req(1, 5, wo), answers(ack(5, 1))),
			toModel(req(2, 6, wo), answers(ack(6, 2))),
			toModel(req(3, 7, wo), answers(ack(7, 3))),
			captured(resp(4, 6, decode.OpAcknowledge, 0x1F, 2)),
			captured(resp(5, 7, decode.OpAcknowledge, 0x1F, 3)),
		})
		checkDivs(t, rep, []wantDiv{{KindMissingResponse, 1, 0, []string{"while 2 later model responses"}, 0, 0}})
	})
	t.Run("MaxPendingBytes", func(t *testing.T) {
		data := make([]byte, 600)
		const rr, rro = decode.OpReadRequest, decode.OpReadResponseOnly
		rep, _ := runSteps(t, Options{MaxPendingBytes: 1000}, []step{
			toModel(req(1, 5, rr), answers(readResp(rro, 5, 1, data, nil))),
			toModel(req(2, 6, rr), answers(readResp(rro, 6, 2, data, nil))), // 1200 bytes: the first goes
			captured(withPayload(resp(3, 6, rro, 0x1F, 2), data)),
		})
		checkDivs(t, rep, []wantDiv{{KindMissingResponse, 1, 0, []string{"while 1000 bytes of later READ data waited"}, 0, 0}})
	})
	t.Run("MaxDivergences", func(t *testing.T) {
		rep, _ := runSteps(t, Options{MaxDivergences: 2}, []step{
			captured(resp(1, 5, decode.OpAcknowledge, 0x1F, 1)),
			captured(resp(2, 6, decode.OpAcknowledge, 0x1F, 1)),
			captured(resp(3, 7, decode.OpAcknowledge, 0x1F, 1)),
		})
		if len(rep.Divergences) != 2 || rep.DivergenceCount != 3 || rep.DivergencesOmitted != 1 || rep.ByKind[KindExtraResponse] != 3 {
			t.Fatalf("listed %d, count %d, omitted %d", len(rep.Divergences), rep.DivergenceCount, rep.DivergencesOmitted)
		}
		txt := string(rep.AppendText(nil))
		if !strings.Contains(txt, "... and 1 more") || !strings.HasSuffix(txt, "replay: 0 requests, 0 responses compared, 3 divergences\n") {
			t.Errorf("text:\n%s", txt)
		}
	})
	t.Run("sessions", func(t *testing.T) {
		var steps []step
		for i := range maxSessions + 10 {
			steps = append(steps, toModel(ipPacket(i+1, requester, responder, wo, uint32(0x1000+i), 1), hca.Result{Drop: hca.DropUnknownQP}))
		}
		rep, _ := runSteps(t, Options{}, steps)
		if len(rep.Sessions) != maxSessions+1 || rep.Requests != maxSessions+10 {
			t.Fatalf("%d sessions, %d requests", len(rep.Sessions), rep.Requests)
		}
		if last := rep.Sessions[maxSessions]; last.Requests != 13 || !strings.HasPrefix(last.Name, "other QPs") {
			t.Fatalf("overflow session %q with %d requests", last.Name, last.Requests)
		}
	})
}

func TestNewNeedsResponder(t *testing.T) {
	if _, err := New(&fakeModel{}, Options{}); err != ErrNoResponder {
		t.Fatalf("err %v", err)
	}
	// An IPv4-mapped responder matches IPv4 packets.
	r, err := New(&fakeModel{}, Options{Responder: decode.MustParseNode("::ffff:10.0.0.2"), QPs: testQPs()})
	if err != nil {
		t.Fatal(err)
	}
	r.Feed(req(1, 5, decode.OpWriteOnly))
	if rep := r.Finish(); rep.Requests != 1 {
		t.Fatalf("requests %d", rep.Requests)
	}
}

func TestKindNames(t *testing.T) {
	want := "missing_response extra_response opcode psn syndrome msn read_data atomic_orig"
	var got []string
	for _, k := range Kinds() {
		got = append(got, k.String())
	}
	if strings.Join(got, " ") != want || Kind(0).String() != "unknown" {
		t.Fatalf("%q", got)
	}
}

// TestObserve: the model is shown the captured responses that can teach
// it something: READ data or an ATOMIC value it did not know, anything that
// diverged, responses it did not send.
func TestObserve(t *testing.T) {
	const (
		rro = decode.OpReadResponseOnly
		aa  = decode.OpAtomicAcknowledge
	)
	data := []byte{1, 2, 3, 4}
	all := []bool{true, true, true, true}
	some := []bool{true, false, true, true}
	atomic := func(known bool) hca.Result {
		return answers(hca.Response{Opcode: aa, PSN: 5, HasAETH: true, Syndrome: 0x1F, MSN: 1, AtomicOrig: 7, AtomicKnown: known, DestQP: reqQP})
	}
	cases := []struct {
		name     string
		steps    []step
		observed bool
	}{
		{"ACK predicted", []step{toModel(req(1, 5, decode.OpWriteOnly), answers(ack(5, 1))), captured(resp(2, 5, decode.OpAcknowledge, 0x1F, 1))}, false},
		{"READ data known", []step{toModel(req(1, 5, decode.OpReadRequest), answers(readResp(rro, 5, 1, data, all))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), data))}, false},
		{"READ data partly unknown", []step{toModel(req(1, 5, decode.OpReadRequest), answers(readResp(rro, 5, 1, data, some))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), data))}, true},
		{"READ data without payload from the model", []step{toModel(req(1, 5, decode.OpReadRequest), answers(readResp(rro, 5, 1, nil, nil))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), data))}, true},
		{"ATOMIC value known", []step{toModel(req(1, 5, decode.OpFetchAdd), atomic(true)), captured(withOrig(resp(2, 5, aa, 0x1F, 1), 7))}, false},
		{"ATOMIC value unknown", []step{toModel(req(1, 5, decode.OpFetchAdd), atomic(false)), captured(withOrig(resp(2, 5, aa, 0x1F, 1), 7))}, true},
		{"diverged", []step{toModel(req(1, 5, decode.OpWriteOnly), answers(ack(5, 1))), captured(resp(2, 5, decode.OpAcknowledge, 0x1F, 9))}, true},
		{"extra", []step{captured(resp(2, 5, decode.OpAcknowledge, 0x1F, 1))}, true},
		{"unpaired", []step{captured(ipPacket(2, responder, requester, decode.OpAcknowledge, 0x99, 5))}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, f := runSteps(t, Options{}, c.steps)
			if got := len(f.observed) == 1; got != c.observed || len(f.observed) > 1 {
				t.Fatalf("observed %v, want %v", f.observed, c.observed)
			}
		})
	}
}

func TestAllTrue(t *testing.T) {
	for _, c := range []struct {
		b    []bool
		want bool
	}{{nil, true}, {[]bool{true}, true}, {[]bool{false}, false}, {make([]bool, 100), false}} {
		if allTrue(c.b) != c.want {
			t.Errorf("allTrue(%v) = %v", c.b, !c.want)
		}
	}
	b := make([]bool, 4096)
	for i := range b {
		b[i] = true
	}
	if !allTrue(b) {
		t.Error("4096 true")
	}
	b[4095] = false
	if allTrue(b) {
		t.Error("last false")
	}
	// anyTrue: every position and length, one true or none.
	for n := 0; n <= 40; n++ {
		c := make([]bool, n)
		if anyTrue(c) {
			t.Fatalf("anyTrue of %d false", n)
		}
		for i := range c {
			c[i] = true
			if !anyTrue(c) {
				t.Fatalf("anyTrue of %d with %d true", n, i)
			}
			c[i] = false
		}
	}
}

// TestUnsolicitedACKs: a captured ACK no model response waits for is
// checked against what the model said an ACK of that packet carries
// (hca.Result.Ack), also when the packet is so far back that only its
// having been executed is remembered.
func TestUnsolicitedACKs(t *testing.T) {
	const (
		sf = decode.OpSendFirst
		sm = decode.OpSendMiddle
		ak = decode.OpAcknowledge
	)
	exec := func(psn decode.PSN, msn uint32, done bool) hca.Result {
		return hca.Result{Executed: true, Ack: hca.AckPoint{Valid: true, MsgDone: done, PSN: psn, MSN: msn}}
	}
	t.Run("checked", func(t *testing.T) {
		rep, _ := runSteps(t, Options{}, []step{
			toModel(req(1, 5, sf), exec(5, 0, false)),
			captured(resp(2, 5, ak, 0x1F, 0)),
			toModel(req(3, 6, sm), exec(6, 0, false)),
			captured(resp(4, 6, ak, 0x1F, 3)), // in a message: a note
		})
		checkDivs(t, rep, nil)
		if rep.NoteCount != 3 || rep.NotesByKind[NoteUnsolicitedACK] != 2 || rep.NotesByKind[NoteMSNInMessage] != 1 || rep.Compared != 2 {
			t.Errorf("notes %v, compared %d", rep.NotesByKind, rep.Compared)
		}
		if s := rep.Sessions[0]; s.Unsolicited != 2 || s.Notes != 3 {
			t.Errorf("session: %d unsolicited, %d notes", s.Unsolicited, s.Notes)
		}
	})
	t.Run("forgotten", func(t *testing.T) {
		var steps []step
		for i := 0; i < ackRingSize+10; i++ {
			steps = append(steps, toModel(req(i+1, decode.PSN(100+i), sm), exec(decode.PSN(100+i), 0, true)))
		}
		// An ACK of the first packet, long forgotten: legal, its MSN
		// (wrong here) unchecked; an ACK of a PSN never sent still
		// diverges.
		steps = append(steps, captured(resp(1000, 100, ak, 0x1F, 42)), captured(resp(1001, 100+ackRingSize+10, ak, 0x1F, 0)))
		rep, _ := runSteps(t, Options{}, steps)
		checkDivs(t, rep, []wantDiv{{KindExtraResponse, 0, 1001, []string{"which the responder has not received"}, 0, 0}})
		if rep.NotesByKind[NoteUnsolicitedACK] != 1 || !strings.Contains(rep.NoteList[0].Message, "too long before for the replay to check its MSN") {
			t.Errorf("notes %v: %+v", rep.NotesByKind, rep.NoteList)
		}
	})
	t.Run("MaxNotes", func(t *testing.T) {
		rep, _ := runSteps(t, Options{MaxNotes: 1}, []step{
			toModel(req(1, 5, sf), exec(5, 0, false)),
			captured(resp(2, 5, ak, 0x1F, 0)),
			captured(resp(3, 5, ak, 0x1F, 0)),
		})
		if rep.NoteCount != 2 || len(rep.NoteList) != 1 || rep.NotesOmitted != 1 {
			t.Errorf("%d notes, %d listed, %d omitted", rep.NoteCount, len(rep.NoteList), rep.NotesOmitted)
		}
		if txt := string(rep.AppendText(nil)); !strings.Contains(txt, "... and 1 more, not listed") || !strings.HasSuffix(txt, "0 divergences, 2 notes\n") {
			t.Errorf("text:\n%s", txt)
		}
		js := rep.AppendJSON(nil)
		for _, w := range []string{`"note_count":2,"notes_by_kind":{"coalesced_ack":0,"memory_changed":0,"msn_in_message":0,"unsolicited_ack":2},"notes_omitted":1`,
			`"note_list":[` + "\n" + `  {"kind":"unsolicited_ack","session":1,`, `"unsolicited":2,"divergences":0,"notes":2,"nothing_to_compare":false}`} {
			if !strings.Contains(string(js), w) {
				t.Errorf("JSON lacks %s:\n%s", w, js)
			}
		}
	})
}

// TestLearnedData: READ bytes and ATOMIC values the model only learned
// from earlier responses are compared as expectations: a difference is a
// memory_changed note (and the model is shown the new value), while a
// difference in written bytes is a divergence.
func TestLearnedData(t *testing.T) {
	const (
		rr  = decode.OpReadRequest
		rro = decode.OpReadResponseOnly
		fa  = decode.OpFetchAdd
		aa  = decode.OpAtomicAcknowledge
	)
	data := []byte{1, 2, 3, 4}
	all := []bool{true, true, true, true}
	soft := func(r hca.Response, learned ...bool) hca.Response { r.Learned = learned; return r }
	cases := []struct {
		name     string
		steps    []step
		divs     []wantDiv
		notes    int
		observed bool
	}{
		{"learned bytes differ", []step{toModel(req(1, 5, rr), answers(soft(readResp(rro, 5, 1, data, all), false, true, true, false))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), []byte{1, 9, 9, 4}))}, nil, 1, true},
		{"learned bytes match", []step{toModel(req(1, 5, rr), answers(soft(readResp(rro, 5, 1, data, all), false, true, true, false))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), data))}, nil, 0, false},
		{"written and learned bytes differ", []step{toModel(req(1, 5, rr), answers(soft(readResp(rro, 5, 1, data, all), false, true, true, false))),
			captured(withPayload(resp(2, 5, rro, 0x1F, 1), []byte{9, 9, 3, 4}))},
			[]wantDiv{{KindReadData, 1, 2, []string{"1 of the 4 bytes differ", "offset 0"}, 0, 1}}, 1, true},
		{"learned ATOMIC value differs", []step{toModel(req(1, 5, fa), answers(hca.Response{Opcode: aa, PSN: 5, HasAETH: true, Syndrome: 0x1F, MSN: 1,
			AtomicOrig: 7, AtomicKnown: true, AtomicLearned: true, DestQP: reqQP})), captured(withOrig(resp(2, 5, aa, 0x1F, 1), 8))}, nil, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, f := runSteps(t, Options{}, c.steps)
			checkDivs(t, rep, c.divs)
			if rep.NotesByKind[NoteMemoryChanged] != c.notes || rep.NoteCount != c.notes {
				t.Errorf("notes %v, want %d memory_changed", rep.NotesByKind, c.notes)
			}
			if (len(f.observed) == 1) != c.observed {
				t.Errorf("observed %v, want %v", f.observed, c.observed)
			}
		})
	}
}
