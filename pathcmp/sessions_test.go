package pathcmp_test

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/pathcmp"
)

// TestSessions: the flows grouped by session add up to the generator's
// truth, and to the direction totals.
func TestSessions(t *testing.T) {
	tp := synth.TwoPoint{
		Start: t0, Requests: 300, Gap: 5 * time.Millisecond, Delay: 3 * time.Millisecond,
		Jitter: 100 * time.Microsecond, Respond: 20 * time.Microsecond,
		LinkA: synth.LinkEthernet, LinkB: synth.LinkSLL2,
		Lost: []int{10, 11, 200}, LostResp: []int{50, 51}, Dup: []int{30}, Late: map[int]time.Duration{100: 7 * time.Millisecond},
		NAK: []int{120}, Offset: -250 * time.Millisecond, DriftPPM: 40,
		AFrom: time.Millisecond, BUntil: 1400 * time.Millisecond, OffPath: 4,
	}
	r, truth, _ := compare(t, tp)
	ss := pathcmp.Sessions(r)
	var sum [2]pathcmp.Flow
	var off, onePoint int
	for _, s := range ss {
		for i, f := range []*pathcmp.Flow{&s.AToB, &s.BToA} {
			sum[i].Matched += f.Matched
			sum[i].Lost += f.Lost
			sum[i].Duplicates += f.Duplicates
			sum[i].Reordered += f.Reordered
			sum[i].NAKed += f.NAKed
			sum[i].OnlyDownstream += f.OnlyDownstream
			sum[i].Outside += f.Outside
		}
		off += s.OffPath.Upstream + s.OffPath.Downstream
		onePoint += s.OnlyOnePoint()
	}
	if len(ss) != 2 {
		t.Errorf("%d sessions, want 2 (the QP pair, the off-path flow)", len(ss))
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"lost A->B", sum[0].Lost, len(truth.LostA)},
		{"lost B->A", sum[1].Lost, len(truth.LostRespB)},
		{"duplicated A->B", sum[0].Duplicates, len(truth.DupB)},
		{"reordered A->B", sum[0].Reordered, len(truth.ReorderedB)},
		{"NAKed", sum[0].NAKed + sum[1].NAKed, len(truth.NAKedB)},
		{"off path", off, len(truth.OffPathA)},
		{"only one point", onePoint, sum[0].OnlyDownstream + sum[0].Outside + sum[1].OnlyDownstream + sum[1].Outside + len(truth.OffPathA)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if sum[0].Outside+sum[1].Outside == 0 {
		t.Error("no packet sent while the other capture was not running: the case does not test it")
	}
	if len(truth.ReorderedB) == 0 {
		t.Fatal("no reordering: the case does not test it")
	}
	// Each direction's matched traffic is in one session (here the
	// tracker of A pairs the ACKs with the off-path flow's SENDs, which
	// came first, so the two directions are in different sessions):
	// its delays are the direction's.
	for i, d := range []decode.PathDir{decode.PathAToB, decode.PathBToA} {
		tot := pathcmp.Totals(r, d)
		var got []pathcmp.Flow
		for _, s := range ss {
			if f := []pathcmp.Flow{s.AToB, s.BToA}[i]; f.Matched > 0 {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].Delay != tot.Delay || got[0].Matched != tot.Matched || got[0].Dir != d || tot.Delay.N == 0 {
			t.Errorf("%s: sessions %+v, the direction %+v", d, got, tot)
		}
	}
}
