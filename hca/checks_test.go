package hca

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// outcomeCheck names the function that finds each outcome, in the order
// Receive runs them.
var outcomeCheck = [numOutcomes]string{
	outQPNotReady: "checkQPState", outQPError: "checkQPState",
	outPSNAhead: "checkPSN", outPSNBehind: "checkPSN",
	outSeqNoFirst: "checkOpSeq", outSeqInterrupted: "checkOpSeq",
	outQPAccess: "checkOpValid", outQKey: "checkOpValid",
	outNoRdAtomic: "checkResources", outNoReceive: "checkResources",
	outLength: "checkLength",
	outRKey:   "checkRKey", outMisaligned: "checkRKey", outWriteLength: "checkRKey",
	outRecvTooShort: "executeSend", outInvalidate: "executeSend",
}

// describe says what a transport does, as docs/model.md's table says it.
func (f fate) describe() string {
	nak := func(code uint8) string {
		return fmt.Sprintf("%s (%#02x)", decode.SyndromeString(nakSyn(code)), nakSyn(code))
	}
	switch f.do {
	case doNAK:
		s := nak(f.code)
		if f.recv != 0 {
			s += ", receive " + f.recv.Name()
		}
		if f.rxeCode != f.code || f.rxeRecv != f.recv {
			s += "; rxe: " + nak(f.rxeCode)
			if f.rxeRecv != 0 {
				s += ", receive " + f.rxeRecv.Name()
			}
		}
		return s
	case doRNRNAK:
		return "RNR NAK (min_rnr_timer), PSN = the request's"
	case doPSNNAK:
		return nak(decode.NakPSNSequenceError) + " with the expected PSN, once; then drop: " + DropPSNOutOfOrder.String()
	case doDuplicate:
		return "duplicate: ACK, READ responses or ATOMIC ACK again; nothing to replay: drop: " + DropDuplicate.String()
	case doDrop:
		return "drop: " + f.drop.String()
	case doLoseMsg:
		return "the message in progress is lost; FIRST/ONLY: go on, else drop: " + DropUCGap.String()
	case doUnanswered:
		return "drop: " + f.drop.String() + "; the requester retries (RETRY_EXC_ERR at the end)"
	case doACKError:
		return "ACK, receive " + WCRemInvReqErr.Name() + ", QP to the error state"
	}
	return "—"
}

// outcomeTable is the table of docs/model.md.
func outcomeTable() string {
	var b strings.Builder
	b.WriteString("| check | outcome | RC, XRC | UC | UD |\n|---|---|---|---|---|\n")
	for o := outQPNotReady; o < numOutcomes; o++ {
		f := &fates[o]
		b.WriteString("| `" + outcomeCheck[o] + "` | `" + o.String() + "` | " + f.rc.describe() + " | " + f.uc.describe() + " | " + f.ud.describe() + " |\n")
	}
	return b.String()
}

// TestDocsOutcomeTable keeps docs/model.md one-to-one with the code: its
// checklist names the check functions in the order Receive runs them,
// and its outcome table is the fates table.
func TestDocsOutcomeTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/model.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := outcomeTable(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/model.md does not hold the outcome table of hca/checks.go; it should read:\n%s", want)
	}
	// The checklist: every check in Receive's order.
	order := []string{"checkQPState", "checkPSN", "checkOpSeq", "checkOpValid", "checkResources", "checkLength", "checkRKey", "execute"}
	src, err := os.ReadFile("responder.go")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src[strings.Index(string(src), "func (m *Model) Receive("):])
	for _, name := range order {
		i := strings.Index(code, "m."+name+"(qp, rq)")
		if i < 0 {
			t.Fatalf("Receive does not call %s after the checks before it", name)
		}
		code = code[i:]
	}
	rest := string(doc)
	for i, name := range order {
		j := strings.Index(rest, fmt.Sprintf("%d. **`%s", i+1, name))
		if j < 0 {
			t.Errorf("docs/model.md's checklist has no item %d naming `%s` after the previous one", i+1, name)
			continue
		}
		rest = rest[j:]
	}
}

