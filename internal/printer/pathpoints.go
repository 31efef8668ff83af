package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/pathcmp"
)

// sessions, stats and expert with two captures (-r A -r B): each point's
// usual report under a heading, then the part of the two-point
// comparison that the command is about (AppendPathSessions,
// AppendPathStats, AppendPathExpert). With -T json the whole is one
// object: {"points": [{"point": "A", "file": ..., "report": the usual
// JSON}, {... B ...}], "two_points": {...}}.

// AppendPointHeading appends the heading of one capture point's report.
func AppendPointHeading(dst []byte, point uint8, name string) []byte {
	if point == pathcmp.B {
		dst = append(dst, '\n')
	}
	dst = append(dst, "Point "...)
	dst = append(dst, pathcmp.PointName(point)...)
	dst = append(dst, ": "...)
	dst = append(dst, decode.Sanitize(name)...)
	return append(dst, "\n\n"...)
}

// AppendPointJSONHead opens one capture point's object (and, at A, the
// whole document); its "report" follows.
func AppendPointJSONHead(dst []byte, point uint8, name string) []byte {
	if point == pathcmp.A {
		dst = append(dst, "{\"points\": [\n"...)
	} else {
		dst = append(dst, ",\n"...)
	}
	dst = append(dst, "{\"point\": \""...)
	dst = append(dst, pathcmp.PointName(point)...)
	dst = append(dst, "\", \"file\": "...)
	f, _ := json.Marshal(name)
	dst = append(dst, f...)
	return append(dst, ", \"report\": "...)
}

// AppendPointJSONTail closes one capture point's object; after B, the
// "two_points" object follows.
func AppendPointJSONTail(dst []byte, point uint8) []byte {
	dst = append(dst, '}')
	if point == pathcmp.B {
		dst = append(dst, "],\n\"two_points\": "...)
	}
	return dst
}

// AppendPointsJSONEnd closes the document.
func AppendPointsJSONEnd(dst []byte) []byte { return append(dst, "}\n"...) }

// writePathHeading writes the heading of the two-point section and its
// captures.
func writePathHeading(b *bytes.Buffer, r *pathcmp.Result) {
	fmt.Fprintf(b, "\nTwo capture points (rocetap path -r A -r B has the whole comparison)\n")
	writePathCaptures(b, r)
}

// AppendPathSessions appends the two-point part of rocetap sessions: the
// clock estimate and a line a session, its flows of each direction
// summed.
func AppendPathSessions(dst []byte, r *pathcmp.Result) []byte {
	var b bytes.Buffer
	writePathHeading(&b, r)
	writePathClock(&b, r)
	fmt.Fprintf(&b, "\nSessions between the points (numbered as in A's report; B:N in B's for those A did not see); one-way delays on A's clock; one point: packets only one point saw, lost ones apart:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "session\tmatched\tlost\tnaked\tdup\treordered\tone point\tA->B median\tp99\tB->A median\tp99\tspikes\t\n")
	for _, s := range pathcmp.Sessions(r) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t\n", pointSession(s.Point, s.Session),
			s.AToB.Matched+s.BToA.Matched, s.AToB.Lost+s.BToA.Lost, s.AToB.NAKed+s.BToA.NAKed,
			s.AToB.Duplicates+s.BToA.Duplicates, s.AToB.Reordered+s.BToA.Reordered, s.OnlyOnePoint(),
			medianP99(&s.AToB.Delay), medianP99(&s.BToA.Delay), s.AToB.Spikes+s.BToA.Spikes)
	}
	tw.Flush()
	return append(dst, b.Bytes()...)
}

// medianP99 is two tab-separated cells, empty without delays.
func medianP99(d *pathcmp.DelayStats) string {
	if d.N == 0 {
		return "\t"
	}
	return dur(d.Median) + "\t" + dur(d.P99)
}

// pointSession names a session: "3" in A, "B:3" in B, "-" none.
func pointSession(point uint8, n uint32) string {
	return sessionName(&pathcmp.Flow{Session: n, SessionPoint: point})
}

// AppendPathStats appends the "Two capture points" section of rocetap
// stats: the clock estimate, each direction's counts and delays, and the
// packets only one point saw.
func AppendPathStats(dst []byte, r *pathcmp.Result) []byte {
	var b bytes.Buffer
	writePathHeading(&b, r)
	writePathClock(&b, r)
	fmt.Fprintf(&b, "\nBy direction (one-way delays on A's clock):\n")
	writePathDirections(&b, r)
	o := pathOnlyOne(r)
	fmt.Fprintf(&b, "\nOnly one point saw %d packets: %d downstream only, %d while the other capture was not running, %d of flows seen at one point only\n",
		o.Total, o.OnlyDownstream, o.Outside, o.OffPath)
	return append(dst, b.Bytes()...)
}

// AppendPathExpert appends the two-point expert events of rocetap
// expert, each naming its capture point and frame.
func AppendPathExpert(dst []byte, r *pathcmp.Result) []byte {
	var b bytes.Buffer
	writePathHeading(&b, r)
	writePathEvents(&b, r)
	return append(dst, b.Bytes()...)
}

