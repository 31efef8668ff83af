package decode

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// Folding: the ICRC's CRC-32 in 64-byte blocks with carry-less multiplies
// (icrcFold, in assembly where the CPU has VPCLMULQDQ on 512-bit
// registers). hash/crc32 folds one 512-bit register at a time, so each
// block waits for the one before, and every call pays a fixed reduction:
// an ICRC in two calls, the masked head and then the rest, costs 66 ns
// for a 1 KiB payload (BenchmarkICRCRoCEv2 in bench/RESULTS.md). icrcFold
// takes both pieces in one pass, folds four registers side by side, and
// reduces the last 128 bits to the CRC register with two multiplies and
// Barrett's reduction: 39 ns. icrcDirect, where the CPU also has
// AVX512BW, folds a RoCEv2 packet without copying its head at all
// (masked loads, and a pattern ORed in for the variant fields): 23 ns.
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

// canDirect reports whether icrcDirect may be called: canFold, and the
// CPU has AVX512BW, for its masked byte loads.
var canDirect = canFold && cpu.X86.HasAVX512BW

// icrcDirect is the ICRC of a RoCEv2 packet, ip as ICRCRoCEv2 takes it
// with an IPv6 header (v6) or an IPv4 one of n bytes, folded straight from the
// packet, where icrcSum folds a masked copy of its head.
//
// A copy's bytes are in flight when the fold loads them: a 64-byte load
// that spans several stores cannot take its bytes from them, and waits
// until they have all reached the cache. That wait was most of the ICRC
// of a short packet (26 ns with no payload, 4.5 ns for the fold alone,
// in one run of ad hoc benchmarks).
// Here nothing is stored: the fold loads the packet's bytes, in whole
// blocks that end where ip ends (the message starts with zeros, which
// leave a CRC from a zero register as it is), and ORs its first three
// blocks with a pattern (icrcPat) that sets the pseudo-LRH and the
// variant fields. The bytes before ip are masked off in the loads
// (k0, k1): they read as zeros, and memory there is never touched.
func icrcDirect(ip []byte, n int, v6 bool) uint32 {
	row := &icrcPat[len(icrcPat)-1]
	if !v6 {
		row = &icrcPat[(n-20)/4]
	}
	z := -(len(ip) + 8) & 63 // zeros in front: whole blocks
	k0, k1 := ^uint64(0)<<uint(z+8), ^uint64(0)
	if z > 56 {
		k1 <<= uint(z - 56)
	}
	return icrcDirectK(ip, z, k0, k1, &row[icrcPatIP-8-z], &icrcK, &icrcDK)
}

// icrcDirectK is icrcDirect, in assembly: the blocks of the message that
// starts z+8 bytes before ip, the first two loaded with the byte masks
// k0 and k1, the first three ORed with pat's bytes; k's constants reduce
// the last register, dk's move a register by 0 to 6 blocks.
//
//go:noescape
func icrcDirectK(ip []byte, z int, k0, k1 uint64, pat *byte, k *[28]uint64, dk *[56]uint64) uint32

// icrcDK holds the constants that move a 512-bit register by b = 0 to 6
// blocks (0 to 3072 bits), row b of 64 bytes each, laid out as icrcK's:
// icrcDirectK's four registers, and the blocks after them, are moved
// onto the last block at once rather than each onto the next. Row 0 is
// zeros: a register "moved by none" is not moved but XORed in as it is.
var icrcDK = func() (k [56]uint64) {
	for b := 1; b <= 6; b++ {
		for l := range 4 {
			i := b*8 + 2*l
			k[i], k[i+1] = foldConst(512*b+31), foldConst(512*b-33)
		}
	}
	return k
}()

// icrcPat holds what icrcDirect ORs the first three blocks with: a row
// for each IPv4 header length (20 to 60 bytes) and, last, for IPv6; in
// each, the pseudo-LRH ends at icrcPatIP, where the IP header starts,
// and the variant fields are 1s (maskRoCEv2 on zeros). The first block
// starts up to 71 bytes before the IP header and the third ends up to
// 184 after it.
var icrcPat = func() (t [12][icrcPatIP + 192]byte) {
	for i := range t {
		r := &t[i]
		copy(r[icrcPatIP-8:], pseudoLRH[:])
		if i < len(t)-1 {
			maskRoCEv2(r[icrcPatIP:], 20+4*i, false)
		} else {
			maskRoCEv2(r[icrcPatIP:], 40, true)
		}
	}
	return t
}()

// icrcPatIP is where the IP header starts in a row of icrcPat.
const icrcPatIP = 128

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
