package printer

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
)

// The summary of packets rocetap does not analyse (ARP, ICMP, ICMPv6,
// TCP, UDP, LLDP, IP and Ethernet frames, and what IPoIB carries): the
// Protocol and Info columns as tshark 4.0 prints them, without its
// stateful analysis (no "[TCP Retransmission]", no "(reply in N)", TCP
// sequence numbers as they are on the wire).

// summaryHdrs are the protocols whose summary replaces the InfiniBand
// one: what an IPoIB SEND carries is what a reader wants to see, as in
// tshark.
const summaryHdrs = decode.HdrARP | decode.HdrICMP | decode.HdrICMPv6 | decode.HdrTCP | decode.HdrLLDP | decode.HdrIPoIB

// netSummary reports whether p's columns come from netProtocol and
// appendNetInfo rather than from the InfiniBand, PFC and PAUSE ones.
func netSummary(p *decode.Packet) bool {
	return p.Has&summaryHdrs != 0 || p.Has&(decode.HdrBTH|decode.HdrPFC|decode.HdrPause) == 0 && p.Encap == decode.EncapNone
}

// netProtocol returns the Protocol column of a packet netSummary accepts:
// its top protocol.
func netProtocol(p *decode.Packet) string {
	switch h := p.Has; {
	case h&decode.HdrARP != 0:
		return "ARP"
	case h&decode.HdrICMP != 0:
		return "ICMP"
	case h&decode.HdrICMPv6 != 0:
		return "ICMPv6"
	case h&decode.HdrTCP != 0:
		return "TCP"
	case h&decode.HdrLLDP != 0:
		return "LLDP"
	case carried(p).Has&decode.HdrUDP != 0:
		return "UDP"
	case carried(p).Has&decode.HdrIPv4 != 0:
		return "IPv4"
	case carried(p).Has&decode.HdrIPv6 != 0:
		return "IPv6"
	case h&decode.HdrIPoIB != 0:
		return "IPoIB"
	case h&decode.HdrEth != 0:
		return "Ethernet"
	case h&(decode.HdrSLL|decode.HdrSLL2) != 0:
		return "SLL"
	}
	return "Unknown"
}

// carried returns the packet whose IP and UDP headers the summary shows:
// those an IPoIB SEND carries inside a RoCEv2 packet, else p's own; none
// (a Packet without them) when p's are RoCEv2's and IPoIB's payload
// holds no IP packet.
func carried(p *decode.Packet) *decode.Packet {
	if q := p.Inner(); q != nil {
		return q
	}
	if p.Encap == decode.EncapRoCEv2 {
		return &noIP
	}
	return p
}

var noIP decode.Packet

// appendNetInfo appends the Info column of a packet netSummary accepts.
func appendNetInfo(dst []byte, p *decode.Packet) []byte {
	ip := carried(p)
	switch h := p.Has; {
	case h&decode.HdrARP != 0:
		return appendARPInfo(dst, p)
	case h&decode.HdrICMP != 0:
		return appendICMPInfo(dst, p)
	case h&decode.HdrICMPv6 != 0:
		return appendICMPv6Info(dst, p)
	case h&decode.HdrTCP != 0:
		return appendTCPInfo(dst, p)
	case h&decode.HdrLLDP != 0:
		return appendLLDPInfo(dst, p)
	case ip.Has&decode.HdrUDP != 0:
		// tshark: "50000 → 4792 Len=24", the length of the payload.
		dst = strconv.AppendUint(dst, uint64(ip.UDP.SrcPort), 10)
		dst = append(dst, " → "...)
		dst = strconv.AppendUint(dst, uint64(ip.UDP.DstPort), 10)
		dst = append(dst, " Len="...)
		return strconv.AppendUint(dst, uint64(max(int(ip.UDP.Length)-8, 0)), 10)
	case ip.Has&decode.HdrIPv4 != 0:
		return appendIPProto(dst, ip.IPv4.Protocol, int(ip.IPv4.TotalLen)-int(ip.IPv4.IHL)*4)
	case ip.Has&decode.HdrIPv6 != 0:
		return appendIPProto(dst, ip.IPv6.NextHeader, int(ip.IPv6.PayloadLen))
	case h&decode.HdrIPoIB != 0:
		dst = append(dst, "IPoIB, type 0x"...)
		return appendHex4(dst, p.IPoIB.Type)
	case h&decode.HdrEth != 0:
		dst = append(dst, "Ethernet II, type 0x"...)
		return appendHex4(dst, p.Eth.Type)
	case h&(decode.HdrSLL|decode.HdrSLL2) != 0:
		dst = append(dst, "Linux cooked capture, protocol 0x"...)
		return appendHex4(dst, p.SLL.Protocol)
	}
	dst = append(dst, "Data ("...)
	dst = strconv.AppendInt(dst, int64(p.Frame.CapLen), 10)
	return append(dst, " bytes)"...)
}

