package hca

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// req describes one request packet for the rule tests.
type req struct {
	op      uint8 // opcode; the transport comes from the QP type
	psn     uint32
	ack     bool
	va      uint64
	rkey    uint32
	dmaLen  uint32
	payload []byte
	pad     uint8
	swap    uint64
	cmp     uint64
	inv     uint32
	qkey    uint32
	imm     uint32
	at      time.Duration // after t0
	qpn     uint32
}

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

const (
	mrVA   = 0x10000
	mrKey  = 0x1234
	roKey  = 0x2200 // REMOTE_READ only
	pd2Key = 0x3300 // in PD 2
	mwKey  = 0x08000100
)

// testConfig is the responder the rule tests start from: QP 0x11 (RC, all remote
// access, MTU 1024, expected PSN 100), QP 0x12 (RC, no REMOTE_WRITE), QP
// 0x13 (RC, max_dest_rd_atomic 0), QP 0x14 (UC), QP 0x15 (UD, Q_Key 0x11),
// QP 0x16 (RC, never connected).
func testConfig() *Config {
	remote := &Peer{QPN: 0x99}
	all := RemoteWrite | RemoteRead | RemoteAtomic
	return &Config{
		PDs: []PDConfig{{ID: 1}, {ID: 2}},
		QPs: []QPConfig{
			{QPN: 0x11, PD: 1, Type: decode.TransportRC, Access: all, MTU: 1024, ExpectedPSN: 100, HasExpectedPSN: true, Remote: remote, MinRNRTimer: 14},
			{QPN: 0x12, PD: 1, Type: decode.TransportRC, Access: RemoteRead, MTU: 1024, ExpectedPSN: 100, HasExpectedPSN: true, Remote: remote},
			{QPN: 0x13, PD: 1, Type: decode.TransportRC, Access: all, MTU: 1024, ExpectedPSN: 100, HasExpectedPSN: true, Remote: remote, HasMaxDestRdAtomic: true},
			{QPN: 0x14, PD: 1, Type: decode.TransportUC, Access: RemoteWrite, MTU: 1024, ExpectedPSN: 100, HasExpectedPSN: true, Remote: remote},
			{QPN: 0x15, PD: 1, Type: decode.TransportUD, MTU: 1024, QKey: 0x11, HasQKey: true},
			{QPN: 0x16, PD: 1, Type: decode.TransportRC, Access: all, MTU: 1024},
		},
		MRs: []MRConfig{
			{RKey: mrKey, LKey: mrKey, VA: mrVA, Length: 8192, PD: 1, Access: LocalWrite | all | MWBind},
			{RKey: roKey, LKey: roKey, VA: 0x40000, Length: 4096, PD: 1, Access: RemoteRead},
			{RKey: pd2Key, LKey: pd2Key, VA: 0x80000, Length: 4096, PD: 2, Access: LocalWrite | all},
		},
		MWs: []MWConfig{{RKey: mwKey, Type: 2, VA: mrVA, Length: 4096, PD: 1, Access: RemoteWrite | RemoteRead, MRRKey: mrKey, QPN: 0x11, HasQPN: true}},
	}
}

