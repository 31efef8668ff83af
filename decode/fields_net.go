package decode

import (
	"net/netip"
	"strconv"
)

// Frame, link and network fields with Wireshark's names.

// registerNetFields registers the frame, ERF, SLL, Ethernet, VLAN, MAC
// control, IP and UDP fields.
func registerNetFields() {
	fr := hdrField("frame", "Frame", FTProtocol, 0, func(p *Packet) []byte { return p.Frame.Data })
	uintField(fr, "frame.number", "Frame Number", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.Frame.Number) })
	uintField(fr, "frame.interface_id", "Interface id", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.Frame.Interface) })
	register(&Field{Abbrev: "frame.time", Name: "Arrival Time", Type: FTAbsTime, Parent: fr, Off: -1,
		values: func(p *Packet, out []Value) []Value { return append(out, Value{U: uint64(p.Frame.Time.UnixNano())}) }})
	register(&Field{Abbrev: "frame.time_epoch", Name: "Epoch Time", Type: FTRelTime, Parent: fr, Off: -1,
		values: func(p *Packet, out []Value) []Value { return append(out, Value{U: uint64(p.Frame.Time.UnixNano())}) }})
	register(&Field{Abbrev: "frame.time_delta", Name: "Time delta from previous captured frame", Type: FTRelTime, Parent: fr, Off: -1,
		values: func(p *Packet, out []Value) []Value { return append(out, Value{U: uint64(p.Frame.TimeDelta)}) }})
	register(&Field{Abbrev: "frame.time_relative", Name: "Time since reference or first frame", Type: FTRelTime, Parent: fr, Off: -1,
		values: func(p *Packet, out []Value) []Value { return append(out, Value{U: uint64(p.Frame.TimeRelative)}) }})
	uintField(fr, "frame.len", "Frame length on the wire", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.Frame.Len) })
	uintField(fr, "frame.cap_len", "Frame length stored into the capture file", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.Frame.CapLen) })
	stringField(fr, "frame.protocols", "Protocols in frame", 0, func(p *Packet) string { return protocols(p) })
	uintField(fr, "rocetap.frame.linktype", "Link type", FTUint16, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.Frame.LinkType) })

	erf := hdrField("erf", "Extensible Record Format", FTProtocol, HdrERF, func(p *Packet) []byte { return p.Frame.Data[:16] })
	uintField(erf, "erf.ts", "Timestamp", FTUint64, BaseHex, 0, 0, 8, func(p *Packet) uint64 { return p.ERF.Timestamp })
	uintField(erf, "erf.types.type", "Type", FTUint8, BaseDec, 0x7f, 8, 1, func(p *Packet) uint64 { return uint64(p.ERF.Type) })
	uintField(erf, "erf.types.ext_header", "Extension header present", FTUint8, BaseDec, 0x80, 8, 1, func(p *Packet) uint64 { return b2u(p.ERF.Ext) })
	uintField(erf, "erf.flags", "Flags", FTUint8, BaseHex, 0, 9, 1, func(p *Packet) uint64 { return uint64(p.ERF.Flags) })
	uintField(erf, "erf.rlen", "Record length", FTUint16, BaseDec, 0, 10, 2, func(p *Packet) uint64 { return uint64(p.ERF.RLen) })
	uintField(erf, "erf.lctr", "Loss counter", FTUint16, BaseDec, 0, 12, 2, func(p *Packet) uint64 { return uint64(p.ERF.LCtr) })
	uintField(erf, "erf.wlen", "Wire length", FTUint16, BaseDec, 0, 14, 2, func(p *Packet) uint64 { return uint64(p.ERF.WLen) })

	sll := hdrField("sll", "Linux cooked capture", FTProtocol, 0, nil)
	sll.values = func(p *Packet, out []Value) []Value {
		if p.Has&(HdrSLL|HdrSLL2) == 0 {
			return out
		}
		return append(out, Value{})
	}
	anySLL := func(p *Packet) bool { return p.Has&(HdrSLL|HdrSLL2) != 0 }
	condUint(sll, "sll.pkttype", "Packet type", FTUint16, BaseDec, 0, -1, 0, anySLL, func(p *Packet) uint64 { return uint64(p.SLL.PacketType) })
	condUint(sll, "sll.hatype", "Link-layer address type", FTUint16, BaseDec, 0, -1, 0, anySLL, func(p *Packet) uint64 { return uint64(p.SLL.HAType) })
	condUint(sll, "sll.halen", "Link-layer address length", FTUint16, BaseDec, 0, -1, 0, anySLL, func(p *Packet) uint64 { return uint64(p.SLL.HALen) })
	multiField(sll, "sll.src.eth", "Source", FTEther, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if !anySLL(p) || p.SLL.HALen != 6 {
			return out
		}
		return append(out, Value{B: p.SLL.Addr[:6]})
	})
	condUint(sll, "sll.etype", "Protocol", FTUint16, BaseHex, 0, -1, 0, anySLL, func(p *Packet) uint64 { return uint64(p.SLL.Protocol) })
	condUint(sll, "sll.ifindex", "Interface index", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) bool { return p.Has&HdrSLL2 != 0 }, func(p *Packet) uint64 { return uint64(p.SLL.IfIndex) })

	eth := hdrField("eth", "Ethernet II", FTProtocol, HdrEth, func(p *Packet) []byte { return p.Frame.Data[:14] })
	bytesField(eth, "eth.dst", "Destination", FTEther, 0, 6, func(p *Packet) []byte { return p.Eth.Dst[:] })
	bytesField(eth, "eth.src", "Source", FTEther, 6, 6, func(p *Packet) []byte { return p.Eth.Src[:] })
	hidden(eth, "eth.addr", "Address", FTEther, BaseNone, HdrEth, func(p *Packet, out []Value) []Value {
		return append(out, Value{B: p.Eth.Dst[:]}, Value{B: p.Eth.Src[:]})
	})
	ethType := uintField(eth, "eth.type", "Type", FTUint16, BaseHex, 0, 12, 2, func(p *Packet) uint64 { return uint64(p.Eth.EtherType) })
	ethType.names = func(v uint64) string { return etherTypeNames[uint16(v)] }
	// The -V tree names a header with its addresses, as tshark does.
	eth.label = func(b []byte, p *Packet) []byte {
		b = appendMAC(append(b, "Ethernet II, Src: "...), p.Eth.Src[:])
		return appendMAC(append(b, ", Dst: "...), p.Eth.Dst[:])
	}

	vlan := hdrField("vlan", "802.1Q Virtual LAN", FTProtocol, HdrVLAN, nil)
	// Wireshark shows 802.1ad (TPID 0x88a8) service tags as ieee8021ad.*
	// and 802.1Q tags as vlan.*.
	qinq := hdrField("ieee8021ad", "IEEE 802.1ad", FTProtocol, HdrVLAN, nil)
	qinq.SetPresence(HdrVLAN, func(p *Packet) bool { return hasTPID(p, true) })
	vlan.SetPresence(HdrVLAN, func(p *Packet) bool { return hasTPID(p, false) })
	tags := func(parent *Field, abbrev, name string, t FieldType, base Base, mask uint64, ad bool, get func(*VLANTag) uint64) {
		f := multiField(parent, abbrev, name, t, base, HdrVLAN, func(p *Packet, out []Value) []Value {
			for i := 0; i < p.NumVLAN; i++ {
				if (p.VLAN[i].TPID == 0x88A8) == ad {
					out = append(out, Value{U: get(&p.VLAN[i])})
				}
			}
			return out
		})
		f.Bitmask = mask
	}
	vlanU := func(abbrev, name string, t FieldType, base Base, mask uint64, get func(*VLANTag) uint64) {
		tags(vlan, abbrev, name, t, base, mask, false, get)
	}
	tags(qinq, "ieee8021ad.priority", "Priority", FTUint16, BaseDec, 0xe000, true, func(v *VLANTag) uint64 { return uint64(v.Priority) })
	tags(qinq, "ieee8021ad.dei", "DEI", FTUint16, BaseDec, 0x1000, true, func(v *VLANTag) uint64 { return b2u(v.DEI) })
	tags(qinq, "ieee8021ad.id", "ID", FTUint16, BaseDec, 0x0fff, true, func(v *VLANTag) uint64 { return uint64(v.ID) })
	vlanU("vlan.priority", "Priority", FTUint16, BaseDec, 0xe000, func(v *VLANTag) uint64 { return uint64(v.Priority) })
	vlanU("vlan.dei", "DEI", FTBoolean, BaseNone, 0x1000, func(v *VLANTag) uint64 { return b2u(v.DEI) })
	vlanU("vlan.id", "ID", FTUint16, BaseDec, 0x0fff, func(v *VLANTag) uint64 { return uint64(v.ID) })
	vlanU("vlan.etype", "Type", FTUint16, BaseHex, 0, func(v *VLANTag) uint64 { return uint64(v.Type) })
	f := multiField(vlan, "rocetap.vlan.tpid", "Tag protocol identifier", FTUint16, BaseHex, HdrVLAN, func(p *Packet, out []Value) []Value {
		for i := 0; i < p.NumVLAN; i++ {
			out = append(out, Value{U: uint64(p.VLAN[i].TPID)})
		}
		return out
	})
	_ = f

	macc := hdrField("macc", "MAC Control", FTProtocol, 0, nil)
	macc.values = func(p *Packet, out []Value) []Value {
		if p.Has&(HdrPFC|HdrPause) == 0 {
			return out
		}
		return append(out, Value{})
	}
	condUint(macc, "macc.opcode", "Opcode", FTUint16, BaseHex, 0, 0, 2, func(p *Packet) bool { return p.Has&(HdrPFC|HdrPause) != 0 }, func(p *Packet) uint64 { return uint64(p.PFC.Opcode) })
	condUint(macc, "macc.pause_time", "pause_time", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) bool { return p.Has&HdrPause != 0 }, func(p *Packet) uint64 { return uint64(p.PFC.Quanta[0]) })
	isPFC := func(p *Packet) bool { return p.Has&HdrPFC != 0 }
	condUint(macc, "macc.cbfc.enbv", "CBFC Class Enable Vector", FTUint16, BaseHex, 0, 2, 2, isPFC, func(p *Packet) uint64 { return uint64(p.PFC.ClassEnable) })
	for i := range 8 {
		n := string(rune('0' + i))
		condUint(macc, "macc.cbfc.pause_time.c"+n, "C"+n, FTUint16, BaseDec, 0, 4+2*i, 2, isPFC, func(p *Packet) uint64 { return uint64(p.PFC.Quanta[i]) })
	}

	ip := hdrField("ip", "Internet Protocol Version 4", FTProtocol, HdrIPv4, nil)
	ip.span = func(p *Packet) []byte { return ipHeader(p) }
	ip.label = func(b []byte, p *Packet) []byte {
		return appendAddrsLabel(b, "Internet Protocol Version 4", netip.AddrFrom4(p.IPv4.Src), netip.AddrFrom4(p.IPv4.Dst))
	}
	// Wireshark's IP dissector reads the version nibble before handing
	// IPv6 to its own dissector, so ip.version is 6 on IPv6 packets too.
	ipVer := uintField(ip, "ip.version", "Version", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 {
		if p.Has&HdrIPv4 != 0 {
			return uint64(p.IPv4.Version)
		}
		return uint64(p.IPv6.Version)
	})
	ipVer.SetPresence(0, func(p *Packet) bool { return p.Has&(HdrIPv4|HdrIPv6) != 0 })
	uintField(ip, "ip.hdr_len", "Header Length", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.IPv4.IHL) * 4 })
	uintField(ip, "ip.dsfield", "Differentiated Services Field", FTUint8, BaseHex, 0, 1, 1, func(p *Packet) uint64 { return uint64(p.IPv4.TOS) })
	uintField(ip, "ip.dsfield.dscp", "Differentiated Services Codepoint", FTUint8, BaseDec, 0xfc, 1, 1, func(p *Packet) uint64 { return uint64(p.IPv4.TOS >> 2) })
	uintField(ip, "ip.dsfield.ecn", "Explicit Congestion Notification", FTUint8, BaseDec, 0x03, 1, 1, func(p *Packet) uint64 { return uint64(p.IPv4.TOS & 3) })
	uintField(ip, "ip.len", "Total Length", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.IPv4.TotalLen) })
	uintField(ip, "ip.id", "Identification", FTUint16, BaseHexDec, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.IPv4.ID) })
	uintField(ip, "ip.flags", "Flags", FTUint8, BaseHex, 0xe0, 6, 1, func(p *Packet) uint64 { return uint64(p.IPv4.Flags) })
	boolField(ip, "ip.flags.df", "Don't fragment", 0x40, 6, func(p *Packet) bool { return p.IPv4.Flags&2 != 0 })
	boolField(ip, "ip.flags.mf", "More fragments", 0x20, 6, func(p *Packet) bool { return p.IPv4.Flags&1 != 0 })
	uintField(ip, "ip.frag_offset", "Fragment Offset", FTUint16, BaseDec, 0x1fff, 6, 2, func(p *Packet) uint64 { return uint64(p.IPv4.FragOff) * 8 })
	uintField(ip, "ip.ttl", "Time to Live", FTUint8, BaseDec, 0, 8, 1, func(p *Packet) uint64 { return uint64(p.IPv4.TTL) })
	ipProto := uintField(ip, "ip.proto", "Protocol", FTUint8, BaseDec, 0, 9, 1, func(p *Packet) uint64 { return uint64(p.IPv4.Protocol) })
	ipProto.names = func(v uint64) string { return ipProtoNames[uint8(v)] }
	uintField(ip, "ip.checksum", "Header Checksum", FTUint16, BaseHex, 0, 10, 2, func(p *Packet) uint64 { return uint64(p.IPv4.Checksum) })
	uintField(ip, "ip.src", "Source Address", FTIPv4, BaseNone, 0, 12, 4, func(p *Packet) uint64 { return ipv4U(p.IPv4.Src) })
	uintField(ip, "ip.dst", "Destination Address", FTIPv4, BaseNone, 0, 16, 4, func(p *Packet) uint64 { return ipv4U(p.IPv4.Dst) })
	hidden(ip, "ip.addr", "Source or Destination Address", FTIPv4, BaseNone, HdrIPv4, func(p *Packet, out []Value) []Value {
		return append(out, Value{U: ipv4U(p.IPv4.Src)}, Value{U: ipv4U(p.IPv4.Dst)})
	})

	ip6 := hdrField("ipv6", "Internet Protocol Version 6", FTProtocol, HdrIPv6, nil)
	ip6.span = func(p *Packet) []byte { return ipHeader(p) }
	ip6.label = func(b []byte, p *Packet) []byte {
		return appendAddrsLabel(b, "Internet Protocol Version 6", netip.AddrFrom16(p.IPv6.Src), netip.AddrFrom16(p.IPv6.Dst))
	}
	uintField(ip6, "ipv6.version", "Version", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.IPv6.Version) })
	uintField(ip6, "ipv6.tclass", "Traffic Class", FTUint32, BaseHex, 0x0ff00000, 0, 2, func(p *Packet) uint64 { return uint64(p.IPv6.TrafficClass) })
	uintField(ip6, "ipv6.tclass.dscp", "Differentiated Services Codepoint", FTUint32, BaseDec, 0x0fc00000, 0, 2, func(p *Packet) uint64 { return uint64(p.IPv6.TrafficClass >> 2) })
	uintField(ip6, "ipv6.tclass.ecn", "Explicit Congestion Notification", FTUint32, BaseDec, 0x00300000, 1, 1, func(p *Packet) uint64 { return uint64(p.IPv6.TrafficClass & 3) })
	uintField(ip6, "ipv6.flow", "Flow Label", FTUint24, BaseHex, 0xfffff, 1, 3, func(p *Packet) uint64 { return uint64(p.IPv6.FlowLabel) })
	uintField(ip6, "ipv6.plen", "Payload Length", FTUint16, BaseDec, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.IPv6.PayloadLen) })
	ip6Next := uintField(ip6, "ipv6.nxt", "Next Header", FTUint8, BaseDec, 0, 6, 1, func(p *Packet) uint64 { return uint64(p.IPv6.NextHeader) })
	ip6Next.names = func(v uint64) string { return ipProtoNames[uint8(v)] }
	uintField(ip6, "ipv6.hlim", "Hop Limit", FTUint8, BaseDec, 0, 7, 1, func(p *Packet) uint64 { return uint64(p.IPv6.HopLimit) })
	bytesField(ip6, "ipv6.src", "Source Address", FTIPv6, 8, 16, func(p *Packet) []byte { return p.IPv6.Src[:] })
	bytesField(ip6, "ipv6.dst", "Destination Address", FTIPv6, 24, 16, func(p *Packet) []byte { return p.IPv6.Dst[:] })
	hidden(ip6, "ipv6.addr", "Source or Destination Address", FTIPv6, BaseNone, HdrIPv6, func(p *Packet, out []Value) []Value {
		return append(out, Value{B: p.IPv6.Src[:]}, Value{B: p.IPv6.Dst[:]})
	})

	udp := hdrField("udp", "User Datagram Protocol", FTProtocol, HdrUDP, func(p *Packet) []byte { return p.Frame.Data[p.L4Off : p.L4Off+8] })
	udp.label = func(b []byte, p *Packet) []byte {
		return appendPortsLabel(b, "User Datagram Protocol", p.UDP.SrcPort, p.UDP.DstPort)
	}
	uintField(udp, "udp.srcport", "Source Port", FTUint16, BasePortUDP, 0, 0, 2, func(p *Packet) uint64 { return uint64(p.UDP.SrcPort) })
	uintField(udp, "udp.dstport", "Destination Port", FTUint16, BasePortUDP, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.UDP.DstPort) })
	hidden(udp, "udp.port", "Source or Destination Port", FTUint16, BasePortUDP, HdrUDP, func(p *Packet, out []Value) []Value {
		return append(out, Value{U: uint64(p.UDP.SrcPort)}, Value{U: uint64(p.UDP.DstPort)})
	})
	uintField(udp, "udp.length", "Length", FTUint16, BaseDec, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.UDP.Length) })
	uintField(udp, "udp.checksum", "Checksum", FTUint16, BaseHex, 0, 6, 2, func(p *Packet) uint64 { return uint64(p.UDP.Checksum) })
}

