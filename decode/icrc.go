package decode

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ICRCLen and VCRCLen are the lengths of the invariant and variant CRCs.
const (
	ICRCLen = 4
	VCRCLen = 2
)

// CRCStatus is the result of checking an ICRC or VCRC.
type CRCStatus uint8

// CRC check results.
const (
	CRCAbsent       CRCStatus = iota // no CRC in the packet (not InfiniBand)
	CRCGood                          // computed value equals the captured one
	CRCBad                           // computed value differs
	CRCUnverifiable                  // the frame was cut by the snapshot length
)

var crcStatusNames = [...]string{"absent", "good", "bad", "unverifiable"}

func (s CRCStatus) String() string {
	if int(s) < len(crcStatusNames) {
		return crcStatusNames[s]
	}
	return "unknown"
}

// ICRC is the Invariant CRC trailer (IBA 7.8.1): a CRC-32 over the fields of
// the packet that do not change from end to end. CRC is the four trailer
// bytes read big-endian (as Wireshark shows them); the CRC is transmitted
// least significant byte first, so Value returns the CRC-32 itself.
type ICRC struct {
	layers.BaseLayer
	CRC uint32
	// Pad holds the 0-3 pad bytes before the trailer when the packet was
	// decoded through gopacket, so that SerializeTo reproduces the packet.
	// Pad is not payload (IBA 9.2).
	Pad []byte
}

func (h *ICRC) LayerType() gopacket.LayerType     { return LayerTypeICRC }
func (h *ICRC) CanDecode() gopacket.LayerClass    { return LayerTypeICRC }
func (h *ICRC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Value returns the CRC-32 the trailer carries (the wire bytes little-endian).
func (h *ICRC) Value() uint32 { return swap32(h.CRC) }

// DecodeFromBytes decodes the 4-byte ICRC.
func (h *ICRC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ICRCLen {
		df.SetTruncated()
		return truncated("icrc", ICRCLen, len(data))
	}
	h.CRC = binary.BigEndian.Uint32(data)
	h.Contents, h.Payload = data[:ICRCLen], data[ICRCLen:]
	return nil
}

// SerializeTo appends the ICRC. Its value is h.CRC; compute it over the
// finished frame with FixCRCs.
func (h *ICRC) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.AppendBytes(len(h.Pad) + ICRCLen)
	if err != nil {
		return err
	}
	n := copy(d, h.Pad)
	binary.BigEndian.PutUint32(d[n:], h.CRC)
	return nil
}

// VCRC is the Variant CRC trailer of native InfiniBand packets (IBA 7.8.2): a
// CRC-16 over every byte from the LRH through the ICRC. CRC is the two bytes
// read big-endian; Value returns the CRC-16 (transmitted LSB first).
type VCRC struct {
	layers.BaseLayer
	CRC uint16
}

