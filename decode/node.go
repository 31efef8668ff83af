package decode

import (
	"net/netip"
	"strconv"
	"strings"
)

// Node is the address of an InfiniBand node as packets name it: an IP
// address (RoCEv2), a GID (RoCEv1, native InfiniBand with a GRH) or a LID
// (native InfiniBand without a GRH, where the LRH's SLID and DLID are all
// a packet says). It is the one type for every responder and peer address:
// the MPT file's responder.address and remote.address, the model's
// responder, replay's and mpt learn's nodes.
//
// An IPv4-mapped address or GID (::ffff:10.77.0.2) is the IPv4 address, so
// that a RoCEv2 packet over IPv4 and one over IPv6 name the same node
// alike. Nodes are comparable with == and usable as map keys; the zero
// Node is not valid. String gives "10.77.0.2", "fe80::2:c903:0:a" or
// "lid:1"; ParseNode reads those back.
type Node struct {
	addr  netip.Addr // the IP address or GID; the zero Addr for a LID
	lid   uint16
	isLID bool
}

// NodeAddr returns the node with an IP address or GID. An IPv4-mapped one
// is the IPv4 address; a zone (a host's interface name, no part of a
// node's address on the wire) is dropped. The zero Addr gives the zero
// Node.
func NodeAddr(a netip.Addr) Node {
	if !a.IsValid() {
		return Node{}
	}
	return Node{addr: a.WithZone("").Unmap()}
}

// NodeLID returns the node with a LID.
func NodeLID(lid uint16) Node { return Node{lid: lid, isLID: true} }

// IsValid reports whether n names a node (it is not the zero Node).
func (n Node) IsValid() bool { return n.isLID || n.addr.IsValid() }

// IsLID reports whether n is a LID.
func (n Node) IsLID() bool { return n.isLID }

// LID returns n's LID, or 0 when n is an address.
func (n Node) LID() uint16 { return n.lid }

// Addr returns n's IP address or GID, or the zero Addr when n is a LID.
func (n Node) Addr() netip.Addr { return n.addr }

// String returns "lid:1" for a LID (decimal), the address as netip
// writes it otherwise ("10.77.0.2", "fe80::2:c903:0:a"), and "invalid
// node" for the zero Node.
func (n Node) String() string {
	if !n.IsValid() {
		return "invalid node"
	}
	return string(n.AppendTo(make([]byte, 0, 40)))
}

// AppendTo appends n as String writes it (nothing for the zero Node).
func (n Node) AppendTo(b []byte) []byte {
	switch {
	case n.isLID:
		return strconv.AppendUint(append(b, "lid:"...), uint64(n.lid), 10)
	case n.addr.IsValid():
		return n.addr.AppendTo(b)
	}
	return b
}

// Compare orders nodes: the zero Node first, then addresses (as netip
// orders them: IPv4 before IPv6), then LIDs by number.
func (n Node) Compare(o Node) int {
	if n.isLID != o.isLID {
		if n.isLID {
			return 1
		}
		return -1
	}
	if n.isLID {
		return int(n.lid) - int(o.lid)
	}
	return n.addr.Compare(o.addr)
}

// MarshalText writes n as String does; the zero Node is "".
func (n Node) MarshalText() ([]byte, error) { return n.AppendTo(nil), nil }

// UnmarshalText reads what ParseNode reads; "" is the zero Node.
func (n *Node) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*n = Node{}
		return nil
	}
	v, err := ParseNode(string(b))
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// NodeSyntax says what ParseNode accepts, for error messages and help.
const NodeSyntax = `an IPv4 address, IPv6 address or GID without a zone, or a LID (e.g. 10.77.0.2, fe80::2:c903:0:a, ::ffff:10.77.0.2, lid:1 or lid:0x1)`

// NodeError is ParseNode's error: the text it was given and what is wrong
// with it.
type NodeError struct {
	Input string
	// Why is what is wrong, in words that follow the input: "is not an
	// IPv4 address, ...", "has a zone ...", "is not a LID ...".
	Why string
}

func (e *NodeError) Error() string { return strconv.Quote(e.Input) + " " + e.Why }

// ParseNode reads a node address: "lid:N" (N in decimal or with 0x in
// hex, 1 to 65535; "LID:" too) for a LID, else an IPv4 address, an IPv6
// address or a GID written as one (an IPv4-mapped one is the IPv4
// address). Zones are refused: no packet carries one. Errors are
// *NodeError.
func ParseNode(s string) (Node, error) {
	if len(s) >= 4 && strings.EqualFold(s[:4], "lid:") {
		num, base := s[4:], 10
		if len(num) > 2 && (num[:2] == "0x" || num[:2] == "0X") {
			num, base = num[2:], 16
		}
		v, err := strconv.ParseUint(num, base, 16)
		if err != nil || v == 0 {
			return Node{}, &NodeError{s, "is not a LID: write a number from 1 to 65535 (0xffff), in decimal or 0x hex, e.g. lid:1 or lid:0x1"}
		}
		return NodeLID(uint16(v)), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return Node{}, &NodeError{s, "is not " + NodeSyntax}
	}
	if z := a.Zone(); z != "" {
		return Node{}, &NodeError{s, "has a zone: write the address without %" + z}
	}
	return NodeAddr(a), nil
}

// MustParseNode is ParseNode for constants; it panics on an error.
func MustParseNode(s string) Node {
	n, err := ParseNode(s)
	if err != nil {
		panic(err)
	}
	return n
}

// Nodes returns the packet's source and destination nodes: the IP
// header's addresses, else the GRH's GIDs (RoCEv1, native InfiniBand with
// a GRH), else the LRH's LIDs (native InfiniBand without a GRH). ok is
// false when the packet has none of these headers.
func (p *Packet) Nodes() (src, dst Node, ok bool) {
	switch {
	case p.Has&HdrIPv4 != 0 && !p.IPIsPayload():
		return Node{addr: netip.AddrFrom4(p.IPv4.Src)}, Node{addr: netip.AddrFrom4(p.IPv4.Dst)}, true
	case p.Has&HdrIPv6 != 0 && !p.IPIsPayload():
		return Node{addr: netip.AddrFrom16(p.IPv6.Src).Unmap()}, Node{addr: netip.AddrFrom16(p.IPv6.Dst).Unmap()}, true
	case p.Has&HdrGRH != 0:
		return Node{addr: netip.AddrFrom16(p.GRH.SGID).Unmap()}, Node{addr: netip.AddrFrom16(p.GRH.DGID).Unmap()}, true
	case p.Has&HdrLRH != 0:
		return NodeLID(p.LRH.SLID), NodeLID(p.LRH.DLID), true
	}
	return Node{}, Node{}, false
}
