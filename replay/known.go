package replay

import (
	"bytes"
	"unsafe"
)

// allTrue reports whether every element of b is true. A Go bool is one
// byte holding 0 or 1, so this is a search for a zero byte, which
// bytes.IndexByte does many bytes at a time (a READ response carries up to
// 4 KiB).
func allTrue(b []bool) bool {
	if len(b) == 0 {
		return true
	}
	return bytes.IndexByte(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)), 0) < 0
}
