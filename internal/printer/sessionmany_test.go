package printer

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/synth"
)

// pairSessions tracks n RC QP pairs as gencap -pairs makes them
// (synth.QPPairs) and returns their sessions and the first packet's
// time: the sessions of the QP-scaling capture, from no file.
func pairSessions(n int) ([]*flow.Session, time.Time) {
	tr := flow.New(flow.Options{})
	start := time.Unix(1700000000, 0)
	synth.QPPairs(n, start.Add(-time.Microsecond), tr.Track)
	tr.Flush()
	return tr.Sessions(), start
}

// BenchmarkSessionsTableMany measures and writes the sessions table of
// 50,000 QP pairs of four packets (the QP-scaling capture's): at a
// million sessions, the table is what sessions costs over stats.
func BenchmarkSessionsTableMany(b *testing.B) {
	ss, start := pairSessions(50000)
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t := NewSessionsTable(ss, start)
		buf = t.AppendHead(buf[:0])
		for _, s := range ss {
			buf = t.AppendRow(buf, s)
			if len(buf) > 1<<19 {
				buf = buf[:0]
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ss)), "ns/session")
}
