package tui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
)

// Options configure the UI.
type Options struct {
	Index *Index
	// NewTracker makes a tracker like the index's (same MPT), for filters
	// that need the analysis of a packet (stateful fields): the capture is
	// tracked again. onEvent may be nil.
	NewTracker func(onEvent func(*flow.Event)) *flow.Tracker
	// Screen is where to draw (tests pass a simulation screen); nil is
	// the terminal.
	Screen tcell.Screen
	// Filter is the display filter to start with.
	Filter string
	// Status, when set, adds to the status line (a live capture's rates
	// and drops).
	Status func() string
	// Follow keeps the end of the list in view as packets come (a stream
	// or a live capture); otherwise the list stays where it is.
	Follow bool
	// TimeFormat is how the list's Time column shows a packet's time
	// (tshark's -t; printer.TimeRelative by default).
	TimeFormat printer.TimeFormat
	// Columns, when set, are the list's columns in order (ParseColumns:
	// --columns no,time,src,dst,proto,len,info,infiniband.reth.va).
	Columns string
}

// App is the terminal UI of one capture.
type App struct {
	o     Options
	ix    *Index
	app   *tview.Application
	pages *tview.Pages

	list    *tview.Table
	content *listContent
	tree    *tview.TreeView
	hex     *tview.TextView
	filter  *tview.InputField
	status  *tview.TextView
	main    *tview.Flex

	mu        sync.Mutex
	filterErr string // why the filter bar's text does not compile
	applied   string // the filter the list shows
	filtering bool
	history   []string
	histPos   int
	selected  int             // packet index selected (-1: none)
	lines     []printer.Line  // detail lines of the selected packet
	treeLines []printer.Line  // the lines the detail tree was built from
	data      []byte          // its bytes
	frameLen  [2]int          // its frame's wire and captured lengths, as decoded (an ERF record's frame, not the record)
	hl        [2]int          // highlighted byte range in the hex pane
	hexCur    int             // the byte cursor in the hex pane (hexKey)
	pending   []rune          // keys of a multi-key command (gg)
	views     map[string]View // the other views, by page name
	det       detailer        // the selected packet's full analysis
	lastFind  string
	// suggesting: the filter bar's suggestion list is open (UI goroutine
	// only).
	suggesting bool
	run        *filterRun // the display filter applied
}

// View is one of the views beside the three panes (sessions, expert,
// ladder, stats, ...): a page with a key that opens it.
type View interface {
	Name() string
	Primitive() tview.Primitive
	// Refresh redraws it from the index (called on open and as the
	// index grows).
	Refresh(a *App)
}

// New builds the UI over an index (whose Build runs elsewhere).
func New(o Options) *App {
	a := &App{o: o, ix: o.Index, app: tview.NewApplication(), selected: -1, views: map[string]View{}}
	if o.Screen != nil {
		a.app.SetScreen(o.Screen)
	}
	a.content = newListContent(a.ix)
	a.content.tf = o.TimeFormat
	if o.Columns != "" {
		if cols, err := ParseColumns(o.Columns); err == nil { // the command checked it
			a.content.setColumns(cols)
		}
	}
	a.list = tview.NewTable().SetContent(a.content).SetSelectable(true, false).SetFixed(1, 0)
	a.list.SetBorder(true).SetTitle(" Packets ")
	a.list.SetSelectionChangedFunc(func(r, _ int) { a.selectRow(r) })
	a.tree = tview.NewTreeView()
	a.tree.SetBorder(true).SetTitle(" Details ")
	a.tree.SetChangedFunc(func(n *tview.TreeNode) { a.highlight(n) })
	a.tree.SetSelectedFunc(a.treeSelected)
	a.hex = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	a.hex.SetBorder(true).SetTitle(" Bytes ")
	// A click on a byte selects the field that owns it, as the arrows do.
	a.hex.SetMouseCapture(func(action tview.MouseAction, ev *tcell.EventMouse) (tview.MouseAction, *tcell.EventMouse) {
		if action != tview.MouseLeftClick {
			return action, ev
		}
		x, y := ev.Position()
		ix, iy, _, _ := a.hex.GetInnerRect()
		row, _ := a.hex.GetScrollOffset()
		if b := hexByteAt(x-ix, y-iy+row); b >= 0 && b < len(a.data) {
			a.app.SetFocus(a.hex)
			a.hexCur = b
			a.selectByteOwner(b)
			return tview.MouseConsumed, nil
		}
		return action, ev
	})
	a.filter = tview.NewInputField().SetLabel("Filter: ").SetFieldWidth(0)
	a.filter.SetChangedFunc(a.validateFilter)
	a.filter.SetDoneFunc(a.filterDone)
	// Suggestions: while the list is open, ↑↓ move in it (else they walk
	// the history), Enter takes the highlighted name and applies the
	// filter, Tab takes it and goes on typing, Esc closes the list.
	a.filter.SetAutocompleteFunc(func(text string) []string {
		entries := completeField(text)
		a.suggesting = len(entries) > 0
		return entries
	})
	a.filter.SetAutocompletedFunc(func(text string, _ int, source int) bool {
		switch source {
		case tview.AutocompletedNavigate:
			return false // the highlight moves; the text stays as typed
		case tview.AutocompletedEnter:
			a.suggesting = false
			a.filter.SetText(text)
			a.filterDone(tcell.KeyEnter)
			return true
		}
		a.suggesting = false
		a.filter.SetText(text)
		return true
	})
	a.status = tview.NewTextView().SetDynamicColors(true)
	a.main = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.list, 0, 2, true).
		AddItem(a.tree, 0, 1, false).
		AddItem(a.hex, 0, 1, false)
	root := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.main, 0, 1, true).
		AddItem(a.filter, 1, 0, false).
		AddItem(a.status, 1, 0, false)
	a.pages = tview.NewPages().AddPage("main", root, true, true)
	a.app.SetRoot(a.pages, true)
	a.app.SetInputCapture(a.keys)
	// The mouse as in termshark: a click selects a row, a tree node or a
	// pane; the wheel scrolls.
	a.app.EnableMouse(true)
	a.app.SetBeforeDrawFunc(func(screen tcell.Screen) bool {
		w, _ := screen.Size()
		a.content.narrow.Store(w < narrowWidth)
		return false
	})
	if o.Filter != "" {
		a.filter.SetText(o.Filter)
		a.applyFilter(o.Filter)
	}
	a.updateStatus()
	return a
}

