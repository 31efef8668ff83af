package decode

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Frame holds what the capture file says about one record. The caller fills
// it before Decode (Decode sets only Data, CapLen and LinkType).
type Frame struct {
	Number       int           // 1-based frame number
	Time         time.Time     // absolute capture time
	TimeRelative time.Duration // since the first frame
	TimeDelta    time.Duration // since the previous frame
	CapLen       int           // bytes captured
	Len          int           // bytes on the wire
	LinkType     LinkType      // pcap LINKTYPE_*
	Interface    int           // pcapng interface index
	Data         []byte        // the captured bytes (not owned)
}

// LinkType is a pcap LINKTYPE_* value. It is gopacket's enum, so that
// capture (which reads it from files and live sources), decode and any
// gopacket program share one type, with String(); decode registers the
// names of the two values gopacket lacks (ERF, InfiniBand).
type LinkType = layers.LinkType

// Link types Decode understands. The first ones are gopacket's.
const (
	LinkTypeEthernet  = layers.LinkTypeEthernet
	LinkTypeRaw       = layers.LinkTypeRaw
	LinkTypeLinuxSLL  = layers.LinkTypeLinuxSLL
	LinkTypeIPv4      = layers.LinkTypeIPv4
	LinkTypeIPv6      = layers.LinkTypeIPv6
	LinkTypeLinuxSLL2 = layers.LinkTypeLinuxSLL2

	LinkTypeERF        LinkType = 197 // LINKTYPE_ERF: Endace ERF records, header included
	LinkTypeIPoIB      LinkType = 242 // LINKTYPE_IPOIB
	LinkTypeInfiniBand LinkType = 247 // LINKTYPE_INFINIBAND: native InfiniBand, LRH first
)

// Encapsulation says how the InfiniBand transport was carried.
type Encapsulation uint8

// Encapsulations.
const (
	EncapNone   Encapsulation = iota // no InfiniBand transport found
	EncapRoCEv2                      // UDP destination port 4791 (or a configured port)
	EncapRoCEv1                      // EtherType 0x8915, GRH first
	EncapIB                          // native InfiniBand, LRH first
)

var encapNames = [...]string{"none", "RoCEv2", "RoCEv1", "InfiniBand"}

func (e Encapsulation) String() string {
	if int(e) < len(encapNames) {
		return encapNames[e]
	}
	return "unknown"
}

// Flag marks a condition found while decoding.
type Flag uint16

// Flags.
const (
	FlagTruncated        Flag = 1 << iota // a header or the payload is cut short by the capture
	FlagUnknownOpcode                     // BTH opcode not defined by the IBTA
	FlagICRCBad                           // ICRC present and wrong
	FlagICRCUnverifiable                  // ICRC could not be checked (frame truncated)
	FlagVCRCBad                           // VCRC present and wrong
	FlagMalformed                         // a length or count field is inconsistent
	FlagUnsupportedLink                   // link type not understood
	FlagFragment                          // IP fragment: transport not decoded
	FlagBadPad                            // BTH pad count larger than the payload
)

var flagNames = [...]string{"truncated", "unknown-opcode", "icrc-bad", "icrc-unverifiable", "vcrc-bad", "malformed", "unsupported-link", "ip-fragment", "bad-pad"}

// Names returns the names of the flags set, in a fixed order.
func (f Flag) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// MaxVLAN is the number of stacked 802.1Q tags Decode records.
const MaxVLAN = 4

// EthernetHdr is an Ethernet II header. EtherType is the type after any
// VLAN tags.
type EthernetHdr struct {
	Dst, Src  [6]byte
	EtherType uint16 // the type field right after the MAC addresses
	Type      uint16 // the type after all VLAN tags
}

// VLANTag is one 802.1Q / 802.1ad tag.
type VLANTag struct {
	TPID     uint16 // 0x8100, 0x88a8 or 0x9100
	Priority uint8
	DEI      bool
	ID       uint16
	Type     uint16 // the EtherType that follows the tag
}

