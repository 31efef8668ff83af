package tui

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// The ladder view: one session as a sequence diagram, its two endpoints
// as columns and one arrow per packet.

// AddRDMAViews adds the ladder (l), statistics (S) and MPT (M) views.
func AddRDMAViews(a *App) {
	a.AddView(newLadderView(a))
	a.AddView(newStatsView(a))
	a.AddView(newMPTView(a))
	a.AddView(newULPView(a))
}

func init() {
	AddKey(Key{'l', "l", "ladder diagram of the selected packet's session (in the sessions, expert and MPT views: of the selected row)", openLadder})
}

// sessionPicker is a view whose selected row names a session: l opens
// that session's ladder.
type sessionPicker interface {
	pickedSession() uint32
}

// openLadder opens the ladder of the session the selection names.
func openLadder(a *App) bool {
	v, ok := a.views["ladder"].(*ladderView)
	if !ok {
		return false
	}
	var id uint32
	focus := -1 // the packet to open on (-1: the session's first)
	name, fv := a.front()
	switch fv := fv.(type) {
	case nil:
		if name != "main" { // help, a prompt: the key is theirs
			return false
		}
		pi := a.Selected()
		if pi < 0 {
			a.flash("no packet selected")
			return true
		}
		e, _ := a.ix.Entry(pi)
		if id = e.Session; id == 0 {
			a.flash("packet " + strconv.Itoa(e.Number) + " belongs to no session")
			return true
		}
		focus = pi
	case sessionPicker:
		if id = fv.pickedSession(); id == 0 {
			return true
		}
	default: // the ladder itself and the rest: the view has the key
		return false
	}
	v.open(id, focus)
	a.ShowView("ladder")
	return true
}

// ladderMax is the most packets a ladder shows: a window of the session
// around the packet it was opened on (the title says which part of how
// many).
const ladderMax = 100000

// ladderRow is one packet of the ladder, kept small: the arrow's text is
// made when the row is drawn.
type ladderRow struct {
	pi     int32 // packet index
	rel    int64 // ns since the session's first packet
	ev     decode.Event
	op     decode.Opcode
	psn    decode.PSN
	plen   uint32 // payload bytes
	dma    uint32 // RETH DMA length
	dqp    uint32 // destination QP
	cm     uint16 // CM attribute ID (0: none)
	syn    uint8  // AETH syndrome
	has    uint8  // rowBTH, rowAETH, rowRETH
	toA    bool   // sent to A's address
	toB    bool   // sent to B's address
	broken bool   // not decoded (a read error)
}

const (
	rowBTH = 1 << iota
	rowAETH
	rowRETH
)

// ladderSession is what the ladder shows of the tracker's session.
type ladderSession struct {
	id        uint32
	transport string
	a, b      flow.Endpoint
}

// ladderContent is the ladder's table content; it is only touched in the
// UI goroutine.
type ladderContent struct {
	tview.TableContentReadOnly
	s       ladderSession
	rows    []ladderRow
	total   int  // packets of the session seen so far
	skipped int  // the session's packets before rows[0]
	working bool // scanning the index
	focus   int  // the packet index the ladder opened on (-1: the first)
	notesW  int  // the widest note of the rows, up to 40 (publish)
	placed  bool // the selection went to the focus; later rows keep the user's
	width   int  // the table's inner width, from the last Draw
	b       []byte
}

var ladderCols = []string{"No.", "Time", "Δt", "", "Notes"}

func (c *ladderContent) GetRowCount() int    { return 1 + len(c.rows) }
func (c *ladderContent) GetColumnCount() int { return len(ladderCols) }

// lane is the width of the arrows' column: what No., Time, Δt and the
// widest note leave (an empty Notes column takes no room from the
// arrows: at 80 columns the PSNs were cut).
func (c *ladderContent) lane() int {
	return min(100, max(36, c.width-30-c.notesW))
}

