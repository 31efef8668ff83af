package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
)

// screen is one copy of the simulation screen's cells.
type screen struct {
	cells []tcell.SimCell
	w, h  int
	lines []string
}

func (s *screen) String() string { return strings.Join(s.lines, "\n") }

// at returns the cell at x, y.
func (s *screen) at(x, y int) tcell.SimCell { return s.cells[y*s.w+x] }

// find returns the first line containing text, or -1.
func (s *screen) find(text string) int {
	for i, l := range s.lines {
		if strings.Contains(l, text) {
			return i
		}
	}
	return -1
}

// box returns the rows inside the bordered box whose title is title: from
// the row under its top border to the row above its bottom border, and
// the columns inside the side borders.
func (s *screen) box(title string) (top, bottom, left, right int, ok bool) {
	for y, l := range s.lines {
		i := strings.Index(l, title)
		if i < 0 || !strings.ContainsAny(l, "┌╔") {
			continue
		}
		runes := []rune(l)
		x := len([]rune(l[:i]))
		for left = x; left > 0 && runes[left] != '┌' && runes[left] != '╔'; left-- {
		}
		for right = x; right < len(runes)-1 && runes[right] != '┐' && runes[right] != '╗'; right++ {
		}
		for bottom = y + 1; bottom < s.h && !strings.ContainsRune("└╚", s.at(left, bottom).Runes[0]); bottom++ {
		}
		return y + 1, bottom - 1, left + 1, right - 1, true
	}
	return 0, 0, 0, 0, false
}

// boxLines returns the text inside the box titled title, one line a row.
func (s *screen) boxLines(title string) []string {
	top, bottom, left, right, ok := s.box(title)
	if !ok {
		return nil
	}
	var out []string
	for y := top; y <= bottom; y++ {
		out = append(out, string([]rune(s.lines[y])[left:right+1]))
	}
	return out
}

// harness runs an App on a simulation screen.
type harness struct {
	t    *testing.T
	sim  tcell.SimulationScreen
	app  *App
	ix   *Index
	done chan error // Run's result
	last *screen
}

const simW, simH = 140, 40

// startApp indexes path (synchronously, with a tracker), builds the App
// with the standard views on a 140x40 simulation screen and runs it.
func startApp(t *testing.T, path string, configure ...func(*Options)) *harness {
	t.Helper()
	return startAppIndex(t, buildIndex(t, path), configure...)
}

func startAppIndex(t *testing.T, ix *Index, configure ...func(*Options)) *harness {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	o := Options{Index: ix, NewTracker: newTracker, Screen: sim}
	for _, c := range configure {
		c(&o)
	}
	app := New(o)
	AddStandardViews(app)
	sim.SetSize(simW, simH) // after New: SetScreen initializes the screen again (80x25)
	h := &harness{t: t, sim: sim, app: app, ix: ix, done: make(chan error, 1)}
	go func() { h.done <- app.Run() }()
	t.Cleanup(func() {
		app.Stop()
		select {
		case <-h.done:
		case <-time.After(waitLimit):
			t.Errorf("Run did not return %v after Stop", waitLimit)
		}
	})
	// What Build's last Notify does in rocetap tui.
	h.app.Refresh()
	return h
}

// snapshot copies the screen on the UI goroutine (draws happen there).
func (h *harness) snapshot() *screen {
	h.t.Helper()
	ch := make(chan *screen, 1)
	grab := func() {
		cells, w, ht := h.sim.GetContents()
		s := &screen{cells: make([]tcell.SimCell, len(cells)), w: w, h: ht}
		for i, c := range cells {
			s.cells[i] = tcell.SimCell{Style: c.Style, Runes: append([]rune(nil), c.Runes...)}
		}
		for y := range ht {
			var b strings.Builder
			for x := range w {
				r := s.cells[y*w+x].Runes
				if len(r) == 0 || r[0] == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteRune(r[0])
				}
			}
			s.lines = append(s.lines, b.String())
		}
		ch <- s
	}
	go h.app.Application().QueueUpdate(grab)
	select {
	case s := <-ch:
		h.last = s
		return s
	case err := <-h.done:
		h.done <- err
		grab() // the UI goroutine is gone: nothing draws any more
		h.last = <-ch
		return h.last
	case <-time.After(waitLimit):
		h.t.Fatalf("the UI did not run an update for %v: deadlocked? Its goroutines:\n%s", waitLimit, uiStacks())
	}
	return nil
}

// uiStacks returns the stacks of the goroutines in package tui's code.
func uiStacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "rocetap/tui.(*App)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// waitFor polls the screen until ok holds, for up to waitLimit.
func (h *harness) waitFor(what string, ok func(s *screen) bool) *screen {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s := h.snapshot()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s; the screen shows:\n%s", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitText waits until every text appears on the screen.
func (h *harness) waitText(texts ...string) *screen {
	h.t.Helper()
	return h.waitFor(fmt.Sprintf("%q", texts), func(s *screen) bool {
		for _, t := range texts {
			if s.find(t) < 0 {
				return false
			}
		}
		return true
	})
}

// settle waits until a selection's late work is on the screen: the full
// analysis of the selected packet is tracked after a pause (so that
// scrolling stays fast), then the detail tree is built again.
func (h *harness) settle() *screen {
	h.t.Helper()
	time.Sleep(250 * time.Millisecond)
	prev := h.snapshot()
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		s := h.snapshot()
		if s.String() == prev.String() {
			return s
		}
		prev = s
	}
	h.t.Fatalf("the screen keeps changing:\n%s", prev)
	return nil
}

func (h *harness) key(k tcell.Key) { h.sim.InjectKey(k, 0, tcell.ModNone) }

