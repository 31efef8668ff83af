package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/pathcmp"
)

// TestTwoPointsGolden checks sessions, stats and expert -r A -r B, text
// and JSON, on testdata/path (whose truth pathcmp's tests check).
func TestTwoPointsGolden(t *testing.T) {
	a, b := td+"path/a.pcapng", td+"path/b.pcapng"
	for _, cmd := range []string{"sessions", "stats", "expert"} {
		for _, format := range []string{"text", "json"} {
			name := "twopoints." + cmd + "." + format
			t.Run(name, func(t *testing.T) {
				out, errOut, code := run(t, nil, cmd, "-r", a, "-r", b, "-T", format)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if format == "json" && !json.Valid([]byte(out)) {
					t.Fatalf("not JSON:\n%s", out)
				}
				checkGolden(t, name, out)
			})
		}
	}
}

// twoPointsJSON is the document of sessions/stats/expert -r A -r B -T
// json, each point's report left raw.
type twoPointsJSON struct {
	Points []struct {
		Point  string          `json:"point"`
		File   string          `json:"file"`
		Report json.RawMessage `json:"report"`
	} `json:"points"`
	TwoPoints json.RawMessage `json:"two_points"`
}

// twoPoints runs a report command on two captures, -T json, and decodes
// its "two_points" into v.
func twoPoints(t *testing.T, cmd, a, b string, v any) twoPointsJSON {
	t.Helper()
	out, errOut, code := run(t, nil, cmd, "-r", a, "-r", b, "-T", "json")
	if code != 0 {
		t.Fatalf("%s -r A -r B: exit %d: %s", cmd, code, errOut)
	}
	var doc twoPointsJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if err := json.Unmarshal(doc.TwoPoints, v); err != nil {
		t.Fatalf("%s: two_points: %v", cmd, err)
	}
	return doc
}

