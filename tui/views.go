package tui

import (
	"fmt"
	"strconv"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
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

var sessionCols = []string{"ID", "Type", "A", "B", "Packets", "Bytes", "Messages", "MTU", "NAK", "Retrans", "Lost", "Paired by"}

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

func (v *sessionsView) Refresh(a *App) {
	v.table.Clear()
	for c, h := range sessionCols {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	v.ids, v.filters = v.ids[:0], v.filters[:0]
	a.ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		for _, s := range t.Sessions() {
			f := s.Findings()
			pkts, bytes, msgs, naks := s.Packets(), s.Bytes(), s.MessageCount(), s.NAKCount()
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
			cells := []string{id, s.Transport, endpoint(s.A), endpoint(s.B), strconv.FormatUint(pkts, 10),
				strconv.FormatUint(bytes, 10), strconv.FormatUint(msgs, 10), strconv.Itoa(int(s.MTU)), strconv.FormatUint(naks, 10),
				strconv.FormatUint(f.Retransmitted, 10), strconv.FormatUint(f.LostPSNs, 10), s.Learned.String()}
			for c, text := range cells {
				v.table.SetCell(r, c, tview.NewTableCell(tview.Escape(decode.Sanitize(text))))
			}
			v.ids = append(v.ids, s.ID)
		}
	})
}

func endpoint(e flow.Endpoint) string {
	return fmt.Sprintf("%s/0x%06x", e.Node(), e.QPN)
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

func (v *expertView) Refresh(a *App) {
	v.table.Clear()
	for c, h := range []string{"Severity", "Kind", "Frame", "Session", "Text"} {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	v.frames, v.sessions = v.frames[:0], v.sessions[:0]
	a.ix.WithTracker(func(_ *flow.Tracker, l *flow.ExpertLog) {
		for _, g := range l.Groups() { // errors first
			for _, e := range g.Events {
				r := len(v.frames) + 1
				frame := ""
				if e.Frame > 0 {
					frame = strconv.Itoa(e.Frame)
				}
				col := sevColors[g.Severity]
				for c, text := range []string{g.Severity.String(), g.Name, frame, strconv.Itoa(int(e.Session)), e.Text} {
					v.table.SetCell(r, c, tview.NewTableCell(tview.Escape(decode.Sanitize(text))).SetTextColor(col))
				}
				v.frames = append(v.frames, e.Frame)
				v.sessions = append(v.sessions, e.Session)
			}
		}
	})
}
