package decode

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// Folding: the ICRC's CRC-32 in 64-byte blocks with carry-less multiplies
// (icrcFold, in assembly where the CPU has VPCLMULQDQ on 512-bit
// registers). hash/crc32 folds one 512-bit register at a time, so each
// block waits for the one before, and every call pays a fixed reduction:
// an ICRC in two calls, the masked head and then the rest, cost 70 ns for
// a 1 KiB payload (BenchmarkICRCRoCEv2 in bench/RESULTS.md). icrcFold
// takes both pieces in one pass, folds four registers side by side, and
// reduces the last 128 bits to the CRC register with two multiplies and
// Barrett's reduction: 40 ns.
//
// The algebra, in the reflected bit order of the CRC-32 (the first bit of a
// message is its highest power of x): a 128-bit chunk A followed by D more
// bits contributes A·x^D to the message, and any A' ≡ A·x^D (mod P) of
// lower degree may be XORed into the chunk D bits later instead. With
// A = H·x^64 + L (H the first eight bytes), A' = H·(x^(64+D) mod P) +
// L·(x^D mod P). A carry-less multiply of two reflected 64-bit values
// yields the reflected 127-bit product, one place short of the 128 bits
// the chunk holds, which the constants make up: x^(D+31) for H and
// x^(D-33) for L, reduced mod P, reflected (foldConst).

// canFold reports whether icrcFold may be called: the CPU has VPCLMULQDQ
// on 512-bit registers (and on 128-bit ones, for the last steps) and the
// OS saves them (x/sys/cpu sets the AVX-512 bits only then).
var canFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasPCLMULQDQ && cpu.X86.HasAVX

// icrcFold returns the CRC-32 of head and then rest, each a whole number of
// 64-byte blocks (head at least one), from a zero register: what
// crc32.Update(^0, crc32.IEEETable, ...) returns. Only call it when canFold.
// Pieces of other lengths go through hash/crc32 (crcPieces): the
// assembly reads whole blocks only. (icrcSum never passes any: the check
// is there so that the assembly does not rest on its caller alone, at the
// cost of icrcFold's being inlined.)
func icrcFold(head, rest []byte) uint32 {
	if len(head) < 64 || len(head)&63 != 0 || len(rest)&63 != 0 {
		return crcPieces(head, rest)
	}
	return icrcFoldK(head, rest, &icrcK)
}

// icrcFoldK is icrcFold, in assembly, with its constants.
//
//go:noescape
func icrcFoldK(head, rest []byte, k *[28]uint64) uint32

// foldConst is x^n mod P as the reflected CRC register holds it (bit 31
// is x^0): one shift of the register multiplies by x.
func foldConst(n int) uint64 {
	v := uint32(0x80000000)
	for range n {
		if v&1 != 0 {
			v = v>>1 ^ 0xEDB88320
		} else {
			v >>= 1
		}
	}
	return uint64(v)
}

// icrcK holds icrcFold's constants, each pair (for H, for L) repeated in
// the four 128-bit lanes of a 512-bit register: folding by 512 bits (one
// register to the next block), by 2048 bits (four registers to the next
// four blocks), and the last register's lanes by 384, 256 and 128 bits
// onto its fourth lane (which takes zeros: it is not moved).
var icrcK = func() (k [28]uint64) {
	lane := func(i, d int) {
		if d > 0 {
			k[2*i], k[2*i+1] = foldConst(d+31), foldConst(d-33)
		}
	}
	for l := range 4 {
		lane(l, 512)
		lane(4+l, 2048)
		lane(8+l, 384-128*l)
	}
	// The last 128 bits to the CRC register (see the assembly): x^95 and
	// x^63 mod P as the high half of a quadword, then Barrett's
	// mu = floor(x^64/P) and P itself, reflected as 64-bit values.
	k[24], k[25] = foldConst(95)<<32, foldConst(63)<<32
	k[26], k[27] = bits.Reverse64(barrettMu()), bits.Reverse64(0x104C11DB7)
	return k
}()

// barrettMu is floor(x^64 / P), in the ordinary bit order (bit i is x^i).
func barrettMu() uint64 {
	const p = 0x104C11DB7
	var q, r uint64
	for i := 64; i >= 0; i-- { // the dividend x^64, one bit at a time
		r <<= 1
		if i == 64 {
			r |= 1
		}
		if r>>32&1 != 0 {
			r ^= p
			q |= 1 << uint(i) // i ≤ 32: the quotient has degree 64 - 32
		}
	}
	return q
}
