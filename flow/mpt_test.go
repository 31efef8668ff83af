package flow_test

// Tests of the MPT check (Options.MPT) on the Soft-RoCE captures of
// testdata/rxe with the responder registrations recorded with them
// (<s>.mpt.json). The oracles: what the real responder (the Linux kernel's
// rdma_rxe) answered to each access — an ACK, READ response or ATOMIC ACK
// means it executed the access, a NAK that it refused it — and, for every
// verdict, the reference responder in package hca fed the same requests.
// The mutation tests change one registration in memory and check that the
// tracker flags exactly the accesses the change makes illegal, on the
// frames where the real responder executed them.

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// mptPkt is what one frame looked like to the tracker.
type mptPkt struct {
	frame  int
	dst    decode.Node
	op     decode.Opcode
	req    bool // a request with a remote access (RETH on READ / WRITE FIRST/ONLY, AtomicETH, IETH)
	rkey   uint32
	va     uint64
	length uint64
	syn    uint8 // AETH syndrome
	aeth   bool
	an     decode.Analysis
}

type mptRun struct {
	file   *mpt.File
	ref    *hca.Model // with ref: the reference responder's model
	pkts   []mptPkt
	evs    []flow.Event
	sess   []*flow.Session
	verdOf map[int]hca.Verdict // hca's responder: verdict of each access it checked, by frame
	invOK  map[int]bool        // hca's responder: whether each SEND with Invalidate invalidated
}

// runMPT tracks testdata/rxe/<name>.pcap with its MPT file, changed by edit
// (may be nil) before the model is built. With ref, a second model of the
// same file answers every request to the responder (hca.Model.Receive).
func runMPT(t *testing.T, name string, edit func(*mpt.File), ref bool) *mptRun {
	t.Helper()
	f, err := mpt.Load(filepath.Join(gtDir, name+".mpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(f)
	}
	model, err := hca.NewModel(&f.Config, hca.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refModel *hca.Model
	if ref {
		prof, _ := hca.ProfileByName(f.Profile)
		if refModel, err = hca.NewModel(&f.Config, hca.Options{Profile: prof}); err != nil {
			t.Fatal(err)
		}
	}
	run := &mptRun{file: f, ref: refModel, verdOf: map[int]hca.Verdict{}, invOK: map[int]bool{}}
	tr := flow.New(flow.Options{MPT: model, OnEvent: func(e *flow.Event) { run.evs = append(run.evs, *e) }})
	r, err := capture.Open(filepath.Join(gtDir, name+".pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := new(decode.Packet)
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		decode.Decode(p, data, info.LinkType)
		tr.Track(p)
		g := mptPkt{frame: n, an: p.Analysis}
		g.an.Acked = slices.Clone(p.Analysis.Acked)
		_, g.dst, _ = p.Nodes()
		if p.Has&decode.HdrBTH != 0 {
			g.op = p.BTH.Opcode
			switch p.BTH.Opcode.Op() {
			case decode.OpReadRequest, decode.OpWriteFirst, decode.OpWriteOnly, decode.OpWriteOnlyImm:
				g.req, g.rkey, g.va, g.length = true, p.RETH.RKey, p.RETH.VA, uint64(p.RETH.DMALen)
			case decode.OpCompareSwap, decode.OpFetchAdd:
				g.req, g.rkey, g.va, g.length = true, p.AtomicETH.RKey, p.AtomicETH.VA, 8
			case decode.OpSendLastInv, decode.OpSendOnlyInv:
				g.req, g.rkey = true, p.IETH.RKey
			}
			g.req = g.req && p.BTH.Opcode.Transport() != decode.TransportUD
		}
		if p.Has&decode.HdrAETH != 0 {
			g.aeth, g.syn = true, p.AETH.Syndrome
		}
		if refModel != nil && g.dst == f.Responder {
			res := refModel.Receive(p, info.Timestamp)
			if res.Check.Verdict != hca.VerdictNone {
				run.verdOf[n] = res.Check.Verdict
			}
			for _, c := range res.Completions {
				if !c.Requester && (c.Opcode.Op() == decode.OpSendLastInv || c.Opcode.Op() == decode.OpSendOnlyInv) {
					run.invOK[n] = c.Status != hca.WCRemInvReqErr
				}
			}
		}
		run.pkts = append(run.pkts, g)
	}
	tr.Flush()
	run.sess = tr.Sessions()
	return run
}

func (r *mptRun) pkt(frame int) *mptPkt { return &r.pkts[frame-1] }

// verdicts returns "frame:verdict" for every checked packet, with the
// bytes out of bounds.
func (r *mptRun) verdicts() []string {
	var out []string
	for i := range r.pkts {
		m := &r.pkts[i].an.MPT
		if !m.Checked {
			continue
		}
		s := fmt.Sprintf("%d:%s", r.pkts[i].frame, m.VerdictName)
		if m.Over > 0 {
			s += fmt.Sprintf("+%d", m.Over)
		}
		out = append(out, s)
	}
	return out
}

// mptEvents returns "frame:kind" for the mpt_* expert events.
func (r *mptRun) mptEvents() []string {
	var out []string
	for _, e := range r.evs {
		if name := kindName(e.Kind); strings.HasPrefix(name, "mpt_") {
			out = append(out, ev(e.Frame, name))
		}
	}
	return out
}

func mptCaptures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(gtDir, "*.mpt.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no MPT files in %s (%v)", gtDir, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".mpt.json"))
	}
	return names
}

