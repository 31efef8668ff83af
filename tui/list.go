package tui

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/printer"
)

// Columns of the packet list: Wireshark's, then QP and PSN.
var columns = []string{"No.", "Time", "Source", "Destination", "Protocol", "Length", "QP", "PSN", "Info"}

// ColumnNames are the names of the built-in columns in --columns, by
// index into columns.
var ColumnNames = []string{"no", "time", "src", "dst", "proto", "len", "qp", "psn", "info"}

// column is one column of the list: a built-in one (builtin >= 0) or a
// field's values (as -T fields prints them).
type column struct {
	title   string
	builtin int
	field   *decode.Field
}

// ParseColumns reads --columns: a comma-separated list of built-in
// column names (ColumnNames) and field names, in the order to show them.
func ParseColumns(spec string) ([]column, error) {
	var cols []column
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if i := slices.Index(ColumnNames, name); i >= 0 {
			cols = append(cols, column{title: columns[i], builtin: i})
			continue
		}
		f := decode.FieldByName(name)
		if f == nil {
			return nil, fmt.Errorf("--columns: %q is neither a column (%s) nor a field (rocetap fields lists them)", name, strings.Join(ColumnNames, ", "))
		}
		cols = append(cols, column{title: name, builtin: -1, field: f})
	}
	if len(cols) == 0 {
		return nil, errors.New("--columns: name at least one column")
	}
	return cols, nil
}

// defaultColumns are every built-in column in order.
func defaultColumns() []column {
	cols := make([]column, len(columns))
	for i, t := range columns {
		cols[i] = column{title: t, builtin: i}
	}
	return cols
}

// Row kinds, for colors.
type rowKind uint8

const (
	kindOther rowKind = iota
	kindRequest
	kindResponse
	kindNAK
	kindRetrans
	kindMPT
	kindCRC
)

var kindColors = [...]struct{ fg, bg tcell.Color }{
	kindOther:    {tcell.ColorSilver, tcell.ColorDefault},
	kindRequest:  {tcell.ColorWhite, tcell.ColorDefault},
	kindResponse: {tcell.ColorLightGreen, tcell.ColorDefault},
	kindNAK:      {tcell.ColorRed, tcell.ColorDefault},
	kindRetrans:  {tcell.ColorBlack, tcell.ColorYellow},
	kindMPT:      {tcell.ColorWhite, tcell.ColorPurple},
	kindCRC:      {tcell.ColorWhite, tcell.ColorMaroon},
}

// kindOf says how a packet is colored.
func kindOf(p *decode.Packet, ev decode.Event) rowKind {
	switch {
	case p.ICRCStatus == decode.CRCBad || p.VCRCStatus == decode.CRCBad:
		return kindCRC
	case ev&(decode.EventMPTViolation|decode.EventMPTAccepted|decode.EventMPTRejected) != 0:
		return kindMPT
	case ev&(decode.EventRetransmission|decode.EventDuplicate|decode.EventOutOfOrder|decode.EventPSNGap) != 0:
		return kindRetrans
	case p.Has&decode.HdrAETH != 0 && p.AETH.Syndrome>>5 != decode.AETHAck:
		return kindNAK
	case p.Has&decode.HdrBTH == 0:
		return kindOther
	case p.BTH.Opcode.IsResponse():
		return kindResponse
	case p.BTH.Opcode.IsRequest():
		return kindRequest
	}
	return kindOther
}

// row is one rendered line of the packet list.
type row struct {
	cells [len9]string
	extra []string // the field columns' values, in column order
	kind  rowKind
}

const len9 = 9

// rowBuf is the scratch of rendering rows, reused from row to row: the
// bytes of a row's cells and where each ends, the field values and the
// ULP analysis (ulpRow).
type rowBuf struct {
	b     []byte
	ends  [len9]int // where each built-in column's cell ends in b
	extra []int     // where each field column's cell ends
	vals  []decode.Value
	ulp   ulpScratch
}

