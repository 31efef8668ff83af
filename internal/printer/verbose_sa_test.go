package printer

import (
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestVerboseSARecords: the -V tree shows an SA table record by record,
// under the SA item: the last RMPP segment of roce_sa.pcap (frame 11)
// completes 7 PathRecords (flow reassembles them), FlowLabel 0 to 6.
func TestVerboseSARecords(t *testing.T) {
	tr := flow.New(flow.Options{})
	var p decode.Packet
	for _, f := range testcap.ReadPcap(t, "../../testdata/synth/roce_sa.pcap") {
		p.Frame.Number, p.Frame.Len = f.Number, f.Len
		decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
		tr.Track(&p)
		if f.Number == 11 {
			break
		}
	}
	var got []string
	depth := -1
	for _, l := range Lines(&p, nil) {
		switch {
		case strings.HasPrefix(l.Text, "SA Packet"):
			depth = l.Depth
		case strings.HasPrefix(l.Text, "PathRecord "):
			if l.Depth != depth+1 {
				t.Errorf("%q at depth %d, the SA item at %d", l.Text, l.Depth, depth)
			}
			got = append(got, l.Text)
		case strings.HasPrefix(l.Text, "FlowLabel: "):
			got = append(got, l.Text)
		}
	}
	want := []string{"PathRecord 1", "FlowLabel: 0x000000 (0)", "PathRecord 2", "FlowLabel: 0x000001 (1)", "PathRecord 3", "FlowLabel: 0x000002 (2)",
		"PathRecord 4", "FlowLabel: 0x000003 (3)", "PathRecord 5", "FlowLabel: 0x000004 (4)", "PathRecord 6", "FlowLabel: 0x000005 (5)", "PathRecord 7", "FlowLabel: 0x000006 (6)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("tree:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
