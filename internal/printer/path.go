package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/pathcmp"
)

// The report of rocetap path: two captures of the same traffic compared.

// pathEvents are the two-point expert events, most severe first.
var pathEvents = []struct {
	name     string
	severity decode.Severity
	summary  string
}{
	{decode.PathEventLoss, decode.SevWarning, "Lost between the capture points"},
	{decode.PathEventDelaySpike, decode.SevNote, "One-way delay above the flow's p99 and its usual jitter"},
}

func signedDur(d time.Duration) string {
	if d >= 0 {
		return "+" + dur(d)
	}
	return dur(d)
}

func linkNames(m map[decode.LinkType]int) string {
	var s []string
	for _, lt := range slices.Sorted(maps.Keys(m)) {
		s = append(s, lt.String())
	}
	if len(s) == 0 {
		return "no frames"
	}
	return strings.Join(s, ", ")
}

// The text report of a two-point comparison: the captures, the clock
// estimate (AppendPathHead), a table of the flows, one direction of a QP
// each (PathTable, a row at a time: a million QPs make two million
// flows), the totals by direction and the expert events
// (AppendPathTail).

// AppendPathHead appends the report up to its table of flows: the
// captures, the clock and the table's title.
func AppendPathHead(dst []byte, r *pathcmp.Result) []byte {
	b := bytes.NewBuffer(dst)
	fmt.Fprintf(b, "Two capture points\n")
	writePathCaptures(b, r)
	writePathClock(b, r)
	fmt.Fprintf(b, "\nSessions (as rocetap sessions numbers them in A; B:N in B for those A did not see), one direction of a QP a line; upstream: the point it passed first:\n")
	return b.Bytes()
}

// AppendPathTail appends the report after its table of flows: the
// totals by direction and the expert events.
func AppendPathTail(dst []byte, r *pathcmp.Result) []byte {
	b := bytes.NewBuffer(dst)
	fmt.Fprintf(b, "\nBy direction:\n")
	writePathDirections(b, r)
	writePathEvents(b, r)
	return b.Bytes()
}

// pathCols are the columns of the table of flows.
const pathCols = 17

var pathHead = [pathCols]string{"session", "flow", "dir", "upstream", "downstream", "matched", "lost", "naked", "dup", "reordered",
	"only down", "outside", "delay min", "median", "p99", "max", "spikes"}

// PathTable writes the table of flows a row at a time, its columns
// right-aligned, each as wide as its widest cell and two more, as
// text/tabwriter with AlignRight and a padding of 2 would. text/tabwriter
// held every row until the end: 520 MB at a million QP pairs.
type PathTable struct {
	width [pathCols]int
	cells []byte
	ends  [pathCols]int
}

// NewPathTable measures the cells of r's flows.
func NewPathTable(r *pathcmp.Result) *PathTable {
	t := &PathTable{}
	for i, h := range pathHead {
		t.width[i] = len(h) // ASCII
	}
	for _, f := range r.Flows {
		t.cells = t.appendCells(t.cells[:0], f)
		for i, from := 0, 0; i < pathCols; i++ {
			t.width[i] = max(t.width[i], runeWidth(t.cells[from:t.ends[i]]))
			from = t.ends[i]
		}
	}
	return t
}

// appendCells appends the cells of f's row, one after the other, and
// records where each ends.
func (t *PathTable) appendCells(b []byte, f *pathcmp.Flow) []byte {
	n := 0
	end := func() {
		t.ends[n] = len(b)
		n++
	}
	switch {
	case f.Session == 0:
		b = append(b, '-')
	case f.SessionPoint == pathcmp.B:
		b = decode.AppendUint(append(b, "B:"...), uint64(f.Session))
	default:
		b = decode.AppendUint(b, uint64(f.Session))
	}
	end()
	b = append(b, f.Src...)
	b = append(b, " → "...)
	b = append(b, f.Dst...)
	b = decode.AppendHex(append(b, " QP "...), uint64(f.DestQP), 6)
	end()
	if dir := f.Dir.String(); dir != "" {
		b = append(b, dir...)
	} else {
		b = append(b, "off path"...)
	}
	end()
	for _, v := range [...]int{f.Upstream, f.Downstream, f.Matched, f.Lost, f.NAKed, f.Duplicates, f.Reordered, f.OnlyDownstream, f.Outside} {
		b = decode.AppendUint(b, uint64(v))
		end()
	}
	for _, d := range [...]time.Duration{f.Delay.Min, f.Delay.Median, f.Delay.P99, f.Delay.Max} {
		if f.Delay.N > 0 {
			b = appendDur(b, d)
		}
		end()
	}
	b = decode.AppendUint(b, uint64(f.Spikes))
	end()
	return b
}