// TestOutcomeFates checks that every outcome a check can return on a
// transport has a fate there, and that no transport has a fate for an
// outcome its checks never return.
func TestOutcomeFates(t *testing.T) {
	reachable := map[decode.Transport][]outcome{
		decode.TransportRC: {outQPNotReady, outQPError, outPSNAhead, outPSNBehind, outSeqNoFirst, outSeqInterrupted,
			outQPAccess, outNoRdAtomic, outNoReceive, outLength, outRKey, outMisaligned, outWriteLength, outRecvTooShort, outInvalidate},
		decode.TransportUC: {outQPNotReady, outQPError, outPSNAhead, outPSNBehind, outSeqNoFirst, outSeqInterrupted,
			outQPAccess, outNoReceive, outLength, outRKey, outWriteLength, outRecvTooShort},
		decode.TransportUD: {outQPNotReady, outQPError, outQKey, outNoReceive, outLength},
	}
	for _, typ := range []decode.Transport{decode.TransportRC, decode.TransportXRC, decode.TransportUC, decode.TransportUD} {
		qp := &QP{Type: typ}
		want := reachable[typ]
		if typ == decode.TransportXRC {
			want = reachable[decode.TransportRC]
		}
		for o := outQPNotReady; o < numOutcomes; o++ {
			has := fateOf(qp, o).do != doNone
			if r := contains(want, o); r != has {
				t.Errorf("%s: outcome %s reachable %v, has a fate %v", typ, o, r, has)
			}
		}
	}
}

func contains(list []outcome, o outcome) bool {
	for _, x := range list {
		if x == o {
			return true
		}
	}
	return false
}

