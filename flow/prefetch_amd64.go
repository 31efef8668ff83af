package flow

import "unsafe"

// prefetchLines hints the CPU to load the n cache lines (64 bytes) from p
// on; it never faults.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n uintptr)
