package printer

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/flow"
)

// sessionsWith returns sessions with IDs 1, 2, ... and these packets
// (split over the two directions).
func sessionsWith(packets []uint64) []*flow.Session {
	ss := make([]*flow.Session, len(packets))
	for i, p := range packets {
		ss[i] = &flow.Session{ID: uint32(i + 1), Sent: [2]flow.DirStats{{Packets: p / 3}, {Packets: p - p/3}}}
	}
	return ss
}

// busiestBySort is BusiestSessions the slow way: sort every session by
// packets, most first (ties: lower ID), keep n, back to ID order.
func busiestBySort(ss []*flow.Session, n int) []uint32 {
	r := slices.Clone(ss)
	slices.SortStableFunc(r, func(x, y *flow.Session) int {
		return cmp.Or(cmp.Compare(y.Packets(), x.Packets()), cmp.Compare(x.ID, y.ID))
	})
	if n > 0 {
		r = r[:min(n, len(r))]
	}
	ids := ids(r)
	slices.Sort(ids)
	return ids
}

func ids(ss []*flow.Session) []uint32 {
	var out []uint32
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func TestBusiestSessions(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 20))
	random := func(n int, most uint64) []uint64 {
		p := make([]uint64, n)
		for i := range p {
			p[i] = rng.Uint64N(most)
		}
		return p
	}
	cases := []struct {
		name    string
		packets []uint64
		n       int
	}{
		{"none", nil, 20},
		{"fewer than n", []uint64{3, 1, 2}, 20},
		{"as many as n", []uint64{3, 1, 2}, 3},
		{"n 0: all", []uint64{3, 1, 2, 9}, 0},
		{"n 1", []uint64{3, 9, 2, 9}, 1},
		{"ties: lower ID", []uint64{4, 4, 4, 4, 4, 4}, 3},
		{"ascending", []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 3},
		{"descending", []uint64{8, 7, 6, 5, 4, 3, 2, 1}, 3},
		{"ties at the cut", []uint64{5, 1, 3, 3, 0, 3, 3, 7, 3}, 4},
		{"random, many ties", random(1000, 5), 20},
		{"random, few ties", random(1000, 1<<40), 20},
		{"random, n even", random(777, 50), 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ss := sessionsWith(c.packets)
			got := ids(BusiestSessions(ss, c.n))
			if want := busiestBySort(ss, c.n); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// Choosing the busiest allocates for them only, never for every session.
func TestBusiestSessionsAllocs(t *testing.T) {
	ss := sessionsWith(make([]uint64, 10000))
	if a := testing.AllocsPerRun(10, func() { BusiestSessions(ss, 20) }); a > 2 {
		t.Errorf("%v allocations, want at most 2 (the heap and the result)", a)
	}
}

// BenchmarkBusiestSessions picks the 20 busiest of a million sessions
// (the budget: well under 50 ns a session).
func BenchmarkBusiestSessions(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := make([]uint64, 1_000_000)
	for i := range p {
		p[i] = 4 + rng.Uint64N(3)
	}
	ss := sessionsWith(p)
	b.ReportAllocs()
	for b.Loop() {
		BusiestSessions(ss, 20)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ss)), "ns/session")
}
