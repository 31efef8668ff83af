package printer

import (
	"path/filepath"
	"testing"
	"time"

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
	var files []string
	for _, g := range []string{"../../testdata/synth/*.pcap*", "../../testdata/rxe/*.pcap*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("%d captures", len(files))
	}
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
