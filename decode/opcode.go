package decode

import "strconv"

// Opcode is the BTH opcode: transport (bits 7:5) | operation (bits 4:0).
type Opcode uint8

// Transport service types (Opcode & 0xE0).
const (
	TransportRC     = 0x00
	TransportUC     = 0x20
	TransportRD     = 0x40
	TransportUD     = 0x60
	TransportCNP    = 0x80
	TransportXRC    = 0xA0
	TransportVendor = 0xE0
)

// Operations (Opcode & 0x1F).
const (
	OpSendFirst          = 0x00
	OpSendMiddle         = 0x01
	OpSendLast           = 0x02
	OpSendLastImm        = 0x03
	OpSendOnly           = 0x04
	OpSendOnlyImm        = 0x05
	OpWriteFirst         = 0x06
	OpWriteMiddle        = 0x07
	OpWriteLast          = 0x08
	OpWriteLastImm       = 0x09
	OpWriteOnly          = 0x0A
	OpWriteOnlyImm       = 0x0B
	OpReadRequest        = 0x0C
	OpReadResponseFirst  = 0x0D
	OpReadResponseMiddle = 0x0E
	OpReadResponseLast   = 0x0F
	OpReadResponseOnly   = 0x10
	OpAcknowledge        = 0x11
	OpAtomicAcknowledge  = 0x12
	OpCompareSwap        = 0x13
	OpFetchAdd           = 0x14
	OpResync             = 0x15
	OpSendLastInv        = 0x16
	OpSendOnlyInv        = 0x17
	OpFlush              = 0x1C
	OpAtomicWrite        = 0x1D
)

// CNP is the RoCEv2 Congestion Notification Packet opcode.
const CNP Opcode = 0x81

// Hdr is a bit set of the headers that follow BTH (or of all headers present
// in a Packet, see Packet.Has).
type Hdr uint32

// Header bits. The order of the extended-header bits is not their order on
// the wire; ExtHeaders gives that.
const (
	HdrRDETH Hdr = 1 << iota
	HdrDETH
	HdrXRCETH
	HdrRETH
	HdrAtomicETH
	HdrAETH
	HdrAtomicAckETH
	HdrImmDt
	HdrIETH
	HdrFETH
	HdrCNP
	// Not extended headers: link and network layers, payload.
	HdrEth
	HdrVLAN
	HdrIPv4
	HdrIPv6
	HdrUDP
	HdrLRH
	HdrGRH
	HdrBTH
	HdrICRC
	HdrVCRC
	HdrMAD
	HdrCM
	HdrPFC
	HdrSLL
	HdrSLL2
	HdrERF
	HdrPayload
	HdrPause // 802.3x PAUSE (MAC control opcode 0x0001)
)

// opInfo describes one opcode.
type opInfo struct {
	name  string // Wireshark-style short name, e.g. "RC Send First"
	exts  [4]Hdr // extended headers after BTH, in wire order, zero-terminated
	known bool
}

var opTable [256]opInfo

// operation names as Wireshark's Info column spells them.
var opNames = [32]string{
	OpSendFirst: "Send First", OpSendMiddle: "Send Middle", OpSendLast: "Send Last",
	OpSendLastImm: "Send Last Immediate", OpSendOnly: "Send Only", OpSendOnlyImm: "Send Only Immediate",
	OpWriteFirst: "RDMA Write First", OpWriteMiddle: "RDMA Write Middle", OpWriteLast: "RDMA Write Last",
	OpWriteLastImm: "RDMA Write Last Immediate", OpWriteOnly: "RDMA Write Only", OpWriteOnlyImm: "RDMA Write Only Immediate",
	OpReadRequest: "RDMA Read Request", OpReadResponseFirst: "RDMA Read Response First",
	OpReadResponseMiddle: "RDMA Read Response Middle", OpReadResponseLast: "RDMA Read Response Last",
	OpReadResponseOnly: "RDMA Read Response Only", OpAcknowledge: "Acknowledge",
	OpAtomicAcknowledge: "Atomic Acknowledge", OpCompareSwap: "Compare Swap", OpFetchAdd: "Fetch Add",
	OpResync: "Resync", OpSendLastInv: "Send Last Invalidate", OpSendOnlyInv: "Send Only Invalidate",
	OpFlush: "Flush", OpAtomicWrite: "Atomic Write",
}

