package pathcmp_test

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
)

// TestShortOrOneWay: a burst shorter than a round trip still gives the
// offset (within its bound); traffic that went one way only cannot, and
// the report says so, with the delays including the offset.
func TestShortOrOneWay(t *testing.T) {
	burst := synth.TwoPoint{Start: t0, Requests: 300, Gap: 20 * time.Microsecond, Delay: 5 * time.Millisecond,
		Jitter: 500 * time.Microsecond, Respond: 20 * time.Microsecond, Offset: 7 * time.Millisecond,
		LinkA: synth.LinkEthernet, LinkB: synth.LinkSLL2}
	r, _, _ := compare(t, burst)
	ck := r.Clock
	if !ck.Known || (ck.Offset-burst.Offset).Abs() > ck.Bound || ck.OffsetErr < ck.Bound || ck.Samples == 0 {
		t.Errorf("burst: %+v; want the offset %v within the bound", ck, burst.Offset)
	}

	oneWay := burst
	oneWay.Gap = time.Millisecond
	oneWay.LostResp = make([]int, oneWay.Requests)
	for i := range oneWay.LostResp {
		oneWay.LostResp[i] = i
	}
	r, truth, _ := compare(t, oneWay)
	if r.Clock.Known {
		t.Errorf("one way: clock %+v, want unknown", r.Clock)
	}
	ab := findFlow(r, decode.PathAToB)
	if ab == nil || ab.Matched != oneWay.Requests || ab.Delay.Median < oneWay.Offset+oneWay.Delay-oneWay.Jitter || ab.Delay.Median > oneWay.Offset+oneWay.Delay+oneWay.Jitter {
		t.Errorf("one way: flow %+v; want %d matched, delays of about %v", ab, oneWay.Requests, oneWay.Offset+oneWay.Delay)
	}
	// The responses B sent never reached A: the flow B→A was never seen
	// at both points, so it is off the path, not lost.
	if n := r.EventCounts[decode.PathEventLoss]; n != 0 || len(truth.LostRespB) == 0 {
		t.Errorf("one way: %d path_loss events, want 0", n)
	}
}
