package tui

import (
	"strconv"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
)

// AddStandardViews adds the sessions (s) and expert (e) views, and the
// RDMA views (AddRDMAViews).
func AddStandardViews(a *App) {
	a.AddView(newSessionsView(a))
	a.AddView(newExpertView(a))
	AddRDMAViews(a)
}

func init() {
	AddKey(Key{'s', "s", "sessions (Enter shows a session's packets)", func(a *App) bool { a.ShowView("sessions"); return a.hasView("sessions") }})
	AddKey(Key{'e', "e", "expert information (Enter goes to the frame)", func(a *App) bool { a.ShowView("expert"); return a.hasView("expert") }})
}

func (a *App) hasView(name string) bool { return a.views[name] != nil }

// sessionsView is the flow tracker's session table.
type sessionsView struct {
	table   *tview.Table
	ids     []uint32
	filters []string // the filter that shows each session's packets
}

func newSessionsView(a *App) *sessionsView {
	v := &sessionsView{table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)}
	v.table.SetBorder(true).SetTitle(" Sessions (Enter: show its packets, l: ladder, Esc: back) ")
	v.table.SetSelectedFunc(func(r, _ int) {
		if r < 1 || r > len(v.ids) {
			return
		}
		a.SetFilter(v.filters[r-1])
		a.ShowView("main")
	})
	return v
}

func (v *sessionsView) Name() string               { return "sessions" }
func (v *sessionsView) Primitive() tview.Primitive { return v.table }

// pickedSession is the selected row's session (l opens its ladder).
func (v *sessionsView) pickedSession() uint32 {
	if r, _ := v.table.GetSelection(); r >= 1 && r <= len(v.ids) {
		return v.ids[r-1]
	}
	return 0
}

// Refresh shows the sessions as `rocetap sessions` prints them: the same
// columns (printer.SessionColumns), the same cells.
func (v *sessionsView) Refresh(a *App) {
	v.table.Clear()
	for c, h := range printer.SessionColumns() {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	start := a.ix.Start()
	v.ids, v.filters = v.ids[:0], v.filters[:0]
	a.ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		for _, s := range t.Sessions() {
			r := len(v.ids) + 1
			id, filter := strconv.Itoa(int(s.ID)), "rocetap.session.id == "+strconv.Itoa(int(s.ID))
			if len(s.Merged()) > 0 {
				// its packets before a merge carry the merged sessions' IDs
				filter = "rocetap.session.id in {" + strconv.Itoa(int(s.ID))
				for _, m := range s.Merged() {
					id += " +" + strconv.Itoa(int(m))
					filter += " " + strconv.Itoa(int(m))
				}
				filter += "}"
			}
			v.filters = append(v.filters, filter)
			cells := printer.SessionRow(s, start)
			cells[0] = id // with the sessions merged into it
			for c, text := range cells {
				cell := tview.NewTableCell(tview.Escape(decode.Sanitize(text)))
				if c >= 5 && c < len(cells)-1 {
					cell.SetAlign(tview.AlignRight) // the counts
				}
				v.table.SetCell(r, c, cell)
			}
			v.ids = append(v.ids, s.ID)
		}
	})
}

// expertView lists the tracker's findings by severity and kind.
type expertView struct {
	table    *tview.Table
	frames   []int
	sessions []uint32
}

func newExpertView(a *App) *expertView {
	v := &expertView{table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)}
	v.table.SetBorder(true).SetTitle(" Expert information (Enter: go to the frame, l: ladder, Esc: back) ")
	v.table.SetSelectedFunc(func(r, _ int) {
		if r >= 1 && r <= len(v.frames) && v.frames[r-1] > 0 {
			a.GoTo(v.frames[r-1] - 1)
		}
	})
	return v
}

func (v *expertView) Name() string               { return "expert" }
func (v *expertView) Primitive() tview.Primitive { return v.table }

// pickedSession is the selected event's session (l opens its ladder).
func (v *expertView) pickedSession() uint32 {
	if r, _ := v.table.GetSelection(); r >= 1 && r <= len(v.sessions) {
		return v.sessions[r-1]
	}
	return 0
}

var sevColors = map[decode.Severity]tcell.Color{decode.SevChat: tcell.ColorSilver, decode.SevNote: tcell.ColorTeal,
	decode.SevWarning: tcell.ColorYellow, decode.SevError: tcell.ColorRed}

// Refresh shows the findings as `rocetap expert` prints them: grouped by
// kind, errors first, each group's heading with its count, then its
// events with frame, time and session ("... and N more" past the kept
// ones). A heading row goes to its group's first frame.
func (v *expertView) Refresh(a *App) {
	v.table.Clear()
	for c, h := range []string{"Frame", "Time", "Session", "Text"} {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	v.frames, v.sessions = v.frames[:0], v.sessions[:0]
	start := a.ix.Start()
	a.ix.WithTracker(func(_ *flow.Tracker, l *flow.ExpertLog) {
		add := func(cells []string, frame int, session uint32, col tcell.Color, bold bool) {
			r := len(v.frames) + 1
			for c, text := range cells {
				cell := tview.NewTableCell(tview.Escape(decode.Sanitize(text))).SetTextColor(col)
				if bold {
					cell.SetAttributes(tcell.AttrBold)
				}
				v.table.SetCell(r, c, cell)
			}
			v.frames = append(v.frames, frame)
			v.sessions = append(v.sessions, session)
		}
		for _, g := range l.Groups() { // errors first
			col := sevColors[g.Severity]
			first, firstSess := 0, uint32(0)
			if len(g.Events) > 0 {
				first, firstSess = g.Events[0].Frame, g.Events[0].Session
			}
			// The severity where the frames go, the heading in Text: a
			// wide heading does not widen the first column.
			add([]string{g.Severity.String(), "", "", printer.ExpertGroupTitle(&g)}, first, firstSess, col, true)
			for i := range g.Events {
				e := &g.Events[i]
				c := printer.ExpertRow(e, start)
				add([]string{"  " + c[0], c[1], c[2], c[3]}, e.Frame, e.Session, col, false)
			}
			if n := g.Count - uint64(len(g.Events)); n > 0 {
				add([]string{"", "", "", "... and " + strconv.FormatUint(n, 10) + " more"}, 0, 0, col, false)
			}
		}
	})
}
