package pathcmp

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// Options tune the comparison.
type Options struct {
	// Window is the longest one-way delay a match may have (0: 1 s). Two
	// copies of a PSN further apart than this are different packets.
	Window time.Duration
	// MaxEvents bounds the events of each kind kept (0: 1000); the rest
	// are counted.
	MaxEvents int
}

// Clock is the estimated relation between the captures' clocks: a frame
// at time t on A's clock is stamped t + Offset + DriftPPM·1e-6·(t − Ref)
// on B's.
type Clock struct {
	// Known: packets matched in both directions, so the offset could be
	// told from the delay. Otherwise the clocks are taken as equal
	// (Offset 0) and the delays include the offset.
	Known       bool
	Ref         time.Time     // where Offset holds: A's first packet
	Offset      time.Duration // B's clock minus A's at Ref
	DriftPPM    float64       // parts per million B's clock gains on A's (0 from fewer than 3 time slices)
	OffsetErr   time.Duration // one standard error of Offset, delays of the two directions taken as equal
	DriftErrPPM float64       // one standard error of DriftPPM
	// Bound is half the smallest round trip through the points: whatever
	// the asymmetry of the delays, the offset is within Offset ± Bound
	// (NTP's bound).
	Bound   time.Duration
	Samples int // time slices with packets both ways, the points the fit went through
}

// Result is what Compare found.
type Result struct {
	Names  [2]string
	Frames [2]int // frames read
	// Links are the link types of each capture, with their frame counts.
	Links  [2]map[decode.LinkType]int
	Start  [2]time.Time // first and last frame with a BTH, on each capture's clock
	End    [2]time.Time
	Clock  Clock
	Flows  []*Flow
	Events []Event
	// EventCounts counts every event by name (Events keeps the first
	// Options.MaxEvents of each).
	EventCounts map[string]int

	caps      [2]*Capture
	dirDelays [3][]int64 // every matched packet's delay, by decode.PathDir
}

// Totals sums the flows of one direction; its Delay summarizes the
// delays of every packet matched that way.
func Totals(r *Result, d decode.PathDir) Flow {
	t := Flow{Dir: d}
	for _, f := range r.Flows {
		if f.Dir == d {
			t.add(f)
		}
	}
	if l := r.dirDelays[d]; len(l) > 0 {
		t.Delay = delayStats(l)
	}
	return t
}

// Flow is one direction of a QP's traffic between the points.
type Flow struct {
	// Session is the flow's session as rocetap sessions numbers them in
	// capture SessionPoint: A's when A saw the flow, else B's.
	Session      uint32
	SessionPoint uint8
	Src, Dst     string
	DestQP       uint32
	Dir          decode.PathDir // decode.PathDirUnknown: never seen at both points
	// Upstream and Downstream count its packets at the point it passed
	// first and at the other.
	Upstream, Downstream int
	Matched              int
	Lost                 int // left upstream, never reached downstream (path_loss)
	Duplicates           int // extra copies downstream
	OnlyDownstream       int // seen only downstream
	Outside              int // the other capture was not running
	Reordered            int // overtaken between the points
	NAKed                int // requests the responder NAKed
	Spikes               int // path_delay_spike
	Delay                DelayStats

	delays []int64 // the delay of each packet matched, ns
}

// add adds f's counts to t's.
func (t *Flow) add(f *Flow) {
	t.Upstream += f.Upstream
	t.Downstream += f.Downstream
	t.Matched += f.Matched
	t.Lost += f.Lost
	t.Duplicates += f.Duplicates
	t.OnlyDownstream += f.OnlyDownstream
	t.Outside += f.Outside
	t.Reordered += f.Reordered
	t.NAKed += f.NAKed
	t.Spikes += f.Spikes
}

// Name is the flow as reports show it: "10.0.0.1 → 10.0.0.2 QP 0x000011".
func (f *Flow) Name() string {
	return f.Src + " → " + f.Dst + " QP " + flow.Hex24(f.DestQP)
}

// DelayStats summarize one-way delays.
type DelayStats struct {
	N                          int
	Min, Median, P90, P99, Max time.Duration
}

