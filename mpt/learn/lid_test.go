package learn

import (
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
)

// TestLearnLIDs: on native InfiniBand without a GRH (ib_lid_rc.pcap: LID
// 1 requests, LID 2 answers) the responder and its QP's peer are LIDs, and
// the learned file checks the capture as its responder answered: the
// executed accesses allowed, the NAKed one (an rkey it lacks) forbidden.
func TestLearnLIDs(t *testing.T) {
	const path = "../../testdata/synth/ib_lid_rc.pcap"
	for _, o := range []Options{{}, {Responder: decode.NodeLID(2)}} {
		res, err := learnCapture(t, path, o)
		if err != nil {
			t.Fatal(err)
		}
		f := res.File
		if f.Responder != decode.NodeLID(2) || len(f.QPs) != 1 || len(f.MRs) != 1 {
			t.Fatalf("responder %v (%s), %d QPs, %d MRs", f.Responder, res.ResponderFrom, len(f.QPs), len(f.MRs))
		}
		if q := f.QPs[0]; q.QPN != 0x49 || q.Remote == nil || *q.Remote != (hca.Peer{Addr: decode.NodeLID(1), QPN: 0x48}) || q.ExpectedPSN != 100 {
			t.Errorf("QP %+v", q)
		}
		m, err := hca.NewModel(&f.Config, hca.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var evs []string
		tr := flow.New(flow.Options{MPT: m, OnEvent: func(e *flow.Event) {
			if e.Kind&(decode.EventMPTViolation|decode.EventMPTAccepted|decode.EventMPTRejected) != 0 {
				evs = append(evs, e.Text)
			}
		}})
		eachPacket(t, path, tr.Track)
		if len(evs) != 1 || !strings.Contains(evs[0], "MPT forbids the WRITE of 64 bytes at VA 0x0000000000010000 with rkey 0x00001112") {
			t.Errorf("MPT events %q", evs)
		}
	}
	// A LID no request goes to.
	if _, err := learnCapture(t, path, Options{Responder: decode.NodeLID(1)}); err == nil ||
		err.Error() != "no request in the capture is sent to lid:1; requests go to lid:2 (1 QP)" {
		t.Errorf("responder lid:1: %v", err)
	}
}
