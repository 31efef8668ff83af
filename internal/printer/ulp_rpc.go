package printer

import (
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// ulpSummary is the Info of a packet of NFS over RDMA, iSER or SMB
// Direct: "NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661 Call", "iSER
// iSCSI Control-Type PDU", "SMB Direct DataMessage"; a data packet of an
// RPC names it ("RDMA WRITE for write chunk of xid=0x...").
func ulpSummary(u *decode.ULPInfo) string {
	switch {
	case u.RPC != nil && (u.RPC.HasHdr || u.RPC.HasRPC):
		return u.RPC.Summary()
	case u.RPC != nil && u.RPC.Linked && u.RPC.Chunk != decode.RPCChunkNone:
		return "RPC " + u.RPC.Chunk.String() + " chunk of xid=0x" + hex8(u.RPC.XID)
	case u.ISER != nil:
		return "iSER " + decode.ISEROpName(u.ISER.Opcode())
	case u.SMBDirect != nil:
		return "SMB Direct " + u.SMBDirect.Kind.String()
	}
	return ""
}

func hex8(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	return "00000000"[len(s):] + s
}
