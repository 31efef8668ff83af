package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
)

// Addresses of the two synthetic hosts: A is the requester, B the responder.
var (
	macA  = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0x0a}
	macB  = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0x0b}
	ipA   = net.IPv4(192, 168, 77, 10).To4()
	ipB   = net.IPv4(192, 168, 77, 11).To4()
	ip6A  = net.ParseIP("fd00:77::a")
	ip6B  = net.ParseIP("fd00:77::b")
	gidA  = gid(0x0a)
	gidB  = gid(0x0b)
	pfcTo = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}
)

// gid returns a link-local GID (fe80::2:c903:0:xx, a Mellanox-style GUID).
func gid(host byte) [16]byte {
	return [16]byte{0xfe, 0x80, 8: 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x00, host}
}

var serializeOpts = gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}

// Transport is the InfiniBand transport of a frame: the BTH, the extended
// headers its opcode calls for (taken from the fields below, in the order
// IBA Table 38 gives), the payload, and BTH.PadCount zero bytes of pad.
type Transport struct {
	BTH          decode.BTH
	RDETH        decode.RDETH
	DETH         decode.DETH
	XRCETH       decode.XRCETH
	RETH         decode.RETH
	AtomicETH    decode.AtomicETH
	AETH         decode.AETH
	AtomicAckETH decode.AtomicAckETH
	ImmDt        decode.ImmDt
	IETH         decode.IETH
	FETH         decode.FETH
	Payload      []byte
}

// layers returns the transport's layers (without the ICRC) and the header
// bits Decode sets for them.
func (t *Transport) layers() ([]gopacket.SerializableLayer, decode.Hdr) {
	bth := t.BTH
	ls := []gopacket.SerializableLayer{&bth}
	has := decode.HdrBTH | decode.HdrICRC
	for _, h := range bth.Opcode.ExtHeaders() {
		has |= h
		var l gopacket.SerializableLayer
		switch h {
		case decode.HdrRDETH:
			x := t.RDETH
			l = &x
		case decode.HdrDETH:
			x := t.DETH
			l = &x
		case decode.HdrXRCETH:
			x := t.XRCETH
			l = &x
		case decode.HdrRETH:
			x := t.RETH
			l = &x
		case decode.HdrAtomicETH:
			x := t.AtomicETH
			l = &x
		case decode.HdrAETH:
			x := t.AETH
			l = &x
		case decode.HdrAtomicAckETH:
			x := t.AtomicAckETH
			l = &x
		case decode.HdrImmDt:
			x := t.ImmDt
			l = &x
		case decode.HdrIETH:
			x := t.IETH
			l = &x
		case decode.HdrFETH:
			x := t.FETH
			l = &x
		case decode.HdrCNP:
			l = &decode.CNPPadding{}
		}
		ls = append(ls, l)
	}
	body := append(bytes.Clone(t.Payload), make([]byte, bth.PadCount)...)
	if len(body) > 0 {
		ls = append(ls, gopacket.Payload(body))
	}
	if len(t.Payload) > 0 {
		has |= decode.HdrPayload
	}
	return ls, has
}

// want returns the expectations every well-formed frame of t shares.
func (t *Transport) want(encap decode.Encapsulation, has decode.Hdr) Want {
	w := Want{
		Encap: encap, Opcode: t.BTH.Opcode, PSN: t.BTH.PSN, DestQP: t.BTH.DestQP,
		Has: has, ICRC: decode.CRCGood, ECN: -1, AETH: -1,
	}
	if !t.BTH.Opcode.Known() {
		w.Flags |= decode.FlagUnknownOpcode
	}
	if has&decode.HdrAETH != 0 {
		w.AETH = int(t.AETH.Syndrome)
	}
	return w
}

// Link is the link layer a RoCEv2 frame is captured with.
type Link uint8

// Links.
const (
	LinkEthernet Link = iota // Ethernet II, optionally VLAN tagged
	LinkSLL                  // Linux cooked capture v1 (113)
	LinkSLL2                 // Linux cooked capture v2 (276)
	LinkRaw                  // raw IP (101)
)

