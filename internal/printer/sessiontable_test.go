package printer

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// capSessions are the sessions of one capture and its first packet's time.
type capSessions struct {
	name     string
	sessions []*flow.Session
	start    time.Time
}

// trackedSessions tracks every synthetic and rxe capture (NAKs, lost
// PSNs, LIDs, GIDs, UD and unpaired sessions among them) and returns
// those with sessions.
func trackedSessions(t testing.TB) []capSessions {
	t.Helper()
	files := testcap.Glob(t, 10, "../../testdata/synth/*.pcap*", "../../testdata/rxe/*.pcap*")
	var caps []capSessions
	for _, file := range files {
		tr := flow.New(flow.Options{})
		var p decode.Packet
		frames := testcap.ReadFile(t, file)
		for _, f := range frames {
			p.Frame.Number, p.Frame.Len, p.Frame.Time = f.Number, f.Len, f.Time
			decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
			tr.Track(&p)
		}
		tr.Flush()
		if ss := tr.Sessions(); len(ss) > 0 {
			caps = append(caps, capSessions{filepath.Base(file), ss, frames[0].Time})
		}
	}
	return caps
}

// BenchmarkSessionsTable measures and writes the sessions table of every
// tracked capture: ns/session is the cost of a row, its share of the
// measure pass included.
func BenchmarkSessionsTable(b *testing.B) {
	caps := trackedSessions(b)
	n := 0
	for _, c := range caps {
		n += len(c.sessions)
	}
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, c := range caps {
			t := NewSessionsTable(c.sessions, c.start)
			buf = t.AppendHead(buf[:0])
			for _, s := range c.sessions {
				buf = t.AppendRow(buf, s)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/session")
}

// A row allocates nothing (nor does measuring it once the scratch has
// grown): a table of a million sessions is written a row at a time.
func TestSessionsTableNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	for _, c := range trackedSessions(t) {
		tab := NewSessionsTable(c.sessions, c.start)
		m := sessionMeasure{buf: make([]byte, 0, 64)}
		for _, s := range c.sessions {
			if n := testing.AllocsPerRun(10, func() { buf = tab.AppendRow(buf[:0], s) }); n != 0 {
				t.Errorf("%s: session %d: AppendRow allocates %v times", c.name, s.ID, n)
			}
			if n := testing.AllocsPerRun(10, func() { tab.measure(s, &m) }); n != 0 {
				t.Errorf("%s: session %d: measure allocates %v times", c.name, s.ID, n)
			}
		}
	}
}

// Every row's cells start where their column's header does (rows pad by
// bytes, the duration by runes): two spaces before each, none at it.
func TestSessionsTableAligned(t *testing.T) {
	for _, c := range trackedSessions(t) {
		lines := strings.Split(strings.TrimSuffix(string(AppendSessions(nil, c.sessions, c.start)), "\n"), "\n")[1:]
		head := []rune(lines[0])
		var at []int
		for _, h := range SessionColumns() {
			i := strings.Index(lines[0], "  "+h+" ")
			if h == "ID" {
				i = -2
			} else if h == "Notes" {
				i = strings.LastIndex(lines[0], "  "+h)
			}
			at = append(at, utf8.RuneCountInString(lines[0][:i+2]))
		}
		for _, l := range lines[1:] {
			r := []rune(l)
			for i, a := range at {
				if a > len(r) || a > 0 && (r[a-1] != ' ' || r[a-2] != ' ') || r[a] == ' ' {
					t.Fatalf("%s: column %s not at rune %d of the header's\n%s\n%s", c.name, SessionColumns()[i], a, string(head), l)
				}
			}
		}
	}
}

// startClock writes what appendRel writes: from Unix nanoseconds where
// they are exact, through Sub where they overflow or start has none.
func TestStartClock(t *testing.T) {
	starts := []time.Time{time.Unix(0, 0), time.Unix(1700000000, 123456789), time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64),
		time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}
	times := []int64{0, 1, -1, 999, 1700000000123456789, 1700000000123456788, math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2}
	for _, start := range starts {
		c := newStartClock(start)
		for _, ns := range times {
			want := appendRel(nil, time.Unix(0, ns), start)
			if got := c.appendRel(nil, ns); string(got) != string(want) {
				t.Errorf("from %v: %d: %s, want %s", start, ns, got, want)
			}
		}
	}
}

// appendSpaces appends n spaces whether or not dst has room for the 16
// it stores, and leaves what follows them alone.
func TestAppendSpaces(t *testing.T) {
	for _, room := range []int{0, 1, 15, 16, 17, 100} {
		for n := -2; n <= 70; n++ {
			dst := append(make([]byte, 0, 3+room), "abc"...)
			got := appendSpaces(dst, n)
			if want := "abc" + strings.Repeat(" ", max(n, 0)); string(got) != want {
				t.Errorf("room %d: appendSpaces(%d) = %q, want %q", room, n, got, want)
			}
			if got = append(got, 'x'); got[len(got)-1] != 'x' || len(got) != 4+max(n, 0) {
				t.Errorf("room %d, %d spaces: then %q", room, n, got)
			}
		}
	}
}
