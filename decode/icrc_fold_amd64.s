#include "textflag.h"

// func icrcFoldK(head, rest []byte, k *[28]uint64) uint32
//
// See icrc_fold_amd64.go. Z1 is the running 512-bit remainder; Z0 folds it by
// 512 bits, Z10 four registers (Z1, Z4, Z5, Z6) by 2048. Each fold of a
// register X onto the data D that follows: X = X.lo64·k.lo ^ X.hi64·k.hi
// ^ D, lane by lane (VPCLMULQDQ $0x00 and $0x11, then a three-way XOR).
// Every EVEX instruction here works on 512-bit registers (AVX512F or
// VPCLMULQDQ; none needs AVX512VL); icrcDirectK's masked byte loads
// (VMOVDQU8) and its KMOVQ (VEX) need AVX512BW too. After VZEROUPPER only
// VEX forms on X registers and MOVQ between X and general registers
// follow.

// FOLD folds register X by the constants K onto the data register D,
// using T as scratch.
#define FOLD(K, X, D, T) \
	VPCLMULQDQ $0x00, K, X, T \
	VPCLMULQDQ $0x11, K, X, X \
	VPTERNLOGD $0x96, D, T, X

// FOLDFOUR folds the four registers Z1, Z4, Z5 and Z6 by 2048 bits (Z10)
// onto the four blocks at P, and moves P and DX (the bytes left) past
// them.
#define FOLDFOUR(P) \
	VMOVDQU64 (P), Z11 \
	VMOVDQU64 64(P), Z12 \
	VMOVDQU64 128(P), Z13 \
	VMOVDQU64 192(P), Z14 \
	FOLD(Z10, Z1, Z11, Z7) \
	FOLD(Z10, Z4, Z12, Z8) \
	FOLD(Z10, Z5, Z13, Z9) \
	FOLD(Z10, Z6, Z14, Z15) \
	ADDQ      $256, P \
	SUBQ      $256, DX

// REDUCE reduces Z1, the last 512-bit remainder (AX: k), to the CRC,
// complemented, in R8; it is expanded in both functions below. (A macro
// holds no comments, so its steps are told here.)
//   - lanes 0, 1 and 2 moved onto lane 3 by their constants (lane
//     3's are zero, so its product is zero and is not extracted); the
//     three products and lane 3 as it was are XORed into X2 = V, the
//     first eight bytes H in its low quadword, the next eight L in its
//     high one; the CRC register is V·x^32 mod P;
//   - X5 = x^95 mod P and x^63 mod P, X6 = mu and P (k[24:28]);
//     T = H·(x^95 mod P)·x + L·x^32 ≡ V·x^32, of degree below 96; then
//     T2, its degrees 64 to 95, times x^63 mod P, times x: the register's
//     high quadword is then t ≡ T, of degree below 64;
//   - Barrett: q = floor(floor(t/x^32)·mu/x^32); the CRC is
//     (t + q·P) mod x^32.
#define REDUCE \
	VMOVDQU64     128(AX), Z10 \
	VPCLMULQDQ    $0x00, Z10, Z1, Z2 \
	VPCLMULQDQ    $0x11, Z10, Z1, Z3 \
	VPXORQ        Z3, Z2, Z2 \
	VEXTRACTI32X4 $1, Z2, X3 \
	VEXTRACTI32X4 $2, Z2, X4 \
	VEXTRACTI32X4 $3, Z1, X5 \
	VZEROUPPER \
	VPXOR         X3, X2, X2 \
	VPXOR         X4, X2, X2 \
	VPXOR         X5, X2, X2 \
	VMOVDQU    192(AX), X5 \
	VMOVDQU    208(AX), X6 \
	VPCLMULQDQ $0x00, X5, X2, X3 \
	VPSRLDQ    $8, X2, X4 \
	VPSLLDQ    $4, X4, X4 \
	VPXOR      X4, X3, X3 \
	VPCLMULQDQ $0x10, X5, X3, X4 \
	VPXOR      X3, X4, X4 \
	VPEXTRQ    $1, X4, R8 \
	MOVL       R8, R9 \
	MOVQ       R9, X7 \
	VPCLMULQDQ $0x00, X6, X7, X7 \
	MOVQ       X7, R10 \
	SHRQ       $31, R10 \
	SHLQ       $32, R10 \
	MOVQ       R10, X7 \
	VPCLMULQDQ $0x10, X6, X7, X7 \
	VPEXTRQ    $1, X7, R11 \
	SHRQ       $31, R11 \
	SHRQ       $32, R8 \
	XORL       R11, R8 \
	NOTL       R8


TEXT ·icrcFoldK(SB), NOSPLIT, $0-60
	MOVQ head_base+0(FP), SI
	MOVQ head_len+8(FP), CX
	MOVQ rest_base+24(FP), DI
	MOVQ rest_len+32(FP), DX
	MOVQ k+48(FP), AX

	VMOVDQU64 (AX), Z0
	VMOVDQU64 (SI), Z1
	ADDQ      $64, SI
	SUBQ      $64, CX

head:
	CMPQ      CX, $64
	JB        four
	VMOVDQU64 (SI), Z2
	FOLD(Z0, Z1, Z2, Z3)
	ADDQ      $64, SI
	SUBQ      $64, CX
	JMP       head

four:
	CMPQ      DX, $256
	JB        one
	VMOVDQU64 64(AX), Z10
	VMOVDQU64 (DI), Z2
	FOLD(Z0, Z1, Z2, Z3)
	VMOVDQU64 64(DI), Z4
	VMOVDQU64 128(DI), Z5
	VMOVDQU64 192(DI), Z6
	ADDQ      $256, DI
	SUBQ      $256, DX

