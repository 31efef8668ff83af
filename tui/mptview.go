package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// The MPT view: every remote access checked against the responder's
// memory protection table (rocetap tui --mpt), with its MR, offset,
// VA→PA translation and verdict, and the responses that disagree with
// the MPT. The checks are the tracker's (decode.MPTCheck): a tracker of
// its own follows the capture in the background.

func init() {
	AddKey(Key{'M', "M", "MPT checks of the remote accesses (with --mpt; Enter goes to the frame)", func(a *App) bool { return a.showRDMAView("mpt") }})
}

// noMPT is what the view says when no access was checked.
const noMPT = "no MPT: start rocetap tui with --mpt FILE"

// mptRow is one checked access, or one response that disagrees with the
// MPT.
type mptRow struct {
	pi       int32
	session  uint32
	response bool
	opcode   decode.Opcode
	c        decode.MPTCheck
	va       uint64
	hasVA    bool
}

var mptCols = []string{"No.", "Access", "RKey", "MR", "Offset", "VA → PA", "Verdict", "Finding", "Why"}

// mptContent is the view's table content (UI goroutine only).
type mptContent struct {
	tview.TableContentReadOnly
	rows []mptRow
	msg  string // shown instead of rows when there are none
}

// Without rows, the table is one cell: the message.

func (c *mptContent) GetRowCount() int { return 1 + len(c.rows) }

func (c *mptContent) GetColumnCount() int {
	if len(c.rows) == 0 {
		return 1
	}
	return len(mptCols)
}

func (c *mptContent) GetCell(r, col int) *tview.TableCell {
	if len(c.rows) == 0 {
		if r == 0 && col == 0 {
			return tview.NewTableCell(tview.Escape(c.msg)).SetSelectable(false)
		}
		return nil
	}
	if col < 0 || col >= len(mptCols) {
		return nil
	}
	if r == 0 {
		return tview.NewTableCell(mptCols[col]).SetSelectable(false).SetTextColor(tcell.ColorYellow).SetAttributes(tcell.AttrBold)
	}
	if r-1 >= len(c.rows) {
		return nil
	}
	row := &c.rows[r-1]
	cell := tview.NewTableCell(tview.Escape(decode.Sanitize(row.cell(col))))
	switch col {
	case 0, 4:
		cell.SetAlign(tview.AlignRight)
	case len(mptCols) - 1:
		cell.SetExpansion(1)
	}
	return cell.SetTextColor(row.color())
}

func hex64(v uint64) string { return fmt.Sprintf("0x%016x", v) }

func hexKey(v uint32) string { return fmt.Sprintf("0x%08x", v) }

// cell is the text of column col.
func (r *mptRow) cell(col int) string {
	c := &r.c
	switch col {
	case 0:
		return strconv.Itoa(int(r.pi) + 1)
	case 1:
		if r.response {
			return r.opcode.String()
		}
		return c.Op.String()
	case 2:
		if !r.response {
			return hexKey(c.RKey)
		}
	case 3:
		if c.HasMR {
			s := hexKey(c.MR)
			if c.Window {
				s += " (window)"
			}
			return s
		}
	case 4:
		if c.HasOffset {
			return strconv.FormatUint(c.Offset, 10)
		}
	case 5:
		if !r.hasVA {
			return ""
		}
		pa := "?"
		if c.HasPA {
			pa = hex64(c.PA)
		}
		return hex64(r.va) + " → " + pa
	case 6:
		return c.VerdictName
	case 7:
		return c.Finding.String()
	case 8:
		return c.Why
	}
	return ""
}

// color: responses that disagree with the MPT red, forbidden accesses
// yellow, allowed ones white.
func (r *mptRow) color() tcell.Color {
	switch {
	case r.response:
		return tcell.ColorRed
	case !r.c.Allowed:
		return tcell.ColorYellow
	}
	return tcell.ColorWhite
}

