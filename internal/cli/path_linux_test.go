//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/netnstest"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/internal/synth"
)

// TestPathNetns is the two-point test of issue 21, as root: namespaces
// A — M — B in a line; in M a forwarder (netnstest.Forward, AF_PACKET on
// both interfaces) delays every frame 25 ms ± 1 ms and drops, duplicates
// and holds back chosen RoCE frames, logging what it did; A sends RDMA
// WRITEs (PSNs wrapping at 2^24) to B for 4 s, where a responder ACKs each;
// rocetap capture runs on A's and B's interfaces. rocetap path must find
// the delay (within 10%), exactly the frames the forwarder dropped,
// duplicated and reordered, and a clock offset near zero (one kernel
// clock); and after rocetap edit shifts B's capture by a known offset
// and drift, the estimate must move by them.
func TestPathNetns(t *testing.T) {
	l := netnstest.NewLine(t)
	const (
		n     = 2000 // 4 s of traffic: enough time slices for the drift
		gap   = 2 * time.Millisecond
		delay = 25 * time.Millisecond
		reqQP = 0x11
		ackQP = 0x12
		psn0  = 0xFFFFFF - 200 // the PSNs wrap
	)
	rng := rand.New(rand.NewSource(21))
	pick := func(k, lo, hi int) map[int]bool {
		m := map[int]bool{}
		for len(m) < k {
			m[lo+rng.Intn(hi-lo)] = true
		}
		return m
	}
	ab := netnstest.Impair{Delay: delay, Jitter: time.Millisecond, Seed: 1, Drop: pick(12, 5, n-40), Hold: map[int]time.Duration{}}
	ab.Dup = map[int]bool{}
	for i := range pick(12, 5, n-40) {
		if !ab.Drop[i] {
			ab.Dup[i] = true
		}
	}
	for i := range pick(8, 5, n-40) {
		if !ab.Drop[i] && !ab.Dup[i] {
			ab.Hold[i] = 4*gap + gap/2 // overtaken by the next four
		}
	}
	ba := netnstest.Impair{Delay: delay, Jitter: time.Millisecond, Seed: 2, Drop: pick(6, 5, n-80)}

	// The frames: WRITE Only from A to QP 0x11, an ACK per PSN back.
	reqs := make([][]byte, n)
	acks := map[uint32][]byte{}
	payload := []byte(strings.Repeat("twopoint", 16))
	for i := range n {
		psn := decode.PSN(psn0).Add(i)
		var f synth.RoCEv2
		f.T.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(decode.OpWriteOnly), DestQP: reqQP, PSN: psn, AckReq: true, PKey: 0xFFFF}
		f.T.RETH = decode.RETH{VA: 0x10000 + uint64(i)*128, RKey: 0x1234, DMALen: uint32(len(payload))}
		f.T.Payload = payload
		var err error
		if reqs[i], _, _, err = f.Build(); err != nil {
			t.Fatal(err)
		}
		var a synth.RoCEv2
		a.Reverse = true
		a.T.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(decode.OpAcknowledge), DestQP: ackQP, PSN: psn, PKey: 0xFFFF}
		a.T.AETH = decode.AETH{Syndrome: 0x1F, MSN: uint32(i+1) & 0xFFFFFF}
		if acks[uint32(psn)], _, _, err = a.Build(); err != nil {
			t.Fatal(err)
		}
	}

	fwd, err := netnstest.Forward(l, ab, ba)
	if err != nil {
		t.Fatal(err)
	}
	fwdStopped := false
	defer func() {
		if !fwdStopped {
			fwd.Stop()
		}
	}()
	var mu sync.Mutex
	answered := map[uint32]bool{}
	resp, err := netnstest.Respond(l.NsB, l.IfB, func(frame []byte) []byte {
		var p decode.Packet
		p.Frame.Len = len(frame)
		decode.Decode(&p, frame, decode.LinkTypeEthernet)
		if p.Has&decode.HdrBTH == 0 || p.BTH.DestQP != reqQP || !p.BTH.Opcode.IsRequest() {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		psn := uint32(p.BTH.PSN)
		if answered[psn] { // a copy: answered once
			return nil
		}
		answered[psn] = true
		return acks[psn]
	})
	if err != nil {
		t.Fatal(err)
	}
	respStopped := false
	defer func() {
		if !respStopped {
			resp.Stop()
		}
	}()

	dir := t.TempDir()
	if d := os.Getenv("ROCETAP_PATH_KEEP"); d != "" {
		dir = d // keep the captures to look at
	}
	capA, capB := filepath.Join(dir, "a.pcapng"), filepath.Join(dir, "b.pcapng")
	stopA := startCapture(t, l.NsA, l.IfA, capA)
	stopB := startCapture(t, l.NsB, l.IfB, capB)

	var snd *netnstest.Sender
	netnstest.In(t, l.NsA, func() { snd = netnstest.NewSender(t, l.IfA) })
	// One request every gap (SendAt sends in bursts of 64).
	start := time.Now()
	for i, f := range reqs {
		if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
			time.Sleep(d)
		}
		if err := snd.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	// The last ACKs come back (the loaded machine may hold frames far
	// longer than the configured delay), and the last frame the forwarder
	// sent on is 4 delays old: the captures' rings have it before SIGINT.
	if err := fwd.Settle(4*delay, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	stopA()
	stopB()
	if err := resp.Stop(); err != nil {
		t.Error(err)
	}
	respStopped = true
	if err := fwd.Stop(); err != nil {
		t.Error(err)
	}
	fwdStopped = true
	t.Logf("sent %d requests in %v", n, time.Since(start).Round(time.Millisecond))

	// What rocetap path finds.
	text, _, _ := run(t, nil, "path", "-r", capA, "-r", capB)
	t.Logf("rocetap path -r a.pcapng -r b.pcapng:\n%s", text)
	rep := pathReport(t, capA, capB)
	ck := rep.Clock
	t.Logf("clock: offset %.6f ms ± %.6f ms (bound ±%.3f ms), drift %.1f ± %.1f ppm, %d slices",
		ck.Offset*1e3, ck.OffsetErr*1e3, ck.Bound*1e3, ck.DriftPPM, ck.DriftErrPPM, ck.Slices)
	if !ck.Known {
		t.Fatal("clock offset not estimated")
	}
	// One kernel clock: the offset is zero but for the asymmetry of the
	// forwarder's two directions; allow 2% of the delay.
	if ck.Offset < -0.02*delay.Seconds() || ck.Offset > 0.02*delay.Seconds() {
		t.Errorf("clock offset %.6f s, want about 0 (one kernel clock)", ck.Offset)
	}
	for _, d := range []string{"A->B", "B->A"} {
		got := rep.Directions[d].Delay
		if got == nil {
			t.Fatalf("%s: no delay", d)
		}
		t.Logf("%s: delay min %.3f ms, median %.3f ms, p99 %.3f ms, max %.3f ms over %d packets", d, got.Min*1e3, got.Median*1e3, got.P99*1e3, got.Max*1e3, got.N)
		if got.Median < 0.9*delay.Seconds() || got.Median > 1.1*delay.Seconds() {
			t.Errorf("%s: median one-way delay %.3f ms, configured %v (±10%%)", d, got.Median*1e3, delay)
		}
	}

	// Exactly what the forwarder dropped, duplicated and reordered.
	truth := forwarderTruth(t, fwd)
	found := pathFrames(t, capA, capB)
	for _, c := range []struct{ what, filter string }{
		{"lost", "rocetap.path.lost"},
		{"duplicated", "rocetap.path.duplicate"},
		{"reordered", "rocetap.path.reordered and rocetap.path.point == \"" + "B\" and rocetap.path.direction == \"A->B\" or rocetap.path.reordered and rocetap.path.point == \"A\" and rocetap.path.direction == \"B->A\""},
	} {
		got := found(c.filter)
		want := truth[c.what]
		if !slices.Equal(got, want) {
			t.Errorf("%s: rocetap path found %d %v\nthe forwarder's log says %d %v", c.what, len(got), got, len(want), want)
		} else {
			t.Logf("%s: %d packets, as the forwarder logged", c.what, len(got))
		}
	}
	if len(truth["lost"]) != len(ab.Drop)+len(ba.Drop) || len(truth["reordered"]) < len(ab.Hold) {
		t.Errorf("the forwarder logged %d drops (want %d) and %d reorderings (at least %d)", len(truth["lost"]), len(ab.Drop)+len(ba.Drop), len(truth["reordered"]), len(ab.Hold))
	}
	if rep.Expert == nil || countEvents(rep, decode.PathEventLoss) != len(truth["lost"]) {
		t.Errorf("%d path_loss events, want %d", countEvents(rep, decode.PathEventLoss), len(truth["lost"]))
	}
	// sessions, stats and expert -r A -r B find the same, by the log.
	checkTwoPointReports(t, capA, capB, truth, delay)

	// Shift B's timestamps by a known offset and drift: the estimate
	// moves by them.
	const shift, ppm = 2.5, 1000.0
	shifted := filepath.Join(dir, "b-shifted.pcap")
	if _, errOut, code := run(t, nil, "edit", "-r", capB, "-w", shifted, "--time-shift", fmt.Sprint(shift)+"s", "--time-drift", fmt.Sprint(ppm)); code != 0 {
		t.Fatalf("edit: %s", errOut)
	}
	rep2 := pathReport(t, capA, shifted)
	a0, _ := time.Parse(time.RFC3339Nano, ck.Ref)
	b0, _ := time.Parse(time.RFC3339Nano, rep.Captures[1].First)
	wantOff := ck.Offset + shift + (a0.Sub(b0).Seconds()+ck.Offset)*ppm*1e-6
	wantDrift := ck.DriftPPM + ppm
	ck2 := rep2.Clock
	t.Logf("shifted by %gs and %g ppm: offset %.6f s ± %.6f ms (want %.6f s), drift %.1f ± %.1f ppm (want %.1f)",
		shift, ppm, ck2.Offset, ck2.OffsetErr*1e3, wantOff, ck2.DriftPPM, ck2.DriftErrPPM, wantDrift)
	if d := ck2.Offset - wantOff; d > 3*ck2.OffsetErr+20e-6 || d < -3*ck2.OffsetErr-20e-6 {
		t.Errorf("shifted: offset %.6f s, want %.6f s", ck2.Offset, wantOff)
	}
	// Within three standard errors or 5%, and the standard error well
	// below the drift: the forwarder's delay floor wanders by some 100 µs
	// on this loaded machine, so 4 s of traffic give about ±40 ppm.
	if d := ck2.DriftPPM - wantDrift; d > max(3*ck2.DriftErrPPM, 0.05*ppm) || d < -max(3*ck2.DriftErrPPM, 0.05*ppm) || ck2.DriftErrPPM > 0.2*ppm {
		t.Errorf("shifted: drift %.1f ppm, want %.1f", ck2.DriftPPM, wantDrift)
	}
	if got := pathFrames(t, capA, shifted)("rocetap.path.lost"); !slices.Equal(got, truth["lost"]) {
		t.Errorf("shifted: lost %v, want %v", got, truth["lost"])
	}
}

// startCapture runs rocetap capture in-process on iface in namespace ns,
// writing path; the function it returns stops it (SIGINT), waits, and
// fails the test when the capture lost frames (the comparison would
// then find losses the forwarder did not make).
func startCapture(t *testing.T, ns, iface, path string) func() {
	t.Helper()
	sigs := make(chan os.Signal, 1)
	var stdout, stderr syncBuf
	cmd := newCmdCapture(IO{Out: &stdout, ErrOut: &stderr}, func(o *CaptureOptions) error {
		o.signals = sigs
		o.open = func(lo capture.LiveOptions) (l capture.LiveSource, err error) {
			netnstest.In(t, ns, func() { l, err = capture.OpenLive(lo) })
			return l, err
		}
		return captureRun(o, IO{Out: &stdout, ErrOut: &stderr})
	})
	cmd.SetArgs([]string{"-i", iface, "-w", path, "-q", "--backend", "afpacket"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "Capturing on") {
		if time.Now().After(deadline) {
			t.Fatalf("capture on %s did not start within 10 s:\n%s", iface, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		sigs <- syscall.SIGINT
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("capture on %s: %v\n%s", iface, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "captured on "+iface+", 0 dropped by the kernel (ring full), 0 dropped by the interface") {
				t.Errorf("capture on %s lost frames (or said nothing):\n%s", iface, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("capture on %s did not stop on SIGINT", iface)
		}
	}
	t.Cleanup(stop)
	return stop
}

func pathReport(t *testing.T, a, b string) printer.PathJSON {
	t.Helper()
	out, errOut, code := run(t, nil, "path", "-r", a, "-r", b, "-T", "json")
	if code != 0 {
		t.Fatalf("rocetap path: exit %d: %s", code, errOut)
	}
	var r printer.PathJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func countEvents(r printer.PathJSON, kind string) int {
	for _, g := range r.Expert {
		if g.Kind == kind {
			return g.Count
		}
	}
	return 0
}

// pathFrames returns a function listing, for a filter, the packets of
// the frames rocetap path -Y selects as "POINT QP PSN OPCODE", sorted.
func pathFrames(t *testing.T, a, b string) func(filter string) []string {
	return func(filter string) []string {
		t.Helper()
		out, errOut, code := run(t, nil, "path", "-r", a, "-r", b, "-T", "fields", "-E", "separator=/s",
			"-e", "rocetap.path.point", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn", "-e", "infiniband.bth.opcode", "-Y", filter)
		if code != 0 {
			t.Fatalf("rocetap path -Y %q: exit %d: %s", filter, code, errOut)
		}
		lines := strings.Fields(strings.ReplaceAll(strings.TrimSpace(out), " ", "_"))
		sort.Strings(lines)
		return lines
	}
}

// forwarderTruth turns the forwarder's log into what rocetap path must
// find, in pathFrames' form: the dropped frames at the point they left;
// the extra copies at the point they reached; the frames overtaken
// between the points (sent on after a frame that arrived after them),
// at the point they reached.
func forwarderTruth(t *testing.T, f *netnstest.Forwarder) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	key := func(point string, frame []byte) string {
		var p decode.Packet
		p.Frame.Len = len(frame)
		decode.Decode(&p, frame, decode.LinkTypeEthernet)
		return fmt.Sprintf("%s_0x%06x_%d_%d", point, p.BTH.DestQP, p.BTH.PSN, p.BTH.Opcode)
	}
	for dir, pts := range [2][2]string{{"A", "B"}, {"B", "A"}} {
		var sent []netnstest.Hop
		for _, h := range f.Log(dir) {
			switch {
			case h.Index < 0:
			case h.Dropped:
				out["lost"] = append(out["lost"], key(pts[0], h.Frame))
			case h.Out < 0:
				t.Fatalf("the forwarder still held a frame when stopped")
			default:
				if h.Copy {
					out["duplicated"] = append(out["duplicated"], key(pts[1], h.Frame))
					continue
				}
				sent = append(sent, h)
			}
		}
		sort.Slice(sent, func(i, j int) bool { return sent[i].Out < sent[j].Out })
		maxIn := -1
		for _, h := range sent {
			if h.Index < maxIn {
				out["reordered"] = append(out["reordered"], key(pts[1], h.Frame))
				continue
			}
			maxIn = h.Index
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}