func (c *ladderContent) GetCell(r, col int) *tview.TableCell {
	if col < 0 || col >= len(ladderCols) {
		return nil
	}
	if r == 0 {
		text := ladderCols[col]
		if col == 3 {
			text = ladderHeader(c.s, c.lane())
		}
		return tview.NewTableCell(tview.Escape(text)).SetSelectable(false).SetTextColor(tcell.ColorYellow).SetAttributes(tcell.AttrBold)
	}
	if r-1 >= len(c.rows) {
		return nil
	}
	row := &c.rows[r-1]
	var text string
	cell := tview.NewTableCell("")
	switch col {
	case 0:
		text = strconv.Itoa(int(row.pi) + 1)
		cell.SetAlign(tview.AlignRight)
	case 1:
		c.b = decode.AppendSeconds(c.b[:0], row.rel, 6)
		text = string(c.b)
		cell.SetAlign(tview.AlignRight)
	case 2:
		// The time since the packet before it in the ladder.
		var d int64
		if r >= 2 {
			d = row.rel - c.rows[r-2].rel
		}
		c.b = decode.AppendSeconds(c.b[:0], d, 6)
		text = string(c.b)
		cell.SetAlign(tview.AlignRight)
	case 3:
		text = arrow(ladderLabel(row), row.toward(&c.s) == decode.DirBToA, c.lane())
	case 4:
		text = eventNotes(row.ev)
		cell.SetExpansion(1)
	}
	return cell.SetText(tview.Escape(text)).SetTextColor(row.color())
}

// toward says which way the packet went: to B (A→B) unless it was sent
// to A's address and QP. The QPs are read when drawn, as pairing may
// learn A's QPN after the first packets.
func (r *ladderRow) toward(s *ladderSession) decode.Direction {
	if r.toB && s.b.QPNKnown && r.dqp == s.b.QPN {
		return decode.DirAToB
	}
	if r.toA && s.a.QPNKnown && r.dqp == s.a.QPN {
		return decode.DirBToA
	}
	return decode.DirAToB
}

// color: NAKs red, retransmissions, duplicates, out-of-order and gaps
// yellow, responses green, requests white.
func (r *ladderRow) color() tcell.Color {
	switch {
	case r.has&rowAETH != 0 && r.syn>>5&3 != decode.AETHAck, r.ev&(decode.EventNAK|decode.EventRNRNak) != 0:
		return tcell.ColorRed
	case r.ev&(decode.EventRetransmission|decode.EventDuplicate|decode.EventOutOfOrder|decode.EventPSNGap) != 0:
		return tcell.ColorYellow
	case r.broken:
		return tcell.ColorRed
	case r.has&rowBTH != 0 && r.op.IsResponse():
		return tcell.ColorLightGreen
	case r.has&rowBTH != 0 && r.op.IsRequest():
		return tcell.ColorWhite
	}
	return tcell.ColorSilver
}

// ladderLabel is the text on a packet's arrow: opcode, PSN, lengths, and
// the AETH syndrome unless it is a plain ACK.
func ladderLabel(r *ladderRow) string {
	switch {
	case r.broken:
		return "(cannot read the packet)"
	case r.cm != 0:
		return "CM " + decode.CMAttrName(r.cm)
	case r.has&rowBTH == 0:
		return "(not InfiniBand)"
	}
	var b strings.Builder
	b.WriteString(r.op.String())
	b.WriteString("  PSN ")
	b.WriteString(strconv.FormatUint(uint64(r.psn), 10))
	if r.op.HasPayload() {
		b.WriteString("  len ")
		b.WriteString(strconv.FormatUint(uint64(r.plen), 10))
	}
	if r.has&rowRETH != 0 && !r.op.HasPayload() {
		b.WriteString("  dma ")
		b.WriteString(strconv.FormatUint(uint64(r.dma), 10))
	}
	if r.has&rowAETH != 0 && r.syn>>5&3 != decode.AETHAck {
		b.WriteString("  ")
		b.WriteString(decode.SyndromeString(r.syn))
	}
	return decode.Sanitize(b.String())
}

