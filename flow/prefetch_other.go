//go:build !amd64 && !arm64

package flow

import "unsafe"

// prefetchLines: no hint on this architecture.
func prefetchLines(unsafe.Pointer, uintptr) {}