var linkTypes = [...]decode.LinkType{decode.LinkTypeEthernet, decode.LinkTypeLinuxSLL, decode.LinkTypeLinuxSLL2, decode.LinkTypeRaw}

// VLAN is an 802.1Q (TPID 0x8100) or 802.1ad (0x88a8) tag.
type VLAN struct {
	TPID     uint16
	ID       uint16
	Priority uint8
}

// RoCEv2 describes a RoCEv2 frame.
type RoCEv2 struct {
	Link    Link
	VLANs   []VLAN // outermost first
	IPv6    bool
	Reverse bool  // from B to A (responses)
	DSCP    uint8 // IP DSCP (6 bits)
	ECN     uint8 // IP ECN (2 bits): 1 ECT(1), 2 ECT(0), 3 CE
	TTL     uint8 // IPv4 TTL or IPv6 hop limit (0: 64)
	Flow    uint32
	SrcPort uint16 // 0: derived from the destination QP, as rxe does
	DstPort uint16 // 0: 4791
	// UDPChecksum computes a valid UDP checksum; otherwise it is 0, as the
	// Linux rxe driver sends it (over IPv6 too).
	UDPChecksum bool
	T           Transport
}

func (s *RoCEv2) ports() (uint16, uint16) {
	src, dst := s.SrcPort, s.DstPort
	if src == 0 {
		src = 0xC000 | uint16(s.T.BTH.DestQP*7919)&0x3FFF
	}
	if dst == 0 {
		dst = decode.RoCEv2Port
	}
	return src, dst
}

// linkLayers returns the link-layer layers ending in EtherType et.
func linkLayers(link Link, vlans []VLAN, reverse bool, et layers.EthernetType) ([]gopacket.SerializableLayer, decode.Hdr) {
	src, dst := macA, macB
	if reverse {
		src, dst = dst, src
	}
	switch link {
	case LinkSLL:
		pt := uint16(4) // outgoing
		if reverse {
			pt = 0 // to us
		}
		return []gopacket.SerializableLayer{&sllHeader{PacketType: pt, Addr: src, Protocol: et}}, decode.HdrSLL
	case LinkSLL2:
		pt := uint8(4)
		if reverse {
			pt = 0
		}
		return []gopacket.SerializableLayer{&sll2Header{Protocol: et, IfIndex: 7, PacketType: pt, Addr: src}}, decode.HdrSLL2
	case LinkRaw:
		return nil, 0
	}
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: et}
	ls := []gopacket.SerializableLayer{eth}
	has := decode.HdrEth
	for i, v := range vlans {
		if i == 0 {
			eth.EthernetType = layers.EthernetType(v.TPID)
		}
		next := et
		if i+1 < len(vlans) {
			next = layers.EthernetType(vlans[i+1].TPID)
		}
		ls = append(ls, &layers.Dot1Q{Priority: v.Priority, VLANIdentifier: v.ID, Type: next})
		has |= decode.HdrVLAN
	}
	return ls, has
}