// AddView adds a view, opened with its page name.
func (a *App) AddView(v View) {
	a.views[v.Name()] = v
	a.pages.AddPage(v.Name(), v.Primitive(), true, false)
}

// Run runs the UI until the user quits.
func (a *App) Run() error { return a.app.Run() }

// Stop ends Run.
func (a *App) Stop() { a.app.Stop() }

// Application is the tview application (for views).
func (a *App) Application() *tview.Application { return a.app }

// Index is the capture's index (for views).
func (a *App) Index() *Index { return a.ix }

// Refresh redraws after the index grew; safe from any goroutine.
func (a *App) Refresh() {
	a.app.QueueUpdateDraw(func() {
		a.continueFilter(false)
		a.holdList()
		a.updateStatus()
		if a.selected < 0 && a.content.count() > 0 {
			a.list.Select(1, 0)
		}
		if name, _ := a.pages.GetFrontPage(); name != "main" {
			if v := a.views[name]; v != nil {
				v.Refresh(a)
			}
		}
	})
}

// ShowView brings a view to the front ("main" is the three panes).
func (a *App) ShowView(name string) {
	if name == "main" {
		a.pages.SwitchToPage("main")
		a.app.SetFocus(a.list)
		return
	}
	if v := a.views[name]; v != nil {
		v.Refresh(a)
		a.pages.SwitchToPage(name)
		a.app.SetFocus(v.Primitive())
	}
}

// GoTo selects packet index pi in the list (showing all packets if the
// filter hides it) and returns to the three panes.
func (a *App) GoTo(pi int) {
	if pi < 0 || pi >= a.ix.Len() {
		return
	}
	pos := a.content.positionOf(pi)
	cleared := ""
	if p, ok := a.content.packetAt(pos); !ok || p != pi {
		a.mu.Lock()
		cleared = a.applied
		a.mu.Unlock()
		a.clearFilter()
		pos = pi
	}
	a.ShowView("main")
	a.list.Select(pos+1, 0)
	if cleared != "" {
		// Said, not silent: the list changed under the user.
		a.flash(fmt.Sprintf("packet %d is not shown by the filter %q: the filter is cleared", pi+1, cleared))
	}
}

// SetFilter applies a display filter as if typed in the bar.
func (a *App) SetFilter(expr string) {
	a.filter.SetText(expr)
	a.applyFilter(expr)
}