// TestMPTVerdicts: the error scenarios, each access's verdict as the
// README and the .mpt-notes.txt describe the scenario, and the expert
// events: a violation on each forbidden access, nothing on the NAK that
// refuses it (the expected outcome).
func TestMPTVerdicts(t *testing.T) {
	cases := []struct {
		name     string
		verdicts []string
		events   []string
	}{
		// good WRITE, then the rkey ^ 0x00ab0000
		{"err_bad_rkey", []string{"1:ok", "3:unknown_rkey"}, []string{"3:mpt_violation"}},
		// the last 256 B of a 4 KiB MR, then 512 B from the same VA
		{"err_write_oob", []string{"1:ok", "3:out_of_bounds+256"}, []string{"3:mpt_violation"}},
		// 6000 B into a 4 KiB MR: over computed from the MPT file below
		{"err_write_oob_multi", []string{"1:out_of_bounds+1904"}, []string{"1:mpt_violation"}},
		{"err_read_noperm", []string{"1:ok", "3:access_denied"}, []string{"3:mpt_violation"}},
		{"err_qp_access", []string{"1:ok", "3:qp_access_denied"}, []string{"3:mpt_violation"}},
		{"err_atomic_misaligned", []string{"1:ok", "3:misaligned_atomic"}, []string{"3:mpt_violation"}},
		{"err_fadd_misaligned", []string{"1:misaligned_atomic"}, []string{"1:mpt_violation"}},
		// WRITE via the type 2 MW, SEND with Invalidate of it, WRITE via it
		{"send_inv", []string{"1:ok", "3:ok", "5:invalid_rkey"}, []string{"5:mpt_violation"}},
		{"ipv6_mix", nil, nil}, // checked below against the responder
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := runMPT(t, c.name, nil, false)
			if c.verdicts != nil {
				if got := run.verdicts(); !slices.Equal(got, c.verdicts) {
					t.Errorf("verdicts %v, want %v", got, c.verdicts)
				}
			}
			if c.events != nil {
				if got := run.mptEvents(); !slices.Equal(got, c.events) {
					t.Errorf("MPT events %v, want %v", got, c.events)
				}
			}
			// Every NAK answering a forbidden access agrees with the
			// MPT; nothing is accepted or rejected.
			for _, g := range run.pkts {
				if g.aeth && g.syn>>5 == 3 && g.an.RequestFrame > 0 {
					if rq := run.pkt(g.an.RequestFrame); rq.an.MPT.Checked && g.an.MPT.Finding != decode.MPTAgrees {
						t.Errorf("frame %d: NAK of the access in frame %d: finding %q, want agrees", g.frame, rq.frame, g.an.MPT.Finding)
					}
				}
			}
		})
	}

	// err_write_oob_multi's over from the file: the WRITE's end past the
	// end of the MR its rkey names.
	run := runMPT(t, "err_write_oob_multi", nil, false)
	w := run.pkt(1)
	for _, mr := range run.file.MRs {
		if mr.RKey == w.rkey {
			if want := w.va + w.length - (mr.VA + mr.Length); w.an.MPT.Over != want || want != 1904 {
				t.Errorf("err_write_oob_multi: over %d, want %d (= 6000 - 4096 - offset %d)", w.an.MPT.Over, want, w.va-mr.VA)
			}
		}
	}

	// send_inv in detail: the window, the MR behind it, the invalidation.
	run = runMPT(t, "send_inv", nil, false)
	for _, f := range []int{1, 5} {
		m := run.pkt(f).an.MPT
		if !m.Window || !m.HasMR || m.MR != 0x1563 || m.RKey != 0x0800019c || m.Size != 4096 {
			t.Errorf("send_inv frame %d: %+v, want window 0x0800019c on MR 0x00001563, 4096 bytes", f, m)
		}
	}
	if m := run.pkt(3).an.MPT; m.Op != decode.MPTOpInvalidate || !m.Allowed {
		t.Errorf("send_inv frame 3: %+v, want an allowed invalidate", m)
	}
	if m := run.pkt(5).an.MPT; m.Why != "MW 0x0800019c (type 2, bound to MR 0x00001563) is no longer valid" {
		t.Errorf("send_inv frame 5: why %q", m.Why)
	}
}

