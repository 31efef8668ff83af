package tui

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// The RDMA views' tests run the App on a simulation screen and read what
// it draws. Their helpers are prefixed rv (RDMA views) to keep clear of
// the other tests of the package.

// rvTrackers returns a NewTracker like rocetap tui's: with a model of
// the MPT file mptPath ("" for none).
func rvTrackers(t testing.TB, mptPath string) func(func(*flow.Event)) *flow.Tracker {
	t.Helper()
	if mptPath == "" {
		return func(on func(*flow.Event)) *flow.Tracker { return flow.New(flow.Options{OnEvent: on}) }
	}
	f, err := mpt.Load(mptPath)
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := hca.ProfileByName(f.Profile)
	if _, err := hca.NewModel(&f.Config, hca.Options{Profile: prof}); err != nil {
		t.Fatal(err)
	}
	return func(on func(*flow.Event)) *flow.Tracker {
		m, _ := hca.NewModel(&f.Config, hca.Options{Profile: prof})
		return flow.New(flow.Options{MPT: m, OnEvent: on})
	}
}

// rvNoDetails stops the App from tracking the capture again for the
// selected packet's detail tree (tools.go's detailer), which the ladder
// and stats views do not need: its goroutine holds its lock while it
// waits for QueueUpdateDraw, so a selection change on the UI goroutine
// at that moment deadlocks (reported). Call it before Run.
func rvNoDetails(a *App) { a.o.NewTracker = nil }

// rvHarness runs an App over a capture on a simulation screen.
type rvHarness struct {
	t          *testing.T
	sim        tcell.SimulationScreen
	app        *App
	ix         *Index
	newTracker func(func(*flow.Event)) *flow.Tracker
	done       chan error
}

// rvStart indexes testdata/rxe/name (synchronously, with a tracker; with
// the MPT mpt, in testdata/rxe unless absolute, when it is not ""), then
// runs the App with every view on a w×h screen; before, when set,
// adjusts it before Run.
func rvStart(t *testing.T, name, mpt string, w, h int, before func(*App)) *rvHarness {
	t.Helper()
	return rvStartIndex(t, name, mpt, w, h, true, before)
}

// rvStartIndex is rvStart, with a tracker for the index (sessions and
// findings in its entries) or without.
func rvStartIndex(t *testing.T, name, mpt string, w, h int, track bool, before func(*App)) *rvHarness {
	t.Helper()
	rh := rvNew(t, name, mpt, w, h)
	if track {
		rh.ix.Build(BuildOptions{NewTracker: rh.newTracker})
	} else {
		rh.ix.Build(BuildOptions{})
	}
	if before != nil {
		before(rh.app)
	}
	rh.run()
	rh.app.Refresh() // as the index's last Notify does
	return rh
}

// rvNew opens the index and makes the App, without indexing or running.
func rvNew(t *testing.T, name, mpt string, w, h int) *rvHarness {
	t.Helper()
	if mpt != "" && !filepath.IsAbs(mpt) {
		mpt = filepath.Join("..", "testdata", "rxe", mpt)
	}
	return rvNewTrackers(t, name, rvTrackers(t, mpt), w, h)
}