fourLoop:
	CMPQ      DX, $256
	JB        fourDone
	FOLDFOUR(DI)
	JMP       fourLoop

fourDone:
	// The four registers into one: Z1 onto Z4, onto Z5, onto Z6.
	FOLD(Z0, Z1, Z4, Z3)
	FOLD(Z0, Z1, Z5, Z3)
	FOLD(Z0, Z1, Z6, Z3)

one:
	CMPQ      DX, $64
	JB        lanes
	VMOVDQU64 (DI), Z2
	FOLD(Z0, Z1, Z2, Z3)
	ADDQ      $64, DI
	SUBQ      $64, DX
	JMP       one

lanes:
	REDUCE
	MOVL R8, ret+56(FP)
	RET

// func icrcDirectK(ip []byte, z int, k0, k1 uint64, pat *byte, k *[28]uint64, dk *[56]uint64) uint32
//
// See icrcDirect. The message is z zeros, the pseudo-LRH's eight bytes
// and ip: block 0 starts z+8 bytes before ip. Blocks 0 and 1 are loaded
// with masks k0 and k1 (masked bytes, before ip, read as zeros and never
// from memory), blocks 0 to 2 ORed with the pattern at pat.
//
// Its folds run side by side: blocks 0 to 3 are four registers at once
// (Z1, Z4, Z5, Z6), folded by 2048 bits onto each next four; then the
// r = 0 to 3 blocks left (the last) are folded one onto the next (Z2),
// while the four registers are moved by r+3, r+2, r+1 and r blocks (dk:
// the constants that move a register by 0 to 6 blocks); all are XORed
// into Z1. A message of fewer than four blocks folds them one at a time.
TEXT ·icrcDirectK(SB), NOSPLIT, $0-76
	MOVQ ip_base+0(FP), SI
	MOVQ ip_len+8(FP), DX
	MOVQ z+24(FP), BX
	MOVQ k0+32(FP), R8
	MOVQ k1+40(FP), R9
	MOVQ pat+48(FP), R10
	MOVQ k+56(FP), AX
	MOVQ dk+64(FP), CX

	LEAQ 8(DX)(BX*1), DX // the message's length, whole blocks
	SUBQ BX, SI
	SUBQ $8, SI          // block 0

	KMOVQ      R8, K1
	KMOVQ      R9, K2
	VMOVDQU8.Z (SI), K1, Z1
	VPORQ      (R10), Z1, Z1
	CMPQ       DX, $256
	JB         short

	VMOVDQU8.Z 64(SI), K2, Z4
	VPORQ      64(R10), Z4, Z4
	VMOVDQU64  128(SI), Z5
	VPORQ      128(R10), Z5, Z5
	VMOVDQU64  192(SI), Z6
	ADDQ       $256, SI
	SUBQ       $256, DX
	VMOVDQU64  64(AX), Z10 // by 2048 bits

fours:
	CMPQ      DX, $256
	JB        left
	FOLDFOUR(SI)
	JMP       fours

left:
	// r = DX/64 blocks left, 0 to 3, the last ones: Z2 = the first
	// folded by a block onto each next, or Z6 when there are none (and
	// Z6 moved by 0 blocks: dk's row 0 is zeros); R11 = dk's row r.
	LEAQ      (CX)(DX*1), R11
	TESTQ     DX, DX
	JNZ       some
	VMOVDQA64 Z6, Z2
	JMP       combine

some:
	VMOVDQU64 64(CX), Z9
	VMOVDQU64 (SI), Z2

someLoop:
	ADDQ      $64, SI
	SUBQ      $64, DX
	JZ        combine
	VMOVDQU64 (SI), Z3
	FOLD(Z9, Z2, Z3, Z7)
	JMP       someLoop

combine:
	VMOVDQU64  192(R11), Z7
	VMOVDQU64  128(R11), Z8
	VMOVDQU64  64(R11), Z9
	VMOVDQU64  (R11), Z10
	VPCLMULQDQ $0x00, Z7, Z1, Z11
	VPCLMULQDQ $0x11, Z7, Z1, Z1
	VPCLMULQDQ $0x00, Z8, Z4, Z12
	VPCLMULQDQ $0x11, Z8, Z4, Z4
	VPCLMULQDQ $0x00, Z9, Z5, Z13
	VPCLMULQDQ $0x11, Z9, Z5, Z5
	VPCLMULQDQ $0x00, Z10, Z6, Z14
	VPCLMULQDQ $0x11, Z10, Z6, Z6
	VPTERNLOGD $0x96, Z11, Z2, Z1
	VPTERNLOGD $0x96, Z12, Z4, Z1
	VPTERNLOGD $0x96, Z13, Z5, Z1
	VPTERNLOGD $0x96, Z14, Z6, Z1
	JMP        reduce

short:
	// one to three blocks, one at a time
	VMOVDQU64  (AX), Z0 // by 512 bits
	SUBQ       $64, DX
	JZ         reduce
	VMOVDQU8.Z 64(SI), K2, Z2
	VPORQ      64(R10), Z2, Z2
	FOLD(Z0, Z1, Z2, Z3)
	SUBQ       $64, DX
	JZ         reduce
	VMOVDQU64  128(SI), Z2
	VPORQ      128(R10), Z2, Z2
	FOLD(Z0, Z1, Z2, Z3)

reduce:
	REDUCE
	MOVL R8, ret+72(FP)
	RET
