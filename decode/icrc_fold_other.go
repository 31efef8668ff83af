//go:build !amd64

package decode

var canFold = false

func icrcFold(head, rest []byte) uint32 { panic("icrcFold: no VPCLMULQDQ on this architecture") }
