package decode

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

// TestICRCDirectGuardPages puts RoCEv2 packets against pages that may not
// be read: starting where one ends and ending where one starts. icrcDirect
// loads whole blocks that begin up to 71 bytes before the packet; the
// bytes before it must be masked off, not read (they read as zeros, or the
// pseudo-LRH's 1s hide them), so that a packet at the start of a mapping
// does not fault. A mask that let one byte through would crash the test
// here, where the values alone could not tell (TestICRCBlocksRoCEv2). Its
// value is checked against the hash/crc32 path.
func TestICRCDirectGuardPages(t *testing.T) {
	if !canDirect {
		t.Skip("this CPU lacks AVX-512 VPCLMULQDQ or AVX512BW: icrcDirect is never called; TestICRCBlocks* test the other paths")
	}
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	// pages 0 and 2 may not be touched; page 1 holds the packets
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	mid := mem[page : 2*page]
	r := rand.New(rand.NewPCG(15, 6))
	var s [icrcScratch]byte
	hdrs := []int{-40} // IPv6, and every IPv4 header length
	for n := 20; n <= 60; n += 4 {
		hdrs = append(hdrs, n)
	}
	for _, hdr := range hdrs {
		n := max(hdr, -hdr)
		// 1 to 20 blocks: every path of the fold (one to three blocks,
		// four, the loop of four, and 0 to 3 blocks after it) at every
		// number of leading zeros
		for l := n + 8 + BTHLen; l <= n+8+BTHLen+1200; l++ {
			for _, ip := range [][]byte{mid[:l], mid[page-l:]} {
				randRoCEv2(r, ip, hdr)
				want := rawICRCPath(t, ip, &s, icrcPath{"crc32", false, false})
				got := rawICRCPath(t, ip, &s, icrcPath{"icrcDirect", true, true})
				if got != want {
					t.Fatalf("IP header %d, %d bytes at page offset %d: icrcDirect %08x, hash/crc32 %08x", hdr, l, len(mid)-cap(ip), got, want)
				}
			}
		}
	}
}

// rawICRCPath is icrcRoCEv2 of ip on path p.
func rawICRCPath(t *testing.T, ip []byte, s *[icrcScratch]byte, p icrcPath) uint32 {
	t.Helper()
	defer p.use()()
	v, ok := icrcRoCEv2(ip, s)
	if !ok {
		t.Fatalf("icrcRoCEv2 refused a %d-byte packet", len(ip))
	}
	return v
}