func (h *harness) keys(ks ...tcell.Key) {
	for _, k := range ks {
		h.key(k)
	}
}

func (h *harness) typ(s string) {
	for _, r := range s {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

// listRows returns the packet list's rows under its header.
func listRows(s *screen) []string {
	ls := s.boxLines(" Packets ")
	if len(ls) == 0 {
		return nil
	}
	var out []string
	for _, l := range ls[1:] {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// rowNumbers returns the frame numbers of the list's rows.
func rowNumbers(s *screen) []int {
	var out []int
	for _, l := range listRows(s) {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		out = append(out, n)
	}
	return out
}

// statusLine is the bottom line.
func statusLine(s *screen) string { return s.lines[s.h-1] }

// filterLine is the filter bar, above the status line.
func filterLine(s *screen) string { return s.lines[s.h-2] }

// wantRow renders packet pi as the list should show it.
func wantRow(t *testing.T, ix *Index, pi int) row {
	t.Helper()
	var p decode.Packet
	if _, err := ix.Decode(pi, &p, nil); err != nil {
		t.Fatal(err)
	}
	e, _ := ix.Entry(pi)
	var rb rowBuf
	return rowOf(&p, e, nil, printer.TimeRelative, &rb)
}

// fullLines returns the detail tree lines of packet pi as `rocetap
// decode -V` shows them: with the analysis of a tracker that saw every
// packet up to it. It also returns the packet's bytes.
func fullLines(t *testing.T, ix *Index, pi int) ([]printer.Line, []byte) {
	t.Helper()
	tr := newTracker(nil)
	var p decode.Packet
	var data []byte
	for i := 0; i <= pi; i++ {
		var err error
		if data, err = ix.Decode(i, &p, data); err != nil {
			t.Fatal(err)
		}
		tr.Track(&p)
	}
	return printer.Lines(&p, nil), data
}

// TestAppList: the list shows a row per packet with its number, time,
// addresses, protocol, length, QP, PSN and info; j, k, G, gg, n and N move
// the selection, and the details follow it.
func TestAppList(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	s := h.waitText("Frame 1: 322 bytes on wire, 322 bytes captured")
	header := s.boxLines(" Packets ")[0]
	for _, col := range []string{"No.", "Time", "Source", "Destination", "Protocol", "Length", "QP", "PSN", "Info"} {
		if !strings.Contains(header, col) {
			t.Errorf("header %q has no column %s", header, col)
		}
	}
	rows := listRows(s)
	if len(rows) < 12 {
		t.Fatalf("%d rows shown:\n%s", len(rows), s)
	}
	// Two rows spelled out, the rest as rowOf renders them.
	for _, c := range []struct {
		row  int
		want []string
	}{
		{0, []string{"  1 ", "0.000000", "10.77.0.1 10.77.0.2", "IB CM", " 322 ", "0x000001", "CM: ConnectRequest"}},
		{3, []string{"  4 ", "0.017471", "10.77.0.1 10.77.0.2", "RoCEv2", " 74 ", "0x000025", "16726364", "RC Send Only"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(rows[c.row], w) {
				t.Errorf("row %d %q lacks %q", c.row+1, rows[c.row], w)
			}
		}
	}
	for i, l := range rows {
		r := wantRow(t, h.ix, i)
		for col, text := range r.cells {
			if col == len(r.cells)-1 {
				text = text[:min(len(text), 40)] // the info column is cut at the edge
			}
			if !strings.Contains(l, text) {
				t.Errorf("row %d %q lacks column %s %q", i+1, l, columns[col], text)
			}
		}
	}
	if st := statusLine(s); !strings.Contains(st, "cm_rping.pcap  packets: 29") || strings.Contains(st, "indexing") {
		t.Errorf("status line %q", st)
	}

	h.typ("j")
	h.waitText("Frame 2: 322 bytes on wire")
	h.typ("jj")
	h.waitText("Frame 4: 74 bytes on wire")
	h.typ("k")
	h.waitText("Frame 3: 322 bytes on wire")
	h.typ("G")
	s = h.waitText("Frame 29:")
	if n := rowNumbers(s); len(n) == 0 || n[len(n)-1] != 29 {
		t.Errorf("after G the list shows rows %v, want it to end with 29", n)
	}
	h.typ("gg")
	s = h.waitText("Frame 1: 322 bytes")
	if n := rowNumbers(s); len(n) == 0 || n[0] != 1 {
		t.Errorf("after gg the list shows rows %v, want it to start with 1", n)
	}

	// n and N: the next and previous packet of the same session.
	e4, _ := h.ix.Entry(3)
	next, prev := -1, -1
	for i := 4; i < h.ix.Len() && next < 0; i++ {
		if e, _ := h.ix.Entry(i); e.Session == e4.Session {
			next = i
		}
	}
	if next < 0 || e4.Session == 0 {
		t.Fatalf("packet 4 has session %d and no next packet in it", e4.Session)
	}
	for i := next - 1; i >= 0 && prev < 0; i-- {
		if e, _ := h.ix.Entry(i); e.Session == e4.Session {
			prev = i
		}
	}
	h.typ(":4")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 4: 74 bytes")
	h.typ("n")
	h.waitText(fmt.Sprintf("Frame %d:", next+1))
	h.typ("N")
	h.waitText(fmt.Sprintf("Frame %d:", prev+1))
}

// TestAppGoTo: ':' asks for a packet number and selects it; a number out
// of range says which numbers there are.
func TestAppGoTo(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ(":")
	h.waitText("Go to packet:")
	h.typ("27")
	h.key(tcell.KeyEnter)
	s := h.waitText("Frame 27:")
	if !slices.Contains(rowNumbers(s), 27) {
		t.Errorf("packet 27 is selected but not shown: rows %v", rowNumbers(s))
	}
	h.typ(":999")
	h.key(tcell.KeyEnter)
	h.waitText(`no packet "999": the capture has packets 1 to 29`)
	h.typ(":")
	h.waitText("Go to packet:")
	h.key(tcell.KeyEscape)
	s = h.waitFor("the prompt to close", func(s *screen) bool { return s.find("Go to packet:") < 0 })
	if s.find("Frame 27:") < 0 {
		t.Errorf("Escape in the prompt changed the selection:\n%s", s)
	}
}

// TestAppDetailTree: the detail tree shows the selected packet's lines as
// the printer makes them, under a "Frame N" root.
func TestAppDetailTree(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ(":4")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 4: 74 bytes on wire, 74 bytes captured")
	s := h.settle()
	lines, _ := fullLines(t, h.ix, 3)
	shown := s.boxLines(" Details ")
	if len(shown) < 5 || !strings.HasPrefix(shown[0], "Frame 4: 74 bytes on wire, 74 bytes captured") {
		t.Fatalf("details:\n%s", strings.Join(shown, "\n"))
	}
	for i, l := range shown[1:] {
		if !strings.Contains(l, lines[i].Text) {
			t.Errorf("details line %d %q, want %q", i+1, l, lines[i].Text)
		}
	}
	// Walk the whole tree: every line comes into view in order.
	h.key(tcell.KeyTab)
	h.waitFor("the details pane to take the focus", func(s *screen) bool {
		top, _, left, _, ok := s.box(" Details ")
		return ok && s.at(left-1, top-1).Runes[0] == '╔'
	})
	for i, l := range lines {
		h.key(tcell.KeyDown)
		want := l.Text
		h.waitFor(fmt.Sprintf("details line %d %q selected", i+1, want), func(s *screen) bool {
			for _, sl := range s.boxLines(" Details ") {
				if strings.Contains(sl, want) {
					return true
				}
			}
			return false
		})
	}
}

// reversedHex returns the hex digits and ASCII characters drawn in reverse
// video in the bytes pane.
func reversedHex(s *screen) (hexDigits, ascii string) {
	top, bottom, left, _, ok := s.box(" Bytes ")
	if !ok {
		return "", ""
	}
	var hb, ab strings.Builder
	for y := top; y <= bottom; y++ {
		for x := left + 6; x < left+56+16 && x < s.w; x++ {
			c := s.at(x, y)
			if _, _, attr := c.Style.Decompose(); attr&tcell.AttrReverse == 0 || len(c.Runes) == 0 {
				continue
			}
			if x < left+6+49 {
				if c.Runes[0] != ' ' {
					hb.WriteRune(c.Runes[0])
				}
			} else if x >= left+56 {
				ab.WriteRune(c.Runes[0])
			}
		}
	}
	return hb.String(), ab.String()
}

// visibleBytes returns the bytes of data[off:off+n] on the lines the
// bytes pane shows.
func visibleBytes(s *screen, data []byte, off, n int) []byte {
	var out []byte
	for _, l := range s.boxLines(" Bytes ") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		line, err := strconv.ParseUint(f[0], 16, 32)
		if err != nil {
			continue
		}
		for i := int(line); i < int(line)+16 && i < len(data); i++ {
			if i >= off && i < off+n {
				out = append(out, data[i])
			}
		}
	}
	return out
}

// printable is the bytes pane's ASCII column for b.
func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '.'
		if c >= 0x20 && c < 0x7f {
			out[i] = c
		}
	}
	return string(out)
}

// TestAppHexHighlight: selecting a field in the tree (Tab, then the
// arrows) draws its bytes in reverse video in the bytes pane, in the hex
// and ASCII columns, and nothing else.
func TestAppHexHighlight(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ(":7")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 7: 126 bytes on wire")
	s := h.settle()
	if hx, as := reversedHex(s); hx != "" || as != "" {
		t.Errorf("bytes highlighted before a field is selected: %q %q", hx, as)
	}
	lines, data := fullLines(t, h.ix, 6)
	h.key(tcell.KeyTab)
	cur := -1 // the tree's current line: the root
	for _, abbrev := range []string{"infiniband.bth.psn", "eth.src", "infiniband.bth.opcode", "infiniband.aeth", "infiniband.payload"} {
		k := slices.IndexFunc(lines, func(l printer.Line) bool { return l.Field != nil && l.Field.Abbrev == abbrev })
		if k < 0 {
			t.Fatalf("packet 7 has no %s line", abbrev)
		}
		l := lines[k]
		if l.Off < 0 || l.Len <= 0 {
			t.Fatalf("%s: no byte range (%d+%d)", abbrev, l.Off, l.Len)
		}
		for ; cur < k; cur++ {
			h.key(tcell.KeyDown)
		}
		for ; cur > k; cur-- {
			h.key(tcell.KeyUp)
		}
		s = h.waitFor(fmt.Sprintf("%s (bytes %d+%d) highlighted", abbrev, l.Off, l.Len), func(s *screen) bool {
			hx, _ := reversedHex(s)
			return hx != "" && hx == fmt.Sprintf("%x", visibleBytes(s, data, l.Off, l.Len))
		})
		want := visibleBytes(s, data, l.Off, l.Len)
		if _, as := reversedHex(s); as != printable(want) {
			t.Errorf("%s: ASCII column highlights %q, want %q", abbrev, as, printable(want))
		}
		if !strings.Contains(strings.Join(s.boxLines(" Bytes "), "\n"), fmt.Sprintf("%04x  ", l.Off&^15)) {
			t.Errorf("%s: the line of byte %d is not shown:\n%s", abbrev, l.Off, strings.Join(s.boxLines(" Bytes "), "\n"))
		}
	}
}

// TestAppFilterBar: '/' opens the filter bar; an invalid filter turns the
// field red and the status line says why; a valid one turns it green, and
// Enter shows only the matching packets and their count; the arrows walk
// the history; Escape leaves the bar with the applied filter; an empty
// filter shows every packet again.
func TestAppFilterBar(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	const bad = "infiniband.bth.opcode =="
	_, cerr := filter.Compile(bad)
	if cerr == nil {
		t.Fatal("the invalid filter compiles")
	}
	why := strings.TrimPrefix(strings.SplitN(cerr.Error(), "\n", 2)[0], "filter: ")
	h.typ("/" + bad)
	s := h.waitFor("the filter error in the status line", func(s *screen) bool {
		return strings.Contains(statusLine(s), "filter: ") && strings.Contains(statusLine(s), why[:40])
	})
	if st := statusLine(s); strings.Contains(st, "filter: filter:") || strings.Contains(st, `\x0a`) {
		t.Errorf("status line %q: want the error once, on one line", st)
	}
	fieldX := len("Filter: ") + len(bad) + 2 // a blank cell of the field
	if _, bg, _ := s.at(fieldX, s.h-2).Style.Decompose(); !isRed(bg) {
		t.Errorf("invalid filter: field background %v, want red", bg)
	}
	// Enter does not apply an invalid filter.
	h.key(tcell.KeyEnter)
	s = h.snapshot()
	if strings.Contains(statusLine(s), "shown:") || len(rowNumbers(s)) < 12 {
		t.Errorf("an invalid filter was applied:\n%s", s)
	}

	const good = "infiniband.bth.opcode == 17"
	want := matching(t, h.ix, good)
	if len(want) == 0 || len(want) == h.ix.Len() {
		t.Fatalf("%s selects %d of %d packets: pick another", good, len(want), h.ix.Len())
	}
	h.key(tcell.KeyCtrlU)
	h.typ(good)
	s = h.waitFor("the filter error to go", func(s *screen) bool {
		return strings.Contains(filterLine(s), good) && !strings.Contains(statusLine(s), "filter:")
	})
	if _, bg, _ := s.at(fieldX+10, s.h-2).Style.Decompose(); isRed(bg) || bg == tcell.ColorDefault {
		t.Errorf("valid filter: field background %v, want green", bg)
	}
	h.key(tcell.KeyEnter)
	s = h.waitText(fmt.Sprintf("shown: %d", len(want)))
	if got := rowNumbers(s); !slices.Equal(got, want[:min(len(want), len(got))]) || len(got) != min(len(want), 16) {
		t.Errorf("filter %s shows rows %v, want %v", good, got, want)
	}
	for _, l := range listRows(s) {
		if !strings.Contains(l, "Acknowledge") {
			t.Errorf("row %q is not an Acknowledge", l)
		}
	}
	if !strings.Contains(s.find2("Frame "), fmt.Sprintf("Frame %d:", want[0])) {
		t.Errorf("the details do not show the first shown packet %d:\n%s", want[0], s)
	}

	// Escape puts the applied filter back and leaves the bar.
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.typ("frame.number == 9")
	h.waitFor("the text typed", func(s *screen) bool { return strings.Contains(filterLine(s), "frame.number == 9") })
	h.key(tcell.KeyEscape)
	h.waitFor("the applied filter back in the bar", func(s *screen) bool { return strings.Contains(filterLine(s), good) })
	s = h.snapshot()
	if strings.Contains(s.String(), "frame.number") {
		t.Errorf("Escape left the typed text:\n%s", s)
	}
	h.typ("j") // the list has the keys again
	h.waitText(fmt.Sprintf("Frame %d:", want[1]))

	// An empty filter shows everything.
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.key(tcell.KeyEnter)
	s = h.waitFor("every packet again", func(s *screen) bool { return !strings.Contains(statusLine(s), "shown:") })
	if len(rowNumbers(s)) < 12 {
		t.Errorf("with no filter, rows %v", rowNumbers(s))
	}
	// A filter nothing matches says so in the details.
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.typ("frame.number > 1000")
	h.key(tcell.KeyEnter)
	s = h.waitText("shown: 0", "no packet matches the filter")
	if n := rowNumbers(s); len(n) != 0 {
		t.Errorf("no packet matches, yet rows %v are shown", n)
	}
}

// TestAppFilterNoMatchStays: a filter that shows no packet, applied while
// the selected packet's full detail tree is still on its way (analyze
// waits 100 ms, then tracks up to it), keeps saying so: the tree that
// arrives after it is not shown (it did show, now and then, under load).
func TestAppFilterNoMatchStays(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	for _, k := range "jjj" { // each selection asks for its full tree
		h.typ(string(k))
	}
	h.waitText("Frame 4:")
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.typ("frame.number > 1000")
	h.key(tcell.KeyEnter)
	h.waitText("shown: 0", "no packet matches the filter")
	// every detail tree asked for is dropped or queued for the UI
	// goroutine, before the snapshot queued after it
	h.waitFor("the detail trees asked for", func(*screen) bool { return h.app.det.pending.Load() == 0 })
	if s := h.snapshot(); !strings.Contains(s.String(), "no packet matches the filter") {
		t.Errorf("the selected packet's tree replaced \"no packet matches the filter\":\n%s", s)
	}
}

// TestAppFilterHistory: in the filter bar, ↑ and ↓ walk the filters
// applied before, newest first, down to an empty bar.
func TestAppFilterHistory(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	const good = "infiniband.bth.opcode == 17"
	h.typ("/" + good)
	h.key(tcell.KeyEnter)
	h.waitText("shown: ")
	// A second filter, then the history: ↑ gives it, ↑ again the first.
	const second = "frame.number <= 3"
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.typ(second)
	h.key(tcell.KeyEnter)
	s := h.waitText("shown: 3")
	if got := rowNumbers(s); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("filter %s shows rows %v", second, got)
	}
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.key(tcell.KeyUp)
	h.waitFor("the last filter from the history", func(s *screen) bool { return strings.Contains(filterLine(s), second) })
	h.key(tcell.KeyUp)
	h.waitFor("the first filter from the history", func(s *screen) bool { return strings.Contains(filterLine(s), good) })
	h.key(tcell.KeyDown)
	h.waitFor("the last filter again", func(s *screen) bool { return strings.Contains(filterLine(s), second) })
	h.key(tcell.KeyDown)
	h.waitFor("an empty bar past the newest", func(s *screen) bool { return strings.TrimSpace(filterLine(s)) == "Filter:" })
	h.key(tcell.KeyEscape)
	h.waitFor("the applied filter back in the bar", func(s *screen) bool { return strings.Contains(filterLine(s), second) })
}

// find2 returns the first line containing text, or "".
func (s *screen) find2(text string) string {
	if i := s.find(text); i >= 0 {
		return s.lines[i]
	}
	return ""
}

func isRed(c tcell.Color) bool {
	return c == tcell.ColorMaroon || c == tcell.ColorRed || c == tcell.ColorDarkRed
}

// matching returns the frame numbers expr selects, with a tracker (as
// the CLI's decode -Y runs a stateful filter).
func matching(t *testing.T, ix *Index, expr string) []int {
	t.Helper()
	flt, err := filter.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracker(nil)
	var out []int
	var p decode.Packet
	for i := range ix.Len() {
		if _, err := ix.Decode(i, &p, nil); err != nil {
			t.Fatal(err)
		}
		tr.Track(&p)
		if flt.Match(&p) {
			out = append(out, i+1)
		}
	}
	return out
}

// TestAppSessions: 's' lists the tracker's sessions; Enter on one filters
// the list to its packets.
func TestAppSessions(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ("s")
	s := h.waitText(" Sessions ", "Paired by")
	var ids []uint32
	h.ix.WithTracker(func(tr *flow.Tracker, _ *flow.ExpertLog) {
		for _, ss := range tr.Sessions() {
			ids = append(ids, ss.ID)
			for _, ep := range []string{ss.A.String(), ss.B.String()} { // as rocetap sessions prints them
				if s.find(ep) < 0 {
					t.Errorf("session %d: %s not shown", ss.ID, ep)
				}
			}
		}
	})
	if len(ids) != 3 {
		t.Fatalf("%d sessions, want 3", len(ids))
	}
	// The third session is the RC one.
	h.keys(tcell.KeyDown, tcell.KeyDown)
	h.key(tcell.KeyEnter)
	expr := fmt.Sprintf("rocetap.session.id == %d", ids[2])
	want := matching(t, h.ix, expr)
	s = h.waitText(fmt.Sprintf("shown: %d", len(want)), " Packets ")
	if !strings.Contains(filterLine(s), expr) {
		t.Errorf("filter bar %q, want %q", filterLine(s), expr)
	}
	if got := rowNumbers(s); len(got) == 0 || !slices.Equal(got, want[:len(got)]) {
		t.Errorf("session %d: rows %v, want %v", ids[2], got, want)
	}
	// Escape from the view goes back to the list unchanged.
	h.typ("s")
	h.waitText(" Sessions ")
	h.key(tcell.KeyEscape)
	h.waitText(" Packets ", fmt.Sprintf("shown: %d", len(want)))
}

// TestAppExpert: 'e' lists the expert events, errors first; Enter goes to
// the event's frame, showing every packet if the filter hid it.
func TestAppExpert(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/err_psn_seq.pcap")
	h.waitText("Frame 1:")
	var frames []int // by row: a group's heading (its first event's frame), then its events
	h.ix.WithTracker(func(_ *flow.Tracker, l *flow.ExpertLog) {
		for _, g := range l.Groups() {
			frames = append(frames, g.Events[0].Frame)
			for _, e := range g.Events {
				frames = append(frames, e.Frame)
			}
		}
	})
	if len(frames) < 3 {
		t.Fatalf("expert events in frames %v, want at least 3", frames)
	}
	// Hide the frames first: going to one clears the filter.
	h.typ("/frame.number == 1")
	h.key(tcell.KeyEnter)
	h.waitText("shown: 1")
	h.typ("e")
	s := h.waitText(" Expert information ", "NAK PSN Sequence Error", "Retransmission of PSN 6144")
	var ls []string // the header and the groups' headings, as the CLI groups them
	for i, l := range s.boxLines(" Expert information ") {
		if f := strings.Fields(l); i == 0 || len(f) > 0 && (f[0] == "error" || f[0] == "warning" || f[0] == "note") {
			ls = append(ls, l)
		}
	}
	if len(ls) < 4 || !strings.Contains(ls[1], "error") || !strings.Contains(ls[len(ls)-1], "warning") {
		t.Errorf("want the errors first, then the warnings:\n%s", strings.Join(ls, "\n"))
	}
	for i := 2; i < len(ls); i++ {
		if strings.Contains(ls[i], "error") && strings.Contains(ls[i-1], "warning") {
			t.Errorf("an error after a warning:\n%s", strings.Join(ls, "\n"))
		}
	}
	// the second event with a frame (events at the end of the capture
	// have none)
	n := 1
	for frames[n] == 0 {
		n++
	}
	for range n {
		h.key(tcell.KeyDown)
	}
	h.key(tcell.KeyEnter)
	s = h.waitText(fmt.Sprintf("Frame %d:", frames[n]), " Packets ")
	if strings.Contains(statusLine(s), "shown:") || strings.TrimSpace(filterLine(s)) != "Filter:" {
		t.Errorf("going to a hidden frame left the filter on:\n%s", s)
	}
	h.typ("e")
	h.waitText(" Expert information ")
	h.key(tcell.KeyEnter) // the first row again? no: the table keeps its selection
	h.waitText(fmt.Sprintf("Frame %d:", frames[n]))
}

// TestAppHelp: '?' lists every key of the table with its help.
func TestAppHelp(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ("?")
	s := h.waitText(" Help ", "rocetap tui keys")
	for _, k := range Keys {
		help := k.Help[:min(len(k.Help), 40)]
		if s.find(k.Name) < 0 || s.find(help) < 0 {
			t.Errorf("help lacks %s %q:\n%s", k.Name, help, s)
		}
	}
	for _, k := range []string{"Tab", "Esc", "Ctrl-C"} {
		if s.find(k) < 0 {
			t.Errorf("help lacks %s", k)
		}
	}
	h.key(tcell.KeyEscape)
	h.waitFor("the help to close", func(s *screen) bool { return s.find(" Help ") < 0 })
	h.typ("j") // the list has the focus again
	h.waitText("Frame 2:")
}

// TestAppQuit: 'q' ends Run, as does Ctrl-C; neither while typing a filter.
func TestAppQuit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		key  func(h *harness)
	}{
		{"q", func(h *harness) { h.typ("q") }},
		{"ctrl-c", func(h *harness) { h.key(tcell.KeyCtrlC) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := startApp(t, td+"rxe/cm_rping.pcap")
			h.waitText("Frame 1:")
			h.typ("/q")
			h.waitFor("q in the filter bar", func(s *screen) bool { return strings.Contains(filterLine(s), "Filter: q") })
			select {
			case err := <-h.done:
				t.Fatalf("typing q in the filter bar quit (%v)", err)
			case <-time.After(50 * time.Millisecond):
			}
			h.key(tcell.KeyEscape)
			c.key(h)
			select {
			case err := <-h.done:
				h.done <- err
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("Run still running 5 s after quitting")
			}
		})
	}
}

