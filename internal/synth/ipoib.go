package synth

import (
	"encoding/binary"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
)

// IPoIB (RFC 4391, 4392, 4755) and the protocols rocetap summarises
// without analysing them: ARP, ICMP, ICMPv6, TCP, UDP and LLDP, on
// Ethernet, on a Linux ib0 interface (cooked captures of hardware type
// ARPHRD_INFINIBAND, DLT_IPOIB) and carried by IPoIB SENDs over native
// InfiniBand and RoCEv1. gopacket's layers build every one of them.

// IPoIB hardware addresses (RFC 4391 section 9.1.1): 4 bytes of flags and
// QPN, then the port GID.
var (
	ipoibA  = ipoibHW(0x000048, gidA)
	ipoibB  = ipoibHW(0x000049, gidB)
	ipoibIP = [2]net.IP{net.IPv4(10, 77, 0, 1).To4(), net.IPv4(10, 77, 0, 2).To4()}
	ipoib6  = [2]net.IP{net.ParseIP("fe80::2:c903:0:a"), net.ParseIP("fe80::2:c903:0:b")}
	// The IPoIB broadcast GID of P_Key 0xffff (RFC 4391 section 4) and the
	// QPN every multicast is sent to.
	ipoibBcastGID = [16]byte{0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 12: 0xff, 0xff, 0xff, 0xff}
)

func ipoibHW(qpn uint32, g [16]byte) net.HardwareAddr {
	b := make([]byte, 20)
	binary.BigEndian.PutUint32(b, qpn)
	copy(b[4:], g[:])
	return b
}

// Inner is a packet at the network layer (IP or ARP) and what Decode
// reports for it: its EtherType, its layers from the network layer on,
// and the header bits.
type Inner struct {
	EtherType layers.EthernetType
	Layers    []gopacket.SerializableLayer
	Has       decode.Hdr
	ECN       int // -1 for ARP
}

func arpPkt(op uint16, hwType layers.LinkType, sha, tha net.HardwareAddr, spa, tpa net.IP) Inner {
	return Inner{EtherType: layers.EthernetTypeARP, Has: decode.HdrARP, ECN: -1, Layers: []gopacket.SerializableLayer{&layers.ARP{
		AddrType: hwType, Protocol: layers.EthernetTypeIPv4, Operation: op,
		SourceHwAddress: sha, SourceProtAddress: spa, DstHwAddress: tha, DstProtAddress: tpa,
	}}}
}

func ip4(src, dst net.IP, proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: proto, SrcIP: src, DstIP: dst, Id: 0x1c46}
}

func ip6(src, dst net.IP, nh layers.IPProtocol, hlim uint8) *layers.IPv6 {
	return &layers.IPv6{Version: 6, NextHeader: nh, HopLimit: hlim, SrcIP: src, DstIP: dst}
}

func withData(ls []gopacket.SerializableLayer, has decode.Hdr, data []byte) ([]gopacket.SerializableLayer, decode.Hdr) {
	if len(data) > 0 {
		ls = append(ls, gopacket.Payload(data))
		has |= decode.HdrData
	}
	return ls, has
}

func icmpEcho(src, dst net.IP, reply bool, id, seq uint16, data []byte) Inner {
	t := uint8(layers.ICMPv4TypeEchoRequest)
	if reply {
		t = layers.ICMPv4TypeEchoReply
	}
	ls, has := withData([]gopacket.SerializableLayer{ip4(src, dst, layers.IPProtocolICMPv4),
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(t, 0), Id: id, Seq: seq}}, decode.HdrIPv4|decode.HdrICMP, data)
	return Inner{EtherType: layers.EthernetTypeIPv4, Layers: ls, Has: has}
}

func udpPkt(src, dst net.IP, sport, dport uint16, data []byte, data4IPoIB bool) Inner {
	ip := ip4(src, dst, layers.IPProtocolUDP)
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	_ = u.SetNetworkLayerForChecksum(ip)
	has := decode.HdrIPv4 | decode.HdrUDP
	if data4IPoIB {
		has |= decode.HdrData // rocetap shows a UDP payload as data only inside IPoIB
	}
	return Inner{EtherType: layers.EthernetTypeIPv4, Layers: []gopacket.SerializableLayer{ip, u, gopacket.Payload(data)}, Has: has}
}

