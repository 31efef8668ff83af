package main

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// TestHotPathDoesNotAllocate pins issue 15's "nothing allocates per
// packet": once a tracker has seen its sessions and their first
// latencies (a session keeps its first latency samples exactly, in a
// slice that grows, then a histogram: flow/latency.go), decoding (ICRC
// checked) and tracking further packets of gencap's traffic (8 RC QP
// pairs, WRITE, READ and SEND of 1 to 8 packets, ACKs) allocates nothing.
// The runs take the next batches of the same continuous stream, so the
// tracker sees new PSNs and messages, never a replay.
func TestHotPathDoesNotAllocate(t *testing.T) {
	const warm, batch, runs = 50000, 2000, 20
	qps, err := buildPairs(8, false)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(1)
	next := func() []byte {
		tp := qps[r.intn(len(qps))].nextPacket(&r)
		finish(tp) // allocates (the ICRC's scratch): not in the measured runs
		return tp.rec[recHdr:]
	}
	tr := flow.New(flow.Options{})
	var p decode.Packet
	t0 := time.Unix(baseUnix, 0)
	n := 0
	track := func(data []byte) {
		n++
		p.Frame.Number, p.Frame.Len, p.Frame.Time = n, len(data), t0.Add(time.Duration(n)*1500)
		decode.Decode(&p, data, decode.LinkTypeEthernet)
		tr.Track(&p)
		if p.Flags&decode.FlagICRCBad != 0 {
			t.Fatalf("frame %d: ICRC bad", n)
		}
	}
	for range warm {
		track(next())
	}
	// runs+1 batches: AllocsPerRun calls the function once before it counts.
	frames := make([][]byte, 0, (runs+1)*batch)
	for range cap(frames) {
		frames = append(frames, append([]byte(nil), next()...))
	}
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		for range batch {
			track(frames[i])
			i++
		}
	})
	if i != len(frames) {
		t.Fatalf("tracked %d packets, generated %d", i, len(frames))
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per %d packets", allocs, batch)
	}
}
