package decode

import "strconv"

// Opcode is the BTH opcode: transport (bits 7:5) | operation (bits 4:0).
//
// What an opcode is (first or last packet of its message, SEND or READ,
// carries an immediate, ...) is answered by one table, opTable, as the
// Linux kernel's rxe_opcode.c answers it with a mask per opcode: code
// asks op.Is(PropStart), never opcode arithmetic of its own.
type Opcode uint8

// Transport is a transport service: the opcode's top three bits
// (IBA 9.2, Table 37).
type Transport uint8

// Transport services.
const (
	TransportRC     Transport = 0x00
	TransportUC     Transport = 0x20
	TransportRD     Transport = 0x40
	TransportUD     Transport = 0x60
	TransportCNP    Transport = 0x80 // RoCEv2 CNP (0x81)
	TransportXRC    Transport = 0xA0
	TransportVendor Transport = 0xE0
)

// transportNames are the names of the transport bits.
var transportNames = [8]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "Reserved", "Vendor"}

// String returns "RC", "UC", "RD", "UD", "CNP", "XRC", "Reserved" or "Vendor".
func (t Transport) String() string { return transportNames[t>>5&7] }

// Reliable reports whether the transport acknowledges every request and
// keeps its PSNs in order with NAKs and retries: RC and XRC (RD is
// reliable too, but rocetap models no RD responder).
func (t Transport) Reliable() bool { return t == TransportRC || t == TransportXRC }

// Connected reports whether a QP of the transport is connected to one
// peer QP: RC, UC and XRC.
func (t Transport) Connected() bool {
	return t == TransportRC || t == TransportUC || t == TransportXRC
}

// Opcode returns the opcode of operation op (OpSendFirst, ...) on t.
func (t Transport) Opcode(op uint8) Opcode { return Opcode(uint8(t) | op&0x1F) }

// TransportByName returns the transport named "RC", "UC", "UD", "XRC" or
// "RD".
func TransportByName(name string) (Transport, bool) {
	for i, n := range transportNames[:6] {
		if n == name && n != "CNP" {
			return Transport(i << 5), true
		}
	}
	return 0, false
}

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

// OpProp is a bit set of what an opcode is. Ask with Opcode.Is.
type OpProp uint32

// Opcode properties.
const (
	PropStart       OpProp = 1 << iota // first packet of a message: FIRST or ONLY
	PropMiddle                         // MIDDLE
	PropEnd                            // last packet of a message: LAST or ONLY
	PropSend                           // SEND
	PropWrite                          // RDMA WRITE
	PropRead                           // RDMA READ request
	PropReadResp                       // RDMA READ response
	PropAtomic                         // ATOMIC CmpSwap or FetchAdd
	PropAck                            // Acknowledge
	PropAtomicAck                      // Atomic Acknowledge
	PropImm                            // carries an immediate (ImmDt)
	PropInv                            // SEND with Invalidate (IETH)
	PropFlush                          // FLUSH
	PropAtomicWrite                    // ATOMIC WRITE
	PropResync                         // RD RESYNC
	PropCNP                            // RoCEv2 CNP
	PropRequest                        // sent by a requester
	PropResponse                       // sent by a responder: READ response, ACK or ATOMIC ACK
	PropPayload                        // may carry payload

	// PropOnly is a message of one packet: FIRST and LAST at once.
	PropOnly = PropStart | PropEnd
)

// Hdr is a bit set of the headers that follow BTH (or of all headers present
// in a Packet, see Packet.Has).
type Hdr uint64

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
	// Protocols rocetap summarises but does not analyse (ipoib.go,
	// l4.go): the IPoIB header (RFC 4391), then gopacket's layers.
	HdrIPoIB  // 4-byte IPoIB header (and DLT_IPOIB's 40-byte pseudo-header)
	HdrARP    // ARP, any hardware address size (20 bytes on IPoIB)
	HdrICMP   // ICMP over IPv4
	HdrICMPv6 // ICMPv6
	HdrTCP    // TCP
	HdrLLDP   // LLDP (EtherType 0x88cc)
	HdrData   // Packet.Data: what ICMP, ICMPv6, TCP or IPoIB's UDP carry
	// HdrInner: a RoCEv2 packet's IPoIB SEND carries an IP packet, whose
	// IP and UDP headers are a second occurrence of the ip.*, ipv6.* and
	// udp.* fields (Packet.Inner), after the RoCEv2 ones.
	HdrInner
)

// opInfo describes one opcode: a row of opTable.
type opInfo struct {
	name  string // Wireshark-style short name, e.g. "RC Send First"
	exts  [4]Hdr // extended headers after BTH, in wire order
	nExt  uint8  // how many of exts there are
	props OpProp
	known bool
}

// opTable is the one table of opcode facts, filled by init from the rows
// below.
var opTable [256]opInfo