// AppendHead appends the table's head row.
func (t *PathTable) AppendHead(dst []byte) []byte {
	for i, h := range pathHead {
		dst = append(appendSpaces(dst, t.width[i]+2-len(h)), h...)
	}
	return append(dst, '\n')
}

// AppendRow appends f's row.
func (t *PathTable) AppendRow(dst []byte, f *pathcmp.Flow) []byte {
	t.cells = t.appendCells(t.cells[:0], f)
	for i, from := 0, 0; i < pathCols; i++ {
		c := t.cells[from:t.ends[i]]
		dst = append(appendSpaces(dst, t.width[i]+2-runeWidth(c)), c...)
		from = t.ends[i]
	}
	return append(dst, '\n')
}

// writePathCaptures writes a line for each capture point.
func writePathCaptures(b *bytes.Buffer, r *pathcmp.Result) {
	for p := range 2 {
		span := "no RDMA packets"
		if !r.Start[p].IsZero() {
			span = r.Start[p].Format("2006-01-02 15:04:05.000000") + " to " + r.End[p].Format("15:04:05.000000") + " UTC (its own clock)"
		}
		fmt.Fprintf(b, "  %s: %s: %d frames (%s), %s\n", pathcmp.PointName(uint8(p)), decode.Sanitize(r.Names[p]), r.Frames[p], linkNames(r.Links[p]), span)
	}
}

// writePathClock writes the clock estimate, after an empty line.
func writePathClock(b *bytes.Buffer, r *pathcmp.Result) {
	ck := &r.Clock
	fmt.Fprintf(b, "\nClock of B against A")
	if !ck.Known {
		fmt.Fprintf(b, ": not measurable (no packets matched in both directions); the clocks are taken as equal, so one-way delays include their offset\n")
	} else {
		fmt.Fprintf(b, " (from the fastest packets each way in %d time slices):\n", ck.Samples)
		fmt.Fprintf(b, "  offset  %s ± %s at A's first RDMA packet (%s), delays both ways taken as equal; within ±%s whatever their asymmetry\n",
			signedDur(ck.Offset), dur(ck.OffsetErr), ck.Ref.Format("15:04:05.000000"), dur(ck.Bound))
		fmt.Fprintf(b, "  drift   %+.2f ± %.2f ppm\n", ck.DriftPPM, ck.DriftErrPPM)
	}
}

// writePathDirections writes a line for each direction's totals.
func writePathDirections(b *bytes.Buffer, r *pathcmp.Result) {
	for _, d := range []decode.PathDir{decode.PathAToB, decode.PathBToA} {
		t := pathcmp.Totals(r, d)
		fmt.Fprintf(b, "  %s: %d packets matched, %d lost between the points, %d NAKed by the responder, %d duplicated, %d reordered",
			d, t.Matched, t.Lost, t.NAKed, t.Duplicates, t.Reordered)
		if t.Delay.N > 0 {
			fmt.Fprintf(b, "; one-way delay min %s, median %s, p99 %s, max %s", dur(t.Delay.Min), dur(t.Delay.Median), dur(t.Delay.P99), dur(t.Delay.Max))
		}
		b.WriteByte('\n')
	}
}

