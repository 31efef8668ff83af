package decode

import "fmt"

// ONC RPC version 2 (RFC 5531) call and reply headers, as RPC-over-RDMA
// carries them (no record marking):
//
//	call:  XID | 0 | RPC version (2) | program | version | procedure |
//	       credential (flavor, opaque) | verifier (flavor, opaque) | arguments
//	reply: XID | 1 | reply state: 0 accepted | verifier | accept state | results
//	                              1 denied   | reject state | ...

// ONC RPC message types (rpc.msgtyp) and reply states.
const (
	RPCCall  = 0
	RPCReply = 1

	RPCMsgAccepted = 0 // rpc.replystat
	RPCMsgDenied   = 1
	RPCSuccess     = 0 // rpc.state_accept
)

// RPCMsg is a decoded ONC RPC call or reply header. Have counts the
// header items present, in wire order, so a cut message shows what it has.
type RPCMsg struct {
	XID, MsgType uint32
	// Call.
	RPCVersion, Program, ProgVersion, Procedure uint32
	CredFlavor, VerfFlavor                      uint32
	// Reply.
	ReplyStat, AcceptStat, RejectStat uint32
	MismatchLow, MismatchHigh         uint32 // PROG_MISMATCH, RPC_MISMATCH
	AuthStat                          uint32 // AUTH_ERROR

	Have int    // items decoded: see the rpcHave* constants
	Body []byte // the procedure's arguments or results (complete header only)
}

// What RPCMsg.Have reaches, item by item.
const (
	rpcHaveXID = 1 + iota
	rpcHaveType
	rpcHaveVersion   // call: RPC version; reply: reply state
	rpcHaveProgram   // call: program; reply: verifier (accepted) or reject state (denied)
	rpcHaveProgVers  // call: program version; reply: accept state (accepted)
	rpcHaveProcedure // call
	rpcHaveCred      // call
	rpcHaveVerf      // call: the whole header
)

var rpcAcceptNames = [...]string{"RPC executed successfully", "remote hasn't exported program", "remote can't support version #", "program can't support procedure", "procedure can't decode params", "system errors like memory allocation failure"}

// RPCAcceptName names an accept state as Wireshark does.
func RPCAcceptName(v uint32) string {
	if int(v) < len(rpcAcceptNames) {
		return rpcAcceptNames[v]
	}
	return ""
}

// Complete reports whether the whole header was decoded (Body is valid).
func (m *RPCMsg) Complete() bool { return m.Body != nil }

// Decode decodes the call or reply at the start of b. An error wraps
// ErrTruncated when b ends inside the header (m holds what came before),
// ErrMalformed when it is not an RPC message.
func (m *RPCMsg) Decode(b []byte) error {
	*m = RPCMsg{}
	x := xdr{b: b}
	short := func() error { return truncated("rpc", x.off+4, len(b)) }
	step := func(v *uint32) bool {
		*v = x.u32()
		if x.ok() {
			m.Have++
		}
		return x.ok()
	}
	if !step(&m.XID) || !step(&m.MsgType) {
		return short()
	}
	switch m.MsgType {
	case RPCCall:
		if !step(&m.RPCVersion) || !step(&m.Program) || !step(&m.ProgVersion) || !step(&m.Procedure) {
			return short()
		}
		if m.CredFlavor = x.u32(); skipOpaque(&x) {
			return short()
		}
		m.Have++
		if m.VerfFlavor = x.u32(); skipOpaque(&x) {
			return short()
		}
		m.Have++
	case RPCReply:
		if !step(&m.ReplyStat) {
			return short()
		}
		switch m.ReplyStat {
		case RPCMsgAccepted:
			if m.VerfFlavor = x.u32(); skipOpaque(&x) {
				return short()
			}
			m.Have++
			if !step(&m.AcceptStat) {
				return short()
			}
			if m.AcceptStat == 2 { // PROG_MISMATCH
				m.MismatchLow, m.MismatchHigh = x.u32(), x.u32()
			}
		case RPCMsgDenied:
			if !step(&m.RejectStat) {
				return short()
			}
			switch m.RejectStat {
			case 0: // RPC_MISMATCH
				m.MismatchLow, m.MismatchHigh = x.u32(), x.u32()
			case 1: // AUTH_ERROR
				m.AuthStat = x.u32()
			}
		default:
			return fmt.Errorf("rpc: reply state %d: %w", m.ReplyStat, ErrMalformed)
		}
		if !x.ok() {
			return short()
		}
	default:
		return fmt.Errorf("rpc: message type %d: %w", m.MsgType, ErrMalformed)
	}
	m.Body = b[x.off:]
	return nil
}

// skipOpaque drops an opaque and reports whether the data ran out.
func skipOpaque(x *xdr) bool {
	x.opaque()
	return !x.ok()
}