// TestUCAndUDRules covers the UC and UD columns of the outcome table:
// silent drops, and the message in progress lost.
func TestUCAndUDRules(t *testing.T) {
	const uc, ud = 0x14, 0x15
	type step struct {
		r    req
		drop Drop
		exec bool
	}
	w := func(op uint8, psn uint32, n int) req {
		return req{op: op, qpn: uc, psn: psn, va: mrVA, rkey: mrKey, dmaLen: 2048, payload: bytesN(n, 0x5a), pad: uint8(-n & 3)}
	}
	tests := []struct {
		name  string
		edit  func(*Config)
		steps []step
		check Verdict // Result.Check of the last step, when not VerdictNone
		why   string  // in the first step's Result.Why, when not ""
	}{
		{name: "a FIRST shorter than the MTU is dropped, and the rest of its message",
			steps: []step{{w(decode.OpWriteFirst, 100, 1000), DropLength, false},
				{w(decode.OpWriteLast, 101, 1024), DropUCGap, false},
				{w(decode.OpWriteFirst, 102, 1024), DropNone, true}}},
		{name: "a WRITE payload past its DMA length is dropped",
			steps: []step{{req{op: decode.OpWriteOnly, qpn: uc, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 8, payload: bytesN(12, 0)}, DropLength, false}}},
		{name: "a MIDDLE of another operation ends the message in progress",
			steps: []step{{req{op: decode.OpSendFirst, qpn: uc, psn: 100, payload: bytesN(1024, 0)}, DropNone, true},
				{w(decode.OpWriteMiddle, 101, 1024), DropUCGap, false},
				{req{op: decode.OpSendLast, qpn: uc, psn: 102, payload: bytesN(4, 0)}, DropUCGap, false}}},
		{name: "a FIRST while a message is in progress starts a new one",
			steps: []step{{req{op: decode.OpSendFirst, qpn: uc, psn: 100, payload: bytesN(1024, 0)}, DropNone, true},
				{req{op: decode.OpSendOnly, qpn: uc, psn: 101, payload: bytesN(4, 0)}, DropNone, true}}},
		{name: "a WRITE with immediate and no receive posted is dropped before it writes",
			edit:  func(c *Config) { c.QPs[3].HasRecv = true },
			steps: []step{{req{op: decode.OpWriteOnlyImm, qpn: uc, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 4, payload: bytesN(4, 0)}, DropNoReceive, false}}},
		{name: "a QP without REMOTE_WRITE drops the WRITE and says why",
			edit:  func(c *Config) { c.QPs[3].Access = 0 },
			steps: []step{{w(decode.OpWriteOnly, 100, 8), DropQPAccess, false}}, check: VerdictQPAccess,
			why: "QP 0x000014 lacks REMOTE_WRITE"},
		{name: "a bad rkey drops the message and says why",
			steps: []step{{req{op: decode.OpWriteFirst, qpn: uc, psn: 100, va: mrVA, rkey: 0xbad00, dmaLen: 2048, payload: bytesN(1024, 0)}, DropRKey, false},
				{w(decode.OpWriteLast, 101, 1024), DropUCGap, false}},
			why: "rkey 0x000bad00: no MR or MW has rkey 0x000bad00"},
		{name: "a WRITE out of bounds drops the message and says by how much",
			steps: []step{{req{op: decode.OpWriteOnly, qpn: uc, psn: 100, va: mrVA + 8192 - 4, rkey: mrKey, dmaLen: 8, payload: bytesN(8, 0)}, DropRKey, false}},
			check: VerdictOutOfBounds, why: "out of bounds by 4 bytes"},
		{name: "a WRITE into another PD's MR drops the message and says so",
			steps: []step{{req{op: decode.OpWriteOnly, qpn: uc, psn: 100, va: 0x80000, rkey: pd2Key, dmaLen: 8, payload: bytesN(8, 0)}, DropRKey, false}},
			check: VerdictPDMismatch, why: "another protection domain"},
		{name: "a PSN gap names the PSNs; the FIRST after it goes on without a reason",
			steps: []step{{w(decode.OpWriteMiddle, 105, 1024), DropUCGap, false},
				{w(decode.OpWriteFirst, 106, 1024), DropNone, true}},
			why: "is ahead of the expected PSN"},
		{name: "UD: a SEND with no receive posted is dropped",
			edit:  func(c *Config) { c.QPs[4].HasRecv = true },
			steps: []step{{req{op: decode.OpSendOnly, qpn: ud, psn: 1, qkey: 0x11, payload: bytesN(4, 0)}, DropNoReceive, false}}},
		{name: "UD: a SEND longer than the MTU is dropped",
			steps: []step{{req{op: decode.OpSendOnly, qpn: ud, psn: 1, qkey: 0x11, payload: bytesN(1025, 0)}, DropLength, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel(t, ProfileIBTA, tc.edit)
			var res *Result
			for i, s := range tc.steps {
				res = m.feed(s.r)
				if res.Drop != s.drop || res.Executed != s.exec || len(res.Responses) != 0 {
					t.Errorf("step %d (%s): drop %q executed %v responses %d, want drop %q executed %v and no response",
						i, decode.Opcode(s.r.op), res.Drop, res.Executed, len(res.Responses), s.drop, s.exec)
				}
				switch {
				case i == 0 && !strings.Contains(res.Why, tc.why):
					t.Errorf("step 0: Why %q, want it to say %q", res.Why, tc.why)
				case s.drop == DropNone && res.Why != "":
					t.Errorf("step %d: executed, yet Why %q", i, res.Why)
				}
			}
			if res.Check.Verdict != tc.check && tc.check != VerdictNone {
				t.Errorf("Check %s, want %s", res.Check.Verdict, tc.check)
			}
		})
	}
	// Nothing a dropped UC WRITE carried reached memory.
	m := newTestModel(t, ProfileIBTA, func(c *Config) { c.QPs[3].HasRecv = true })
	m.feed(req{op: decode.OpWriteOnlyImm, qpn: uc, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 4, payload: []byte{1, 2, 3, 4}})
	r := m.feed(req{op: decode.OpReadRequest, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 4})
	for i, k := range r.Responses[0].Known {
		if k {
			t.Fatalf("byte %d of a dropped UC WRITE with immediate was stored", i)
		}
	}
}

// TestXRCCompletions: the requester's side knows an XRC READ for a READ
// (decode's opcode table says what an opcode is on every transport): a
// MIDDLE right after it does not extend it, and at the end it is the READ
// that ran out of retries.
func TestXRCCompletions(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, func(c *Config) {
		c.QPs = append(c.QPs, QPConfig{QPN: 0x17, PD: 1, Type: decode.TransportXRC, Access: RemoteRead, MTU: 1024,
			ExpectedPSN: 10, HasExpectedPSN: true, Remote: &Peer{QPN: 0x98}})
	})
	xrc := func(op uint8, psn uint32) *decode.Packet {
		p := &decode.Packet{}
		p.Frame.Number = int(psn)
		p.Has = decode.HdrBTH | decode.HdrXRCETH
		p.BTH = decode.BTH{Opcode: decode.TransportXRC.Opcode(op), DestQP: 0x17, PSN: decode.PSN(psn), AckReq: true}
		if op == decode.OpReadRequest {
			p.Has |= decode.HdrRETH
			p.RETH = decode.RETH{VA: mrVA, RKey: mrKey, DMALen: 2048}
		}
		return p
	}
	// A READ of 2 PSNs ahead of the expected PSN (NAKed, never
	// executed), then a SEND MIDDLE on the PSN after it.
	if r := m.Receive(xrc(decode.OpReadRequest, 12), t0); len(r.Responses) != 1 || r.Responses[0].Syndrome != 0x60 {
		t.Fatalf("XRC READ ahead: %+v", r.Responses)
	}
	m.Receive(xrc(decode.OpSendMiddle, 14), t0.Add(time.Millisecond))
	f := m.Finish()
	if len(f) != 1 || !f[0].Opcode.Is(decode.PropRead) || f[0].PSN != 12 || f[0].Status != WCRetryExcErr {
		t.Fatalf("Finish: %+v, want the READ at PSN 12 to run out of retries", f)
	}
}