// SLLHdr is a Linux cooked capture header (v1 or v2).
type SLLHdr struct {
	PacketType uint16
	HAType     uint16
	HALen      uint16
	Addr       [8]byte
	Protocol   uint16
	IfIndex    uint32 // SLL2 only
}

// ERFHdr is the Extensible Record Format header of an ERF record.
type ERFHdr struct {
	Timestamp uint64 // 32.32 fixed point seconds, little-endian on disk
	Type      uint8  // record type (low 7 bits)
	Ext       bool   // extension headers present
	Flags     uint8
	RLen      uint16
	LCtr      uint16
	WLen      uint16
}

// PFCHdr is an 802.3 MAC Control frame: PAUSE (opcode 1) or Priority Flow
// Control (opcode 0x0101).
type PFCHdr struct {
	Opcode      uint16
	ClassEnable uint16    // PFC: bit n enables priority n
	Quanta      [8]uint16 // PFC: per priority; PAUSE: Quanta[0]
}

// IPv4Hdr is an IPv4 header.
type IPv4Hdr struct {
	Version, IHL uint8
	TOS          uint8 // DSCP << 2 | ECN
	TotalLen     uint16
	ID           uint16
	Flags        uint8 // 3 bits
	FragOff      uint16
	TTL          uint8
	Protocol     uint8
	Checksum     uint16
	Src, Dst     [4]byte
}

// IPv6Hdr is an IPv6 header.
type IPv6Hdr struct {
	Version      uint8
	TrafficClass uint8 // DSCP << 2 | ECN
	FlowLabel    uint32
	PayloadLen   uint16
	NextHeader   uint8 // the first next-header value
	HopLimit     uint8
	Src, Dst     [16]byte
}

// UDPHdr is a UDP header.
type UDPHdr struct {
	SrcPort, DstPort uint16
	Length           uint16
	Checksum         uint16
}

// Packet is the flat decoded form of one frame. A header's fields are valid
// only when its bit is set in Has. Decode reuses a Packet without
// allocating; slices (Frame.Data, Payload, Pad, the layers' Contents) point
// into the frame's bytes and are valid as long as those bytes are.
type Packet struct {
	Frame Frame
	Has   Hdr
	Flags Flag
	Encap Encapsulation

	Eth     EthernetHdr
	VLAN    [MaxVLAN]VLANTag
	NumVLAN int
	SLL     SLLHdr
	ERF     ERFHdr
	PFC     PFCHdr
	IPv4    IPv4Hdr
	IPv6    IPv6Hdr
	UDP     UDPHdr

	LRH          LRH
	GRH          GRH
	BTH          BTH
	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	FETH         FETH
	CNP          CNPPadding
	MAD          MAD
	CM           CM
	SA           SA // valid when SA.Valid (a Subnet Administration MAD)

	ICRC         ICRC
	ICRCStatus   CRCStatus
	ICRCComputed uint32 // big-endian view, comparable with ICRC.CRC
	VCRC         VCRC
	VCRCStatus   CRCStatus
	VCRCComputed uint16 // big-endian view, comparable with VCRC.CRC

	// Payload is the InfiniBand payload (after the extended headers, before
	// the pad); Pad the 0-3 pad bytes. IB is the transport from BTH through
	// the ICRC as captured.
	Payload []byte
	Pad     []byte
	IB      []byte
	// ibPacket is the InfiniBand packet as captured, the bytes of the
	// "infiniband" protocol item: from the LRH of a native packet through
	// its VCRC, from the GRH of a RoCEv1 packet, else IB.
	ibPacket []byte

	// L3Off and L4Off are the offsets of the IP and UDP headers in the
	// frame (0 when absent).
	L3Off, L4Off int

	// scratch holds the masked headers while the ICRC is computed (see
	// icrcSum). It lives in the Packet (which the caller owns) so nothing
	// escapes per packet.
	scratch [icrcScratch]byte

	// Err describes the first decoding problem, for display; nil when none.
	Err error

	// Analysis is filled by a tracker (package flow) after Decode; Decode
	// clears it.
	Analysis Analysis

	// What rocetap summarises without analysing it (ipoib.go, l4.go):
	// the IPoIB header, and gopacket's layers for ARP, ICMP, ICMPv6, TCP
	// and LLDP, decoded in place. Valid when their Hdr bit is set.
	IPoIB  IPoIBHdr
	ARP    layers.ARP
	ICMPv4 layers.ICMPv4
	ICMPv6 layers.ICMPv6
	TCP    layers.TCP
	LLDP   layers.LinkLayerDiscovery
	// Data is the payload of the innermost protocol when no layer claims
	// it (the data of an ICMP echo, a TCP segment, a UDP datagram carried
	// by IPoIB): tshark's data.data. Valid when HdrData is set.
	Data []byte
	// inner holds the IP and UDP headers an IPoIB SEND carries inside a
	// RoCEv2 packet (HdrInner), whose own IP and UDP headers fill IPv4,
	// IPv6 and UDP. Allocated on the first such packet, then reused.
	inner *Packet
	// Path is filled by a comparison of two captures (package pathcmp);
	// Decode leaves it alone.
	Path Path
}