func (h *VCRC) LayerType() gopacket.LayerType     { return LayerTypeVCRC }
func (h *VCRC) CanDecode() gopacket.LayerClass    { return LayerTypeVCRC }
func (h *VCRC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Value returns the CRC-16 the trailer carries.
func (h *VCRC) Value() uint16 { return h.CRC>>8 | h.CRC<<8 }

// DecodeFromBytes decodes the 2-byte VCRC.
func (h *VCRC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < VCRCLen {
		df.SetTruncated()
		return truncated("vcrc", VCRCLen, len(data))
	}
	h.CRC = binary.BigEndian.Uint16(data)
	h.Contents, h.Payload = data[:VCRCLen], data[VCRCLen:]
	return nil
}

// SerializeTo appends the VCRC (value h.CRC; see FixCRCs).
func (h *VCRC) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.AppendBytes(VCRCLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(d, h.CRC)
	return nil
}

func swap32(v uint32) uint32 { return v>>24 | v>>8&0xFF00 | v<<8&0xFF0000 | v<<24 }

// The ICRC is a CRC-32 over masked headers and then the rest of the
// packet. It is computed in whole 64-byte blocks: the masked headers, with
// the few bytes after them that make the rest of the packet a whole number
// of blocks, are copied into a scratch buffer behind zero bytes, and the
// rest is taken from the frame. icrcFold (icrc_fold_amd64.go) folds the
// two pieces in one pass where the CPU has VPCLMULQDQ on 512-bit
// registers; elsewhere hash/crc32 takes them in two calls, which it runs
// on whole blocks (PCLMULQDQ) rather than through slicing-by-8 for the
// tails. (A RoCEv2 packet's ICRC, where the CPU also has AVX512BW, copies
// nothing: icrcDirect.) This rests on two properties of the CRC register:
//
//   - a CRC started from the all-ones register equals the CRC started from
//     a zero register over the same bytes with the first four complemented
//     (the register is XORed into the next four bytes);
//   - from a zero register, leading zero bytes leave the register at zero.
//
// So the scratch holds zeros, then the head (pseudo-LRH or LRH, masked
// headers) with its first four bytes complemented, and the CRC starts from
// a zero register: crc32.Update(^0, ...). A short packet is copied whole.
//
// The scratch is icrcPad zero bytes (the most a head needs in front to
// fill its last block), room for the longest head (icrcHeadMax) and the up
// to 63 bytes copied after it.
const (
	icrcPad     = 64
	icrcHeadMax = 8 + 60 + 8 + BTHLen // pseudo-LRH, IPv4 with options, UDP, BTH
	icrcScratch = icrcPad + icrcHeadMax + 63
)

// icrcSum returns the CRC-32 of a head followed by body. The head is
// s[icrcPad:icrcPad+h], masked, with its first four bytes complemented.
func icrcSum(s *[icrcScratch]byte, h int, body []byte) uint32 {
	k := len(body) & 63 // to the scratch, so that the rest is whole blocks
	n := h + copy(s[icrcPad+h:], body[:k])
	z := -n & 63 // zeros in front: whole blocks
	clear(s[icrcPad-z : icrcPad])
	head, rest := s[icrcPad-z:icrcPad+n], body[k:]
	if canFold {
		return icrcFold(head, rest)
	}
	return crcPieces(head, rest)
}

// crcPieces is the CRC-32 of head and then rest from a zero register,
// through hash/crc32: what crc32.Update(^0, crc32.IEEETable, ...) of the
// two together returns.
func crcPieces(head, rest []byte) uint32 {
	return crc32.Update(crc32.Update(^uint32(0), crc32.IEEETable, head), crc32.IEEETable, rest)
}

// putOnes writes the pseudo-LRH, eight bytes of 1s in place of the LRH of
// every packet that carries a GRH or an IP header (IBA 7.8.1, A16, A17),
// as the head's first bytes (the first four complemented, see icrcSum).
func putOnes(s *[icrcScratch]byte) {
	*(*[8]byte)(s[icrcPad:]) = pseudoLRH
}

// pseudoLRH is the pseudo-LRH as putOnes writes it.
var pseudoLRH = [8]byte{0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}

// ICRCRoCEv2 computes the ICRC of a RoCEv2 packet. ip is the frame from the
// first byte of the IPv4 or IPv6 header to the last byte before the ICRC
// (IP header, UDP header, BTH, extended headers, payload and pad). Variant
// fields (IPv4 TOS, TTL and checksum; IPv6 traffic class, flow label and hop
// limit; UDP checksum; BTH FECN/BECN/reserved byte) count as all 1s, after a
// pseudo-LRH of eight 1-bytes.
func ICRCRoCEv2(ip []byte) (uint32, bool) {
	return icrcRoCEv2(ip, new([icrcScratch]byte))
}

// icrcRoCEv2 is ICRCRoCEv2 with a caller-owned scratch buffer (the
// Packet's: a buffer on the stack would escape, since crc32.Update calls
// through a function variable), which icrcDirect, where the CPU has it,
// does not use.
func icrcRoCEv2(ip []byte, s *[icrcScratch]byte) (uint32, bool) {
	if len(ip) < 1 {
		return 0, false
	}
	var n int
	v6 := false
	switch ip[0] >> 4 {
	case 4:
		n = int(ip[0]&0x0F) * 4
		if n < 20 {
			return 0, false
		}
	case 6:
		n, v6 = 40, true
	default:
		return 0, false
	}
	m := n + 8 + BTHLen
	if len(ip) < m {
		return 0, false
	}
	if canDirect {
		return icrcDirect(ip, n, v6), true
	}
	putOnes(s)
	h := s[icrcPad+8 : icrcPad+8+m]
	copy(h, ip)
	maskRoCEv2(h, n, v6)
	return icrcSum(s, 8+m, ip[m:]), true
}

// maskRoCEv2 sets the variant fields of h, a RoCEv2 packet's IP header
// (IPv6, or IPv4 of n bytes), UDP header and BTH, to 1s (ICRCRoCEv2). On
// zeros it writes the pattern icrcDirect ORs the packet with.
func maskRoCEv2(h []byte, n int, v6 bool) {
	if v6 {
		h[0] |= 0x0F // traffic class
		h[1], h[2], h[3] = 0xFF, 0xFF, 0xFF
		h[7] = 0xFF // hop limit
	} else {
		h[1] = 0xFF               // TOS
		h[8] = 0xFF               // TTL
		h[10], h[11] = 0xFF, 0xFF // header checksum
	}
	h[n+6], h[n+7] = 0xFF, 0xFF // UDP checksum
	h[n+8+4] = 0xFF             // BTH FECN, BECN, reserved
}

// ICRCGRH computes the ICRC of a RoCEv1 packet or of a native InfiniBand
// packet (IBA 7.8.1). rest is the GRH (when hasGRH), BTH, extended headers,
// payload and pad, up to the ICRC; lrh is the LRH of a native packet (nil
// for RoCEv1).
//
// Whether the LRH is covered depends on the GRH, not on the link: routers
// rewrite the LRH of a packet that carries a GRH, so the ICRC of such a
// packet (native LNH 3, and every RoCEv1 packet) starts with eight bytes of
// 1s in place of the LRH, and lrh is ignored. Only an LRH-only packet (LNH
// 2), which never leaves its subnet, covers its LRH, with just the VL
// masked. The GRH's traffic class, flow label and hop limit, and BTH byte
// 4, count as 1s.
func ICRCGRH(lrh []byte, hasGRH bool, rest []byte) (uint32, bool) {
	return icrcGRH(new([icrcScratch]byte), lrh, hasGRH, rest)
}

// icrcGRH is ICRCGRH with a caller-owned scratch buffer.
func icrcGRH(s *[icrcScratch]byte, lrh []byte, hasGRH bool, rest []byte) (uint32, bool) {
	if lrh != nil && !hasGRH {
		if len(lrh) < LRHLen {
			return 0, false
		}
		l := s[icrcPad : icrcPad+LRHLen]
		copy(l, lrh)
		l[0] |= 0xF0 // VL masked
		for i := range 4 {
			l[i] = ^l[i] // the head's first four bytes complemented (icrcSum)
		}
	} else {
		putOnes(s)
	}
	n := BTHLen
	if hasGRH {
		n += GRHLen
	}
	if len(rest) < n {
		return 0, false
	}
	h := s[icrcPad+8 : icrcPad+8+n]
	copy(h, rest)
	if hasGRH {
		h[0] |= 0x0F // traffic class
		h[1], h[2], h[3] = 0xFF, 0xFF, 0xFF
		h[7] = 0xFF // hop limit
	}
	h[n-BTHLen+4] = 0xFF // BTH FECN, BECN, reserved
	return icrcSum(s, 8+n, rest[n:]), true
}

var vcrcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008 // x^16+x^12+x^3+x+1 (0x100B), reflected
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// ComputeVCRC computes the VCRC over data (LRH through ICRC).
func ComputeVCRC(data []byte) uint16 {
	c := uint16(0xFFFF)
	for _, b := range data {
		c = vcrcTable[byte(c)^b] ^ c>>8
	}
	return c ^ 0xFFFF
}
