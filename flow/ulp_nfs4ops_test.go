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
