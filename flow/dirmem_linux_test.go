//go:build linux

package flow

import (
	"runtime"
	"testing"
)

// A table past mapSlotsMin lives outside the heap and keeps its keys
// across the grows that unmap its predecessors. Rounds of tables dropped
// unreachable run their cleanups (runtime.GC) without harm; that a
// cleanup unmaps is not checked here.
func TestDirTableOutsideHeap(t *testing.T) {
	for round := range 3 {
		var tab dirTable
		const n = mapSlotsMin // grows past mapSlotsMin slots, and grows again
		for k := range n {
			tab.set(dirKey(k)<<24|dirKey(k&3), uint32(k))
		}
		if tab.mem == nil || len(tab.slots) < mapSlotsMin {
			t.Fatalf("round %d: %d slots, mapped %v: want them outside the heap", round, len(tab.slots), tab.mem != nil)
		}
		for k := range n {
			if v, ok := tab.get(dirKey(k)<<24 | dirKey(k&3)); !ok || v != uint32(k) {
				t.Fatalf("round %d: key %d: %d, %v", round, k, v, ok)
			}
		}
		runtime.KeepAlive(tab.mem)
		runtime.GC() // the previous round's table is unreachable: its cleanup runs
	}
}
