package decode

import (
	"encoding/binary"
	"strconv"
)

// Fields of the protocols rocetap summarises without analysing them
// (ipoib.go, l4.go), with Wireshark's names, types and bases. Only what
// tshark 4.0 prints on its own is registered: no TCP sequence analysis
// (tcp.seq, tcp.ack, tcp.stream, which are relative to the stream's
// first segment), no ICMP request/response matching.

func init() {
	// Where the new protocols nest on the wire (see rootRank): after
	// InfiniBand, which carries IPoIB (registered after it, so after it
	// at the same rank), and after IP and UDP. The IP header IPoIB
	// carries over native InfiniBand is listed with ip, before InfiniBand.
	for k, v := range map[string]int{"ipoib": 9, "arp": 9, "lldp": 9, "icmp": 9, "icmpv6": 9, "tcp": 9} {
		rootRank[k] = v
	}
}

// registerSummaryFields registers the IPoIB, ARP, ICMP, ICMPv6, TCP and
// LLDP fields.
func registerSummaryFields() {
	registerIPoIBFields()
	registerARPFields()
	registerICMPFields()
	registerICMPv6Fields()
	registerTCPFields()
	registerLLDPFields()
	innerOccurrences()
}

// innerOccurrences makes every ip.*, ipv6.* and udp.* field show the IP
// and UDP headers an IPoIB SEND carries inside a RoCEv2 packet after the
// RoCEv2 ones, as tshark lists both.
func innerOccurrences() {
	for _, f := range registry {
		r := f
		for r.Parent != nil {
			r = r.Parent
		}
		if r.Abbrev != "ip" && r.Abbrev != "ipv6" && r.Abbrev != "udp" {
			continue
		}
		values, hdr := f.values, f.hdr
		f.inner = true
		f.values = func(p *Packet, out []Value) []Value {
			if p.Has&hdr == hdr {
				out = values(p, out)
			}
			if q := p.Inner(); q != nil && q.Has&hdr == hdr {
				out = values(q, out)
			}
			return out
		}
	}
}

func registerIPoIBFields() {
	ib := hdrField("ipoib", "IP over Infiniband", FTProtocol, HdrIPoIB, func(p *Packet) []byte { return p.IPoIB.Contents })
	t := uintField(ib, "ipoib.type", "Type", FTUint16, BaseHex, 0, -1, 2, func(p *Packet) uint64 { return uint64(p.IPoIB.Type) })
	t.names = func(v uint64) string { return etherTypeNames[uint16(v)] }
	uintField(ib, "ipoib.reserved", "Reserved", FTUint16, BaseHex, 0, -1, 2, func(p *Packet) uint64 { return uint64(p.IPoIB.Reserved) })
	grh := func(p *Packet) bool { return p.IPoIB.Pseudo && p.IPoIB.GRH }
	daddr := func(p *Packet) bool { return p.IPoIB.Pseudo && !p.IPoIB.GRH }
	condUint(ib, "ipoib.grh.ipver", "IP Version", FTUint8, BaseDec, 0xf0, 0, 1, grh, func(p *Packet) uint64 { return uint64(p.IPoIB.Word0 >> 28) })
	condUint(ib, "ipoib.grh.tclass", "Traffic Class", FTUint16, BaseDec, 0x0ff0, 0, 2, grh, func(p *Packet) uint64 { return uint64(p.IPoIB.Word0 >> 20 & 0xFF) })
	condUint(ib, "ipoib.grh.flowlabel", "Flow Label", FTUint32, BaseDec, 0xfffff, 0, 4, grh, func(p *Packet) uint64 { return uint64(p.IPoIB.Word0 & 0xFFFFF) })
	condUint(ib, "ipoib.grh.sqpn", "Source QPN", FTUint24, BaseHex, 0, 5, 3, grh, func(p *Packet) uint64 { return uint64(p.IPoIB.SQPN) })
	multiField(ib, "ipoib.grh.sgid", "Source GID", FTIPv6, BaseNone, HdrIPoIB, func(p *Packet, out []Value) []Value {
		if !grh(p) {
			return out
		}
		return append(out, Value{B: p.IPoIB.SGID[:]})
	})
	condUint(ib, "ipoib.daddr.qpn", "Destination QPN", FTUint24, BaseHex, 0, 21, 3, daddr, func(p *Packet) uint64 { return uint64(p.IPoIB.DQPN) })
	multiField(ib, "ipoib.dgid", "Destination GID", FTIPv6, BaseNone, HdrIPoIB, func(p *Packet, out []Value) []Value {
		if !p.IPoIB.Pseudo {
			return out
		}
		return append(out, Value{B: p.IPoIB.DGID[:]})
	})
}