// render appends the cells of packet p (decoded, with its index entry's
// findings) to rb.b: the built-in columns', then the values of the field
// columns of cols.
func (rb *rowBuf) render(p *decode.Packet, e Entry, cols []column, tf printer.TimeFormat) {
	b := rb.b[:0]
	b = strconv.AppendInt(b, int64(e.Number), 10)
	rb.ends[0] = len(b)
	b = printer.AppendTime(b, p, tf, 0) // TimeDeltaShown: GetCell
	rb.ends[1] = len(b)
	b = printer.AppendAddr(b, p, true)
	rb.ends[2] = len(b)
	b = printer.AppendAddr(b, p, false)
	rb.ends[3] = len(b)
	b = append(b, printer.Protocol(p)...)
	rb.ends[4] = len(b)
	b = strconv.AppendInt(b, int64(p.Frame.Len), 10) // the frame's, as decode shows it (an ERF record's wire length, not the record's)
	rb.ends[5] = len(b)
	if p.Has&decode.HdrBTH != 0 {
		b = decode.AppendHex(b, uint64(p.BTH.DestQP), 6)
		rb.ends[6] = len(b)
		b = strconv.AppendUint(b, uint64(p.BTH.PSN), 10)
	} else {
		rb.ends[6] = len(b)
	}
	rb.ends[7] = len(b)
	p.Analysis.Tracked, p.Analysis.Session, p.Analysis.Events = e.Session != 0 || e.Events != 0, e.Session, e.Events
	if e.ulpText != "" {
		b = printer.AppendInfoULP(b, p, e.ulpText)
	} else {
		b = printer.AppendInfo(b, p) // sanitized by the printer
	}
	rb.ends[8] = len(b)
	rb.extra = rb.extra[:0]
	for _, col := range cols {
		if col.field != nil {
			b = appendFieldText(b, col.field, p, &rb.vals)
			rb.extra = append(rb.extra, len(b))
		}
	}
	rb.b = b
}

// cell is built-in column i's cell of the row rendered last.
func (rb *rowBuf) cell(i int) []byte {
	if i == 0 {
		return rb.b[:rb.ends[0]]
	}
	return rb.b[rb.ends[i-1]:rb.ends[i]]
}

// rowOf renders packet p (decoded, with its index entry's findings) and
// the values of the field columns of cols. Its cells are pieces of one
// string, the row's only allocation (with extra's slice when cols has
// field columns).
func rowOf(p *decode.Packet, e Entry, cols []column, tf printer.TimeFormat, rb *rowBuf) row {
	rb.render(p, e, cols, tf)
	var r row
	text := string(rb.b)
	start := 0
	for i, end := range rb.ends {
		r.cells[i] = text[start:end]
		start = end
	}
	if len(rb.extra) > 0 {
		r.extra = make([]string, len(rb.extra))
		for i, end := range rb.extra {
			r.extra[i] = text[start:end]
			start = end
		}
	}
	r.kind = kindOf(p, e.Events)
	return r
}

// listContent is the packet list's table content: the rows of the packets
// shown (all, or those a filter selected), rendered on demand from the
// index and kept in a small cache: never a row per packet in memory.
type listContent struct {
	tview.TableContentReadOnly
	ix *Index

	mu     sync.Mutex
	shown  []int32       // packet indexes shown; nil: all packets
	cache  map[int]int32 // the row cached of a packet index: its place in rows
	rows   []row         // (a map's value over 128 bytes is allocated on its own)
	marks  map[int]bool
	cols   []column       // the columns, in order (--columns)
	widths map[string]int // the widest cell each column has shown (stableWidth)
	// sortCol (-1: capture order), sortDesc and order: the list sorted
	// by a column (sortBy); order is the packets in that order.
	sortCol  int
	sortDesc bool
	order    []int32
	tf       printer.TimeFormat // the Time column's format (-t)
	// narrow: the screen is narrower than narrowWidth (set before each
	// draw).
	narrow atomic.Bool
	p      decode.Packet
	buf    []byte
	rb     rowBuf // (p, buf and rb: the scratch of rendering a row)
	// narrowCols: cols without QP and PSN (visible; setColumns)
	narrowCols []column
	// retro: the index's count of packets tagged after they were indexed
	// (Index.tagEarlier) when the cache was last valid
	retro uint64
}

const rowCacheSize = 1024

func newListContent(ix *Index) *listContent {
	c := &listContent{ix: ix, cache: map[int]int32{}, marks: map[int]bool{}, sortCol: -1}
	c.setColumns(defaultColumns())
	return c
}

