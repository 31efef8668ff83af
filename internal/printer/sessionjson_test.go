package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/testcap"
	"github.com/rocetap/rocetap/mpt"
)

// sessionToJSON is a session as SessionJSON: what encoding/json writes of
// it is what jsonOut.session must write (the reports used to write it so).
func sessionToJSON(s *flow.Session, start time.Time) SessionJSON {
	f := s.Findings()
	j := SessionJSON{ID: s.ID, Merged: s.Merged(), Transport: s.Transport.String(), PairedBy: s.Learned.String(), A: endpointJSON(s.A), B: endpointJSON(s.B),
		MTU: s.MTU, MTUFrom: s.MTUFrom(), Closed: s.Closed, Start: rel(s.First(), start), Duration: string(decode.AppendSeconds(nil, int64(s.Duration()), 9)),
		Throughput: s.Throughput(), SentByA: DirStatsJSON{s.Sent[0], s.Responses(0)}, SentByB: DirStatsJSON{s.Sent[1], s.Responses(1)}, Messages: map[string]MessagesJSON{}, Partial: f.Partial,
		NAKs: map[string]uint64{}, RNRNaks: map[string]uint64{}, Gaps: f.Gaps, Lost: f.LostPSNs, Retrans: f.Retransmitted, Dup: f.Duplicates,
		OOO: f.OutOfOrder, Unmatched: f.Unmatched, OpcodeSeq: f.OpcodeSeq, NoResponse: f.NoResponse, CNPs: f.CNPs, ECNCE: f.ECNCE,
		ICRCErrors: f.ICRCErrors, Truncated: f.Truncated, Congestion: congestionJSON(s)}
	if s.Transport == decode.TransportUD {
		q := fmt.Sprintf("0x%08x", s.QKey())
		j.QKey = &q
	}
	if f.MPTChecked > 0 {
		j.MPT = &MPTJSON{f.MPTChecked, f.MPTViolations, f.MPTAccepted, f.MPTRejected}
	}
	j.ULP = ulpJSON(s.ULP())
	j.QPError = qpErrorsJSON(s)
	for k := decode.MsgKind(1); k < decode.NumMsgKinds; k++ {
		if s.Messages(k) > 0 {
			j.Messages[k.String()] = MessagesJSON{s.Messages(k), s.MessageBytes(k)}
		}
		if l := s.Latency(k); l.N > 0 {
			if j.Latency == nil {
				j.Latency = map[string]LatencyJSON{}
			}
			j.Latency[k.String()] = LatencyJSON{l.N, l.Min.Seconds(), l.Quantile(0.5).Seconds(), l.Quantile(0.99).Seconds(), l.Max.Seconds()}
		}
	}
	for code, n := range f.NAKs {
		if n > 0 {
			j.NAKs[decode.SyndromeString(uint8(0x60|code))] = n
		}
	}
	for code, n := range f.RNRNaks {
		if n > 0 {
			j.RNRNaks[decode.SyndromeString(uint8(0x20|code))] = n
		}
	}
	return j
}

// mptSessions tracks each rxe capture that has an MPT file with its
// responder's model, so that sessions count MPT checks.
func mptSessions(t *testing.T) []capSessions {
	t.Helper()
	var caps []capSessions
	for _, mf := range testcap.Glob(t, 5, "../../testdata/rxe/*.mpt.json") {
		f, err := mpt.Load(mf)
		if err != nil {
			t.Fatal(err)
		}
		model, err := hca.NewModel(&f.Config, hca.Options{})
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, trackFile(t, strings.TrimSuffix(mf, ".mpt.json")+".pcap", flow.Options{MPT: model}))
	}
	return caps
}

// trackFile tracks one capture with opts and returns its sessions.
func trackFile(t *testing.T, file string, opts flow.Options) capSessions {
	t.Helper()
	return trackFrames(filepath.Base(file), testcap.ReadFile(t, file), opts)
}

// trackFrames tracks frames as a capture of their own.
func trackFrames(name string, frames []testcap.Frame, opts flow.Options) capSessions {
	tr := eachTracked(frames, opts, nil)
	tr.Flush()
	c := capSessions{name: name, sessions: tr.Sessions()}
	if len(frames) > 0 {
		c.start = frames[0].Time
	}
	return c
}

// mergedSessions cuts the rxe captures mid-stream, at each of their
// first frames, and keeps the cuts with a session that merged a
// provisional one (responses seen before their requests).
func mergedSessions(t *testing.T) []capSessions {
	t.Helper()
	var caps []capSessions
	for _, f := range testcap.Glob(t, 5, "../../testdata/rxe/*.pcap") {
		frames := testcap.ReadFile(t, f)
		for k := 1; k < min(len(frames), 16); k++ {
			c := trackFrames(fmt.Sprintf("%s from frame %d", filepath.Base(f), k+1), frames[k:], flow.Options{})
			if slices.ContainsFunc(c.sessions, func(s *flow.Session) bool { return len(s.Merged()) > 0 }) {
				caps = append(caps, c)
			}
		}
	}
	return caps
}