func registerARPFields() {
	arp := hdrField("arp", "Address Resolution Protocol", FTProtocol, HdrARP, func(p *Packet) []byte { return p.ARP.Contents })
	arp.label = func(b []byte, p *Packet) []byte {
		return append(append(append(b, "Address Resolution Protocol ("...), ARPOpName(p.ARP.Operation)...), ')')
	}
	uintField(arp, "arp.hw.type", "Hardware type", FTUint16, BaseDec, 0, 0, 2, func(p *Packet) uint64 { return uint64(p.ARP.AddrType) })
	uintField(arp, "arp.proto.type", "Protocol type", FTUint16, BaseHex, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.ARP.Protocol) })
	uintField(arp, "arp.hw.size", "Hardware size", FTUint8, BaseDec, 0, 4, 1, func(p *Packet) uint64 { return uint64(p.ARP.HwAddressSize) })
	uintField(arp, "arp.proto.size", "Protocol size", FTUint8, BaseDec, 0, 5, 1, func(p *Packet) uint64 { return uint64(p.ARP.ProtAddressSize) })
	op := uintField(arp, "arp.opcode", "Opcode", FTUint16, BaseDec, 0, 6, 2, func(p *Packet) uint64 { return uint64(p.ARP.Operation) })
	op.names = func(v uint64) string { return arpOpNames[uint16(v)] }
	// Wireshark shows Ethernet-sized hardware addresses as MACs
	// (arp.src.hw_mac) and any other size, such as IPoIB's 20 bytes
	// (QPN and GID, RFC 4391 section 9.1.1), as bytes (arp.src.hw).
	mac := func(p *Packet) bool { return p.ARP.HwAddressSize == 6 }
	ipv4 := func(p *Packet) bool { return p.ARP.ProtAddressSize == 4 && p.ARP.Protocol == 0x0800 }
	hw := func(abbrev, name string, src, isMAC bool) {
		t := FTBytes
		if isMAC {
			t = FTEther
		}
		multiField(arp, abbrev, name, t, BaseNone, HdrARP, func(p *Packet, out []Value) []Value {
			if mac(p) != isMAC {
				return out
			}
			if src {
				return append(out, Value{B: p.ARP.SourceHwAddress})
			}
			return append(out, Value{B: p.ARP.DstHwAddress})
		})
	}
	proto := func(abbrev, name string, src bool) {
		multiField(arp, abbrev, name, FTIPv4, BaseNone, HdrARP, func(p *Packet, out []Value) []Value {
			if !ipv4(p) {
				return out
			}
			a := p.ARP.DstProtAddress
			if src {
				a = p.ARP.SourceProtAddress
			}
			return append(out, Value{U: uint64(binary.BigEndian.Uint32(a))})
		})
	}
	hw("arp.src.hw_mac", "Sender MAC address", true, true)
	hw("arp.src.hw", "Sender hardware address", true, false)
	proto("arp.src.proto_ipv4", "Sender IP address", true)
	hw("arp.dst.hw_mac", "Target MAC address", false, true)
	hw("arp.dst.hw", "Target hardware address", false, false)
	proto("arp.dst.proto_ipv4", "Target IP address", false)
}

// arpOpNames are Wireshark's names of the ARP opcodes.
var arpOpNames = map[uint16]string{1: "request", 2: "reply", 3: "reverse request", 4: "reverse reply"}