// Offset returns the offset of b (a sub-slice of the frame, such as a
// layer's Contents) in the frame, or -1.
func (p *Packet) Offset(b []byte) int {
	d := p.Frame.Data
	if cap(b) == 0 || cap(b) > cap(d) {
		return -1
	}
	off := cap(d) - cap(b)
	if off > len(d) {
		return -1
	}
	return off
}

// ECN returns the IP ECN bits and whether the packet has an IP header
// of its own (not one an IPoIB SEND carries).
func (p *Packet) ECN() (uint8, bool) {
	switch {
	case p.IPIsPayload():
		return 0, false
	case p.Has&HdrIPv4 != 0:
		return p.IPv4.TOS & 3, true
	case p.Has&HdrIPv6 != 0:
		return p.IPv6.TrafficClass & 3, true
	}
	return 0, false
}

// Addrs returns the packet's source and destination addresses: the IP
// header's, else the GRH's GIDs (RoCEv1, native InfiniBand); IPv4-mapped
// addresses are returned as IPv4. ok is false when the packet has none
// (native InfiniBand without a GRH: only LIDs). Nodes is the same with
// the LIDs too; what compares nodes uses it.
func (p *Packet) Addrs() (src, dst netip.Addr, ok bool) {
	s, d, ok := p.Nodes()
	if !ok || s.IsLID() {
		return netip.Addr{}, netip.Addr{}, false
	}
	return s.Addr(), d.Addr(), true
}

// RemoteAccess is the remote memory access a request packet asks of the
// responder: the rkey, VA and length of its RETH (RDMA READ, RDMA WRITE
// FIRST or ONLY) or AtomicETH (CmpSwap, FetchAdd, 8 bytes), or the rkey its
// IETH invalidates (SEND with Invalidate, no VA or length).
type RemoteAccess struct {
	Op   MPTOp // MPTOpNone: the packet asks for none
	RKey uint32
	VA   uint64
	Len  uint64
}

// Access returns the remote access p asks for; its Op is MPTOpNone when p
// is not such a request or the header is cut short.
func (p *Packet) Access() RemoteAccess {
	op := p.BTH.Opcode
	switch {
	case p.Has&HdrBTH == 0:
	case op.Is(PropRead), op.Is(PropWrite | PropStart):
		if p.Has&HdrRETH != 0 {
			a := RemoteAccess{Op: MPTOpWrite, RKey: p.RETH.RKey, VA: p.RETH.VA, Len: uint64(p.RETH.DMALen)}
			if op.Is(PropRead) {
				a.Op = MPTOpRead
			}
			return a
		}
	case op.Is(PropAtomic):
		if p.Has&HdrAtomicETH != 0 {
			return RemoteAccess{Op: MPTOpAtomic, RKey: p.AtomicETH.RKey, VA: p.AtomicETH.VA, Len: 8}
		}
	case op.Is(PropInv):
		if p.Has&HdrIETH != 0 {
			return RemoteAccess{Op: MPTOpInvalidate, RKey: p.IETH.RKey}
		}
	}
	return RemoteAccess{}
}