func serialize(ls ...gopacket.SerializableLayer) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, serializeOpts, ls...); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// Build returns the frame, its link type and what Decode must report.
func (s RoCEv2) Build() ([]byte, decode.LinkType, Want, error) {
	tr, trHas := s.T.layers()
	sport, dport := s.ports()
	ttl := s.TTL
	if ttl == 0 {
		ttl = 64
	}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	var ip gopacket.SerializableLayer
	var et layers.EthernetType
	has := decode.HdrUDP
	if s.IPv6 {
		src, dst := ip6A, ip6B
		if s.Reverse {
			src, dst = dst, src
		}
		ip6 := &layers.IPv6{Version: 6, TrafficClass: s.DSCP<<2 | s.ECN&3, FlowLabel: s.Flow,
			NextHeader: layers.IPProtocolUDP, HopLimit: ttl, SrcIP: src, DstIP: dst}
		_ = udp.SetNetworkLayerForChecksum(ip6)
		ip, et, has = ip6, layers.EthernetTypeIPv6, has|decode.HdrIPv6
	} else {
		src, dst := ipA, ipB
		if s.Reverse {
			src, dst = dst, src
		}
		ip4 := &layers.IPv4{Version: 4, IHL: 5, TOS: s.DSCP<<2 | s.ECN&3, Flags: layers.IPv4DontFragment,
			TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		_ = udp.SetNetworkLayerForChecksum(ip4)
		ip, et, has = ip4, layers.EthernetTypeIPv4, has|decode.HdrIPv4
	}
	link, linkHas := linkLayers(s.Link, s.VLANs, s.Reverse, et)
	linkType := linkTypes[s.Link]
	var vlans []uint16
	for _, v := range s.VLANs {
		vlans = append(vlans, v.ID)
	}
	if dport != decode.RoCEv2Port {
		// Not RoCE to rocetap: decoded down to UDP only.
		w := Want{Encap: decode.EncapNone, Has: has | linkHas, ECN: int(s.ECN & 3), VLANs: vlans, AETH: -1}
		frame, err := serialize(append(link, ip, udp, gopacket.Payload(s.T.Payload))...)
		return frame, linkType, w, err
	}
	w := s.T.want(decode.EncapRoCEv2, has|linkHas|trHas)
	w.ECN, w.VLANs = int(s.ECN&3), vlans
	icrc := &decode.ICRC{}
	ls := append(append(link, ip, udp), tr...)
	ls = append(ls, icrc)
	frame, err := serialize(ls...)
	if err != nil {
		return nil, 0, Want{}, err
	}
	if err := decode.FixCRCs(frame, linkType); err != nil {
		return nil, 0, Want{}, err
	}
	if !s.UDPChecksum {
		off := linkLen(s.Link, len(s.VLANs)) + 20
		if s.IPv6 {
			off = linkLen(s.Link, len(s.VLANs)) + 40
		}
		frame[off+6], frame[off+7] = 0, 0
		return frame, linkType, w, nil
	}
	// Serialize again with the final ICRC so that gopacket's UDP checksum
	// covers it.
	var p decode.Packet
	p.Frame.Len = len(frame)
	decode.Decode(&p, frame, linkType)
	icrc.CRC = p.ICRC.CRC
	frame, err = serialize(ls...)
	return frame, linkType, w, err
}

func linkLen(l Link, nvlan int) int {
	switch l {
	case LinkSLL:
		return 16
	case LinkSLL2:
		return 20
	case LinkRaw:
		return 0
	}
	return 14 + 4*nvlan
}

// RoCEv1 describes a RoCEv1 frame (EtherType 0x8915: GRH, then BTH).
type RoCEv1 struct {
	VLANs        []VLAN
	Reverse      bool
	TrafficClass uint8
	FlowLabel    uint32
	HopLimit     uint8
	T            Transport
}

// Build returns the frame, its link type and what Decode must report.
func (s RoCEv1) Build() ([]byte, decode.LinkType, Want, error) {
	tr, trHas := s.T.layers()
	sgid, dgid := gidA, gidB
	if s.Reverse {
		sgid, dgid = dgid, sgid
	}
	grh := &decode.GRH{IPVer: 6, TrafficClass: s.TrafficClass, FlowLabel: s.FlowLabel, HopLimit: s.HopLimit,
		NextHeader: decode.GRHNextHeaderIBA, SGID: sgid, DGID: dgid}
	link, linkHas := linkLayers(LinkEthernet, s.VLANs, s.Reverse, layers.EthernetType(decode.EtherTypeRoCEv1))
	frame, err := serialize(append(append(append(link, grh), tr...), &decode.ICRC{})...)
	if err != nil {
		return nil, 0, Want{}, err
	}
	if err := decode.FixCRCs(frame, decode.LinkTypeEthernet); err != nil {
		return nil, 0, Want{}, err
	}
	w := s.T.want(decode.EncapRoCEv1, linkHas|decode.HdrGRH|trHas)
	for _, v := range s.VLANs {
		w.VLANs = append(w.VLANs, v.ID)
	}
	return frame, decode.LinkTypeEthernet, w, nil
}

// IB describes a native InfiniBand packet: LRH, the GRH when GRH is set
// (LNH 3, else LNH 2), the transport, ICRC and VCRC.
type IB struct {
	LRH decode.LRH
	GRH *decode.GRH
	T   Transport
}

// Build returns the packet, link type 247 and what Decode must report.
func (s IB) Build() ([]byte, decode.LinkType, Want, error) {
	tr, trHas := s.T.layers()
	lrh := s.LRH
	lrh.LNH = decode.LNHLocal
	ls := []gopacket.SerializableLayer{&lrh}
	has := decode.HdrLRH | decode.HdrVCRC | trHas
	if s.GRH != nil {
		lrh.LNH = decode.LNHGlobal
		g := *s.GRH
		g.NextHeader = decode.GRHNextHeaderIBA
		ls = append(ls, &g)
		has |= decode.HdrGRH
	}
	// The trailers append themselves and the last layer serializes first:
	// VCRC before ICRC in the list puts the ICRC first on the wire.
	ls = append(append(ls, tr...), &decode.VCRC{}, &decode.ICRC{})
	frame, err := serialize(ls...)
	if err != nil {
		return nil, 0, Want{}, err
	}
	if s.GRH != nil {
		// PayLen counts BTH through ICRC; FixLengths counted the VCRC too.
		binary.BigEndian.PutUint16(frame[decode.LRHLen+4:], uint16(len(frame)-decode.LRHLen-decode.GRHLen-decode.VCRCLen))
	}
	if err := decode.FixCRCs(frame, decode.LinkTypeInfiniBand); err != nil {
		return nil, 0, Want{}, err
	}
	w := s.T.want(decode.EncapIB, has)
	w.VCRC = decode.CRCGood
	return frame, decode.LinkTypeInfiniBand, w, nil
}

// PFC describes an 802.3 MAC Control frame: Priority Flow Control (opcode
// 0x0101) when Pause is false, else a classic PAUSE (opcode 0x0001, whose
// time is Quanta[0]).
type PFC struct {
	Pause       bool
	ClassEnable uint16
	Quanta      [8]uint16
	Src         net.HardwareAddr // the port that sends it (nil: host A)
}

// Build returns the frame, link type 1 and what Decode must report.
func (s PFC) Build() ([]byte, decode.LinkType, Want, error) {
	mc := &macControl{Opcode: 0x0101, ClassEnable: s.ClassEnable, Quanta: s.Quanta}
	w := Want{Has: decode.HdrEth | decode.HdrPFC, ECN: -1, AETH: -1,
		PFC: &decode.PFCHdr{Opcode: 0x0101, ClassEnable: s.ClassEnable, Quanta: s.Quanta}}
	if s.Pause {
		mc = &macControl{Opcode: 0x0001, Quanta: [8]uint16{s.Quanta[0]}}
		w.Has = decode.HdrEth | decode.HdrPause
		w.PFC = &decode.PFCHdr{Opcode: 1, Quanta: [8]uint16{s.Quanta[0]}}
	}
	src := macA
	if s.Src != nil {
		src = s.Src
	}
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: pfcTo, EthernetType: layers.EthernetType(0x8808)}
	frame, err := serialize(eth, mc)
	return frame, decode.LinkTypeEthernet, w, err
}

