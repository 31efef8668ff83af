package decode

import (
	"encoding/binary"
	"strconv"
	"time"
)

// NVMe over Fabrics, RDMA binding (NVMe-oF 1.1, NVMe 1.4): the command
// capsule is a 64-byte submission queue entry (SQE), then in-capsule data;
// the response capsule a 16-byte completion queue entry (CQE). All of it
// little-endian.
//
//	SQE   0      1          2-3   4-7    8-15  16-23  24-39  40-63
//	      OPC    FUSE/PSDT  CID   NSID   rsvd  MPTR   SGL1   CDW10-CDW15
//	      (fabrics commands: byte 4 is FCTYPE)
//
//	keyed SGL data block (type 4):  address 8, length 3, key 4, type 1
//	data block / offset (type 0):   address (offset) 8, length 4, rsvd 3, type 1
//
//	CQE   0-3     4-7     8-9   10-11  12-13  14-15
//	      DW0     DW1     SQHD  SQID   CID    status (P, SC 8, SCT 3, CRD 2, M, DNR)

// NVMe command set opcodes, fabrics command types and property offsets.
const (
	NVMeFabrics = 0x7F // fabrics command opcode

	NVMeFCPropertySet = 0x00
	NVMeFCConnect     = 0x01
	NVMeFCPropertyGet = 0x04

	NVMeSQELen = 64
	NVMeCQELen = 16
)

// NVMeKind says what an NVMe-oF packet is.
type NVMeKind uint8

// NVMe-oF packet kinds.
const (
	NVMeNone NVMeKind = iota
	NVMeCmd           // a command capsule (on its last packet)
	NVMeCQE           // a response capsule
	NVMeData          // an RDMA READ/WRITE packet moving a command's data
)

// NVMeSGL is an SGL descriptor (SGL1 of the SQE).
type NVMeSGL struct {
	Addr uint64 // address; offset into the capsule's data for an offset SGL
	Len  uint32
	Key  uint32 // keyed SGLs
	Type uint8  // descriptor type (high nibble of the last byte)
	Sub  uint8  // sub type (low nibble)
}

// Keyed reports whether the SGL is a keyed data block (the data moves by
// RDMA READ/WRITE with Key).
func (s NVMeSGL) Keyed() bool { return s.Type == 4 }

// InCapsule reports whether the SGL points into the capsule (a data block
// with the offset sub type).
func (s NVMeSGL) InCapsule() bool { return s.Type == 0 && s.Sub == 1 }

// NVMeCommand is a decoded submission queue entry.
type NVMeCommand struct {
	Opcode uint8
	Fuse   uint8 // bits 0-1 of byte 1
	PSDT   uint8 // bits 6-7 of byte 1
	CID    uint16
	NSID   uint32 // fabrics: FCType is byte 0 of it
	FCType uint8
	MPTR   uint64
	SGL    NVMeSGL
	CDW    [6]uint32 // CDW10..CDW15
	// Admin: the command was sent on the admin queue (queue 0), so the
	// opcode is an admin opcode; else an I/O one.
	Admin bool
	// Data is the in-capsule data after the SQE (Connect: 1024 bytes).
	Data []byte
}

// Fabrics reports whether it is a fabrics command (Connect, Property
// Get/Set, ...).
func (c *NVMeCommand) Fabrics() bool { return c.Opcode == NVMeFabrics }

// SLBA and NLB are the I/O commands' starting LBA and 0-based number of
// logical blocks (CDW10-11, CDW12 bits 0-15).
func (c *NVMeCommand) SLBA() uint64 { return uint64(c.CDW[0]) | uint64(c.CDW[1])<<32 }

// NLB is the 0-based number of logical blocks, as on the wire.
func (c *NVMeCommand) NLB() uint16 { return uint16(c.CDW[2]) }

// HasLBA reports whether the command addresses LBAs (Read, Write, Write
// Zeroes, Compare, Write Uncorrectable, Verify on an I/O queue).
func (c *NVMeCommand) HasLBA() bool {
	if c.Admin || c.Fabrics() {
		return false
	}
	switch c.Opcode {
	case 0x01, 0x02, 0x04, 0x05, 0x08, 0x0C:
		return true
	}
	return false
}

// PropOffset and PropSize are a Property Get/Set's register offset and
// size (4 or 8 bytes); PropValue a Property Set's value.
func (c *NVMeCommand) PropOffset() uint32 { return c.CDW[1] }

// PropSize is the size of the property: 4 or 8 bytes.
func (c *NVMeCommand) PropSize() int {
	if c.CDW[0]&7 == 1 {
		return 8
	}
	return 4
}