func newTestModel(t *testing.T, prof Profile, edit func(*Config)) *Model {
	t.Helper()
	f := testConfig()
	if edit != nil {
		edit(f)
	}
	m, err := NewModel(f, Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *Model) feed(r req) *Result {
	qpn := r.qpn
	if qpn == 0 {
		qpn = 0x11
	}
	transport := decode.TransportRC
	if qp := m.qps[qpn]; qp != nil {
		transport = qp.Type
	}
	var p decode.Packet
	p.Frame.Number = int(r.psn)
	p.Has = decode.HdrBTH
	p.BTH.Opcode = decode.Opcode(uint8(transport) | r.op)
	p.BTH.DestQP, p.BTH.PSN, p.BTH.AckReq, p.BTH.PadCount = qpn, decode.PSN(r.psn), r.ack, r.pad
	switch r.op {
	case decode.OpWriteFirst, decode.OpWriteOnly, decode.OpWriteOnlyImm, decode.OpReadRequest:
		p.Has |= decode.HdrRETH
		p.RETH.VA, p.RETH.RKey, p.RETH.DMALen = r.va, r.rkey, r.dmaLen
	case decode.OpCompareSwap, decode.OpFetchAdd:
		p.Has |= decode.HdrAtomicETH
		p.AtomicETH.VA, p.AtomicETH.RKey, p.AtomicETH.SwapAddData, p.AtomicETH.CompareData = r.va, r.rkey, r.swap, r.cmp
	case decode.OpSendLastInv, decode.OpSendOnlyInv:
		p.Has |= decode.HdrIETH
		p.IETH.RKey = r.inv
	}
	switch r.op {
	case decode.OpSendLastImm, decode.OpSendOnlyImm, decode.OpWriteLastImm, decode.OpWriteOnlyImm:
		p.Has |= decode.HdrImmDt
		p.ImmDt.Data = r.imm
	}
	if transport == 0x60 {
		p.Has |= decode.HdrDETH
		p.DETH.QKey, p.DETH.SrcQP = r.qkey, 0x77
	}
	p.Payload = r.payload
	return m.Receive(&p, t0.Add(r.at))
}

func bytesN(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// resp is the expected response, written compactly.
type resp struct {
	op  uint8
	psn uint32
	syn uint8
	msn uint32
}

func TestResponderRules(t *testing.T) {
	ack := func(psn, msn uint32) resp { return resp{decode.OpAcknowledge, psn, 0x1f, msn} }
	nak := func(psn uint32, syn uint8, msn uint32) resp { return resp{decode.OpAcknowledge, psn, syn, msn} }
	w := func(psn uint32, va uint64, key uint32, n int, a bool) req {
		return req{op: decode.OpWriteOnly, psn: psn, ack: a, va: va, rkey: key, dmaLen: uint32(n), payload: bytesN(n, 0xab), pad: uint8(-n & 3)}
	}
	send := func(psn uint32, n int) req {
		return req{op: decode.OpSendOnly, psn: psn, ack: true, payload: bytesN(n, 1), pad: uint8(-n & 3)}
	}
	tests := []struct {
		name  string
		prof  Profile
		edit  func(*Config)
		reqs  []req
		want  [][]resp // per request
		drops map[int]Drop
		state QPState // final state of QP 0x11 (or of reqs[0].qpn)
	}{
		{name: "ACK only when AckReq is set; MSN counts messages",
			reqs: []req{w(100, mrVA, mrKey, 8, false), w(101, mrVA, mrKey, 8, true)},
			want: [][]resp{nil, {ack(101, 2)}}, state: QPRTS},
		{name: "PSN ahead: one PSN sequence NAK with the expected PSN, then silence until it arrives",
			reqs: []req{w(103, mrVA, mrKey, 8, true), w(104, mrVA, mrKey, 8, true), w(100, mrVA, mrKey, 8, true)},
			want: [][]resp{{nak(100, 0x60, 0)}, nil, {ack(100, 1)}}, drops: map[int]Drop{1: DropPSNOutOfOrder}, state: QPRTS},
		{name: "duplicate WRITE is acknowledged again, not executed",
			reqs: []req{w(100, mrVA, mrKey, 8, true), w(101, mrVA, mrKey, 8, true), w(100, mrVA, mrKey, 8, true)},
			want: [][]resp{{ack(100, 1)}, {ack(101, 2)}, {ack(101, 2)}}, state: QPRTS},
		{name: "MIDDLE without FIRST: NAK invalid request, QP to error, then silence",
			reqs: []req{{op: decode.OpWriteMiddle, psn: 100, ack: true, payload: bytesN(1024, 0)}, w(101, mrVA, mrKey, 8, true)},
			want: [][]resp{{nak(100, 0x61, 0)}, nil}, drops: map[int]Drop{1: DropQPError}, state: QPError},
		{name: "FIRST while a message is in progress: NAK invalid request",
			reqs: []req{{op: decode.OpWriteFirst, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 3000, payload: bytesN(1024, 0)},
				{op: decode.OpSendOnly, psn: 101, ack: true}},
			want: [][]resp{nil, {nak(101, 0x61, 0)}}, state: QPError},
		{name: "QP without REMOTE_WRITE, spec: remote access error",
			reqs: []req{{op: decode.OpWriteOnly, qpn: 0x12, psn: 100, ack: true, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 0)}},
			want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "QP without REMOTE_WRITE, rxe: invalid request", prof: ProfileRXE,
			reqs: []req{{op: decode.OpWriteOnly, qpn: 0x12, psn: 100, ack: true, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 0)}},
			want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "READ with max_dest_rd_atomic 0: invalid request",
			reqs: []req{{op: decode.OpReadRequest, qpn: 0x13, psn: 100, ack: true, va: mrVA, rkey: mrKey, dmaLen: 8}},
			want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "SEND with no receive: RNR NAK with the QP's timer, same PSN; ACK once posted",
			edit: func(f *Config) {
				f.QPs[0].HasRecv = true
				f.QPs[0].Recv = []RecvWQE{{Length: 4096, PostedAt: t0.Add(30 * time.Millisecond), HasPostedAt: true}}
			},
			reqs: []req{send(100, 64), {op: decode.OpSendOnly, psn: 100, ack: true, payload: bytesN(64, 1), at: 10 * time.Millisecond},
				{op: decode.OpSendOnly, psn: 100, ack: true, payload: bytesN(64, 1), at: 40 * time.Millisecond}},
			want: [][]resp{{nak(100, 0x2e, 0)}, {nak(100, 0x2e, 0)}, {ack(100, 1)}}, state: QPRTS},
		{name: "ONLY longer than the MTU: invalid request",
			reqs: []req{send(100, 1025)}, want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "FIRST shorter than the MTU: invalid request",
			reqs: []req{{op: decode.OpSendFirst, psn: 100, payload: bytesN(1000, 0)}}, want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "LAST with no payload: invalid request",
			reqs: []req{{op: decode.OpSendFirst, psn: 100, payload: bytesN(1024, 0)}, {op: decode.OpSendLast, psn: 101, ack: true}},
			want: [][]resp{nil, {nak(101, 0x61, 0)}}, state: QPError},
		{name: "WRITE payload that disagrees with the DMA length: invalid request",
			reqs: []req{{op: decode.OpWriteOnly, psn: 100, ack: true, va: mrVA, rkey: mrKey, dmaLen: 16, payload: bytesN(8, 0)}},
			want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "unknown rkey: remote access error",
			reqs: []req{w(100, mrVA, 0xdead00, 8, true)}, want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "MR of another PD: remote access error",
			reqs: []req{w(100, 0x80000, pd2Key, 8, true)}, want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "MR without REMOTE_WRITE: remote access error",
			reqs: []req{w(100, 0x40000, roKey, 8, true)}, want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "one byte past the MR: remote access error",
			reqs: []req{w(100, mrVA+8192-7, mrKey, 8, true)}, want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "last byte of the MR: ACK",
			reqs: []req{w(100, mrVA+8192-8, mrKey, 8, true)}, want: [][]resp{{ack(100, 1)}}, state: QPRTS},
		{name: "zero-length WRITE and READ skip the rkey check",
			reqs: []req{w(100, 0, 0xbad, 0, true), {op: decode.OpReadRequest, psn: 101, va: 0, rkey: 0xbad}},
			want: [][]resp{{ack(100, 1)}, {{decode.OpReadResponseOnly, 101, 0x1f, 2}}}, state: QPRTS},
		{name: "misaligned atomic: invalid request",
			reqs: []req{{op: decode.OpFetchAdd, psn: 100, va: mrVA + 4, rkey: mrKey, swap: 1}}, want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "atomic past the MR: remote access error",
			reqs: []req{{op: decode.OpFetchAdd, psn: 100, va: mrVA + 8192, rkey: mrKey, swap: 1}}, want: [][]resp{{nak(100, 0x62, 0)}}, state: QPError},
		{name: "READ of 3000 bytes at MTU 1024: FIRST, MIDDLE, LAST on consecutive PSNs, AETH on FIRST and LAST",
			reqs: []req{{op: decode.OpReadRequest, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 3000}, send(103, 4)},
			want: [][]resp{{{decode.OpReadResponseFirst, 100, 0x1f, 1}, {decode.OpReadResponseMiddle, 101, 0, 1}, {decode.OpReadResponseLast, 102, 0x1f, 1}},
				{ack(103, 2)}}, state: QPRTS},
		{name: "SEND longer than the receive buffer, spec: invalid request",
			edit: func(f *Config) { f.QPs[0].HasRecv, f.QPs[0].Recv = true, []RecvWQE{{Length: 512}} },
			reqs: []req{{op: decode.OpSendFirst, psn: 100, payload: bytesN(1024, 0)}}, want: [][]resp{{nak(100, 0x61, 0)}}, state: QPError},
		{name: "SEND longer than the receive buffer, rxe: remote operational error", prof: ProfileRXE,
			edit: func(f *Config) { f.QPs[0].HasRecv, f.QPs[0].Recv = true, []RecvWQE{{Length: 512}} },
			reqs: []req{{op: decode.OpSendFirst, psn: 100, payload: bytesN(1024, 0)}}, want: [][]resp{{nak(100, 0x63, 0)}}, state: QPError},
		{name: "SEND with Invalidate kills the window: the next WRITE through it is a remote access error",
			reqs: []req{w(100, mrVA, mwKey, 8, true), {op: decode.OpSendOnlyInv, psn: 101, ack: true, inv: mwKey}, w(102, mrVA, mwKey, 8, true)},
			want: [][]resp{{ack(100, 1)}, {ack(101, 2)}, {nak(102, 0x62, 2)}}, state: QPError},
		{name: "PSN wraps from 0xFFFFFF to 0",
			edit: func(f *Config) { f.QPs[0].ExpectedPSN = 0xFFFFFF },
			reqs: []req{w(0xFFFFFF, mrVA, mrKey, 8, true), w(0, mrVA, mrKey, 8, true), w(0xFFFFFF, mrVA, mrKey, 8, true)},
			want: [][]resp{{ack(0xFFFFFF, 1)}, {ack(0, 2)}, {ack(0, 2)}}, state: QPRTS},
		{name: "a QP that never connected drops everything",
			reqs: []req{{op: decode.OpSendOnly, qpn: 0x16, psn: 5, ack: true}}, want: [][]resp{nil}, drops: map[int]Drop{0: DropQPState}, state: QPInit},
		{name: "UC: no responses; a gap drops the message until the next FIRST",
			reqs: []req{{op: decode.OpSendFirst, qpn: 0x14, psn: 100, payload: bytesN(1024, 0)}, {op: decode.OpSendLast, qpn: 0x14, psn: 102, payload: bytesN(4, 0)},
				{op: decode.OpSendOnly, qpn: 0x14, psn: 103, payload: bytesN(4, 0)}},
			want: [][]resp{nil, nil, nil}, drops: map[int]Drop{1: DropUCGap}, state: QPRTS},
		{name: "UD: Q_Key mismatch is dropped silently",
			reqs: []req{{op: decode.OpSendOnly, qpn: 0x15, psn: 7, qkey: 0x12}, {op: decode.OpSendOnly, qpn: 0x15, psn: 8, qkey: 0x11}},
			want: [][]resp{nil, nil}, drops: map[int]Drop{0: DropQKey}, state: QPRTS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel(t, tc.prof, tc.edit)
			for i, r := range tc.reqs {
				res := m.feed(r)
				var got []resp
				for _, x := range res.Responses {
					got = append(got, resp{x.Opcode.Op(), uint32(x.PSN), x.Syndrome, x.MSN})
				}
				if !equalResp(got, tc.want[i]) {
					t.Errorf("request %d (%s PSN %d): responses %v, want %v (why %q)", i, decode.Opcode(r.op), r.psn, got, tc.want[i], why(res))
				}
				if d := tc.drops[i]; res.Drop != d {
					t.Errorf("request %d: drop %q, want %q", i, res.Drop, d)
				}
			}
			qpn := tc.reqs[0].qpn
			if qpn == 0 {
				qpn = 0x11
			}
			if st := m.QP(qpn).State; st != tc.state {
				t.Errorf("QP state %s, want %s", st, tc.state)
			}
		})
	}
}