// selectRow shows the details and bytes of the packet at list row r.
func (a *App) selectRow(r int) {
	pi, ok := a.content.packetAt(r - 1)
	if !ok {
		return
	}
	a.selected = pi
	var p decode.Packet
	data, err := a.ix.Decode(pi, &p, nil)
	if err != nil {
		a.tree.SetRoot(tview.NewTreeNode(tview.Escape(err.Error())))
		return
	}
	a.data = data
	a.frameLen = [2]int{p.Frame.Len, p.Frame.CapLen}
	e, _ := a.ix.Entry(pi)
	p.Analysis.Tracked, p.Analysis.Session, p.Analysis.Events = e.Session != 0 || e.Events != 0, e.Session, e.Events
	a.lines = printer.Lines(&p, nil)
	a.buildTree(e, false)
	a.hl, a.hexCur = [2]int{-1, 0}, -1
	a.drawHex()
	a.updateStatus()
	if e.Session != 0 || e.Events != 0 {
		a.analyze(pi)
	}
}

// buildTree makes the detail tree from the printer's lines. With keep,
// the tree is the same packet's again (the background analysis adds its
// lines): the nodes the user closed stay closed and the current node stays
// current, so a key pressed before the analysis ends is not undone by it.
func (a *App) buildTree(e Entry, keep bool) {
	var closed map[string]bool
	cur := ""
	if old := a.tree.GetRoot(); keep && old != nil {
		closed = map[string]bool{}
		oldLines := a.treeLines
		keys := nodeKeys(oldLines)
		old.Walk(func(n, _ *tview.TreeNode) bool {
			i, ok := n.GetReference().(int)
			k := "root"
			if ok && i >= 0 && i < len(keys) {
				k = keys[i]
			}
			if len(n.GetChildren()) > 0 && !n.IsExpanded() {
				closed[k] = true
			}
			if n == a.tree.GetCurrentNode() {
				cur = k
			}
			return true
		})
	}
	a.treeLines = a.lines
	keys := nodeKeys(a.lines)
	root := tview.NewTreeNode(fmt.Sprintf("Frame %d: %d bytes on wire, %d bytes captured", e.Number, a.frameLen[0], a.frameLen[1])).SetReference(-1)
	current := root
	stack := []*tview.TreeNode{root}
	for i, l := range a.lines {
		n := tview.NewTreeNode(tview.Escape(decode.Sanitize(l.Text))).SetReference(i).SetSelectable(true)
		if closed[keys[i]] {
			n.SetExpanded(false)
		}
		if cur != "" && keys[i] == cur {
			current = n
		}
		if l.Field == nil {
			n.SetColor(tcell.ColorRed)
		} else if l.Depth == 0 {
			n.SetColor(tcell.ColorTeal)
		}
		d := min(l.Depth+1, len(stack))
		stack = stack[:d]
		stack[d-1].AddChild(n)
		stack = append(stack, n)
	}
	if closed["root"] {
		root.SetExpanded(false)
	}
	a.tree.SetRoot(root).SetCurrentNode(current)
}

// nodeKeys names each detail line for buildTree's keep: the field's name,
// or the text of a line without one, with its occurrence number, so a line
// keeps its key when the analysis inserts lines before it.
func nodeKeys(lines []printer.Line) []string {
	seen := map[string]int{}
	keys := make([]string, len(lines))
	for i, l := range lines {
		k := l.Text
		if l.Field != nil {
			k = l.Field.Abbrev
		}
		seen[k]++
		keys[i] = k + "#" + strconv.Itoa(seen[k])
	}
	return keys
}

// highlight marks the bytes of the field selected in the tree.
func (a *App) highlight(n *tview.TreeNode) {
	i, ok := n.GetReference().(int)
	if !ok || i < 0 || i >= len(a.lines) {
		a.hl = [2]int{-1, 0}
	} else {
		a.hl = [2]int{a.lines[i].Off, a.lines[i].Len}
	}
	a.drawHex()
}

// drawHex draws the bytes pane: offset, 16 bytes in hex, ASCII, with the
// highlighted range in reverse video.
func (a *App) drawHex() {
	a.hex.SetText(hexDump(a.data, a.hl[0], a.hl[1]))
	if a.hl[0] >= 0 {
		a.hex.ScrollTo(a.hl[0]/16, 0)
	}
}