func (c *listContent) toggleMark(pi int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marks[pi] {
		delete(c.marks, pi)
	} else {
		c.marks[pi] = true
	}
}

// markCount is the number of marked packets.
func (c *listContent) markCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.marks)
}

func (c *listContent) marked(pi int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.marks[pi]
}

// setShown shows the packets of the list shown (nil: all).
func (c *listContent) setShown(shown []int32) {
	c.mu.Lock()
	c.shown = shown
	c.mu.Unlock()
	c.resort()
}

// sortBy orders the list by a column (an index of c.cols), descending
// when desc; col -1 is capture order. No., Time and Length come from the
// index; the other columns' cells are made for every packet shown and
// compared as numbers when both are (PSN, QP), else as text. The order is
// made of the packets shown now (a live capture's later packets join
// when it is sorted again).
func (c *listContent) sortBy(col int, desc bool) {
	c.mu.Lock()
	c.sortCol, c.sortDesc = col, desc
	c.mu.Unlock()
	c.resort()
}

// sortKey is a packet's sort key in a column made from its cells.
type sortKey struct {
	num   float64
	isNum bool
	text  string
}

func (k sortKey) cmp(o sortKey) int {
	if k.isNum && o.isNum {
		return cmp.Compare(k.num, o.num)
	}
	return strings.Compare(k.text, o.text)
}

// cellKey is the sort key of packet pi in column spec; p, buf and rb are
// the caller's scratch, reused across packets: the key's text is the one
// allocation.
func (c *listContent) cellKey(pi int32, spec column, p *decode.Packet, buf *[]byte, rb *rowBuf) sortKey {
	data, err := c.ix.Decode(int(pi), p, *buf)
	if err != nil {
		return sortKey{}
	}
	*buf = data
	var text string
	if spec.field != nil {
		rb.b = appendFieldText(rb.b[:0], spec.field, p, &rb.vals)
		text = string(rb.b)
	} else {
		e, _ := c.ix.Entry(int(pi))
		c.ix.ulpRow(p, &e, &rb.ulp)
		rb.render(p, e, nil, c.tf)
		text = string(rb.cell(spec.builtin))
	}
	k := sortKey{text: text}
	if h, ok := strings.CutPrefix(text, "0x"); ok {
		if u, err := strconv.ParseUint(h, 16, 64); err == nil {
			k.num, k.isNum = float64(u), true
		}
	} else if mayBeFloat(text) {
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			k.num, k.isNum = f, true
		}
	}
	return k
}

// mayBeFloat is false for a text strconv.ParseFloat cannot take, whose
// error it would allocate (two allocations a packet sorted by Source or
// Info): one with a byte no float syntax has (digits, sign, '.', '_',
// exponent, hex digits and prefix, "inf", "infinity", "nan"), or with two
// dots (an IPv4 address).
func mayBeFloat(text string) bool {
	dots := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i] | 0x20; { // (lower case for the letters)
		case text[i] == '.':
			dots++
		case '0' <= text[i] && text[i] <= '9', text[i] == '+', text[i] == '-', text[i] == '_',
			'a' <= c && c <= 'f', strings.IndexByte("pxinty", c) >= 0:
		default:
			return false
		}
	}
	return dots <= 1
}

func (c *listContent) resort() {
	c.mu.Lock()
	col, desc, shown := c.sortCol, c.sortDesc, c.shown
	c.mu.Unlock()
	if col < 0 {
		c.mu.Lock()
		c.order = nil
		c.mu.Unlock()
		return
	}
	var order []int32
	if shown != nil {
		order = slices.Clone(shown)
	} else {
		order = make([]int32, c.ix.Len())
		for i := range order {
			order[i] = int32(i)
		}
	}
	spec := c.cols[min(col, len(c.cols)-1)]
	var cmpFn func(a, b int32) int
	switch spec.builtin {
	case 0, 1, 5: // from the index
		key := func(pi int32) int64 {
			e, _ := c.ix.Entry(int(pi))
			switch spec.builtin {
			case 1:
				return e.Time.UnixNano()
			case 5:
				return int64(e.Length)
			}
			return int64(pi)
		}
		cmpFn = func(a, b int32) int { return cmp.Compare(key(a), key(b)) }
	default:
		keys := make(map[int32]sortKey, len(order))
		var p decode.Packet
		var buf []byte
		var rb rowBuf
		for _, pi := range order {
			keys[pi] = c.cellKey(pi, spec, &p, &buf, &rb)
		}
		cmpFn = func(a, b int32) int { return keys[a].cmp(keys[b]) }
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if desc {
			return cmpFn(b, a)
		}
		return cmpFn(a, b)
	})
	c.mu.Lock()
	c.order = order
	c.mu.Unlock()
}