// sllHeader is a Linux cooked capture (v1) header.
type sllHeader struct {
	PacketType uint16
	HAType     uint16 // ARPHRD_* (0: ARPHRD_ETHER)
	Addr       net.HardwareAddr
	Protocol   layers.EthernetType
}

// LayerType returns gopacket's LinuxSLL layer type.
func (h *sllHeader) LayerType() gopacket.LayerType { return layers.LayerTypeLinuxSLL }

// SerializeTo prepends the 16-byte header.
func (h *sllHeader) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(16)
	if err != nil {
		return err
	}
	clear(d)
	binary.BigEndian.PutUint16(d[0:], h.PacketType)
	binary.BigEndian.PutUint16(d[2:], haType(h.HAType))
	binary.BigEndian.PutUint16(d[4:], uint16(len(h.Addr)))
	copy(d[6:14], h.Addr)
	binary.BigEndian.PutUint16(d[14:], uint16(h.Protocol))
	return nil
}

// sll2Header is a Linux cooked capture v2 header.
type sll2Header struct {
	Protocol   layers.EthernetType
	IfIndex    uint32
	PacketType uint8
	HAType     uint16 // ARPHRD_* (0: ARPHRD_ETHER)
	Addr       net.HardwareAddr
}

// haType returns t, or ARPHRD_ETHER (1) when t is 0.
func haType(t uint16) uint16 {
	if t == 0 {
		return 1
	}
	return t
}