// Event is a two-point expert event: Name is decode.PathEventLoss (on
// the frame upstream) or decode.PathEventDelaySpike (on the frame
// downstream).
type Event struct {
	Name  string
	Point uint8 // the capture Frame is in
	Frame int
	Time  time.Time // on that capture's clock
	Flow  string
	Text  string
}

// Spike rule: a delay is a path_delay_spike when it is above its flow's
// 99th percentile and exceeds the flow's median by at least spikeFactor
// times what the 90th percentile exceeds it by (the flow's usual jitter)
// and by at least spikeMin: above the tail of the flow's normal jitter,
// so that steady traffic raises none.
const (
	spikeFactor = 2
	spikeMin    = 10 * time.Microsecond
)

// Compare compares two captures, a taken at point A and b at point B.
func Compare(a, b *Capture, o Options) *Result {
	if o.Window <= 0 {
		o.Window = time.Second
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 1000
	}
	caps := [2]*Capture{a, b}
	r := &Result{caps: caps, EventCounts: map[string]int{}}
	for i, c := range caps {
		r.Names[i], r.Frames[i], r.Links[i] = c.Name, len(c.recs), c.links
		if c.last != 0 {
			r.Start[i], r.End[i] = time.Unix(0, c.first).UTC(), time.Unix(0, c.last).UTC()
		}
		for j := range c.recs {
			x := &c.recs[j]
			x.status, x.dir, x.peer, x.delay, x.reordered, x.spike, x.naked = decode.PathNone, decode.PathDirUnknown, -1, 0, false, false, false
		}
	}
	// One table of flows for both captures.
	var flows []flowKey
	gid := map[flowKey]uint32{}
	for _, c := range caps {
		tr := make([]uint32, len(c.flows))
		for i, f := range c.flows {
			g, ok := gid[f]
			if !ok {
				g = uint32(len(flows))
				flows = append(flows, f)
				gid[f] = g
			}
			tr[i] = g
		}
		for i := range c.recs {
			if x := &c.recs[i]; x.ib {
				x.g = tr[x.fl]
			}
		}
	}
	idx := [2]*index{newIndex(a, len(flows)), newIndex(b, len(flows))}
	dirs, ck := estimate(caps, idx, flows)
	r.Clock = ck.Clock
	m := &matcher{caps: caps, idx: idx, flows: flows, dirs: dirs, ck: &ck, window: int64(o.Window)}
	m.match()
	m.classify()
	r.Flows = m.report(r, o.MaxEvents)
	return r
}

// index groups a capture's frames by key: order holds the indexes of its
// frames with a BTH (into its recs), flow by flow (start[g] is where
// flow g's begin), within a flow by PSN and opcode, and each key's in
// time order (capture order for equal times). Built by counting and
// sorting, not in a map: a map keyed by every packet's key made half of
// rocetap path's time at a million QP pairs.
type index struct {
	c     *Capture
	order []int32
	start []int32 // len(flows)+1
}

func newIndex(c *Capture, nflows int) *index {
	ix := &index{c: c, start: make([]int32, nflows+1)}
	for i := range c.recs {
		if x := &c.recs[i]; x.ib {
			ix.start[x.g+1]++
		}
	}
	for g := range nflows {
		ix.start[g+1] += ix.start[g]
	}
	ix.order = make([]int32, ix.start[nflows])
	next := slices.Clone(ix.start[:nflows])
	for i := range c.recs {
		if x := &c.recs[i]; x.ib {
			ix.order[next[x.g]] = int32(i)
			next[x.g]++
		}
	}
	byKey := func(i, j int32) int {
		x, y := &c.recs[i], &c.recs[j]
		if c := cmp.Compare(x.psn, y.psn); c != 0 {
			return c
		}
		if c := cmp.Compare(x.op, y.op); c != 0 {
			return c
		}
		if c := cmp.Compare(x.t, y.t); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	}
	for g := range nflows {
		if run := ix.order[ix.start[g]:ix.start[g+1]]; !slices.IsSortedFunc(run, byKey) {
			slices.SortFunc(run, byKey)
		}
	}
	return ix
}

