package flow_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/synth"
)

// fabricRun is what the tracker made of a synthetic capture: each frame's
// analysis and every expert event.
type fabricRun struct {
	tr     *flow.Tracker
	frames []decode.Analysis // by frame number - 1
	events []flow.Event
}

func trackSynth(t *testing.T, name string, o flow.Options) *fabricRun {
	t.Helper()
	fs, err := synth.Files()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fs, func(f synth.File) bool { return f.Name == name })
	if i < 0 {
		t.Fatalf("no synthetic capture %s", name)
	}
	f := &fs[i]
	run := &fabricRun{}
	o.OnEvent = func(e *flow.Event) { run.events = append(run.events, *e) }
	run.tr = flow.New(o)
	start := f.Records[0].Time
	for n := range f.Records {
		r := &f.Records[n]
		var p decode.Packet
		p.Frame = decode.Frame{Number: n + 1, Time: r.Time, TimeRelative: r.Time.Sub(start), Len: r.Len, Interface: r.Iface}
		decode.Decode(&p, r.Data, f.LinkTypeOf(r))
		run.tr.Track(&p)
		a := p.Analysis
		a.Acked = nil
		run.frames = append(run.frames, a)
	}
	run.tr.Flush()
	return run
}

// at returns the frames (and end-of-capture frames) of the events of kind k.
func (r *fabricRun) at(k decode.Event) []int {
	var out []int
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e.Frame)
		}
	}
	return out
}

var fabricEvents = []decode.Event{decode.EventCEWithoutCNP, decode.EventCNPWithoutCE, decode.EventNoRateCut, decode.EventCNPUnknownQP,
	decode.EventPFCStorm, decode.EventPFCPaused, decode.EventPFCUnusedPrio}

// checkEvents checks that each fabric event is raised on exactly the
// frames want gives (none for the kinds it leaves out).
func (r *fabricRun) checkEvents(t *testing.T, want map[decode.Event][]int) {
	t.Helper()
	for _, k := range fabricEvents {
		name, _, _ := decode.EventInfo(k)
		if got := r.at(k); !slices.Equal(got, want[k]) {
			t.Errorf("%s on frames %v, want %v", name, got, want[k])
		}
	}
}

// The frame numbers below are those of the timeline in
// internal/synth/fabric.go (ccDCQCN).
const (
	ccCE1, ccCNP1, ccReact1 = 7, 8, 11     // QP 0x101: the clean case
	ccCE2, ccCNP2, ccReact2 = 19, 20, 29   // QP 0x201 (IPv6): no_rate_reduction
	ccCE3, ccLate3          = 31, 36       // QP 0x301: ce_without_cnp on B's ACK at 3002 µs
	ccCNP4, ccReact4        = 45, 48       // QP 0x401 (IPv6): cnp_without_ce
	ccUnknown               = 50           // CNP to QP 0x999
	bpsPerFrame             = 90 * 8 * 1e4 // one 90-byte frame per 100 µs window, in bits/s
)