// arrow draws label on an arrow between the two columns, w cells wide:
// │──── label ────>│ (toA: │<──── label ────│).
func arrow(label string, toA bool, w int) string {
	label = " " + label + " "
	n := utf8.RuneCountInString(label)
	if room := w - 5; n > room {
		rs := []rune(label)
		label = string(rs[:max(0, room-1)]) + "… "
		n = utf8.RuneCountInString(label)
	}
	fill := max(0, w-3-n)
	left, right := strings.Repeat("─", fill/2), strings.Repeat("─", fill-fill/2)
	if toA {
		return "│<" + left + label + right + "│"
	}
	return "│" + left + label + right + ">│"
}

// ladderHeader names the two columns: A on the left, B on the right.
func ladderHeader(s ladderSession, w int) string {
	if s.transport == "" { // not (yet) known to the tracker
		return ""
	}
	l, r := "A "+s.a.String(), s.b.String()+" B"
	pad := max(1, w-utf8.RuneCountInString(l)-utf8.RuneCountInString(r))
	return l + strings.Repeat(" ", pad) + r
}

// eventNotes lists the tracker's findings about a packet: [retransmission].
func eventNotes(ev decode.Event) string {
	var b strings.Builder
	for i := range decode.NumEvents {
		if e := decode.Event(1) << i; ev&e != 0 {
			name, _, _ := decode.EventInfo(e)
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("[" + name + "]")
		}
	}
	return b.String()
}

// ladderTable is the ladder's table, telling the content its width
// before drawing (the arrows fill it).
type ladderTable struct {
	*tview.Table
	c *ladderContent
}

func (t *ladderTable) Draw(s tcell.Screen) {
	_, _, w, _ := t.GetInnerRect()
	t.c.width = w
	t.Table.Draw(s)
}

// ladderView is the ladder of one session. The packets are found by a
// scan of the index in the background, which goes on from where it
// stopped as the index grows.
type ladderView struct {
	a     *App
	table *ladderTable
	c     *ladderContent
	job   bgJob
	limit int // the most packets shown (ladderMax; set before Run)

	mu        sync.Mutex
	want      uint32 // the session asked for (set in the UI goroutine)
	wantFocus int    // the packet index to open on, -1 for the first

	// The job's state (see bgJob).
	jid     uint32
	jfocus  int
	jsess   ladderSession
	jalias  []uint32 // the sessions merged into it: its packets before the merge carry their IDs
	scanned int      // packets of the index looked at
	total   int
	skipped int     // the session's packets before the window
	before  []int32 // indices of the last packets before the focus, not yet decoded
	start   time.Time
	acc     []ladderRow
}

func newLadderView(a *App) *ladderView {
	v := &ladderView{a: a, c: &ladderContent{}, limit: ladderMax}
	t := tview.NewTable().SetContent(v.c).SetSelectable(true, false).SetFixed(1, 0)
	t.SetBorder(true)
	t.SetSelectedFunc(func(r, _ int) {
		if r >= 1 && r <= len(v.c.rows) {
			a.GoTo(int(v.c.rows[r-1].pi))
		}
	})
	v.table = &ladderTable{Table: t, c: v.c}
	v.setTitle()
	return v
}

func (v *ladderView) Name() string               { return "ladder" }
func (v *ladderView) Primitive() tview.Primitive { return v.table }

// open shows session id on packet index focus (-1: its first packet),
// from the UI goroutine.
func (v *ladderView) open(id uint32, focus int) {
	v.mu.Lock()
	v.want, v.wantFocus = id, focus
	v.mu.Unlock()
	if v.c.s.id != id || v.c.focus != focus {
		v.c.s, v.c.rows, v.c.total, v.c.skipped, v.c.working = ladderSession{id: id}, nil, 0, 0, true
		v.c.focus, v.c.placed = focus, false
		v.table.Select(1, 0).ScrollToBeginning()
		v.setTitle()
	}
}

func (v *ladderView) Refresh(a *App) {
	v.mu.Lock()
	id := v.want
	v.mu.Unlock()
	if id != 0 {
		v.job.start(v.scan)
	}
}