// ipHeader returns the IP header bytes of p.
func ipHeader(p *Packet) []byte {
	d := p.Frame.Data
	end := p.L4Off
	if end <= p.L3Off {
		end = p.L3Off + 20
		if p.Has&HdrIPv6 != 0 {
			end = p.L3Off + 40
		}
	}
	return d[p.L3Off:min(end, len(d))]
}

// protocols returns the frame.protocols string, e.g. "eth:ethertype:ip:udp:infiniband".
func protocols(p *Packet) string {
	if p.Has&(HdrIPoIB|HdrARP|HdrICMP|HdrICMPv6|HdrTCP|HdrLLDP) != 0 {
		return protocolsNet(p) // fields_l4.go
	}
	switch {
	case p.Has&HdrBTH != 0 && p.Has&HdrEth != 0 && p.Has&HdrIPv4 != 0 && p.NumVLAN == 0:
		return "eth:ethertype:ip:udp:infiniband"
	case p.Has&HdrBTH != 0 && p.Has&HdrEth != 0 && p.Has&HdrIPv6 != 0 && p.NumVLAN == 0:
		return "eth:ethertype:ipv6:udp:infiniband"
	}
	var b []byte
	add := func(s string) {
		if len(b) > 0 {
			b = append(b, ':')
		}
		b = append(b, s...)
	}
	if p.Has&HdrERF != 0 {
		add("erf")
	}
	if p.Has&HdrSLL != 0 || p.Has&HdrSLL2 != 0 {
		add("sll")
	}
	if p.Has&HdrEth != 0 {
		add("eth")
		add("ethertype")
	}
	for i := 0; i < p.NumVLAN; i++ {
		if p.VLAN[i].TPID == 0x88A8 {
			add("ieee8021ad")
		} else {
			add("vlan")
		}
		add("ethertype")
	}
	if p.Has&(HdrPFC|HdrPause) != 0 {
		add("macc")
	}
	if p.Has&HdrIPv4 != 0 {
		add("ip")
	}
	if p.Has&HdrIPv6 != 0 {
		add("ipv6")
	}
	if p.Has&HdrUDP != 0 {
		add("udp")
	}
	if p.Encap != EncapNone {
		add("infiniband")
	}
	return string(b)
}