// TestMPTAllCaptures: on every capture with an MPT file, every access sent
// to the responder is checked once (its first transmission), every verdict
// is the one hca's responder reaches on the same requests, the real
// responder executed exactly the accesses the MPT allows (so no
// mpt_accepted and no mpt_rejected anywhere), and the session counts add
// up.
func TestMPTAllCaptures(t *testing.T) {
	total := 0
	for _, name := range mptCaptures(t) {
		t.Run(name, func(t *testing.T) {
			run := runMPT(t, name, nil, true)
			checked, violations, compared := 0, 0, 0
			for _, g := range run.pkts {
				m := &g.an.MPT
				toResp := g.req && g.dst == run.file.Responder
				resent := g.an.Events&(decode.EventRetransmission|decode.EventDuplicate) != 0
				if m.Checked != (toResp && !resent) {
					t.Errorf("frame %d (%v): checked %v, want %v", g.frame, g.op, m.Checked, toResp && !resent)
				}
				if !m.Checked {
					continue
				}
				checked++
				if !m.Allowed {
					violations++
					if g.an.Events&decode.EventMPTViolation == 0 || m.Finding != decode.MPTViolation || m.Why == "" {
						t.Errorf("frame %d: forbidden (%s) without a violation", g.frame, m.VerdictName)
					}
				}
				checkRange(t, run, &g)
				if m.Op == decode.MPTOpInvalidate {
					if ok, seen := run.invOK[g.frame]; seen {
						compared++
						if ok != m.Allowed {
							t.Errorf("frame %d: invalidate %s, hca's responder invalidated: %v", g.frame, m.VerdictName, ok)
						}
					}
				} else if v, seen := run.verdOf[g.frame]; seen {
					compared++
					if uint8(v) != m.Verdict {
						t.Errorf("frame %d: verdict %s, hca's responder %s", g.frame, m.VerdictName, v)
					}
				}
			}
			total += checked
			// The real responder: what it executed, the MPT allows.
			answered := 0
			for _, g := range run.pkts {
				if g.an.Events&(decode.EventMPTAccepted|decode.EventMPTRejected) != 0 {
					t.Errorf("frame %d: %v", g.frame, g.an.Events)
				}
				if !g.op.IsResponse() {
					continue
				}
				var reqs []int
				nak := g.aeth && g.syn>>5 == 3 && g.syn&0x1f != 0
				switch {
				case nak:
					reqs = []int{g.an.RequestFrame}
				case g.op.Op() == decode.OpReadResponseFirst || g.op.Op() == decode.OpReadResponseOnly || g.op.Op() == decode.OpAtomicAcknowledge:
					reqs = []int{g.an.RequestFrame}
				case g.op.Op() == decode.OpAcknowledge && g.syn>>5 == 0:
					reqs = g.an.Acked
				}
				for _, f := range reqs {
					if f <= 0 {
						continue
					}
					rq := run.pkt(f)
					if !rq.an.MPT.Checked && rq.an.MsgFirst > 0 {
						rq = run.pkt(rq.an.MsgFirst) // a multi-packet WRITE: the FIRST carries the RETH
					}
					if !rq.an.MPT.Checked {
						continue
					}
					answered++
					if rq.an.MPT.Allowed == nak && rq.an.MPT.Op != decode.MPTOpInvalidate {
						t.Errorf("frame %d answers frame %d (%s) with syndrome %#02x", g.frame, rq.frame, rq.an.MPT.VerdictName, g.syn)
					}
					if g.an.MPT.Finding != decode.MPTAgrees {
						t.Errorf("frame %d: finding %q, want agrees", g.frame, g.an.MPT.Finding)
					}
				}
			}
			var sc, sv, sa, sr uint64
			for _, s := range run.sess {
				sc += s.Findings().MPTChecked
				sv += s.Findings().MPTViolations
				sa += s.Findings().MPTAccepted
				sr += s.Findings().MPTRejected
			}
			if sc != uint64(checked) || sv != uint64(violations) || sa != 0 || sr != 0 {
				t.Errorf("sessions count %d checked, %d violations, %d accepted, %d rejected; want %d, %d, 0, 0", sc, sv, sa, sr, checked, violations)
			}
			t.Logf("%d accesses checked, %d forbidden, %d answered, %d compared with hca's responder", checked, violations, answered, compared)
		})
	}
	if total < 80 {
		t.Errorf("only %d accesses checked in all captures", total)
	}
}