// LayerType returns gopacket's LinuxSLL2 layer type.
func (h *sll2Header) LayerType() gopacket.LayerType { return layers.LayerTypeLinuxSLL2 }

// SerializeTo prepends the 20-byte header.
func (h *sll2Header) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(20)
	if err != nil {
		return err
	}
	clear(d)
	binary.BigEndian.PutUint16(d[0:], uint16(h.Protocol))
	binary.BigEndian.PutUint32(d[4:], h.IfIndex)
	binary.BigEndian.PutUint16(d[8:], haType(h.HAType))
	d[10] = h.PacketType
	d[11] = byte(len(h.Addr))
	copy(d[12:20], h.Addr)
	return nil
}

// macControl is the body of an 802.3 MAC Control frame (EtherType 0x8808).
type macControl struct {
	Opcode      uint16
	ClassEnable uint16
	Quanta      [8]uint16
}

// LayerType returns the payload layer type (gopacket has no MAC Control layer).
func (h *macControl) LayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// SerializeTo prepends the opcode and its parameters; Ethernet pads the
// frame to 60 bytes.
func (h *macControl) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if h.Opcode == 0x0001 {
		d, err := b.PrependBytes(4)
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint16(d, h.Opcode)
		binary.BigEndian.PutUint16(d[2:], h.Quanta[0])
		return nil
	}
	d, err := b.PrependBytes(20)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(d, h.Opcode)
	binary.BigEndian.PutUint16(d[2:], h.ClassEnable)
	for i, q := range h.Quanta {
		binary.BigEndian.PutUint16(d[4+2*i:], q)
	}
	return nil
}

// erfRecord wraps a frame in an ERF record the way ibdump writes them: a
// 16-byte header, flags 0x04 (varying-length record), rlen the record
// length, wlen the wire length. Ethernet records (type 2) carry the 2-byte
// Ethernet pad before the frame and the 4-byte FCS after it, which wlen
// counts (as DAG cards capture them; Wireshark's ERF dissector expects the
// FCS by default).
func erfRecord(t time.Time, typ uint8, frame []byte) []byte {
	var body []byte
	switch typ {
	case decode.ERFTypeEth:
		body = append([]byte{0, 0}, frame...)
		body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(frame))
	default:
		body = frame
	}
	wlen := len(frame)
	if typ == decode.ERFTypeEth {
		wlen += 4
	}
	h := make([]byte, 16, 16+len(body))
	binary.LittleEndian.PutUint64(h, erfTime(t))
	h[8] = typ
	h[9] = 0x04
	binary.BigEndian.PutUint16(h[10:], uint16(16+len(body)))
	binary.BigEndian.PutUint16(h[14:], uint16(wlen))
	return append(h, body...)
}

// erfTime is the ERF 32.32 fixed-point timestamp of t.
func erfTime(t time.Time) uint64 {
	frac := (uint64(t.Nanosecond()) << 32) / 1e9
	return uint64(t.Unix())<<32 | frac
}

// payload returns n deterministic bytes.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7) ^ byte(i>>8)
	}
	return b
}

func wrapErr(name string, i int, err error) error {
	return fmt.Errorf("synth: %s record %d: %w", name, i+1, err)
}