func appendHex4(dst []byte, v uint16) []byte {
	const hx = "0123456789abcdef"
	return append(dst, hx[v>>12], hx[v>>8&0xF], hx[v>>4&0xF], hx[v&0xF])
}

// ipProtoField names IP protocols (its value names), looked up once.
var ipProtoField = decode.FieldByName("ip.proto")

// appendIPProto appends what rocetap knows of an IP payload it does not
// decode: its protocol and length.
func appendIPProto(dst []byte, proto uint8, n int) []byte {
	dst = append(dst, "IP protocol "...)
	dst = strconv.AppendUint(dst, uint64(proto), 10)
	if f := ipProtoField; f != nil {
		if name := f.ValueName(uint64(proto)); name != "" {
			dst = append(dst, " ("...)
			dst = append(dst, name...)
			dst = append(dst, ')')
		}
	}
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, int64(max(n, 0)), 10)
	return append(dst, " bytes"...)
}

// appendARPInfo: "Who has 10.0.0.2? Tell 10.0.0.1", "10.0.0.2 is at
// 02:00:5e:10:00:0b", "ARP Announcement for 10.0.0.1", "Gratuitous ARP
// for 10.0.0.1 (Reply)", "Who has 10.0.0.2? (ARP Probe)", as tshark. A
// hardware address that is not 6 bytes (IPoIB's 20) is plain hex.
func appendARPInfo(dst []byte, p *decode.Packet) []byte {
	a := &p.ARP
	if a.ProtAddressSize != 4 || len(a.SourceProtAddress) != 4 || len(a.DstProtAddress) != 4 {
		dst = append(dst, "ARP "...)
		return append(dst, decode.ARPOpName(a.Operation)...)
	}
	spa := netip.AddrFrom4([4]byte(a.SourceProtAddress))
	tpa := netip.AddrFrom4([4]byte(a.DstProtAddress))
	switch a.Operation {
	case 1:
		switch {
		case spa == tpa && allZero(a.DstHwAddress):
			dst = append(dst, "ARP Announcement for "...)
			return spa.AppendTo(dst)
		case spa == tpa:
			dst = append(dst, "Gratuitous ARP for "...)
			dst = spa.AppendTo(dst)
			return append(dst, " (Request)"...)
		case spa.IsUnspecified():
			dst = append(dst, "Who has "...)
			dst = tpa.AppendTo(dst)
			return append(dst, "? (ARP Probe)"...)
		}
		dst = append(dst, "Who has "...)
		dst = tpa.AppendTo(dst)
		dst = append(dst, "? Tell "...)
		return spa.AppendTo(dst)
	case 2:
		if spa == tpa {
			dst = append(dst, "Gratuitous ARP for "...)
			dst = spa.AppendTo(dst)
			return append(dst, " (Reply)"...)
		}
		dst = spa.AppendTo(dst)
		dst = append(dst, " is at "...)
		if f := decode.FieldByName("arp.src.hw"); f != nil && len(a.SourceHwAddress) != 6 {
			return f.AppendValue(dst, decode.Value{B: a.SourceHwAddress}) // hex, as tshark
		}
		return appendMAC(dst, a.SourceHwAddress)
	}
	dst = append(dst, "ARP "...)
	return append(dst, decode.ARPOpName(a.Operation)...)
}