// key returns the key of frame i.
func (ix *index) key(i int32) key {
	x := &ix.c.recs[i]
	return key{x.g, x.psn, x.op}
}

// keyRuns calls fn with each key that has frames in either capture and
// its frames in each, in time order (nil where a capture has none):
// flow by flow, a flow's keys by PSN and opcode.
func keyRuns(idx [2]*index, fn func(k key, runs [2][]int32)) {
	for g := range len(idx[A].start) - 1 {
		a := idx[A].order[idx[A].start[g]:idx[A].start[g+1]]
		b := idx[B].order[idx[B].start[g]:idx[B].start[g+1]]
		for len(a) > 0 || len(b) > 0 {
			var k key
			switch {
			case len(b) == 0:
				k = idx[A].key(a[0])
			case len(a) == 0:
				k = idx[B].key(b[0])
			default:
				ka, kb := idx[A].key(a[0]), idx[B].key(b[0])
				k = ka
				if kb.psn < ka.psn || kb.psn == ka.psn && kb.op < ka.op {
					k = kb
				}
			}
			na, nb := idx[A].runOf(a, k), idx[B].runOf(b, k)
			fn(k, [2][]int32{a[:na], b[:nb]})
			a, b = a[na:], b[nb:]
		}
	}
}

// runOf returns how many frames at the start of run have key k.
func (ix *index) runOf(run []int32, k key) int {
	n := 0
	for n < len(run) && ix.key(run[n]) == k {
		n++
	}
	return n
}

// compatible: the two frames may be the same packet (same ICRC, or one
// without it).
func compatible(x, y *rec) bool { return !x.hasICRC || !y.hasICRC || x.icrc == y.icrc }

// clock is Clock with the fit in nanoseconds, for converting times.
type clock struct {
	Clock
	ref   int64   // A's first packet, ns
	theta float64 // offset at ref, ns
	slope float64 // drift, ns per ns
	tol   int64   // how much earlier than its upstream copy a downstream one may seem (estimation error)
}

// offsetAt returns B's clock minus A's at time t on A's clock.
func (c *clock) offsetAt(t int64) int64 {
	return int64(math.Round(c.theta + c.slope*float64(t-c.ref)))
}

// onA converts a time of capture point to A's clock.
func (c *clock) onA(point uint8, t int64) int64 {
	if point == A {
		return t
	}
	ta := t - c.offsetAt(t)
	return t - c.offsetAt(ta)
}

// sample is a packet seen once at each point: D = tB − tA; g its flow.
type sample struct {
	ta, d int64
	g     uint32
}

// estimate learns the direction of every address pair and the clock from
// the keys seen as often in each capture, their copies paired in order
// (see samples).
func estimate(caps [2]*Capture, idx [2]*index, flows []flowKey) (map[pair]decode.PathDir, clock) {
	ss := samples(caps, idx)
	by := map[pair][]int64{}
	for _, s := range ss {
		p := flows[s.g].pair()
		by[p] = append(by[p], s.d)
	}
	med := map[pair]int64{}
	for p, ds := range by {
		med[p] = median64(ds)
	}
	dirs := map[pair]decode.PathDir{}
	var thetas, delays []int64
	for p, m := range med {
		rev := pair{p.dst, p.src}
		mr, ok := med[rev]
		if !ok {
			continue
		}
		// A→B packets have D = delay + offset, B→A ones offset − delay.
		if m > mr || m == mr && less(p.src, p.dst) {
			dirs[p], dirs[rev] = decode.PathAToB, decode.PathBToA
			thetas = append(thetas, (m+mr)/2)
			delays = append(delays, (m-mr)/2)
		}
	}
	ck := clock{tol: int64(20 * time.Microsecond)}
	if caps[A].first != 0 {
		ck.ref = caps[A].first
		ck.Ref = time.Unix(0, ck.ref).UTC()
	}
	var theta0 int64
	if len(thetas) > 0 {
		theta0 = median64(thetas)
	}
	for p, m := range med {
		if _, ok := dirs[p]; !ok {
			dirs[p] = decode.PathBToA
			if m > theta0 {
				dirs[p] = decode.PathAToB
			}
		}
	}
	if len(thetas) > 0 {
		fit(&ck, trim(ss, flows), dirs, flows, theta0, median64(delays))
	}
	return dirs, ck
}