// TestAppStartFilter: Options.Filter (-Y) is applied at the start.
func TestAppStartFilter(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap", func(o *Options) { o.Filter = "infiniband.bth.opcode == 4" })
	want := matching(t, h.ix, "infiniband.bth.opcode == 4")
	s := h.waitText(fmt.Sprintf("shown: %d", len(want)))
	if got := rowNumbers(s); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if !strings.Contains(filterLine(s), "infiniband.bth.opcode == 4") {
		t.Errorf("filter bar %q", filterLine(s))
	}
}

// TestAppStatus: Options.Status adds to the status line.
func TestAppStatus(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap", func(o *Options) { o.Status = func() string { return "live eth9: 7 packets" } })
	h.waitText("live eth9: 7 packets")
}

// TestAppOpensAtTheTop: a capture indexed while the UI runs (as rocetap
// tui does) opens on its first packet: the list shows packet 1 at the
// top, selected, and does not follow the end as the index grows.
func TestAppOpensAtTheTop(t *testing.T) {
	t.Parallel()
	const n = 200000
	ix, err := OpenIndex(benchCapture(t, n))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	h := startAppIndex(t, ix)
	built := make(chan struct{})
	go func() {
		ix.Build(BuildOptions{NewTracker: newTracker, Notify: h.app.Refresh, Every: 10 * time.Millisecond})
		close(built)
	}()
	<-built
	s := h.waitFor("the whole capture indexed", func(s *screen) bool {
		return strings.Contains(statusLine(s), fmt.Sprintf("packets: %d ", n)) && !strings.Contains(statusLine(s), "indexing")
	})
	if got := rowNumbers(s); len(got) == 0 || got[0] != 1 || s.find("Frame 1:") < 0 {
		t.Errorf("after indexing %d packets the list shows rows %v..., want packet 1 at the top, selected:\n%s", n, got[:min(len(got), 3)], s)
	}
}