// count is the number of packets shown.
func (c *listContent) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order != nil {
		return len(c.order)
	}
	if c.shown != nil {
		return len(c.shown)
	}
	return c.ix.Len()
}

// packetAt returns the packet index shown at list position i (0-based).
func (c *listContent) packetAt(i int) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order != nil {
		if i < 0 || i >= len(c.order) {
			return 0, false
		}
		return int(c.order[i]), true
	}
	if c.shown != nil {
		if i < 0 || i >= len(c.shown) {
			return 0, false
		}
		return int(c.shown[i]), true
	}
	return i, i >= 0 && i < c.ix.Len()
}

// positionOf returns the list position of packet index pi, or the nearest
// one after it.
func (c *listContent) positionOf(pi int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order != nil {
		if i := slices.Index(c.order, int32(pi)); i >= 0 {
			return i
		}
		return 0
	}
	if c.shown == nil {
		return pi
	}
	lo, hi := 0, len(c.shown)
	for lo < hi {
		m := (lo + hi) / 2
		if int(c.shown[m]) < pi {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (c *listContent) GetRowCount() int    { return 1 + c.count() }
func (c *listContent) GetColumnCount() int { return len(c.visible()) }

// visible returns the columns shown: below narrowWidth the built-in QP
// and PSN are left out (Info has them).
func (c *listContent) visible() []column {
	if !c.narrow.Load() {
		return c.cols
	}
	return c.narrowCols
}

// setColumns sets the columns (--columns), and those a narrow screen
// shows, made once rather than on every cell drawn.
func (c *listContent) setColumns(cols []column) {
	c.cols, c.narrowCols = cols, nil
	for _, col := range cols {
		if col.builtin != 6 && col.builtin != 7 {
			c.narrowCols = append(c.narrowCols, col)
		}
	}
}

// narrowWidth: below this many columns the list leaves out QP and PSN
// (the Info text has them) so that Info keeps room: at 80×24 it had 9
// characters.
const narrowWidth = 120

func (c *listContent) GetCell(r, vcol int) *tview.TableCell {
	vis := c.visible()
	if vcol < 0 || vcol >= len(vis) {
		return nil
	}
	spec := vis[vcol]
	if r == 0 {
		return tview.NewTableCell(escape(spec.title)).SetSelectable(false).SetTextColor(tcell.ColorYellow).SetAttributes(tcell.AttrBold)
	}
	col := spec.builtin
	pi, ok := c.packetAt(r - 1)
	if !ok {
		return nil
	}
	rw, ok := c.row(pi)
	if !ok {
		return tview.NewTableCell("?")
	}
	var text string
	if col >= 0 {
		text = rw.cells[col]
	} else {
		text = rw.extra[c.fieldIndex(spec.field)]
	}
	if col == 1 && c.tf == printer.TimeDeltaShown {
		// Since the packet shown above it: depends on the filter, so
		// not cached with the row.
		var d int64
		if prev, ok := c.packetAt(r - 2); ok && r >= 2 {
			e, _ := c.ix.Entry(pi)
			pe, _ := c.ix.Entry(prev)
			d = e.Time.UnixNano() - pe.Time.UnixNano()
		}
		var b [24]byte
		text = string(decode.AppendSeconds(b[:0], d, 6)) // (one allocation, the string)
	}
	marked := c.marked(pi)
	if vcol == 0 && marked {
		text = markSign + text
	}
	text = decode.Sanitize(text)
	expand := col == 8 || vcol == len(vis)-1 && !slices.ContainsFunc(vis, func(c column) bool { return c.builtin == 8 })
	if !expand {
		// Stable widths while scrolling: a column is as wide as the
		// widest cell it has shown, not the widest on screen now.
		text = c.stableWidth(spec.title, text, col == 0 || col == 5 || col == 7)
	}
	cell := tview.NewTableCell(escape(text))
	if expand {
		cell.SetExpansion(1) // Info, or the last column without it
	}
	if col == 0 || col == 5 || col == 7 {
		cell.SetAlign(tview.AlignRight)
	}
	k := kindColors[rw.kind]
	cell.SetTextColor(k.fg).SetBackgroundColor(k.bg)
	if marked {
		// A mark keeps the row's colors (a NAK stays red) and differs
		// from the cursor: a sign before the number, the row underlined.
		cell.SetAttributes(markAttrs)
	}
	return cell
}

// escape is tview.Escape without its regular expression, which made
// three allocations a cell drawn: every '[', one or more of tagChar, any
// '[' and a ']' (what tview would take for a style tag) gets a '['
// before its ']'. The text itself when there is none; else one string.
// TestEscape compares it with tview.Escape.
func escape(text string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(text) && tagChar(text[j]) {
			j++
		}
		if j == i+1 {
			continue
		}
		for j < len(text) && text[j] == '[' {
			j++
		}
		if j == len(text) || text[j] != ']' {
			continue
		}
		if last == 0 {
			b.Grow(len(text) + 8)
		}
		b.WriteString(text[last:j])
		b.WriteByte('[')
		last, i = j, j // the ']' goes with what follows
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// tagChar is what tview's escape pattern allows between a style tag's
// brackets: [a-zA-Z0-9_,;: \-\."#].
func tagChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(`_,;: -."#`, c) >= 0
}

// row renders packet pi, from the cache when it can.
func (c *listContent) row(pi int) (row, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.ix.ulp.retro.Load(); n != c.retro {
		c.clearRows() // a row rendered before may lack its ULP
		c.retro = n
	}
	if i, ok := c.cache[pi]; ok {
		return c.rows[i], true
	}
	var err error
	c.buf, err = c.ix.Decode(pi, &c.p, c.buf)
	if err != nil {
		return row{}, false
	}
	e, _ := c.ix.Entry(pi)
	c.ix.ulpRow(&c.p, &e, &c.rb.ulp)
	r := rowOf(&c.p, e, c.cols, c.tf, &c.rb)
	if len(c.rows) >= rowCacheSize {
		c.clearRows()
	}
	c.cache[pi] = int32(len(c.rows))
	c.rows = append(c.rows, r)
	return r, true
}

// clearRows empties the row cache, keeping its memory; the caller holds
// mu.
func (c *listContent) clearRows() {
	clear(c.cache)
	c.rows = c.rows[:0]
}

// fieldIndex is field's place among the field columns (row.extra).
func (c *listContent) fieldIndex(f *decode.Field) int {
	i := 0
	for _, col := range c.cols {
		if col.field == f {
			return i
		}
		if col.field != nil {
			i++
		}
	}
	return 0
}

// appendFieldText appends a field's values in p as -T fields prints
// them (several joined by commas); vals is scratch.
func appendFieldText(b []byte, f *decode.Field, p *decode.Packet, vals *[]decode.Value) []byte {
	*vals = f.Values(p, (*vals)[:0])
	for i, v := range *vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = f.AppendValue(b, v)
	}
	return b
}

// stableWidth pads text to the widest cell its column has shown so far
// (keyed by the column's title), on the left for a right-aligned column.
func (c *listContent) stableWidth(title, text string, right bool) string {
	n := utf8.RuneCountInString(text)
	c.mu.Lock()
	if c.widths == nil {
		c.widths = map[string]int{}
	}
	w := max(c.widths[title], n, utf8.RuneCountInString(title))
	c.widths[title] = w
	c.mu.Unlock()
	if n >= w {
		return text
	}
	pad := blanks
	if w-n > len(pad) {
		pad = strings.Repeat(" ", w-n)
	}
	if right {
		return pad[:w-n] + text // (one allocation, not Repeat's and the concatenation's)
	}
	return text + pad[:w-n]
}

const blanks = "                                                                "
