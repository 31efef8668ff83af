package tui

import (
	"github.com/rocetap/rocetap/decode"
)

// ulpRow sets what the packet list's Info shows of the packet's
// upper-layer protocol, from what the index pass recorded (ulpindex.go):
// p.Analysis.ULP as the tracker set it, or, for an RPC, iSER or SMB
// Direct message, e.ulpText (its Info as the tracker's analysis made it).
// So every packet of an NVMe-oF command or an RPC shows what `rocetap
// decode` shows on it ("NVMe Read cid=5 nsid=1 slba=2048 nlb=7 (8
// blocks)", "NVMe Read data cid=5 +4096", "NFS COMPOUND SEQUENCE PUTFH
// READ xid=0x1d94a661 Call"), and the first SENDs of a capsule or call
// carried by several show what its last one shows.
func (ix *Index) ulpRow(p *decode.Packet, e *Entry, s *ulpScratch) {
	if e.ulp == 0 {
		return
	}
	u, text := ix.ulp.info(p, e.ulp, s)
	if u != nil {
		p.Analysis.ULP = u // (in s: valid until s renders the next row)
	}
	e.ulpText = text
}

// ulpScratch holds the ULP analysis ulpRow gives a packet it renders,
// reused from row to row: a row rendered allocates none.
type ulpScratch struct {
	u   decode.ULPInfo
	cmd decode.NVMeCommand
	rpc decode.RPCInfo
}