// ARPOpName returns Wireshark's name of an ARP opcode ("request").
func ARPOpName(op uint16) string {
	if n, ok := arpOpNames[op]; ok {
		return n
	}
	return "Unknown (" + strconv.Itoa(int(op)) + ")"
}

func registerICMPFields() {
	icmp := hdrField("icmp", "Internet Control Message Protocol", FTProtocol, HdrICMP, func(p *Packet) []byte { return p.ICMPv4.Contents })
	typ := uintField(icmp, "icmp.type", "Type", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.ICMPv4.TypeCode.Type()) })
	typ.names = func(v uint64) string { return ICMPTypeName(uint8(v)) }
	uintField(icmp, "icmp.code", "Code", FTUint8, BaseDec, 0, 1, 1, func(p *Packet) uint64 { return uint64(p.ICMPv4.TypeCode.Code()) })
	uintField(icmp, "icmp.checksum", "Checksum", FTUint16, BaseHex, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.ICMPv4.Checksum) })
	// Identifier and sequence number of echo requests and replies, in both
	// byte orders as Wireshark shows them (Windows sends them
	// little-endian).
	echo := func(p *Packet) bool { t := p.ICMPv4.TypeCode.Type(); return t == 0 || t == 8 }
	condUint(icmp, "icmp.ident", "Identifier (BE)", FTUint16, BaseDecHex, 0, 4, 2, echo, func(p *Packet) uint64 { return uint64(p.ICMPv4.Id) })
	condUint(icmp, "icmp.ident_le", "Identifier (LE)", FTUint16, BaseDecHex, 0, 4, 2, echo, func(p *Packet) uint64 { return uint64(swap16(p.ICMPv4.Id)) })
	condUint(icmp, "icmp.seq", "Sequence Number (BE)", FTUint16, BaseDecHex, 0, 6, 2, echo, func(p *Packet) uint64 { return uint64(p.ICMPv4.Seq) })
	condUint(icmp, "icmp.seq_le", "Sequence Number (LE)", FTUint16, BaseDecHex, 0, 6, 2, echo, func(p *Packet) uint64 { return uint64(swap16(p.ICMPv4.Seq)) })
}

func swap16(v uint16) uint16 { return v<<8 | v>>8 }

// icmpTypeNames are Wireshark's names of the ICMP types.
var icmpTypeNames = map[uint8]string{
	0: "Echo (ping) reply", 3: "Destination unreachable", 4: "Source quench (flow control)", 5: "Redirect",
	8: "Echo (ping) request", 9: "Router advertisement", 10: "Router solicitation", 11: "Time-to-live exceeded",
	12: "Parameter problem", 13: "Timestamp request", 14: "Timestamp reply", 17: "Address mask request", 18: "Address mask reply",
}

// ICMPTypeName returns Wireshark's name of an ICMP type.
func ICMPTypeName(t uint8) string {
	if n, ok := icmpTypeNames[t]; ok {
		return n
	}
	return "Unknown ICMP (obsolete or malformed?)"
}

