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
// the ICRC), the miss is served as the ICRC is computed, and, where the
// stream decodes p before it tracks the packet before (stream.Track),
// while that one is tracked. What it works out (the direction, its
// session when cached, else its table key) Track then takes as it is
// (pre) unless a direction changed since, so that no packet costs more.
func (t *Tracker) Prefetch(p *decode.Packet) {
	pr := &t.pre[p.Frame.Number&1]
	pr.ok = false
	if !t.Prefetching() || p.Has&decode.HdrBTH == 0 || p.BTH.Opcode == decode.CNP || p.BTH.Opcode.Transport() == decode.TransportUD {
		return
	}
	// (set field by field: a preKey built whole is copied through the stack)
	pr.frame, pr.key.qp, pr.h, pr.gen, pr.ok = p.Frame.Number, p.BTH.DestQP, half{}, t.dirGen, true
	pr.lid = setAddrs(&pr.key, p)
	k := &pr.key
	if h, ok := t.cache[k.slot()].holds(k); ok {
		pr.h = h
		return
	}
	pr.dk, pr.interned = t.dirKey(k, false)
	if pr.interned {
		t.halves.prefetch(pr.dk)
	}
}

// Prefetching reports whether Prefetch does any work now: whether the
// direction table outgrew the caches (prefetchMinSlots). A stream that
// can decode a packet before it tracks the one before (stream.Track)
// does so only then: on few QPs it would only cost.
func (t *Tracker) Prefetching() bool { return len(t.halves.slots) >= prefetchMinSlots }

// prefetchMinSlots is the smallest direction table (1.5 MB) Prefetch
// works for: a smaller one stays in the caches, and a capture of a few
// QPs would only pay for the work (2% more instructions a packet).
const prefetchMinSlots = 1 << 17

// preKey is what Prefetch worked out for the packet of frame: its
// direction, and the direction's session when the cache held it (h.s
// not nil), else the direction's table key (dk, when its address pair
// is interned: else the direction is not in the table). The session and
// the key hold while the tracker's dirGen is still gen; the direction,
// from the packet alone, always.
type preKey struct {
	frame    int
	key      halfKey
	h        half
	dk       dirKey
	gen      uint32
	interned bool
	lid      bool
	ok       bool
}

// prefetch starts loading k's home slot into the cache.
func (t *dirTable) prefetch(k dirKey) {
	if m := len(t.slots) - 1; m >= 0 {
		prefetchLines(unsafe.Pointer(&t.slots[int(dirHash(k))&m]), 1)
	}
}
