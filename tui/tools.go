package tui

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/internal/printer"
)

// The App's tools beyond the three panes: the full analysis of the
// selected packet, marks, search and saving.

func init() {
	AddKey(Key{'m', "m", "mark or unmark the packet", func(a *App) bool { return a.toggleMark() }})
	AddKey(Key{']', "]", "next marked packet", func(a *App) bool { return a.nextMark(1) }})
	AddKey(Key{'[', "[", "previous marked packet", func(a *App) bool { return a.nextMark(-1) }})
	AddKey(Key{'f', "f", "find: text in the summary and the detail tree, re:REGEXP there too, hex:0a1b.. in the bytes, or a display filter (filter:EXPR); wraps at the end; Ctrl-N finds the next", func(a *App) bool {
		a.prompt("Find: ", a.find)
		return true
	}})
	AddKey(Key{'o', "o", "order the list by a column: no, time, src, dst, proto, len, qp, psn, info or a --columns field (-psn: descending; empty: capture order)", func(a *App) bool {
		a.prompt("Order by (a column; - for descending): ", a.sortList)
		return true
	}})
	AddKey(Key{'w', "w", "write the shown packets to a pcapng file", func(a *App) bool {
		a.prompt("Write the shown packets to: ", a.save)
		return true
	}})
}

// detailer tracks the capture again up to the selected packet, so the
// detail tree shows its rocetap.analysis.* and rocetap.mpt.* fields. It
// goes on from where it stopped when the selection moves forward, and
// starts again when it moves back.
type detailer struct {
	mu   sync.Mutex
	tr   *flow.Tracker
	next int          // the next packet index to track
	gen  atomic.Int64 // the latest request
	p    decode.Packet
	buf  []byte
	// pending counts the requests not yet dropped or handed to the UI
	// goroutine (what a test waits on before it looks at the tree)
	pending atomic.Int32
}

// analyze tracks up to packet pi in the background, then shows its full
// detail tree if pi is still the selected packet.
func (a *App) analyze(pi int) {
	if a.o.NewTracker == nil {
		return
	}
	d := &a.det
	gen := d.gen.Add(1)
	d.pending.Add(1)
	go func() {
		defer d.pending.Add(-1)
		time.Sleep(100 * time.Millisecond) // let a scroll settle
		d.mu.Lock()
		if d.gen.Load() != gen {
			d.mu.Unlock()
			return
		}
		if d.tr == nil || pi < d.next {
			d.tr, d.next = a.o.NewTracker(nil), 0
		}
		for ; d.next <= pi; d.next++ {
			if d.gen.Load() != gen && d.next < pi { // a newer request: it goes on from here
				d.mu.Unlock()
				return
			}
			var err error
			if d.buf, err = a.ix.Decode(d.next, &d.p, d.buf); err != nil {
				d.mu.Unlock()
				return
			}
			d.tr.Track(&d.p)
		}
		lines := printer.Lines(&d.p, nil)
		d.mu.Unlock() // before queueing: the UI goroutine may want the lock
		a.app.QueueUpdateDraw(func() {
			if a.selected != pi || d.gen.Load() != gen { // moved, or a filter showed no packet
				return
			}
			a.lines = lines
			e, _ := a.ix.Entry(pi)
			a.buildTree(e, true)
			a.hl = [2]int{-1, 0}
			a.drawHex()
		})
	}()
}

// toggleMark marks or unmarks the selected packet.
func (a *App) toggleMark() bool {
	if a.selected < 0 {
		return true
	}
	a.content.toggleMark(a.selected)
	return true
}

// nextMark selects the next (d 1) or previous (d -1) marked packet shown.
func (a *App) nextMark(d int) bool {
	r, _ := a.list.GetSelection()
	for pos := r - 1 + d; pos >= 0 && pos < a.content.count(); pos += d {
		if pi, _ := a.content.packetAt(pos); a.content.marked(pi) {
			a.list.Select(pos+1, 0)
			return true
		}
	}
	a.flash("no more marked packets that way")
	return true
}