// TestTwoPointsAgreeWithPath: on testdata/path and on a pair with every
// case (captures of different spans, an off-path flow, a request held
// past the next), each number the three commands give is the one
// rocetap path gives on the same pair, the lost, duplicated, reordered,
// NAKed and off-path counts are the generator's, and each point's
// report is the command's report of that capture alone.
func TestTwoPointsAgreeWithPath(t *testing.T) {
	dir := t.TempDir()
	tp := synth.TwoPoint{
		Start: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Requests: 200, Gap: 5 * time.Millisecond, Delay: 3 * time.Millisecond,
		Jitter: 100 * time.Microsecond, Respond: 20 * time.Microsecond, LinkA: synth.LinkEthernet, LinkB: synth.LinkSLL2,
		Lost: []int{10, 11, 150}, LostResp: []int{50}, Dup: []int{30, 31}, Late: map[int]time.Duration{100: 7 * time.Millisecond},
		NAK: []int{120}, Offset: -700 * time.Millisecond, DriftPPM: -60,
		AFrom: time.Millisecond, BUntil: 900 * time.Millisecond, OffPath: 3,
	}
	fa, fb, truth, err := tp.Build()
	if err != nil {
		t.Fatal(err)
	}
	var rich [2]string
	for i, f := range []synth.File{fa, fb} {
		data, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		rich[i] = filepath.Join(dir, f.Name+".pcapng")
		if err := os.WriteFile(rich[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct{ lost, dup, reordered, naked, offPath int }
	for _, tc := range []struct {
		name string
		a, b string
		want *counts // the generator's truth, when known here
	}{
		{"testdata/path", td + "path/a.pcapng", td + "path/b.pcapng", nil},
		{"spans, off path, reordering", rich[0], rich[1], &counts{len(truth.LostA) + len(truth.LostRespB), len(truth.DupB),
			len(truth.ReorderedB), len(truth.NAKedB), len(truth.OffPathA)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path printer.PathJSON
			if out, errOut, code := run(t, nil, "path", "-r", tc.a, "-r", tc.b, "-T", "json"); code != 0 || json.Unmarshal([]byte(out), &path) != nil {
				t.Fatalf("rocetap path: exit %d: %s", code, errOut)
			}

			// sessions: each session sums its flows in path's report.
			var ses printer.PathSessionsJSON
			doc := twoPoints(t, "sessions", tc.a, tc.b, &ses)
			checkPoints(t, "sessions", doc, tc.a, tc.b)
			if ses.Clock != path.Clock {
				t.Errorf("sessions: clock %+v, path's %+v", ses.Clock, path.Clock)
			}
			type sk struct {
				n     uint32
				point string
			}
			want := map[sk]*printer.PathSessionJSON{}
			for _, f := range path.Flows {
				k := sk{f.Session, f.SessionPoint}
				w := want[k]
				if w == nil {
					w = &printer.PathSessionJSON{Directions: map[string]printer.PathFlowJSON{}}
					want[k] = w
				}
				w.Matched += f.Matched
				w.Lost += f.Lost
				w.NAKed += f.NAKed
				w.Duplicates += f.Duplicates
				w.Reordered += f.Reordered
				w.Spikes += f.Spikes
				w.OnlyOnePoint += f.OnlyDownstream + f.Outside
				if f.Direction == "off path" {
					w.OnlyOnePoint += f.Upstream + f.Downstream
					continue
				}
				if _, ok := w.Directions[f.Direction]; ok {
					t.Fatalf("session %v has two flows %s: compare the delays another way", k, f.Direction)
				}
				w.Directions[f.Direction] = f
			}
			var got counts
			for _, s := range ses.Sessions {
				got.lost += s.Lost
				got.dup += s.Duplicates
				got.reordered += s.Reordered
				got.naked += s.NAKed
				got.offPath += s.OffPath.A + s.OffPath.B
				w := want[sk{s.Session, s.SessionPoint}]
				if w == nil {
					t.Errorf("session %s:%d is not in path's report", s.SessionPoint, s.Session)
					continue
				}
				delete(want, sk{s.Session, s.SessionPoint})
				if s.Matched != w.Matched || s.Lost != w.Lost || s.NAKed != w.NAKed || s.Duplicates != w.Duplicates ||
					s.Reordered != w.Reordered || s.Spikes != w.Spikes || s.OnlyOnePoint != w.OnlyOnePoint {
					t.Errorf("session %s:%d: %+v\npath's flows sum to %+v", s.SessionPoint, s.Session, s, w)
				}
				for d, f := range w.Directions {
					g := s.Directions[d]
					if !sameDelay(g.Delay, f.Delay) || g.Matched != f.Matched || g.Lost != f.Lost {
						t.Errorf("session %s:%d %s: %+v %+v\npath's flow %+v %+v", s.SessionPoint, s.Session, d, g, g.Delay, f, f.Delay)
					}
				}
			}
			if len(want) > 0 {
				t.Errorf("sessions misses path's %v", want)
			}
			if tc.want != nil && got != *tc.want {
				t.Errorf("sessions found %+v, the generator made %+v", got, *tc.want)
			}

			// stats: the clock and directions are path's.
			var st printer.PathStatsJSON
			doc = twoPoints(t, "stats", tc.a, tc.b, &st)
			checkPoints(t, "stats", doc, tc.a, tc.b)
			if st.Clock != path.Clock || !reflect.DeepEqual(st.Captures, path.Captures) {
				t.Errorf("stats: clock %+v, captures %+v\npath's %+v, %+v", st.Clock, st.Captures, path.Clock, path.Captures)
			}
			one := 0
			for d, f := range path.Directions {
				g := st.Directions[d]
				if !sameDelay(g.Delay, f.Delay) || g.Matched != f.Matched || g.Lost != f.Lost || g.Duplicates != f.Duplicates ||
					g.Reordered != f.Reordered || g.NAKed != f.NAKed || g.OnlyDownstream != f.OnlyDownstream || g.Outside != f.Outside {
					t.Errorf("stats %s: %+v\npath's %+v", d, g, f)
				}
				one += f.OnlyDownstream + f.Outside
			}
			for _, f := range path.Flows {
				if f.Direction == "off path" {
					one += f.Upstream + f.Downstream
				}
			}
			if st.OnlyOnePoint.Total != one || st.OnlyOnePoint.OnlyDownstream+st.OnlyOnePoint.Outside+st.OnlyOnePoint.OffPath != one {
				t.Errorf("stats: only one point %+v, path's flows say %d", st.OnlyOnePoint, one)
			}
			if tc.want != nil && st.OnlyOnePoint.OffPath != tc.want.offPath {
				t.Errorf("stats: %d packets off path, the generator sent %d", st.OnlyOnePoint.OffPath, tc.want.offPath)
			}

			// expert: path's events, frame by frame.
			var ex printer.PathExpertJSON
			doc = twoPoints(t, "expert", tc.a, tc.b, &ex)
			checkPoints(t, "expert", doc, tc.a, tc.b)
			gotEv, _ := json.Marshal(ex.Expert)
			wantEv, _ := json.Marshal(path.Expert)
			if string(gotEv) != string(wantEv) {
				t.Errorf("expert: %s\npath's %s", gotEv, wantEv)
			}
			if tc.want != nil && (len(ex.Expert) == 0 || ex.Expert[0].Kind != "path_loss" || ex.Expert[0].Count != tc.want.lost) {
				t.Errorf("expert: %+v, the generator lost %d", ex.Expert, tc.want.lost)
			}
		})
	}
}

// sameDelay: two delay summaries agree to the nanosecond.
func sameDelay(a, b *printer.PathDelayJSON) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// checkPoints: each point's report in doc is the command's JSON report
// of that capture alone, and the text output likewise holds each
// capture's report under its heading.
func checkPoints(t *testing.T, cmd string, doc twoPointsJSON, a, b string) {
	t.Helper()
	if len(doc.Points) != 2 {
		t.Fatalf("%s: %d points", cmd, len(doc.Points))
	}
	text, errOut, code := run(t, nil, cmd, "-r", a, "-r", b)
	if code != 0 {
		t.Fatalf("%s -r A -r B: exit %d: %s", cmd, code, errOut)
	}
	for i, p := range []string{a, b} {
		pt := doc.Points[i]
		if pt.Point != pathcmp.PointName(uint8(i)) || pt.File != p {
			t.Errorf("%s: point %d is %s %s", cmd, i, pt.Point, pt.File)
		}
		alone, _, code := run(t, nil, cmd, "-r", p, "-T", "json")
		if code != 0 || strings.TrimSpace(string(pt.Report)) != strings.TrimSpace(alone) {
			t.Errorf("%s: point %s's report differs from %s -r %s -T json", cmd, pt.Point, cmd, p)
		}
		aloneText, _, _ := run(t, nil, cmd, "-r", p)
		if !strings.Contains(text, "Point "+pathcmp.PointName(uint8(i))+": "+p+"\n\n"+aloneText) {
			t.Errorf("%s: the text output lacks %s -r %s's report under its heading", cmd, cmd, p)
		}
	}
}

// TestTwoPointsErrors: what two captures cannot do says what to do
// instead, with exit status 1 and nothing on stdout.
func TestTwoPointsErrors(t *testing.T) {
	a, b := td+"path/a.pcapng", td+"path/b.pcapng"
	for _, cmd := range []string{"sessions", "stats", "expert"} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"-r", a, "-r", b, "-r", a}, "-r given 3 times: give one capture (-r FILE), or two"},
			{[]string{"-r", a, "-r", "-"}, "-r -: with two capture points each is read from a file"},
			{[]string{"-r", a, "-r", b, "-Y", "udp"}, "-Y with -r A -r B: the comparison covers every packet; run rocetap " + cmd},
			{[]string{"-r", a, "--window", "2s"}, "--window is for two capture points"},
			{[]string{"-r", a, "-r", b, "--window", "0s"}, "--window 0s"},
			{[]string{"-r", a, "-r", b, "-T", "fields"}, `-T "fields": want text or json`},
			{[]string{"-r", a, "-r", td + "nonexistent.pcap"}, "point B: "},
		} {
			out, errOut, code := run(t, nil, append([]string{cmd}, tc.args...)...)
			if code != ExitInput || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("%s %v: exit %d, %q, stdout %q; want exit %d and %q", cmd, tc.args, code, errOut, out, ExitInput, tc.want)
			}
		}
	}
}