// rvNewTrackers is rvNew with the App's and the index's trackers made by
// newTracker.
func rvNewTrackers(t *testing.T, name string, newTracker func(func(*flow.Event)) *flow.Tracker, w, h int) *rvHarness {
	t.Helper()
	ix, err := OpenIndex(filepath.Join("..", "testdata", "rxe", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	a := New(Options{Index: ix, NewTracker: newTracker, Screen: sim})
	AddStandardViews(a)
	sim.SetSize(w, h) // after New, which initializes the screen again
	return &rvHarness{t: t, sim: sim, app: a, ix: ix, newTracker: newTracker, done: make(chan error, 1)}
}

// run runs the App until the test ends.
func (rh *rvHarness) run() {
	go func() { rh.done <- rh.app.Run() }()
	rh.t.Cleanup(func() {
		rh.app.Stop()
		select {
		case <-rh.done:
		case <-time.After(waitLimit):
			rh.t.Error("Run did not return 5 s after Stop")
		}
	})
}

// ui runs fn on the UI goroutine and waits for it.
func (rh *rvHarness) ui(fn func()) {
	rh.t.Helper()
	onUI(rh.t, rh.app, fn)
}

// onUI runs fn on app's UI goroutine and waits for it.
func onUI(t *testing.T, app *App, fn func()) {
	t.Helper()
	ch := make(chan struct{})
	go app.Application().QueueUpdate(func() { fn(); close(ch) })
	select {
	case <-ch:
	case <-time.After(waitLimit):
		buf := make([]byte, 1<<20)
		t.Fatalf("the UI did not run an update for 5 s; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// rvScreen is a copy of the screen: its lines and the cells' styles.
type rvScreen struct {
	lines  []string
	styles [][]tcell.Style
}

// String is the screen without its blank lines.
func (s *rvScreen) String() string {
	var out []string
	for _, l := range s.lines {
		if strings.Trim(l, "║│ ") != "" {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	return strings.Join(out, "\n")
}

// line returns the first line containing every text, or -1.
func (s *rvScreen) line(texts ...string) int {
	for i, l := range s.lines {
		ok := true
		for _, t := range texts {
			ok = ok && strings.Contains(l, t)
		}
		if ok {
			return i
		}
	}
	return -1
}

// colored reports whether the cells of line y holding text have color c
// (as text, or as background on the selected row).
func (s *rvScreen) colored(y int, text string, c tcell.Color) bool {
	i := strings.Index(s.lines[y], text)
	if i < 0 {
		return false
	}
	x := len([]rune(s.lines[y][:i]))
	fg, bg, _ := s.styles[y][x].Decompose()
	return fg == c || bg == c
}

// screen copies the screen (on the UI goroutine, where drawing happens).
func (rh *rvHarness) screen() *rvScreen {
	rh.t.Helper()
	var s rvScreen
	rh.ui(func() {
		cells, w, h := rh.sim.GetContents()
		for y := range h {
			var b strings.Builder
			st := make([]tcell.Style, w)
			for x := range w {
				c := cells[y*w+x]
				st[x] = c.Style
				if len(c.Runes) == 0 || c.Runes[0] == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteRune(c.Runes[0])
				}
			}
			s.lines = append(s.lines, b.String())
			s.styles = append(s.styles, st)
		}
	})
	return &s
}

// wait polls the screen until ok holds, for up to 5 s.
func (rh *rvHarness) wait(what string, ok func(s *rvScreen) bool) *rvScreen {
	rh.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s := rh.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			rh.t.Fatalf("waiting for %s; the screen shows:\n%s", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitText waits until every text is on the screen.
func (rh *rvHarness) waitText(texts ...string) *rvScreen {
	rh.t.Helper()
	return rh.wait(fmt.Sprintf("%q", texts), func(s *rvScreen) bool {
		for _, t := range texts {
			if s.line(t) < 0 {
				return false
			}
		}
		return true
	})
}

func (rh *rvHarness) press(r rune)    { rh.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone) }
func (rh *rvHarness) key(k tcell.Key) { rh.sim.InjectKey(k, 0, tcell.ModNone) }
func (rh *rvHarness) goTo(pi int)     { rh.ui(func() { rh.app.GoTo(pi) }) }
func (rh *rvHarness) front() (name string) {
	rh.ui(func() { name, _ = rh.app.pages.GetFrontPage() })
	return name
}

func (rh *rvHarness) selected() (pi int) {
	rh.ui(func() { pi = rh.app.Selected() })
	return pi
}

// rvPacket is what a direct pass of a tracker over the capture says of
// one packet: the reference the views are checked against.
type rvPacket struct {
	number  int
	session uint32
	dir     decode.Direction
	op      decode.Opcode
	psn     decode.PSN
	bth     bool
	syn     uint8
	aeth    bool
	cm      uint16 // CM attribute ID
	ev      decode.Event
	mpt     decode.MPTCheck
}

// rvReference tracks the index's capture again, packet by packet.
func rvReference(t *testing.T, ix *Index, newTracker func(func(*flow.Event)) *flow.Tracker) []rvPacket {
	t.Helper()
	tr := newTracker(nil)
	var out []rvPacket
	var p decode.Packet
	var buf []byte
	for i := range ix.Len() {
		var err error
		if buf, err = ix.Decode(i, &p, buf); err != nil {
			t.Fatal(err)
		}
		tr.Track(&p)
		rp := rvPacket{number: i + 1, session: p.Analysis.Session, dir: p.Analysis.Dir, op: p.BTH.Opcode,
			psn: p.BTH.PSN, bth: p.Has&decode.HdrBTH != 0, syn: p.AETH.Syndrome, aeth: p.Has&decode.HdrAETH != 0,
			ev: p.Analysis.Events, mpt: p.Analysis.MPT}
		if p.Has&decode.HdrCM != 0 {
			rp.cm = p.CM.AttributeID
		}
		out = append(out, rp)
	}
	return out
}

// ladderLine finds the ladder's line of frame n: it starts with the
// frame number in the first column.
func ladderLine(s *rvScreen, n int) int {
	for i, l := range s.lines {
		f := strings.Fields(strings.Trim(l, "║│ "))
		if len(f) > 2 && f[0] == strconv.Itoa(n) && strings.Contains(l, "─") {
			return i
		}
	}
	return -1
}

// TestLadderSessions opens the ladder of every session of several
// captures from one of its packets and checks every line against a
// direct tracker pass: frame, opcode, PSN, and the arrow's direction
// (the tracker's rocetap.session.direction).
func TestLadderSessions(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"read_atomic.pcap", "ipv6_mix.pcap", "err_psn_seq.pcap", "err_rnr.pcap", "cm_rping.pcap", "../synth/ib_lid_rc.pcap"} {
		t.Run(name, func(t *testing.T) {
			rh := rvStart(t, name, "", 200, 120, rvNoDetails)
			ref := rvReference(t, rh.ix, rh.newTracker)
			seen := map[uint32]bool{}
			for _, first := range ref {
				id := first.session
				if id == 0 || seen[id] {
					continue
				}
				seen[id] = true
				var pkts []rvPacket
				for _, p := range ref {
					if p.session == id {
						pkts = append(pkts, p)
					}
				}
				rh.goTo(first.number - 1)
				rh.press('l')
				title := "Ladder: session " + strconv.Itoa(int(id)) + " "
				s := rh.wait(title, func(s *rvScreen) bool {
					return s.line(title, strconv.Itoa(len(pkts))+" packets") >= 0 && s.line("scanning") < 0
				})
				for _, p := range pkts[:min(len(pkts), 100)] {
					if !p.bth {
						continue
					}
					y := ladderLine(s, p.number)
					if y < 0 {
						t.Fatalf("session %d: no line of frame %d:\n%s", id, p.number, s)
					}
					l := s.lines[y]
					want := p.op.String() + "  PSN " + strconv.Itoa(int(p.psn))
					if p.cm != 0 {
						want = "CM " + decode.CMAttrString(p.cm)
					}
					if !strings.Contains(l, want) {
						t.Errorf("session %d frame %d: want %q in\n%s", id, p.number, want, l)
					}
					toA, toB := strings.Contains(l, "│<"), strings.Contains(l, ">│")
					if toA == toB || toA != (p.dir == decode.DirBToA) {
						t.Errorf("session %d frame %d: the arrow points the wrong way (tracker: %v):\n%s", id, p.number, p.dir, l)
					}
				}
				rh.key(tcell.KeyEscape)
				rh.wait("the packet list", func(*rvScreen) bool { return rh.front() == "main" })
			}
			if len(seen) == 0 {
				t.Fatal("no session in the capture")
			}
		})
	}
}

// TestLadderNAK: err_psn_seq's NAK is red and says so, the two
// retransmissions are yellow and marked; Enter goes to the frame.
func TestLadderNAK(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "err_psn_seq.pcap", "", 160, 40, rvNoDetails)
	rh.goTo(0)
	rh.press('l')
	s := rh.waitText("Ladder: session 1 RC, 4 packets (")
	for _, c := range []struct {
		frame int
		text  string
		color tcell.Color
	}{
		{2, "NAK PSN Sequence Error", tcell.ColorRed},
		{3, "[retransmission]", tcell.ColorYellow},
		{4, "[retransmission]", tcell.ColorYellow},
	} {
		y := ladderLine(s, c.frame)
		if y < 0 || !strings.Contains(s.lines[y], c.text) {
			t.Fatalf("frame %d: want %q on its line:\n%s", c.frame, c.text, s)
		}
		if !s.colored(y, c.text, c.color) {
			t.Errorf("frame %d: %q is not %v:\n%s", c.frame, c.text, c.color, s.lines[y])
		}
	}
	if y := ladderLine(s, 2); !strings.Contains(s.lines[y], "│<") {
		t.Errorf("the NAK goes from B to A:\n%s", s.lines[y])
	}
	// Frame 1's WRITE was never answered: the tracker says so at the end
	// of the capture, after the packet was indexed, and the ladder shows
	// it on the frame (issue 17).
	if y := ladderLine(s, 1); !strings.Contains(s.lines[y], "[no_response]") {
		t.Errorf("frame 1 lacks its finding:\n%s", s.lines[y])
	}
	// Δt: frame 3 came 0.020290 s after frame 2.
	if y := ladderLine(s, 3); !strings.Contains(s.lines[y], " 0.020290 ") {
		t.Errorf("frame 3's time since frame 2:\n%s", s.lines[y])
	}
	// The ladder starts on its first packet: two down is frame 3.
	rh.key(tcell.KeyDown)
	rh.key(tcell.KeyDown)
	rh.key(tcell.KeyEnter)
	rh.wait("frame 3 selected in the list", func(*rvScreen) bool { return rh.front() == "main" && rh.selected() == 2 })
}

// TestLadderFromViews: l in the sessions view opens the selected
// session's ladder, in the expert view the selected event's.
func TestLadderFromViews(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "ipv6_mix.pcap", "", 200, 60, rvNoDetails)
	rh.press('s')
	rh.waitText("Sessions (")
	rh.key(tcell.KeyDown) // row 1 is selected: down is session 2, the UD flow
	rh.press('l')
	s := rh.waitText("Ladder: session 2 UD, 2 packets")
	if s.line("A fd77::1/0x000024", "fd77::2/0x000024 B") < 0 {
		t.Errorf("the ladder names the endpoints of session 2 above its columns:\n%s", s)
	}
	rh.key(tcell.KeyEscape)
	rh.press('e')
	rh.waitText("Expert information (")
	var want uint32
	rh.ui(func() { want = rh.app.views["expert"].(sessionPicker).pickedSession() })
	if want == 0 {
		t.Fatal("the expert view's first event has no session")
	}
	rh.press('l')
	rh.waitText("Ladder: session " + strconv.Itoa(int(want)) + " ")
}

// TestLadderLimit: a session longer than the limit shows its first
// packets and says how many it has.
func TestLadderLimit(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "read_atomic.pcap", "", 160, 40, func(a *App) {
		rvNoDetails(a)
		a.views["ladder"].(*ladderView).limit = 5
	})
	rh.goTo(0)
	rh.press('l')
	s := rh.waitText("the first 5 of 16 packets")
	if ladderLine(s, 5) < 0 || ladderLine(s, 6) >= 0 {
		t.Errorf("want frames 1 to 5:\n%s", s)
	}
}

// TestLadderNoSession: l on a packet of no session says so.
func TestLadderNoSession(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "read_atomic.pcap", "", 160, 40, rvNoDetails)
	rh.press('l')
	rh.waitText("Ladder: session 1 RC")
	rh.key(tcell.KeyEscape)
	rh.wait("the packet list", func(*rvScreen) bool { return rh.front() == "main" })
	rh.ui(func() { rh.app.selected = -1 })
	rh.press('l')
	rh.waitText("no packet selected")
	if rh.front() != "main" {
		t.Error("l without a selected packet left the packet list")
	}
}

func TestArrow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label string
		toA   bool
		w     int
		want  string
	}{
		{"ACK", false, 13, "│── ACK ───>│"},
		{"ACK", true, 13, "│<── ACK ───│"},
		{"a long label", false, 12, "│ a lon… ─>│"},
	} {
		if got := arrow(c.label, c.toA, c.w); got != c.want {
			t.Errorf("arrow(%q, %v, %d) = %q, want %q", c.label, c.toA, c.w, got, c.want)
		}
	}
}