// Every session of the synthetic, rxe (with and without their MPTs, and
// cut mid-stream) and ULP captures is written as encoding/json writes sessionToJSON's value:
// compact (sessions -T json) and indented (stats -T json). Between them
// the captures give every member of SessionJSON a value (checked), so a
// member the writer leaves out or misplaces is seen.
func TestSessionJSONMatchesEncodingJSON(t *testing.T) {
	caps := trackedSessions(t)
	caps = append(caps, mptSessions(t)...)
	caps = append(caps, mergedSessions(t)...)
	for _, f := range testcap.Glob(t, 2, "../../testdata/ulp/*.pcap", "../../testdata/ulp/synth/*.pcap") {
		caps = append(caps, trackFile(t, f, flow.Options{}))
	}
	seen := map[string]bool{}
	n := 0
	for _, c := range caps {
		for _, s := range c.sessions {
			n++
			v := sessionToJSON(s, c.start)
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			w := jsonOut{}
			w.session(s, c.start)
			if !bytes.Equal(w.b, want) {
				t.Errorf("%s: session %d, compact:\n got %s\nwant %s", c.name, s.ID, w.b, want)
			}
			want, _ = json.MarshalIndent(v, "  ", " ")
			w = statsJSON
			w.session(s, c.start)
			if !bytes.Equal(w.b, want) {
				t.Errorf("%s: session %d, indented:\n got %s\nwant %s", c.name, s.ID, w.b, want)
			}
			var m map[string]any
			if err := json.Unmarshal(w.b, &m); err != nil {
				t.Fatalf("%s: session %d: %v", c.name, s.ID, err)
			}
			for k := range m {
				seen[k] = true
			}
		}
	}
	var missing []string
	typ := reflect.TypeFor[SessionJSON]()
	for i := range typ.NumField() {
		if k, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no session of the %d in %d captures has %v: the comparison does not cover them", n, len(caps), missing)
	}
	t.Logf("%d sessions of %d captures", n, len(caps))
}

// jsonOut.float writes what encoding/json writes of a float64, and str
// what it writes of a string (escaping included).
func TestJSONOutScalars(t *testing.T) {
	floats := []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 123456789.123, 1e20, 1e21, 1.2345e22, -3e-8,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 4.9e-324, 1.0 / 3, 2.5e-300, 12.26e6, 7.000001}
	for i := range 2000 {
		floats = append(floats, math.Float64frombits(uint64(i)*0x9e3779b97f4a7c15))
	}
	for _, f := range floats {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, _ := json.Marshal(f)
		w := jsonOut{}
		w.float(f)
		if !bytes.Equal(w.b, want) {
			t.Errorf("float %v (%#x): got %s, want %s", f, math.Float64bits(f), w.b, want)
		}
	}
	for _, s := range []string{"", "WRITE", "10.0.0.1", "fe80::1", "a\"b", `a\b`, "<&>", "tab\there", "\x00\x1f\x7f", "é", "\u2028", "\xff\xfe", "PSN sequence error"} {
		want, _ := json.Marshal(s)
		w := jsonOut{}
		w.str(s)
		if !bytes.Equal(w.b, want) {
			t.Errorf("str %q: got %s, want %s", s, w.b, want)
		}
	}
	w := jsonOut{}
	w.float(math.NaN())
	if string(w.b) != "null" {
		t.Errorf("NaN: got %s, want null", w.b)
	}
}

// A session of clean traffic (as the QP-scaling capture's million are)
// is written without an allocation.
func TestSessionJSONNoAllocs(t *testing.T) {
	ss, start := pairSessions(4)
	w := jsonOut{b: make([]byte, 0, 4096)}
	for _, pretty := range []bool{false, true} {
		w.lines = nil
		if pretty {
			w.lines = statsJSON.lines
		}
		if n := testing.AllocsPerRun(20, func() {
			w.b = w.b[:0]
			w.session(ss[0], start)
		}); n != 0 {
			t.Errorf("pretty %v: %v allocations a session, want 0", pretty, n)
		}
	}
}

// BenchmarkSessionJSONMany writes the JSON of 50,000 QP pairs of four
// packets (the QP-scaling capture's sessions), compact and indented.
func BenchmarkSessionJSONMany(b *testing.B) {
	ss, start := pairSessions(50000)
	for _, pretty := range []bool{false, true} {
		b.Run(fmt.Sprint("pretty=", pretty), func(b *testing.B) {
			w := jsonOut{b: make([]byte, 0, 1<<20)}
			if pretty {
				w = statsJSON
				w.b = make([]byte, 0, 1<<20)
			}
			b.ReportAllocs()
			for range b.N {
				for _, s := range ss {
					w.session(s, start)
					if len(w.b) > 1<<19 {
						w.b = w.b[:0]
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ss)), "ns/session")
		})
	}
}

// TestSplitJSONArrayUnmarshalable: a report that does not marshal (a NaN)
// gives a valid document that says why, with the array the elements go
// into, and no panic (splitJSONArray sliced at -1 before).
func TestSplitJSONArrayUnmarshalable(t *testing.T) {
	for _, n := range []int{0, 2} {
		head, tail := splitJSONArray(map[string]any{"x": math.NaN(), "sessions": []int{}}, "sessions", n)
		doc := append([]byte(nil), head...)
		for i := range n {
			if i > 0 {
				doc = append(doc, ',')
			}
			doc = append(doc, "\n  1"...)
		}
		doc = append(doc, tail...)
		var v struct {
			Error    string `json:"error"`
			Sessions []int  `json:"sessions"`
		}
		if err := json.Unmarshal(doc, &v); err != nil || !strings.Contains(v.Error, "NaN") || len(v.Sessions) != n {
			t.Errorf("n=%d: %v, %+v:\n%s", n, err, v, doc)
		}
	}
}