// TestTwoPointsDamaged: a capture damaged part-way gives every report
// of what was read, and exit status 2 naming the point.
func TestTwoPointsDamaged(t *testing.T) {
	data, err := os.ReadFile(td + "path/b.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "b-cut.pcapng")
	if err := os.WriteFile(cut, data[:len(data)*2/3+7], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, nil, "stats", "-r", td+"path/a.pcapng", "-r", cut, "-T", "json")
	if code != ExitDamaged || !strings.Contains(errOut, "point B ("+cut+")") || !json.Valid([]byte(out)) || !strings.Contains(out, `"two_points"`) {
		t.Errorf("exit %d, %q; want exit %d naming point B, and the whole JSON report:\n%s", code, errOut, ExitDamaged, out)
	}
}

// TestTwoPointsREADME: the README's examples of sessions, stats and
// expert -r A -r B are their output (from the "Two capture points"
// line on where the example pipes through sed).
func TestTwoPointsREADME(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const pair = " -r testdata/path/a.pcapng -r testdata/path/b.pcapng"
	const tail = " | sed -n '/^Two capture points/,$p'"
	for _, c := range []struct{ cmd, pipe string }{{"sessions", ""}, {"stats", tail}, {"expert", tail}} {
		_, rest, ok := strings.Cut(string(b), "$ rocetap "+c.cmd+pair+c.pipe+"\n")
		if !ok {
			t.Errorf("the README has no example of rocetap %s -r A -r B", c.cmd)
			continue
		}
		want, _, _ := strings.Cut(rest, "\n$ ")
		want, _, _ = strings.Cut(want, "```")
		out, errOut, code := run(t, nil, c.cmd, "-r", td+"path/a.pcapng", "-r", td+"path/b.pcapng")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		out = strings.ReplaceAll(out, td, "testdata/")
		if c.pipe != "" {
			_, out, _ = strings.Cut(out, "\nTwo capture points")
			out = "Two capture points" + out
		}
		if strings.TrimSpace(out) != strings.TrimSpace(want) {
			t.Errorf("the README's example of %s differs from the output:\n--- output\n%s\n--- README\n%s", c.cmd, out, want)
		}
	}
}
