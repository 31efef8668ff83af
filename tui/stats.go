package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocetap/rocetap/internal/printer"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// The stats view: the opcode and AETH syndrome histograms (flow.Totals,
// as `rocetap stats` counts them) and each big session's throughput over
// the capture as a sparkline.

func init() {
	AddKey(Key{'S', "S", "statistics: opcode histogram, throughput of the busiest sessions", func(a *App) bool { return a.showRDMAView("stats") }})
}

const (
	sparkBuckets = 60 // time buckets of a throughput sparkline
	sparkTop     = 10 // sessions with a sparkline, by bytes
)

// sessionRate is one session's throughput over the capture.
type sessionRate struct {
	id      uint32
	label   string
	packets uint64
	bytes   uint64
	buckets [sparkBuckets]uint64 // bytes per time bucket
}

// statsResult is what the view shows; the job makes a new one each time
// it publishes.
type statsResult struct {
	counted  int  // packets counted
	indexed  int  // packets in the index
	complete bool // every packet indexed so far is counted
	totals   flow.Totals
	span     time.Duration // from the first packet to the last
	sessions []sessionRate // busiest first
	reports  string        // their message and latency tables, as rocetap stats prints them
	evicted  string        // rocetap stats' Evicted: line, when sessions were evicted past --max-sessions
}

// statsView computes in the background (bgJob): the totals go on from
// where they stopped as the index grows; the sparklines are made again
// from the index entries, which needs no decoding.
type statsView struct {
	a    *App
	text *statsText
	job  bgJob

	// The job's state (see bgJob).
	counted int
	totals  flow.Totals
	bytes   map[uint32]sessionCount // by session: 16 bytes each, a capture may have millions
}

// sessionCount is what the view counts of every session; only the
// busiest get a sessionRate (with its sparkline buckets).
type sessionCount struct{ packets, bytes uint64 }

// statsText draws the result at the width it gets.
type statsText struct {
	*tview.TextView
	res   *statsResult // UI goroutine only
	width int          // the width res was rendered at
}

func (t *statsText) Draw(s tcell.Screen) {
	_, _, w, _ := t.GetInnerRect()
	if w != t.width && t.res != nil {
		t.width = w
		t.SetText(renderStats(t.res, w))
	}
	t.TextView.Draw(s)
}

func newStatsView(a *App) *statsView {
	tv := tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	tv.SetBorder(true).SetTitle(" Statistics (Esc: back) ")
	tv.SetText("counting…")
	return &statsView{a: a, text: &statsText{TextView: tv}, bytes: map[uint32]sessionCount{}}
}

func (v *statsView) Name() string               { return "stats" }
func (v *statsView) Primitive() tview.Primitive { return v.text }

func (v *statsView) Refresh(a *App) { v.job.start(v.compute) }

// compute counts the packets indexed since the last run, then makes the
// sparklines of the busiest sessions (the job).
func (v *statsView) compute() {
	ix := v.a.ix
	n := ix.Len()
	var p decode.Packet
	var buf []byte
	last := time.Now()
	for ; v.counted < n; v.counted++ {
		e, ok := ix.Entry(v.counted)
		if !ok {
			break
		}
		var err error
		if buf, err = ix.Decode(v.counted, &p, buf); err != nil {
			break
		}
		v.totals.Add(&p)
		if e.Session != 0 {
			c := v.bytes[e.Session]
			c.packets++
			c.bytes += uint64(e.Length)
			v.bytes[e.Session] = c
		}
		if time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			v.publish(&statsResult{counted: v.counted, indexed: n, totals: v.totals.Snapshot()})
		}
	}
	r := &statsResult{counted: v.counted, indexed: n, complete: true, totals: v.totals.Snapshot()} // until the index grows again
	r.sessions, r.span = v.rates(n)
	// The busiest sessions' messages and latencies (request→completion:
	// min, median, p99, max), as rocetap stats prints them.
	var rep []byte
	start := v.a.ix.Start()
	v.a.ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t == nil {
			return
		}
		r.totals.Fabric = t.Fabric().Clone() // DCQCN and PFC, with their time series (printer.AppendFabric)
		r.evicted = evictedLine(t)
		for _, sr := range r.sessions {
			if s := t.Session(t.Resolve(sr.id)); s != nil {
				rep = printer.AppendStatsSession(rep, s, start)
			}
		}
	})
	r.reports = string(rep)
	v.publish(r)
}