// appendICMPInfo: "Echo (ping) request  id=0x1234, seq=1/256, ttl=64"
// (the type name padded to 20 columns, the sequence in both byte orders,
// as tshark).
func appendICMPInfo(dst []byte, p *decode.Packet) []byte {
	c := &p.ICMPv4
	t := c.TypeCode.Type()
	dst = append(dst, decode.ICMPTypeName(t)...)
	if name := icmpCodeName(t, c.TypeCode.Code()); name != "" {
		dst = append(dst, " ("...)
		dst = append(dst, name...)
		dst = append(dst, ')')
	}
	if t == 0 || t == 8 {
		dst = pad(dst, len(dst)-len(decode.ICMPTypeName(t)), 20, true)
		dst = append(dst, " id=0x"...)
		dst = appendHex4(dst, c.Id)
		dst = append(dst, ", seq="...)
		dst = strconv.AppendUint(dst, uint64(c.Seq), 10)
		dst = append(dst, '/')
		dst = strconv.AppendUint(dst, uint64(c.Seq>>8|c.Seq<<8), 10)
		if ip := carried(p); ip.Has&decode.HdrIPv4 != 0 {
			dst = append(dst, ", ttl="...)
			dst = strconv.AppendUint(dst, uint64(ip.IPv4.TTL), 10)
		}
	}
	return dst
}

// icmpCodeName names the codes of Destination unreachable and
// Time-to-live exceeded, as tshark.
func icmpCodeName(t, code uint8) string {
	switch t {
	case 3:
		names := [...]string{"Network unreachable", "Host unreachable", "Protocol unreachable", "Port unreachable",
			"Fragmentation needed", "Source route failed", "Destination network unknown", "Destination host unknown"}
		if int(code) < len(names) {
			return names[code]
		}
	case 11:
		if code == 0 {
			return "Time to live exceeded in transit"
		}
		if code == 1 {
			return "Fragment reassembly time exceeded"
		}
	}
	return ""
}

// appendICMPv6Info: "Echo (ping) request id=0x1234, seq=1, hop
// limit=64", "Neighbor Solicitation for fd00:77::b", "Neighbor
// Advertisement fd00:77::b (sol, ovr)".
func appendICMPv6Info(dst []byte, p *decode.Packet) []byte {
	t := p.ICMPv6.TypeCode.Type()
	dst = append(dst, decode.ICMPv6TypeName(t)...)
	word, target := p.ICMPv6Body()
	switch {
	case (t == 128 || t == 129) && word != nil:
		dst = append(dst, " id=0x"...)
		dst = appendHex4(dst, binary.BigEndian.Uint16(word))
		dst = append(dst, ", seq="...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(word[2:])), 10)
		if ip := carried(p); ip.Has&decode.HdrIPv6 != 0 {
			dst = append(dst, ", hop limit="...)
			dst = strconv.AppendUint(dst, uint64(ip.IPv6.HopLimit), 10)
		}
	case t == 135 && target != nil:
		dst = append(dst, " for "...)
		dst = netip.AddrFrom16([16]byte(target)).AppendTo(dst)
		if ll := ndLinkAddr(p, 1); ll != nil {
			dst = append(dst, " from "...)
			dst = appendMAC(dst, ll)
		}
	case t == 136 && target != nil:
		dst = append(dst, ' ')
		dst = netip.AddrFrom16([16]byte(target)).AppendTo(dst)
		flags := word[0]
		sep := " ("
		for _, f := range []struct {
			bit  byte
			name string
		}{{0x80, "rtr"}, {0x40, "sol"}, {0x20, "ovr"}} {
			if flags&f.bit != 0 {
				dst = append(dst, sep...)
				dst = append(dst, f.name...)
				sep = ", "
			}
		}
		if sep == ", " {
			dst = append(dst, ')')
		}
		if ll := ndLinkAddr(p, 2); ll != nil {
			dst = append(dst, " is at "...)
			dst = appendMAC(dst, ll)
		}
	}
	return dst
}

// ndLinkAddr returns the Ethernet address of the Neighbor Discovery
// option of type typ (1 source, 2 target), or nil. tshark names no other
// kind in the Info column (not IPoIB's 20 bytes, RFC 4391 section
// 9.1.2), and neither does rocetap.
func ndLinkAddr(p *decode.Packet, typ byte) []byte {
	pl := p.ICMPv6.Payload
	if len(pl) < 20 {
		return nil
	}
	b := pl[20:]
	for len(b) >= 2 && b[1] != 0 && 8*int(b[1]) <= len(b) {
		o := b[:8*int(b[1])]
		if o[0] == typ && len(o) == 8 {
			return o[2:8]
		}
		b = b[len(o):]
	}
	return nil
}

// tcpFlagNames are the flags in the order tshark lists them, lowest bit
// first: "[SYN, ACK]", "[FIN, PSH, ACK]".
var tcpFlagNames = [...]string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR", "AE"}

