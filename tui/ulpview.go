package tui

import (
	"strconv"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
)

// The ULP view (u): the upper-layer protocol operations, one per row: for
// NVMe-oF each command with its queue, LBAs, status, latency, bytes and
// frames, as the index's tracker recorded them (flow.Options.ULPOps) when
// they completed (and, once the capture is read, those never completed).
// Enter shows the command's packets (rocetap.nvme.cmd_frame).

func init() {
	AddKey(Key{'u', "u", "upper-layer protocol operations: NVMe-oF commands (Enter shows a command's packets)", func(a *App) bool { a.ShowView("ulp"); return a.hasView("ulp") }})
}

type ulpView struct {
	table    *tview.Table
	frames   []int32
	sessions []uint32
}

func newULPView(a *App) *ulpView {
	v := &ulpView{table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)}
	v.table.SetBorder(true).SetTitle(" ULP operations (Enter: show the command's packets, l: ladder, Esc: back) ")
	v.table.SetSelectedFunc(func(r, _ int) {
		if r < 1 || r > len(v.frames) {
			return
		}
		a.SetFilter("rocetap.nvme.cmd_frame == " + strconv.Itoa(int(v.frames[r-1])))
		a.ShowView("main")
	})
	return v
}

func (v *ulpView) Name() string               { return "ulp" }
func (v *ulpView) Primitive() tview.Primitive { return v.table }

// pickedSession is the selected operation's session (l opens its ladder).
func (v *ulpView) pickedSession() uint32 {
	if r, _ := v.table.GetSelection(); r >= 1 && r <= len(v.sessions) {
		return v.sessions[r-1]
	}
	return 0
}

// ulpColumns are the view's columns.
var ulpColumns = []string{"Session", "Queue", "Command", "CID", "NSID", "LBA", "Blocks", "Status", "Latency", "Bytes", "Frames"}

// ulpRowCells renders one NVMe-oF operation.
func ulpRowCells(o *flow.NVMeOp) []string {
	q := "?"
	if o.HasQID {
		q = strconv.Itoa(int(o.QID))
	}
	lba, blocks, nsid := "", "", ""
	if o.HasLBA {
		lba, blocks = strconv.FormatUint(o.SLBA, 10), strconv.Itoa(int(o.NLB)+1)
	}
	if o.Opcode != decode.NVMeFabrics && o.NSID != 0 {
		nsid = strconv.FormatUint(uint64(o.NSID), 10)
	}
	status, lat, frames := "never completed", "", strconv.Itoa(int(o.Frame))
	if o.Done {
		status, lat = o.StatusName(), printer.Duration(o.Latency)
		frames += "-" + strconv.Itoa(int(o.CQEFrame))
	}
	return []string{strconv.Itoa(int(o.Session)), q, o.Command(), strconv.Itoa(int(o.CID)), nsid, lba, blocks, status, lat, strconv.FormatUint(o.Bytes, 10), frames}
}

// Refresh lists the operations recorded so far.
func (v *ulpView) Refresh(a *App) {
	v.table.Clear()
	for c, h := range ulpColumns {
		v.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow))
	}
	v.frames, v.sessions = v.frames[:0], v.sessions[:0]
	a.ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		l, ok := t.ULPLinker(decode.ULPNVMe).(*flow.NVMeLinker)
		if !ok {
			return
		}
		for i := range l.Ops() {
			o := &l.Ops()[i]
			r := len(v.frames) + 1
			for c, text := range ulpRowCells(o) {
				cell := tview.NewTableCell(tview.Escape(decode.Sanitize(text)))
				if c == 3 || c >= 5 && c != 7 {
					cell.SetAlign(tview.AlignRight)
				}
				if c == 7 && o.Done && o.Status != 0 || !o.Done && c == 7 {
					cell.SetTextColor(tcell.ColorRed)
				}
				v.table.SetCell(r, c, cell)
			}
			v.frames = append(v.frames, o.Frame)
			v.sessions = append(v.sessions, o.Session)
		}
	})
}