// find searches the shown packets after the selected one for what
// find's text asks: "hex:..." bytes, "filter:EXPR" a display filter,
// else text in the summary line (case-insensitive).
func (a *App) find(text string) {
	a.lastFind = text
	var match func(p *decode.Packet, data []byte) bool
	switch {
	case strings.HasPrefix(text, "hex:"):
		want, err := hex.DecodeString(strings.NewReplacer(" ", "", ":", "").Replace(text[4:]))
		if err != nil || len(want) == 0 {
			a.flash(fmt.Sprintf("find %q: want hex digits after hex:, e.g. hex:12b7", text))
			return
		}
		match = func(_ *decode.Packet, data []byte) bool { return bytes.Contains(data, want) }
	case strings.HasPrefix(text, "filter:"):
		flt, err := filter.Compile(text[7:])
		if err != nil {
			a.flash("find: " + err.Error())
			return
		}
		match = func(p *decode.Packet, _ []byte) bool { return flt.Match(p) }
	case strings.HasPrefix(text, "re:"):
		re, err := regexp.Compile(text[3:])
		if err != nil {
			a.flash(fmt.Sprintf("find %q: %v", text, err))
			return
		}
		var b []byte
		v := printer.NewVerbose()
		match = func(p *decode.Packet, _ []byte) bool {
			b = v.Append(printer.AppendSummary(b[:0], p), p)
			return re.Match(b)
		}
	default:
		want := strings.ToLower(text)
		var b []byte
		v := printer.NewVerbose()
		match = func(p *decode.Packet, _ []byte) bool {
			// The summary and the detail tree (what -V prints).
			b = v.Append(printer.AppendSummary(b[:0], p), p)
			return strings.Contains(strings.ToLower(string(b)), want)
		}
	}
	r, _ := a.list.GetSelection()
	var p decode.Packet
	var buf []byte
	n := a.content.count()
	for i := range n { // from the packet after the selected one, wrapping at the end
		pos := (r + i) % n // r-1 is the selected one
		pi, _ := a.content.packetAt(pos)
		data, err := a.ix.Decode(pi, &p, buf)
		if err != nil {
			break
		}
		buf = data
		if match(&p, data) {
			a.list.Select(pos+1, 0)
			if pos < r {
				a.flash(fmt.Sprintf("find %q: wrapped to the start", text))
			}
			return
		}
	}
	a.flash(fmt.Sprintf("find %q: no match", text))
}

// save writes the shown packets to a pcapng file, in the background. It
// never loses a file: the open capture is refused, an existing file is
// replaced only when the user says so, and the packets go to a temporary
// file renamed into place once complete (internal/outfile). "~/" is the
// home directory.
func (a *App) save(path string) {
	path = strings.TrimSpace(path)
	if path == "" {
		return
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok || path == "~" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, rest)
		}
	}
	if a.ix.IsCapture(path) {
		a.flash(fmt.Sprintf("%s is the capture open here: write to another file", path))
		return
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		a.prompt(fmt.Sprintf("%s exists. Replace it? (y/N) ", filepath.Base(path)), func(answer string) {
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				return
			}
			a.saveTo(path, true)
		})
		return
	}
	a.saveTo(path, false)
}

func (a *App) saveTo(path string, force bool) {
	a.flash("writing " + path + "…")
	go func() {
		n, err := a.writeShown(path, force)
		a.app.QueueUpdateDraw(func() {
			if err != nil {
				a.flash(fmt.Sprintf("not written: %v", err))
				return
			}
			a.flash(fmt.Sprintf("wrote %d packets to %s", n, path))
		})
	}()
}

func (a *App) writeShown(path string, force bool) (int, error) {
	f, err := outfile.Create(path, outfile.Options{Force: force})
	if err != nil {
		return 0, err
	}
	defer f.Abort() // nothing after Commit
	w, err := capture.NewFileWriter(f, "pcapng", decode.LinkTypeEthernet)
	if err != nil {
		return 0, err
	}
	var buf []byte
	n := a.content.count()
	for pos := 0; pos < n; pos++ {
		pi, _ := a.content.packetAt(pos)
		data, e, err := a.ix.Read(pi, buf)
		if err != nil {
			return 0, err
		}
		buf = data
		if err := w.WritePacket(capture.PacketInfo{Timestamp: e.Time, CaptureLength: len(data), Length: e.Length, InterfaceIndex: e.Interface, LinkType: e.LinkType}, data); err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return n, f.Commit()
}

// findNext repeats the last find (Ctrl-N).
func (a *App) findNext() {
	if a.lastFind != "" {
		a.find(a.lastFind)
	}
}

// How a marked row looks: a sign before its number and its cells
// underlined and bold, over the row's own colors, so that a marked NAK
// stays red and a mark never looks like the cursor (which reverses the
// row).
const (
	markSign  = "●"
	markAttrs = tcell.AttrUnderline | tcell.AttrBold
)

// sortList orders the list by the column named (o): a built-in column's
// name (no, time, src, dst, proto, len, qp, psn, info) or a field column's,
// "-" before it for descending, nothing for capture order. The selected
// packet stays selected.
func (a *App) sortList(spec string) {
	spec = strings.TrimSpace(spec)
	desc := strings.HasPrefix(spec, "-")
	name := strings.TrimPrefix(spec, "-")
	col := -1
	if name != "" {
		for i, c := range a.content.cols {
			if c.builtin >= 0 && ColumnNames[c.builtin] == name || c.builtin < 0 && c.title == name || name == "length" && c.builtin == 5 {
				col = i
			}
		}
		if col < 0 {
			a.flash(fmt.Sprintf("order by %q: want a column of the list (%s, or a --columns field), - before it for descending, or nothing for capture order", spec, strings.Join(ColumnNames, ", ")))
			return
		}
	}
	a.content.sortBy(col, desc)
	if a.selected >= 0 {
		a.list.Select(a.content.positionOf(a.selected)+1, 0)
	}
	a.list.SetOffset(0, 0)
	if col < 0 {
		a.flash("capture order")
	} else {
		a.flash("ordered by " + spec)
	}
}
