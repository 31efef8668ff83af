package hca

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestWindowDescribe: every verdict about a memory window names the
// window (its rkey, type and the MR it is bound to), never "MR ..." or
// "any MR"; so does the reason the responder's NAK gives (Response.Why,
// replay's "why").
func TestWindowDescribe(t *testing.T) {
	const mw = "MW 0x08000100 (type 2, bound to MR 0x00001234)"
	tests := []struct {
		name  string
		edit  func(*Config)
		prep  func(*Model)
		qpn   uint32
		op    AccessOp
		va, n uint64
		want  string
	}{
		{"no REMOTE_READ", func(c *Config) { c.MWs[0].Access = RemoteWrite }, nil, 0x11, OpRead, mrVA, 8, mw + " lacks REMOTE_READ"},
		{"no REMOTE_ATOMIC", nil, nil, 0x11, OpAtomic, mrVA, 8, mw + " lacks REMOTE_ATOMIC"},
		{"past its end", nil, nil, 0x11, OpWrite, mrVA + 4000, 200, "outside the range of " + mw + " by 104 bytes"},
		{"before its start", func(c *Config) { c.MWs[0].VA, c.MWs[0].Length = mrVA+4096, 4096 }, nil, 0x11, OpWrite, mrVA + 4000, 200, "outside the range of MW 0x08000100 (type 2, bound to MR 0x00001234) by 96 bytes"},
		{"another PD", func(c *Config) { c.MWs[0].PD = 2 }, nil, 0x11, OpWrite, mrVA, 8, mw + " in another protection domain"},
		{"another QP", nil, nil, 0x13, OpWrite, mrVA, 8, mw + " is bound to QP 0x000011, not this one"},
		{"invalidated", nil, func(m *Model) { m.Invalidate(mwKey) }, 0x11, OpWrite, mrVA, 8, mw + " is no longer valid"},
		{"its MR invalidated", nil, func(m *Model) { m.Invalidate(mrKey) }, 0x11, OpWrite, mrVA, 8,
			"MW 0x08000100 (type 2) is bound to MR 0x00001234, which is no longer valid"},
		{"type 1, any QP of its PD", func(c *Config) { c.MWs[0].Type, c.MWs[0].HasQPN, c.MWs[0].Access = 1, false, RemoteRead }, nil, 0x12, OpRead, mrVA, 8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, ProfileIBTA, tt.edit)
			if tt.prep != nil {
				tt.prep(m)
			}
			c := m.Check(tt.qpn, tt.op, mwKey, tt.va, tt.n)
			if tt.want == "" {
				if c.Verdict != VerdictOK || c.MW == nil || c.MW.RKey != mwKey {
					t.Fatalf("%+v, want ok through the window", c)
				}
				return
			}
			if c.Verdict.Allowed() || !c.Window || c.MW == nil || c.MR == nil || c.MR.RKey != mrKey {
				t.Fatalf("%+v", c)
			}
			if got := c.Describe(); got != tt.want {
				t.Errorf("Describe() = %q, want %q", got, tt.want)
			}
			// The responder's NAK says the same.
			if tt.qpn != 0x11 || tt.op == OpAtomic {
				return
			}
			op := uint8(decode.OpWriteOnly)
			if tt.op == OpRead {
				op = decode.OpReadRequest
			}
			r := req{op: op, psn: 100, va: tt.va, rkey: mwKey, dmaLen: uint32(tt.n), ack: true}
			if op == decode.OpWriteOnly {
				r.payload = bytesN(int(tt.n), 1)
			}
			res := m.feed(r)
			if len(res.Responses) != 1 || res.Responses[0].Why != tt.want {
				t.Errorf("NAK why %q, want %q", why(res), tt.want)
			}
		})
	}
	// The MR texts stay: a region is not a window.
	m := newTestModel(t, ProfileIBTA, nil)
	if c := m.Check(0x11, OpWrite, roKey, 0x40000, 8); c.MW != nil || c.Describe() != "MR lacks REMOTE_WRITE" {
		t.Errorf("MR: %q", c.Describe())
	}
	res := m.feed(req{op: decode.OpWriteOnly, psn: 100, va: 0x40000, rkey: roKey, dmaLen: 8, payload: bytesN(8, 1), ack: true})
	if why(res) != "rkey 0x00002200: MR lacks REMOTE_WRITE" {
		t.Errorf("MR NAK why %q", why(res))
	}
	// A type 1 window cannot be invalidated remotely; the invalidation's
	// check says so of the window (flow's MPT check builds this Check).
	c := Check{Verdict: VerdictAccessDenied, Op: decode.MPTOpInvalidate, RKey: 0x500, Window: true,
		MW: &MW{RKey: 0x500, Type: 1, MR: &MR{RKey: mrKey}}}
	if got := c.Describe(); got != "MW 0x00000500 (type 1, bound to MR 0x00001234) cannot be invalidated remotely: only a type 2 window can" {
		t.Errorf("invalidate a type 1 window: %q", got)
	}
}