// TestKeysInViews (issue 17, bugs 3, 5 and 12): q closes the help and the
// views instead of quitting; / from a view shows the filter bar; G in a
// view moves the view, not the hidden packet list; Esc in the details
// returns to the list; q in the list asks before losing marks.
func TestKeysInViews(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	running := func() {
		t.Helper()
		select {
		case err := <-h.done:
			h.done <- err
			t.Fatalf("the UI quit (%v); the screen shows:\n%s", err, h.last)
		default:
		}
	}
	h.typ("?")
	h.waitText(" Help ")
	h.typ("q")
	h.waitFor("the help closed", func(s *screen) bool { return s.find(" Help ") < 0 && s.find(" Packets ") >= 0 })
	running()

	h.typ("s")
	h.waitText(" Sessions ")
	h.typ("G") // the sessions table's end, not the packet list's
	h.typ("q")
	h.waitFor("the sessions view closed", func(s *screen) bool { return s.find(" Sessions ") < 0 && s.find(" Packets ") >= 0 })
	running()
	h.waitText("Frame 1:") // G did not move the list

	h.typ("e")
	h.waitText(" Expert information ")
	h.typ("/")
	h.typ("frame.number == 3")
	h.key(tcell.KeyEnter)
	h.waitText("shown: 1", "Frame 3:")
	running()

	h.typ("/")
	h.key(tcell.KeyCtrlU) // clear the bar
	h.key(tcell.KeyEnter)
	h.waitText("Frame 3:")
	h.key(tcell.KeyTab) // the details
	h.key(tcell.KeyEscape)
	h.typ("j") // the list has the focus again
	h.waitText("Frame 4:")

	h.typ("m")
	h.typ("q")
	h.waitText("Quit? 1 mark is lost. (y/N)")
	h.typ("n")
	h.key(tcell.KeyEnter)
	h.waitFor("the question closed", func(s *screen) bool { return s.find("Quit?") < 0 })
	running()
	h.typ("q")
	h.waitText("Quit?")
	h.typ("y")
	h.key(tcell.KeyEnter)
	select {
	case err := <-h.done:
		h.done <- err
	case <-time.After(waitLimit):
		t.Fatal("y did not quit")
	}
}

