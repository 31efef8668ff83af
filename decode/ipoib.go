package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// IPoIBLen is the length of the IPoIB encapsulation header.
const IPoIBLen = 4

// IPoIBPseudoLen is the length of the pseudo-header that precedes the
// IPoIB header in DLT_IPOIB (242) captures.
const IPoIBPseudoLen = 40

// IPoIBHdr is the IPoIB encapsulation header (RFC 4391 section 6), which
// starts the payload of every IPoIB SEND, on UD QPs (datagram mode) and
// on RC QPs (connected mode, RFC 4755) alike: the EtherType of what
// follows and 16 reserved bits, zero.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          Type (EtherType)     |       Reserved (zero)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// In a DLT_IPOIB (242) capture a 40-byte pseudo-header comes first, as
// Wireshark's packet-ipoib.c reads it: when its first 16 bits are zero it
// holds only the destination address (reserved byte 20, QPN in bytes
// 21-23, DGID in 24-39); otherwise it is a GRH-like header (IP version,
// traffic class and flow label in bytes 0-3, source QPN in 5-7, SGID in
// 8-23, DGID in 24-39).
type IPoIBHdr struct {
	layers.BaseLayer
	Type     uint16
	Reserved uint16

	// Pseudo-header (link type 242 only): Pseudo says it is there, GRH
	// whether it is the GRH form.
	Pseudo bool
	GRH    bool
	Word0  uint32 // bytes 0-3: IP version, traffic class, flow label
	SQPN   uint32
	SGID   [16]byte
	DQPN   uint32
	DGID   [16]byte
}

// LayerType returns LayerTypeIPoIB.
func (h *IPoIBHdr) LayerType() gopacket.LayerType { return LayerTypeIPoIB }

// CanDecode returns LayerTypeIPoIB.
func (h *IPoIBHdr) CanDecode() gopacket.LayerClass { return LayerTypeIPoIB }

// NextLayerType returns the layer of the EtherType: IPv4, IPv6 or ARP.
func (h *IPoIBHdr) NextLayerType() gopacket.LayerType {
	return layers.EthernetType(h.Type).LayerType()
}

// DecodeFromBytes decodes the 4-byte IPoIB header at the start of data.
func (h *IPoIBHdr) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IPoIBLen {
		df.SetTruncated()
		return truncated("ipoib", IPoIBLen, len(data))
	}
	h.Type = binary.BigEndian.Uint16(data)
	h.Reserved = binary.BigEndian.Uint16(data[2:])
	h.Pseudo = false
	h.BaseLayer = layers.BaseLayer{Contents: data[:IPoIBLen], Payload: data[IPoIBLen:]}
	return nil
}

// decodePseudo decodes DLT_IPOIB's 40-byte pseudo-header at the start of
// data, then the IPoIB header after it.
func (h *IPoIBHdr) decodePseudo(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IPoIBPseudoLen+IPoIBLen {
		df.SetTruncated()
		return truncated("ipoib pseudo-header", IPoIBPseudoLen+IPoIBLen, len(data))
	}
	if err := h.DecodeFromBytes(data[IPoIBPseudoLen:], df); err != nil {
		return err
	}
	h.Pseudo = true
	h.GRH = binary.BigEndian.Uint16(data) != 0
	h.Word0 = binary.BigEndian.Uint32(data)
	h.SQPN = binary.BigEndian.Uint32(data[4:]) & 0xFFFFFF
	copy(h.SGID[:], data[8:24])
	h.DQPN = binary.BigEndian.Uint32(data[20:]) & 0xFFFFFF
	copy(h.DGID[:], data[24:40])
	h.Contents = data[:IPoIBPseudoLen+IPoIBLen]
	return nil
}

// SerializeTo prepends the 4-byte IPoIB header (never the pseudo-header).
func (h *IPoIBHdr) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(IPoIBLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(d, h.Type)
	binary.BigEndian.PutUint16(d[2:], h.Reserved)
	return nil
}

