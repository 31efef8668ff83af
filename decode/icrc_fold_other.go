//go:build !amd64

package decode

var canFold, canDirect = false, false

func icrcFold(head, rest []byte) uint32 { panic("icrcFold: no VPCLMULQDQ on this architecture") }

func icrcDirect(ip []byte, n int, v6 bool) uint32 {
	panic("icrcDirect: no VPCLMULQDQ on this architecture")
}
