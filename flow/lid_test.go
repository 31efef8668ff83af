package flow_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
)

// lidMPT is the responder of testdata/synth/ib_lid_rc.pcap, LID 2: QP 0x49
// connected to LID 1's QP 0x48, and the MR its WRITE, READ and FetchAdd
// use (rkey 0x1111, 64 bytes at 0x10000).
func lidMPT(responder decode.Node) *hca.Config {
	return &hca.Config{Responder: responder, PDs: []hca.PDConfig{{ID: 0}},
		QPs: []hca.QPConfig{{QPN: 0x49, Type: decode.TransportRC, Access: hca.RemoteWrite | hca.RemoteRead | hca.RemoteAtomic, MTU: 1024,
			ExpectedPSN: 100, HasExpectedPSN: true, Remote: &hca.Peer{Addr: decode.NodeLID(1), QPN: 0x48}}},
		MRs: []hca.MRConfig{{RKey: 0x1111, LKey: 0x1111, VA: 0x10000, Length: 64,
			Access: hca.LocalWrite | hca.RemoteWrite | hca.RemoteRead | hca.RemoteAtomic}}}
}

// TestMPTLIDResponder: on native InfiniBand without a GRH, the MPT check
// runs on the accesses sent to a responder named by its LID, and only on
// those: the same MPT with the responder at LID 1 (the requester), at an
// IP address, or at the GID whose last bytes are LID 2 checks nothing.
func TestMPTLIDResponder(t *testing.T) {
	tests := []struct {
		responder decode.Node
		verdicts  []string
		events    []string
	}{
		{decode.NodeLID(2), []string{"1:write:ok", "3:read:ok", "5:atomic:ok", "7:write:unknown_rkey"}, []string{"7:mpt_violation"}},
		{decode.NodeLID(1), nil, nil},
		{decode.MustParseNode("10.0.0.2"), nil, nil},
		{decode.MustParseNode("fffe::2"), nil, nil}, // the bytes the tracker marks LID 2 with, as a GID
		{decode.Node{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.responder.String(), func(t *testing.T) {
			model, err := hca.NewModel(lidMPT(tt.responder), hca.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var evs []string
			tr := flow.New(flow.Options{MPT: model, OnEvent: func(e *flow.Event) {
				if name := kindName(e.Kind); strings.HasPrefix(name, "mpt_") {
					evs = append(evs, ev(e.Frame, name))
				}
			}})
			r, err := capture.Open("../testdata/synth/ib_lid_rc.pcap")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var verdicts []string
			var findings []decode.MPTFinding
			var p decode.Packet
			for n := 1; ; n++ {
				data, info, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
				decode.Decode(&p, data, info.LinkType)
				tr.Track(&p)
				if m := &p.Analysis.MPT; m.Checked {
					verdicts = append(verdicts, fmt.Sprintf("%d:%s:%s", n, m.Op, m.VerdictName))
				}
				findings = append(findings, p.Analysis.MPT.Finding)
			}
			if !slices.Equal(verdicts, tt.verdicts) || !slices.Equal(evs, tt.events) {
				t.Errorf("verdicts %v, events %v; want %v, %v", verdicts, evs, tt.verdicts, tt.events)
			}
			if tt.verdicts != nil {
				// every answer agrees: the responder executed what the
				// MPT allows and NAKed the unknown rkey
				want := []decode.MPTFinding{0, decode.MPTAgrees, 0, decode.MPTAgrees, 0, decode.MPTAgrees, decode.MPTViolation, decode.MPTAgrees}
				if !slices.Equal(findings, want) {
					t.Errorf("findings %v, want %v", findings, want)
				}
				s := tr.Sessions()
				if len(s) != 1 || s[0].Findings().MPTChecked != 4 || s[0].Findings().MPTViolations != 1 || s[0].A.Node() != decode.NodeLID(1) || s[0].B.Node() != decode.NodeLID(2) {
					t.Errorf("sessions %+v", s)
				}
			}
		})
	}
}