// hexDump renders data as tview text; [off, off+n) is highlighted.
func hexDump(data []byte, off, n int) string {
	var b strings.Builder
	in := func(i int) bool { return off >= 0 && i >= off && i < off+n }
	for line := 0; line < len(data); line += 16 {
		fmt.Fprintf(&b, "%04x  ", line)
		for i := line; i < line+16; i++ {
			if i < len(data) {
				if in(i) {
					fmt.Fprintf(&b, "[::r]%02x[::-]", data[i])
				} else {
					fmt.Fprintf(&b, "%02x", data[i])
				}
			} else {
				b.WriteString("  ")
			}
			b.WriteByte(' ')
			if i == line+7 {
				b.WriteByte(' ')
			}
		}
		b.WriteByte(' ')
		// The ASCII column, in runs of plain and highlighted characters,
		// each escaped as a whole so brackets in the data are not tags.
		var run []byte
		hi := false
		flush := func() {
			if len(run) == 0 {
				return
			}
			if hi {
				b.WriteString("[::r]" + tview.Escape(string(run)) + "[::-]")
			} else {
				b.WriteString(tview.Escape(string(run)))
			}
			run = run[:0]
		}
		for i := line; i < line+16 && i < len(data); i++ {
			if in(i) != hi {
				flush()
				hi = in(i)
			}
			c := data[i]
			if c < 0x20 || c >= 0x7f {
				c = '.'
			}
			run = append(run, c)
		}
		flush()
		b.WriteByte('\n')
	}
	return b.String()
}

// validateFilter checks the filter bar as it is typed.
func (a *App) validateFilter(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.filterErr = ""
	if strings.TrimSpace(text) != "" {
		if _, err := filter.Compile(text); err != nil {
			a.filterErr = err.Error()
		}
	}
	if a.filterErr != "" {
		a.filter.SetFieldBackgroundColor(tcell.ColorMaroon)
	} else {
		a.filter.SetFieldBackgroundColor(tcell.ColorDarkGreen)
	}
	a.updateStatusLocked()
}

// filterDone applies the bar's filter on Enter, leaves it on Escape, and
// walks the history with the arrows.
func (a *App) filterDone(key tcell.Key) {
	switch key {
	case tcell.KeyEnter:
		text := a.filter.GetText()
		if a.filterErrText() != "" {
			return
		}
		a.applyFilter(text)
		a.app.SetFocus(a.list)
	case tcell.KeyEscape:
		a.filter.SetText(a.applied)
		a.app.SetFocus(a.list)
	}
}

func (a *App) filterErrText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.filterErr
}

// clearFilter shows every packet.
func (a *App) clearFilter() {
	a.filter.SetText("")
	a.applyFilter("")
}

// filterRun is a display filter applied to the capture: it goes through
// the packets in order (the filter pass, with its own tracker when the
// filter has stateful fields), and goes on with the packets indexed after
// it ran.
type filterRun struct {
	expr  string
	pass  stream.Pass
	next  int     // the next packet index to match
	shown []int32 // the packets it selected so far
	busy  bool
	p     decode.Packet
}

// newFilterRun starts applying flt.
func (a *App) newFilterRun(expr string, flt *filter.Filter) *filterRun {
	run := &filterRun{expr: expr, pass: stream.Pass{Filter: flt}, shown: []int32{}}
	if a.o.NewTracker != nil && stream.NeedsTracker(nil, flt) {
		run.pass.Tracker = a.o.NewTracker(nil)
	}
	return run
}

// advance matches the packets from run.next up to n.
func (run *filterRun) advance(ix *Index, n int) {
	first, prev := ix.times(run.next)
	ix.Scan(run.next, n, func(i int, data []byte, e Entry) bool {
		p := &run.p
		stream.SetFrameAt(&p.Frame, e.Number, e.Time, first, prev, e.Length, e.Interface)
		prev = p.Frame.Time.UnixNano()
		ix.decode(p, data, e.LinkType)
		if run.pass.Match(p) {
			run.shown = append(run.shown, int32(i))
		}
		run.next = i + 1
		return true
	})
}

// runFilter returns the indexes of the packets indexed so far that flt
// selects, synchronously (benchmarks and tests).
func (a *App) runFilter(flt *filter.Filter) []int32 {
	run := a.newFilterRun("", flt)
	run.advance(a.ix, a.ix.Len())
	return run.shown
}

// applyFilter runs a display filter over every packet in the background
// and shows the packets it selects; packets indexed later are filtered as
// they come (Refresh).
func (a *App) applyFilter(expr string) {
	expr = strings.TrimSpace(expr)
	a.mu.Lock()
	a.applied = expr
	if expr != "" && (len(a.history) == 0 || a.history[len(a.history)-1] != expr) {
		a.history = append(a.history, expr)
	}
	a.histPos = len(a.history)
	a.run = nil
	a.filtering = false // a run still going is dropped (its result is ignored)
	a.mu.Unlock()
	if expr == "" {
		a.content.setShown(nil)
		a.afterFilter()
		return
	}
	flt, err := filter.Compile(expr)
	if err != nil {
		return
	}
	run := a.newFilterRun(expr, flt)
	a.mu.Lock()
	a.run = run
	a.mu.Unlock()
	a.content.setShown([]int32{})
	a.continueFilter(true)
}

