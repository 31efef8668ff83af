//go:build linux

package flow

import (
	"runtime"
	"syscall"
	"unsafe"
)

// mapSlotsMin is the smallest table (in slots: 3 MiB) mapped outside
// the Go heap: the table holds no pointers, so it may live there, where
// the garbage collector neither counts nor scans it and a grow returns
// the old table's memory at once.
//
// Its pages are 4 KiB ones, faulted in by one madvise
// (MADV_POPULATE_WRITE), not transparent huge pages (MADV_HUGEPAGE, which
// this table used before). Huge pages spare the TLB misses of random
// lookups, but a huge page needs 2 MiB of free memory in one block, and
// on a virtual machine whose balloon reports free memory to the host
// (virtio-balloon free page reporting, as on this project's Firecracker
// machines) those blocks are the ones the host took back: each first
// touch faults on the host too. Measured there, faulting in 256 MiB of
// memory freed a few seconds before took 2.3 ms a MiB in huge pages and
// 0.33 in 4 KiB pages; the table's grows to 4M slots (a million QP
// pairs) fault in 93 MiB, and sessions at a million QP pairs went from
// 1.65 to 1.57 CPU s (median of 9 interleaved runs). The system's
// setting decides: with THP "always" (not measured here) the table is
// in huge pages anyway.
const mapSlotsMin = 1 << 18

// slotMem is a table mapped outside the heap: unmapped by free, or by
// the cleanup once the table that holds it is unreachable.
type slotMem struct {
	b       []byte
	cleanup runtime.Cleanup
}

// allocSlots returns n zeroed slots, and their mapping when they are
// outside the heap (nil: in the heap).
func allocSlots(n int) ([]dirSlot, *slotMem) {
	size := n * int(unsafe.Sizeof(dirSlot{}))
	if n < mapSlotsMin {
		return make([]dirSlot, n), nil
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]dirSlot, n), nil
	}
	populate(b)
	m := &slotMem{b: b}
	m.cleanup = runtime.AddCleanup(m, func(b []byte) { _ = syscall.Munmap(b) }, b)
	return unsafe.Slice((*dirSlot)(unsafe.Pointer(&b[0])), n), m
}

// free unmaps m (nil: nothing to do); its slots must not be used after.
func (m *slotMem) free() {
	if m == nil {
		return
	}
	m.cleanup.Stop()
	_ = syscall.Munmap(m.b)
}