// operation is one row of IBA Table 38 (the operation part of an opcode):
// its name as Wireshark's Info column spells it, the extended headers
// IBA puts after BTH for RC (transport-specific headers such as RDETH and
// XRCETH come first, see init), and its properties.
type operation struct {
	name  string
	exts  []Hdr
	props OpProp
}

const (
	reqPayload = PropRequest | PropPayload
	respNoData = PropResponse | PropOnly
)

var operations = [32]operation{
	OpSendFirst:          {"Send First", nil, PropSend | PropStart | reqPayload},
	OpSendMiddle:         {"Send Middle", nil, PropSend | PropMiddle | reqPayload},
	OpSendLast:           {"Send Last", nil, PropSend | PropEnd | reqPayload},
	OpSendLastImm:        {"Send Last Immediate", []Hdr{HdrImmDt}, PropSend | PropEnd | PropImm | reqPayload},
	OpSendOnly:           {"Send Only", nil, PropSend | PropOnly | reqPayload},
	OpSendOnlyImm:        {"Send Only Immediate", []Hdr{HdrImmDt}, PropSend | PropOnly | PropImm | reqPayload},
	OpWriteFirst:         {"RDMA Write First", []Hdr{HdrRETH}, PropWrite | PropStart | reqPayload},
	OpWriteMiddle:        {"RDMA Write Middle", nil, PropWrite | PropMiddle | reqPayload},
	OpWriteLast:          {"RDMA Write Last", nil, PropWrite | PropEnd | reqPayload},
	OpWriteLastImm:       {"RDMA Write Last Immediate", []Hdr{HdrImmDt}, PropWrite | PropEnd | PropImm | reqPayload},
	OpWriteOnly:          {"RDMA Write Only", []Hdr{HdrRETH}, PropWrite | PropOnly | reqPayload},
	OpWriteOnlyImm:       {"RDMA Write Only Immediate", []Hdr{HdrRETH, HdrImmDt}, PropWrite | PropOnly | PropImm | reqPayload},
	OpReadRequest:        {"RDMA Read Request", []Hdr{HdrRETH}, PropRead | PropOnly | PropRequest},
	OpReadResponseFirst:  {"RDMA Read Response First", []Hdr{HdrAETH}, PropReadResp | PropStart | PropResponse | PropPayload},
	OpReadResponseMiddle: {"RDMA Read Response Middle", nil, PropReadResp | PropMiddle | PropResponse | PropPayload},
	OpReadResponseLast:   {"RDMA Read Response Last", []Hdr{HdrAETH}, PropReadResp | PropEnd | PropResponse | PropPayload},
	OpReadResponseOnly:   {"RDMA Read Response Only", []Hdr{HdrAETH}, PropReadResp | PropOnly | PropResponse | PropPayload},
	OpAcknowledge:        {"Acknowledge", []Hdr{HdrAETH}, PropAck | respNoData},
	OpAtomicAcknowledge:  {"Atomic Acknowledge", []Hdr{HdrAETH, HdrAtomicAckETH}, PropAtomicAck | respNoData},
	OpCompareSwap:        {"Compare Swap", []Hdr{HdrAtomicETH}, PropAtomic | PropOnly | PropRequest},
	OpFetchAdd:           {"Fetch Add", []Hdr{HdrAtomicETH}, PropAtomic | PropOnly | PropRequest},
	OpResync:             {"Resync", nil, PropResync | PropOnly | PropRequest},
	OpSendLastInv:        {"Send Last Invalidate", []Hdr{HdrIETH}, PropSend | PropEnd | PropInv | reqPayload},
	OpSendOnlyInv:        {"Send Only Invalidate", []Hdr{HdrIETH}, PropSend | PropOnly | PropInv | reqPayload},
	OpFlush:              {"Flush", []Hdr{HdrFETH, HdrRETH}, PropFlush | PropOnly | PropRequest},
	OpAtomicWrite:        {"Atomic Write", []Hdr{HdrRETH}, PropAtomicWrite | PropOnly | reqPayload},
}

func init() {
	set := func(t Transport, o uint8, first ...Hdr) {
		row := &operations[o]
		var e [4]Hdr
		n := copy(e[:], first)
		n += copy(e[n:], row.exts)
		opTable[uint8(t)|o] = opInfo{name: t.String() + " " + row.name, exts: e, nExt: uint8(n), props: row.props, known: true}
	}
	for o := range uint8(len(operations)) {
		row := &operations[o]
		if row.name == "" || o == OpResync {
			continue
		}
		set(TransportRC, o)
		// XRC: XRCETH first, on requests only.
		if row.props&PropRequest != 0 {
			set(TransportXRC, o, HdrXRCETH)
		} else {
			set(TransportXRC, o)
		}
		if o <= OpWriteOnlyImm {
			set(TransportUC, o)
		}
		if o <= OpFetchAdd {
			// RD: RDETH first; requests carry DETH after it.
			if row.props&PropRequest != 0 {
				set(TransportRD, o, HdrRDETH, HdrDETH)
			} else {
				set(TransportRD, o, HdrRDETH)
			}
		}
	}
	set(TransportRD, OpResync, HdrRDETH, HdrDETH)
	set(TransportUD, OpSendOnly, HdrDETH)
	set(TransportUD, OpSendOnlyImm, HdrDETH)
	opTable[CNP] = opInfo{name: "CNP", exts: [4]Hdr{HdrCNP}, nExt: 1, props: PropCNP, known: true}
}