// TestFaultIsCounted: an MR deregistered while a multi-packet WRITE into
// it is in flight makes the MTT refuse the rest of the WRITE; the model
// still answers as the checks decided, and counts and reports the fault.
func TestFaultIsCounted(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	if r := m.feed(req{op: decode.OpWriteFirst, psn: 100, va: mrVA, rkey: mrKey, dmaLen: 2048, payload: bytesN(1024, 1)}); r.Fault != nil {
		t.Fatalf("WRITE FIRST: fault %v", r.Fault)
	}
	if n, _ := m.Faults(); n != 0 {
		t.Fatalf("%d faults before anything went wrong", n)
	}
	if !m.DeregisterMR(mrKey) {
		t.Fatal("DeregisterMR failed")
	}
	r := m.feed(req{op: decode.OpWriteLast, psn: 101, ack: true, payload: bytesN(1024, 2)})
	if r.Fault == nil || len(r.Responses) != 1 || r.Responses[0].Syndrome != synACK {
		t.Fatalf("WRITE LAST into a deregistered MR: fault %v, responses %+v; want an ACK and a fault", r.Fault, r.Responses)
	}
	if n, first := m.Faults(); n != 1 || first != r.Fault {
		t.Fatalf("Faults() = %d, %v; want 1, %v", n, first, r.Fault)
	}
	if r := m.feed(req{op: decode.OpSendOnly, psn: 102, ack: true}); r.Fault != nil {
		t.Fatalf("the next request carries the old fault: %v", r.Fault)
	}
}
