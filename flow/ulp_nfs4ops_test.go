package flow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// TestRPCEveryNFS4Op: on the synthetic COMPOUNDs of every op the kernel's
// mount lacks, the linker names every op of each call (the GETFH at the
// end included), and the call with op 99 alone raises the malformed note,
// its reply (NFS4ERR_OP_ILLEGAL) the error.
func TestRPCEveryNFS4Op(t *testing.T) {
	type ev struct {
		kind  decode.Event
		frame int
	}
	var got []ev
	tr := trackFile(t, "../testdata/synth/nfs4_ops.pcap", flow.Options{KeepULP: true, OnEvent: func(e *flow.Event) {
		if e.Kind != decode.EventConnect {
			got = append(got, ev{e.Kind, e.Frame})
		}
	}}, 0, nil)
	if want := []ev{{decode.EventULPMalformed, 12}, {decode.EventULPError, 13}, {decode.EventAckCoalesced, 14}, {decode.EventAckCoalesced, 15}}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	l := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
	ops := 0
	for _, c := range l.Calls() {
		if c.XID != 0x2ff && !strings.HasSuffix(c.Name(), " GETFH") {
			t.Errorf("xid %#x: %s", c.XID, c.Name())
		}
		ops += len(c.Ops)
	}
	if st := l.Stats(); st.Calls != 5 || st.Replied != 5 || st.Errors != 1 || ops != 4*3+60+3 {
		t.Errorf("stats %+v", st)
	}
}

// TestRPCLongCall: an RDMA_NOMSG call whose RPC message the server pulls
// from the position-zero read chunk is decoded from the READ responses'
// bytes, on the one that completes them (frame 8): its xid, procedure and
// ops are known, its reply and data linked, in one pass as with every
// call kept.
func TestRPCLongCall(t *testing.T) {
	const file = "../testdata/synth/nfs_rdma_nomsg.pcap"
	for _, keep := range []bool{true, false} {
		var events []string
		var on8 *decode.RPCInfo
		tr := trackFile(t, file, flow.Options{KeepULP: keep, OnEvent: func(e *flow.Event) {
			if e.Kind != decode.EventConnect {
				events = append(events, e.Text)
			}
		}}, 0, func(p *decode.Packet) {
			if u := p.Analysis.ULP; p.Frame.Number == 8 && u != nil && u.RPC != nil {
				r := *u.RPC
				on8 = &r
			}
		})
		if on8 == nil || !on8.HasRPC || !on8.FromChunk || !on8.HasNFS || on8.RPC.XID != 0x301 || decode.NFS4OpList(on8.NFS.Ops) != "SEQUENCE PUTFH SETXATTR GETATTR" {
			t.Fatalf("keep %v: frame 8: %+v", keep, on8)
		}
		st := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker).Stats()
		if len(events) != 0 || st.Calls != 1 || st.Replied != 1 || len(st.ByProc) != 1 || st.ByProc[0].Ops != "SEQUENCE PUTFH SETXATTR GETATTR" || st.ByProc[0].Bytes != 1544 {
			t.Errorf("keep %v: events %v, stats %+v", keep, events, st)
		}
		if !keep {
			continue
		}
		c := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker).Calls()[0]
		if c.CallFrame != 4 || c.ReplyFrame != 9 || !slices.Equal(c.DataFrames, []int{6, 7, 8}) || c.DataBytes != 1544 || c.Procedure != decode.NFS4ProcCompound {
			t.Errorf("the call: %+v", c)
		}
	}
}