func why(r *Result) string {
	var s []string
	for _, x := range r.Responses {
		s = append(s, x.Why)
	}
	return strings.Join(s, "; ")
}

func equalResp(a, b []resp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestResponderData(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	data := make([]byte, 1500)
	for i := range data {
		data[i] = byte(i * 7)
	}
	// WRITE FIRST + LAST of 1500 bytes at offset 100, no AckReq on FIRST.
	if r := m.feed(req{op: decode.OpWriteFirst, psn: 100, va: mrVA + 100, rkey: mrKey, dmaLen: 1500, payload: data[:1024]}); len(r.Responses) != 0 {
		t.Fatalf("WRITE FIRST without AckReq answered %v", r.Responses)
	}
	m.feed(req{op: decode.OpWriteLast, psn: 101, ack: true, payload: data[1024:], pad: uint8(-476 & 3)})
	// READ the 1600 bytes from offset 0: the first 100 are unknown.
	r := m.feed(req{op: decode.OpReadRequest, psn: 102, va: mrVA, rkey: mrKey, dmaLen: 1600})
	if len(r.Responses) != 2 {
		t.Fatalf("READ of 1600 bytes: %d responses, want 2", len(r.Responses))
	}
	var got []byte
	var known []bool
	for _, x := range r.Responses {
		got = append(got, x.Payload...)
		known = append(known, x.Known...)
	}
	if len(got) != 1600 {
		t.Fatalf("READ returned %d bytes", len(got))
	}
	for i := range 100 {
		if known[i] {
			t.Fatalf("byte %d never written but known", i)
		}
	}
	if !bytes.Equal(got[100:], data) {
		t.Fatal("READ does not return the WRITE's bytes")
	}
	for i := 100; i < 1600; i++ {
		if !known[i] {
			t.Fatalf("byte %d written but unknown", i)
		}
	}
	// A duplicate WRITE with other bytes is not executed.
	m.feed(req{op: decode.OpWriteOnly, psn: 100, ack: true, va: mrVA + 100, rkey: mrKey, dmaLen: 4, payload: []byte{9, 9, 9, 9}})
	// A duplicate READ re-executes and returns the same bytes.
	r = m.feed(req{op: decode.OpReadRequest, psn: 102, va: mrVA, rkey: mrKey, dmaLen: 1600})
	if len(r.Responses) != 2 || !r.Responses[0].Duplicate || !bytes.Equal(r.Responses[0].Payload[100:], data[:924]) {
		t.Fatalf("duplicate READ: %+v", r.Responses)
	}

	// ATOMICs on the now-known bytes at offset 104 (8-byte aligned).
	va := uint64(mrVA + 104)
	cur := uint64(0)
	for i := range 8 {
		cur |= uint64(data[4+i]) << (8 * i) // little-endian host memory
	}
	r = m.feed(req{op: decode.OpFetchAdd, psn: 104, va: va, rkey: mrKey, swap: 5})
	if x := r.Responses[0]; x.Opcode.Op() != decode.OpAtomicAcknowledge || !x.AtomicKnown || x.AtomicOrig != cur {
		t.Fatalf("FETCH_ADD: %+v, want original %#x", x, cur)
	}
	r = m.feed(req{op: decode.OpCompareSwap, psn: 105, va: va, rkey: mrKey, cmp: cur + 5, swap: 42})
	if x := r.Responses[0]; x.AtomicOrig != cur+5 {
		t.Fatalf("CMP_SWAP hit: original %#x, want %#x", x.AtomicOrig, cur+5)
	}
	r = m.feed(req{op: decode.OpCompareSwap, psn: 106, va: va, rkey: mrKey, cmp: 1, swap: 7})
	if x := r.Responses[0]; x.AtomicOrig != 42 {
		t.Fatalf("CMP_SWAP miss: original %#x, want 42", x.AtomicOrig)
	}
	// A duplicate ATOMIC replays the saved result without executing again.
	r = m.feed(req{op: decode.OpFetchAdd, psn: 104, va: va, rkey: mrKey, swap: 5})
	if x := r.Responses[0]; !x.Duplicate || x.AtomicOrig != cur {
		t.Fatalf("duplicate FETCH_ADD: %+v, want replay of %#x", x, cur)
	}
	r = m.feed(req{op: decode.OpFetchAdd, psn: 107, va: va, rkey: mrKey, swap: 0})
	if x := r.Responses[0]; x.AtomicOrig != 42 {
		t.Fatalf("after the duplicate: %#x, want 42 (the duplicate must not add again)", x.AtomicOrig)
	}
	// An atomic on never-written memory has an unknown original value.
	r = m.feed(req{op: decode.OpFetchAdd, psn: 108, va: mrVA + 4096, rkey: mrKey, swap: 1})
	if r.Responses[0].AtomicKnown {
		t.Fatal("atomic on unknown memory reports a known original value")
	}
}

func TestResponderCompletions(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	r := m.feed(req{op: decode.OpSendOnlyImm, psn: 100, ack: true, payload: bytesN(10, 0), pad: 2, imm: 0xfeed})
	var recv, reqc *Completion
	for i := range r.Completions {
		if r.Completions[i].Requester {
			reqc = &r.Completions[i]
		} else {
			recv = &r.Completions[i]
		}
	}
	if recv == nil || recv.Status != WCSuccess || recv.ByteLen != 10 || !recv.HasImm || recv.Imm != 0xfeed {
		t.Fatalf("receive completion %+v", recv)
	}
	if reqc == nil || reqc.Status != WCSuccess || reqc.QPN != 0x99 || reqc.PSN != 100 {
		t.Fatalf("requester completion %+v", reqc)
	}
	// A NAKed WRITE completes with REM_ACCESS_ERR; nothing is left pending.
	r = m.feed(req{op: decode.OpWriteOnly, psn: 101, ack: true, va: 0, rkey: 0x77, dmaLen: 4, payload: bytesN(4, 0)})
	if len(r.Completions) != 1 || r.Completions[0].Status != WCRemAccessErr {
		t.Fatalf("NAKed WRITE: %+v", r.Completions)
	}
	if f := m.Finish(); len(f) != 0 {
		t.Fatalf("Finish after everything completed: %+v", f)
	}
	// RNR NAKs until the capture ends: RNR retry exceeded. No answer at
	// all: transport retry exceeded.
	m = newTestModel(t, ProfileIBTA, func(f *Config) { f.QPs[0].HasRecv = true })
	m.feed(req{op: decode.OpSendOnly, psn: 100, ack: true})
	m.feed(req{op: decode.OpWriteOnly, psn: 105, ack: true, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 0)})
	f := m.Finish()
	if len(f) != 2 || f[0].Status != WCRNRRetryExcErr || f[1].Status != WCRetryExcErr {
		t.Fatalf("Finish: %+v", f)
	}
}