// TestStatusAt80Columns (issue 17.11): at 80×24 the status line shows the
// file's name, not its path, and a filter error first, where it is not
// cut off.
func TestStatusAt80Columns(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a-rather-long-directory-name", "and-another-one-below-it")
	os.MkdirAll(dir, 0o755)
	capf := filepath.Join(dir, "cm_rping.pcap")
	b, _ := os.ReadFile(td + "rxe/cm_rping.pcap")
	os.WriteFile(capf, b, 0o644)
	h := startApp(t, capf)
	h.sim.SetSize(80, 24)
	h.app.Application().QueueUpdateDraw(func() {})
	h.waitText("Frame 1:")
	h.typ("/")
	h.typ("infiniband.bth.opcode ==")
	s := h.waitText("filter: ", "value was expected")
	last := s.lines[len(s.lines)-1]
	if !strings.HasPrefix(strings.TrimSpace(last), "filter: ") || !strings.Contains(last, "value") {
		t.Errorf("status line %q: want the filter error first", last)
	}
	if strings.Contains(s.String(), "a-rather-long-directory-name") {
		t.Errorf("the status line shows the path:\n%s", s)
	}
}

// TestFilterSuggestions (issue 17.4): with the suggestions open, ↓ moves
// in them (it used to wipe the text with the history), any suggestion
// can be taken, and one Enter takes it and applies the filter; with the
// list closed, ↑ walks the history.
func TestFilterSuggestions(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/err_psn_seq.pcap")
	h.waitText("Frame 1:")
	h.typ("/")
	h.typ("infiniband.aeth.")
	h.waitText("infiniband.aeth.syndrome.credit_count") // the list is open
	for range 7 {                                       // the last suggestion: infiniband.aeth.msn
		h.key(tcell.KeyDown)
	}
	h.key(tcell.KeyEnter)
	s := h.waitText("Filter: infiniband.aeth.msn ", "shown: 1")
	if s.find("infiniband.aeth.syndrome.credit_count") >= 0 {
		t.Errorf("the suggestions stay open after Enter:\n%s", s)
	}
	h.typ("/")
	h.key(tcell.KeyCtrlU)
	h.waitFor("an empty bar", func(s *screen) bool { return s.find("Filter: infiniband") < 0 })
	h.key(tcell.KeyUp) // the history: the filter just applied
	h.waitText("Filter: infiniband.aeth.msn ")
}