// checkRange checks a checked access's range fields against the MPT file
// itself: the range its rkey grants, the offset, the bytes out of bounds,
// and the physical address against the reference model's MTT (the same
// file and seed place the pages alike).
func checkRange(t *testing.T, run *mptRun, g *mptPkt) {
	t.Helper()
	m := &g.an.MPT
	var base, size uint64
	var mr uint32
	found := false
	for _, r := range run.file.MRs {
		if r.RKey == g.rkey && r.RKey != 0 {
			base, size, mr, found = r.VA, r.Length, r.RKey, true
		}
	}
	for _, w := range run.file.MWs {
		if w.RKey == g.rkey {
			base, size, mr, found = w.VA, w.Length, w.MRRKey, true
		}
	}
	if m.Verdict == uint8(hca.VerdictUnknownRKey) {
		if found {
			t.Errorf("frame %d: unknown_rkey, but the file has rkey %#x", g.frame, g.rkey)
		}
		return
	}
	if !m.HasRange {
		return
	}
	if !found || m.Base != base || m.Size != size || m.MR != mr {
		t.Errorf("frame %d: range %#x+%d of MR %#x, the file says %#x+%d of MR %#x (found %v)", g.frame, m.Base, m.Size, m.MR, base, size, mr, found)
	}
	if m.Op == decode.MPTOpInvalidate {
		return
	}
	if g.va >= base && (!m.HasOffset || m.Offset != g.va-base) {
		t.Errorf("frame %d: offset %d (known %v), want %d", g.frame, m.Offset, m.HasOffset, g.va-base)
	}
	inside := g.va >= base && g.va-base <= size && g.length <= size-(g.va-base)
	switch hca.Verdict(m.Verdict) {
	case hca.VerdictOK, hca.VerdictMisaligned:
		if !inside {
			t.Errorf("frame %d: %s, but [%#x+%d) is not inside [%#x+%d)", g.frame, m.VerdictName, g.va, g.length, base, size)
		}
	case hca.VerdictOutOfBounds:
		if inside || g.va < base || m.Over != g.va+g.length-(base+size) {
			t.Errorf("frame %d: out of bounds by %d, [%#x+%d) in [%#x+%d)", g.frame, m.Over, g.va, g.length, base, size)
		}
	}
	if m.HasPA && run.ref != nil {
		pa, ok := run.ref.MRByKey(mr).MTT.Translate(g.va)
		if !ok || pa != m.PA {
			t.Errorf("frame %d: PA %#x, the reference model's MTT %#x (%v)", g.frame, m.PA, pa, ok)
		}
	}
}