func TestTranslationCacheCounts(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, func(f *Config) { f.MRs[0].Length = 64 << 10 })
	m.cache, _ = NewTranslationCache(4)
	// 16 pages, touched twice in order: a 4-entry LRU misses every time.
	for pass := range 2 {
		for pg := range 16 {
			m.feed(req{op: decode.OpWriteOnly, psn: uint32(100 + pass*16 + pg), va: mrVA + uint64(pg)*4096, rkey: mrKey, dmaLen: 8, payload: bytesN(8, 0)})
		}
	}
	if s := m.Cache().MR(mrKey); s.Hits != 0 || s.Misses != 32 {
		t.Fatalf("scattered pattern: %+v, want 0 hits 32 misses", s)
	}
	// One page touched again and again: hits.
	for i := range 10 {
		m.feed(req{op: decode.OpWriteOnly, psn: uint32(132 + i), va: mrVA, rkey: mrKey, dmaLen: 8, payload: bytesN(8, 0)})
	}
	if s := m.Cache().QP(0x11); s.Hits != 9 || s.Misses != 33 {
		t.Fatalf("per QP: %+v, want 9 hits 33 misses", s)
	}
}

func TestObserveLearnsUnknownMemory(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	va := uint64(mrVA + 64)
	r := m.feed(req{op: decode.OpFetchAdd, psn: 100, va: va, rkey: mrKey, swap: 3})
	if r.Responses[0].AtomicKnown {
		t.Fatal("FETCH_ADD on unknown memory: original value known")
	}
	var p decode.Packet
	p.Has = decode.HdrBTH | decode.HdrAETH | decode.HdrAtomicAckETH
	p.BTH = decode.BTH{Opcode: decode.OpAtomicAcknowledge, DestQP: 0x99, PSN: 100}
	p.AtomicAckETH.OrigRemData = 10
	m.Observe(&p)
	r = m.feed(req{op: decode.OpFetchAdd, psn: 101, va: va, rkey: mrKey, swap: 1})
	if x := r.Responses[0]; !x.AtomicKnown || x.AtomicOrig != 13 {
		t.Fatalf("after observing original 10 and adding 3: %+v, want 13", x)
	}

	// READ of unknown bytes, observed: the next READ knows them; bytes
	// the model knew are not overwritten.
	m.feed(req{op: decode.OpWriteOnly, psn: 102, va: mrVA + 1000, rkey: mrKey, dmaLen: 4, payload: []byte{1, 2, 3, 4}})
	m.feed(req{op: decode.OpReadRequest, psn: 103, va: mrVA + 996, rkey: mrKey, dmaLen: 12})
	p = decode.Packet{}
	p.Has = decode.HdrBTH | decode.HdrAETH
	p.BTH = decode.BTH{Opcode: decode.OpReadResponseOnly, DestQP: 0x99, PSN: 103}
	p.Payload = []byte{9, 9, 9, 9, 7, 7, 7, 7, 8, 8, 8, 8}
	m.Observe(&p)
	r = m.feed(req{op: decode.OpReadRequest, psn: 104, va: mrVA + 996, rkey: mrKey, dmaLen: 12})
	x := r.Responses[0]
	want := []byte{9, 9, 9, 9, 1, 2, 3, 4, 8, 8, 8, 8}
	if !bytes.Equal(x.Payload, want) {
		t.Fatalf("READ after Observe: % x, want % x", x.Payload, want)
	}
	for i, k := range x.Known {
		if !k {
			t.Fatalf("byte %d still unknown", i)
		}
	}
}