// PropValue is a Property Set's value (CDW12-13).
func (c *NVMeCommand) PropValue() uint64 { return uint64(c.CDW[2]) | uint64(c.CDW[3])<<32 }

// Name returns the command's name ("Read", "Identify", "Connect").
func (c *NVMeCommand) Name() string {
	if c.Fabrics() {
		return nvmeFabricsNames[c.FCType]
	}
	if c.Admin {
		return nvmeAdminNames[c.Opcode]
	}
	return nvmeIONames[c.Opcode]
}

// OpName returns Name, or "Opcode 0xNN" for an opcode without one.
func (c *NVMeCommand) OpName() string {
	if n := c.Name(); n != "" {
		return n
	}
	if c.Fabrics() {
		return "Fabrics 0x" + hex2(c.FCType)
	}
	return "Opcode 0x" + hex2(c.Opcode)
}

func hex2(v uint8) string { return string([]byte{hexDigits[v>>4], hexDigits[v&15]}) }

var nvmeAdminNames = map[uint8]string{0x00: "Delete I/O SQ", 0x01: "Create I/O SQ", 0x02: "Get Log Page", 0x04: "Delete I/O CQ", 0x05: "Create I/O CQ",
	0x06: "Identify", 0x08: "Abort", 0x09: "Set Features", 0x0A: "Get Features", 0x0C: "Asynchronous Event Request",
	0x0D: "Namespace Management", 0x10: "Firmware Commit", 0x11: "Firmware Image Download", 0x18: "Keep Alive", 0x7C: "Doorbell Buffer Config"}

var nvmeIONames = map[uint8]string{0x00: "Flush", 0x01: "Write", 0x02: "Read", 0x04: "Write Uncorrectable", 0x05: "Compare",
	0x08: "Write Zeroes", 0x09: "Dataset Management", 0x0C: "Verify", 0x0D: "Reservation Register", 0x0E: "Reservation Report",
	0x11: "Reservation Acquire", 0x15: "Reservation Release"}

var nvmeFabricsNames = map[uint8]string{NVMeFCPropertySet: "Property Set", NVMeFCConnect: "Connect", NVMeFCPropertyGet: "Property Get",
	0x05: "Authentication Send", 0x06: "Authentication Receive", 0x08: "Disconnect"}

// NVMePropertyName names a controller property by its offset.
func NVMePropertyName(off uint32) string {
	switch off {
	case 0x00:
		return "CAP"
	case 0x08:
		return "VS"
	case 0x0C:
		return "INTMS"
	case 0x10:
		return "INTMC"
	case 0x14:
		return "CC"
	case 0x1C:
		return "CSTS"
	case 0x20:
		return "NSSR"
	}
	return ""
}

// NVMeCNSName names an Identify CNS value.
func NVMeCNSName(cns uint8) string {
	switch cns {
	case 0x00:
		return "Namespace"
	case 0x01:
		return "Controller"
	case 0x02:
		return "Active Namespace ID list"
	case 0x03:
		return "Namespace Identification Descriptor list"
	case 0x05:
		return "I/O Command Set specific Namespace"
	case 0x06:
		return "I/O Command Set specific Controller"
	case 0x07:
		return "I/O Command Set specific Active Namespace ID list"
	case 0x08:
		return "I/O Command Set Independent Namespace"
	case 0x1C:
		return "I/O Command Set"
	}
	return ""
}

// NVMeLogName names a Get Log Page log identifier.
func NVMeLogName(lid uint8) string {
	switch lid {
	case 0x01:
		return "Error Information"
	case 0x02:
		return "SMART / Health Information"
	case 0x03:
		return "Firmware Slot Information"
	case 0x04:
		return "Changed Namespace List"
	case 0x05:
		return "Commands Supported and Effects"
	case 0x06:
		return "Device Self-test"
	case 0x0C:
		return "Asymmetric Namespace Access"
	case 0x70:
		return "Discovery"
	}
	return ""
}

// NVMeFeatureName names a Set/Get Features feature identifier.
func NVMeFeatureName(fid uint8) string {
	switch fid {
	case 0x01:
		return "Arbitration"
	case 0x02:
		return "Power Management"
	case 0x04:
		return "Temperature Threshold"
	case 0x05:
		return "Error Recovery"
	case 0x06:
		return "Volatile Write Cache"
	case 0x07:
		return "Number of Queues"
	case 0x08:
		return "Interrupt Coalescing"
	case 0x0B:
		return "Asynchronous Event Configuration"
	case 0x0F:
		return "Keep Alive Timer"
	case 0x16:
		return "Host Behavior Support"
	}
	return ""
}

