package flow_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/editcap"
)

// What the requester gave up, against what the applications saw: every
// work request of testdata/rxe that completed with "transport retry
// counter exceeded" (IBV_WC_RETRY_EXC_ERR) or "RNR retry counter
// exceeded" (IBV_WC_RNR_RETRY_EXC_ERR) in its .expect.json must be
// reported so, once, for its PSN, with as many transmissions as the
// requester QP's retry_cnt or rnr_retry (.mrs.json) allowed, and its
// session must say that side likely went to the error state. No other
// capture may report either.
func TestRXEGaveUp(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(gtDir, "*.pcap"))
	if err != nil || len(files) == 0 {
		t.Fatal("no captures in testdata/rxe")
	}
	type mrsQP struct {
		Side     string `json:"side"`
		QPN      uint32 `json:"qpn"`
		RetryCnt uint32 `json:"retry_cnt"`
		RNRRetry uint32 `json:"rnr_retry"`
	}
	checked := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pcap")
		run := gtTrack(t, f)
		type want struct {
			cause decode.Event
			psn   decode.PSN
			sent  uint32
			bQPN  uint32
			what  string
		}
		var wants []want
		if _, err := os.Stat(filepath.Join(gtDir, name+".expect.json")); err == nil {
			var ex gtExpectFile
			gtReadJSON(t, filepath.Join(gtDir, name+".expect.json"), &ex)
			var mrs struct {
				QPs []mrsQP `json:"qps"`
			}
			gtReadJSON(t, filepath.Join(gtDir, name+".mrs.json"), &mrs)
			for _, w := range ex.WRs {
				var cause decode.Event
				switch w.Status {
				case "transport retry counter exceeded":
					cause = decode.EventRetryExc
				case "RNR retry counter exceeded":
					cause = decode.EventRNRRetryExc
				default:
					continue
				}
				var q *gtQP
				for i := range ex.QPs {
					if ex.QPs[i].QPN == w.QPN && ex.QPs[i].Side == "requester" {
						q = &ex.QPs[i]
					}
				}
				var m *mrsQP
				for i := range mrs.QPs {
					if mrs.QPs[i].QPN == w.QPN && mrs.QPs[i].Side == "requester" {
						m = &mrs.QPs[i]
					}
				}
				if q == nil || m == nil || w.PSNFirst == nil {
					t.Fatalf("%s: wr_id %d: requester QP %#x not described", name, w.WRID, w.QPN)
				}
				sent := m.RetryCnt + 1
				if cause == decode.EventRNRRetryExc {
					sent = m.RNRRetry + 1
				}
				wants = append(wants, want{cause, decode.PSN(*w.PSNFirst), sent, q.DestQPN, fmt.Sprintf("wr_id %d %s: %s", w.WRID, w.Opcode, w.Status)})
			}
		}
		var got []flow.Event
		for _, e := range run.evs {
			if e.Kind&(decode.EventRetryExc|decode.EventRNRRetryExc) != 0 {
				got = append(got, e)
			}
		}
		if len(got) != len(wants) {
			t.Errorf("%s: %d give-up events, the application saw %d retry-exceeded completions: %s", name, len(got), len(wants), eventText(got))
			continue
		}
		for i, w := range wants {
			e := got[i]
			checked++
			if e.Kind != w.cause || !strings.Contains(e.Text, fmt.Sprintf("PSN %d ", w.psn)) {
				t.Errorf("%s: %s: got %s %q", name, w.what, kindName(e.Kind), e.Text)
			}
			s := run.tr.Session(e.Session)
			if s == nil || s.B.QPN != w.bQPN {
				t.Errorf("%s: %s: event in session %d, not the one to QP %#x", name, w.what, e.Session, w.bQPN)
				continue
			}
			if g := s.GaveUp()[0]; g.Cause != w.cause || g.PSN != w.psn || g.Sent != w.sent {
				t.Errorf("%s: %s: session %d GaveUp[A] = %+v, want %s PSN %d sent %d times (retry_cnt/rnr_retry + 1)", name, w.what, s.ID, g, kindName(w.cause), w.psn, w.sent)
			}
			if s.GaveUp()[1].Cause != 0 {
				t.Errorf("%s: side B gave up too: %+v", name, s.GaveUp()[1])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no retry-exceeded completion in testdata/rxe: the test checks nothing")
	}
}

// A requester that gave up, then traffic: in a real capture (err_retry_exc)
// followed 2.1 s later by another connection's, the silence is measured;
// in synthetic ones, the packets later sent to the dead QP say so, and a
// requester that sends again is alive.
func TestGaveUpSilence(t *testing.T) {
	in, _, err := editcap.Read(rxe + "err_retry_exc.pcap")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := editcap.Read(rxe + "send_imm.pcap")
	if err != nil {
		t.Fatal(err)
	}
	end := in[len(in)-1].Info.Timestamp
	shift := end.Add(2100 * time.Millisecond).Sub(other[0].Info.Timestamp)
	frames := append([]editcap.Frame(nil), in...)
	for _, f := range other {
		f.Info.Timestamp = f.Info.Timestamp.Add(shift)
		frames = append(frames, f)
	}
	r := trackFrames(frames)
	var gave []flow.Event
	for _, e := range r.events {
		if e.Kind == decode.EventRetryExc {
			gave = append(gave, e)
		}
	}
	if len(gave) != 1 || !strings.Contains(gave[0].Text, "3 retries") || !strings.Contains(gave[0].Text, "the 2.1") ||
		!strings.Contains(gave[0].Text, "more than twice") {
		t.Fatalf("want one retry_exceeded naming 3 retries and the 2.1 s of silence: %s", eventText(gave))
	}
}
