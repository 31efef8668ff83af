package printer

import (
	"testing"
)

// The sessions table's columns are as wide as the widest cell row writes
// (measure keeps the largest numbers instead of writing them): on the
// sessions of every synthetic and rxe capture, NAKs, lost PSNs, LIDs,
// GIDs, UD and unpaired sessions among them.
func TestSessionsTableWidths(t *testing.T) {
	sessions := 0
	for _, c := range trackedSessions(t) {
		ss := c.sessions
		sessions += len(ss)
		got := NewSessionsTable(ss, c.start)
		want := SessionsTable{start: newStartClock(c.start)}
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
			t.Errorf("%s: widths %v, the cells' %v", c.name, got.width, want.width)
		}
	}
	if sessions < 50 {
		t.Errorf("%d sessions in all, want more to measure", sessions)
	}
}