func (v *ladderView) setTitle() {
	c := v.c
	var b strings.Builder
	b.WriteString(" Ladder")
	if c.s.id != 0 {
		b.WriteString(": session " + strconv.Itoa(int(c.s.id)))
		if c.s.transport != "" {
			b.WriteString(" " + c.s.transport)
		}
		switch {
		case c.total > len(c.rows) && c.skipped == 0:
			b.WriteString(", the first " + strconv.Itoa(len(c.rows)) + " of " + strconv.Itoa(c.total) + " packets")
		case c.total > len(c.rows):
			b.WriteString(", packets " + strconv.Itoa(c.skipped+1) + "–" + strconv.Itoa(c.skipped+len(c.rows)) + " of " + strconv.Itoa(c.total))
		default:
			b.WriteString(", " + strconv.Itoa(c.total) + " packets")
		}
		if c.working {
			b.WriteString(", scanning…")
		}
	} else {
		b.WriteString(": press l on a packet or a session")
	}
	b.WriteString(" (Enter: go to the frame, Esc: back) ")
	v.table.SetTitle(tview.Escape(decode.Sanitize(b.String())))
}

// scan looks for the session's packets in the part of the index not yet
// scanned and decodes them (the job).
func (v *ladderView) scan() {
	v.mu.Lock()
	id, focus := v.want, v.wantFocus
	v.mu.Unlock()
	if id != v.jid || focus != v.jfocus {
		v.jid, v.jfocus, v.jsess, v.jalias, v.scanned, v.total, v.start, v.acc = id, focus, ladderSession{id: id}, nil, 0, 0, time.Time{}, nil
		v.skipped, v.before = 0, nil
	}
	ix := v.a.ix
	live, nalias := id, len(v.jalias)
	ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		// a provisional session merged into another: that one
		live = t.Resolve(id)
		if s := t.Session(live); s != nil {
			v.jsess = ladderSession{id: id, transport: s.Transport.String(), a: s.A, b: s.B}
			v.jalias = append(v.jalias[:0], s.Merged()...)
		}
	})
	if len(v.jalias) != nalias {
		// packets already passed over belong to it now
		v.scanned, v.total, v.start, v.acc, v.skipped, v.before = 0, 0, time.Time{}, nil, 0, nil
	}
	// The window: up to limit/2 packets before the focus and the rest
	// from it on; without a focus, the first limit packets.
	before := v.limit / 2
	if focus < 0 {
		before = 0
	}
	n := ix.Len()
	var p decode.Packet
	var buf []byte
	last := time.Now()
	for i := v.scanned; i < n; i++ {
		e, ok := ix.Entry(i)
		if !ok {
			break
		}
		if e.Session != live && !slices.Contains(v.jalias, e.Session) {
			continue
		}
		v.total++
		if v.start.IsZero() {
			v.start = e.Time // times are from the session's first packet
		}
		if focus >= 0 && i < focus {
			// Before the focus only the last ones are kept: their
			// indices, decoded when the focus comes.
			v.before = append(v.before, int32(i))
			if len(v.before) >= 2*max(before, 1) {
				drop := len(v.before) - before
				v.before = append(v.before[:0], v.before[drop:]...)
				v.skipped += drop
			}
			continue
		}
		v.decodeBefore(&p, &buf)
		if len(v.acc) >= v.limit {
			continue
		}
		var err error
		buf, err = ix.Decode(i, &p, buf)
		v.acc = append(v.acc, ladderRowOf(&p, e, err != nil, v.start, &v.jsess))
		if time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			v.publish(false)
		}
	}
	v.scanned = n
	v.addFindings(ix, live)
	if focus >= 0 && n > focus {
		v.decodeBefore(&p, &buf) // the focus is in no session packet: the window ends there
	}
	v.publish(true) // until the index grows again
}

// decodeBefore decodes the kept packets before the focus into the rows,
// once: the window's first half.
func (v *ladderView) decodeBefore(p *decode.Packet, buf *[]byte) {
	if v.before == nil {
		return
	}
	keep := v.limit / 2
	if len(v.before) > keep {
		v.skipped += len(v.before) - keep
		v.before = v.before[len(v.before)-keep:]
	}
	ix := v.a.ix
	for _, i := range v.before {
		e, _ := ix.Entry(int(i))
		var err error
		*buf, err = ix.Decode(int(i), p, *buf)
		v.acc = append(v.acc, ladderRowOf(p, e, err != nil, v.start, &v.jsess))
	}
	v.before = nil
}

