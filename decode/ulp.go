package decode

import "strings"

// Upper-layer protocols (ULPs) over RDMA: NVMe-oF, RPC-over-RDMA (NFS),
// iSER, SMB Direct.
//
// decode owns what a ULP looks like (its numbers, names and fields) and
// the pure functions that decode one complete ULP message; package flow
// finds which ULP a connection carries (the CM REQ's service ID, or a
// decode-as), reassembles SEND messages, feeds them and the RDMA
// READ/WRITE packets to the ULP's linker, and points p.Analysis.ULP at
// what the linker found about the packet. The ULP's fields read
// p.Analysis.ULP, so they exist only on tracked packets (Field.Stateful).
//
// Adding a ULP: a ULP constant and its names below; a ULPInfo member
// with its decoded message and links; a register...Fields(rt) call at the
// end of fields.go's init (its Wireshark-named fields, Stateful); a
// flow.ULPLinker registered with flow.RegisterULP.

// ULP is an upper-layer protocol carried by an RDMA connection.
type ULP uint8

// ULPs. The names are Wireshark's protocol filter names.
const (
	ULPNone      ULP = iota
	ULPNVMe          // NVMe over Fabrics, RDMA binding (nvme-rdma), TCP port 4420
	ULPRPCRDMA       // RPC-over-RDMA (rpcordma): NFS, port 20049
	ULPISER          // iSCSI Extensions for RDMA (iser), port 3260
	ULPSMBDirect     // SMB Direct (smb_direct), port 5445
	NumULPs
)

var ulpInfo = [NumULPs]struct {
	name  string // Wireshark's protocol name, as -d names it
	title string // for reports
	port  uint16 // the well-known port of the IP CM service ID
}{
	{"", "", 0},
	{"nvme-rdma", "NVMe-oF", 4420},
	{"rpcordma", "RPC-over-RDMA", 20049},
	{"iser", "iSER", 3260},
	{"smb_direct", "SMB Direct", 5445},
}

// String returns Wireshark's name of the protocol ("nvme-rdma").
func (u ULP) String() string {
	if u < NumULPs {
		return ulpInfo[u].name
	}
	return "?"
}

// Title returns the protocol's name for reports ("NVMe-oF").
func (u ULP) Title() string {
	if u < NumULPs {
		return ulpInfo[u].title
	}
	return "?"
}

// Port returns the ULP's well-known port (0 for ULPNone).
func (u ULP) Port() uint16 {
	if u < NumULPs {
		return ulpInfo[u].port
	}
	return 0
}

// ulpAliases are other names -d accepts for a ULP.
var ulpAliases = map[string]ULP{"nvme": ULPNVMe, "nvmeof": ULPNVMe, "nvme-of": ULPNVMe, "rpcrdma": ULPRPCRDMA, "rpc-rdma": ULPRPCRDMA, "nfs": ULPRPCRDMA, "smbdirect": ULPSMBDirect, "smb-direct": ULPSMBDirect}

// ULPByName returns the ULP named name (Wireshark's name or an alias, any
// case).
func ULPByName(name string) (ULP, bool) {
	name = strings.ToLower(name)
	for u := ULPNVMe; u < NumULPs; u++ {
		if ulpInfo[u].name == name {
			return u, true
		}
	}
	u, ok := ulpAliases[name]
	return u, ok
}

// ULPNames lists the names -d accepts for the ULPs, Wireshark's first.
func ULPNames() []string {
	var out []string
	for u := ULPNVMe; u < NumULPs; u++ {
		out = append(out, ulpInfo[u].name)
	}
	return out
}

// ULPByPort returns the ULP whose well-known port is port.
func ULPByPort(port uint16) ULP {
	for u := ULPNVMe; u < NumULPs; u++ {
		if ulpInfo[u].port == port {
			return u
		}
	}
	return ULPNone
}

// CMServicePort returns the port of an RDMA CM service ID in the IP port
// spaces (0x0000000001PPpppp: PP = 0x06 TCP, 0x11 UDP, 0x13 IPoIB, 0x02
// PS_IB; pppp the port), and false for a service ID outside them.
func CMServicePort(sid uint64) (uint16, bool) {
	if sid>>24 != 1 {
		return 0, false
	}
	switch uint8(sid >> 16) {
	case 0x02, 0x06, 0x11, 0x13:
		return uint16(sid), true
	}
	return 0, false
}

// ULPByServiceID returns the ULP a CM REQ's service ID asks for.
func ULPByServiceID(sid uint64) ULP {
	if port, ok := CMServicePort(sid); ok {
		return ULPByPort(port)
	}
	return ULPNone
}

// CMIPPrivateLen is the length of the IP CM header at the start of a CM
// REQ's private data (version, IP version, source port, source and
// destination IP addresses); the ULP's private data follows it. A REP's
// private data is the ULP's from the start.
const CMIPPrivateLen = 36

// ULPInfo is what a tracker found about a packet of a connection that
// carries a ULP; p.Analysis.ULP points at it (owned by the tracker, valid
// until it tracks the next packet).
type ULPInfo struct {
	Proto ULP
	// Msg is the complete ULP message (SEND First..Last reassembled, or one
	// SEND Only) on the packet that completes it, nil on other packets;
	// MsgFrames lists the frames it came from, first to last.
	Msg       []byte
	MsgFrames []int
	// NVMe is the NVMe-oF decode and links (Proto ULPNVMe).
	NVMe NVMeInfo

	// RPC-over-RDMA (NFS), iSER, SMB Direct: set by their linkers on the
	// packets they found something about (ulp_rpc.go).
	RPC       *RPCInfo
	ISER      *ISER
	SMBDirect *SMBDirect
}

// Reset clears the info, keeping its buffers.
func (u *ULPInfo) Reset(proto ULP) {
	frames := u.MsgFrames[:0]
	*u = ULPInfo{Proto: proto, MsgFrames: frames}
}
