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

// The ULP view (u): the upper-layer protocol operations, one per row: for
// NVMe-oF each command with its queue, LBAs, status, latency, bytes and
// frames, as the index's tracker recorded them (flow.Options.ULPOps) when
// they completed (and, once the capture is read, those never completed);
// then each RPC (NFS over RDMA) with its xid, procedure and COMPOUND ops,
// status, latency, the bytes its chunks moved and its frames, as the
// index pass recorded them (ulpindex.go). Enter shows the operation's
// packets (rocetap.nvme.cmd_frame, rocetap.rpc.call_frame).

func init() {
	AddKey(Key{'u', "u", "upper-layer protocol operations: NVMe-oF commands, RPCs (Enter shows an operation's packets)", func(a *App) bool { a.ShowView("ulp"); return a.hasView("ulp") }})
}

type ulpView struct {
	*tableView
	filters []string // the filter that shows each operation's packets
}

func newULPView(a *App) *ulpView {
	v := &ulpView{}
	v.tableView = newTableView("ulp", " ULP operations (Enter: show the operation's packets, l: ladder, Esc: back) ", func(i int) {
		a.SetFilter(v.filters[i])
		a.ShowView("main")
	})
	return v
}

// ulpColumns are the view's columns.
var ulpColumns = []string{"Session", "Queue", "Command", "CID/XID", "NSID", "LBA", "Blocks", "Status", "Latency", "Bytes", "Frames"}

// Columns of ulpColumns the cells are styled by.
const (
	ulpColID     = 3
	ulpColLBA    = 5
	ulpColStatus = 7
)

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

// rpcRowCells renders one RPC; done says the capture is read (a call
// still waiting was never answered).
func rpcRowCells(r *rpcRec, done bool) []string {
	status, lat, frames := "waiting", "", strconv.Itoa(int(r.callFrame))
	switch {
	case r.replied:
		status, lat = "OK", printer.Duration(r.latency)
		if r.status != "" {
			status = r.status
		}
		frames += "-" + strconv.Itoa(int(r.replyFrame))
	case done:
		status = "never answered"
	}
	return []string{strconv.Itoa(int(r.session)), "", "RPC " + r.name, fmt.Sprintf("0x%08x", r.xid), "", "", "", status, lat, strconv.FormatUint(r.bytes, 10), frames}
}

// ulpStyle aligns the numbers right and shows a failure in red.
func ulpStyle(failed bool) func(int, *tview.TableCell) {
	return func(c int, cell *tview.TableCell) {
		if c == ulpColID || c >= ulpColLBA && c != ulpColStatus {
			cell.SetAlign(tview.AlignRight)
		}
		if c == ulpColStatus && failed {
			cell.SetTextColor(tcell.ColorRed)
		}
	}
}

// Refresh lists the operations recorded so far.
func (v *ulpView) Refresh(a *App) {
	v.reset(ulpColumns)
	v.filters = v.filters[:0]
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
			v.add(ulpRowCells(o), o.Session, ulpStyle(!o.Done || o.Status != 0))
			v.filters = append(v.filters, "rocetap.nvme.cmd_frame == "+strconv.Itoa(int(o.Frame)))
		}
	})
	done, _ := a.ix.Done()
	a.ix.ulp.rpcCalls(func(r *rpcRec) {
		v.add(rpcRowCells(r, done), r.session, ulpStyle(r.replied && r.status != "" || !r.replied && done))
		v.filters = append(v.filters, "rocetap.rpc.call_frame == "+strconv.Itoa(int(r.callFrame)))
	})
}