// TestRDMAKeysFree: the views' keys are bound once.
func TestRDMAKeysFree(t *testing.T) {
	t.Parallel()
	seen := map[rune]string{}
	for _, k := range Keys {
		if prev, ok := seen[k.Rune]; ok {
			t.Errorf("key %q is bound twice: %q and %q", k.Rune, prev, k.Help)
		}
		seen[k.Rune] = k.Help
	}
	for _, r := range "lSM" {
		if _, ok := seen[r]; !ok {
			t.Errorf("key %q is not bound", r)
		}
	}
}

// TestRDMAKeysOnHelp: the help lists the views' keys, and on the help
// page they are the page's, not the views'.
func TestRDMAKeysOnHelp(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "read_atomic.pcap", "", 160, 50, rvNoDetails)
	rh.press('?')
	s := rh.waitText("rocetap tui keys")
	for _, k := range []string{"l      ladder", "S      statistics", "M      MPT checks"} {
		if s.line(k) < 0 {
			t.Errorf("the help does not list %q:\n%s", k, s)
		}
	}
	rh.ui(func() { // through the App's key handler, synchronously
		capture := rh.app.Application().GetInputCapture()
		for _, r := range "lSM" {
			if capture(tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone)) == nil {
				t.Errorf("%c on the help page: the App took the key", r)
			}
		}
	})
	if f := rh.front(); f != "help" {
		t.Errorf("after l, S, M on the help page, %q is in front", f)
	}
}