// Detail returns what the command names beyond its opcode ("Controller"
// for an Identify with CNS 1, "CC" for a Property Set of CC), or "".
func (c *NVMeCommand) Detail() string {
	switch {
	case c.Fabrics():
		if c.FCType == NVMeFCPropertyGet || c.FCType == NVMeFCPropertySet {
			return NVMePropertyName(c.PropOffset())
		}
	case !c.Admin:
	case c.Opcode == 0x06:
		return NVMeCNSName(uint8(c.CDW[0]))
	case c.Opcode == 0x02:
		return NVMeLogName(uint8(c.CDW[0]))
	case c.Opcode == 0x09 || c.Opcode == 0x0A:
		return NVMeFeatureName(uint8(c.CDW[0]))
	}
	return ""
}

// NVMeCompletion is a decoded completion queue entry.
type NVMeCompletion struct {
	DW0, DW1 uint32
	SQHD     uint16
	SQID     uint16
	CID      uint16
	Status   uint16 // the status field as on the wire, phase tag in bit 0
}

// SC, SCT and DNR are the status code, status code type and Do Not Retry
// bit of the status field.
func (c *NVMeCompletion) SC() uint8 { return uint8(c.Status >> 1) }

// SCT is the status code type (0 generic, 1 command specific, 2 media
// and data integrity, 3 path related, 7 vendor specific).
func (c *NVMeCompletion) SCT() uint8 { return uint8(c.Status>>9) & 7 }

// Code is the status without the phase tag (SCT<<8 | SC), as the kernel's
// tracepoints print it: 0 is success.
func (c *NVMeCompletion) Code() uint16 { return c.Status >> 1 & 0x7FF }

// NVMeStatusName names a status (SCT and SC): "Successful Completion",
// "Invalid Field in Command", ...; "" when unknown.
func NVMeStatusName(sct, sc uint8) string {
	switch sct {
	case 0:
		return nvmeGenericStatus[sc]
	case 1:
		return nvmeCmdSpecificStatus[sc]
	case 2:
		return nvmeMediaStatus[sc]
	case 3:
		if sc == 0x00 {
			return "Internal Path Error"
		}
	}
	return ""
}

var nvmeGenericStatus = map[uint8]string{0x00: "Successful Completion", 0x01: "Invalid Command Opcode", 0x02: "Invalid Field in Command",
	0x03: "Command ID Conflict", 0x04: "Data Transfer Error", 0x05: "Commands Aborted due to Power Loss Notification",
	0x06: "Internal Error", 0x07: "Command Abort Requested", 0x08: "Command Aborted due to SQ Deletion",
	0x09: "Command Aborted due to Failed Fused Command", 0x0A: "Command Aborted due to Missing Fused Command",
	0x0B: "Invalid Namespace or Format", 0x0C: "Command Sequence Error", 0x0D: "Invalid SGL Segment Descriptor",
	0x0E: "Invalid Number of SGL Descriptors", 0x0F: "Data SGL Length Invalid", 0x10: "Metadata SGL Length Invalid",
	0x11: "SGL Descriptor Type Invalid", 0x16: "SGL Offset Invalid", 0x1D: "Command Interrupted",
	0x80: "LBA Out of Range", 0x81: "Capacity Exceeded", 0x82: "Namespace Not Ready", 0x83: "Reservation Conflict"}

var nvmeCmdSpecificStatus = map[uint8]string{0x00: "Completion Queue Invalid", 0x01: "Invalid Queue Identifier", 0x02: "Invalid Queue Size",
	0x03: "Abort Command Limit Exceeded", 0x05: "Asynchronous Event Request Limit Exceeded", 0x09: "Invalid Log Page",
	0x0D: "Feature Identifier Not Saveable", 0x0E: "Feature Not Changeable", 0x0F: "Feature Not Namespace Specific",
	0x80: "Conflicting Attributes / Connect Incompatible Format", 0x81: "Invalid Protection Information / Connect Controller Busy",
	0x82: "Attempted Write to Read Only Range / Connect Invalid Parameters", 0x83: "Connect Restart Discovery", 0x84: "Connect Invalid Host"}

var nvmeMediaStatus = map[uint8]string{0x80: "Write Fault", 0x81: "Unrecovered Read Error", 0x82: "End-to-end Guard Check Error",
	0x83: "End-to-end Application Tag Check Error", 0x84: "End-to-end Reference Tag Check Error", 0x85: "Compare Failure",
	0x86: "Access Denied", 0x87: "Deallocated or Unwritten Logical Block"}