// rates returns the busiest sessions' bytes per time bucket over the
// first n packets, and the time they span.
func (v *statsView) rates(n int) ([]sessionRate, time.Duration) {
	ix := v.a.ix
	busier := func(x, y *sessionRate) int {
		return cmp.Or(cmp.Compare(y.bytes, x.bytes), cmp.Compare(x.id, y.id))
	}
	// the sparkTop busiest, kept sorted as the counts go by
	top := make([]sessionRate, 0, sparkTop+1)
	for id, c := range v.bytes {
		r := sessionRate{id: id, packets: c.packets, bytes: c.bytes}
		if len(top) == sparkTop && busier(&r, &top[sparkTop-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, &r, func(x sessionRate, y *sessionRate) int { return busier(&x, y) })
		top = slices.Insert(top, i, r)
		if len(top) > sparkTop {
			top = top[:sparkTop]
		}
	}
	out := top
	slot := map[uint32]int{}
	for i, s := range top {
		slot[s.id] = i
	}
	ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		for i := range out {
			if t == nil {
				break
			}
			if s := t.Session(out[i].id); s != nil {
				out[i].label = fmt.Sprintf("#%d %s %s ↔ %s", s.ID, s.Transport, s.A, s.B)
			}
		}
	})
	if n == 0 || len(out) == 0 {
		return out, 0
	}
	start := ix.Start()
	end := start
	for i := n - 1; i >= 0; i-- { // the last packet's time (files are mostly in order)
		if e, ok := ix.Entry(i); ok {
			end = e.Time
			break
		}
	}
	span := max(end.Sub(start), 0)
	for i := range n {
		e, ok := ix.Entry(i)
		if !ok {
			break
		}
		k, ok := slot[e.Session]
		if e.Session == 0 || !ok {
			continue
		}
		b := 0
		if span > 0 {
			b = int(int64(e.Time.Sub(start)) * sparkBuckets / (int64(span) + 1))
		}
		out[k].buckets[min(max(b, 0), sparkBuckets-1)] += uint64(e.Length)
	}
	return out, span
}

func (v *statsView) publish(r *statsResult) {
	v.a.app.QueueUpdateDraw(func() {
		v.text.res = r
		_, _, w, _ := v.text.GetInnerRect()
		v.text.width = w
		v.text.SetText(renderStats(r, w))
	})
}

