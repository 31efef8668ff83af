package flow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/editcap"
)

// Faults injected into real Soft-RoCE captures with internal/editcap (the
// engine of `rocetap edit`): the tracker must report exactly the injected
// faults, plus the go-back-N recovery that a real responder and requester
// perform after a loss, and nothing else. The expected events come from
// editcap's report (where each fault landed in the output), not from the
// tracker.

const rxe = "../testdata/rxe/"

type trackResult struct {
	events   []flow.Event
	sessions []*flow.Session
	msgs     []flow.Message
	// done are the rocetap.msg.* analyses of the packets that complete a
	// message, by frame
	done map[int]decode.Analysis
}

func trackFrames(frames []editcap.Frame) trackResult {
	r := trackResult{done: map[int]decode.Analysis{}}
	tr := flow.New(flow.Options{
		OnEvent:   func(e *flow.Event) { r.events = append(r.events, *e) },
		OnMessage: func(m *flow.Message) { r.msgs = append(r.msgs, *m) },
	})
	dec := decode.NewDecoder()
	var p decode.Packet
	for i, f := range frames {
		p.Frame = decode.Frame{Number: i + 1, Time: f.Info.Timestamp, Len: f.Info.Length}
		dec.Decode(&p, f.Data, f.Info.LinkType)
		tr.Track(&p)
		if a := p.Analysis; a.MsgKind != decode.MsgNone {
			a.Acked = nil
			r.done[i+1] = a
		}
	}
	tr.Flush()
	r.sessions = tr.Sessions()
	return r
}

// completions summarizes the messages the responses complete (READ,
// ATOMIC) as kind/length/packets/partial, sorted.
func completions(r trackResult) []string {
	var out []string
	for _, a := range r.done {
		if a.MsgKind == decode.MsgRead || a.MsgKind == decode.MsgAtomic {
			out = append(out, fmt.Sprintf("%v/%d/%d/%v", a.MsgKind, a.MsgLength, a.MsgPackets, a.MsgPartial))
		}
	}
	slices.Sort(out)
	return out
}

// findings lists the events that are not connection chatter, as
// "frame:kind", sorted.
func findings(evs []flow.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind&(decode.EventConnect|decode.EventDisconnect) != 0 {
			continue
		}
		name, _, _ := decode.EventInfo(e.Kind)
		out = append(out, fmt.Sprintf("%d:%s", e.Frame, name))
	}
	slices.Sort(out)
	return out
}

func ev(frame int, kind string) string { return fmt.Sprintf("%d:%s", frame, kind) }

// messageKey summarizes the request messages (kind, length, first PSN) for
// comparing a faulty capture with the original.
func messageKey(ms []flow.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%v/%d/%d", m.Kind, m.Length, m.PSN))
	}
	slices.Sort(out)
	return out
}