func registerICMPv6Fields() {
	icmp := hdrField("icmpv6", "Internet Control Message Protocol v6", FTProtocol, HdrICMPv6, func(p *Packet) []byte {
		b := p.ICMPv6.Contents
		return b[:len(b)+len(p.ICMPv6.Payload)]
	})
	typ := uintField(icmp, "icmpv6.type", "Type", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.ICMPv6.TypeCode.Type()) })
	typ.names = func(v uint64) string { return ICMPv6TypeName(uint8(v)) }
	uintField(icmp, "icmpv6.code", "Code", FTUint8, BaseDec, 0, 1, 1, func(p *Packet) uint64 { return uint64(p.ICMPv6.TypeCode.Code()) })
	uintField(icmp, "icmpv6.checksum", "Checksum", FTUint16, BaseHex, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.ICMPv6.Checksum) })
	is := func(types ...uint8) func(p *Packet) bool {
		return func(p *Packet) bool {
			w, _ := p.ICMPv6Body()
			if w == nil {
				return false
			}
			t := p.ICMPv6.TypeCode.Type()
			for _, x := range types {
				if t == x {
					return true
				}
			}
			return false
		}
	}
	word := func(p *Packet) uint32 { w, _ := p.ICMPv6Body(); return binary.BigEndian.Uint32(w) }
	echo, na := is(128, 129), is(136)
	condUint(icmp, "icmpv6.echo.identifier", "Identifier", FTUint16, BaseHex, 0, 4, 2, echo, func(p *Packet) uint64 { return uint64(word(p) >> 16) })
	condUint(icmp, "icmpv6.echo.sequence_number", "Sequence", FTUint16, BaseDec, 0, 6, 2, echo, func(p *Packet) uint64 { return uint64(word(p) & 0xFFFF) })
	multiField(icmp, "icmpv6.reserved", "Reserved", FTBytes, BaseNone, HdrICMPv6, func(p *Packet, out []Value) []Value {
		w, tg := p.ICMPv6Body()
		if tg == nil || p.ICMPv6.TypeCode.Type() != 135 {
			return out
		}
		return append(out, Value{B: w})
	})
	condUint(icmp, "icmpv6.nd.na.flag", "Flags", FTUint32, BaseHex, 0, 4, 4, na, func(p *Packet) uint64 { return uint64(word(p)) })
	flag := func(abbrev, name string, bit uint32) {
		condUint(icmp, abbrev, name, FTBoolean, BaseNone, uint64(bit), 4, 4, na, func(p *Packet) uint64 { return b2u(word(p)&bit != 0) })
	}
	flag("icmpv6.nd.na.flag.r", "Router", 0x80000000)
	flag("icmpv6.nd.na.flag.s", "Solicited", 0x40000000)
	flag("icmpv6.nd.na.flag.o", "Override", 0x20000000)
	condUint(icmp, "icmpv6.nd.na.flag.rsv", "Reserved", FTUint32, BaseDec, 0x1fffffff, 4, 4, na, func(p *Packet) uint64 { return uint64(word(p) & 0x1FFFFFFF) })
	target := func(abbrev string, t uint8) {
		multiField(icmp, abbrev, "Target Address", FTIPv6, BaseNone, HdrICMPv6, func(p *Packet, out []Value) []Value {
			_, tg := p.ICMPv6Body()
			if tg == nil || p.ICMPv6.TypeCode.Type() != t {
				return out
			}
			return append(out, Value{B: tg})
		})
	}
	target("icmpv6.nd.ns.target_address", 135)
	target("icmpv6.nd.na.target_address", 136)
	// Neighbor Discovery options after the target: type and length in
	// units of 8 bytes (RFC 4861 section 4.6).
	opts := func(abbrev, name string, get func(o []byte) uint64) {
		multiField(icmp, abbrev, name, FTUint8, BaseDec, HdrICMPv6, func(p *Packet, out []Value) []Value {
			_, tg := p.ICMPv6Body()
			if tg == nil {
				return out
			}
			b := p.ICMPv6.Payload[20:]
			for len(b) >= 2 && b[1] != 0 && 8*int(b[1]) <= len(b) {
				out = append(out, Value{U: get(b)})
				b = b[8*int(b[1]):]
			}
			return out
		})
	}
	opts("icmpv6.opt.type", "Type", func(o []byte) uint64 { return uint64(o[0]) })
	opts("icmpv6.opt.length", "Length", func(o []byte) uint64 { return uint64(o[1]) })
}

// icmpv6TypeNames are Wireshark's names of the ICMPv6 types.
var icmpv6TypeNames = map[uint8]string{
	1: "Destination Unreachable", 2: "Packet Too Big", 3: "Time Exceeded", 4: "Parameter Problem",
	128: "Echo (ping) request", 129: "Echo (ping) reply", 130: "Multicast Listener Query", 131: "Multicast Listener Report",
	132: "Multicast Listener Done", 133: "Router Solicitation", 134: "Router Advertisement", 135: "Neighbor Solicitation",
	136: "Neighbor Advertisement", 137: "Redirect", 143: "Multicast Listener Report Message v2",
}