// appendTCPInfo: "44444 → 5001 [SYN] Seq=1000 Win=64240 Len=0".
func appendTCPInfo(dst []byte, p *decode.Packet) []byte {
	t := &p.TCP
	dst = strconv.AppendUint(dst, uint64(t.SrcPort), 10)
	dst = append(dst, " → "...)
	dst = strconv.AppendUint(dst, uint64(t.DstPort), 10)
	flags := decode.TCPFlags(p)
	sep := " ["
	for i, n := range tcpFlagNames {
		if flags&(1<<i) != 0 {
			dst = append(dst, sep...)
			dst = append(dst, n...)
			sep = ", "
		}
	}
	if flags&0xE00 != 0 {
		dst = append(dst, sep...)
		dst = append(dst, "Reserved"...)
		sep = ", "
	}
	if sep == ", " {
		dst = append(dst, ']')
	} else {
		dst = append(dst, " [<None>]"...)
	}
	dst = append(dst, " Seq="...)
	dst = strconv.AppendUint(dst, uint64(t.Seq), 10)
	if t.ACK {
		dst = append(dst, " Ack="...)
		dst = strconv.AppendUint(dst, uint64(t.Ack), 10)
	}
	dst = append(dst, " Win="...)
	dst = strconv.AppendUint(dst, uint64(t.Window), 10)
	if t.URG {
		dst = append(dst, " Urg="...)
		dst = strconv.AppendUint(dst, uint64(t.Urgent), 10)
	}
	dst = append(dst, " Len="...)
	dst = strconv.AppendInt(dst, int64(len(t.Payload)), 10)
	return appendTCPOptions(dst, t.Options)
}

// appendTCPOptions appends the options tshark names in the Info column,
// in their order: " MSS=1460 SACK_PERM TSval=1000 TSecr=0 WS=128".
func appendTCPOptions(dst []byte, opts []layers.TCPOption) []byte {
	for _, o := range opts {
		d := o.OptionData
		switch o.OptionType {
		case layers.TCPOptionKindMSS:
			if len(d) == 2 {
				dst = append(dst, " MSS="...)
				dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(d)), 10)
			}
		case layers.TCPOptionKindSACKPermitted:
			dst = append(dst, " SACK_PERM"...)
		case layers.TCPOptionKindTimestamps:
			if len(d) == 8 {
				dst = append(dst, " TSval="...)
				dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(d)), 10)
				dst = append(dst, " TSecr="...)
				dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(d[4:])), 10)
			}
		case layers.TCPOptionKindWindowScale:
			if len(d) == 1 && d[0] <= 14 {
				dst = append(dst, " WS="...)
				dst = strconv.AppendUint(dst, 1<<d[0], 10)
			}
		}
	}
	return dst
}

// appendLLDPInfo: the chassis and port ids with tshark's abbreviation of
// their subtype, and the TTL: "MA/02:00:5e:10:00:0a IN/eth2 120".
func appendLLDPInfo(dst []byte, p *decode.Packet) []byte {
	l := &p.LLDP
	dst = appendLLDPID(dst, lldpChassisAbbrev[:], uint8(l.ChassisID.Subtype), 4, l.ChassisID.ID)
	dst = append(dst, ' ')
	dst = appendLLDPID(dst, lldpPortAbbrev[:], uint8(l.PortID.Subtype), 3, l.PortID.ID)
	dst = append(dst, ' ')
	return strconv.AppendUint(dst, uint64(l.TTL), 10)
}

// Wireshark's abbreviations of the LLDP chassis and port id subtypes.
var (
	lldpChassisAbbrev = [...]string{1: "CO", 2: "IA", 3: "PC", 4: "MA", 5: "NA", 6: "IN", 7: "LA"}
	lldpPortAbbrev    = [...]string{1: "IA", 2: "PC", 3: "MA", 4: "NA", 5: "IN", 6: "AC", 7: "LA"}
)

func appendLLDPID(dst []byte, abbrev []string, subtype, macSubtype uint8, id []byte) []byte {
	if int(subtype) < len(abbrev) && abbrev[subtype] != "" {
		dst = append(dst, abbrev[subtype]...)
	} else {
		dst = strconv.AppendUint(dst, uint64(subtype), 10)
	}
	dst = append(dst, '/')
	if subtype == macSubtype && len(id) == 6 {
		return appendMAC(dst, id)
	}
	return decode.AppendSanitized(dst, string(id))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
