package flow

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// checkDirTable compares tab with the map ref in full: every key of ref
// is found with its value and in exactly one slot, no other key is in
// any, and the counts agree.
func checkDirTable(t *testing.T, tab *dirTable, ref map[dirKey]uint32, what string) {
	t.Helper()
	if tab.len() != len(ref) {
		t.Fatalf("%s: the table holds %d keys, the map %d", what, tab.len(), len(ref))
	}
	seen := map[dirKey]bool{}
	n := 0
	for _, s := range tab.slots {
		if s.key() == 0 {
			continue
		}
		n++
		k := dirKey(s.key() - 1)
		if v, ok := ref[k]; !ok || v != s.val || seen[k] {
			t.Fatalf("%s: a slot holds key %d → %d (in the map: %d, %v; seen before: %v)", what, k, s.val, v, ok, seen[k])
		}
		seen[k] = true
	}
	if n != len(ref) {
		t.Fatalf("%s: %d slots used, want %d", what, n, len(ref))
	}
	for k, v := range ref {
		if got, ok := tab.get(k); !ok || got != v {
			t.Fatalf("%s: get(%d) = %d, %v, want %d", what, k, got, ok, v)
		}
	}
}

// homeTwins returns groups of keys that share a home slot in the
// smallest table, the last group the last slot (so its probe run wraps
// round to slot 0): long probe runs, with deletes in their middle.
func homeTwins(groups, per int, r *rand.Rand) []dirKey {
	var out []dirKey
	for g := range groups {
		home := r.IntN(dirTableMin)
		if g == groups-1 {
			home = dirTableMin - 1
		}
		for n := 0; n < per; {
			k := dirKey(r.Uint64N(1 << 40))
			if int(dirHash(k))&(dirTableMin-1) == home {
				out = append(out, k)
				n++
			}
		}
	}
	return out
}

// dirTable against a Go map: random gets, sets (new keys and updates),
// deletes and lens, interleaved (half the gets that miss are followed by
// the set of their key, as for a new direction), over few keys, over
// keys sharing home slots (long probe runs, deletes in the middle of
// them, runs that wrap round the end of the table), over more and over
// many (grows).
func TestDirTableMatchesMap(t *testing.T) {
	if n := unsafe.Sizeof(dirSlot{}); n != 12 {
		t.Errorf("a slot is %d bytes, want 12", n)
	}
	twins := homeTwins(6, 12, rand.New(rand.NewPCG(1, 2)))
	for _, tc := range []struct {
		name  string
		keys  uint64 // key universe: 0 to keys-1 (real-looking above 1000)
		twins bool   // the universe is homeTwins
		ops   int
		check int  // full check every check ops
		grow  bool // the run must have grown the table
	}{
		{"50 keys", 50, false, 100000, 997, false},
		{"home twins", 0, true, 100000, 997, false},
		{"3000 keys", 3000, false, 400000, 9973, true},
		{"200k keys", 200000, false, 600000, 199999, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.keys, 7))
			key := func() dirKey {
				switch {
				case tc.twins:
					return twins[r.IntN(len(twins))]
				case tc.keys > 1000:
					return dirKey(r.Uint64N(tc.keys)<<24 | r.Uint64N(4)) // structured like real keys
				}
				return dirKey(r.Uint64N(tc.keys))
			}
			var tab dirTable
			ref := map[dirKey]uint32{}
			grows := 0
			for op := range tc.ops {
				k := key()
				size := len(tab.slots)
				switch r.IntN(8) {
				case 0, 1, 2:
					v := uint32(op)
					tab.set(k, v)
					ref[k] = v
				case 3, 4:
					tab.delete(k)
					delete(ref, k)
				case 5, 6:
					want, wok := ref[k]
					if got, ok := tab.get(k); ok != wok || got != want {
						t.Fatalf("op %d: get(%d) = %d, %v, want %d, %v", op, k, got, ok, want, wok)
					}
					if !wok && r.IntN(2) == 0 { // a new direction: looked up, then added (dirTable.miss)
						tab.set(k, uint32(op))
						ref[k] = uint32(op)
					}
				case 7:
					if tab.len() != len(ref) {
						t.Fatalf("op %d: the table holds %d keys, the map %d", op, tab.len(), len(ref))
					}
				}
				if len(tab.slots) != size && size != 0 {
					grows++
				}
				if op%tc.check == 0 {
					checkDirTable(t, &tab, ref, fmt.Sprint("op ", op))
				}
			}
			checkDirTable(t, &tab, ref, "the end")
			t.Logf("%d keys, %d slots; %d grows", len(ref), len(tab.slots), grows)
			if tc.grow && grows == 0 {
				t.Error("the table never grew: the test misses what it is for")
			}
		})
	}
}