// PathSessionsJSON is the "two_points" object of rocetap sessions -T json.
type PathSessionsJSON struct {
	Captures [2]PathCaptureJSON `json:"captures"`
	Clock    PathClockJSON      `json:"clock"`
	Sessions []PathSessionJSON  `json:"sessions"`
}

// PathSessionJSON is one session between the points: its totals, and
// its flows of each direction summed.
type PathSessionJSON struct {
	Session      uint32                  `json:"session,omitempty"`
	SessionPoint string                  `json:"session_point,omitempty"`
	Matched      int                     `json:"matched"`
	Lost         int                     `json:"lost"`
	NAKed        int                     `json:"naked"`
	Duplicates   int                     `json:"duplicates"`
	Reordered    int                     `json:"reordered"`
	OnlyOnePoint int                     `json:"only_one_point"`
	Spikes       int                     `json:"delay_spikes"`
	Directions   map[string]PathFlowJSON `json:"directions"`
	OffPath      PathOffPathJSON         `json:"off_path"`
}

// PathOffPathJSON counts the frames of flows seen at one point only.
type PathOffPathJSON struct {
	A int `json:"a"`
	B int `json:"b"`
}

// PathStatsJSON is the "two_points" object of rocetap stats -T json.
type PathStatsJSON struct {
	Captures     [2]PathCaptureJSON      `json:"captures"`
	Clock        PathClockJSON           `json:"clock"`
	Directions   map[string]PathFlowJSON `json:"directions"`
	OnlyOnePoint PathOnlyOneJSON         `json:"only_one_point"`
}

// PathOnlyOneJSON counts the packets only one point saw.
type PathOnlyOneJSON struct {
	Total          int `json:"total"`
	OnlyDownstream int `json:"only_downstream"`
	Outside        int `json:"outside"`
	OffPath        int `json:"off_path"`
}

// PathExpertJSON is the "two_points" object of rocetap expert -T json.
type PathExpertJSON struct {
	Captures [2]PathCaptureJSON   `json:"captures"`
	Expert   []PathEventGroupJSON `json:"expert"`
}

func pathOnlyOne(r *pathcmp.Result) PathOnlyOneJSON {
	var o PathOnlyOneJSON
	for _, d := range []decode.PathDir{decode.PathAToB, decode.PathBToA} {
		t := pathcmp.Totals(r, d)
		o.OnlyDownstream += t.OnlyDownstream
		o.Outside += t.Outside
	}
	off := pathcmp.Totals(r, decode.PathDirUnknown)
	o.OffPath = off.Upstream + off.Downstream
	o.Total = o.OnlyDownstream + o.Outside + o.OffPath
	return o
}

// AppendPathSessionsJSON appends the "two_points" object of sessions.
func AppendPathSessionsJSON(dst []byte, r *pathcmp.Result) []byte {
	out := PathSessionsJSON{Captures: pathCapturesJSON(r), Clock: pathClockJSON(r), Sessions: []PathSessionJSON{}}
	for _, s := range pathcmp.Sessions(r) {
		j := PathSessionJSON{Matched: s.AToB.Matched + s.BToA.Matched, Lost: s.AToB.Lost + s.BToA.Lost, NAKed: s.AToB.NAKed + s.BToA.NAKed,
			Duplicates: s.AToB.Duplicates + s.BToA.Duplicates, Reordered: s.AToB.Reordered + s.BToA.Reordered,
			OnlyOnePoint: s.OnlyOnePoint(), Spikes: s.AToB.Spikes + s.BToA.Spikes,
			Directions: map[string]PathFlowJSON{decode.PathAToB.String(): flowJSON(&s.AToB), decode.PathBToA.String(): flowJSON(&s.BToA)},
			OffPath:    PathOffPathJSON{A: s.OffPath.Upstream, B: s.OffPath.Downstream}}
		if s.Session != 0 {
			j.Session, j.SessionPoint = s.Session, pathcmp.PointName(s.Point)
		}
		out.Sessions = append(out.Sessions, j)
	}
	return appendIndented(dst, out)
}

// AppendPathStatsJSON appends the "two_points" object of stats.
func AppendPathStatsJSON(dst []byte, r *pathcmp.Result) []byte {
	return appendIndented(dst, PathStatsJSON{Captures: pathCapturesJSON(r), Clock: pathClockJSON(r),
		Directions: pathDirectionsJSON(r), OnlyOnePoint: pathOnlyOne(r)})
}

// AppendPathExpertJSON appends the "two_points" object of expert.
func AppendPathExpertJSON(dst []byte, r *pathcmp.Result) []byte {
	return appendIndented(dst, PathExpertJSON{Captures: pathCapturesJSON(r), Expert: pathExpertJSON(r)})
}

func appendIndented(dst []byte, v any) []byte {
	b, _ := json.MarshalIndent(v, "", " ")
	return append(dst, b...)
}