// renderStats lays the result out w cells wide, as tview text.
func renderStats(r *statsResult, w int) string {
	var b strings.Builder
	tt := &r.totals
	fmt.Fprintf(&b, "Packets: %d (%d bytes), InfiniBand transport: %d, other: %d", tt.Packets, tt.Bytes, tt.IB, tt.Other)
	if !r.complete {
		fmt.Fprintf(&b, "  [yellow]counting… %d of %d packets[-]", r.counted, r.indexed)
	}
	if r.evicted != "" {
		b.WriteString("\n" + tview.Escape(strings.TrimSuffix(r.evicted, "\n")))
	}
	b.WriteString("\n\n[yellow::b]Opcodes[-::-]\n")
	var ops []histBar
	for op, n := range tt.Opcodes {
		if n > 0 {
			ops = append(ops, histBar{decode.Opcode(op).String(), n})
		}
	}
	if len(ops) == 0 {
		b.WriteString("  (no InfiniBand transport packets)\n")
	}
	writeBars(&b, ops, w)
	var syns []histBar
	for syn, n := range tt.Syndromes {
		if n > 0 {
			syns = append(syns, histBar{decode.SyndromeString(uint8(syn)), n})
		}
	}
	if len(syns) > 0 {
		b.WriteString("\n[yellow::b]AETH syndromes[-::-]\n")
		writeBars(&b, syns, w)
	}
	if len(r.sessions) > 0 {
		which := "the busiest session"
		if len(r.sessions) > 1 {
			which = "the " + strconv.Itoa(len(r.sessions)) + " busiest sessions"
		}
		fmt.Fprintf(&b, "\n[yellow::b]Throughput[-::-] of %s (%d × %s over %s, each scaled to its peak)\n",
			which, sparkBuckets, statsDur(r.span/sparkBuckets), statsDur(r.span))
		bucket := r.span / sparkBuckets
		for _, s := range r.sessions {
			label := s.label
			if label == "" {
				label = "#" + strconv.Itoa(int(s.id))
			}
			var peak uint64
			for _, x := range s.buckets {
				peak = max(peak, x)
			}
			rate := "-"
			if bucket > 0 {
				rate = printer.BitRate(float64(peak) * 8 / bucket.Seconds())
			}
			fmt.Fprintf(&b, "  %s  %d packets, %d bytes, peak %s\n", tview.Escape(decode.Sanitize(label)), s.packets, s.bytes, rate)
			b.WriteString("    [green]" + sparkline(s.buckets[:]) + "[-]\n")
		}
	}
	// What rocetap stats prints besides: congestion (CNP, ECN, PFC), CM
	// messages, and the busiest sessions' message and latency tables.
	b.WriteString(tview.Escape(string(printer.AppendCongestion(nil, tt))))
	if r.reports != "" {
		b.WriteString("\n[yellow::b]Sessions[-::-] (the busiest, as rocetap stats prints them)\n")
		b.WriteString(tview.Escape(r.reports))
	}
	return b.String()
}

// histBar is one line of a histogram.
type histBar struct {
	name string
	n    uint64
}

// writeBars writes a histogram, busiest first: name, count and a bar of
// ▇ scaled to the widest that fits w.
func writeBars(b *strings.Builder, bars []histBar, w int) {
	slices.SortStableFunc(bars, func(x, y histBar) int { return cmp.Compare(y.n, x.n) })
	nameW, countW := 0, 0
	var peak uint64
	for _, x := range bars {
		nameW = max(nameW, utf8.RuneCountInString(x.name))
		countW = max(countW, len(strconv.FormatUint(x.n, 10)))
		peak = max(peak, x.n)
	}
	room := max(1, w-2-nameW-2-countW-2)
	for _, x := range bars {
		n := int(x.n * uint64(room) / peak)
		if n == 0 && x.n > 0 {
			n = 1
		}
		fmt.Fprintf(b, "  %s%s  %*d  [teal]%s[-]\n", tview.Escape(x.name), strings.Repeat(" ", nameW-utf8.RuneCountInString(x.name)),
			countW, x.n, strings.Repeat("▇", n))
	}
}

var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline draws values as ▁..█ scaled to the largest; zero is a space.
func sparkline(vals []uint64) string {
	var peak uint64
	for _, x := range vals {
		peak = max(peak, x)
	}
	out := make([]rune, len(vals))
	for i, x := range vals {
		switch {
		case x == 0:
			out[i] = ' '
		default:
			out[i] = sparkRunes[(x*uint64(len(sparkRunes))+peak-1)/peak-1] // the peak is █
		}
	}
	return string(out)
}

// statsDur rounds a duration as `rocetap stats` shows them.
func statsDur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(100 * time.Nanosecond).String()
}

// evictedLine is rocetap stats' Evicted: line for t's sessions evicted
// past --max-sessions, "" when none was.
func evictedLine(t *flow.Tracker) string {
	e := t.Evicted()
	if e.Sessions == 0 {
		return ""
	}
	return string(printer.AppendEvicted(nil, printer.ToEvictedJSON(&e, t.MaxSessions())))
}