// TestAckPoints: every RC SEND or WRITE packet the responder executes
// says what an ACK of it would carry, asked for or not (a responder may
// acknowledge any packet it executed); READs, ATOMICs, UC, duplicates and
// rejected packets have none. An ACK the model sends for a FIRST or
// MIDDLE is marked InMessage.
func TestAckPoints(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	type want struct {
		ack       AckPoint
		responses int
		inMessage bool
	}
	steps := []struct {
		r    req
		want want
	}{
		{req{op: decode.OpSendFirst, psn: 100, payload: bytesN(1024, 1)}, want{AckPoint{Valid: true, PSN: 100, MSN: 0}, 0, false}},
		{req{op: decode.OpSendMiddle, psn: 101, ack: true, payload: bytesN(1024, 1)}, want{AckPoint{Valid: true, PSN: 101, MSN: 0}, 1, true}},
		{req{op: decode.OpSendLast, psn: 102, payload: bytesN(4, 1)}, want{AckPoint{Valid: true, MsgDone: true, PSN: 102, MSN: 1}, 0, false}},
		{req{op: decode.OpWriteOnly, psn: 103, ack: true, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 1)}, want{AckPoint{Valid: true, MsgDone: true, PSN: 103, MSN: 2}, 1, false}},
		{req{op: decode.OpReadRequest, psn: 104, ack: true, va: mrVA, rkey: mrKey, dmaLen: 4}, want{AckPoint{}, 1, false}},
		{req{op: decode.OpFetchAdd, psn: 105, ack: true, va: mrVA, rkey: mrKey, swap: 1}, want{AckPoint{}, 1, false}},
		{req{op: decode.OpSendOnly, psn: 102, ack: true, payload: bytesN(4, 1)}, want{AckPoint{}, 1, false}},                                    // a duplicate: answered again, not executed
		{req{op: decode.OpWriteOnly, qpn: 0x14, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 1)}, want{AckPoint{}, 0, false}}, // UC
		{req{op: decode.OpSendOnly, psn: 109, ack: true, payload: bytesN(4, 1)}, want{AckPoint{}, 1, false}},                                    // PSN ahead: NAKed
	}
	for i, s := range steps {
		r := m.feed(s.r)
		if r.Ack != s.want.ack || len(r.Responses) != s.want.responses {
			t.Errorf("step %d (%s PSN %d): Ack %+v, %d responses; want %+v, %d", i, decode.Opcode(s.r.op), s.r.psn, r.Ack, len(r.Responses), s.want.ack, s.want.responses)
			continue
		}
		if len(r.Responses) == 1 && r.Responses[0].InMessage != s.want.inMessage {
			t.Errorf("step %d: InMessage %v", i, r.Responses[0].InMessage)
		}
	}
}