func TestCCDCQCN(t *testing.T) {
	r := trackSynth(t, "cc_dcqcn.pcap", flow.Options{})
	r.checkEvents(t, map[decode.Event][]int{
		decode.EventCEWithoutCNP: {ccLate3},
		decode.EventNoRateCut:    {ccReact2},
		decode.EventCNPWithoutCE: {ccCNP4},
		decode.EventCNPUnknownQP: {ccUnknown},
	})
	fx := func(n int) decode.Fabric { return r.frames[n-1].Fabric }

	// The CNP answers the CE mark 4 µs before it; the rate before it is
	// the estimate of 5 frames in [0, 100) µs (96% of them still in the
	// window) and the CE-marked one at 100: 5.8 frames.
	if x := fx(ccCNP1); x.CEFrame != ccCE1 || !x.HasDelay || x.CNPDelay != 4*time.Microsecond || !x.HasRate || x.RateBefore != uint64(5.8*bpsPerFrame) {
		t.Errorf("CNP frame %d: %+v, want CE frame %d 4µs before, rate before %d", ccCNP1, x, ccCE1, uint64(5.8*bpsPerFrame))
	}
	// Two frames in the 100 µs after it: cut to 2/5.8.
	if x := fx(ccReact1); !x.HasReaction || x.CNPFrame != ccCNP1 || x.RateAfter != 2*bpsPerFrame || x.RateBefore != uint64(5.8*bpsPerFrame) {
		t.Errorf("frame %d: %+v, want the reaction to CNP %d: %v b/s after", ccReact1, x, ccCNP1, 2*bpsPerFrame)
	}
	// IPv6 frames are 110 bytes: 7 in the window after the CNP.
	if x := fx(ccReact2); x.CNPFrame != ccCNP2 || x.RateAfter != 7*110*8*1e4 {
		t.Errorf("frame %d: %+v, want 7 IPv6 frames after CNP %d", ccReact2, x, ccCNP2)
	}
	if x := fx(ccCNP2); x.CEFrame != ccCE2 || x.CNPDelay != 4*time.Microsecond {
		t.Errorf("CNP frame %d: %+v, want the IPv6 CE mark %d", ccCNP2, x, ccCE2)
	}
	if x := fx(ccLate3); x.CEFrame != ccCE3 {
		t.Errorf("frame %d: CE frame %d, want %d", ccLate3, x.CEFrame, ccCE3)
	}
	if x := fx(ccReact4); x.CNPFrame != ccCNP4 || x.RateAfter >= x.RateBefore {
		t.Errorf("frame %d: %+v, want a cut after CNP %d", ccReact4, x, ccCNP4)
	}

	st := r.tr.Fabric()
	if st.CE != 3 || st.CNPs != 4 || st.CEWithoutCNP != 1 || st.CNPWithoutCE != 1 || st.CNPUnknownQP != 1 ||
		st.Reactions != 3 || st.RateCut != 2 || st.NoRateReduction != 1 || st.CNPDelay.N != 2 {
		t.Errorf("fabric stats %+v", st)
	}
	var ce, cnp float64
	for i := range st.CESeries.V {
		ce += st.CESeries.V[i]
		cnp += st.CNPSeries.V[i]
	}
	if ce != 3 || cnp != 4 {
		t.Errorf("series hold %v CE marks and %v CNPs, want 3 and 4", ce, cnp)
	}
	ss := r.tr.Sessions()
	if len(ss) != 4 {
		t.Fatalf("%d sessions, want 4", len(ss))
	}
	c := ss[0].Congestion()
	if c == nil {
		t.Fatal("session 1 has no congestion state")
	}
	d := c.Dir[0]
	if d.CE != 1 || d.CNPs != 1 || d.RateCut != 1 || d.NoRateReduction != 0 || d.CEWithoutCNP != 0 || d.CNPWithoutCE != 0 || d.CNPDelay.Min != 4*time.Microsecond {
		t.Errorf("session 1, side A: %+v", d)
	}
	if c.Dir[1].CE+c.Dir[1].CNPs != 0 {
		t.Errorf("session 1, side B: %+v, want nothing", c.Dir[1])
	}
}

// The CE→CNP time allowed (--cnp-timeout) decides: 2 µs makes the CNP
// 4 µs after the mark late (and then without a mark in time).
func TestCCTimeout(t *testing.T) {
	r := trackSynth(t, "cc_dcqcn.pcap", flow.Options{CNPTimeout: 2 * time.Microsecond})
	if got := r.at(decode.EventCEWithoutCNP); !slices.Contains(got, ccCNP1) || !slices.Contains(got, ccCNP2) {
		t.Errorf("ce_without_cnp on %v, want the CNPs %d and %d among them", got, ccCNP1, ccCNP2)
	}
	if got := r.at(decode.EventCNPWithoutCE); !slices.Contains(got, ccCNP1) {
		t.Errorf("cnp_without_ce on %v, want %d among them", got, ccCNP1)
	}
	r = trackSynth(t, "cc_dcqcn.pcap", flow.Options{CNPTimeout: 2 * time.Second})
	if got := r.at(decode.EventCEWithoutCNP); len(got) != 0 {
		t.Errorf("ce_without_cnp on %v with a 2 s timeout", got)
	}
}

// Frames of pfcPauses (internal/synth/fabric.go).
const (
	pfcXOFF1, pfcPausedWrite, pfcXON1 = 3, 4, 5
	pfcStormAt, pfcPrio5              = 60, 70
)