// continueFilter filters the packets indexed since the filter last ran,
// in the background; first says the list was just emptied for it.
func (a *App) continueFilter(first bool) {
	a.mu.Lock()
	run := a.run
	if run == nil || run.busy || (!first && run.next >= a.ix.Len()) {
		a.mu.Unlock()
		return
	}
	run.busy = true
	a.filtering = true
	a.mu.Unlock()
	a.updateStatus()
	go func() {
		run.advance(a.ix, a.ix.Len())
		shown := run.shown[:len(run.shown):len(run.shown)]
		a.app.QueueUpdateDraw(func() {
			a.mu.Lock()
			run.busy = false
			current := a.run == run
			if current {
				a.filtering = false
			}
			a.mu.Unlock()
			if !current {
				a.updateStatus() // a dropped run says nothing more
				return
			}
			a.content.setShown(shown)
			if first || a.selected < 0 { // nothing selected yet: select the first packet shown
				a.afterFilter()
			} else {
				a.updateStatus()
			}
			a.continueFilter(false) // packets indexed meanwhile
		})
	}()
}

// holdList keeps the list where it is as it grows: tview's table follows
// its end once all its rows fitted on the screen, which suits a live
// capture (Options.Follow) but not a file being indexed.
func (a *App) holdList() {
	if !a.o.Follow {
		r, c := a.list.GetOffset()
		a.list.SetOffset(r, c)
	}
}

// afterFilter keeps the selected packet selected when the filter shows it.
func (a *App) afterFilter() {
	pos := 0
	if a.selected >= 0 {
		pos = a.content.positionOf(a.selected)
	}
	if a.content.count() > 0 {
		a.list.SetOffset(max(0, min(pos, a.content.count()-1)-2), 0)
		a.list.Select(min(pos, a.content.count()-1)+1, 0)
	} else {
		a.det.gen.Add(1) // the selected packet's full tree, on its way, is not shown now
		a.tree.SetRoot(tview.NewTreeNode("no packet matches the filter"))
		a.data = nil
		a.drawHex()
	}
	a.updateStatus()
}

func (a *App) updateStatus() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.updateStatusLocked()
}

// updateStatusLocked writes the status line: packets, shown, indexing
// progress, the filter's state, and the live status.
func (a *App) updateStatusLocked() {
	var b strings.Builder
	if a.filterErr != "" {
		// First: at 80 columns the end of the line is cut.
		msg, _, _ := strings.Cut(a.filterErr, "\n") // the first line; the rest draws a caret under the text
		msg = strings.TrimPrefix(msg, "filter: ")
		fmt.Fprintf(&b, " [red]filter: %s[-] ", tview.Escape(decode.Sanitize(msg)))
	}
	n := a.ix.Len()
	// The file's name, not its path (a stream's spool path is long).
	fmt.Fprintf(&b, " %s  packets: %d", tview.Escape(decode.Sanitize(filepath.Base(a.ix.Name()))), n)
	if a.applied != "" {
		fmt.Fprintf(&b, "  shown: %d", a.content.count())
	}
	done, err := a.ix.Done()
	switch {
	case err != nil:
		fmt.Fprintf(&b, "  [red]stopped: %s[-]", tview.Escape(decode.Sanitize(err.Error())))
	case !done:
		read, size := a.ix.Progress()
		if size > 0 {
			fmt.Fprintf(&b, "  indexing %d%%", read*100/size)
		} else {
			b.WriteString("  reading…")
		}
	}
	if a.filtering {
		b.WriteString("  filtering…")
	}
	if a.o.Status != nil {
		b.WriteString("  " + tview.Escape(a.o.Status()))
	}
	b.WriteString("  [gray]? help  q quit[-]")
	a.status.SetText(b.String())
}