func TestInjectedFaults(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		ops     editcap.Ops
		want    func(r *editcap.Report) []string
		sameMsg bool // the messages are those of the original (nothing lost for good)
		lostMsg int  // messages missing compared with the original
		// the text of each incomplete event names these missing PSNs
		incomplete []string
		sameDone   bool // the READ and ATOMIC completions are those of the original
	}{
		{
			name: "lost WRITE ONLY, go-back-N",
			file: "write_imm.pcap", ops: editcap.Ops{Drop: []int{5}, GoBackN: true},
			want:    goBackN,
			sameMsg: true,
		},
		{
			name: "lost WRITE MIDDLE, go-back-N completes the message",
			file: "write_imm.pcap", ops: editcap.Ops{Drop: []int{11}, GoBackN: true},
			want:    goBackN,
			sameMsg: true,
		},
		{
			name: "lost SEND FIRST, go-back-N",
			file: "pt_send.pcap", ops: editcap.Ops{Drop: []int{12}, GoBackN: true},
			want:    goBackN,
			sameMsg: true,
		},
		{
			name: "lost WRITE over IPv6, go-back-N",
			file: "ipv6_mix.pcap", ops: editcap.Ops{Drop: []int{3}, GoBackN: true},
			want:    goBackN,
			sameMsg: true,
		},
		{
			name: "two losses in two sessions, go-back-N",
			file: "pt_write.pcap", ops: editcap.Ops{Drop: []int{3, 25}, GoBackN: true},
			want:    goBackN,
			sameMsg: true,
		},
		{
			name: "lost READ request: its response shows the gap",
			file: "read_atomic.pcap", ops: editcap.Ops{Drop: []int{3}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(4), "psn_gap")}
			},
			lostMsg: 1,
		},
		{
			name: "lost WRITE ONLY, no recovery: its ACK shows the gap",
			file: "write_imm.pcap", ops: editcap.Ops{Drop: []int{3}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(4), "psn_gap")}
			},
			lostMsg: 1,
		},
		{
			name: "duplicated request and duplicated ACK",
			file: "send_imm.pcap", ops: editcap.Ops{Dup: []int{3, 6}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Dups[0].Copy, "duplicate"), ev(r.Dups[1].Copy, "duplicate")}
			},
			sameMsg: true,
		},
		{
			name: "two request packets of one message swapped",
			file: "write_imm.pcap", ops: editcap.Ops{Swap: []int{11}},
			want: func(r *editcap.Report) []string {
				// input 12 now comes first: a gap; input 11 fills it late
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true,
		},
		{
			name: "a READ response overtakes its request",
			file: "read_atomic.pcap", ops: editcap.Ops{Swap: []int{3}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true,
		},
		{
			name: "two READ response packets swapped (MIDDLE, LAST)",
			file: "pt_read.pcap", ops: editcap.Ops{Swap: []int{13}},
			want: func(r *editcap.Report) []string {
				// the LAST first: a gap; the MIDDLE fills it late, and
				// completes the READ
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true, sameDone: true,
		},
		{
			name: "two READ response packets swapped (FIRST, MIDDLE)",
			file: "read_atomic.pcap", ops: editcap.Ops{Swap: []int{8}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true, sameDone: true,
		},
		{
			name: "READ response FIRST and MIDDLE swapped, the first response of the connection",
			file: "pt_read.pcap", ops: editcap.Ops{Swap: []int{12}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true, sameDone: true,
		},
		{
			name: "duplicated READ response LAST, after the READ completed",
			file: "read_atomic.pcap", ops: editcap.Ops{Dup: []int{10}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Dups[0].Copy, "duplicate")}
			},
			sameMsg: true, sameDone: true,
		},
		{
			name: "lost READ response MIDDLE: the READ is incomplete once the responder answers past it",
			file: "read_atomic.pcap", ops: editcap.Ops{Drop: []int{9}},
			want: func(r *editcap.Report) []string {
				// 10 (LAST) shows the gap; 12 (the ATOMIC ACK) shows
				// the responder is done with the READ
				return []string{ev(r.OutNumber(10), "psn_gap"), ev(r.OutNumber(12), "incomplete")}
			},
			sameMsg: true, incomplete: []string{"PSN 772 missing"},
		},
		{
			name: "lost READ response LAST",
			file: "read_atomic.pcap", ops: editcap.Ops{Drop: []int{10}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(12), "psn_gap"), ev(r.OutNumber(12), "incomplete")}
			},
			sameMsg: true, incomplete: []string{"PSN 773 missing"},
		},
		{
			name: "lost READ response FIRST, the first response of the connection",
			file: "pt_read.pcap", ops: editcap.Ops{Drop: []int{12}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(13), "psn_gap"), ev(r.OutNumber(16), "incomplete")}
			},
			sameMsg: true, incomplete: []string{"PSN 11742344 missing"},
		},
		{
			name: "lost READ response ONLY",
			file: "read_atomic.pcap", ops: editcap.Ops{Drop: []int{6}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(8), "psn_gap"), ev(r.OutNumber(8), "incomplete")}
			},
			sameMsg: true, incomplete: []string{"PSN 770 missing"},
		},
		{
			name: "lost ATOMIC ACK",
			file: "read_atomic.pcap", ops: editcap.Ops{Drop: []int{12}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(14), "psn_gap"), ev(r.OutNumber(14), "incomplete")}
			},
			sameMsg: true, incomplete: []string{"ATOMIC ACK is missing"},
		},
		{
			name: "lost WRITE MIDDLE, no recovery: the ACK shows the responder got it",
			file: "write_imm.pcap", ops: editcap.Ops{Drop: []int{11}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(12), "psn_gap"), ev(r.OutNumber(14), "incomplete")}
			},
			incomplete: []string{"PSN 262 not in the capture"},
		},
		{
			name: "WRITE FIRST and LAST swapped",
			file: "write_imm.pcap", ops: editcap.Ops{Swap: []int{7}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.Swaps[0].Out[1], "psn_gap"), ev(r.Swaps[0].Out[0], "out_of_order")}
			},
			sameMsg: true,
		},
		{
			name: "lost UC SEND FIRST: incomplete at the end",
			file: "pt_uc.pcap", ops: editcap.Ops{Drop: []int{3}},
			want: func(r *editcap.Report) []string {
				return []string{ev(r.OutNumber(4), "psn_gap"), ev(0, "incomplete")}
			},
			lostMsg: 1, incomplete: []string{"PSN 6806852 missing"},
		},
		{
			name: "lost last request, recovered by timeout: invisible at the capture point",
			file: "write_imm.pcap", ops: editcap.Ops{Drop: []int{21}, GoBackN: true},
			want:    func(r *editcap.Report) []string { return nil },
			sameMsg: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, _, err := editcap.Read(rxe + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			base := trackFrames(in)
			out, rep, err := editcap.Apply(in, tc.ops)
			if err != nil {
				t.Fatal(err)
			}
			got := trackFrames(out)
			want := tc.want(rep)
			// what the original already had (a real NAK), where it moved
			for _, e := range base.events {
				if e.Kind&(decode.EventConnect|decode.EventDisconnect) == 0 {
					name, _, _ := decode.EventInfo(e.Kind)
					want = append(want, ev(rep.OutNumber(e.Frame), name))
				}
			}
			slices.Sort(want)
			if g := findings(got.events); !slices.Equal(g, want) {
				t.Errorf("%s\nevents:\n got %v\nwant %v\n%s", tc.file, g, want, eventText(got.events))
			}
			bm, gm := messageKey(base.msgs), messageKey(got.msgs)
			switch {
			case tc.sameMsg && !slices.Equal(bm, gm):
				t.Errorf("messages differ from the original:\n got %v\nwant %v", gm, bm)
			case tc.lostMsg > 0 && len(bm)-len(gm) != tc.lostMsg:
				t.Errorf("%d messages, want %d (original %d minus the lost)", len(gm), len(bm)-tc.lostMsg, len(bm))
			}
			// the counters agree with the events
			var gaps, retrans, dups, ooo, lost, partial uint64
			for _, s := range got.sessions {
				gaps += s.Findings().Gaps
				retrans += s.Findings().Retransmitted
				dups += s.Findings().Duplicates
				ooo += s.Findings().OutOfOrder
				lost += s.Findings().LostPSNs
				partial += s.Findings().Partial
			}
			count := func(kind string) uint64 {
				n := uint64(0)
				for _, w := range want {
					if strings.HasSuffix(w, ":"+kind) {
						n++
					}
				}
				return n
			}
			if gaps != count("psn_gap") || retrans != count("retransmission") || dups != count("duplicate") || ooo != count("out_of_order") {
				t.Errorf("session counters: gaps %d retrans %d dups %d ooo %d", gaps, retrans, dups, ooo)
			}
			if tc.sameMsg && lost != 0 && len(tc.incomplete) == 0 {
				t.Errorf("%d PSNs still counted lost after the recovery", lost)
			}
			// a message is complete only when every PSN of it was
			// seen: the incomplete ones are reported, with what they
			// lack, and counted partial; the others complete as in the
			// original
			if partial != count("incomplete") {
				t.Errorf("%d partial messages, %d incomplete events", partial, count("incomplete"))
			}
			var texts []string
			for _, e := range got.events {
				if e.Kind == decode.EventIncomplete {
					texts = append(texts, e.Text)
				}
			}
			for i, w := range tc.incomplete {
				if i >= len(texts) || !strings.Contains(texts[i], w) {
					t.Errorf("incomplete event %d does not say %q: %q", i+1, w, texts)
				}
			}
			bc, gc := completions(base), completions(got)
			if tc.sameDone && !slices.Equal(bc, gc) {
				t.Errorf("READ/ATOMIC completions differ from the original:\n got %v\nwant %v", gc, bc)
			}
			// never a READ completed with fewer bytes than it asked for
			asked := map[int]uint64{}
			for _, m := range got.msgs {
				if m.Kind == decode.MsgRead {
					asked[m.FirstFrame] = m.Length
				}
			}
			for f, a := range got.done {
				if a.MsgKind == decode.MsgRead && !a.MsgPartial && a.MsgLength != asked[a.MsgFirst] {
					t.Errorf("frame %d completes the READ of frame %d with %d bytes, %d asked for", f, a.MsgFirst, a.MsgLength, asked[a.MsgFirst])
				}
			}
		})
	}
}

// goBackN is what each recovery must produce: the gap where the requester's
// next packet shows it, the responder's NAK, and one retransmission per
// resent packet.
func goBackN(r *editcap.Report) []string {
	var want []string
	for _, rc := range r.Recoveries {
		if rc.Timeout {
			continue // resent after the capture's end: nothing to see
		}
		want = append(want, ev(rc.TriggerOut, "psn_gap"), ev(rc.NAK, "nak"))
		for _, c := range rc.Retransmits {
			want = append(want, ev(c.Out, "retransmission"))
		}
	}
	return want
}

func eventText(evs []flow.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  frame %d: %s\n", e.Frame, e.Text)
	}
	return b.String()
}