// TestLadderOpensWhereYouAre (issue 17.2): the ladder opens on the
// selected frame, selected and in view, windowed around it when the
// session is longer than the limit; Enter goes back to that frame.
func TestLadderOpensWhereYouAre(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "read_atomic.pcap", "", 160, 40, func(a *App) {
		rvNoDetails(a)
		a.views["ladder"].(*ladderView).limit = 5
	})
	rh.goTo(12) // frame 13 of the session's 16
	rh.press('l')
	s := rh.waitText("packets 11–15 of 16")
	if ladderLine(s, 10) >= 0 || ladderLine(s, 11) < 0 || ladderLine(s, 15) < 0 || ladderLine(s, 16) >= 0 {
		t.Errorf("want frames 11 to 15:\n%s", s)
	}
	rh.key(tcell.KeyEnter)
	rh.wait("frame 13 selected in the list", func(*rvScreen) bool { return rh.front() == "main" && rh.selected() == 12 })

	// Near the start: the first 5, frame 2 selected.
	rh.goTo(1)
	rh.press('l')
	rh.waitText("the first 5 of 16 packets")
	rh.key(tcell.KeyEnter)
	rh.wait("frame 2 selected in the list", func(*rvScreen) bool { return rh.front() == "main" && rh.selected() == 1 })
}

// TestLayoutAt80Columns (issue 17.11): at 80×24 the packet list leaves
// out QP and PSN (Info holds them) so Info has room, and the ladder's
// arrows take what an empty Notes column does not need: no PSN is cut.
func TestLayoutAt80Columns(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "err_psn_seq.pcap", "", 80, 24, rvNoDetails)
	s := rh.wait("the list at 80 columns", func(s *rvScreen) bool {
		y := s.line("No.")
		return y >= 0 && s.line("Frame 1:") >= 0 && !strings.Contains(s.lines[y], " QP ") && !strings.Contains(s.lines[y], " PSN ")
	})
	if s.line("RC RDMA Write Only QP=") < 0 { // 9 characters before
		t.Errorf("Info is cut short at 80 columns:\n%s", s)
	}
	rh.goTo(0)
	rh.press('l')
	s = rh.waitText("Ladder: session 1 RC, 4 packets (") // scanned
	if y := ladderLine(s, 1); y < 0 || !strings.Contains(s.lines[y], "PSN 6144 ") {
		t.Errorf("the ladder cuts frame 1's PSN at 80 columns:\n%s", s)
	}
}
