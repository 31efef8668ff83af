package decode

import (
	"encoding/binary"
	"fmt"
)

// iSER (RFC 7145): the 28-byte header in front of every iSCSI PDU an iSER
// connection SENDs, and the Hello / HelloReply messages of its login.
//
//	 0       1       2       3
//	+-------+-------+-------+-------+
//	| flags |      reserved         |   flags: opcode(4) WSV RSV 0 0
//	+-------+-------+-------+-------+
//	|          Write STag           |
//	|     Write Base Offset (8)     |
//	|          Read STag            |
//	|     Read Base Offset (8)      |
//	+-------------------------------+
//	| iSCSI PDU (stays bytes)       |
//
// Hello: flags | MaxVer(4) MinVer(4) | iSER-IRD (2) | reserved;
// HelloReply: flags (REJ bit 0) | MaxVer MinVer | iSER-ORD (2) | reserved.

// iSER opcodes (the flags' high nibble) and flag bits.
const (
	ISEROpControl    = 0x1 // iSCSI control-type PDU
	ISEROpHello      = 0x2
	ISEROpHelloReply = 0x3

	ISERFlagWSV = 0x08
	ISERFlagRSV = 0x04
	ISERFlagREJ = 0x01

	ISERHdrLen = 28
)

// ISER is a decoded iSER header.
type ISER struct {
	Flags           uint8
	Version         uint8 // Hello, HelloReply: MaxVer << 4 | MinVer
	WriteSTag       uint32
	WriteBaseOffset uint64
	ReadSTag        uint32
	ReadBaseOffset  uint64
	IRD, ORD        uint16
	Have            int    // header bytes present (up to ISERHdrLen)
	Payload         []byte // the iSCSI PDU of a control-type message
}

// Opcode returns the iSER opcode (the flags' high nibble).
func (h *ISER) Opcode() uint8 { return h.Flags >> 4 }

var iserOpNames = [...]string{1: "iSCSI Control-Type PDU", 2: "Hello Message", 3: "HelloReply Message"}

// ISEROpName names an iSER opcode as Wireshark does.
func ISEROpName(op uint8) string {
	if int(op) < len(iserOpNames) {
		return iserOpNames[op]
	}
	return ""
}

// Decode decodes the iSER header at the start of b. Fields past the end
// of b are zero (Have says how far it went) and the error wraps
// ErrTruncated; an unknown opcode is ErrMalformed.
func (h *ISER) Decode(b []byte) error {
	*h = ISER{}
	var w [ISERHdrLen]byte
	h.Have = copy(w[:], b)
	if h.Have == 0 {
		return truncated("iser", ISERHdrLen, 0)
	}
	h.Flags = w[0]
	switch h.Opcode() {
	case ISEROpControl:
		h.WriteSTag = binary.BigEndian.Uint32(w[4:])
		h.WriteBaseOffset = binary.BigEndian.Uint64(w[8:])
		h.ReadSTag = binary.BigEndian.Uint32(w[16:])
		h.ReadBaseOffset = binary.BigEndian.Uint64(w[20:])
	case ISEROpHello, ISEROpHelloReply:
		h.Version = w[1]
		if h.Opcode() == ISEROpHello {
			h.IRD = binary.BigEndian.Uint16(w[2:])
		} else {
			h.ORD = binary.BigEndian.Uint16(w[2:])
		}
	default:
		return fmt.Errorf("iser: opcode %#x: %w", h.Opcode(), ErrMalformed)
	}
	if h.Have < ISERHdrLen {
		return truncated("iser", ISERHdrLen, h.Have)
	}
	if h.Opcode() == ISEROpControl {
		h.Payload = b[ISERHdrLen:]
	}
	return nil
}

// AppendTo appends the header to b (test frames are built with it).
func (h *ISER) AppendTo(b []byte) []byte {
	var w [ISERHdrLen]byte
	w[0] = h.Flags
	switch h.Opcode() {
	case ISEROpHello, ISEROpHelloReply:
		w[1] = h.Version
		binary.BigEndian.PutUint16(w[2:], h.IRD|h.ORD)
	default:
		binary.BigEndian.PutUint32(w[4:], h.WriteSTag)
		binary.BigEndian.PutUint64(w[8:], h.WriteBaseOffset)
		binary.BigEndian.PutUint32(w[16:], h.ReadSTag)
		binary.BigEndian.PutUint64(w[20:], h.ReadBaseOffset)
	}
	return append(b, w[:]...)
}
