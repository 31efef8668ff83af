package tui

import (
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// ulpRow sets p.Analysis.ULP for the packet list's Info column: a packet
// of a session carrying NVMe-oF that holds a whole capsule (SEND Only,
// with or without Invalidate) shows the command or completion ("NVMe Read
// cid=5 nsid=1 slba=2048 nlb=7 (8 blocks)"). The list renders a packet
// alone, so capsules reassembled from several SENDs, data transfers and
// the links to other packets are left to the commands (decode -V, stats,
// expert).
func (ix *Index) ulpRow(p *decode.Packet, session uint32) {
	if session == 0 || p.Has&decode.HdrBTH == 0 || !p.BTH.Opcode.Is(decode.PropSend|decode.PropStart|decode.PropEnd) {
		return
	}
	u, qid, hasQID := decode.ULPNone, uint16(0), false
	ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t != nil {
			u, qid, hasQID = t.ULPOf(session)
		}
	})
	if u != decode.ULPNVMe {
		return
	}
	info := &decode.ULPInfo{Proto: u} // (rows are cached: an allocation per NVMe row rendered)
	var ok bool
	if info.NVMe, ok = decode.NVMeInfoOf(p.Payload, hasQID && qid == 0, new(decode.NVMeCommand)); !ok {
		return
	}
	info.NVMe.QID, info.NVMe.HasQID = qid, hasQID
	p.Analysis.ULP = info
}
