package flow_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/editcap"
)

// A direction first seen mid-stream (its responses before the requests
// they answer) is a provisional session until a response pairs it, then
// merges into the session of the requests. Cut every real capture at
// every frame: whatever merged, the sessions must account for every
// packet (their packets, NAKs by code and RNR NAKs by timer add up to
// what the packets say, as rocetap stats counts them), and every frame
// and every event must name a session of the list, itself or one merged
// into it (Session.Merged; Tracker.Resolve gives the live one).
func TestMergedSessions(t *testing.T) {
	files, _ := filepath.Glob(rxe + "*.pcap")
	if len(files) == 0 {
		t.Fatal("no captures in " + rxe)
	}
	merges := 0
	for _, f := range files {
		in, _, err := editcap.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for k := range in {
			where := fmt.Sprintf("%s from frame %d", filepath.Base(f), k+1)
			var evs []flow.Event
			tr := flow.New(flow.Options{OnEvent: func(e *flow.Event) { evs = append(evs, *e) }})
			dec := decode.NewDecoder()
			var p decode.Packet
			var tt flow.Totals
			var ids []uint32
			for i, fr := range in[k:] {
				p.Frame = decode.Frame{Number: i + 1, Time: fr.Info.Timestamp, Len: fr.Info.Length}
				dec.Decode(&p, fr.Data, fr.Info.LinkType)
				tr.Track(&p)
				tt.Add(&p)
				ids = append(ids, p.Analysis.Session)
			}
			tr.Flush()
			var s struct {
				flow.Findings
				Sent [1]flow.DirStats
			}
			listed := map[uint32]uint32{} // session ID or alias -> listed session
			for _, ss := range tr.Sessions() {
				listed[ss.ID] = ss.ID
				for _, m := range ss.Merged() {
					listed[m] = ss.ID
					merges++
				}
				s.Sent[0].Packets += ss.Packets()
				for i := range ss.Findings().NAKs {
					s.NAKs[i] += ss.Findings().NAKs[i]
					s.RNRNaks[i] += ss.Findings().RNRNaks[i]
				}
			}
			var naks, rnrs [32]uint64
			for syn, n := range tt.Syndromes {
				switch syn & 0x60 {
				case 0x60:
					naks[syn&0x1f] += n
				case 0x20:
					rnrs[syn&0x1f] += n
				}
			}
			if s.NAKs != naks || s.RNRNaks != rnrs {
				t.Errorf("%s: the sessions count NAKs %v and RNR NAKs %v, the packets %v and %v", where, nonzero(s.NAKs), nonzero(s.RNRNaks), nonzero(naks), nonzero(rnrs))
			}
			if s.Sent[0].Packets != tt.IB {
				t.Errorf("%s: the sessions count %d packets, the capture has %d with a transport header", where, s.Sent[0].Packets, tt.IB)
			}
			for i, id := range ids {
				if live, ok := listed[id]; id != 0 && (!ok || tr.Resolve(id) != live) {
					t.Errorf("%s: frame %d has session %d, which the list neither has nor names as merged (resolves to %d)", where, i+1, id, tr.Resolve(id))
				}
			}
			for _, e := range evs {
				if _, ok := listed[e.Session]; e.Session != 0 && !ok {
					t.Errorf("%s: event %q names session %d, not in the list", where, e.Text, e.Session)
				}
			}
		}
	}
	if merges == 0 {
		t.Fatal("no cut merged a session: the test checks nothing")
	}
}

func nonzero(v [32]uint64) map[int]uint64 {
	m := map[int]uint64{}
	for i, n := range v {
		if n > 0 {
			m[i] = n
		}
	}
	return m
}
