package replay

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// anyTrue reports whether some element of b is true: a search for a
// non-zero byte, 8 bytes at a time.
func anyTrue(b []bool) bool {
	if len(b) == 0 {
		return false
	}
	p := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b))
	for len(p) >= 8 {
		if binary.NativeEndian.Uint64(p) != 0 {
			return true
		}
		p = p[8:]
	}
	return bytes.IndexByte(p, 1) >= 0
}

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
