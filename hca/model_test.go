package hca

import (
	"strings"
	"testing"
)

func TestMRLifecycle(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	mr, err := m.Register(1, 0x200000, 3*4096+10, LocalWrite|RemoteWrite|RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	if mr.RKey == 0 || mr.RKey != mr.LKey || mr.RKey>>8 != uint32(len(m.MRs())) {
		t.Fatalf("keys %#x/%#x: want lkey = rkey = index<<8 | key byte", mr.LKey, mr.RKey)
	}
	if local, _ := m.Register(1, 0x300000, 4096, LocalWrite); local.RKey != 0 {
		t.Fatalf("MR without remote access got rkey %#x, want 0", local.RKey)
	}
	if _, err := m.Register(9, 0, 4096, LocalWrite); err == nil || !strings.Contains(err.Error(), "protection domain 9") {
		t.Fatalf("register in a missing PD: %v", err)
	}
	// Pages: 4 pinned, translation inside each.
	if mr.MTT.Pages() != 4 {
		t.Fatalf("%d pages for 3 pages + 10 bytes", mr.MTT.Pages())
	}
	ok := func(va, n uint64) Verdict { return m.Check(0x11, OpWrite, mr.RKey, va, n).Verdict }
	if v := ok(0x200000, 3*4096+10); v != VerdictOK {
		t.Fatalf("whole MR: %s", v)
	}
	c := m.Check(0x11, OpWrite, mr.RKey, 0x200000+3*4096, 20)
	if c.Verdict != VerdictOutOfBounds || c.Over != 10 || c.Offset != 3*4096 || !c.HasPA {
		t.Fatalf("10 bytes past the end: %+v", c)
	}
	if c := m.Check(0x11, OpWrite, mr.RKey, 0x1FFFF0, 32); c.Verdict != VerdictOutOfBounds || c.Over != 16 {
		t.Fatalf("16 bytes before the start: %+v", c)
	}
	if v := m.Check(0x11, OpAtomic, mr.RKey, 0x200000, 8).Verdict; v != VerdictAccessDenied {
		t.Fatalf("atomic on an MR without REMOTE_ATOMIC: %s", v)
	}
	// Invalidate, then deregister.
	if !m.Invalidate(mr.RKey) || ok(0x200000, 8) != VerdictInvalidKey {
		t.Fatal("invalidated MR still accepted")
	}
	if m.Invalidate(mr.RKey) {
		t.Fatal("invalidating twice succeeded")
	}
	pinned := m.Mem().PinnedPages()
	if !m.DeregisterMR(mr.RKey) || m.Mem().PinnedPages() != pinned-4 {
		t.Fatalf("deregister: pinned %d → %d", pinned, m.Mem().PinnedPages())
	}
	if ok(0x200000, 8) != VerdictInvalidKey {
		t.Fatal("deregistered MR still accepted")
	}
}

func TestMemoryWindows(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	// Type 1 window over the second page of the test MR, any QP of PD 1.
	if err := m.BindMW(MWConfig{RKey: 0x500, Type: 1, VA: mrVA + 4096, Length: 4096, PD: 1, Access: RemoteRead, MRRKey: mrKey}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		qpn  uint32
		op   AccessOp
		key  uint32
		va   uint64
		n    uint64
		want Verdict
	}{
		{0x11, OpRead, 0x500, mrVA + 4096, 4096, VerdictOK},
		{0x11, OpRead, 0x500, mrVA + 4095, 2, VerdictOutOfBounds},
		{0x11, OpWrite, 0x500, mrVA + 4096, 8, VerdictAccessDenied},
		{0x12, OpRead, 0x500, mrVA + 4096, 8, VerdictOK},
		// the type 2 window of testConfig is bound to QP 0x11 only
		{0x11, OpWrite, mwKey, mrVA, 8, VerdictOK},
		{0x13, OpWrite, mwKey, mrVA, 8, VerdictMWQP},
		{0x11, OpWrite, mwKey, mrVA + 4096, 8, VerdictOutOfBounds},
	}
	for _, c := range cases {
		if got := m.Check(c.qpn, c.op, c.key, c.va, c.n); got.Verdict != c.want || !got.Window {
			t.Errorf("QP %#x %s key %#x [%#x,+%d): %s (window %v), want %s", c.qpn, c.op, c.key, c.va, c.n, got.Verdict, got.Window, c.want)
		}
	}
	// Binding needs MW_BIND on the MR and a range inside it.
	if err := m.BindMW(MWConfig{RKey: 0x600, Type: 1, VA: 0x40000, Length: 16, PD: 1, MRRKey: roKey}); err == nil {
		t.Error("bound a window on an MR without MW_BIND")
	}
	if err := m.BindMW(MWConfig{RKey: 0x700, Type: 1, VA: mrVA + 8000, Length: 400, PD: 1, MRRKey: mrKey}); err == nil {
		t.Error("bound a window past the end of its MR")
	}
	// SEND with Invalidate cannot invalidate a type 1 window.
	if m.remoteInvalidate(m.QP(0x11), 0x500) {
		t.Error("remote invalidation of a type 1 window succeeded")
	}
	if !m.remoteInvalidate(m.QP(0x11), mwKey) || m.Check(0x11, OpWrite, mwKey, mrVA, 8).Verdict != VerdictInvalidKey {
		t.Error("remote invalidation of the type 2 window failed")
	}
}

// TestOverAtTheTopOfMemory (issue 18.6): VA + length may pass 2^64; the
// bytes out of bounds are still those outside the MR, not the whole
// access.
func TestOverAtTheTopOfMemory(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	top := ^uint64(0) - 4095 // the last page: the MR ends at 2^64
	mr, err := m.Register(1, top, 4096, LocalWrite|RemoteWrite|RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		va, n, over uint64
	}{
		{top + 4096 - 255, 512, 257}, // 255 bytes inside, then past 2^64
		{top, 4096, 0},               // the whole MR
		{top - 16, 4096 + 16, 16},    // 16 bytes before it
		{top - 16, ^uint64(0), 1<<64 - 1 - 4096},
		{^uint64(0), 2, 1}, // the last byte, then past 2^64
	}
	for _, c := range cases {
		got := m.Check(0x11, OpWrite, mr.RKey, c.va, c.n)
		if got.Over != c.over || (c.over == 0) != (got.Verdict == VerdictOK) {
			t.Errorf("va %#x length %d: over %d (%s), want %d", c.va, c.n, got.Over, got.Verdict, c.over)
		}
	}
}