// writePathEvents writes the count of the two-point expert events, after
// an empty line, and the events by kind.
func writePathEvents(b *bytes.Buffer, r *pathcmp.Result) {
	total := 0
	for _, n := range r.EventCounts {
		total += n
	}
	fmt.Fprintf(b, "\nExpert events: %d\n", total)
	for _, k := range pathEvents {
		n := r.EventCounts[k.name]
		if n == 0 {
			continue
		}
		fmt.Fprintf(b, "\n%s  %s (%d): %s\n", k.severity, k.name, n, k.summary)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		shown := 0
		for _, e := range r.Events {
			if e.Name != k.name {
				continue
			}
			shown++
			fmt.Fprintf(tw, "  %s frame %d\t%s\t%s\t%s\n", pathcmp.PointName(e.Point), e.Frame, rel(e.Time, r.Start[e.Point]), e.Flow, decode.Sanitize(e.Text))
		}
		tw.Flush()
		if n > shown {
			fmt.Fprintf(b, "  ... and %d more\n", n-shown)
		}
	}
}

// sessionName is a flow's session: "3" in A, "B:3" in B.
func sessionName(f *pathcmp.Flow) string {
	switch {
	case f.Session == 0:
		return "-"
	case f.SessionPoint == pathcmp.B:
		return "B:" + u(uint64(f.Session))
	}
	return u(uint64(f.Session))
}

// PathJSON is the report of rocetap path -T json.
type PathJSON struct {
	Captures   [2]PathCaptureJSON      `json:"captures"`
	Clock      PathClockJSON           `json:"clock"`
	Flows      []PathFlowJSON          `json:"flows"`
	Directions map[string]PathFlowJSON `json:"directions"`
	Expert     []PathEventGroupJSON    `json:"expert"`
}

// PathCaptureJSON is one capture point.
type PathCaptureJSON struct {
	Point     string   `json:"point"`
	File      string   `json:"file"`
	Frames    int      `json:"frames"`
	LinkTypes []string `json:"link_types"`
	First     string   `json:"first,omitempty"` // RFC 3339, its own clock
	Last      string   `json:"last,omitempty"`
}

// PathClockJSON is the clock estimate; durations in seconds.
type PathClockJSON struct {
	Known       bool    `json:"known"`
	Ref         string  `json:"ref,omitempty"`
	Offset      float64 `json:"offset"`
	OffsetErr   float64 `json:"offset_err"`
	Bound       float64 `json:"bound"`
	DriftPPM    float64 `json:"drift_ppm"`
	DriftErrPPM float64 `json:"drift_err_ppm"`
	Slices      int     `json:"slices"`
}

// PathFlowJSON is one flow (or a direction's totals); delays in seconds.
type PathFlowJSON struct {
	Session        uint32         `json:"session,omitempty"`       // as rocetap sessions numbers them in session_point
	SessionPoint   string         `json:"session_point,omitempty"` // A, or B for a flow A did not see
	Flow           string         `json:"flow,omitempty"`
	Src            string         `json:"src,omitempty"`
	Dst            string         `json:"dst,omitempty"`
	DestQP         *uint32        `json:"dest_qp,omitempty"`
	Direction      string         `json:"direction,omitempty"`
	Upstream       int            `json:"upstream"`
	Downstream     int            `json:"downstream"`
	Matched        int            `json:"matched"`
	Lost           int            `json:"lost"`
	NAKed          int            `json:"naked"`
	Duplicates     int            `json:"duplicates"`
	Reordered      int            `json:"reordered"`
	OnlyDownstream int            `json:"only_downstream"`
	Outside        int            `json:"outside"`
	Spikes         int            `json:"delay_spikes"`
	Delay          *PathDelayJSON `json:"delay,omitempty"`
}

// PathDelayJSON summarizes one-way delays, in seconds.
type PathDelayJSON struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// PathEventGroupJSON is the events of one kind.
type PathEventGroupJSON struct {
	Severity string          `json:"severity"`
	Kind     string          `json:"kind"`
	Summary  string          `json:"summary"`
	Count    int             `json:"count"`
	Events   []PathEventJSON `json:"events"`
}

// PathEventJSON is one event: the frame of its capture point.
type PathEventJSON struct {
	Point string `json:"point"`
	Frame int    `json:"frame"`
	Time  string `json:"time"` // seconds since that capture's first RDMA packet
	Flow  string `json:"flow"`
	Text  string `json:"text"`
}