// TestERFLength (issue 17.10): an ERF record's row and tree root show the
// frame's wire length, as decode and tshark do, not the record's.
func TestERFLength(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"synth/erf_ib_eth.pcap")
	s := h.waitText("Frame 1: 86 bytes on wire")
	rows := listRows(s)
	if len(rows) == 0 || !regexp.MustCompile(`\s86\s`).MatchString(rows[0]) || strings.Contains(rows[0], " 102 ") {
		t.Errorf("row 1 %q: want length 86 (decode's frame.len), not the record's 102", rows[0])
	}
}

// TestGoToHiddenPacket (issue 17.9): : to a packet the filter hides
// clears the filter and says so; no "filtering…" stays behind.
func TestGoToHiddenPacket(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ("/")
	h.typ("frame.number == 2")
	h.key(tcell.KeyEnter)
	h.waitText("shown: 1", "Frame 2:")
	h.typ(":")
	h.typ("7")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 7:", `packet 7 is not shown by the filter "frame.number == 2": the filter is cleared`)
	s := h.settle()
	if s.find("filtering") >= 0 || s.find("shown:") >= 0 {
		t.Errorf("after the go-to:\n%s", s)
	}
}

// TestViewsShowTheCLI (issue 17.8): the sessions view has the columns
// and cells of `rocetap sessions` (IPv4 as the CLI prints it, not
// ::ffff:, a UD MTU as ?); the expert view groups as `rocetap expert`.
func TestViewsShowTheCLI(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/pt_ud.pcap")
	h.waitText("Frame 1:")
	h.typ("s")
	s := h.waitText(" Sessions ")
	box := strings.Join(s.boxLines(" Sessions "), "\n")
	var header []string // the table's, wider than the screen
	done := make(chan struct{})
	h.app.Application().QueueUpdate(func() {
		tb := h.app.views["sessions"].(*sessionsView).table
		for c := range tb.GetColumnCount() {
			header = append(header, tb.GetCell(0, c).Text)
		}
		close(done)
	})
	<-done
	if want := printer.SessionColumns(); !slices.Equal(header, want) {
		t.Errorf("the sessions view's columns %q, the CLI's %q", header, want)
	}
	if strings.Contains(box, "::ffff:") || !strings.Contains(box, "10.77.0.1/0x") {
		t.Errorf("addresses not as the CLI prints them:\n%s", box)
	}
	if !regexp.MustCompile(`UD .* \? `).MatchString(box) {
		t.Errorf("a UD session's unknown MTU is not ?:\n%s", box)
	}
}