// StatusName names the completion's status, or "Status 0xNNN".
func (c *NVMeCompletion) StatusName() string {
	if n := NVMeStatusName(c.SCT(), c.SC()); n != "" {
		return n
	}
	return "Status 0x" + strconv.FormatUint(uint64(c.Code()), 16)
}

// DecodeNVMeCommand decodes a command capsule. ok is false when the
// message is shorter than an SQE.
func DecodeNVMeCommand(msg []byte, admin bool) (c NVMeCommand, ok bool) {
	if len(msg) < NVMeSQELen {
		return NVMeCommand{}, false
	}
	le := binary.LittleEndian
	c = NVMeCommand{
		Opcode: msg[0],
		Fuse:   msg[1] & 3,
		PSDT:   msg[1] >> 6,
		CID:    le.Uint16(msg[2:]),
		NSID:   le.Uint32(msg[4:]),
		FCType: msg[4],
		MPTR:   le.Uint64(msg[16:]),
		Admin:  admin,
		Data:   msg[NVMeSQELen:],
	}
	t := msg[39]
	c.SGL.Type, c.SGL.Sub, c.SGL.Addr = t>>4, t&15, le.Uint64(msg[24:])
	if c.SGL.Type == 4 {
		c.SGL.Len = uint32(msg[32]) | uint32(msg[33])<<8 | uint32(msg[34])<<16
		c.SGL.Key = le.Uint32(msg[35:])
	} else {
		c.SGL.Len = le.Uint32(msg[32:])
	}
	for i := range c.CDW {
		c.CDW[i] = le.Uint32(msg[40+4*i:])
	}
	return c, true
}

// DecodeNVMeCompletion decodes a response capsule. ok is false when the
// message is not 16 bytes long.
func DecodeNVMeCompletion(msg []byte) (c NVMeCompletion, ok bool) {
	if len(msg) != NVMeCQELen {
		return NVMeCompletion{}, false
	}
	le := binary.LittleEndian
	return NVMeCompletion{DW0: le.Uint32(msg), DW1: le.Uint32(msg[4:]), SQHD: le.Uint16(msg[8:]), SQID: le.Uint16(msg[10:]),
		CID: le.Uint16(msg[12:]), Status: le.Uint16(msg[14:])}, true
}

// NVMeConnectData is the 1024-byte data of a fabrics Connect.
type NVMeConnectData struct {
	HostID  []byte // 16 bytes
	CntlID  uint16
	SubNQN  string
	HostNQN string
}

// DecodeNVMeConnectData decodes a Connect's data (in-capsule, or moved by
// RDMA READ); ok is false when it is shorter than 1024 bytes.
func DecodeNVMeConnectData(b []byte) (d NVMeConnectData, ok bool) {
	if len(b) < 1024 {
		return NVMeConnectData{}, false
	}
	return NVMeConnectData{HostID: b[:16], CntlID: binary.LittleEndian.Uint16(b[16:]), SubNQN: cString(b[256:512]), HostNQN: cString(b[512:768])}, true
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// NVMeCMReq is the NVMe-oF RDMA CM REQ private data; NVMeCMRep the REP's.
type NVMeCMReq struct {
	RecFmt, QID, HRQSize, HSQSize, CntlID uint16
}

// DecodeNVMeCMReq decodes the NVMe-oF part of a CM REQ's private data
// (after the IP CM header).
func DecodeNVMeCMReq(b []byte) (r NVMeCMReq, ok bool) {
	if len(b) < 10 {
		return NVMeCMReq{}, false
	}
	le := binary.LittleEndian
	return NVMeCMReq{le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[4:]), le.Uint16(b[6:]), le.Uint16(b[8:])}, true
}

// NVMeCMRep is the NVMe-oF RDMA CM REP private data.
type NVMeCMRep struct {
	RecFmt, CRQSize uint16
}

// DecodeNVMeCMRep decodes a CM REP's private data.
func DecodeNVMeCMRep(b []byte) (r NVMeCMRep, ok bool) {
	if len(b) < 4 {
		return NVMeCMRep{}, false
	}
	le := binary.LittleEndian
	return NVMeCMRep{le.Uint16(b), le.Uint16(b[2:])}, true
}