// Known reports whether the opcode is defined by the IBTA specification.
func (o Opcode) Known() bool { return opTable[o].known }

// Transport returns the transport service (Opcode & 0xE0).
func (o Opcode) Transport() Transport { return Transport(o & 0xE0) }

// Op returns the operation bits (Opcode & 0x1F).
func (o Opcode) Op() uint8 { return uint8(o) & 0x1F }

// Props returns what the opcode is; an opcode the IBTA does not define
// has none.
func (o Opcode) Props() OpProp { return opTable[o].props }

// Is reports whether the opcode has every property in p:
// op.Is(PropSend|PropEnd) is true for every SEND LAST and SEND ONLY.
func (o Opcode) Is(p OpProp) bool { return opTable[o].props&p == p }

// IsAny reports whether the opcode has at least one property in p.
func (o Opcode) IsAny(p OpProp) bool { return opTable[o].props&p != 0 }

// ExtHeaders returns the extended headers that follow BTH, in wire order.
func (o Opcode) ExtHeaders() []Hdr {
	r := &opTable[o]
	return r.exts[:r.nExt]
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
func (o Opcode) IsRequest() bool { return o.Is(PropRequest) }

// IsResponse reports whether the opcode is a READ response, ACK or ATOMIC ACK.
func (o Opcode) IsResponse() bool { return o.Is(PropResponse) }

// HasPayload reports whether packets of this opcode may carry payload.
func (o Opcode) HasPayload() bool { return o.Is(PropPayload) }

// MsgKind returns the kind of message a request opcode belongs to, as the
// statistics count them (MsgOther for FLUSH, ATOMIC WRITE, RESYNC and
// anything that is not a request).
func (o Opcode) MsgKind() MsgKind {
	p := o.Props()
	switch {
	case p&PropSend != 0 && p&PropImm != 0:
		return MsgSendImm
	case p&PropInv != 0:
		return MsgSendInv
	case p&PropSend != 0:
		return MsgSend
	case p&PropWrite != 0 && p&PropImm != 0:
		return MsgWriteImm
	case p&PropWrite != 0:
		return MsgWrite
	case p&PropRead != 0:
		return MsgRead
	case p&PropAtomic != 0:
		return MsgAtomic
	}
	return MsgOther
}

// InMessage returns the opcode of o's transport and operation (SEND, RDMA
// WRITE or READ response, without immediate or invalidate) for packet i
// (0-based) of a message of n packets: its FIRST, MIDDLE, LAST or ONLY.
// It returns o itself for an opcode of no such operation, or when the
// transport has no such packet (UD has only ONLY).
func (o Opcode) InMessage(i, n int) Opcode {
	pos := 1 // MIDDLE
	switch {
	case n <= 1:
		pos = 3
	case i == 0:
		pos = 0
	case i >= n-1:
		pos = 2
	}
	if !inMessage[o].ok[pos] {
		return o
	}
	return inMessage[o].op[pos]
}

// inMessage[o] holds the FIRST, MIDDLE, LAST and ONLY opcodes of o's
// transport and operation (InMessage).
var inMessage [256]struct {
	op [4]Opcode
	ok [4]bool
}

func init() {
	positions := [4]OpProp{PropStart, PropMiddle, PropEnd, PropOnly}
	for o := range 256 {
		family := opTable[o].props & (PropSend | PropWrite | PropReadResp)
		if family == 0 {
			continue
		}
		t := Opcode(o).Transport()
		for i, pos := range positions {
			for op := range uint8(32) {
				p := opTable[t.Opcode(op)].props
				if p&family != 0 && p&(PropImm|PropInv) == 0 && p&(PropStart|PropMiddle|PropEnd) == pos {
					inMessage[o].op[i], inMessage[o].ok[i] = t.Opcode(op), true
				}
			}
		}
	}
}

// carriesMAD reports whether the payload of a packet is a MAD: a UD SEND
// Only (with or without immediate) to or from QP0 or QP1 (a GMP response
// goes back to the requester's QP, which may be any UD QP, from QP1).
// srcQP is the DETH's source QP. Both decoders (Decoder.Decode and the
// gopacket layers) ask this one predicate.
func carriesMAD(op Opcode, destQP, srcQP uint32) bool {
	return op.Transport() == TransportUD && op.Is(PropSend|PropOnly) && (destQP <= 1 || srcQP <= 1)
}
