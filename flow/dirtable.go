package flow

import "math/bits"

// dirTable maps a direction (dirKey) to its session half (ID << 1 |
// side). It replaces a Go map: with a million QP pairs, the tracker meets
// a new direction on two packets of every pair, and each lookup of an
// absent key then an insert cost a cache miss or two in a map of 2M
// entries. Open addressing with linear probing over 12-byte slots finds
// an absent key in one cache line and inserts it in the slot it found,
// with a cheap multiplicative hash; the table holds no pointers, so the
// garbage collector never scans it. A slot is 12 bytes (a million QP
// pairs: 4M slots, 48 MiB).
type dirTable struct {
	slots []dirSlot // len a power of 2 (or 0), at most 3/4 full
	n     int
	mem   *slotMem // the mapping of slots when it is outside the Go heap (dirmem_linux.go)
	// miss is the key+1 that get last did not find, and the empty slot
	// where it would go (0: none): a new direction is looked up, then
	// added, and set need not look for its slot again. Any change to
	// the slots clears it.
	miss   uint64
	missAt int
}

// dirSlot is a slot: key+1 (0: empty), as two halves so that a slot
// needs no 8-byte alignment, and the value.
type dirSlot struct {
	lo, hi, val uint32
}

func (s *dirSlot) key() uint64 { return uint64(s.hi)<<32 | uint64(s.lo) }

func newSlot(k dirKey, v uint32) dirSlot {
	x := uint64(k) + 1
	return dirSlot{uint32(x), uint32(x >> 32), v}
}

const dirTableMin = 1024

// growBigSlots is the size (in slots: 3 MB) from which the table grows
// 4× instead of 2×. Each grow moves every key to a new table, a cache
// miss or so each, and faults in the new table's pages: growing 4×, a
// key is moved about a third as often (a million QP pairs: about 1M
// moves instead of 3M from 256k slots on, 63 MiB faulted in instead of
// 93). It costs memory most right after a grow, when the table is as
// little as 3/16 full (TestDirTableGrowth): at most 128 bytes of table a
// QP pair, within issue 15's 512-byte budget for an idle pair
// (TestIdleSessionBudget holds a Session and its share of the heap to
// 440 bytes at 20,000 pairs, where the table, smaller than 256k slots,
// still doubles). Measured at a million QP pairs (stats, 9 interleaved
// runs of one binary, an environment switch since removed): 1.242 CPU s
// against 1.294; at 100k pairs 0.145 both.
const growBigSlots = 1 << 18

func dirHash(k dirKey) uint64 {
	hi, lo := bits.Mul64(uint64(k)^0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9)
	return hi ^ lo
}

// find returns the slot of k: the one holding it (ok) or the empty one
// where it would go.
func (t *dirTable) find(k dirKey) (i int, ok bool) {
	m := len(t.slots) - 1
	if m < 0 {
		return -1, false
	}
	i = int(dirHash(k)) & m
	for {
		s := &t.slots[i]
		x := s.key()
		if x == uint64(k)+1 {
			return i, true
		}
		if x == 0 {
			return i, false
		}
		i = (i + 1) & m
	}
}

// get returns k's value.
func (t *dirTable) get(k dirKey) (uint32, bool) {
	i, ok := t.find(k)
	if !ok {
		if i >= 0 {
			t.miss, t.missAt = uint64(k)+1, i
		}
		return 0, false
	}
	return t.slots[i].val, true
}

// set maps k to v.
func (t *dirTable) set(k dirKey, v uint32) {
	var i int
	var ok bool
	if t.miss == uint64(k)+1 {
		i = t.missAt // (and not ok)
	} else {
		i, ok = t.find(k)
	}
	t.miss = 0
	if !ok {
		if 4*(t.n+1) > 3*len(t.slots) {
			t.grow()
			i, _ = t.find(k)
		}
		t.n++
	}
	t.slots[i] = newSlot(k, v)
}

func (t *dirTable) grow() {
	old, oldMem := t.slots, t.mem
	n := 2 * len(old)
	if len(old) >= growBigSlots {
		n = 4 * len(old)
	}
	t.slots, t.mem = allocSlots(max(dirTableMin, n))
	defer oldMem.free()
	m := len(t.slots) - 1
	for _, s := range old {
		if s.key() == 0 {
			continue
		}
		i := int(dirHash(dirKey(s.key()-1))) & m
		for t.slots[i].key() != 0 {
			i = (i + 1) & m
		}
		t.slots[i] = s
	}
}

// delete removes k, shifting back the slots after it that its place
// would have held (no tombstones: lookups stay one probe run long).
func (t *dirTable) delete(k dirKey) {
	t.miss = 0
	i, ok := t.find(k)
	if !ok {
		return
	}
	t.n--
	m := len(t.slots) - 1
	for j := (i + 1) & m; ; j = (j + 1) & m {
		s := t.slots[j]
		if s.key() == 0 {
			break
		}
		// s may move to the hole at i when its home slot is not in
		// (i, j] (cyclically)
		h := int(dirHash(dirKey(s.key()-1))) & m
		if (j-h)&m >= (j-i)&m {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = dirSlot{}
}

// len returns the number of keys.
func (t *dirTable) len() int { return t.n }