// keys handles the global keys (Keys lists them).
func (a *App) keys(ev *tcell.EventKey) *tcell.EventKey {
	if a.app.GetFocus() == a.filter {
		switch ev.Key() {
		case tcell.KeyUp, tcell.KeyDown:
			if a.suggesting {
				return ev // moves in the suggestions
			}
			a.walkHistory(ev.Key() == tcell.KeyUp)
			return nil
		case tcell.KeyEscape:
			if a.suggesting {
				a.suggesting = false
				return ev // closes the suggestions, keeps the text
			}
		}
		return ev
	}
	if _, typing := a.app.GetFocus().(*tview.InputField); typing {
		return ev // a prompt (go to, find, write): the keys are its text
	}
	switch ev.Key() {
	case tcell.KeyCtrlC:
		a.app.Stop()
		return nil
	case tcell.KeyCtrlN:
		a.findNext()
		return nil
	}
	front, _ := a.pages.GetFrontPage()
	if front == "main" && a.app.GetFocus() == a.tree && a.treeKey(ev) {
		return nil
	}
	if front == "main" && a.app.GetFocus() == a.hex && a.hexKey(ev) {
		return nil
	}
	if ev.Key() == tcell.KeyEscape {
		if front != "main" {
			a.closeView(front)
			return nil
		}
		if a.app.GetFocus() != a.list {
			a.app.SetFocus(a.list) // from the details or the bytes
			return nil
		}
	}
	switch ev.Key() {
	case tcell.KeyTab:
		a.cycleFocus(1)
		return nil
	case tcell.KeyBacktab:
		a.cycleFocus(-1)
		return nil
	}
	if ev.Key() != tcell.KeyRune {
		return ev
	}
	r := ev.Rune()
	if front != "main" && (r == 'g' || r == 'G' || r == 'j' || r == 'k') {
		a.pending = nil
		return ev // the view's own table moves (tview: g top, G end)
	}
	if len(a.pending) > 0 {
		seq := string(append(a.pending, r))
		a.pending = nil
		if seq == "gg" {
			a.list.Select(1, 0)
			return nil
		}
	}
	for _, k := range Keys {
		if k.Rune == r && k.Do != nil {
			if k.Do(a) {
				return nil
			}
		}
	}
	return ev
}

// Key is one entry of the key table (the help screen is made from it).
type Key struct {
	Rune rune
	Name string
	Help string
	// Do acts and returns true, or returns false to let the focused view
	// have the key.
	Do func(a *App) bool
}

// Keys is the key table: Wireshark's and termshark's habits, and vim's.
// Views add theirs (AddKey).
var Keys []Key

// AddKey adds a key to the table.
func AddKey(k Key) { Keys = append(Keys, k) }

func init() {
	Keys = append([]Key{
		{'q', "q", "close the view; in the packet list, quit (asking first when a live capture or marks would be lost)", func(a *App) bool { a.quitOrClose(); return true }},
		{'/', "/", "display filter, from any view (Enter applies, Esc leaves, ↑↓ history or suggestions, Tab completes fields)", func(a *App) bool {
			if front, _ := a.pages.GetFrontPage(); front != "main" {
				a.closeView(front)
			}
			a.app.SetFocus(a.filter)
			return true
		}},
		{'j', "j", "next packet", func(a *App) bool { return a.move(1) }},
		{'k', "k", "previous packet", func(a *App) bool { return a.move(-1) }},
		{'g', "gg", "first packet", func(a *App) bool { a.pending = []rune{'g'}; return true }},
		{'G', "G", "last packet", func(a *App) bool {
			a.ShowView("main")
			a.list.Select(a.content.count(), 0)
			return true
		}},
		{'n', "n", "next packet of the same session", func(a *App) bool { return a.sameSession(1) }},
		{'N', "N", "previous packet of the same session", func(a *App) bool { return a.sameSession(-1) }},
		{':', ":", "go to packet number", func(a *App) bool { a.prompt("Go to packet: ", a.gotoNumber); return true }},
		{'?', "?", "this help", func(a *App) bool { a.showHelp(); return true }},
	}, Keys...)
}

func (a *App) move(d int) bool {
	if name, _ := a.pages.GetFrontPage(); name != "main" || a.app.GetFocus() != a.list {
		return false
	}
	r, _ := a.list.GetSelection()
	a.list.Select(max(1, min(r+d, a.content.count())), 0)
	return true
}

// sameSession selects the next (d 1) or previous (d -1) shown packet of
// the selected packet's session.
func (a *App) sameSession(d int) bool {
	if a.selected < 0 {
		return true
	}
	e, _ := a.ix.Entry(a.selected)
	if e.Session == 0 {
		return true
	}
	r, _ := a.list.GetSelection()
	for pos := r - 1 + d; pos >= 0 && pos < a.content.count(); pos += d {
		pi, _ := a.content.packetAt(pos)
		if pe, _ := a.ix.Entry(pi); pe.Session == e.Session {
			a.list.Select(pos+1, 0)
			return true
		}
	}
	return true
}

func (a *App) gotoNumber(text string) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < 1 || n > a.ix.Len() {
		a.flash(fmt.Sprintf("no packet %q: the capture has packets 1 to %d", text, a.ix.Len()))
		return
	}
	a.GoTo(n - 1)
}