// tcpSeg is a TCP segment; flags are tshark's letters F S R P A U.
func tcpSeg(src, dst net.IP, sport, dport uint16, seq, ack uint32, flags string, win uint16, data []byte) Inner {
	ip := ip4(src, dst, layers.IPProtocolTCP)
	t := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, Ack: ack, Window: win}
	for _, f := range flags {
		switch f {
		case 'F':
			t.FIN = true
		case 'S':
			t.SYN = true
		case 'R':
			t.RST = true
		case 'P':
			t.PSH = true
		case 'A':
			t.ACK = true
		case 'U':
			t.URG, t.Urgent = true, 1
		}
	}
	_ = t.SetNetworkLayerForChecksum(ip)
	ls, has := withData([]gopacket.SerializableLayer{ip, t}, decode.HdrIPv4|decode.HdrTCP, data)
	return Inner{EtherType: layers.EthernetTypeIPv4, Layers: ls, Has: has}
}

// synOpts are the options Linux puts on a SYN: MSS 1460, SACK
// permitted, timestamps, NOP, window scale 7.
func synOpts(in Inner, tsval, tsecr uint32) Inner {
	ts := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, tsval), tsecr)
	for _, l := range in.Layers {
		if t, ok := l.(*layers.TCP); ok {
			t.Options = []layers.TCPOption{
				{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{0x05, 0xb4}},
				{OptionType: layers.TCPOptionKindSACKPermitted, OptionLength: 2},
				{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: ts},
				{OptionType: layers.TCPOptionKindNop},
				{OptionType: layers.TCPOptionKindWindowScale, OptionLength: 3, OptionData: []byte{7}},
			}
		}
	}
	return in
}

func icmp6(src, dst net.IP, hlim uint8, t uint8, body gopacket.SerializableLayer, data []byte) Inner {
	ip := ip6(src, dst, layers.IPProtocolICMPv6, hlim)
	ic := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(t, 0)}
	_ = ic.SetNetworkLayerForChecksum(ip)
	ls, has := withData([]gopacket.SerializableLayer{ip, ic, body}, decode.HdrIPv6|decode.HdrICMPv6, data)
	return Inner{EtherType: layers.EthernetTypeIPv6, Layers: ls, Has: has}
}

// ndOpt is a Neighbor Discovery link-layer address option: 6 bytes on
// Ethernet; on IPoIB 2 reserved bytes and the 20-byte address (RFC 4391
// section 9.1.2), 3 units of 8 bytes.
func ndOpt(typ layers.ICMPv6Opt, hw net.HardwareAddr) layers.ICMPv6Option {
	if len(hw) == 20 {
		return layers.ICMPv6Option{Type: typ, Data: append([]byte{0, 0}, hw...)}
	}
	return layers.ICMPv6Option{Type: typ, Data: hw}
}

// Net is a frame of the protocols above on a link layer: Ethernet, Linux
// cooked (v1, v2) with hardware type HAType (0: Ethernet), or DLT_IPOIB
// with its 40-byte pseudo-header (GRH form when PseudoGRH).
type Net struct {
	Link      Link
	IPoIBLink bool
	PseudoGRH bool
	HAType    uint16
	Src, Dst  net.HardwareAddr
	In        Inner
}

// Build returns the frame, its link type and what Decode must report.
func (s Net) Build() ([]byte, decode.LinkType, Want, error) {
	w := Want{Has: s.In.Has, ECN: s.In.ECN, AETH: -1}
	if s.IPoIBLink {
		body, err := serialize(append([]gopacket.SerializableLayer{&decode.IPoIBHdr{Type: uint16(s.In.EtherType)}}, s.In.Layers...)...)
		if err != nil {
			return nil, 0, Want{}, err
		}
		ph := make([]byte, decode.IPoIBPseudoLen)
		if s.PseudoGRH {
			binary.BigEndian.PutUint32(ph, 6<<28|0x12<<20|0x2468)
			binary.BigEndian.PutUint32(ph[4:], 0x48)
			copy(ph[8:], gidA[:])
		} else {
			binary.BigEndian.PutUint32(ph[20:], 0x49)
		}
		copy(ph[24:], gidB[:])
		w.Has |= decode.HdrIPoIB
		return append(ph, body...), decode.LinkTypeIPoIB, w, nil
	}
	var link []gopacket.SerializableLayer
	var linkHas decode.Hdr
	switch s.Link {
	case LinkSLL:
		link, linkHas = []gopacket.SerializableLayer{&sllHeader{HAType: s.HAType, Addr: s.Src, Protocol: s.In.EtherType}}, decode.HdrSLL
	case LinkSLL2:
		link, linkHas = []gopacket.SerializableLayer{&sll2Header{HAType: s.HAType, IfIndex: 4, Addr: s.Src, Protocol: s.In.EtherType}}, decode.HdrSLL2
	default:
		link, linkHas = []gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: s.Src, DstMAC: s.Dst, EthernetType: s.In.EtherType}}, decode.HdrEth
	}
	frame, err := serialize(append(link, s.In.Layers...)...)
	w.Has |= linkHas
	return frame, linkTypes[s.Link], w, err
}