// mptView tracks the capture with a tracker of its own (App.NewTracker),
// going on from where it stopped as the index grows.
type mptView struct {
	a     *App
	table *tview.Table
	c     *mptContent
	job   bgJob

	// The job's state (see bgJob).
	started   bool // a tracker was asked for
	noTracker bool // and the App has none
	tr        *flow.Tracker
	next      int // the next packet to track
	acc       []mptRow
}

func newMPTView(a *App) *mptView {
	v := &mptView{a: a, c: &mptContent{msg: "checking…"}}
	v.table = tview.NewTable().SetContent(v.c).SetSelectable(true, false).SetFixed(1, 0)
	v.table.SetBorder(true)
	v.table.SetSelectedFunc(func(r, _ int) {
		if r >= 1 && r <= len(v.c.rows) {
			a.GoTo(int(v.c.rows[r-1].pi))
		}
	})
	v.setTitle(0, 0, 0)
	return v
}

func (v *mptView) Name() string               { return "mpt" }
func (v *mptView) Primitive() tview.Primitive { return v.table }

func (v *mptView) Refresh(a *App) { v.job.start(v.check) }

// pickedSession is the session of the selected row's packet (l opens its
// ladder).
func (v *mptView) pickedSession() uint32 {
	r, _ := v.table.GetSelection()
	if r >= 1 && r <= len(v.c.rows) {
		return v.c.rows[r-1].session
	}
	return 0
}

// setTitle names the rows and, while tracking, how far it got.
func (v *mptView) setTitle(rows, tracked, n int) {
	var b strings.Builder
	b.WriteString(" MPT checks: " + strconv.Itoa(rows) + " rows")
	if tracked < n {
		b.WriteString(", checking packet " + strconv.Itoa(tracked+1) + " of " + strconv.Itoa(n) + "…")
	}
	b.WriteString(" (responses only when they disagree; Enter: go to the frame, l: ladder, Esc: back) ")
	v.table.SetTitle(b.String())
}

// check tracks the packets indexed since the last run and keeps those
// with an MPT check (the job).
func (v *mptView) check() {
	if !v.started {
		v.started = true
		v.tr = v.a.NewTracker(nil)
		v.noTracker = v.tr == nil
	}
	ix := v.a.ix
	n := ix.Len()
	done, _ := ix.Done()
	var p decode.Packet
	var buf []byte
	last := time.Now()
	for ; !v.noTracker && v.next < n; v.next++ {
		var err error
		if buf, err = ix.Decode(v.next, &p, buf); err != nil {
			break
		}
		v.tr.Track(&p)
		if time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			v.publish(v.next, n, false)
		}
		c := &p.Analysis.MPT
		resp := !c.Checked && (c.Finding == decode.MPTAccepted || c.Finding == decode.MPTRejected)
		if !c.Checked && !resp {
			continue
		}
		r := mptRow{pi: int32(v.next), session: p.Analysis.Session, response: resp, opcode: p.BTH.Opcode, c: *c}
		switch {
		case p.Has&decode.HdrRETH != 0:
			r.va, r.hasVA = p.RETH.VA, true
		case p.Has&decode.HdrAtomicETH != 0:
			r.va, r.hasVA = p.AtomicETH.VA, true
		}
		v.acc = append(v.acc, r)
	}
	v.publish(n, n, v.noTracker || done && v.next >= ix.Len())
}

// publish hands the rows found so far to the UI goroutine: tracked of n
// packets indexed are tracked; all says that is the whole capture.
func (v *mptView) publish(tracked, n int, all bool) {
	rows := v.acc[:len(v.acc):len(v.acc)]
	msg := "checking…"
	if all {
		msg = noMPT
	}
	v.a.app.QueueUpdateDraw(func() {
		first := len(v.c.rows) == 0
		v.c.rows, v.c.msg = rows, msg
		if first && len(rows) > 0 {
			v.table.Select(1, 0)
		}
		v.setTitle(len(rows), tracked, n)
	})
}