// NVMeInfo is what the NVMe-oF linker found about a packet.
type NVMeInfo struct {
	Kind   NVMeKind
	QID    uint16 // the NVMe queue of the connection
	HasQID bool
	// Cmd is the command (Kind NVMeCmd), or the one a completion or data
	// packet belongs to; nil when not known. It points into the linker's
	// state: no copy per packet.
	Cmd *NVMeCommand
	CQE NVMeCompletion // Kind NVMeCQE
	// Connect is a Connect's data, on the packet that carried it (the
	// capsule, or the RDMA READ response); nil otherwise.
	Connect *NVMeConnectData
	Link    NVMeLink
	// CM REQ and REP of an NVMe-oF connection: their private data.
	CMReq    NVMeCMReq
	CMRep    NVMeCMRep
	HasCMReq bool
	HasCMRep bool
}

// NVMeLink links a packet to the command it belongs to (the command, its
// data transfers, its completion): rocetap.nvme.*.
type NVMeLink struct {
	Linked     bool // the packet belongs to a known command
	CmdFrame   int
	CQEFrame   int
	InvFrame   int // the SEND with Invalidate of the command's key (the CQE, or a later one)
	DataFrames []int
	DataBytes  uint64
	Latency    time.Duration // command to completion
	HasLatency bool
	// Offset: on a data packet, the offset of its data from the SGL's
	// address.
	Offset    uint64
	HasOffset bool
}

// Summary is the packet list's Info for an NVMe-oF packet: "NVMe Read
// cid=5 nsid=1 slba=2048 nlb=7 (8 blocks)", "NVMe CQE Read cid=5
// Successful Completion", "NVMe Read data cid=5 +4096".
func (n *NVMeInfo) Summary() string { return string(n.AppendSummary(nil)) }

// AppendSummary appends Summary to b; nothing for a packet that is no
// NVMe command, completion or data.
func (n *NVMeInfo) AppendSummary(b []byte) []byte {
	if n.Kind == NVMeNone {
		return b
	}
	b = append(b, "NVMe "...)
	c := n.Cmd
	if c == nil && n.Kind != NVMeCQE {
		return b[:len(b)-len("NVMe ")]
	}
	switch n.Kind {
	case NVMeCmd:
		b = append(b, c.OpName()...)
		if d := c.Detail(); d != "" {
			b = append(b, ' ')
			b = append(b, d...)
		}
		b = append(b, " cid="...)
		b = strconv.AppendUint(b, uint64(c.CID), 10)
		if !c.Fabrics() && c.NSID != 0 {
			b = append(b, " nsid="...)
			b = strconv.AppendUint(b, uint64(c.NSID), 10)
		}
		if c.HasLBA() {
			b = append(b, " slba="...)
			b = strconv.AppendUint(b, c.SLBA(), 10)
			b = append(b, " nlb="...)
			b = strconv.AppendUint(b, uint64(c.NLB()), 10)
			b = append(b, " ("...)
			b = strconv.AppendUint(b, uint64(c.NLB())+1, 10)
			b = append(b, " blocks)"...)
		}
		if n.Connect != nil {
			b = append(b, " subnqn="...)
			b = AppendSanitized(b, n.Connect.SubNQN)
		}
	case NVMeCQE:
		b = append(b, "CQE "...)
		if c != nil {
			b = append(b, c.OpName()...)
			b = append(b, ' ')
		}
		b = append(b, "cid="...)
		b = strconv.AppendUint(b, uint64(n.CQE.CID), 10)
		b = append(b, ' ')
		b = append(b, n.CQE.StatusName()...)
	case NVMeData:
		b = append(b, c.OpName()...)
		b = append(b, " data cid="...)
		b = strconv.AppendUint(b, uint64(c.CID), 10)
		if n.Link.HasOffset {
			b = append(b, " +"...)
			b = strconv.AppendUint(b, n.Link.Offset, 10)
		}
	}
	return b
}

// NVMeInfoOf decodes one capsule carried whole by a single SEND, without
// the linker's state (the TUI's packet list renders a packet alone): 16
// bytes are a completion, 64 and more a command (decoded into cmd, which
// the result points at). ok is false for anything else.
func NVMeInfoOf(msg []byte, admin bool, cmd *NVMeCommand) (n NVMeInfo, ok bool) {
	switch {
	case len(msg) == NVMeCQELen:
		n.Kind = NVMeCQE
		n.CQE, _ = DecodeNVMeCompletion(msg)
		return n, true
	case len(msg) >= NVMeSQELen:
		*cmd, _ = DecodeNVMeCommand(msg, admin)
		n.Kind, n.Cmd = NVMeCmd, cmd
		return n, true
	}
	return n, false
}