// publish hands the rows found so far to the UI goroutine. The selection
// goes to the packet the ladder opened on once it is there, and then
// stays on the packet the user selected while rows arrive.
func (v *ladderView) publish(complete bool) {
	id, focus, s, total, skipped := v.jid, v.jfocus, v.jsess, v.total, v.skipped
	rows := slices.Clone(v.acc) // the scan shifts its window in place
	v.a.app.QueueUpdateDraw(func() {
		c := v.c
		if c.s.id != id || c.focus != focus {
			return
		}
		var selPI int32 = -1
		if r, _ := v.table.GetSelection(); c.placed && r >= 1 && r <= len(c.rows) {
			selPI = c.rows[r-1].pi
		}
		c.s, c.rows, c.total, c.skipped, c.working = s, rows, total, skipped, !complete
		c.notesW = 0
		for i := range rows {
			if rows[i].ev != 0 {
				c.notesW = max(c.notesW, min(40, len(eventNotes(rows[i].ev))))
			}
		}
		switch {
		case selPI >= 0:
			v.selectPacket(selPI)
		case focus < 0 && len(rows) > 0:
			c.placed = true
			v.table.Select(1, 0)
		case focus >= 0:
			if v.selectPacket(int32(focus)) {
				c.placed = true
			}
		}
		v.setTitle()
	})
}

// selectPacket selects the row of packet index pi, if shown.
func (v *ladderView) selectPacket(pi int32) bool {
	rows := v.c.rows
	i, found := slices.BinarySearchFunc(rows, pi, func(r ladderRow, pi int32) int { return int(r.pi) - int(pi) })
	if !found {
		return false
	}
	v.table.Select(i+1, 0)
	return true
}

// ladderRowOf makes a packet's ladder row.
func ladderRowOf(p *decode.Packet, e Entry, broken bool, start time.Time, s *ladderSession) ladderRow {
	r := ladderRow{pi: int32(e.Number - 1), rel: int64(e.Time.Sub(start)), ev: e.Events, broken: broken}
	if broken {
		return r
	}
	if p.Has&decode.HdrBTH != 0 {
		r.has |= rowBTH
		r.op, r.psn, r.dqp, r.plen = p.BTH.Opcode, p.BTH.PSN, p.BTH.DestQP, uint32(len(p.Payload))
	}
	if p.Has&decode.HdrAETH != 0 {
		r.has |= rowAETH
		r.syn = p.AETH.Syndrome
	}
	if p.Has&decode.HdrRETH != 0 {
		r.has |= rowRETH
		r.dma = p.RETH.DMALen
	}
	if p.Has&decode.HdrCM != 0 {
		r.cm = p.CM.AttributeID
	}
	// The packet's destination as the tracker keys sessions by it: IP
	// address, else GID, else LID.
	_, dst, _ := p.Nodes()
	r.toA, r.toB = s.a.Node() == dst, s.b.Node() == dst
	return r
}

// addFindings adds to the rows the tracker's findings that it reported
// after their packets were indexed (a request never answered, a
// requester that gave up: known only at the end of the capture), so the
// ladder's notes show them on their frames.
func (v *ladderView) addFindings(ix *Index, live uint32) {
	byPI := map[int32]decode.Event{}
	ix.WithTracker(func(_ *flow.Tracker, l *flow.ExpertLog) {
		if l == nil {
			return
		}
		for _, g := range l.Groups() {
			for _, e := range g.Events {
				if e.Frame > 0 && (e.Session == live || slices.Contains(v.jalias, e.Session)) {
					byPI[int32(e.Frame-1)] |= g.Kind
				}
			}
		}
	})
	if len(byPI) == 0 {
		return
	}
	for i := range v.acc {
		v.acc[i].ev |= byPI[v.acc[i].pi]
	}
}
