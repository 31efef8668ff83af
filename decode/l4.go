package decode

// Protocols rocetap summarises but does not analyse: ARP, ICMP, ICMPv6,
// TCP and LLDP, on Ethernet, Linux cooked and raw-IP frames and inside
// IPoIB. gopacket's layers decode them, in place in the Packet; rocetap
// only records what tshark shows of them (fields_l4.go) and the Info
// column (internal/printer).

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// EtherTypes of the protocols above.
const (
	etherTypeARP  = 0x0806
	etherTypeRARP = 0x8035
	etherTypeLLDP = 0x88CC
)

// IP protocol numbers of the protocols above.
const (
	ipProtoICMP   = 1
	ipProtoTCP    = 6
	ipProtoICMPv6 = 58
)

// arp decodes an ARP packet with gopacket's layer, which takes any
// hardware address size (6 on Ethernet, 20 on IPoIB: RFC 4391 section 8).
func (d *Decoder) arp(p *Packet, data []byte) {
	if err := p.ARP.DecodeFromBytes(data, noFeedback); err != nil {
		need := 8
		if len(data) >= 6 {
			need += 2*int(data[4]) + 2*int(data[5])
		}
		p.truncatedAt("arp", need, len(data))
		return
	}
	p.Has |= HdrARP
}

// lldp decodes an LLDP frame with gopacket's layer. gopacket has no
// DecodeFromBytes for it, so this one allocates (LLDP is rare: one frame
// every 30 s per port).
func (d *Decoder) lldp(p *Packet, data []byte) {
	pk := gopacket.NewPacket(data, layers.LayerTypeLinkLayerDiscovery, gopacket.DecodeOptions{NoCopy: true})
	l, ok := pk.Layer(layers.LayerTypeLinkLayerDiscovery).(*layers.LinkLayerDiscovery)
	if !ok {
		p.truncatedAt("lldp", len(data)+1, len(data))
		return
	}
	p.LLDP = *l
	p.Has |= HdrLLDP
}

// ipProto decodes what an IP header other than UDP carries: ICMP, TCP,
// ICMPv6. data runs from the end of the IP header (and its extension
// headers) to the end of the IP packet within the captured bytes; short
// says the IP packet runs past them, cut by the snapshot length when
// snapped, else shorter on the wire than its header says (malformed).
func (d *Decoder) ipProto(p *Packet, proto uint8, data []byte, short, snapped bool) {
	if short {
		if snapped {
			p.Flags |= FlagTruncated
			if p.Err == nil {
				p.Err = errSnapped
			}
		} else {
			p.malformed(fmt.Errorf("ip: the length field runs past the frame (%d bytes of payload left): %w", len(data), ErrMalformed))
		}
	}
	switch proto {
	case ipProtoICMP:
		if err := p.ICMPv4.DecodeFromBytes(data, noFeedback); err != nil {
			p.truncatedAt("icmp", 8, len(data))
			return
		}
		p.Has |= HdrICMP
		if t := p.ICMPv4.TypeCode.Type(); t == 0 || t == 8 {
			p.setData(p.ICMPv4.Payload) // echo data
		}
	case ipProtoICMPv6:
		if err := p.ICMPv6.DecodeFromBytes(data, noFeedback); err != nil {
			p.truncatedAt("icmpv6", 4, len(data))
			return
		}
		p.Has |= HdrICMPv6
		if t := p.ICMPv6.TypeCode.Type(); (t == 128 || t == 129) && len(p.ICMPv6.Payload) >= 4 {
			p.setData(p.ICMPv6.Payload[4:]) // echo data after id and seq
		}
	case ipProtoTCP:
		if err := p.TCP.DecodeFromBytes(data, noFeedback); err != nil {
			if len(data) >= 20 && data[12]>>4 < 5 {
				p.malformed(err)
				return
			}
			p.truncatedAt("tcp", max(20, int(dataOffset(data))*4), len(data))
			return
		}
		p.Has |= HdrTCP
		p.setData(p.TCP.Payload)
	}
}

// dataOffset returns the TCP data offset (in words), or 0 when data is
// too short to hold it.
func dataOffset(data []byte) uint8 {
	if len(data) < 13 {
		return 0
	}
	return data[12] >> 4
}

// setData records b as the innermost undissected payload (data.data),
// when it is not empty.
func (p *Packet) setData(b []byte) {
	if len(b) > 0 {
		p.Data = b
		p.Has |= HdrData
	}
}

// ICMPv6Body returns the 4 bytes after the ICMPv6 type, code and
// checksum (echo identifier and sequence, ND flags and reserved bits) and
// the target address of a Neighbor Solicitation or Advertisement (nil for
// other types or when cut short).
func (p *Packet) ICMPv6Body() (word []byte, target []byte) {
	pl := p.ICMPv6.Payload
	if len(pl) >= 4 {
		word = pl[:4]
	}
	if t := p.ICMPv6.TypeCode.Type(); (t == 135 || t == 136) && len(pl) >= 20 {
		target = pl[4:20]
	}
	return word, target
}
