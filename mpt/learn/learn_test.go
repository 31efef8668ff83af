package learn

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// eachPacket decodes every packet of a capture in order.
func eachPacket(t *testing.T, path string, fn func(p *decode.Packet)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dec := decode.NewDecoder()
	p := new(decode.Packet)
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: frame %d: %v", path, n, err)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		dec.Decode(p, data, info.LinkType)
		fn(p)
	}
}

func learnCapture(t *testing.T, path string, o Options) (*Result, error) {
	t.Helper()
	l := New(o)
	eachPacket(t, path, l.Add)
	return l.Finish()
}

// responderFor names the node to model where the capture alone cannot
// tell: both sides answer equally often, or nobody answers and requests
// go both ways.
var responderFor = map[string]string{
	"cm_ucmatose": "10.77.0.2",
	"cm_udaddy":   "10.77.0.2",
}

// TestLearnRxe learns an MPT file from every Soft-RoCE capture and checks
// that
//
//   - it reads back (mpt.Parse);
//   - checked against it, as `rocetap decode --mpt` does, every access
//     the responder executed is allowed and every one it NAKed is
//     forbidden: the tracker reports no mpt_accepted and no mpt_rejected;
//   - it claims nothing the responder's real registrations contradict
//     (the .mpt.json files made from the verbs data): its QPs are real
//     QPs with their type, expected PSN, peer and MTU, with no access flag
//     the real QP lacks, and each learned MR lies inside the real MR or
//     window of its rkey, with no flag it lacks.
func TestLearnRxe(t *testing.T) {
	files, err := filepath.Glob("../../testdata/rxe/*.pcap")
	if err != nil || len(files) < 30 {
		t.Fatalf("want the Soft-RoCE captures, found %d (%v)", len(files), err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".pcap")
		t.Run(name, func(t *testing.T) {
			var o Options
			if a, ok := responderFor[name]; ok {
				o.Responder = decode.MustParseNode(a)
			}
			res, err := learnCapture(t, path, o)
			if name == "cm_reject" {
				// a CM REJ: only management datagrams on QP1
				if err == nil || !strings.Contains(err.Error(), "no node answered a request") || !strings.Contains(err.Error(), "QP0/QP1 only") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := res.File
			out, err := mpt.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mpt.Parse("learned", out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(res.Notes) == 0 || res.ResponderFrom == "" {
				t.Errorf("no notes (%q) or responder source (%q)", res.Notes, res.ResponderFrom)
			}

			// decode --mpt: executed accesses allowed, NAKed ones not.
			prof, _ := hca.ProfileByName(f.Profile)
			m, err := hca.NewModel(&f.Config, hca.Options{Profile: prof})
			if err != nil {
				t.Fatal(err)
			}
			tr := flow.New(flow.Options{MPT: m})
			checked := 0
			eachPacket(t, path, func(p *decode.Packet) {
				tr.Track(p)
				if p.Analysis.MPT.Checked {
					checked++
				}
			})
			tr.Flush()
			for _, s := range tr.Sessions() {
				if f := s.Findings(); f.MPTAccepted != 0 || f.MPTRejected != 0 {
					t.Errorf("session %d (%s → %s): %d accesses executed that the learned MPT forbids, %d NAKed that it allows",
						s.ID, s.A, s.B, f.MPTAccepted, f.MPTRejected)
				}
			}
			if len(f.MRs) > 0 && checked == 0 {
				t.Error("no access was checked against the learned MRs")
			}

			// Nothing the real registrations contradict.
			real, err := mpt.Load(strings.TrimSuffix(path, ".pcap") + ".mpt.json")
			if errors.Is(err, os.ErrNotExist) {
				return // cm_*: no verbs data
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Responder != real.Responder {
				t.Errorf("responder %s, want %s", f.Responder, real.Responder)
			}
			qps := map[uint32]hca.QPConfig{}
			for _, q := range real.QPs {
				qps[q.QPN] = q
			}
			for _, q := range f.QPs {
				w, ok := qps[q.QPN]
				switch {
				case !ok:
					t.Errorf("QP %#06x is not one of the responder's", q.QPN)
					continue
				case q.Type != w.Type || q.MTU != w.MTU:
					t.Errorf("QP %#06x: %s MTU %d, want %s MTU %d", q.QPN, q.Type, q.MTU, w.Type, w.MTU)
				case q.Access&^w.Access != 0:
					t.Errorf("QP %#06x: access %v, but the QP has only %v", q.QPN, q.Access, w.Access)
				case q.HasExpectedPSN != w.HasExpectedPSN || q.ExpectedPSN != w.ExpectedPSN:
					t.Errorf("QP %#06x: expected_psn %#06x (%v), want %#06x (%v)", q.QPN, q.ExpectedPSN, q.HasExpectedPSN, w.ExpectedPSN, w.HasExpectedPSN)
				case q.Type != decode.TransportUC && (q.Remote == nil) != (w.Remote == nil) || q.Remote != nil && *q.Remote != *w.Remote:
					t.Errorf("QP %#06x: remote %v, want %v", q.QPN, q.Remote, w.Remote)
				case q.HasMinRNRTimer && q.MinRNRTimer != w.MinRNRTimer:
					t.Errorf("QP %#06x: min_rnr_timer %d, want %d", q.QPN, q.MinRNRTimer, w.MinRNRTimer)
				}
				if q.HasRecv && w.HasRecv {
					if len(q.Recv) > len(w.Recv) {
						t.Errorf("QP %#06x: %d receives, the QP had %d posted", q.QPN, len(q.Recv), len(w.Recv))
					}
					for i, r := range q.Recv {
						if i < len(w.Recv) && w.Recv[i].HasPostedAt && r.PostedAt.Before(w.Recv[i].PostedAt) {
							t.Errorf("QP %#06x: receive %d posted at %v, before the real one (%v)", q.QPN, i, r.PostedAt, w.Recv[i].PostedAt)
						}
					}
				}
			}
			type span struct {
				va, length uint64
				access     hca.Access
			}
			keys := map[uint32]span{}
			for _, mr := range real.MRs {
				if mr.RKey != 0 {
					keys[mr.RKey] = span{mr.VA, mr.Length, mr.Access}
				}
			}
			for _, mw := range real.MWs {
				keys[mw.RKey] = span{mw.VA, mw.Length, mw.Access | hca.LocalWrite}
			}
			for _, mr := range f.MRs {
				w, ok := keys[mr.RKey]
				switch {
				case !ok:
					t.Errorf("MR rkey %#08x is not one of the responder's keys", mr.RKey)
				case mr.VA < w.va || mr.VA+mr.Length > w.va+w.length:
					t.Errorf("MR rkey %#08x: [%#x, +%d) is not inside the real [%#x, +%d)", mr.RKey, mr.VA, mr.Length, w.va, w.length)
				case mr.Access&^w.access != 0:
					t.Errorf("MR rkey %#08x: access %v, the real one has only %v", mr.RKey, mr.Access, w.access)
				case mr.LKey != mr.RKey || mr.PD != 0:
					t.Errorf("MR rkey %#08x: lkey %#08x, PD %d", mr.RKey, mr.LKey, mr.PD)
				}
			}
		})
	}
}

// TestLearnInferences checks, capture by capture, what the answers say
// beyond the accesses.
func TestLearnInferences(t *testing.T) {
	dir := "../../testdata/rxe/"
	tests := []struct {
		capture string
		opts    Options
		check   func(t *testing.T, f *mpt.File, notes string)
	}{
		{"err_psn_seq", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// The first request has PSN 0x1800; the NAK names 0x17fb.
			if q := f.QPs[0]; q.ExpectedPSN != 0x17fb || !strings.Contains(notes, "from the PSN sequence error NAK in frame 2") {
				t.Errorf("expected_psn %#06x\n%s", q.ExpectedPSN, notes)
			}
		}},
		{"err_rnr", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// Never a receive: RNR NAKs with timer 1.
			if q := f.QPs[0]; !q.HasRecv || len(q.Recv) != 0 || !q.HasMinRNRTimer || q.MinRNRTimer != 1 {
				t.Errorf("QP %+v", q)
			}
		}},
		{"err_rnr_recover", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			q := f.QPs[0]
			if len(q.Recv) != 1 || q.Recv[0].Length != 64 || !q.Recv[0].HasPostedAt || q.MinRNRTimer != 14 {
				t.Fatalf("QP %+v", q)
			}
		}},
		{"err_recv_too_small", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			q := f.QPs[0]
			if f.Profile != "rxe" || len(q.Recv) != 2 || q.Recv[0].Length != 256 || q.Recv[1].Length != 1023 {
				t.Errorf("profile %s, QP %+v", f.Profile, q)
			}
		}},
		{"err_recv_too_small", Options{Profile: "ibta"}, func(t *testing.T, f *mpt.File, notes string) {
			// Told ibta, the Remote Operational Error NAK is no
			// too-small receive (the spec NAKs that Invalid Request).
			if f.Profile != "ibta" || f.QPs[0].HasRecv {
				t.Errorf("profile %s, QP %+v", f.Profile, f.QPs[0])
			}
		}},
		{"err_qp_access", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// READ executed, WRITE NAKed with Invalid Request: rxe.
			if f.Profile != "rxe" || f.QPs[0].Access != hca.RemoteRead || !strings.Contains(notes, "profile rxe: frame 4") {
				t.Errorf("profile %s, access %v\n%s", f.Profile, f.QPs[0].Access, notes)
			}
		}},
		{"err_write_oob_multi", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// A Remote Access Error NAK: the QP check passed; no MR.
			if f.QPs[0].Access != hca.RemoteWrite || len(f.MRs) != 0 {
				t.Errorf("access %v, MRs %+v", f.QPs[0].Access, f.MRs)
			}
		}},
		{"err_fadd_misaligned", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// A misaligned atomic NAKed with Invalid Request passed
			// the rkey and bounds checks.
			if f.QPs[0].Access != hca.RemoteAtomic || len(f.MRs) != 1 || f.MRs[0].VA&7 != 3 || f.MRs[0].Length != 8 {
				t.Errorf("access %v, MRs %+v", f.QPs[0].Access, f.MRs)
			}
		}},
		{"err_retry_exc", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// Never answered: kept out of RTR.
			if q := f.QPs[0]; q.HasExpectedPSN || q.Remote != nil || !strings.Contains(notes, "the only node requests were sent to") {
				t.Errorf("QP %+v\n%s", q, notes)
			}
		}},
		{"send_inv", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			// The window's rkey, learned as an MR.
			if len(f.MRs) != 1 || f.MRs[0].RKey != 0x0800019c {
				t.Errorf("MRs %+v", f.MRs)
			}
		}},
		{"uc", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			if q := f.QPs[0]; q.Type != decode.TransportUC || q.Access != 0 || len(f.MRs) != 0 || !q.HasExpectedPSN || !strings.Contains(notes, "UC WRITE(s) not counted") {
				t.Errorf("QP %+v, MRs %+v\n%s", q, f.MRs, notes)
			}
		}},
		{"uc", Options{TrustUC: true}, func(t *testing.T, f *mpt.File, notes string) {
			if q := f.QPs[0]; q.Access != hca.RemoteWrite || len(f.MRs) != 1 {
				t.Errorf("QP %+v, MRs %+v", q, f.MRs)
			}
		}},
		{"ipv6_mix", Options{}, func(t *testing.T, f *mpt.File, notes string) {
			if f.Responder != decode.MustParseNode("fd77::2") || len(f.QPs) != 2 || f.QPs[1].Type != decode.TransportUD || f.QPs[1].HasQKey {
				t.Errorf("responder %s, QPs %+v", f.Responder, f.QPs)
			}
		}},
		{"cm_perftest", Options{Responder: decode.MustParseNode("::ffff:10.77.0.1")}, func(t *testing.T, f *mpt.File, notes string) {
			if f.Responder != decode.MustParseNode("10.77.0.1") || len(f.QPs) == 0 {
				t.Errorf("responder %s, QPs %+v", f.Responder, f.QPs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			res, err := learnCapture(t, dir+tt.capture+".pcap", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res.File, strings.Join(res.Notes, "\n"))
		})
	}
}

