package decode

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestICRCFold holds icrcFold to hash/crc32 on heads of 1 to 4 blocks
// and rests of 0 to 70 blocks (every path: no rest, the one-register tail alone,
// the four-register setup and combine, its loop, and the tail after it),
// with the rest at each of 64 alignments inside random bytes, so that a
// read past its end would change the CRC.
func TestICRCFold(t *testing.T) {
	if !canFold {
		t.Skip("this CPU has no VPCLMULQDQ on 512-bit registers; TestICRCBlocks* test the hash/crc32 path")
	}
	r := rand.New(rand.NewPCG(15, 4))
	buf := make([]byte, 64*80+128)
	for hb := 1; hb <= 4; hb++ {
		for rb := 0; rb <= 70; rb++ {
			for off := range 64 {
				for i := range buf {
					buf[i] = byte(r.Uint32())
				}
				head := make([]byte, 64*hb+2)[1 : 1+64*hb]
				for i := range head {
					head[i] = byte(r.Uint32())
				}
				rest := buf[off : off+64*rb]
				want := crc32.Update(crc32.Update(^uint32(0), crc32.IEEETable, head), crc32.IEEETable, rest)
				if got := icrcFold(head, rest); got != want {
					t.Fatalf("head %d blocks, rest %d blocks at offset %d: icrcFold %08x, hash/crc32 %08x", hb, rb, off, got, want)
				}
			}
		}
	}
}

// TestICRCFoldPieces hands icrcFold pieces that are not whole blocks,
// which it must pass to hash/crc32 rather than to the assembly (which
// would read past them): on any amd64 CPU, since the check comes first.
func TestICRCFoldPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 5))
	buf := make([]byte, 512)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, n := range [][2]int{{0, 64}, {10, 0}, {63, 64}, {65, 0}, {64, 1}, {128, 100}} {
		head, rest := buf[:n[0]], buf[200:200+n[1]]
		want := crc32.Update(crc32.Update(^uint32(0), crc32.IEEETable, head), crc32.IEEETable, rest)
		if got := icrcFold(head, rest); got != want {
			t.Errorf("head %d bytes, rest %d: icrcFold %08x, hash/crc32 %08x", n[0], n[1], got, want)
		}
	}
}