func TestPFC(t *testing.T) {
	speed := func(int) uint64 { return synth.PFCSpeed }
	r := trackSynth(t, "pfc_pauses.pcapng", flow.Options{InterfaceSpeed: speed})
	r.checkEvents(t, map[decode.Event][]int{
		decode.EventPFCPaused:     {pfcPausedWrite},
		decode.EventPFCStorm:      {pfcStormAt},
		decode.EventPFCUnusedPrio: {pfcPrio5},
	})
	fx := func(n int) decode.Fabric { return r.frames[n-1].Fabric }
	if x := fx(pfcXOFF1); !x.PFC || x.LinkSpeed != synth.PFCSpeed {
		t.Errorf("frame %d: %+v, want a PFC frame at 10 Gb/s", pfcXOFF1, x)
	}
	if x := fx(pfcPausedWrite); x.PauseFrame != pfcXOFF1 || !x.HasPrio || x.Prio != 3 {
		t.Errorf("frame %d: %+v, want priority 3 paused by frame %d", pfcPausedWrite, x, pfcXOFF1)
	}
	if x := fx(pfcStormAt); x.StormFor != 102*time.Millisecond || x.Prio != 3 {
		t.Errorf("frame %d: %+v, want priority 3 paused for 102ms", pfcStormAt, x)
	}
	// 0xFFFF quanta × 512 bit times at 10 Gb/s.
	if d := decode.PauseTime(0xFFFF, synth.PFCSpeed); d != 3355392*time.Nanosecond {
		t.Errorf("pause time of 0xFFFF quanta at 10 Gb/s: %v", d)
	}
	st := r.tr.Fabric()
	if len(st.Ports) != 1 {
		t.Fatalf("%d ports, want 1", len(st.Ports))
	}
	port := st.Ports[0]
	if port.SpeedFrom != "if_speed" || port.Name() != "if 0 02:00:5e:10:00:fe" {
		t.Errorf("port %s, speed from %s", port.Name(), port.SpeedFrom)
	}
	p3, p5 := port.Prio[3], port.Prio[5]
	if p3.XOFF != 61 || p3.XON != 2 || p3.Total != 200*time.Microsecond+120*time.Millisecond || p3.Longest != 120*time.Millisecond || p3.Storms != 1 {
		t.Errorf("priority 3: %+v", p3)
	}
	if p5.XOFF != 1 || p5.Total != 51200*time.Nanosecond || p5.Storms != 0 {
		t.Errorf("priority 5: %+v", p5)
	}
	var paused float64
	for _, v := range st.PauseSeries[3].V {
		paused += v
	}
	if time.Duration(paused) != p3.Total {
		t.Errorf("pause series of priority 3 sums to %v, want %v", time.Duration(paused), p3.Total)
	}
}

// The clean cases of pfc_storm: at the default 100 Gb/s the refreshes
// every 2 ms come after each 335 µs pause ran out; with a 200 ms
// threshold 120 ms is no storm.
func TestPFCNoStorm(t *testing.T) {
	for _, o := range []flow.Options{{}, {LinkSpeed: synth.PFCSpeed, StormAfter: 200 * time.Millisecond}} {
		r := trackSynth(t, "pfc_pauses.pcapng", o)
		if got := r.at(decode.EventPFCStorm); len(got) != 0 {
			t.Errorf("%+v: pfc_storm on %v", o, got)
		}
	}
	r := trackSynth(t, "pfc_pauses.pcapng", flow.Options{LinkSpeed: flow.DefaultLinkSpeed})
	if from := r.tr.Fabric().Ports[0].SpeedFrom; from != "--link-speed" {
		t.Errorf("speed from %s, want --link-speed", from)
	}
}

// With the priority of DSCP 26 mapped to 5, priority 3 carries no RoCE
// and priority 5 does.
func TestPFCPrioMap(t *testing.T) {
	m, err := flow.ParsePrioMap("26=5")
	if err != nil {
		t.Fatal(err)
	}
	r := trackSynth(t, "pfc_pauses.pcapng", flow.Options{LinkSpeed: synth.PFCSpeed, PrioMap: m})
	r.checkEvents(t, map[decode.Event][]int{
		decode.EventPFCStorm:      {pfcStormAt},
		decode.EventPFCUnusedPrio: {pfcXOFF1},
	})
}