// TestStatsViewShowsTheCLI (issue 17.8): the statistics view has what
// rocetap stats prints besides its bars: the congestion section (CNP, ECN,
// PFC) and the busiest sessions' message and latency tables.
func TestStatsViewShowsTheCLI(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/read_atomic.pcap")
	h.waitText("Frame 1:")
	h.typ("S")
	h.waitText("Congestion", "CNPs: 0, ECN-CE marked: 0", "message  count  bytes  completed   min  median    p99    max", "READ      4   4032          4")
}

// TestMouse (issue 17): a click on a row selects its packet; the wheel
// scrolls the list.
func TestMouse(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	s := h.waitText("Frame 1:")
	y := s.find("║  5 ")
	if y < 0 {
		t.Fatalf("no row 5:\n%s", s)
	}
	h.sim.InjectMouse(10, y, tcell.Button1, tcell.ModNone)
	h.sim.InjectMouse(10, y, tcell.ButtonNone, tcell.ModNone)
	h.waitText("Frame 5:")
}

// TestTreeKeys (issue 17): the detail tree opens and closes like
// Wireshark's (c closes every node, e opens them) and a link ("Response
// to the request in frame: 1") goes to its frame with Enter.
func TestTreeKeys(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/read_atomic.pcap")
	h.waitText("Frame 1:")
	h.typ("j")
	h.waitText("Frame 2:", "Frame Number: 2")
	h.key(tcell.KeyTab) // the tree
	h.typ("c")
	h.waitFor("the tree closed", func(s *screen) bool { return s.find("Frame Number: 2") < 0 && s.find("Frame 2:") >= 0 })
	h.typ("e")
	h.waitText("Frame Number: 2")
	h.settle() // the full analysis rebuilds the tree once
	done := make(chan struct{})
	h.app.Application().QueueUpdate(func() {
		h.app.tree.GetRoot().Walk(func(n, _ *tview.TreeNode) bool {
			if strings.Contains(n.GetText(), "Response to the request in frame: 1") {
				h.app.tree.SetCurrentNode(n)
				return false
			}
			return true
		})
		close(done)
	})
	<-done
	h.key(tcell.KeyEnter)
	h.waitText("Frame 1:")
}

