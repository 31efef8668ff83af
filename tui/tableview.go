package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
)

// tableView is what the views that list things one per row under a
// header share (sessions, expert findings, ULP operations): the bordered
// table, each row's session (l opens its ladder), and Enter handing the
// selected row on.
type tableView struct {
	name     string
	table    *tview.Table
	sessions []uint32 // each row's session (0: none)
}

// newTableView makes the table of view name, titled title; enter is
// called with the index (0-based, the header not counted) of the row
// Enter selects.
func newTableView(name, title string, enter func(row int)) *tableView {
	v := &tableView{name: name, table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)}
	v.table.SetBorder(true).SetTitle(title)
	v.table.SetSelectedFunc(func(r, _ int) {
		if r >= 1 && r <= len(v.sessions) {
			enter(r - 1)
		}
	})
	return v
}

func (v *tableView) Name() string               { return v.name }
func (v *tableView) Primitive() tview.Primitive { return v.table }

// pickedSession is the selected row's session (l opens its ladder).
func (v *tableView) pickedSession() uint32 {
	if r, _ := v.table.GetSelection(); r >= 1 && r <= len(v.sessions) {
		return v.sessions[r-1]
	}
	return 0
}

// reset empties the table but for its header.
func (v *tableView) reset(header []string) {
	v.table.Clear()
	for c, h := range header {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	v.sessions = v.sessions[:0]
}

// add appends a row of session's; its texts come from packets, so they
// are sanitized. style, when not nil, styles each cell.
func (v *tableView) add(texts []string, session uint32, style func(col int, cell *tview.TableCell)) {
	r := len(v.sessions) + 1
	for c, text := range texts {
		cell := tview.NewTableCell(tview.Escape(decode.Sanitize(text)))
		if style != nil {
			style(c, cell)
		}
		v.table.SetCell(r, c, cell)
	}
	v.sessions = append(v.sessions, session)
}
