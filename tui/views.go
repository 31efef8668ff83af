package tui

import (
	"fmt"
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
	*tableView
	filters []string // the filter that shows each session's packets
}

func newSessionsView(a *App) *sessionsView {
	v := &sessionsView{}
	v.tableView = newTableView("sessions", sessionsTitle, func(i int) {
		a.SetFilter(v.filters[i])
		a.ShowView("main")
	})
	return v
}

// Refresh shows the sessions as `rocetap sessions` prints them: the same
// columns (printer.SessionColumns), the same cells.
func (v *sessionsView) Refresh(a *App) {
	v.reset(printer.SessionColumns())
	title := sessionsTitle
	start := a.ix.Start()
	v.filters = v.filters[:0]
	a.ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		for _, s := range t.Sessions() {
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
			v.add(cells, s.ID, func(c int, cell *tview.TableCell) {
				if c >= 5 && c < len(cells)-1 {
					cell.SetAlign(tview.AlignRight) // the counts
				}
			})
		}
		if e := t.Evicted(); e.Sessions > 0 {
			// as rocetap sessions says it, on its Evicted: line
			title = fmt.Sprintf(" Sessions: %d more evicted past --max-sessions %d, their later packets started new sessions%s", e.Sessions, t.MaxSessions(), sessionsKeys)
		}
	})
	v.table.SetTitle(title)
}

// sessionsTitle is the sessions view's title; sessionsKeys ends it
// whatever it says before.
const (
	sessionsKeys  = " (Enter: show its packets, l: ladder, Esc: back) "
	sessionsTitle = " Sessions" + sessionsKeys
)

// expertView lists the tracker's findings by severity and kind.
type expertView struct {
	*tableView
	frames []int
}

func newExpertView(a *App) *expertView {
	v := &expertView{}
	v.tableView = newTableView("expert", " Expert information (Enter: go to the frame, l: ladder, Esc: back) ", func(i int) {
		if v.frames[i] > 0 {
			a.GoTo(v.frames[i] - 1)
		}
	})
	return v
}

var sevColors = map[decode.Severity]tcell.Color{decode.SevChat: tcell.ColorSilver, decode.SevNote: tcell.ColorTeal,
	decode.SevWarning: tcell.ColorYellow, decode.SevError: tcell.ColorRed}

// Refresh shows the findings as `rocetap expert` prints them: grouped by
// kind, errors first, each group's heading with its count, then its
// events with frame, time and session ("... and N more" past the kept
// ones). A heading row goes to its group's first frame.
func (v *expertView) Refresh(a *App) {
	v.reset([]string{"Frame", "Time", "Session", "Text"})
	v.frames = v.frames[:0]
	start := a.ix.Start()
	a.ix.WithTracker(func(_ *flow.Tracker, l *flow.ExpertLog) {
		add := func(cells []string, frame int, session uint32, col tcell.Color, bold bool) {
			v.add(cells, session, func(_ int, cell *tview.TableCell) {
				cell.SetTextColor(col)
				if bold {
					cell.SetAttributes(tcell.AttrBold)
				}
			})
			v.frames = append(v.frames, frame)
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
