package printer

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/text"
)

// `rocetap stats` in text details the busiest sessions only (--top): a
// capture of a million QP pairs made a six-million-line report, 0.7 µs a
// session, that no one reads; `rocetap sessions` lists every session a
// line each, and -T json keeps every session for programs.

// BusiestSessions returns the n sessions of ss with the most packets, in
// the order of ss (the tracker's: by ID); of sessions with as many
// packets, the earlier in ss wins. It returns ss itself when n ≤ 0 (all)
// or ss has no more than n sessions.
//
// One pass with a bounded heap of n: O(len(ss)) reads of a session's two
// packet counters, O(n) memory, where sorting every session by packets
// would take O(len(ss) log len(ss)) and a copy of ss.
func BusiestSessions(ss []*flow.Session, n int) []*flow.Session {
	if n <= 0 || len(ss) <= n {
		return ss
	}
	h := make([]ranked, n)
	for i := range h {
		h[i] = ranked{ss[i].Packets(), i}
	}
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	// h[0] is the least busy kept; a later session with as many packets
	// loses the tie, so only more packets displace it.
	for i := n; i < len(ss); i++ {
		if p := ss[i].Packets(); p > h[0].packets {
			h[0] = ranked{p, i}
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, func(x, y ranked) int { return cmp.Compare(x.i, y.i) })
	out := make([]*flow.Session, n)
	for k, r := range h {
		out[k] = ss[r.i]
	}
	return out
}

// ranked is a session of BusiestSessions' heap: its packets and its index.
type ranked struct {
	packets uint64
	i       int
}

// lessBusy says whether x ranks below y: fewer packets, or as many and
// later in the list.
func lessBusy(x, y ranked) bool {
	return x.packets < y.packets || x.packets == y.packets && x.i > y.i
}

// siftDown moves h[i] down the min-heap h (least busy at the root) to
// its place.
func siftDown(h []ranked, i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h) && lessBusy(h[c], h[least]) {
				least = c
			}
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}

// AppendStatsNotDetailed appends the line that ends the sessions of the
// stats report when only the top busiest of them were detailed: how many
// were not, and how to see them (nothing when every session was).
func AppendStatsNotDetailed(dst []byte, notDetailed, top int) []byte {
	if notDetailed <= 0 {
		return dst
	}
	return fmt.Appendf(dst, "\n%s not detailed (above: the %d with the most packets); rocetap sessions lists every session, --top 0 details them all\n",
		text.Plural(notDetailed, "more session"), top)
}
