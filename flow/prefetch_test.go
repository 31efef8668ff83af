package flow

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// Prefetch (what the decoder calls before the ICRC) changes nothing
// Track finds: past the table size from which it works, every packet of
// 70,000 QP pairs gets the same session, direction and pairing, and
// every session the same counts and endpoints, as without it. Every 7th
// packet comes without a Prefetch: the one of the packet before must not
// be taken for it; every 5th after a Prefetch of a packet Track never
// gets, whose session (from the cache) must not be taken for it either.
func TestPrefetchChangesNothing(t *testing.T) {
	const pairs = 70000
	type got struct {
		session uint32
		dir     decode.Direction
		learned decode.Pairing
	}
	run := func(pre bool) ([]got, *Tracker) {
		tr := New(Options{})
		var out []got
		n := 0
		var last decode.Packet
		before := func(p *decode.Packet) {
			if n++; pre && n%5 == 0 && last.Frame.Number != 0 {
				tr.Prefetch(&last) // a packet Track never gets (its direction cached)
			}
			if pre && n%7 != 0 {
				tr.Prefetch(p)
			}
		}
		after := func(p *decode.Packet) {
			out = append(out, got{p.Analysis.Session, p.Analysis.Dir, p.Analysis.Learned})
			last = *p
			last.Frame.Number = -1
		}
		trackPairsEach(tr, pairs, epoch, before, after)
		return out, tr
	}
	plainPkts, plain := run(false)
	prePkts, pre := run(true)
	if len(plain.halves.slots) < prefetchMinSlots {
		t.Fatalf("the table has %d slots: the test must pass %d for Prefetch to work", len(plain.halves.slots), prefetchMinSlots)
	}
	for i := range plainPkts {
		if plainPkts[i] != prePkts[i] {
			t.Fatalf("packet %d: with Prefetch %+v, without %+v", i+1, prePkts[i], plainPkts[i])
		}
	}
	a, b := plain.Sessions(), pre.Sessions()
	if len(a) != len(b) || len(a) != pairs {
		t.Fatalf("%d sessions with Prefetch, %d without, want %d", len(b), len(a), pairs)
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Sent != b[i].Sent || a[i].Learned != b[i].Learned || a[i].A != b[i].A || a[i].B != b[i].B || a[i].MessageCount() != b[i].MessageCount() {
			t.Fatalf("session %d: with Prefetch %+v, without %+v", a[i].ID, b[i], a[i])
		}
	}
}
