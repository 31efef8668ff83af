package flow

import "unsafe"

// prefetch hints the CPU to load the cache line at p (PREFETCHT0); it
// never faults.
//
//go:noescape
func prefetch(p unsafe.Pointer)