func TestParsePrioMap(t *testing.T) {
	for _, tc := range []struct {
		in      string
		mode    flow.PrioMode
		dscp    int
		want    int8
		wantErr bool
	}{
		{"", flow.PrioAuto, 26, -1, false},
		{"pcp", flow.PrioPCP, 26, -1, false},
		{"dscp", flow.PrioDSCP, 26, -1, false},
		{"26=3,48=6", flow.PrioDSCP, 48, 6, false},
		{"0x1a=3", flow.PrioDSCP, 26, 3, false},
		{"64=3", 0, 0, 0, true},
		{"26=8", 0, 0, 0, true},
		{"26", 0, 0, 0, true},
	} {
		m, err := flow.ParsePrioMap(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if err == nil && (m.Mode != tc.mode || m.DSCP[tc.dscp] != tc.want) {
			t.Errorf("%q: mode %d, DSCP %d → %d; want %d, %d", tc.in, m.Mode, tc.dscp, m.DSCP[tc.dscp], tc.mode, tc.want)
		}
	}
}

// ccPacket builds a RoCEv2 packet at us µs: a UD datagram from QP 0x345
// (DETH), a CNP, or a UC request, from src to dst's QP qp with IP ECN ecn.
func ccPacket(n int, us int, src, dst [4]byte, op decode.Opcode, qp uint32, ecn uint8) *decode.Packet {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &decode.Packet{}
	p.Frame = decode.Frame{Number: n, Time: t0.Add(time.Duration(us) * time.Microsecond), Len: 100}
	p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
	p.IPv4.Src, p.IPv4.Dst, p.IPv4.TOS = src, dst, 26<<2|ecn
	p.BTH = decode.BTH{Opcode: op, DestQP: qp, PSN: decode.PSN(n)}
	if op.Transport() == decode.TransportUD {
		p.Has |= decode.HdrDETH
		p.DETH = decode.DETH{QKey: 0x11111111, SrcQP: 0x345}
	}
	return p
}

// A CNP to a UC sender whose QP the capture never showed (no CM) goes to
// the UC flow between those hosts marked CE within the CNP timeout; with
// no such mark it is cnp_unknown_qp.
func TestCCUC(t *testing.T) {
	tr := flow.New(flow.Options{})
	a, b := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	send := decode.TransportUC.Opcode(decode.OpSendOnly)
	tr.Track(ccPacket(1, 0, a, b, send, 0x2a2, 2))
	tr.Track(ccPacket(2, 10, a, b, send, 0x2a2, 3))
	cnp := ccPacket(3, 14, b, a, decode.CNP, 0x2a1, 0)
	tr.Track(cnp)
	if x := cnp.Analysis.Fabric; cnp.Analysis.Events&(decode.EventCNPUnknownQP|decode.EventCNPWithoutCE) != 0 || x.CEFrame != 2 || cnp.Analysis.Session != 1 {
		t.Errorf("CNP to the UC sender: events %b, session %d, %+v", cnp.Analysis.Events, cnp.Analysis.Session, x)
	}
	late := ccPacket(4, 5000, b, a, decode.CNP, 0x2a1, 0)
	tr.Track(late)
	if late.Analysis.Events&decode.EventCNPUnknownQP == 0 {
		t.Errorf("CNP 5 ms after the mark: events %b, want cnp_unknown_qp", late.Analysis.Events)
	}
}

// A CNP to a UD sender is matched by the DETH source QP of its flow.
func TestCCUD(t *testing.T) {
	tr := flow.New(flow.Options{})
	a, b := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	mk := ccPacket
	send := decode.TransportUD.Opcode(decode.OpSendOnly)
	tr.Track(mk(1, 0, a, b, send, 0xabcde, 2))
	ce := mk(2, 10, a, b, send, 0xabcde, 3)
	tr.Track(ce)
	cnp := mk(3, 13, b, a, decode.CNP, 0x345, 0)
	tr.Track(cnp)
	x := cnp.Analysis.Fabric
	if cnp.Analysis.Events&(decode.EventCNPUnknownQP|decode.EventCNPWithoutCE) != 0 || x.CEFrame != 2 || x.CNPDelay != 3*time.Microsecond {
		t.Errorf("CNP to the UD sender: events %b, %+v", cnp.Analysis.Events, x)
	}
	other := mk(4, 20, b, a, decode.CNP, 0x346, 0)
	tr.Track(other)
	if other.Analysis.Events&decode.EventCNPUnknownQP == 0 {
		t.Errorf("CNP to QP 0x346: events %b, want cnp_unknown_qp", other.Analysis.Events)
	}
	// a second CNP 50 µs after the first: 20000 a second
	tr.Track(mk(5, 60, a, b, send, 0xabcde, 3))
	again := mk(6, 63, b, a, decode.CNP, 0x345, 0)
	tr.Track(again)
	if x := again.Analysis.Fabric; !x.HasGap || x.CNPGap != 50*time.Microsecond || x.CNPRate != 20000 || x.CEFrame != 5 {
		t.Errorf("second CNP: %+v, want 50µs after the first, 20000/s, answering frame 5", x)
	}
}
