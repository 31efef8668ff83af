package flow

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestMADTotals: kinds, error statuses (not the D bit of a directed-route
// SMP, not a request's status) and traps are counted, and a Snapshot
// shares no map with the totals that go on counting.
func TestMADTotals(t *testing.T) {
	var tt Totals
	add := func(class, method uint8, attr, status uint16) {
		var p decode.Packet
		p.Has = decode.HdrMAD | decode.HdrBTH
		p.MAD = decode.MAD{MgmtClass: class, R: method&0x80 != 0, Method: method & 0x7F, AttributeID: attr, Status: status}
		tt.Add(&p)
	}
	add(decode.MgmtClassSubnLIDRouted, decode.MADMethodGet, decode.SMPAttrNodeInfo, 0)
	add(decode.MgmtClassSubnLIDRouted, decode.MADMethodGet, decode.SMPAttrNodeInfo, decode.MADStatusMethodUnsup) // a request: not an error
	add(decode.MgmtClassSubnDirectRoute, decode.MADMethodGetResp, decode.SMPAttrPortInfo, decode.MADStatusDirectionBit)
	add(decode.MgmtClassPerf, decode.MADMethodGetResp, decode.PMAAttrPortCounters, decode.MADStatusMethodAttrUnsup)
	snap := tt.Snapshot()
	add(decode.MgmtClassPerf, decode.MADMethodGetResp, decode.PMAAttrPortCounters, decode.MADStatusMethodAttrUnsup)
	kinds := tt.MADs.KindCounts()
	if len(kinds) != 3 || kinds[0].String() != "SubnGet(NodeInfo)" || kinds[0].N != 2 || kinds[1].String() != "PerfGetResp(PortCounters)" || kinds[1].N != 2 {
		t.Errorf("kinds %+v", kinds)
	}
	st := tt.MADs.StatusCounts()
	if len(st) != 1 || st[0].Status != decode.MADStatusMethodAttrUnsup || st[0].N != 2 {
		t.Errorf("statuses %+v", st)
	}
	if got := snap.MADs.StatusCounts(); len(got) != 1 || got[0].N != 1 || snap.MADs.Total != 4 {
		t.Errorf("snapshot changed after it was taken: %+v, total %d", got, snap.MADs.Total)
	}
}
