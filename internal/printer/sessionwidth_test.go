package printer

import (
	"path/filepath"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// The sessions table's columns are as wide as the widest cell row writes
// (measure keeps the largest numbers instead of writing them): on the
// sessions of every synthetic and rxe capture, NAKs, lost PSNs, LIDs,
// GIDs, UD and unpaired sessions among them.
func TestSessionsTableWidths(t *testing.T) {
	var files []string
	for _, g := range []string{"../../testdata/synth/*.pcap*", "../../testdata/rxe/*.pcap*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("%d captures", len(files))
	}
	sessions := 0
	for _, file := range files {
		tr := flow.New(flow.Options{})
		var p decode.Packet
		frames := testcap.ReadFile(t, file)
		for _, f := range frames {
			p.Frame.Number, p.Frame.Len, p.Frame.Time = f.Number, f.Len, f.Time
			decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
			tr.Track(&p)
		}
		tr.Flush()
		ss := tr.Sessions()
		if len(ss) == 0 {
			continue
		}
		sessions += len(ss)
		start := frames[0].Time
		got := NewSessionsTable(ss, start)
		want := SessionsTable{start: start}
		for i, h := range sessionCols {
			want.width[i] = len(h)
		}
		for _, s := range ss {
			want.row(s)
			for i := range want.width {
				want.width[i] = max(want.width[i], runeWidth(want.cell(i)))
			}
		}
		if got.width != want.width {
			t.Errorf("%s: widths %v, the cells' %v", filepath.Base(file), got.width, want.width)
		}
	}
	if sessions < 50 {
		t.Errorf("%d sessions in all, want more to measure", sessions)
	}
}