// TestMPTMutations changes one registration and checks that exactly the
// accesses it makes illegal are flagged: a violation on the request and,
// because the real responder executed them, mpt_accepted on the response
// that did; or, when the change allows what the responder refused,
// mpt_rejected on the NAK.
func TestMPTMutations(t *testing.T) {
	mr := func(f *mpt.File, rkey uint32) *hca.MRConfig {
		for i := range f.MRs {
			if f.MRs[i].RKey == rkey {
				return &f.MRs[i]
			}
		}
		t.Fatalf("no MR with rkey %#x", rkey)
		return nil
	}
	cases := []struct {
		name     string
		capture  string
		edit     func(*mpt.File)
		verdicts []string // every checked frame
		events   []string
	}{
		{
			// frame 1 writes the MR's last 256 bytes
			"shrink MR by one byte", "err_write_oob",
			func(f *mpt.File) { mr(f, 0x22e2).Length-- },
			[]string{"1:out_of_bounds+1", "3:out_of_bounds+257"},
			[]string{"1:mpt_violation", "2:mpt_accepted", "3:mpt_violation"},
		},
		{
			// ib_write_bw -s 1024: the 4th WRITE ends at the MR's end
			"shrink perftest MR by one byte", "pt_write",
			func(f *mpt.File) { mr(f, 0x35e).Length-- },
			nil,
			[]string{"17:mpt_violation", "18:mpt_accepted"},
		},
		{
			"remove REMOTE_WRITE", "write_imm",
			func(f *mpt.File) { mr(f, 0x57b).Access &^= hca.RemoteWrite },
			// zero-length WRITEs (1, 15) are not checked against the rkey
			[]string{"1:zero_length", "3:access_denied", "5:access_denied", "7:access_denied", "10:access_denied",
				"15:zero_length", "17:access_denied", "19:access_denied"},
			// multi-packet WRITEs are accepted by the ACK of their LAST
			[]string{"3:mpt_violation", "4:mpt_accepted", "5:mpt_violation", "6:mpt_accepted", "7:mpt_violation", "9:mpt_accepted",
				"10:mpt_violation", "14:mpt_accepted", "17:mpt_violation", "18:mpt_accepted", "19:mpt_violation", "22:mpt_accepted"},
		},
		{
			"change the MR's PD", "read_atomic",
			func(f *mpt.File) {
				f.PDs = append(f.PDs, hca.PDConfig{ID: 99})
				mr(f, 0x9d2).PD = 99
			},
			[]string{"1:zero_length", "3:pd_mismatch", "5:pd_mismatch", "7:pd_mismatch", "11:pd_mismatch", "13:pd_mismatch", "15:pd_mismatch"},
			// a READ is accepted by its first response, an ATOMIC by its ATOMIC ACK
			[]string{"3:mpt_violation", "4:mpt_accepted", "5:mpt_violation", "6:mpt_accepted", "7:mpt_violation", "8:mpt_accepted",
				"11:mpt_violation", "12:mpt_accepted", "13:mpt_violation", "14:mpt_accepted", "15:mpt_violation", "16:mpt_accepted"},
		},
		{
			// the MPT now allows the 512-byte WRITE the responder refused
			"grow MR by 256 bytes", "err_write_oob",
			func(f *mpt.File) { mr(f, 0x22e2).Length += 256 },
			[]string{"1:ok", "3:ok"},
			[]string{"4:mpt_rejected"},
		},
		{
			// a type 1 window cannot be invalidated remotely: the WRITE
			// after the SEND with Invalidate is allowed, the NAK rejects it
			"type 1 window", "send_inv",
			func(f *mpt.File) { f.MWs[0].Type = 1 },
			[]string{"1:ok", "3:access_denied", "5:ok"},
			[]string{"3:mpt_violation", "6:mpt_rejected"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := runMPT(t, c.capture, c.edit, false)
			if c.verdicts != nil {
				if got := run.verdicts(); !slices.Equal(got, c.verdicts) {
					t.Errorf("verdicts %v, want %v", got, c.verdicts)
				}
			}
			if got := run.mptEvents(); !slices.Equal(got, c.events) {
				t.Errorf("MPT events %v, want %v", got, c.events)
			}
			// The per-packet analysis carries the same findings.
			for _, g := range run.pkts {
				want := decode.MPTFindingNone
				for _, e := range c.events {
					if strings.HasPrefix(e, fmt.Sprint(g.frame)+":") {
						switch {
						case strings.HasSuffix(e, "accepted"):
							want = decode.MPTAccepted
						case strings.HasSuffix(e, "rejected"):
							want = decode.MPTRejected
						default:
							want = decode.MPTViolation
						}
					}
				}
				if got := g.an.MPT.Finding; want != decode.MPTFindingNone && got != want {
					t.Errorf("frame %d: finding %q, want %q", g.frame, got, want)
				}
			}
		})
	}
}

