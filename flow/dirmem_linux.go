//go:build linux

package flow

import (
	"runtime"
	"syscall"
	"unsafe"
)

// hugeSlotsMin is the smallest table (in slots: 3 MiB) mapped outside
// the Go heap, in transparent huge pages. A million QP pairs need 4M
// slots (48 MiB): in 4 KiB pages every lookup of a new direction is a
// TLB miss besides a cache miss, and every page of the table (and of
// each smaller one it grew from) a page fault, which cost more than the
// lookups. In 2 MiB pages the table is a few dozen TLB entries and
// faults. The table holds no pointers, so it may live outside the heap.
const hugeSlotsMin = 1 << 18

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
	if n < hugeSlotsMin {
		return make([]dirSlot, n), nil
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]dirSlot, n), nil
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
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