// TestTreeClosedSurvivesAnalysis: the nodes closed before the background
// analysis ends stay closed when it rebuilds the tree with its lines (the
// rebuild once reopened them: TestTreeKeys failed in CI when c came first).
func TestTreeClosedSurvivesAnalysis(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/read_atomic.pcap")
	h.waitText("Frame 1:")
	h.typ("j")
	h.key(tcell.KeyTab) // the tree, at once: the analysis sleeps 100 ms first
	h.typ("c")
	s := h.settle()
	if s.find("Frame Number: 2") >= 0 || s.find("Frame 2:") < 0 {
		t.Fatalf("the closed tree reopened after the analysis:\n%s", s)
	}
	h.typ("e")
	h.waitText("Frame Number: 2")
}

// TestBytesToTree (issue 17): moving in the bytes pane selects the field
// that owns the byte, the smallest one, as Wireshark's bytes pane does.
func TestBytesToTree(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/read_atomic.pcap")
	h.waitText("Frame 1:")
	h.key(tcell.KeyTab)
	h.key(tcell.KeyTab)  // the bytes
	h.key(tcell.KeyDown) // byte 16
	for range 7 {        // byte 23: IPv4's protocol
		h.key(tcell.KeyRight)
	}
	current := func() string {
		ch := make(chan string, 1)
		h.app.Application().QueueUpdate(func() {
			n := h.app.tree.GetCurrentNode()
			if n == nil {
				ch <- ""
				return
			}
			ch <- n.GetText()
		})
		return <-ch
	}
	deadline := time.Now().Add(waitLimit)
	for !strings.HasPrefix(current(), "Protocol: UDP (17)") {
		if time.Now().After(deadline) {
			t.Fatalf("byte 23 selects %q, want the IPv4 protocol field", current())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStableWidths (issue 17): a column keeps the width of the widest
// cell it has shown, so scrolling does not make the columns jump.
func TestStableWidths(t *testing.T) {
	t.Parallel()
	ix := buildIndex(t, td+"rxe/cm_rping.pcap")
	c := newListContent(ix)
	wide := c.GetCell(1, 7).Text // row 1's PSN: 0 (a CM MAD)
	for r := 1; r <= ix.Len(); r++ {
		c.GetCell(r, 7)
	}
	if again := c.GetCell(1, 7).Text; len(again) <= len(wide) || strings.TrimSpace(again) != strings.TrimSpace(wide) {
		t.Errorf("row 1's PSN cell %q after the rows with long PSNs were shown, first %q: want it padded to their width", again, wide)
	}
}

// TestClickByte (issue 17): a click on a byte of the bytes pane selects
// the field that owns it.
func TestClickByte(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/read_atomic.pcap")
	s := h.waitText("Frame 1:", "0010  ")
	y := s.find("0010  ")
	x := utf8.RuneCountInString(s.lines[y][:strings.Index(s.lines[y], "0010  ")]) // bytes 16..31; byte 23 is the 8th
	h.sim.InjectMouse(x+6+7*3, y, tcell.Button1, tcell.ModNone)
	h.sim.InjectMouse(x+6+7*3, y, tcell.ButtonNone, tcell.ModNone)
	deadline := time.Now().Add(waitLimit)
	for {
		ch := make(chan string, 1)
		h.app.Application().QueueUpdate(func() {
			if n := h.app.tree.GetCurrentNode(); n != nil {
				ch <- n.GetText()
			} else {
				ch <- ""
			}
		})
		if got := <-ch; strings.HasPrefix(got, "Protocol: UDP (17)") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a click on byte 23 selects %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLimit is how long the tests wait for the UI before they fail: long
// enough for parallel tests under the race detector on a loaded 2-core
// machine; a test that passes waits only as long as the UI takes.
const waitLimit = 20 * time.Second