// IPoIBSend is an IPoIB SEND carrying In: on native InfiniBand (LRH, the
// GRH when GRH is set) unless RoCEv1 is set (Ethernet, GRH first) or
// RoCEv2 is (Ethernet, IPv4 or IPv6 with RoCEv2.IPv6, UDP). T gives the
// BTH (opcode, QPs, PSN) and the DETH of a UD SEND; the payload is the
// IPoIB header and In.
type IPoIBSend struct {
	LRH    decode.LRH
	GRH    *decode.GRH
	RoCEv1 bool
	RoCEv2 *RoCEv2
	T      Transport
	In     Inner
}

// Build returns the frame, its link type and what Decode must report.
func (s IPoIBSend) Build() ([]byte, decode.LinkType, Want, error) {
	pl, err := serialize(append([]gopacket.SerializableLayer{&decode.IPoIBHdr{Type: uint16(s.In.EtherType)}}, s.In.Layers...)...)
	if err != nil {
		return nil, 0, Want{}, err
	}
	t := s.T
	t.Payload = pl
	t.BTH.PadCount = padFor(len(pl))
	var fr Frame = IB{LRH: s.LRH, GRH: s.GRH, T: t}
	if s.RoCEv1 {
		v1 := RoCEv1{T: t, HopLimit: 64}
		if s.GRH != nil {
			v1.TrafficClass, v1.FlowLabel, v1.HopLimit = s.GRH.TrafficClass, s.GRH.FlowLabel, s.GRH.HopLimit
		}
		fr = v1
	}
	if s.RoCEv2 != nil {
		v2 := *s.RoCEv2
		v2.T, v2.UDPChecksum = t, true
		frame, link, w, err := v2.Build()
		// The carried IP and UDP headers are second occurrences
		// (HdrInner); the packet's own are RoCEv2's.
		const ipUDP = decode.HdrIPv4 | decode.HdrIPv6 | decode.HdrUDP
		w.Has |= decode.HdrIPoIB | s.In.Has&^ipUDP
		if s.In.Has&ipUDP != 0 {
			w.Has |= decode.HdrInner
		}
		return frame, link, w, err
	}
	frame, link, w, err := fr.Build()
	w.Has |= decode.HdrIPoIB | s.In.Has
	return frame, link, w, err // ECN: the IP header is payload, not the packet's
}

// ipoibUD returns a UD SEND Only of IPoIB from QP 0x48 on LID 1 to dqp
// on LID 2 (LID 0xC000, the multicast range, with the broadcast GID when
// bcast), QKey 0x0B1B (the IPoIB broadcast group's).
func ipoibUD(psn uint32, dqp uint32, bcast, grh bool, in Inner) IPoIBSend {
	s := IPoIBSend{LRH: ibLRH(0, 0, 0x0002, 0x0001), In: in, T: Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: dqp, PSN: decode.PSN(psn)},
		DETH: decode.DETH{QKey: 0x0B1B, SrcQP: 0x48},
	}}
	if grh || bcast {
		g := &decode.GRH{IPVer: 6, HopLimit: 1, SGID: gidA, DGID: gidB}
		if bcast {
			g.DGID = ipoibBcastGID
			s.LRH.DLID = 0xC000
		}
		s.GRH = g
	}
	return s
}

