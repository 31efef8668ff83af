package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// Reports of the flow tracker: rocetap sessions, stats and expert. Times
// are seconds since the capture's first packet (start), as tshark shows
// relative times.

func rel(t, start time.Time) string {
	return string(appendRel(nil, t, start))
}

// dur formats a duration as the reports show it (appendDur).
func dur(d time.Duration) string {
	var b [32]byte
	return string(appendDur(b[:0], d))
}

// BitRate formats bits per second with an SI prefix, as the session and
// stats reports show throughput ("12.26 Mbit/s").
func BitRate(bps float64) string {
	var b [40]byte
	return string(flow.AppendBitRate(b[:0], bps))
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// AppendSessions appends the sessions table.
func AppendSessions(dst []byte, sessions []*flow.Session, start time.Time) []byte {
	t := NewSessionsTable(sessions, start)
	dst = t.AppendHead(dst)
	for _, s := range sessions {
		dst = t.AppendRow(dst, s)
	}
	return dst
}

// SessionsTable prints the sessions table a row at a time, so that a
// command can write a table of millions of sessions out as it goes: its
// columns are as wide as their widest cell (as text/tabwriter would
// align them, which holds every row until the end).
type SessionsTable struct {
	n     int
	start startClock
	width [len(sessionCols)]int
	padTo [len(sessionCols)]int // width and the two spaces between columns
	// the cells of the row (row): cell i is buf[end[i-1]:end[i]], the
	// last one the notes
	buf []byte
	end [len(sessionCols) + 1]int
	// the cells of the findings of a session without any (all 0),
	// padded: most of a million rows write them at once (not for row)
	zeros []byte
}

var sessionCols = [...]string{"ID", "Type", "Paired by", "A", "B", "Packets", "Bytes", "Messages", "Start", "Duration", "Throughput", "MTU", "NAK", "RNR", "Retrans", "Dup", "OOO", "Lost"}

// NewSessionsTable measures the columns of sessions.
func NewSessionsTable(sessions []*flow.Session, start time.Time) *SessionsTable {
	t := &SessionsTable{n: len(sessions), start: newStartClock(start)}
	for i, h := range sessionCols {
		t.width[i] = utf8.RuneCountInString(h)
	}
	m := sessionMeasure{firstMin: math.MaxInt64, firstMax: math.MinInt64}
	for _, s := range sessions {
		t.measure(s, &m)
	}
	t.finish(&m)
	for i, w := range t.width {
		t.padTo[i] = w + 2
	}
	t.zeros = []byte{}
	for i := 12; i < len(sessionCols); i++ {
		t.zeros = t.endCell(append(t.zeros, '0'), i, 1)
	}
	return t
}

// row sets t's cells to the cells of s (the last one the notes),
// unpadded.
func (t *SessionsTable) row(s *flow.Session) {
	p, z := t.padTo, t.zeros
	t.padTo, t.zeros = noWidth, nil
	t.buf = t.appendCells(t.buf[:0], s)
	t.padTo, t.zeros = p, z
}

// noWidth are widths that pad no cell.
var noWidth = func() (w [len(sessionCols)]int) {
	for i := range w {
		w[i] = math.MinInt32
	}
	return w
}()

// appendCells appends the cells of s, the notes last, each but the notes
// padded to its column's width and two spaces (endCell), and records in
// t.end where each ends (next: row's cells, unpadded). The cells are
// ASCII but the duration ("µs"): its width is counted in runes
// (TestSessionsTableAligned checks the others).
func (t *SessionsTable) appendCells(dst []byte, s *flow.Session) []byte {
	f := s.Findings()
	from := len(dst)
	dst = decode.AppendUint(dst, uint64(s.ID))
	dst = t.endCell(dst, 0, len(dst)-from)
	from = t.next(dst, 0)
	dst = append(dst, s.Transport.String()...)
	dst = t.endCell(dst, 1, len(dst)-from)
	from = t.next(dst, 1)
	dst = append(dst, s.Learned.String()...)
	dst = t.endCell(dst, 2, len(dst)-from)
	from = t.next(dst, 2)
	dst = s.A.AppendTo(dst)
	dst = t.endCell(dst, 3, len(dst)-from)
	from = t.next(dst, 3)
	dst = s.B.AppendTo(dst)
	dst = t.endCell(dst, 4, len(dst)-from)
	from = t.next(dst, 4)
	dst = decode.AppendUint(dst, s.Packets())
	dst = t.endCell(dst, 5, len(dst)-from)
	from = t.next(dst, 5)
	dst = decode.AppendUint(dst, s.Bytes())
	dst = t.endCell(dst, 6, len(dst)-from)
	from = t.next(dst, 6)
	dst = decode.AppendUint(dst, s.MessageCount())
	dst = t.endCell(dst, 7, len(dst)-from)
	from = t.next(dst, 7)
	dst = t.start.appendRel(dst, s.FirstUnixNano())
	dst = t.endCell(dst, 8, len(dst)-from)
	from = t.next(dst, 8)
	dst = appendDur(dst, s.Duration())
	dst = t.endCell(dst, 9, runeWidth(dst[from:]))
	from = t.next(dst, 9)
	dst = flow.AppendBitRate(dst, s.Throughput())
	dst = t.endCell(dst, 10, len(dst)-from)
	from = t.next(dst, 10)
	if s.MTU != 0 {
		dst = decode.AppendUint(dst, uint64(s.MTU))
	} else {
		dst = append(dst, '?')
	}
	dst = t.endCell(dst, 11, len(dst)-from)
	from = t.next(dst, 11)
	if f == noFindings && t.zeros != nil {
		dst = append(dst, t.zeros...)
	} else if f == noFindings {
		for i := 12; i < len(sessionCols); i++ {
			dst = append(dst, '0')
			dst = t.endCell(dst, i, 1)
			t.next(dst, i)
		}
	} else {
		for i, v := range [...]uint64{f.NAKCount(), f.RNRCount(), f.Retransmitted, f.Duplicates, f.OutOfOrder, f.LostPSNs} {
			dst = decode.AppendUint(dst, v)
			dst = t.endCell(dst, 12+i, len(dst)-from)
			from = t.next(dst, 12+i)
		}
	}
	dst = appendNotes(dst, s)
	t.end[len(sessionCols)] = len(dst)
	return dst
}

// endCell pads cell i, w runes wide, to its column's width and the two
// spaces between columns (none with noWidth). It is small enough to be
// inlined: called, it was a fifth of a row.
func (t *SessionsTable) endCell(dst []byte, i, w int) []byte {
	return appendSpaces(dst, t.padTo[i]-w)
}

// next records that cell i ends at the end of dst (for row, which pads
// nothing) and returns where the next begins.
func (t *SessionsTable) next(dst []byte, i int) int {
	t.end[i] = len(dst)
	return len(dst)
}

// cell returns cell i of the row.
func (t *SessionsTable) cell(i int) []byte {
	from := 0
	if i > 0 {
		from = t.end[i-1]
	}
	return t.buf[from:t.end[i]]
}

// SessionColumns are the sessions table's column headers, Notes last: the
// TUI's sessions view shows what the sessions command prints.
func SessionColumns() []string { return append(sessionCols[:], "Notes") }

// SessionRow returns s's cells as the sessions table prints them (times
// from start), Notes last.
func SessionRow(s *flow.Session, start time.Time) []string {
	t := SessionsTable{start: newStartClock(start)}
	t.row(s)
	cells := make([]string, len(t.end))
	for i := range cells {
		cells[i] = string(t.cell(i))
	}
	return cells
}

// ExpertRow returns one event's cells as the expert report prints them:
// frame ("end" for an event at the end of the capture), time from start,
// session ("#3", "-") and text.
func ExpertRow(e *flow.Event, start time.Time) [4]string {
	frame := "end"
	if e.Frame > 0 {
		frame = strconv.Itoa(e.Frame)
	}
	sess := "-"
	if e.Session > 0 {
		sess = "#" + u(uint64(e.Session))
	}
	return [4]string{frame, rel(e.Time, start), sess, decode.Sanitize(e.Text)}
}

// ExpertGroupLine is a group's heading as the expert report prints it:
// "Error  NAKs received (rocetap.analysis.nak): 3".
func ExpertGroupLine(g *flow.ExpertGroup) string {
	return g.Severity.String() + "  " + ExpertGroupTitle(g)
}

// ExpertGroupTitle is the heading without the severity:
// "NAKs received (rocetap.analysis.nak): 3".
func ExpertGroupTitle(g *flow.ExpertGroup) string {
	return fmt.Sprintf("%s (%s): %d", g.Summary, decode.EventField(g.Kind), g.Count)
}

// AppendHead appends the count line and, with sessions, the column
// headers.
func (t *SessionsTable) AppendHead(dst []byte) []byte {
	dst = append(dst, "Sessions: "...)
	dst = strconv.AppendInt(dst, int64(t.n), 10)
	dst = append(dst, '\n')
	if t.n == 0 {
		return dst
	}
	return t.appendLine(dst, sessionCols[:], "Notes")
}

// AppendRow appends the row of s.
func (t *SessionsTable) AppendRow(dst []byte, s *flow.Session) []byte {
	return append(t.appendCells(dst, s), '\n')
}

// appendLine appends cells padded to the column widths and two spaces,
// then last.
func (t *SessionsTable) appendLine(dst []byte, cells []string, last string) []byte {
	for i, c := range cells {
		dst = append(dst, c...)
		for range t.width[i] - utf8.RuneCountInString(c) + 2 {
			dst = append(dst, ' ')
		}
	}
	dst = append(dst, last...)
	return append(dst, '\n')
}

// giveUpCause names why a requester likely gave up.
func giveUpCause(e decode.Event) string {
	if e == decode.EventRNRRetryExc {
		return "RNR retry exceeded"
	}
	return "retry exceeded"
}

// QPErrorJSON is a side of a session whose requester likely gave up a
// PSN (retry counter exceeded): its QP is likely in the error state.
type QPErrorJSON struct {
	Side       string  `json:"side"`  // "A" or "B"
	QPN        *string `json:"qpn"`   // that side's QP (null while unknown)
	Cause      string  `json:"cause"` // retry_exceeded or rnr_retry_exceeded
	PSN        uint32  `json:"psn"`
	Sent       uint32  `json:"sent"` // transmissions of the PSN
	RNRNaks    uint32  `json:"rnr_naks"`
	FirstFrame int     `json:"first_frame"`
	LastFrame  int     `json:"last_frame"`
	Frame      int     `json:"frame"`    // the packet that showed it; 0: the end of the capture
	Interval   string  `json:"interval"` // seconds: the longest time between two transmissions
	Silence    string  `json:"silence"`  // seconds without a retry after the last
}

// DirStatsJSON is what one side of a session sent, as `rocetap sessions
// -T json` prints it.
type DirStatsJSON struct {
	flow.DirStats
	Responses uint64 `json:"responses"` // ACKs, NAKs, READ responses, ATOMIC ACKs
}

// SessionJSON is a session as `rocetap sessions -T json` prints it.
type SessionJSON struct {
	ID         uint32                  `json:"id"`
	Merged     []uint32                `json:"merged_ids,omitempty"` // provisional sessions folded into this one
	Transport  string                  `json:"transport"`
	PairedBy   string                  `json:"paired_by"`
	A          EndpointJSON            `json:"a"`
	B          EndpointJSON            `json:"b"`
	QKey       *string                 `json:"q_key,omitempty"`
	MTU        uint32                  `json:"mtu"`
	MTUFrom    string                  `json:"mtu_from,omitempty"`
	Closed     bool                    `json:"closed"`
	Start      string                  `json:"start"`
	Duration   string                  `json:"duration"`
	Throughput float64                 `json:"throughput_bps"`
	SentByA    DirStatsJSON            `json:"sent_by_a"`
	SentByB    DirStatsJSON            `json:"sent_by_b"`
	Messages   map[string]MessagesJSON `json:"messages"`
	Partial    uint64                  `json:"partial_messages"`
	NAKs       map[string]uint64       `json:"naks"`
	RNRNaks    map[string]uint64       `json:"rnr_naks"`
	Gaps       uint64                  `json:"psn_gaps"`
	Lost       uint64                  `json:"lost_psns"`
	Retrans    uint64                  `json:"retransmissions"`
	Dup        uint64                  `json:"duplicates"`
	OOO        uint64                  `json:"out_of_order"`
	Unmatched  uint64                  `json:"unmatched_responses"`
	OpcodeSeq  uint64                  `json:"opcode_sequence_errors"`
	NoResponse uint64                  `json:"unanswered_requests"`
	CNPs       uint64                  `json:"cnps"`
	ECNCE      uint64                  `json:"ecn_ce"`
	ICRCErrors uint64                  `json:"icrc_errors"`
	Truncated  uint64                  `json:"truncated"`
	Latency    map[string]LatencyJSON  `json:"latency,omitempty"`
	MPT        *MPTJSON                `json:"mpt,omitempty"`
	QPError    []QPErrorJSON           `json:"qp_error,omitempty"`
	ULP        *ULPJSON                `json:"ulp,omitempty"`
	Congestion []CCDirJSON             `json:"congestion,omitempty"`
}

// MPTJSON counts a session's MPT checks (with --mpt): accesses checked,
// those the MPT forbids, forbidden ones the responder executed, allowed
// ones it NAKed.
type MPTJSON struct {
	Checked    uint64 `json:"checked"`
	Violations uint64 `json:"violations"`
	Accepted   uint64 `json:"accepted"`
	Rejected   uint64 `json:"rejected"`
}

// EndpointJSON is one side of a session.
type EndpointJSON struct {
	Addr     string  `json:"addr"`
	QPN      *string `json:"qpn"` // null while unknown
	StartPSN *uint32 `json:"start_psn,omitempty"`
}

// MessagesJSON counts messages of one kind.
type MessagesJSON struct {
	Count uint64 `json:"count"`
	Bytes uint64 `json:"bytes"`
}

// LatencyJSON summarizes request→completion times in seconds.
type LatencyJSON struct {
	Count  uint64  `json:"count"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

func endpointJSON(e flow.Endpoint) EndpointJSON {
	j := EndpointJSON{Addr: e.Node().String()}
	if e.QPNKnown {
		q := "0x" + fmt.Sprintf("%06x", e.QPN)
		j.QPN = &q
	}
	if e.HasStart {
		v := uint32(e.StartPSN)
		j.StartPSN = &v
	}
	return j
}

// qpErrorsJSON returns the sides of s whose requester likely gave up.
func qpErrorsJSON(s *flow.Session) []QPErrorJSON {
	var q []QPErrorJSON
	for side, g := range s.GaveUp() {
		if g.Cause == 0 {
			continue
		}
		name, _, _ := decode.EventInfo(g.Cause)
		e := [2]flow.Endpoint{s.A, s.B}[side]
		q = append(q, QPErrorJSON{Side: string("AB"[side]), QPN: endpointJSON(e).QPN, Cause: name, PSN: uint32(g.PSN),
			Sent: g.Sent, RNRNaks: g.RNRNaks, FirstFrame: g.FirstFrame, LastFrame: g.LastFrame, Frame: g.Frame,
			Interval: string(decode.AppendSeconds(nil, int64(g.Interval), 6)), Silence: string(decode.AppendSeconds(nil, int64(g.Silence), 6))})
	}
	return q
}

// AppendSessionJSON appends s as element i of sessions -T json's array
// (after its '['; AppendSessionsJSONEnd closes it), one object a line.
func AppendSessionJSON(dst []byte, i int, s *flow.Session, start time.Time) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	w := jsonOut{b: append(dst, '\n')}
	w.session(s, start)
	return w.b
}

// AppendSessionsJSONEnd closes the array of n sessions.
func AppendSessionsJSONEnd(dst []byte, n int) []byte {
	if n > 0 {
		dst = append(dst, '\n')
	}
	return append(dst, "]\n"...)
}

// AppendStats appends `rocetap stats`: capture totals, the opcode
// histogram, AETH syndromes, congestion (CNP, ECN, PFC), then each
// session's messages, latencies and errors.
func AppendStats(dst []byte, tt *flow.Totals, sessions []*flow.Session, start time.Time) []byte {
	dst = AppendStatsHead(dst, tt, len(sessions))
	for _, s := range sessions {
		dst = AppendStatsSession(dst, s, start)
	}
	return dst
}

// AppendStatsHead appends what `rocetap stats` prints before the
// sessions (AppendStatsSession prints each): capture totals, the opcode
// histogram, AETH syndromes, congestion, CM messages and the session
// count n.
func AppendStatsHead(dst []byte, tt *flow.Totals, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Packets: %d (%d bytes), InfiniBand transport: %d, other: %d\n", tt.Packets, tt.Bytes, tt.IB, tt.Other)
	if tt.ICRCErrors > 0 || tt.Truncated > 0 {
		fmt.Fprintf(&b, "ICRC/VCRC errors: %d, truncated: %d\n", tt.ICRCErrors, tt.Truncated)
	}
	b.WriteString("\nOpcodes\n")
	if tt.IB == 0 {
		b.WriteString("  (no InfiniBand transport packets)\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for op, n := range tt.Opcodes {
		if n > 0 {
			fmt.Fprintf(tw, "  %d\t  %s\t%d\t\n", op, decode.Opcode(op), n)
		}
	}
	tw.Flush()
	any := false
	for syn, n := range tt.Syndromes {
		if n == 0 {
			continue
		}
		if !any {
			b.WriteString("\nAETH syndromes\n")
			any = true
		}
		fmt.Fprintf(&b, "  0x%02x  %s: %d\n", syn, decode.SyndromeString(uint8(syn)), n)
	}
	b.Write(AppendCongestion(nil, tt))
	fmt.Fprintf(&b, "\nSessions: %d\n", n)
	return append(dst, b.Bytes()...)
}

// AppendCongestion appends the stats report's Congestion section (CNPs,
// ECN, PFC and PAUSE per priority) and its CM messages: the TUI's
// statistics view shows them as the stats command prints them.
func AppendCongestion(dst []byte, tt *flow.Totals) []byte {
	dst = append(dst, "\nCongestion\n"...)
	dst = fmt.Appendf(dst, "  CNPs: %d, ECN-CE marked: %d, ECN-capable (ECT): %d\n", tt.CNPs, tt.ECNCE, tt.ECNCapable)
	dst = fmt.Appendf(dst, "  PFC frames: %d, PAUSE frames: %d\n", tt.PFCFrames, tt.PauseFrames)
	for prio := range 8 {
		if tt.PFCPauses[prio]+tt.PFCResumes[prio] > 0 {
			dst = fmt.Appendf(dst, "  priority %d: %d pauses, %d resumes\n", prio, tt.PFCPauses[prio], tt.PFCResumes[prio])
		}
	}
	dst = AppendFabric(dst, tt.Fabric)
	if cms := tt.CMCounts(); len(cms) > 0 {
		dst = append(dst, "\nCM messages\n"...)
		for _, c := range cms {
			dst = fmt.Appendf(dst, "  %s: %d\n", decode.CMAttrName(c.Attr), c.N)
		}
	}
	return AppendMADStats(dst, tt)
}

// AppendStatsSession appends the stats of one session: its messages and
// latencies, NAKs, MPT checks, errors.
func AppendStatsSession(dst []byte, s *flow.Session, start time.Time) []byte {
	// (appends, not fmt and text/tabwriter: this runs for each of
	// possibly millions of sessions)
	f := s.Findings()
	dst = append(dst, "\n#"...)
	dst = strconv.AppendUint(dst, uint64(s.ID), 10)
	dst = append(append(append(dst, ' '), s.Transport.String()...), ' ')
	dst = append(s.A.AppendTo(dst), " <-> "...)
	dst = append(s.B.AppendTo(dst), " (paired by "...)
	dst = append(dst, s.Learned.String()...)
	if s.MTU != 0 {
		dst = strconv.AppendUint(append(dst, ", MTU "...), uint64(s.MTU), 10)
		dst = append(append(dst, " from "...), s.MTUFrom()...)
	}
	dst = strconv.AppendUint(append(dst, ")\n  "...), s.Packets(), 10)
	dst = strconv.AppendUint(append(dst, " packets, "...), s.Bytes(), 10)
	dst = strconv.AppendUint(append(dst, " bytes ("...), s.Sent[0].PayloadBytes+s.Sent[1].PayloadBytes, 10)
	dst = appendRel(append(dst, " payload), "...), s.First(), start)
	dst = appendRel(append(dst, " to "...), s.Last(), start)
	dst = flow.AppendBitRate(append(dst, ", "...), s.Throughput())
	dst = append(dst, '\n')
	dst = appendMessageTable(dst, s)
	for code, n := range f.NAKs {
		if n > 0 {
			dst = fmt.Appendf(dst, "  %s: %d\n", decode.SyndromeString(uint8(0x60|code)), n)
		}
	}
	for code, n := range f.RNRNaks {
		if n > 0 {
			dst = fmt.Appendf(dst, "  %s: %d\n", decode.SyndromeString(uint8(0x20|code)), n)
		}
	}
	if f.MPTChecked > 0 {
		dst = fmt.Appendf(dst, "  MPT checks: %d, forbidden %d, accepted although forbidden %d, NAKed although allowed %d\n",
			f.MPTChecked, f.MPTViolations, f.MPTAccepted, f.MPTRejected)
	}
	dst = appendSessionCongestion(dst, s)
	if notes := appendNotes(nil, s); len(notes) != 1 || notes[0] != '-' || f.Gaps+f.Retransmitted+f.Duplicates+f.OutOfOrder > 0 {
		dst = fmt.Appendf(dst, "  PSN gaps %d (%d PSNs lost), retransmissions %d, duplicates %d, out-of-order %d; %s\n",
			f.Gaps, f.LostPSNs, f.Retransmitted, f.Duplicates, f.OutOfOrder, notes)
	}
	return dst
}

// appendMessageTable appends the messages and latencies of s by kind,
// its columns right-aligned as a text/tabwriter with AlignRight and a
// padding of 2 would (each as wide as its widest cell, plus 2).
func appendMessageTable(dst []byte, s *flow.Session) []byte {
	// the cells of the kinds' rows, in order: cell i is b[from[i]:from[i+1]],
	// width[i] runes wide
	var scratch [512]byte
	var from [(decode.NumMsgKinds-1)*8 + 1]uint16
	var cw [(decode.NumMsgKinds - 1) * 8]uint8
	b, n := scratch[:0], 0
	for k := decode.MsgKind(1); k < decode.NumMsgKinds; k++ {
		l := s.Latency(k)
		msgs := s.Messages(k)
		if msgs == 0 && l.N == 0 {
			continue
		}
		b = append(append(b, "  "...), k.String()...)
		b, n = endCell(b, from[:], cw[:], n)
		b = strconv.AppendUint(b, msgs, 10)
		b, n = endCell(b, from[:], cw[:], n)
		b = strconv.AppendUint(b, s.MessageBytes(k), 10)
		b, n = endCell(b, from[:], cw[:], n)
		if l.N == 0 {
			for _, c := range [...]string{"0", "-", "-", "-", "-"} {
				b = append(b, c...)
				b, n = endCell(b, from[:], cw[:], n)
			}
			continue
		}
		b = strconv.AppendUint(b, l.N, 10)
		b, n = endCell(b, from[:], cw[:], n)
		for _, d := range [...]time.Duration{l.Min, l.Quantile(0.5), l.Quantile(0.99), l.Max} {
			b = appendDur(b, d)
			b, n = endCell(b, from[:], cw[:], n)
		}
	}
	if n == 0 {
		return dst
	}
	var width [8]int
	for c, h := range messageHead {
		width[c] = len(h)
	}
	for i := range n {
		width[i%8] = max(width[i%8], int(cw[i]))
	}
	for c, h := range messageHead {
		dst = appendSpaces(dst, width[c]+2-len(h))
		dst = append(dst, h...)
	}
	dst = append(dst, '\n')
	for i := range n {
		dst = appendSpaces(dst, width[i%8]+2-int(cw[i]))
		dst = append(dst, b[from[i]:from[i+1]]...)
		if i%8 == 7 {
			dst = append(dst, '\n')
		}
	}
	return dst
}

// messageHead is the header of appendMessageTable (ASCII: a rune a byte).
var messageHead = [8]string{"  message", "count", "bytes", "completed", "min", "median", "p99", "max"}

// endCell ends cell n of b (appendMessageTable): where the next starts,
// and its width in runes.
func endCell(b []byte, from []uint16, width []uint8, n int) ([]byte, int) {
	width[n] = uint8(min(runeWidth(b[from[n]:]), 255))
	from[n+1] = uint16(len(b))
	return b, n + 1
}

// runeWidth returns the runes of c, text rocetap wrote (valid UTF-8):
// its bytes but the continuation bytes.
func runeWidth(c []byte) int {
	w := len(c)
	for _, x := range c {
		if x&0xC0 == 0x80 {
			w--
		}
	}
	return w
}

// appendSpaces appends n spaces (none when n ≤ 0). Up to 16, where dst
// has room for 16, it stores 16 and keeps n: a call of memmove for a few
// bytes was a fifth of a sessions table row, which pads 18 cells. It is
// small enough to be inlined.
func appendSpaces(dst []byte, n int) []byte {
	if l := len(dst); uint(n) <= 16 && l+16 <= cap(dst) {
		*(*[16]byte)(dst[l : l+16]) = spaces16
		return dst[:l+n]
	}
	return appendManySpaces(dst, n)
}

var spaces16 = [16]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}

// appendManySpaces appends n spaces (none when n ≤ 0).
func appendManySpaces(dst []byte, n int) []byte {
	for n > len(spaces) {
		dst = append(dst, spaces...)
		n -= len(spaces)
	}
	if n > 0 {
		dst = append(dst, spaces[:n]...)
	}
	return dst
}

// AppendExpert appends the expert events grouped by severity and kind,
// like Wireshark's Expert Information dialog, and, when sessions were
// evicted past --max-sessions (ev not nil), the line that says so: their
// events are here, and their later packets started new sessions.
func AppendExpert(dst []byte, groups []flow.ExpertGroup, start time.Time, ev *EvictedJSON) []byte {
	var b bytes.Buffer
	var total uint64
	for _, g := range groups {
		total += g.Count
	}
	fmt.Fprintf(&b, "Expert events: %d\n", total)
	b.Write(AppendEvicted(nil, ev))
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s\n", ExpertGroupLine(&g))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for i := range g.Events {
			c := ExpertRow(&g.Events[i], start)
			fmt.Fprintf(tw, "  frame %s\t%s\t%s\t%s\n", c[0], c[1], c[2], c[3])
		}
		tw.Flush()
		if n := g.Count - uint64(len(g.Events)); n > 0 {
			fmt.Fprintf(&b, "  ... and %d more\n", n)
		}
	}
	return append(dst, b.Bytes()...)
}

// ExpertJSON is one event in `rocetap expert -T json`.
type ExpertJSON struct {
	Frame    int    `json:"frame"`
	Time     string `json:"time"`
	Session  uint32 `json:"session"`
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Text     string `json:"text"`
}

// AppendExpertJSON appends the groups as a JSON object, with an
// "evicted" member when sessions were evicted (ev not nil).
func AppendExpertJSON(dst []byte, groups []flow.ExpertGroup, start time.Time, ev *EvictedJSON) []byte {
	type group struct {
		Severity string       `json:"severity"`
		Kind     string       `json:"kind"`
		Summary  string       `json:"summary"`
		Count    uint64       `json:"count"`
		Events   []ExpertJSON `json:"events"`
	}
	out := make([]group, 0, len(groups))
	for _, g := range groups {
		gj := group{Severity: g.Severity.String(), Kind: g.Name, Summary: g.Summary, Count: g.Count, Events: []ExpertJSON{}}
		for _, e := range g.Events {
			gj.Events = append(gj.Events, ExpertJSON{e.Frame, rel(e.Time, start), e.Session, g.Severity.String(), g.Name, e.Text})
		}
		out = append(out, gj)
	}
	doc := map[string]any{"groups": out}
	if ev != nil {
		doc["evicted"] = ev
	}
	b, _ := json.MarshalIndent(doc, "", " ")
	dst = append(dst, b...)
	return append(dst, '\n')
}

// AppendStatsJSON appends the stats as one JSON object.
func AppendStatsJSON(dst []byte, tt *flow.Totals, sessions []*flow.Session, start time.Time) []byte {
	head, tail := StatsJSON(tt, len(sessions), nil)
	dst = append(dst, head...)
	for i, s := range sessions {
		dst = AppendStatsJSONSession(dst, i, s, start)
	}
	return append(dst, tail...)
}

// StatsJSON returns the stats object of AppendStatsJSON around its
// sessions (n of them), which AppendStatsJSONSession prints one at a time
// between head and tail: a command writes millions out as it goes.
func StatsJSON(tt *flow.Totals, n int, ev *EvictedJSON) (head, tail []byte) {
	ops := map[string]uint64{}
	for op, n := range tt.Opcodes {
		if n > 0 {
			ops[strconv.Itoa(op)+" "+decode.Opcode(op).String()] = n
		}
	}
	syn := map[string]uint64{}
	for s, n := range tt.Syndromes {
		if n > 0 {
			syn[fmt.Sprintf("0x%02x %s", s, decode.SyndromeString(uint8(s)))] = n
		}
	}
	cm := map[string]uint64{}
	for _, c := range tt.CMCounts() {
		cm[decode.CMAttrName(c.Attr)] = c.N // unknown IDs by number: one key each
	}
	v := map[string]any{
		"packets": tt.Packets, "bytes": tt.Bytes, "infiniband": tt.IB, "other": tt.Other,
		"icrc_errors": tt.ICRCErrors, "truncated": tt.Truncated,
		"opcodes": ops, "syndromes": syn, "cm_messages": cm,
		"congestion": map[string]any{"cnps": tt.CNPs, "ecn_ce": tt.ECNCE, "ecn_capable": tt.ECNCapable,
			"pfc_frames": tt.PFCFrames, "pause_frames": tt.PauseFrames, "pfc_pauses": tt.PFCPauses, "pfc_resumes": tt.PFCResumes},
		"sessions": []SessionJSON{},
	}
	if tt.MADs.Total > 0 {
		v["mads"] = madStatsJSON(tt)
	}
	if ev != nil {
		v["evicted"] = ev
	}
	if fj := ToFabricJSON(tt.Fabric); fj != nil {
		v["fabric"] = fj
	}
	return splitJSONArray(v, "sessions", n)
}

// jsonErrorText is the JSON string that stands in a report for what
// could not be marshalled (a NaN would not): what, and why.
func jsonErrorText(what string, err error) []byte {
	b, _ := json.Marshal("rocetap could not write this " + what + ": " + err.Error())
	return b
}

// splitJSONArray writes v as json.MarshalIndent(v, "", " ") does, and a
// newline, and splits it inside its top-level member key, an empty
// array, for the caller to write that array's n elements in between
// (each one after ",\n  " but the first, after "\n  ", as MarshalIndent
// would place them): a report of millions of sessions or flows is
// written an element at a time. Should v not marshal (a NaN would not),
// the document says why in an "error" member instead of its other
// members, and stays valid.
func splitJSONArray(v any, key string, n int) (head, tail []byte) {
	b, err := json.MarshalIndent(v, "", " ")
	k := "\n \"" + key + "\": ["
	i := bytes.Index(b, []byte(k))
	if err != nil || i < 0 {
		if err == nil {
			err = fmt.Errorf("no %q member", key)
		}
		b = fmt.Appendf(nil, "{\n \"error\": %s,\n \"%s\": []\n}", jsonErrorText("report", err), key)
		i = bytes.Index(b, []byte(k))
	}
	b = append(b, '\n')
	i += len(k)
	head, tail = b[:i], b[i:]
	if n > 0 {
		tail = append([]byte("\n "), tail...) // the indent of the closing ]
	}
	return head, tail
}

// AppendStatsJSONSession appends s as session i of the stats object
// (StatsJSON), indented as json.MarshalIndent indents it there.
func AppendStatsJSONSession(dst []byte, i int, s *flow.Session, start time.Time) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	w := statsJSON
	w.b = append(dst, "\n  "...)
	w.session(s, start)
	return w.b
}

// EvictedJSON is what the sessions evicted past --max-sessions counted.
type EvictedJSON struct {
	Sessions    uint64 `json:"sessions"`
	MaxSessions int    `json:"max_sessions"`
	Packets     uint64 `json:"packets"`
	Bytes       uint64 `json:"bytes"`
	Messages    uint64 `json:"messages"`
	Partial     uint64 `json:"partial_messages"`
	Gaps        uint64 `json:"psn_gaps"`
	Retrans     uint64 `json:"retransmissions"`
	NoResponse  uint64 `json:"unanswered_requests"`
	NAKs        uint64 `json:"naks"`
	RNRNaks     uint64 `json:"rnr_naks"`
}

// ToEvictedJSON converts what the tracker evicted past max sessions.
func ToEvictedJSON(e *flow.Evicted, max int) *EvictedJSON {
	f := &e.Findings
	return &EvictedJSON{Sessions: e.Sessions, MaxSessions: max, Packets: e.Packets, Bytes: e.Bytes, Messages: e.Messages,
		Partial: f.Partial, Gaps: f.Gaps, Retrans: f.Retransmitted, NoResponse: f.NoResponse, NAKs: f.NAKCount(), RNRNaks: f.RNRCount()}
}

// AppendEvicted appends the line of the sessions and stats reports that
// says how many sessions were evicted (nothing when none was).
func AppendEvicted(dst []byte, e *EvictedJSON) []byte {
	if e == nil {
		return dst
	}
	return fmt.Appendf(dst, "Evicted: %d sessions, the least recently active past --max-sessions %d (%d packets, %d bytes, %d messages, %d unanswered requests, %d NAKs); their later packets started new sessions\n",
		e.Sessions, e.MaxSessions, e.Packets, e.Bytes, e.Messages, e.NoResponse, e.NAKs)
}

// AppendEvictedJSON appends the last element of the sessions array
// (after n sessions) when sessions were evicted: {"evicted":{...}}.
func AppendEvictedJSON(dst []byte, n int, e *EvictedJSON) []byte {
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, '\n')
	b, _ := json.Marshal(map[string]*EvictedJSON{"evicted": e})
	return append(dst, b...)
}
