//go:build !amd64 && !arm64

package flow

import "unsafe"

// prefetch: no hint on this architecture.
func prefetch(unsafe.Pointer) {}

// prefetchLines: no hint on this architecture.
func prefetchLines(unsafe.Pointer, uintptr) {}
