package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/decode"
)

// mptLine finds the MPT view's line of frame n.
func mptLine(s *rvScreen, n int) int {
	for i, l := range s.lines {
		if f := strings.Fields(strings.Trim(l, "║│ ")); len(f) > 3 && f[0] == strconv.Itoa(n) && strings.HasPrefix(f[2], "0x") {
			return i
		}
	}
	return -1
}

// TestMPTView: err_write_oob's two WRITEs are listed with their MR,
// offset, VA→PA and verdict as a direct tracker pass checks them: frame
// 3 out_of_bounds; the responses, which agree, are not; Enter goes to
// the frame.
func TestMPTView(t *testing.T) {
	t.Parallel()
	// The index without a tracker: its entries have no session, so
	// moving the selection never starts the detail tree's tracker (see
	// rvNoDetails), while the view still has the App's trackers.
	rh := rvStartIndex(t, "err_write_oob.pcap", "err_write_oob.mpt.json", 160, 30, false, nil)
	ref := rvReference(t, rh.ix, rh.newTracker)
	rh.press('M')
	s := rh.waitText("MPT checks: 2 rows (", "out_of_bounds")
	checked := 0
	for _, p := range ref {
		y := mptLine(s, p.number)
		if !p.mpt.Checked {
			if y >= 0 {
				t.Errorf("frame %d has no access checked, yet a line:\n%s", p.number, s.lines[y])
			}
			continue
		}
		checked++
		if y < 0 {
			t.Fatalf("no line of frame %d:\n%s", p.number, s)
		}
		c := p.mpt
		for _, want := range []string{"write", hexKey(c.RKey), hexKey(c.MR), strconv.FormatUint(c.Offset, 10),
			"0x0000555555575f00 → " + hex64(c.PA), c.VerdictName} {
			if !strings.Contains(s.lines[y], want) {
				t.Errorf("frame %d: want %q in\n%s", p.number, want, s.lines[y])
			}
		}
	}
	if checked != 2 {
		t.Fatalf("the reference checked %d accesses, want 2", checked)
	}
	y := mptLine(s, 3)
	for _, want := range []string{"out_of_bounds", "violation", "out of bounds by 256 bytes"} {
		if !strings.Contains(s.lines[y], want) {
			t.Errorf("frame 3: want %q in\n%s", want, s.lines[y])
		}
	}
	if !s.colored(y, "out_of_bounds", tcell.ColorYellow) {
		t.Errorf("the forbidden access is not yellow:\n%s", s.lines[y])
	}
	if y := mptLine(s, 1); !strings.Contains(s.lines[y], " ok ") || strings.Contains(s.lines[y], "violation") {
		t.Errorf("frame 1 is allowed:\n%s", s.lines[y])
	}

	rh.key(tcell.KeyDown) // the first row is selected: down is frame 3
	rh.key(tcell.KeyEnter)
	rh.wait("frame 3 selected in the list", func(*rvScreen) bool { return rh.front() == "main" && rh.selected() == 2 })
}

// TestMPTViewLadder: l opens the ladder of the selected access's session.
func TestMPTViewLadder(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "err_write_oob.pcap", "err_write_oob.mpt.json", 160, 30, nil)
	rh.press('M')
	rh.waitText("MPT checks: 2 rows (")
	rh.press('l')
	rh.waitText("Ladder: session 1 RC, 4 packets")
}

// TestMPTViewRejected: with an MPT whose MR is larger than the
// responder's, the out-of-bounds WRITE is allowed and the responder's NAK
// is listed as rejected, in red.
func TestMPTViewRejected(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "rxe", "err_write_oob.mpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Replace(string(b), `"length": 4096`, `"length": 8192`, 1)
	if big == string(b) {
		t.Fatal("err_write_oob.mpt.json changed: no MR length of 4096")
	}
	mpt := filepath.Join(t.TempDir(), "big.mpt.json")
	if err := os.WriteFile(mpt, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	rh := rvStart(t, "err_write_oob.pcap", mpt, 160, 30, nil)
	rh.press('M')
	s := rh.waitText("MPT checks: 3 rows (")
	y := -1
	for i, l := range s.lines {
		if f := strings.Fields(strings.Trim(l, "║│ ")); len(f) > 1 && f[0] == "4" {
			y = i
		}
	}
	if y < 0 || !strings.Contains(s.lines[y], decode.Opcode(decode.OpAcknowledge).String()) || !strings.Contains(s.lines[y], "rejected") {
		t.Fatalf("want frame 4, the NAK, rejected:\n%s", s)
	}
	if !s.colored(y, "rejected", tcell.ColorRed) {
		t.Errorf("the rejected NAK is not red:\n%s", s.lines[y])
	}
	if y := mptLine(s, 3); y < 0 || !strings.Contains(s.lines[y], " ok ") {
		t.Errorf("frame 3 is allowed by this MPT:\n%s", s)
	}
}

// TestMPTViewWithoutMPT: without --mpt nothing is checked, and the view
// says how to get checks; likewise without a tracker at all.
func TestMPTViewWithoutMPT(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		before func(*App)
	}{
		{"no MPT", nil},
		{"no tracker", func(a *App) { a.o.NewTracker = nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rh := rvStart(t, "read_atomic.pcap", "", 120, 30, c.before)
			rh.press('M')
			rh.waitText(noMPT, "MPT checks: 0 rows (")
		})
	}
}
