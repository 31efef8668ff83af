package hca

// mrTable holds the model's MRs in registration order and finds them by
// rkey. An MPT file may register a million MRs: those of the Config are
// allocated together, each MR beside its MTT (one slot), and the rkey
// index is an open-addressing table of MR numbers, 4 bytes a slot at most
// half full, where a map of pointers cost ~4 times as much. Lookups are
// O(1) and do not allocate.
type mrTable struct {
	slab  []mrSlot // the Config's MRs; the first nslab are registered
	nslab int
	more  []*MR   // registered after NewModel, in order
	index []int32 // by rkey hash: MR number + 1, 0 when empty; linear probing
	keys  int     // slots in use
}

// newMRTable returns a table with room for n MRs.
func newMRTable(n int) mrTable {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return mrTable{slab: make([]mrSlot, n), index: make([]int32, size)}
}

// mrSlot is an MR with its MTT.
type mrSlot struct {
	mr  MR
	mtt MTT
}

func (t *mrTable) len() int { return t.nslab + len(t.more) }

// at returns MR number i (in registration order).
func (t *mrTable) at(i int) *MR {
	if i < t.nslab {
		return &t.slab[i].mr
	}
	return t.more[i-t.nslab]
}

// nextSlot returns the slot for the next MR: one of the slab while it
// lasts, else a new one.
func (t *mrTable) nextSlot() *mrSlot {
	if len(t.more) == 0 && t.nslab < len(t.slab) {
		return &t.slab[t.nslab]
	}
	return new(mrSlot)
}

// add appends the MR of slot s, which nextSlot returned, and indexes it
// by its rkey unless that is 0. A later MR with the same rkey replaces the
// earlier in the index.
func (t *mrTable) add(s *mrSlot) {
	if len(t.more) == 0 && t.nslab < len(t.slab) && s == &t.slab[t.nslab] {
		t.nslab++
	} else {
		t.more = append(t.more, &s.mr)
	}
	if s.mr.RKey != 0 {
		t.put(s.mr.RKey, int32(t.len()))
	}
}

func (t *mrTable) slotOf(rkey uint32) uint32 {
	return (rkey * 0x9e3779b1) >> 7 // Fibonacci hashing; masked by the caller
}

// put indexes MR number n-1 under rkey.
func (t *mrTable) put(rkey uint32, n int32) {
	if 2*(t.keys+1) > len(t.index) {
		t.grow()
	}
	mask := uint32(len(t.index) - 1)
	for i := t.slotOf(rkey) & mask; ; i = (i + 1) & mask {
		switch e := t.index[i]; {
		case e == 0:
			t.index[i] = n
			t.keys++
			return
		case t.at(int(e)-1).RKey == rkey:
			t.index[i] = n
			return
		}
	}
}

func (t *mrTable) grow() {
	old := t.index
	t.index = make([]int32, max(16, 2*len(old)))
	mask := uint32(len(t.index) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := t.slotOf(t.at(int(e)-1).RKey) & mask
		for t.index[i] != 0 {
			i = (i + 1) & mask
		}
		t.index[i] = e
	}
}

// byKey returns the MR last registered with rkey, or nil.
func (t *mrTable) byKey(rkey uint32) *MR {
	if len(t.index) == 0 || rkey == 0 {
		return nil
	}
	mask := uint32(len(t.index) - 1)
	for i := t.slotOf(rkey) & mask; ; i = (i + 1) & mask {
		e := t.index[i]
		if e == 0 {
			return nil
		}
		if mr := t.at(int(e) - 1); mr.RKey == rkey {
			return mr
		}
	}
}