// TestMPTNoModel: without an MPT nothing is checked.
func TestMPTNoModel(t *testing.T) {
	for _, c := range rxeCaptures(t) {
		tr := flow.New(flow.Options{})
		for i := range c {
			p := c[i]
			tr.Track(&p)
			if p.Analysis.MPT != (decode.MPTCheck{}) {
				t.Fatalf("frame %d: %+v without an MPT", p.Frame.Number, p.Analysis.MPT)
			}
		}
	}
}

// TestTrackNoAllocs: in the steady state of a clean RC stream, Track
// allocates nothing, with or without an MPT to check every access against.
func TestTrackNoAllocs(t *testing.T) {
	for _, withMPT := range []bool{false, true} {
		t.Run(fmt.Sprintf("mpt=%v", withMPT), func(t *testing.T) {
			s := buildRC(t, 8, 512)
			var o flow.Options
			if withMPT {
				o.MPT = benchMPT(t, s)
			}
			tr := flow.New(o)
			n := len(s.pkts)
			k := 0
			step := func() {
				i := k % n
				p := &s.pkts[i]
				s.set(p, i, k/n)
				tr.Track(p)
				k++
			}
			for k < 2*n { // sessions, request lists, histograms
				step()
			}
			if a := testing.AllocsPerRun(4*n, step); a != 0 {
				t.Errorf("%.3f allocations per packet, want 0", a)
			}
			if withMPT {
				var checked uint64
				for _, s := range tr.Sessions() {
					checked += s.Findings().MPTChecked
				}
				if checked == 0 {
					t.Error("no access checked")
				}
			}
		})
	}
}