// hasTPID reports whether p has an 802.1ad (ad) or 802.1Q (!ad) tag.
func hasTPID(p *Packet, ad bool) bool {
	for i := 0; i < p.NumVLAN; i++ {
		if (p.VLAN[i].TPID == 0x88A8) == ad {
			return true
		}
	}
	return false
}

// Value names of the verbose tree, as Wireshark's ("Protocol: UDP (17)",
// "Type: IPv4 (0x0800)").
var (
	etherTypeNames = map[uint16]string{0x0800: "IPv4", 0x0806: "ARP", 0x86dd: "IPv6", 0x8100: "802.1Q Virtual LAN",
		0x88a8: "802.1ad Provider Bridge (Q-in-Q)", 0x8808: "MAC Control", 0x8915: "RRoCE"}
	ipProtoNames = map[uint8]string{1: "ICMP", 2: "IGMP", 6: "TCP", 17: "UDP", 41: "IPv6", 47: "GRE", 50: "ESP", 58: "ICMPv6", 132: "SCTP"}
)

// appendAddrsLabel appends an IP header's verbose label, "NAME, Src: A,
// Dst: B", as Wireshark writes it.
func appendAddrsLabel(b []byte, name string, src, dst netip.Addr) []byte {
	b = src.AppendTo(append(append(b, name...), ", Src: "...))
	return dst.AppendTo(append(b, ", Dst: "...))
}

// appendPortsLabel appends a UDP or TCP header's verbose label, "NAME,
// Src Port: S, Dst Port: D".
func appendPortsLabel(b []byte, name string, src, dst uint16) []byte {
	b = strconv.AppendUint(append(append(b, name...), ", Src Port: "...), uint64(src), 10)
	return strconv.AppendUint(append(b, ", Dst Port: "...), uint64(dst), 10)
}
