package flow

import (
	"unsafe"

	"github.com/rocetap/rocetap/decode"
)

// Prefetch starts loading what Track will look up first for p: the
// direction table's slot of p's direction when the direction cache does
// not hold it. A packet on a direction new to the tracker misses the
// table in memory (it is 48 MB at a million QP pairs, ~200 ns a miss);
// called while p is still being decoded (decode.Decoder.Headers, before
// the ICRC), the miss is served as the ICRC is computed. What it works
// out (the direction, its session when cached, else its table key)
// Track then takes as it is (pre), so that no packet costs more.
func (t *Tracker) Prefetch(p *decode.Packet) {
	t.pre.ok = false
	if len(t.halves.slots) < prefetchMinSlots || p.Has&decode.HdrBTH == 0 || p.BTH.Opcode == decode.CNP || p.BTH.Opcode.Transport() == decode.TransportUD {
		return
	}
	pr := &t.pre // (set field by field: a preKey built whole is copied through the stack)
	pr.frame, pr.key.qp, pr.h, pr.ok = p.Frame.Number, p.BTH.DestQP, half{}, true
	pr.lid = setAddrs(&pr.key, p)
	k := &pr.key
	if h, ok := t.cache[k.slot()].holds(k); ok {
		t.pre.h = h
		return
	}
	t.pre.dk, t.pre.interned = t.dirKey(k, false)
	if t.pre.interned {
		t.halves.prefetch(t.pre.dk)
	}
}

// prefetchMinSlots is the smallest direction table (1.5 MB) Prefetch
// works for: a smaller one stays in the caches, and a capture of a few
// QPs would only pay for the work (2% more instructions a packet).
const prefetchMinSlots = 1 << 17

// preKey is what Prefetch worked out for the packet of frame: its
// direction, and the direction's session when the cache held it (h.s
// not nil), else the direction's table key (dk, when its address pair
// is interned: else the direction is not in the table).
type preKey struct {
	frame    int
	key      halfKey
	h        half
	dk       dirKey
	interned bool
	lid      bool
	ok       bool
}

// prefetch starts loading k's home slot into the cache.
func (t *dirTable) prefetch(k dirKey) {
	if m := len(t.slots) - 1; m >= 0 {
		prefetch(unsafe.Pointer(&t.slots[int(dirHash(k))&m]))
	}
}