// ipoibIB: IPoIB datagram mode (UD) and connected mode (RC) over native
// InfiniBand, with and without a GRH.
func ipoibIB() (File, error) {
	b := newFile("ipoib_ib.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	a, z := ipoibIP[0], ipoibIP[1]
	rev := func(s IPoIBSend) IPoIBSend { // from LID 2, QP 0x49
		s.LRH.DLID, s.LRH.SLID = s.LRH.SLID, s.LRH.DLID
		s.T.DETH.SrcQP = 0x49
		if s.GRH != nil {
			g := *s.GRH
			g.SGID, g.DGID = gidB, gidA
			s.GRH = &g
		}
		return s
	}
	b.add("UD broadcast (GRH, DLID 0xC000, QP 0xFFFFFF): ARP request, 20-byte hardware addresses", ipoibUD(1, 0xFFFFFF, true, true,
		arpPkt(1, 32, ipoibA, make(net.HardwareAddr, 20), a, z)))
	b.add("UD unicast (no GRH): ARP reply", rev(ipoibUD(7, 0x48, false, false, arpPkt(2, 32, ipoibB, ipoibA, z, a))))
	b.add("UD: ICMP echo request with 16 bytes of data", ipoibUD(2, 0x49, false, false, icmpEcho(a, z, false, 0x0d01, 1, payload(16, 1))))
	b.add("UD: ICMP echo reply", rev(ipoibUD(8, 0x48, false, false, icmpEcho(z, a, true, 0x0d01, 1, payload(16, 1)))))
	b.add("UD with GRH: UDP 40000 → 40001, 10 bytes", ipoibUD(3, 0x49, false, true, udpPkt(a, z, 40000, 40001, payload(10, 2), true)))
	b.add("UD: TCP SYN 44444 → 44445", ipoibUD(4, 0x49, false, false, tcpSeg(a, z, 44444, 44445, 1000, 0, "S", 65535, nil)))
	b.add("UD: TCP SYN, ACK", rev(ipoibUD(9, 0x48, false, false, tcpSeg(z, a, 44445, 44444, 5000, 1001, "SA", 65535, nil))))
	b.add("UD multicast (GRH): ICMPv6 Neighbor Solicitation, IPoIB source link-layer option", ipoibUD(5, 0xFFFFFF, true, true,
		icmp6(ipoib6[0], net.ParseIP("ff02::1:ff00:b"), 255, layers.ICMPv6TypeNeighborSolicitation,
			&layers.ICMPv6NeighborSolicitation{TargetAddress: ipoib6[1], Options: layers.ICMPv6Options{ndOpt(layers.ICMPv6OptSourceAddress, ipoibA)}}, nil)))
	b.add("UD (GRH): ICMPv6 Neighbor Advertisement (solicited, override)", rev(ipoibUD(10, 0x48, false, true,
		icmp6(ipoib6[1], ipoib6[0], 255, layers.ICMPv6TypeNeighborAdvertisement,
			&layers.ICMPv6NeighborAdvertisement{Flags: 0x60, TargetAddress: ipoib6[1], Options: layers.ICMPv6Options{ndOpt(layers.ICMPv6OptTargetAddress, ipoibB)}}, nil))))
	b.add("UD (GRH): ICMPv6 echo request", ipoibUD(6, 0x49, false, true,
		icmp6(ipoib6[0], ipoib6[1], 64, layers.ICMPv6TypeEchoRequest, &layers.ICMPv6Echo{Identifier: 0x0e01, SeqNumber: 1}, payload(8, 3))))
	// Connected mode (RFC 4755): the same IPoIB header on an RC QP.
	cm := func(psn uint32, in Inner) IPoIBSend {
		return IPoIBSend{LRH: ibLRH(0, 0, 0x0002, 0x0001), In: in, T: Transport{
			BTH: decode.BTH{Opcode: rc(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0x4a, PSN: decode.PSN(psn), AckReq: true}}}
	}
	b.add("RC (IPoIB-CM): TCP PSH, ACK with 24 bytes", cm(0x100, tcpSeg(a, z, 44444, 44445, 1001, 5001, "PA", 4096, payload(24, 4))))
	b.add("RC: ACK of it", IB{LRH: ibLRH(0, 0, 0x0001, 0x0002), T: Transport{
		BTH: decode.BTH{Opcode: rc(decode.OpAcknowledge), PKey: 0xFFFF, DestQP: 0x4b, PSN: 0x100}, AETH: decode.AETH{Syndrome: 0x1F, MSN: 1}}})
	b.add("RC (IPoIB-CM) with GRH: TCP FIN, ACK", func() IPoIBSend {
		s := cm(0x101, tcpSeg(a, z, 44444, 44445, 1025, 5001, "FA", 4096, nil))
		s.GRH = &decode.GRH{IPVer: 6, HopLimit: 1, SGID: gidA, DGID: gidB}
		return s
	}())
	return b.done()
}

// ipoibIB0: what tcpdump writes on a Linux ib0 interface: cooked captures
// (v1 and v2) of hardware type ARPHRD_INFINIBAND (32) whose frames start
// at the IP or ARP header (the IPoIB header is gone), and DLT_IPOIB (242)
// frames with Wireshark's 40-byte pseudo-header and the IPoIB header.
func ipoibIB0() (File, error) {
	b := newFile("ipoib_ib0.pcapng", PcapNG, 0)
	b.f.Ifaces = []Iface{
		{Name: "ib0 (Linux cooked v1)", LinkType: decode.LinkTypeLinuxSLL},
		{Name: "ib0 (Linux cooked v2)", LinkType: decode.LinkTypeLinuxSLL2},
		{Name: "ib0 (DLT_IPOIB)", LinkType: decode.LinkTypeIPoIB},
	}
	a, z := ipoibIP[0], ipoibIP[1]
	on := func(iface int, note string, s Net) {
		if iface == 2 {
			s.IPoIBLink = true
		} else {
			s.Link = []Link{LinkSLL, LinkSLL2}[iface]
		}
		s.HAType = 32
		r := b.add(note, s)
		r.Iface = iface
	}
	on(0, "SLL: ARP request, 20-byte addresses", Net{Src: ipoibA, In: arpPkt(1, 32, ipoibA, make(net.HardwareAddr, 20), a, z)})
	on(1, "SLL2: ARP reply", Net{Src: ipoibB, In: arpPkt(2, 32, ipoibB, ipoibA, z, a)})
	on(0, "SLL: ICMP echo request", Net{Src: ipoibA, In: icmpEcho(a, z, false, 0x0f01, 3, payload(8, 5))})
	on(1, "SLL2: ICMP echo reply", Net{Src: ipoibB, In: icmpEcho(z, a, true, 0x0f01, 3, payload(8, 5))})
	on(0, "SLL: TCP SYN", Net{Src: ipoibA, In: tcpSeg(a, z, 44446, 44447, 77, 0, "S", 29200, nil)})
	on(1, "SLL2: ICMPv6 echo request", Net{Src: ipoibA, In: icmp6(ipoib6[0], ipoib6[1], 64, layers.ICMPv6TypeEchoRequest, &layers.ICMPv6Echo{Identifier: 7, SeqNumber: 2}, payload(4, 6))})
	on(2, "DLT_IPOIB, destination-address pseudo-header: ICMP echo request", Net{In: icmpEcho(a, z, false, 0x1001, 1, payload(8, 7))})
	on(2, "DLT_IPOIB, GRH pseudo-header: UDP 40000 → 40001", Net{PseudoGRH: true, In: udpPkt(a, z, 40000, 40001, payload(6, 8), true)})
	on(2, "DLT_IPOIB: ARP request", Net{In: arpPkt(1, 32, ipoibA, make(net.HardwareAddr, 20), a, z)})
	return b.done()
}

// summaries: the non-RDMA traffic of a RoCE host, on Ethernet, that
// rocetap summarises as tshark does; and IPoIB over RoCEv1.
func summaries() (File, error) {
	b := newFile("summaries.pcap", PcapMicro, decode.LinkTypeEthernet)
	a, z := ipA, ipB
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	eth := func(rev bool, in Inner) Net {
		if rev {
			return Net{Src: macB, Dst: macA, In: in}
		}
		return Net{Src: macA, Dst: macB, In: in}
	}
	b.add("ARP request", Net{Src: macA, Dst: bcast, In: arpPkt(1, 1, macA, make(net.HardwareAddr, 6), a, z)})
	b.add("ARP reply", eth(true, arpPkt(2, 1, macB, macA, z, a)))
	b.add("gratuitous ARP", Net{Src: macA, Dst: bcast, In: arpPkt(1, 1, macA, make(net.HardwareAddr, 6), a, a)})
	b.add("ICMP echo request", eth(false, icmpEcho(a, z, false, 0x1234, 1, payload(32, 9))))
	b.add("ICMP echo reply", eth(true, icmpEcho(z, a, true, 0x1234, 1, payload(32, 9))))
	b.add("TCP SYN with MSS, SACK permitted, timestamps and window scale", eth(false, synOpts(tcpSeg(a, z, 44444, 44445, 3000, 0, "S", 64240, nil), 1000, 0)))
	b.add("TCP SYN, ACK with the same options", eth(true, synOpts(tcpSeg(z, a, 44445, 44444, 9000, 3001, "SA", 65160, nil), 2000, 1000)))
	b.add("TCP ACK", eth(false, tcpSeg(a, z, 44444, 44445, 3001, 9001, "A", 502, nil)))
	b.add("TCP PSH, ACK with 20 bytes", eth(false, tcpSeg(a, z, 44444, 44445, 3001, 9001, "PA", 502, payload(20, 10))))
	b.add("TCP FIN, ACK", eth(true, tcpSeg(z, a, 44445, 44444, 9001, 3021, "FA", 509, nil)))
	b.add("TCP RST", eth(false, tcpSeg(a, z, 44444, 44445, 3021, 0, "R", 0, nil)))
	b.add("TCP URG, ACK", eth(false, tcpSeg(a, z, 44446, 44445, 1, 1, "UA", 100, payload(4, 11))))
	b.add("UDP 40000 → 40001", eth(false, udpPkt(a, z, 40000, 40001, payload(12, 12), false)))
	b.add("ICMPv6 echo request", eth(false, icmp6(ip6A, ip6B, 64, layers.ICMPv6TypeEchoRequest, &layers.ICMPv6Echo{Identifier: 0x4d2, SeqNumber: 5}, payload(16, 13))))
	b.add("ICMPv6 echo reply", eth(true, icmp6(ip6B, ip6A, 64, layers.ICMPv6TypeEchoReply, &layers.ICMPv6Echo{Identifier: 0x4d2, SeqNumber: 5}, payload(16, 13))))
	b.add("ICMPv6 Neighbor Solicitation", eth(false, icmp6(ip6A, net.ParseIP("ff02::1:ff00:b"), 255, layers.ICMPv6TypeNeighborSolicitation,
		&layers.ICMPv6NeighborSolicitation{TargetAddress: ip6B, Options: layers.ICMPv6Options{ndOpt(layers.ICMPv6OptSourceAddress, macA)}}, nil)))
	b.add("ICMPv6 Neighbor Advertisement (solicited, override)", eth(true, icmp6(ip6B, ip6A, 255, layers.ICMPv6TypeNeighborAdvertisement,
		&layers.ICMPv6NeighborAdvertisement{Flags: 0x60, TargetAddress: ip6B, Options: layers.ICMPv6Options{ndOpt(layers.ICMPv6OptTargetAddress, macB)}}, nil)))
	b.add("LLDP: chassis MAC, port name, TTL 120", Net{Src: macA, Dst: net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}, In: Inner{
		EtherType: layers.EthernetTypeLinkLayerDiscovery, Has: decode.HdrLLDP, ECN: -1, Layers: []gopacket.SerializableLayer{&layers.LinkLayerDiscovery{
			ChassisID: layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeMACAddr, ID: macA},
			PortID:    layers.LLDPPortID{Subtype: layers.LLDPPortIDSubtypeIfaceName, ID: []byte("eth2")},
			TTL:       120,
		}}}})
	v1 := func(in Inner) IPoIBSend {
		return IPoIBSend{RoCEv1: true, In: in, T: Transport{
			BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0x49, PSN: 0x10},
			DETH: decode.DETH{QKey: 0x0B1B, SrcQP: 0x48},
		}}
	}
	b.add("RoCEv1 UD SEND Only: IPoIB ICMP echo request", v1(icmpEcho(ipoibIP[0], ipoibIP[1], false, 0x2001, 1, payload(8, 14))))
	b.add("RoCEv1 UD SEND Only: IPoIB ARP request", v1(arpPkt(1, 32, ipoibA, make(net.HardwareAddr, 20), ipoibIP[0], ipoibIP[1])))
	v2 := func(v6 bool, in Inner) IPoIBSend {
		s := v1(in)
		s.RoCEv1, s.RoCEv2 = false, &RoCEv2{IPv6: v6, ECN: 2}
		return s
	}
	b.add("RoCEv2/IPv4 UD SEND Only: IPoIB ICMP echo request (a second IPv4 header)", v2(false, icmpEcho(ipoibIP[0], ipoibIP[1], false, 0x2002, 2, payload(8, 15))))
	b.add("RoCEv2/IPv6 UD SEND Only: IPoIB UDP 40000 → 40001 (a second UDP header)", v2(true, udpPkt(ipoibIP[0], ipoibIP[1], 40000, 40001, payload(6, 16), true)))
	b.add("RoCEv2/IPv4 UD SEND Only: IPoIB ICMPv6 echo request", v2(false, icmp6(ipoib6[0], ipoib6[1], 64, layers.ICMPv6TypeEchoRequest, &layers.ICMPv6Echo{Identifier: 9, SeqNumber: 3}, payload(4, 17))))
	b.add("RoCEv2/IPv4 UD SEND Only: IPoIB ARP reply", v2(false, arpPkt(2, 32, ipoibB, ipoibA, ipoibIP[1], ipoibIP[0])))
	return b.done()
}