// FuzzDirTable runs the operations its input spells (3 bytes each: the
// operation in 2 bits and a key in 22, so that keys repeat) on a dirTable
// and a Go map, and compares them. (Grows are TestDirTableMatchesMap's:
// a seed long enough for one stalls the fuzzer minimizing it.)
func FuzzDirTable(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 1, 1, 0, 1, 2, 0, 1, 3, 0, 0})
	f.Add(binary.BigEndian.AppendUint64(nil, 0x0001020304050607))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tab dirTable
		ref := map[dirKey]uint32{}
		for i := 0; i+3 <= len(b); i += 3 {
			k := dirKey(b[i]>>2)<<32 | dirKey(b[i+1])<<8 | dirKey(b[i+2]) // 6 bits of address pair, 16 of QP
			switch b[i] & 3 {
			case 0, 1:
				tab.set(k, uint32(i))
				ref[k] = uint32(i)
			case 2:
				tab.delete(k)
				delete(ref, k)
			case 3:
				want, wok := ref[k]
				if got, ok := tab.get(k); ok != wok || got != want {
					t.Fatalf("op %d: get(%d) = %d, %v, want %d, %v", i/3, k, got, ok, want, wok)
				}
			}
		}
		checkDirTable(t, &tab, ref, "the end")
	})
}

// The empty slot that get's miss remembers for set (dirTable.miss) is
// forgotten once the slots change: keys sharing a home slot, a miss on
// the fifth, a delete of the first (the others shift back), then the
// fifth set: it and the others must still be found.
func TestDirTableMissAfterDelete(t *testing.T) {
	ks := homeTwins(1, 5, rand.New(rand.NewPCG(5, 6)))
	var tab dirTable
	for i, k := range ks[:4] {
		tab.set(k, uint32(i))
	}
	if _, ok := tab.get(ks[4]); ok {
		t.Fatal("the fifth key is found before it is set")
	}
	tab.delete(ks[0])
	tab.set(ks[4], 4)
	for i, k := range ks[1:] {
		if v, ok := tab.get(k); !ok || v != uint32(i+1) {
			t.Errorf("key %d: %d, %v, want %d", i+1, v, ok, i+1)
		}
	}
}

// The table doubles while it is small and grows 4× from growBigSlots
// (fewer moves of every key), never fuller than 3/4 and, past a grow,
// never emptier than 3/16: what a QP pair costs in table stays bounded.
func TestDirTableGrowth(t *testing.T) {
	var tab dirTable
	sizes := []int{}
	const keys = 4*growBigSlots*3/4 + 1 // one past the grow to 16·growBigSlots
	for k := range keys {
		tab.set(dirKey(k)<<24|dirKey(k&3), uint32(k))
		if n := len(tab.slots); len(sizes) == 0 || sizes[len(sizes)-1] != n {
			sizes = append(sizes, n)
			if 16*tab.len() < 3*n && n > dirTableMin {
				t.Errorf("after %d keys: %d slots, emptier than 3/16", tab.len(), n)
			}
		}
		if 4*tab.len() > 3*len(tab.slots) {
			t.Fatalf("%d keys in %d slots: more than 3/4 full", tab.len(), len(tab.slots))
		}
	}
	for i := 1; i < len(sizes); i++ {
		want := 2 * sizes[i-1]
		if sizes[i-1] >= growBigSlots {
			want = 4 * sizes[i-1]
		}
		if sizes[i] != want {
			t.Errorf("grew from %d slots to %d, want %d (sizes %v)", sizes[i-1], sizes[i], want, sizes)
		}
	}
	if last := sizes[len(sizes)-1]; last != 16*growBigSlots {
		t.Errorf("%d keys: %d slots, want %d (sizes %v)", keys, last, 16*growBigSlots, sizes)
	}
}