func flowJSON(f *pathcmp.Flow) PathFlowJSON {
	j := PathFlowJSON{Upstream: f.Upstream, Downstream: f.Downstream, Matched: f.Matched,
		Lost: f.Lost, NAKed: f.NAKed, Duplicates: f.Duplicates, Reordered: f.Reordered, OnlyDownstream: f.OnlyDownstream,
		Outside: f.Outside, Spikes: f.Spikes, Direction: f.Dir.String()}
	if f.Session != 0 {
		j.Session, j.SessionPoint = f.Session, pathcmp.PointName(f.SessionPoint)
	}
	if f.Src != "" {
		qp := f.DestQP
		j.Flow, j.Src, j.Dst, j.DestQP = f.Name(), f.Src, f.Dst, &qp
		if j.Direction == "" {
			j.Direction = "off path"
		}
	}
	if d := f.Delay; d.N > 0 {
		j.Delay = &PathDelayJSON{d.N, d.Min.Seconds(), d.Median.Seconds(), d.P99.Seconds(), d.Max.Seconds()}
	}
	return j
}

// PathJSONParts returns the JSON report of r but its flows, split where
// they go: head, then each flow (AppendPathJSONFlow), then tail.
func PathJSONParts(r *pathcmp.Result) (head, tail []byte) {
	out := PathJSON{Captures: pathCapturesJSON(r), Clock: pathClockJSON(r), Flows: []PathFlowJSON{},
		Directions: pathDirectionsJSON(r), Expert: pathExpertJSON(r)}
	return splitJSONArray(out, "flows", len(r.Flows))
}

// AppendPathJSONFlow appends flow i of the JSON report (PathJSONParts),
// indented as json.MarshalIndent indents it there.
func AppendPathJSONFlow(dst []byte, i int, f *pathcmp.Flow) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	b, err := json.MarshalIndent(flowJSON(f), "  ", " ")
	if err != nil { // (a NaN would not marshal): the flow says why, the document stays valid
		b = fmt.Appendf(nil, "{\"error\": %s}", jsonErrorText("flow", err))
	}
	return append(append(dst, "\n  "...), b...)
}

func pathCapturesJSON(r *pathcmp.Result) [2]PathCaptureJSON {
	var out [2]PathCaptureJSON
	for p := range 2 {
		c := PathCaptureJSON{Point: pathcmp.PointName(uint8(p)), File: r.Names[p], Frames: r.Frames[p], LinkTypes: []string{}}
		for _, lt := range slices.Sorted(maps.Keys(r.Links[p])) {
			c.LinkTypes = append(c.LinkTypes, lt.String())
		}
		if !r.Start[p].IsZero() {
			c.First, c.Last = r.Start[p].Format(time.RFC3339Nano), r.End[p].Format(time.RFC3339Nano)
		}
		out[p] = c
	}
	return out
}

func pathClockJSON(r *pathcmp.Result) PathClockJSON {
	ck := &r.Clock
	out := PathClockJSON{Known: ck.Known, Offset: ck.Offset.Seconds(), OffsetErr: ck.OffsetErr.Seconds(), Bound: ck.Bound.Seconds(),
		DriftPPM: ck.DriftPPM, DriftErrPPM: ck.DriftErrPPM, Slices: ck.Samples}
	if ck.Known {
		out.Ref = ck.Ref.Format(time.RFC3339Nano)
	}
	return out
}

func pathDirectionsJSON(r *pathcmp.Result) map[string]PathFlowJSON {
	out := map[string]PathFlowJSON{}
	for _, d := range []decode.PathDir{decode.PathAToB, decode.PathBToA} {
		t := pathcmp.Totals(r, d)
		out[d.String()] = flowJSON(&t)
	}
	return out
}

func pathExpertJSON(r *pathcmp.Result) []PathEventGroupJSON {
	out := []PathEventGroupJSON{}
	for _, k := range pathEvents {
		n := r.EventCounts[k.name]
		if n == 0 {
			continue
		}
		g := PathEventGroupJSON{Severity: k.severity.String(), Kind: k.name, Summary: k.summary, Count: n, Events: []PathEventJSON{}}
		for _, e := range r.Events {
			if e.Name == k.name {
				g.Events = append(g.Events, PathEventJSON{pathcmp.PointName(e.Point), e.Frame, rel(e.Time, r.Start[e.Point]), e.Flow, e.Text})
			}
		}
		out = append(out, g)
	}
	return out
}
