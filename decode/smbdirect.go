package decode

import (
	"encoding/binary"
	"fmt"
)

// SMB Direct ([MS-SMBD] 2.2), the RDMA transport of SMB 3: every SEND
// carries one of three messages, all little-endian.
//
//	Negotiate Request (20 B):  MinVersion(2) MaxVersion(2) Reserved(2)
//	    CreditsRequested(2) PreferredSendSize(4) MaxReceiveSize(4)
//	    MaxFragmentedSize(4)
//	Negotiate Response (32 B): MinVersion(2) MaxVersion(2)
//	    NegotiatedVersion(2) Reserved(2) CreditsRequested(2)
//	    CreditsGranted(2) Status(4) MaxReadWriteSize(4)
//	    PreferredSendSize(4) MaxReceiveSize(4) MaxFragmentedSize(4)
//	Data Transfer (20 B + padding + data): CreditsRequested(2)
//	    CreditsGranted(2) Flags(2) Reserved(2) RemainingDataLength(4)
//	    DataOffset(4) DataLength(4) [Padding(4)] Buffer (SMB 3, stays bytes)
//
// Which one a SEND holds is not in the message: the first SEND of the
// active side is the request, the first of the passive side the
// response, and every later one a data transfer. ClassifySMBDirect guesses
// from the shape, as Wireshark does, for a QP seen mid-stream.

// SMBDirectKind says which SMB Direct message a SEND carries.
type SMBDirectKind uint8

// SMB Direct messages.
const (
	SMBDirectUnknown SMBDirectKind = iota
	SMBDirectNegotiateRequest
	SMBDirectNegotiateResponse
	SMBDirectData
)

var smbDirectKindNames = [...]string{"", "NegotiateRequest", "NegotiateResponse", "DataMessage"}

func (k SMBDirectKind) String() string {
	if int(k) < len(smbDirectKindNames) {
		return smbDirectKindNames[k]
	}
	return ""
}

// SMB Direct sizes and flags.
const (
	SMBDirectNegReqLen             = 20
	SMBDirectNegRepLen             = 32
	SMBDirectDataHdrLen            = 20
	SMBDirectFlagResponseRequested = 0x0001
)

// SMBDirect is a decoded SMB Direct message.
type SMBDirect struct {
	Kind SMBDirectKind
	// Negotiate.
	MinVersion, MaxVersion, NegotiatedVersion uint16
	Status                                    uint32
	MaxReadWriteSize                          uint32
	PreferredSendSize, MaxReceiveSize         uint32
	MaxFragmentedSize                         uint32
	// Negotiate and data.
	CreditsRequested, CreditsGranted uint16
	// Data.
	Flags                                uint16
	RemainingLength, DataOffset, DataLen uint32
	Data                                 []byte // the SMB 3 bytes of a data transfer

	Have int // message bytes present, up to its fixed length
}

// ClassifySMBDirect guesses the message in a SEND from its shape (lengths,
// version 0x0100, reserved zeros, data offset 24), as Wireshark's
// heuristic does; SMBDirectUnknown when nothing fits.
func ClassifySMBDirect(b []byte) SMBDirectKind {
	le16 := func(o int) uint16 { return binary.LittleEndian.Uint16(b[o:]) }
	le32 := func(o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }
	if len(b) < 20 {
		return SMBDirectUnknown
	}
	if len(b) == 32 && le16(0) == 0x0100 && le16(2) == 0x0100 && le16(4) == 0x0100 && le16(6) == 0 {
		return SMBDirectNegotiateResponse
	}
	negReq := le16(0) == 0x0100 && le16(2) == 0x0100 && le16(4) == 0
	data := le16(0) <= 255 && le16(2) <= 255 && le16(4) <= 1 && le16(6) == 0
	if len(b) == 20 {
		if le32(8) != 0 || le32(12) != 0 || le32(16) != 0 {
			data = false
		}
		switch {
		case negReq && !data:
			return SMBDirectNegotiateRequest
		case data:
			return SMBDirectData
		}
	}
	if len(b) <= 24 || le32(12) != 24 || le32(16) == 0 || le32(20) != 0 || !data {
		return SMBDirectUnknown
	}
	return SMBDirectData
}

// Decode decodes b as the message kind. Fields past the end of b are zero
// (Have says how far it went) and the error wraps ErrTruncated.
func (m *SMBDirect) Decode(b []byte, kind SMBDirectKind) error {
	*m = SMBDirect{Kind: kind}
	var w [SMBDirectNegRepLen]byte
	le16 := func(o int) uint16 { return binary.LittleEndian.Uint16(w[o:]) }
	le32 := func(o int) uint32 { return binary.LittleEndian.Uint32(w[o:]) }
	need := 0
	switch kind {
	case SMBDirectNegotiateRequest:
		need = SMBDirectNegReqLen
		m.Have = copy(w[:need], b)
		m.MinVersion, m.MaxVersion, m.CreditsRequested = le16(0), le16(2), le16(6)
		m.PreferredSendSize, m.MaxReceiveSize, m.MaxFragmentedSize = le32(8), le32(12), le32(16)
	case SMBDirectNegotiateResponse:
		need = SMBDirectNegRepLen
		m.Have = copy(w[:need], b)
		m.MinVersion, m.MaxVersion, m.NegotiatedVersion = le16(0), le16(2), le16(4)
		m.CreditsRequested, m.CreditsGranted, m.Status = le16(8), le16(10), le32(12)
		m.MaxReadWriteSize, m.PreferredSendSize = le32(16), le32(20)
		m.MaxReceiveSize, m.MaxFragmentedSize = le32(24), le32(28)
	case SMBDirectData:
		need = SMBDirectDataHdrLen
		m.Have = copy(w[:need], b)
		m.CreditsRequested, m.CreditsGranted, m.Flags = le16(0), le16(2), le16(4)
		m.RemainingLength, m.DataOffset, m.DataLen = le32(8), le32(12), le32(16)
	default:
		return fmt.Errorf("smb_direct: unknown message: %w", ErrMalformed)
	}
	if m.Have < need {
		return truncated("smb_direct", need, m.Have)
	}
	if kind == SMBDirectData && m.DataLen > 0 {
		if uint64(m.DataOffset) < SMBDirectDataHdrLen || uint64(m.DataOffset)+uint64(m.DataLen) > uint64(len(b)) {
			if uint64(m.DataOffset) >= SMBDirectDataHdrLen && uint64(m.DataOffset) <= uint64(len(b)) {
				m.Data = b[m.DataOffset:]
				return truncated("smb_direct", int(min(uint64(m.DataOffset)+uint64(m.DataLen), 1<<31)), len(b))
			}
			return fmt.Errorf("smb_direct: data offset %d length %d in %d bytes: %w", m.DataOffset, m.DataLen, len(b), ErrMalformed)
		}
		m.Data = b[m.DataOffset : m.DataOffset+m.DataLen]
	}
	return nil
}