func TestLearnErrors(t *testing.T) {
	dir := "../../testdata/rxe/"
	tests := []struct {
		capture string
		opts    Options
		want    string
	}{
		{"read_atomic", Options{Responder: decode.MustParseNode("10.0.0.9")}, "no request in the capture is sent to 10.0.0.9; requests go to 10.77.0.2 (1 QP)"},
		{"read_atomic", Options{Profile: "mlx5"}, `unknown responder profile "mlx5"`},
		{"cm_reject", Options{Responder: decode.MustParseNode("10.77.0.2")}, "no request to 10.77.0.2 reached a QP an MPT file can hold"},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			_, err := learnCapture(t, dir+tt.capture+".pcap", tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// Nothing at all.
	if _, err := New(Options{}).Finish(); err == nil || !strings.Contains(err.Error(), "no RDMA request") {
		t.Errorf("empty capture: %v", err)
	}
}

// TestLearnChoosesResponder: when the answers do not tell which node to
// model (both sides of cm_ucmatose answer twice; nobody answers in
// cm_udaddy's UD traffic), learn models the node the capture's first
// request went to, the CM REQ's (SIDR REQ's) destination, and says so.
func TestLearnChoosesResponder(t *testing.T) {
	for _, tt := range []struct{ capture, from, note string }{
		{"cm_ucmatose", "sent 2 of the capture's 4 responses", "10.77.0.2 and 10.77.0.1 each sent 2 responses; 10.77.0.2 is the one the capture's first request went to"},
		{"cm_udaddy", "no node answered; the first node requests were sent to", "requests went to 10.77.0.2 and 10.77.0.1, and 10.77.0.2 is the one the capture's first request went to"},
	} {
		t.Run(tt.capture, func(t *testing.T) {
			res, err := learnCapture(t, "../../testdata/rxe/"+tt.capture+".pcap", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.File.Responder != decode.MustParseNode("10.77.0.2") || res.ResponderFrom != tt.from {
				t.Errorf("responder %s (%s)", res.File.Responder, res.ResponderFrom)
			}
			if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, tt.note) {
				t.Errorf("notes lack %q:\n%s", tt.note, notes)
			}
		})
	}
}

// synth builds RoCEv2 packets between 10.0.0.1 (requester) and 10.0.0.2.
type synth struct {
	n int
	t time.Time
}

func (s *synth) pkt(fromResponder bool, op decode.Opcode, qp, psn uint32) *decode.Packet {
	s.n++
	s.t = s.t.Add(time.Microsecond)
	p := &decode.Packet{Has: decode.HdrIPv4 | decode.HdrBTH}
	p.Frame = decode.Frame{Number: s.n, Time: s.t, Len: 100}
	a, b := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	if fromResponder {
		a, b = b, a
	}
	p.IPv4.Src, p.IPv4.Dst = a, b
	p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = op, qp, decode.PSN(psn)
	return p
}

func (s *synth) write(psn uint32, va uint64, n int) *decode.Packet {
	p := s.pkt(false, decode.Opcode(decode.OpWriteOnly), 0x11, psn)
	p.Has |= decode.HdrRETH
	p.RETH = decode.RETH{VA: va, RKey: 0x1234, DMALen: uint32(n)}
	p.Payload = make([]byte, n)
	return p
}

func (s *synth) ack(psn uint32) *decode.Packet {
	p := s.pkt(true, decode.Opcode(decode.OpAcknowledge), 0x22, psn)
	p.Has |= decode.HdrAETH
	p.AETH.Syndrome = 0x1f
	return p
}

// TestLearnSynthetic: a coalesced ACK, requests forgotten while waiting,
// and a native InfiniBand packet without a GRH, which names its nodes by
// LID: a request to another node (lid:2), which leaves the responder's
// file alone.
func TestLearnSynthetic(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		wantMR   hca.MRConfig
		wantNote string
	}{
		{"all remembered", 0, hca.MRConfig{RKey: 0x1234, LKey: 0x1234, VA: 0x1000, Length: 0x300, Access: hca.LocalWrite | hca.RemoteWrite},
			"the 3 access(es) the responder executed"},
		{"two forgotten", 1, hca.MRConfig{RKey: 0x1234, LKey: 0x1234, VA: 0x1200, Length: 0x100, Access: hca.LocalWrite | hca.RemoteWrite},
			"2 request messages forgotten unanswered (more than 1 packet waiting)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &synth{t: time.Unix(1700000000, 0)}
			l := New(Options{MaxPending: tt.max})
			l.Add(s.write(7, 0x1000, 0x100))
			l.Add(s.write(8, 0x1100, 0x100))
			l.Add(s.write(9, 0x1200, 0x100))
			l.Add(s.ack(9)) // acknowledges all three
			lid := s.pkt(false, decode.Opcode(decode.OpSendOnly), 0x11, 10)
			lid.Has = decode.HdrLRH | decode.HdrBTH
			lid.LRH.SLID, lid.LRH.DLID = 1, 2
			l.Add(lid)
			res, err := l.Finish()
			if err != nil {
				t.Fatal(err)
			}
			f := res.File
			if len(f.MRs) != 1 || f.MRs[0] != tt.wantMR {
				t.Errorf("MRs %+v, want %+v", f.MRs, tt.wantMR)
			}
			q := f.QPs[0]
			if q.QPN != 0x11 || q.ExpectedPSN != 7 || q.Remote == nil || q.Remote.QPN != 0x22 || q.Access != hca.RemoteWrite {
				t.Errorf("QP %+v", q)
			}
			notes := strings.Join(res.Notes, "\n")
			if !strings.Contains(notes, tt.wantNote) || f.Responder != decode.MustParseNode("10.0.0.2") || len(f.QPs) != 1 {
				t.Errorf("notes:\n%s", notes)
			}
		})
	}
}