// flash shows a message in the status line until the next update.
func (a *App) flash(msg string) {
	a.status.SetText(" [yellow]" + tview.Escape(msg) + "[-]")
}

// prompt asks for one line of text in a modal input.
func (a *App) prompt(label string, done func(string)) {
	in := tview.NewInputField().SetLabel(label)
	in.SetBorder(true)
	in.SetDoneFunc(func(k tcell.Key) {
		a.pages.RemovePage("prompt")
		a.app.SetFocus(a.list)
		if k == tcell.KeyEnter {
			done(in.GetText())
		}
	})
	box := tview.NewFlex().AddItem(nil, 0, 1, false).AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(nil, 0, 1, false).AddItem(in, 3, 0, true).AddItem(nil, 0, 1, false), 50, 0, true).AddItem(nil, 0, 1, false)
	a.pages.AddPage("prompt", box, true, true)
	a.app.SetFocus(in)
}

func (a *App) walkHistory(up bool) {
	a.mu.Lock()
	if len(a.history) == 0 {
		a.mu.Unlock()
		return
	}
	if up {
		a.histPos = max(0, a.histPos-1)
	} else {
		a.histPos = min(len(a.history), a.histPos+1)
	}
	text := ""
	if a.histPos < len(a.history) {
		text = a.history[a.histPos]
	}
	a.mu.Unlock()
	a.filter.SetText(text) // validateFilter takes the lock
}

// cycleFocus moves to the next (d 1, Tab) or previous (d -1, Shift-Tab)
// pane: list, details, bytes.
func (a *App) cycleFocus(d int) {
	if name, _ := a.pages.GetFrontPage(); name != "main" {
		return
	}
	panes := []tview.Primitive{a.list, a.tree, a.hex}
	i := 0
	for j, p := range panes {
		if a.app.GetFocus() == p {
			i = j
		}
	}
	a.app.SetFocus(panes[(i+d+len(panes))%len(panes)])
}

// closeView closes the page in front (a view, the help) and returns to
// the packet list.
func (a *App) closeView(front string) {
	if front == "help" || front == "prompt" {
		a.pages.RemovePage(front)
		a.app.SetFocus(a.list)
		return
	}
	a.ShowView("main")
}

// quitOrClose is q: a view closes; the packet list quits, after asking
// when something would be lost (a live capture, marks).
func (a *App) quitOrClose() {
	if front, _ := a.pages.GetFrontPage(); front != "main" {
		a.closeView(front)
		return
	}
	var lose []string
	if a.o.Follow && a.o.Status != nil {
		lose = append(lose, "the live capture stops")
	}
	if n := a.content.markCount(); n > 0 {
		lose = append(lose, map[bool]string{true: "1 mark is lost", false: fmt.Sprintf("%d marks are lost", n)}[n == 1])
	}
	if len(lose) == 0 {
		a.app.Stop()
		return
	}
	q := strings.Join(lose, ", ")
	a.prompt("Quit? "+strings.ToUpper(q[:1])+q[1:]+". (y/N) ", func(answer string) {
		if ans := strings.ToLower(strings.TrimSpace(answer)); ans == "y" || ans == "yes" {
			a.app.Stop()
		}
	})
}

// showHelp shows the key table.
func (a *App) showHelp() {
	var b strings.Builder
	b.WriteString("rocetap tui keys (Esc or q closes)\n\n")
	for _, k := range Keys {
		fmt.Fprintf(&b, "  %-6s %s\n", k.Name, k.Help)
	}
	for _, k := range [][2]string{{"Tab", "next pane: list, details, bytes (Shift-Tab: back)"}, {"↑ ↓ PgUp PgDn", "move"}, {"Esc", "back to the packet list"}, {"← →", "in the details: close or open a node (e opens all, c closes all); Enter on \"... in frame: N\" goes there"}, {"arrows", "in the bytes: move byte by byte; the field that owns the byte is selected in the details"}, {"Ctrl-C", "quit at once"}} {
		fmt.Fprintf(&b, "  %-6s %s\n", k[0], k[1])
	}
	tv := tview.NewTextView().SetText(b.String())
	tv.SetBorder(true).SetTitle(" Help ")
	a.pages.AddPage("help", tv, true, true)
	a.app.SetFocus(tv)
}

// completeField completes the field name being typed in the filter bar.
func completeField(text string) []string {
	i := strings.LastIndexAny(text, " ()!=<>&|~") + 1
	word := text[i:]
	if len(word) < 2 {
		return nil
	}
	var out []string
	for _, f := range decode.Fields() {
		if strings.HasPrefix(f.Abbrev, word) {
			out = append(out, text[:i]+f.Abbrev)
			if len(out) == 20 {
				break
			}
		}
	}
	return out
}

