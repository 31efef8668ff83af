package flow

import "github.com/rocetap/rocetap/decode"

// The iSER and SMB Direct linkers decode the header of every SEND of
// their connections (decode.ISER, decode.SMBDirect); what they carry above
// (iSCSI PDUs, SMB 3) stays bytes, and their RDMA transfers are not linked.

func init() {
	RegisterULP(decode.ULPISER, func(*Tracker) ULPLinker { return &iserLinker{} })
	RegisterULP(decode.ULPSMBDirect, func(*Tracker) ULPLinker { return &smbDirectLinker{} })
}

type iserLinker struct{ hdr decode.ISER }

func (l *iserLinker) Message(_ *ULPConn, m *ULPMessage, p *decode.Packet) {
	if err := l.hdr.Decode(m.Data); err != nil && l.hdr.Have == 0 || l.hdr.Opcode() < decode.ISEROpControl || l.hdr.Opcode() > decode.ISEROpHelloReply {
		return
	}
	p.Analysis.ULP.ISER = &l.hdr
}

func (*iserLinker) Data(*ULPConn, *ULPData, *decode.Packet) {}
func (*iserLinker) End()                                    {}

type smbDirectLinker struct{ msg decode.SMBDirect }

// smbDirectConn counts the messages each side sent: the first of the
// side that connected is the negotiate request, the first of the other
// the response, every later one a data transfer.
type smbDirectConn struct{ sent [2]uint64 }

func (l *smbDirectLinker) Message(c *ULPConn, m *ULPMessage, p *decode.Packet) {
	st, _ := c.State.(*smbDirectConn)
	if st == nil {
		st = &smbDirectConn{}
		c.State = st
	}
	first := st.sent[m.Side&1] == 0
	st.sent[m.Side&1]++
	var kind decode.SMBDirectKind
	switch {
	case c.Initiator < 0: // decode-as: no CM exchange, guess from the shape
		kind = decode.ClassifySMBDirect(m.Data)
	case !first:
		kind = decode.SMBDirectData
	case int8(m.Side) == c.Initiator:
		kind = decode.SMBDirectNegotiateRequest
	default:
		kind = decode.SMBDirectNegotiateResponse
	}
	if kind == decode.SMBDirectUnknown {
		return
	}
	if err := l.msg.Decode(m.Data, kind); err != nil && l.msg.Have == 0 {
		return
	}
	p.Analysis.ULP.SMBDirect = &l.msg
}

func (*smbDirectLinker) Data(*ULPConn, *ULPData, *decode.Packet) {}
func (*smbDirectLinker) End()                                    {}
