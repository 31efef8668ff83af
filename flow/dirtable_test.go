package flow

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// dirTable against a Go map: random sets and deletes over few keys (long
// probe runs, deletes in the middle of them) and over many (growth).
func TestDirTableMatchesMap(t *testing.T) {
	if n := unsafe.Sizeof(dirSlot{}); n != 12 {
		t.Errorf("a slot is %d bytes, want 12", n)
	}
	for _, keys := range []uint64{50, 3000, 200000} {
		r := rand.New(rand.NewPCG(keys, 7))
		var tab dirTable
		ref := map[dirKey]uint32{}
		for op := range 400000 {
			k := dirKey(r.Uint64N(keys))
			if keys > 1000 {
				k = dirKey(r.Uint64N(keys)<<24 | r.Uint64N(4)) // structured like real keys
			}
			switch r.IntN(3) {
			case 0, 1:
				v := uint32(op)
				tab.set(k, v)
				ref[k] = v
			case 2:
				tab.delete(k)
				delete(ref, k)
			}
			if op%1000 == 0 || keys == 50 {
				if tab.len() != len(ref) {
					t.Fatalf("%d keys: after op %d the table holds %d, the map %d", keys, op, tab.len(), len(ref))
				}
			}
		}
		for k, v := range ref {
			if got, ok := tab.get(k); !ok || got != v {
				t.Fatalf("%d keys: get(%d) = %d, %v, want %d", keys, k, got, ok, v)
			}
		}
		n := 0
		for _, s := range tab.slots {
			if s.key() != 0 {
				n++
				if _, ok := ref[dirKey(s.key()-1)]; !ok {
					t.Fatalf("%d keys: the table holds deleted key %d", keys, s.key()-1)
				}
			}
		}
		if n != len(ref) {
			t.Fatalf("%d keys: %d slots used, want %d", keys, n, len(ref))
		}
	}
}