// ICMPv6TypeName returns Wireshark's name of an ICMPv6 type.
func ICMPv6TypeName(t uint8) string {
	if n, ok := icmpv6TypeNames[t]; ok {
		return n
	}
	return "Unknown (" + strconv.Itoa(int(t)) + ")"
}

func registerTCPFields() {
	tcp := hdrField("tcp", "Transmission Control Protocol", FTProtocol, HdrTCP, func(p *Packet) []byte { return p.TCP.Contents })
	tcp.label = func(b []byte, p *Packet) []byte {
		return appendPortsLabel(b, "Transmission Control Protocol", uint16(p.TCP.SrcPort), uint16(p.TCP.DstPort))
	}
	uintField(tcp, "tcp.srcport", "Source Port", FTUint16, BasePortTCP, 0, 0, 2, func(p *Packet) uint64 { return uint64(p.TCP.SrcPort) })
	uintField(tcp, "tcp.dstport", "Destination Port", FTUint16, BasePortTCP, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.TCP.DstPort) })
	hidden(tcp, "tcp.port", "Source or Destination Port", FTUint16, BasePortTCP, HdrTCP, func(p *Packet, out []Value) []Value {
		return append(out, Value{U: uint64(p.TCP.SrcPort)}, Value{U: uint64(p.TCP.DstPort)})
	})
	uintField(tcp, "tcp.len", "TCP Segment Len", FTUint32, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(len(p.TCP.Payload)) })
	uintField(tcp, "tcp.seq_raw", "Sequence Number (raw)", FTUint32, BaseDec, 0, 4, 4, func(p *Packet) uint64 { return uint64(p.TCP.Seq) })
	uintField(tcp, "tcp.ack_raw", "Acknowledgment number (raw)", FTUint32, BaseDec, 0, 8, 4, func(p *Packet) uint64 { return uint64(p.TCP.Ack) })
	uintField(tcp, "tcp.hdr_len", "Header Length", FTUint8, BaseDec, 0, 12, 1, func(p *Packet) uint64 { return uint64(p.TCP.DataOffset) * 4 })
	uintField(tcp, "tcp.flags", "Flags", FTUint16, BaseHex, 0xfff, 12, 2, func(p *Packet) uint64 { return uint64(TCPFlags(p)) })
	for _, fl := range []struct {
		abbrev, name string
		bit          uint16
	}{
		{"tcp.flags.res", "Reserved", 0xe00}, {"tcp.flags.ae", "Accurate ECN", 0x100}, {"tcp.flags.cwr", "Congestion Window Reduced", 0x80},
		{"tcp.flags.ece", "ECN-Echo", 0x40}, {"tcp.flags.urg", "Urgent", 0x20}, {"tcp.flags.ack", "Acknowledgment", 0x10},
		{"tcp.flags.push", "Push", 0x08}, {"tcp.flags.reset", "Reset", 0x04}, {"tcp.flags.syn", "Syn", 0x02}, {"tcp.flags.fin", "Fin", 0x01},
	} {
		bit := fl.bit
		uintField(tcp, fl.abbrev, fl.name, FTBoolean, BaseNone, uint64(bit), 12, 2, func(p *Packet) uint64 { return b2u(TCPFlags(p)&bit != 0) })
	}
	uintField(tcp, "tcp.window_size_value", "Window", FTUint16, BaseDec, 0, 14, 2, func(p *Packet) uint64 { return uint64(p.TCP.Window) })
	uintField(tcp, "tcp.checksum", "Checksum", FTUint16, BaseHex, 0, 16, 2, func(p *Packet) uint64 { return uint64(p.TCP.Checksum) })
	uintField(tcp, "tcp.urgent_pointer", "Urgent Pointer", FTUint16, BaseDec, 0, 18, 2, func(p *Packet) uint64 { return uint64(p.TCP.Urgent) })
}