// rcExts lists the extended headers IBA Table 38 puts after BTH for each
// RC operation (before transport-specific headers such as RDETH/XRCETH).
var rcExts = map[uint8][]Hdr{
	OpSendFirst: nil, OpSendMiddle: nil, OpSendLast: nil,
	OpSendLastImm: {HdrImmDt}, OpSendOnly: nil, OpSendOnlyImm: {HdrImmDt},
	OpWriteFirst: {HdrRETH}, OpWriteMiddle: nil, OpWriteLast: nil,
	OpWriteLastImm: {HdrImmDt}, OpWriteOnly: {HdrRETH}, OpWriteOnlyImm: {HdrRETH, HdrImmDt},
	OpReadRequest:       {HdrRETH},
	OpReadResponseFirst: {HdrAETH}, OpReadResponseMiddle: nil, OpReadResponseLast: {HdrAETH}, OpReadResponseOnly: {HdrAETH},
	OpAcknowledge: {HdrAETH}, OpAtomicAcknowledge: {HdrAETH, HdrAtomicAckETH},
	OpCompareSwap: {HdrAtomicETH}, OpFetchAdd: {HdrAtomicETH},
	OpSendLastInv: {HdrIETH}, OpSendOnlyInv: {HdrIETH},
	OpFlush: {HdrFETH, HdrRETH}, OpAtomicWrite: {HdrRETH},
}

func init() {
	set := func(op Opcode, prefix string, exts ...Hdr) {
		var e [4]Hdr
		copy(e[:], exts)
		opTable[op] = opInfo{name: prefix + " " + opNames[op&0x1F], exts: e, known: true}
	}
	for o, exts := range rcExts {
		set(Opcode(TransportRC|o), "RC", exts...)
		// XRC: XRCETH first, on requests only.
		if isResponseOp(o) {
			set(Opcode(TransportXRC|o), "XRC", exts...)
		} else {
			set(Opcode(TransportXRC|o), "XRC", append([]Hdr{HdrXRCETH}, exts...)...)
		}
		if o <= OpWriteOnlyImm {
			set(Opcode(TransportUC|o), "UC", exts...)
		}
		if o <= OpFetchAdd {
			// RD: RDETH first; requests carry DETH after it.
			if isResponseOp(o) {
				set(Opcode(TransportRD|o), "RD", append([]Hdr{HdrRDETH}, exts...)...)
			} else {
				set(Opcode(TransportRD|o), "RD", append([]Hdr{HdrRDETH, HdrDETH}, exts...)...)
			}
		}
	}
	set(Opcode(TransportRD|OpResync), "RD", HdrRDETH, HdrDETH)
	set(Opcode(TransportUD|OpSendOnly), "UD", HdrDETH)
	set(Opcode(TransportUD|OpSendOnlyImm), "UD", HdrDETH, HdrImmDt)
	opTable[CNP] = opInfo{name: "CNP", exts: [4]Hdr{HdrCNP}, known: true}
}

func isResponseOp(o uint8) bool {
	return o >= OpReadResponseFirst && o <= OpAtomicAcknowledge
}

// Known reports whether the opcode is defined by the IBTA specification.
func (o Opcode) Known() bool { return opTable[o].known }

// Transport returns the transport bits (Opcode & 0xE0).
func (o Opcode) Transport() uint8 { return uint8(o) & 0xE0 }

// Op returns the operation bits (Opcode & 0x1F).
func (o Opcode) Op() uint8 { return uint8(o) & 0x1F }

// ExtHeaders returns the extended headers that follow BTH, in wire order.
func (o Opcode) ExtHeaders() []Hdr {
	e := &opTable[o].exts
	n := 0
	for n < len(e) && e[n] != 0 {
		n++
	}
	return e[:n]
}

// String returns the Wireshark-style name, e.g. "RC RDMA Write Only", or
// "Unknown (0xNN)".
func (o Opcode) String() string {
	if opTable[o].known {
		return opTable[o].name
	}
	return "Unknown (0x" + strconv.FormatUint(uint64(o)|0x100, 16)[1:] + ")"
}

// IsRequest reports whether the opcode is sent by a requester (not a
// response, ACK or CNP).
func (o Opcode) IsRequest() bool {
	if !o.Known() || o == CNP {
		return false
	}
	return !isResponseOp(o.Op())
}

// IsResponse reports whether the opcode is a READ response, ACK or ATOMIC ACK.
func (o Opcode) IsResponse() bool { return o.Known() && o != CNP && isResponseOp(o.Op()) }

// HasPayload reports whether packets of this opcode may carry payload.
func (o Opcode) HasPayload() bool {
	if !o.Known() {
		return false
	}
	switch o.Op() {
	case OpReadRequest, OpAcknowledge, OpAtomicAcknowledge, OpCompareSwap, OpFetchAdd, OpResync, OpFlush:
		return false
	}
	return o != CNP
}

// transportNames are the names of the transport bits.
var transportNames = [8]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "Reserved", "Vendor"}

// TransportName returns "RC", "UC", "RD", "UD", "CNP", "XRC" or "Vendor".
func (o Opcode) TransportName() string { return transportNames[o>>5] }
