package decode

// PSN is a 24-bit packet sequence number (BTH). PSNs wrap at 2^24, so they
// are compared in serial-number arithmetic (IBA 9.7.1; the kernel's rxe
// psn_compare): a is before b when a−b, as a signed 24-bit number, is
// negative. Every package that orders, counts or steps PSNs uses these
// methods; none does its own modulo arithmetic.
type PSN uint32

// PSNMask keeps the 24 bits of a PSN.
const PSNMask = 1<<24 - 1

// PSNOf returns v's low 24 bits as a PSN.
func PSNOf(v uint32) PSN { return PSN(v & PSNMask) }

// Add returns the PSN n packets after a (n may be negative).
func (a PSN) Add(n int) PSN { return PSN(uint32(int64(a)+int64(n)) & PSNMask) }

// Next returns the PSN after a.
func (a PSN) Next() PSN { return (a + 1) & PSNMask }

// Diff returns a−b in serial arithmetic: from −2^23 to 2^23−1.
func (a PSN) Diff(b PSN) int32 { return int32(uint32(a-b)<<8) >> 8 }

// Dist returns a−b modulo 2^24: how many PSNs from b forward to a.
func (a PSN) Dist(b PSN) uint32 { return uint32(a-b) & PSNMask }

// Before reports whether a comes before b.
func (a PSN) Before(b PSN) bool { return a.Diff(b) < 0 }

// After reports whether a comes after b.
func (a PSN) After(b PSN) bool { return a.Diff(b) > 0 }

// In reports whether a lies in [first, last], both inclusive, in serial
// arithmetic.
func (a PSN) In(first, last PSN) bool { return a.Diff(first) >= 0 && last.Diff(a) >= 0 }

// InWindow reports lo <= a < hi, measured forward from lo modulo 2^24
// (a window of up to 2^24−1 PSNs).
func (a PSN) InWindow(lo, hi PSN) bool { return a.Dist(lo) < hi.Dist(lo) }