// TCPFlags returns the 12 flag bits of p's TCP header (reserved, AE/NS,
// CWR, ECE, URG, ACK, PSH, RST, SYN, FIN), as Wireshark's tcp.flags.
func TCPFlags(p *Packet) uint16 {
	c := p.TCP.Contents
	if len(c) < 14 {
		return 0
	}
	return binary.BigEndian.Uint16(c[12:]) & 0x0FFF
}

func registerLLDPFields() {
	lldp := hdrField("lldp", "Link Layer Discovery Protocol", FTProtocol, HdrLLDP, func(p *Packet) []byte { return p.LLDP.Contents })
	uintField(lldp, "lldp.chassis.subtype", "Chassis Id Subtype", FTUint8, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.LLDP.ChassisID.Subtype) })
	multiField(lldp, "lldp.chassis.id.mac", "Chassis Id", FTEther, BaseNone, HdrLLDP, func(p *Packet, out []Value) []Value {
		if p.LLDP.ChassisID.Subtype != 4 || len(p.LLDP.ChassisID.ID) != 6 {
			return out
		}
		return append(out, Value{B: p.LLDP.ChassisID.ID})
	})
	uintField(lldp, "lldp.port.subtype", "Port Id Subtype", FTUint8, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.LLDP.PortID.Subtype) })
	stringField(lldp, "lldp.port.id", "Port Id", HdrLLDP, func(p *Packet) string {
		if s := p.LLDP.PortID.Subtype; s != 5 && s != 7 && s != 1 && s != 2 {
			return ""
		}
		return string(p.LLDP.PortID.ID)
	})
	uintField(lldp, "lldp.time_to_live", "Seconds", FTUint16, BaseDec, 0, -1, 0, func(p *Packet) uint64 { return uint64(p.LLDP.TTL) })
}

// protocolsNet returns frame.protocols of a packet with IPoIB or one of
// the protocols above, as tshark names the chain:
// "eth:ethertype:ip:tcp", "erf:infiniband:ethertype:ip:icmp:data",
// "sll:ethertype:arp", "ipoib:ip:udp:data".
func protocolsNet(p *Packet) string {
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
	if p.Has&(HdrSLL|HdrSLL2) != 0 {
		add("sll")
		add("ethertype")
	}
	if p.Has&HdrEth != 0 {
		add("eth")
		add("ethertype")
	}
	for i := 0; i < p.NumVLAN; i++ {
		add("vlan")
		add("ethertype")
	}
	ip := p // whose ip, ipv6 and udp follow
	if p.Encap == EncapRoCEv2 {
		for _, x := range []struct {
			h    Hdr
			name string
		}{{HdrIPv4, "ip"}, {HdrIPv6, "ipv6"}, {HdrUDP, "udp"}} {
			if p.Has&x.h != 0 {
				add(x.name)
			}
		}
		ip = &Packet{}
		if q := p.Inner(); q != nil {
			ip = q
		}
	}
	if p.Encap != EncapNone {
		add("infiniband")
		if p.Has&HdrIPoIB != 0 {
			add("ethertype") // Wireshark hands the payload to the EtherType table
		}
	} else if p.Has&HdrIPoIB != 0 {
		add("ipoib")
	}
	for _, x := range []struct {
		h    Hdr
		name string
	}{{HdrARP, "arp"}, {HdrLLDP, "lldp"}, {HdrIPv4, "ip"}, {HdrIPv6, "ipv6"}, {HdrICMP, "icmp"}, {HdrICMPv6, "icmpv6"}, {HdrUDP, "udp"}, {HdrTCP, "tcp"}, {HdrData, "data"}} {
		has := p.Has
		if x.h&(HdrIPv4|HdrIPv6|HdrUDP) != 0 {
			has = ip.Has
		}
		if has&x.h != 0 {
			add(x.name)
		}
	}
	return string(b)
}
