package flow

import "unsafe"

// prefetch hints the CPU to load the cache line at p (PRFM PLDL1KEEP);
// it never faults.
//
//go:noescape
func prefetch(p unsafe.Pointer)

// prefetchLines hints the CPU to load the n cache lines (64 bytes) from p
// on; it never faults.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n uintptr)