// samples pairs the copies of every key seen as often in each capture, in
// order: the packets that crossed both points without loss or
// duplication. A key whose pairs disagree by more than half the time
// between its copies is paired wrongly (a copy missing at each end, as
// when the captures cover different spans) and left out.
func samples(caps [2]*Capture, idx [2]*index) []sample {
	var ss []sample
	// In key order (flow, PSN, opcode), the same from run to run: the
	// clock fit takes the first of equal delays in a time slice, so the
	// samples' order must not depend on a map's.
	keyRuns(idx, func(k key, runs [2][]int32) {
		la, lb := runs[A], runs[B]
		if len(la) != len(lb) {
			return
		}
		ok := true
		var dmin, dmax, gap int64
		for i := range la {
			x, y := &caps[A].recs[la[i]], &caps[B].recs[lb[i]]
			d := y.t - x.t
			if !compatible(x, y) {
				ok = false
				break
			}
			if i == 0 {
				dmin, dmax = d, d
				continue
			}
			dmin, dmax = min(dmin, d), max(dmax, d)
			g := x.t - caps[A].recs[la[i-1]].t
			if gap == 0 || g < gap {
				gap = g
			}
		}
		if !ok || len(la) > 1 && dmax-dmin > gap/2 {
			return
		}
		for i := range la {
			x, y := &caps[A].recs[la[i]], &caps[B].recs[lb[i]]
			ss = append(ss, sample{x.t, y.t - x.t, k.g})
		}
	})
	return ss
}

// trim drops the samples far from their direction's trend (a line
// through D over time, Theil-Sen on up to 128 of them): pairs of
// different packets that slipped through. Far is more than 20 median
// absolute deviations, and at least 1 ms.
func trim(ss []sample, flows []flowKey) []sample {
	by := map[pair][]int{}
	for i, s := range ss {
		p := flows[s.g].pair()
		by[p] = append(by[p], i)
	}
	keep := make([]bool, len(ss))
	for _, ix := range by {
		slices.SortFunc(ix, func(i, j int) int { return cmp.Compare(ss[i].ta, ss[j].ta) })
		step := max(1, len(ix)/128)
		var ts, ds []float64
		for i := 0; i < len(ix); i += step {
			ts, ds = append(ts, float64(ss[ix[i]].ta-ss[ix[0]].ta)), append(ds, float64(ss[ix[i]].d))
		}
		slope, icpt := theilSen(ts, ds)
		res := make([]float64, len(ix))
		for n, i := range ix {
			res[n] = math.Abs(float64(ss[i].d) - icpt - slope*float64(ss[i].ta-ss[ix[0]].ta))
		}
		bound := max(20*medianF(res), float64(time.Millisecond))
		for n, i := range ix {
			keep[i] = res[n] <= bound
		}
	}
	out := ss[:0:0]
	for i, s := range ss {
		if keep[i] {
			out = append(out, s)
		}
	}
	return out
}

