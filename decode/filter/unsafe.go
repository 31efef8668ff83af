package filter

import "unsafe"

// unsafeBytes views a string's bytes without copying; callers only read.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