func decodeIPoIB(data []byte, p gopacket.PacketBuilder) error {
	h := &IPoIBHdr{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return p.NextDecoder(h.NextLayerType())
}

// EtherTypes IPoIB carries (RFC 4391 section 6: IPv4, IPv6, ARP; RARP
// as Wireshark also hands it to ARP).
func ipoibEtherType(t uint16) bool {
	return t == 0x0800 || t == 0x86DD || t == 0x0806 || t == 0x8035
}

// IsIPoIB reports whether an InfiniBand payload of opcode op is taken as
// IPoIB: the first packet of a SEND (Only or First, with or without
// Immediate) on UD, RC or UC whose payload starts with the IPoIB header
// (an EtherType IPoIB carries and a zero reserved field) followed by what
// that EtherType says: an IPv4 or IPv6 header whose length fills the
// SEND Only exactly (runs past a SEND First, whose message goes on), or
// an ARP packet with IPoIB's 20-byte hardware addresses. MADs (QP0/QP1)
// are never IPoIB. Wireshark's test (packet-infiniband.c hands any
// payload whose reserved field is zero to the EtherType table) takes
// other SEND payloads too: an NVMe-oF command capsule of opcode 0x08 and
// command id 0 starts 08 00 00 00.
func IsIPoIB(op Opcode, payload []byte) bool { return isIPoIB(op, payload, false) }

// isIPoIB is IsIPoIB for a payload that may be cut by the capture
// (snapped): its IP packet may then run past it.
func isIPoIB(op Opcode, payload []byte, snapped bool) bool {
	if !op.Is(PropSend|PropStart) || len(payload) < IPoIBLen || payload[2] != 0 || payload[3] != 0 {
		return false
	}
	switch op.Transport() {
	case TransportUD, TransportRC, TransportUC:
	default:
		return false
	}
	rest := payload[IPoIBLen:]
	fits := func(n int) bool {
		if op.Is(PropEnd) && !snapped {
			return n == len(rest)
		}
		return n >= len(rest) // SEND First, or cut by the capture
	}
	switch binary.BigEndian.Uint16(payload) {
	case 0x0800:
		return len(rest) >= 20 && rest[0]>>4 == 4 && rest[0]&0xF >= 5 && fits(int(binary.BigEndian.Uint16(rest[2:])))
	case 0x86DD:
		return len(rest) >= 40 && rest[0]>>4 == 6 && fits(40+int(binary.BigEndian.Uint16(rest[4:])))
	case 0x0806, 0x8035:
		// Hardware type InfiniBand (32), 20-byte hardware and 4-byte
		// protocol addresses (RFC 4391 section 8), cut or not.
		return len(rest) >= 6 && binary.BigEndian.Uint16(rest) == 32 && rest[4] == 20 && rest[5] == 4
	}
	return false
}

// ipoibPayload decodes an IPoIB SEND's payload: the IPoIB header, then
// IPv4, IPv6 or ARP. The packet has no IP header of its own (native
// InfiniBand, RoCEv1), so the carried IP header fills p.IPv4/p.IPv6 and
// the ip.*, udp.*, tcp.* fields read it as on Ethernet. The IP packet of
// a SEND First goes on in the next packets: that it is cut here is
// neither truncation nor malformation.
func (d *Decoder) ipoibPayload(p *Packet, payload []byte, snapped bool) {
	if err := p.IPoIB.DecodeFromBytes(payload, noFeedback); err != nil {
		return
	}
	p.Has |= HdrIPoIB
	flags, perr := p.Flags, p.Err
	d.ipoibNext(p, payload[IPoIBLen:], snapped)
	if p.Has&HdrBTH != 0 && !p.BTH.Opcode.Is(PropEnd) {
		p.Flags, p.Err = flags, perr
	}
}

// ipoibInner decodes an IPoIB SEND's payload inside a RoCEv2 packet,
// whose own IP and UDP headers are already in p: the carried IP and UDP
// headers go to p.inner (fields show them as second occurrences), the
// IPoIB header, ARP, ICMP, ICMPv6, TCP and data to p as usual.
func (d *Decoder) ipoibInner(p *Packet, payload []byte, snapped bool) {
	q := p.inner
	if q == nil {
		q = new(Packet)
		p.inner = q
	}
	// HdrBTH keeps a UDP datagram to port 4791 from being taken for
	// RoCEv2 again; HdrIPoIB makes UDP payload data.
	q.Has, q.Flags, q.Err, q.Data = HdrBTH, 0, nil, nil
	q.Frame.Data, q.L3Off, q.L4Off = p.Frame.Data, 0, 0
	d.ipoibPayload(q, payload, snapped)
	if q.Has&HdrIPoIB == 0 {
		return
	}
	const own = HdrIPoIB | HdrARP | HdrICMP | HdrICMPv6 | HdrTCP | HdrData
	p.Has |= q.Has & own
	p.IPoIB, p.ARP, p.ICMPv4, p.ICMPv6, p.TCP, p.Data = q.IPoIB, q.ARP, q.ICMPv4, q.ICMPv6, q.TCP, q.Data
	if q.Has&(HdrIPv4|HdrIPv6|HdrUDP) != 0 {
		p.Has |= HdrInner
	}
	p.Flags |= q.Flags
	if p.Err == nil {
		p.Err = q.Err
	}
}

// Inner returns the IP and UDP headers an IPoIB SEND carries inside a
// RoCEv2 packet (valid when p.Has has HdrInner): a Packet whose Has,
// IPv4, IPv6, UDP, L3Off and L4Off describe them.
func (p *Packet) Inner() *Packet {
	if p.Has&HdrInner == 0 {
		return nil
	}
	return p.inner
}

// ipoibNext dispatches on the IPoIB header's EtherType.
func (d *Decoder) ipoibNext(p *Packet, data []byte, snapped bool) {
	switch p.IPoIB.Type {
	case 0x0800:
		d.ipv4(p, data, snapped)
	case 0x86DD:
		d.ipv6(p, data, snapped)
	case 0x0806, 0x8035:
		d.arp(p, data)
	}
}

// ipoibLink decodes a DLT_IPOIB (242) frame: the 40-byte pseudo-header,
// the IPoIB header, then what it carries.
func (d *Decoder) ipoibLink(p *Packet, data []byte, snapped bool) {
	if err := p.IPoIB.decodePseudo(data, noFeedback); err != nil {
		p.truncatedAt("ipoib", IPoIBPseudoLen+IPoIBLen, len(data))
		return
	}
	p.Has |= HdrIPoIB
	if !ipoibEtherType(p.IPoIB.Type) {
		if p.Err == nil {
			p.Err = fmt.Errorf("ipoib: EtherType 0x%04x is not IPv4, IPv6 or ARP", p.IPoIB.Type)
		}
		return
	}
	d.ipoibNext(p, data[IPoIBPseudoLen+IPoIBLen:], snapped)
}

// IPIsPayload reports whether p's IP (and UDP, TCP, ...) headers are the
// payload of an IPoIB SEND inside an InfiniBand packet (native or
// RoCEv1) rather than the packet's own: the GIDs or LIDs then name the
// nodes, and the IP header's ECN bits are not the packet's.
func (p *Packet) IPIsPayload() bool {
	return p.Has&(HdrIPoIB|HdrBTH|HdrInner) == HdrIPoIB|HdrBTH && p.Encap != EncapRoCEv2
}