// treeSelected is Enter on a node of the detail tree: a link ("Response
// to the request in frame: 5") goes to its frame; another node with
// children opens or closes.
func (a *App) treeSelected(n *tview.TreeNode) {
	if i, ok := n.GetReference().(int); ok && i >= 0 && i < len(a.lines) {
		l := a.lines[i]
		if l.Field != nil && strings.HasSuffix(l.Field.Abbrev, "_frame") {
			if _, num, ok := strings.Cut(l.Text, ": "); ok {
				if f, err := strconv.Atoi(strings.Fields(num)[0]); err == nil && f >= 1 && f <= a.ix.Len() {
					a.GoTo(f - 1)
					return
				}
			}
		}
	}
	if len(n.GetChildren()) > 0 {
		n.SetExpanded(!n.IsExpanded())
	}
}

// treeKey handles the detail tree's keys as tshark's tree in Wireshark:
// → opens the node, ← closes it (or goes to its parent), e opens every
// node, c closes every node but the root. It reports whether it took the
// key.
func (a *App) treeKey(ev *tcell.EventKey) bool {
	n := a.tree.GetCurrentNode()
	root := a.tree.GetRoot()
	if n == nil || root == nil {
		return false
	}
	switch {
	case ev.Key() == tcell.KeyRight:
		n.SetExpanded(true)
	case ev.Key() == tcell.KeyLeft:
		if n.IsExpanded() && len(n.GetChildren()) > 0 {
			n.SetExpanded(false)
		} else if p := a.parentOf(root, n); p != nil {
			a.tree.SetCurrentNode(p)
		}
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'e':
		root.ExpandAll()
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'c':
		root.CollapseAll()
		root.SetExpanded(true)
		a.tree.SetCurrentNode(root)
	default:
		return false
	}
	return true
}

// parentOf finds n's parent under root.
func (a *App) parentOf(root, n *tview.TreeNode) *tview.TreeNode {
	var found *tview.TreeNode
	root.Walk(func(node, parent *tview.TreeNode) bool {
		if node == n {
			found = parent
			return false
		}
		return found == nil
	})
	return found
}

// hexKey moves a byte cursor in the bytes pane (arrows, Home, End) and
// selects in the detail tree the field that owns the byte, deepest first,
// as Wireshark's bytes pane does. It reports whether it took the key.
func (a *App) hexKey(ev *tcell.EventKey) bool {
	if len(a.data) == 0 {
		return false
	}
	cur := a.hexCur
	if cur < 0 || cur >= len(a.data) {
		cur = max(0, a.hl[0])
	}
	switch ev.Key() {
	case tcell.KeyRight:
		cur++
	case tcell.KeyLeft:
		cur--
	case tcell.KeyDown:
		cur += 16
	case tcell.KeyUp:
		cur -= 16
	case tcell.KeyHome:
		cur = 0
	case tcell.KeyEnd:
		cur = len(a.data) - 1
	default:
		return false
	}
	a.hexCur = max(0, min(cur, len(a.data)-1))
	a.selectByteOwner(a.hexCur)
	return true
}

// selectByteOwner selects the tree node of the smallest field holding
// byte off, and highlights that byte within it.
func (a *App) selectByteOwner(off int) {
	best, bestLen := -1, 1<<31
	for i, l := range a.lines {
		if l.Field != nil && l.Off >= 0 && off >= l.Off && off < l.Off+l.Len && l.Len <= bestLen {
			best, bestLen = i, l.Len // later lines are deeper: ties go to them
		}
	}
	if root := a.tree.GetRoot(); root != nil && best >= 0 {
		root.Walk(func(n, _ *tview.TreeNode) bool {
			if i, ok := n.GetReference().(int); ok && i == best {
				a.tree.SetCurrentNode(n) // its changed func highlights the field
				return false
			}
			return true
		})
	}
	a.hl = [2]int{off, 1}
	if best >= 0 {
		a.hl = [2]int{a.lines[best].Off, a.lines[best].Len}
	}
	a.drawHex()
}

// hexByteAt is the byte under column x of line y of hexDump's text ("0000
// 02 00 0a 4d 00 02 02 00  0a 4d ..."), or -1.
func hexByteAt(x, y int) int {
	x -= 6 // the offset and two spaces
	if x < 0 || y < 0 {
		return -1
	}
	if x >= 8*3 {
		x-- // the gap after the eighth byte
	}
	j := x / 3
	if j >= 16 || x%3 == 2 {
		return -1
	}
	return y*16 + j
}