// theilSen fits y = icpt + slope·x: the median of the slopes between
// every two points, then the median intercept.
func theilSen(x, y []float64) (slope, icpt float64) {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[j] != x[i] {
				slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	if len(slopes) > 0 && len(x) >= 3 {
		slope = medianF(slopes)
	}
	c := make([]float64, len(x))
	for i := range x {
		c[i] = y[i] - slope*x[i]
	}
	return slope, medianF(c)
}

func less(a, b addr) bool {
	for i := range a.b {
		if a.b[i] != b.b[i] {
			return a.b[i] < b.b[i]
		}
	}
	return !a.lid && b.lid
}

// fit estimates offset and drift from the minimum-delay envelope: time is
// cut into slices; in each slice with packets both ways, the smallest
// A→B D (delay + offset) and the largest B→A D (offset − delay) bracket
// the offset, and their midpoint is its estimate when the fastest
// packets of the two directions took as long. A packet's time is the
// middle of its flight (theta0: the offset from the medians), so that
// requests and their responses fall in one slice, and a slice lasts at
// least two round trips (delay: the median one-way delay). A line is
// fitted through
// the midpoints (Theil-Sen: the median of the slopes between every two
// points, robust to a slice whose fastest packet was slow); its residuals
// give the standard errors.
func fit(ck *clock, ss []sample, dirs map[pair]decode.PathDir, flows []flowKey, theta0, delay int64) {
	if len(ss) == 0 {
		return
	}
	mid := func(s *sample) int64 { return s.ta + (s.d-theta0)/2 }
	lo, hi := mid(&ss[0]), mid(&ss[0])
	for i := range ss {
		lo, hi = min(lo, mid(&ss[i])), max(hi, mid(&ss[i]))
	}
	// About 30 packets a slice, at most 64 slices, each at least four
	// one-way delays long.
	n := min(64, max(1, len(ss)/30))
	width := max((hi-lo)/int64(n), 4*max(delay, 0)) + 1
	n = int((hi-lo)/width) + 1
	type slice struct {
		has      [2]bool
		n        [2]int
		up, down int64 // min A→B D, max B→A D
		tu, td   int64
	}
	sl := make([]slice, n)
	for i := range ss {
		s := &ss[i]
		tm := mid(s)
		x := &sl[(tm-lo)/width]
		switch dirs[flows[s.g].pair()] {
		case decode.PathAToB:
			x.n[0]++
			if !x.has[0] || s.d < x.up {
				x.has[0], x.up, x.tu = true, s.d, tm
			}
		case decode.PathBToA:
			x.n[1]++
			if !x.has[1] || s.d > x.down {
				x.has[1], x.down, x.td = true, s.d, tm
			}
		}
	}
	// A slice with few packets one way (the ends of the traffic) has no
	// fast one to speak of: use those with at least a quarter of the
	// typical count each way.
	var counts []int64
	for _, x := range sl {
		if x.has[0] && x.has[1] {
			counts = append(counts, int64(min(x.n[0], x.n[1])))
		}
	}
	least := 1
	if len(counts) >= 3 {
		least = max(1, int(median64(counts)/4))
	}
	var ts, mids, halves []float64
	for _, x := range sl {
		if x.has[0] && x.has[1] && min(x.n[0], x.n[1]) >= least {
			ts = append(ts, float64((x.tu+x.td)/2-ck.ref))
			mids = append(mids, float64(x.up+x.down)/2)
			halves = append(halves, float64(x.up-x.down)/2)
		}
	}
	k := len(ts)
	if k == 0 {
		return
	}
	ck.Known, ck.Samples = true, k
	ck.slope, ck.theta = theilSen(ts, mids)
	bound := slices.Min(halves)
	// Standard errors of the line through the midpoints.
	var mean, sxx, rss float64
	for _, t := range ts {
		mean += t / float64(k)
	}
	for i, t := range ts {
		sxx += (t - mean) * (t - mean)
		e := mids[i] - ck.theta - ck.slope*t
		rss += e * e
	}
	sigma := 0.0
	if k > 2 {
		sigma = math.Sqrt(rss / float64(k-2))
	} else if k == 2 {
		sigma = math.Abs(mids[1]-mids[0]) / 2
	}
	seTheta := sigma * math.Sqrt(1/float64(k)+mean*mean/max(sxx, 1))
	if sxx == 0 {
		seTheta = sigma
	}
	ck.Offset = time.Duration(math.Round(ck.theta))
	ck.DriftPPM = ck.slope * 1e6
	ck.OffsetErr = time.Duration(math.Round(seTheta))
	if sxx > 0 && k > 2 {
		ck.DriftErrPPM = sigma / math.Sqrt(sxx) * 1e6
	}
	ck.Bound = time.Duration(math.Round(bound))
	if k < 3 {
		// Too few slices for a spread: the bound is all that is known.
		ck.OffsetErr = ck.Bound
	}
	// A downstream copy may seem this much earlier than its upstream one.
	ck.tol = max(ck.tol, 4*int64(seTheta))
}

func median64(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
