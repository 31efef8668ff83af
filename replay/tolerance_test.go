package replay_test

// Replay reports where a responder broke the rules, not where it chose
// differently within them. Each case starts from a real Soft-RoCE capture
// that replays clean, changes what a responder may legally change (or
// what it may not), and lists every divergence and note expected, in
// order. The frames are the kernel's, edited in place or copied, with
// their ICRC recomputed (decode.FixCRCs).
//
// What is legal comes from the spec as ../shared/IBTA-NOTES.md records it
// ("More spec facts"): AckReq makes an acknowledgement mandatory, but a
// responder may acknowledge any request it executed (real NICs ACK SEND
// First packets without AckReq) and may coalesce several into one ACK;
// the credit field changes as receive WQEs are consumed; never allowed
// are acknowledging a PSN not yet received, a wrong syndrome, an MSN that
// does not count completed messages. Bytes of a registered buffer can
// change between two remote READs without anything on the wire.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/editcap"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/replay"
)

// frameList is a capture being edited: frames keep the numbers they had
// in the capture (ids), inserted frames get negative ids, and num gives a
// frame's number in the edited capture.
type frameList struct {
	t      *testing.T
	link   decode.LinkType
	frames []editcap.Frame
	ids    []int
	next   int // the next inserted frame's id is -next
}

func readFrames(t *testing.T, capture string) *frameList {
	t.Helper()
	frames, link, err := editcap.Read(filepath.Join("..", "testdata", "rxe", capture+".pcap"))
	if err != nil {
		t.Fatal(err)
	}
	l := &frameList{t: t, link: link, frames: frames, next: 1}
	for i := range frames {
		l.ids = append(l.ids, i+1)
	}
	return l
}

func (l *frameList) index(id int) int {
	l.t.Helper()
	i := slices.Index(l.ids, id)
	if i < 0 {
		l.t.Fatalf("no frame %d", id)
	}
	return i
}

// num returns the number of frame id in the edited capture.
func (l *frameList) num(id int) int { return l.index(id) + 1 }

// frame returns a copy of frame id.
func (l *frameList) frame(id int) editcap.Frame {
	f := l.frames[l.index(id)]
	f.Data = bytes.Clone(f.Data)
	return f
}

func (l *frameList) drop(id int) {
	i := l.index(id)
	l.frames, l.ids = slices.Delete(l.frames, i, i+1), slices.Delete(l.ids, i, i+1)
}

// insertAfter puts f after frame id, 1 µs later, and returns its id.
func (l *frameList) insertAfter(id int, f editcap.Frame) int {
	i := l.index(id) + 1
	f.Info.Timestamp = l.frames[i-1].Info.Timestamp.Add(time.Microsecond)
	nid := -l.next
	l.next++
	l.frames, l.ids = slices.Insert(l.frames, i, f), slices.Insert(l.ids, i, nid)
	return nid
}

// edit changes frame id's bytes through fn (given the decoded frame to
// find the headers), then recomputes its ICRC.
func (l *frameList) edit(id int, fn func(p *decode.Packet, b []byte)) {
	l.t.Helper()
	f := &l.frames[l.index(id)]
	editFrame(l.t, f, fn)
}

func editFrame(t *testing.T, f *editcap.Frame, fn func(p *decode.Packet, b []byte)) {
	t.Helper()
	var p decode.Packet
	decode.Decode(&p, f.Data, f.Info.LinkType)
	if p.Has&decode.HdrBTH == 0 {
		t.Fatal("not an InfiniBand frame")
	}
	fn(&p, f.Data)
	if err := decode.FixCRCs(f.Data, f.Info.LinkType); err != nil {
		t.Fatal(err)
	}
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// setAck makes an ACK frame say PSN psn, AETH syndrome syn and MSN msn.
func setAck(t *testing.T, psn uint32, syn uint8, msn uint32) func(p *decode.Packet, b []byte) {
	return func(p *decode.Packet, b []byte) {
		if p.Has&decode.HdrAETH == 0 {
			t.Fatal("not an ACK")
		}
		put24(b[p.Offset(p.BTH.Contents)+9:], psn)
		aeth := p.Offset(p.AETH.Contents)
		b[aeth] = syn
		put24(b[aeth+1:], msn)
	}
}

// ackFrom copies ACK frame id and makes it say psn, syn and msn.
func (l *frameList) ackFrom(id int, psn uint32, syn uint8, msn uint32) editcap.Frame {
	f := l.frame(id)
	editFrame(l.t, &f, setAck(l.t, psn, syn, msn))
	return f
}

// clearAckReq clears the AckReq bit of a request.
func clearAckReq(p *decode.Packet, b []byte) { b[p.Offset(p.BTH.Contents)+8] &^= 0x80 }

// replayFrames replays the frames into a model of the capture's MPT file.
func replayFrames(t *testing.T, l *frameList, f *mpt.File, opt hca.Options) *replay.Report {
	t.Helper()
	m, err := hca.NewModel(&f.Config, opt)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := replay.New(m, replay.Options{Responder: f.Responder, QPs: f.QPs})
	if err != nil {
		t.Fatal(err)
	}
	var p decode.Packet
	for i, fr := range l.frames {
		p.Frame = decode.Frame{Number: i + 1, Time: fr.Info.Timestamp, Len: fr.Info.Length}
		decode.Decode(&p, fr.Data, fr.Info.LinkType)
		rp.Feed(&p)
	}
	return rp.Finish()
}

// wantNote is the part of a note a test pins.
type wantNote struct {
	kind      replay.NoteKind
	reqFrame  int
	respFrame int
}

func (w wantNote) String() string { return fmt.Sprintf("%s %d→%d", w.kind, w.reqFrame, w.respFrame) }

// Frames of pt_send (perftest ib_send_bw): 1-10 SEND Only with AckReq on
// QP 0x18 (PSN 6521799 + i) and their ACKs (MSN 1-5); 11-30 QP 0x19:
// four 3000-byte SENDs (First, Middle, Last with AckReq) from PSN 618937,
// each followed by its ACK (frames 14, 18, 22, 26; MSN 1-4), and the
// fifth at 27-30. pt_read: frames 11-30, five READs of the same 3000
// bytes on QP 0x16 (requests 11, 15, 19, 23, 27; READ RESPONSE First 12,
// 16, 20, 24, 28). read_atomic: READs of 8, 1024 and 3000 bytes at
// 0x55555557b000 (frames 3, 5, 7), FETCH_ADD (11 → 12) and CMP_SWAPs
// (13 → 14, 15 → 16) at 0x55555557c000.
const sendFirst = 618937

// TestReplayTolerance: legal responder choices are notes, not
// divergences; the illegal ones still diverge.
func TestReplayTolerance(t *testing.T) {
	type want struct {
		divs  []wantDiv
		notes []wantNote
	}
	cases := []struct {
		name    string
		capture string
		profile hca.Profile
		edit    func(l *frameList) want
	}{
		// Legal.
		{
			// A real NIC acknowledges the FIRST and MIDDLE packets of a
			// SEND without AckReq, its credit count going down as the
			// receive queue is used; ibta: the model does not know the
			// credits.
			name: "unsolicited ACKs of SEND First and Middle with changing credits", capture: "pt_send", profile: hca.ProfileIBTA,
			edit: func(l *frameList) want {
				a := l.insertAfter(11, l.ackFrom(14, sendFirst, 0x0a, 0))
				b := l.insertAfter(12, l.ackFrom(14, sendFirst+1, 0x09, 0))
				l.edit(14, setAck(l.t, sendFirst+2, 0x08, 1))
				return want{notes: []wantNote{{replay.NoteUnsolicitedACK, l.num(11), l.num(a)}, {replay.NoteUnsolicitedACK, l.num(12), l.num(b)}}}
			},
		},
		{
			name: "AckReq cleared on a SEND Only: its ACK is unsolicited", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(3, clearAckReq)
				return want{notes: []wantNote{{replay.NoteUnsolicitedACK, 3, 4}}}
			},
		},
		{
			name: "two ACKs coalesced into one", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.drop(4)
				return want{notes: []wantNote{{replay.NoteCoalescedACK, 3, l.num(6)}}}
			},
		},
		{
			name: "the ACK of the next SEND's First covers the last SEND's", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.drop(14)
				a := l.insertAfter(15, l.ackFrom(18, sendFirst+3, 0x1f, 1))
				return want{notes: []wantNote{{replay.NoteCoalescedACK, 13, l.num(a)}, {replay.NoteUnsolicitedACK, l.num(15), l.num(a)}}}
			},
		},
		{
			name: "an ACK inside a message not yet complete with another MSN", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				a := l.insertAfter(11, l.ackFrom(14, sendFirst, 0x1f, 1))
				return want{notes: []wantNote{{replay.NoteUnsolicitedACK, 11, l.num(a)}, {replay.NoteMSNInMessage, 11, l.num(a)}}}
			},
		},
		{
			// perftest READs the same buffer five times: one byte of the
			// second READ's data changed (the responder's CPU wrote its
			// buffer), then back in the third.
			name: "memory changed between two READs", capture: "pt_read", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(16, func(p *decode.Packet, b []byte) { b[p.Offset(p.Payload)+100] ^= 0x5a })
				return want{notes: []wantNote{{replay.NoteMemoryChanged, 15, 16}, {replay.NoteMemoryChanged, 19, 20}}}
			},
		},
		{
			// The FETCH_ADD moved onto the 8 bytes the READs showed
			// (0x3c each): its ACK says they held 0 by then.
			name: "an ATOMIC on memory only a READ showed", capture: "read_atomic", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(11, func(p *decode.Packet, b []byte) { b[p.Offset(p.AtomicETH.Contents)+6] = 0xb0 })
				return want{notes: []wantNote{{replay.NoteMemoryChanged, 11, 12}}}
			},
		},

		// Illegal.
		{
			name: "an ACK of a PSN not received yet", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				a := l.insertAfter(11, l.ackFrom(14, sendFirst+2, 0x1f, 1))
				return want{divs: []wantDiv{{kind: replay.KindExtraResponse, respFrame: l.num(a)}}}
			},
		},
		{
			name: "an ACK of a PSN not received yet while an ACK is due", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(4, setAck(l.t, 6521801, 0x1f, 2))
				return want{divs: []wantDiv{{kind: replay.KindPSN, reqFrame: 3, respFrame: 4}}}
			},
		},
		{
			name: "a wrong MSN on the ACK ending a message", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(14, setAck(l.t, sendFirst+2, 0x1f, 2))
				return want{divs: []wantDiv{{kind: replay.KindMSN, reqFrame: 13, respFrame: 14}}}
			},
		},
		{
			name: "a wrong MSN on an unsolicited ACK ending a message", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(3, clearAckReq)
				l.edit(4, setAck(l.t, 6521800, 0x1f, 7))
				return want{divs: []wantDiv{{kind: replay.KindMSN, reqFrame: 3, respFrame: 4}},
					notes: []wantNote{{replay.NoteUnsolicitedACK, 3, 4}}}
			},
		},
		{
			name: "a NAK where an ACK is due", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(4, setAck(l.t, 6521800, 0x62, 1))
				return want{divs: []wantDiv{{kind: replay.KindSyndrome, reqFrame: 3, respFrame: 4}}}
			},
		},
		{
			name: "a NAK of a packet that did not ask for an ACK", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				a := l.insertAfter(11, l.ackFrom(14, sendFirst, 0x61, 0))
				return want{divs: []wantDiv{{kind: replay.KindSyndrome, reqFrame: 11, respFrame: l.num(a)}}}
			},
		},
		{
			name: "no ACK where AckReq demanded one by the end of the capture", capture: "pt_send", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.drop(30)
				return want{divs: []wantDiv{{kind: replay.KindMissingResponse, reqFrame: 29}}}
			},
		},
		{
			// Bytes the capture's ATOMICs wrote stay a hard check.
			name: "another original value where the capture's ATOMIC wrote", capture: "read_atomic", profile: hca.ProfileRXE,
			edit: func(l *frameList) want {
				l.edit(14, func(p *decode.Packet, b []byte) { b[p.Offset(p.AtomicAckETH.Contents)+7] ^= 1 })
				return want{divs: []wantDiv{{kind: replay.KindAtomicOrig, reqFrame: 13, respFrame: 14}}}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := mpt.Load(filepath.Join("..", "testdata", "rxe", c.capture+".mpt.json"))
			if err != nil {
				t.Fatal(err)
			}
			l := readFrames(t, c.capture)
			w := c.edit(l)
			for _, seriesAt := range []int{0, 1} {
				rep := replayFrames(t, l, f, hca.Options{Profile: c.profile, ReadSeriesAt: seriesAt})
				var divs []wantDiv
				for _, d := range rep.Divergences {
					divs = append(divs, wantDiv{kind: d.Kind, reqFrame: d.RequestFrame, respFrame: d.ResponseFrame})
					t.Logf("divergence: %s", d.Message)
				}
				var notes []wantNote
				for _, n := range rep.NoteList {
					notes = append(notes, wantNote{n.Kind, n.RequestFrame, n.ResponseFrame})
					t.Logf("note: %s", n.Message)
				}
				if !slices.Equal(divs, w.divs) || !slices.Equal(notes, w.notes) {
					t.Errorf("ReadSeriesAt %d:\ndivergences %v\nwant        %v\nnotes %v\nwant  %v", seriesAt, divs, w.divs, notes, w.notes)
				}
				if rep.Pass() != (len(w.divs) == 0) || rep.NoteCount != len(w.notes) {
					t.Errorf("pass %v with %d notes", rep.Pass(), rep.NoteCount)
				}
			}
		})
	}
}

// TestReplayUC: a UC session gives the replay nothing to compare, and the
// report says so, lists what the model dropped with the reason (the rkey,
// PD, bounds or access check that failed), and points to `rocetap expert
// --mpt`, which checks UC accesses. Each case changes one registration of
// uc.pcap's MPT file so that the capture's UC WRITEs break it.
func TestReplayUC(t *testing.T) {
	// uc.pcap: SENDs (frames 1-7), WRITE Only of 512 bytes at the MR's
	// start (8), a 3000-byte WRITE First/Middle/Last at the start (9-11),
	// a 64-byte WRITE Only with immediate 4096 bytes in (12).
	cases := []struct {
		name string
		mpt  func(t *testing.T, f *mpt.File)
		want []string // the drop list, frame by frame
	}{
		{"MR too short for the 3000-byte WRITE", func(t *testing.T, f *mpt.File) { mrByKey(t, f, 0x133f).Length = 2999 }, []string{
			"frame 9 PSN 1544: the rkey, PD, access or bounds check failed: rkey 0x0000133f: out of bounds by 1 bytes",
			"frame 10 PSN 1545: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Middle without a FIRST",
			"frame 11 PSN 1546: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Last without a FIRST",
			"frame 12 PSN 1547: the rkey, PD, access or bounds check failed: rkey 0x0000133f: out of bounds by 1161 bytes"}},
		{"MR without REMOTE_WRITE", func(t *testing.T, f *mpt.File) { mrByKey(t, f, 0x133f).Access &^= hca.RemoteWrite }, []string{
			"frame 8 PSN 1543: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR lacks REMOTE_WRITE",
			"frame 9 PSN 1544: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR lacks REMOTE_WRITE",
			"frame 10 PSN 1545: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Middle without a FIRST",
			"frame 11 PSN 1546: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Last without a FIRST",
			"frame 12 PSN 1547: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR lacks REMOTE_WRITE"}},
		{"MR in another PD", func(t *testing.T, f *mpt.File) {
			f.PDs = append(f.PDs, hca.PDConfig{ID: 7})
			mrByKey(t, f, 0x133f).PD = 7
		}, []string{
			"frame 8 PSN 1543: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR in another protection domain",
			"frame 9 PSN 1544: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR in another protection domain",
			"frame 10 PSN 1545: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Middle without a FIRST",
			"frame 11 PSN 1546: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Last without a FIRST",
			"frame 12 PSN 1547: the rkey, PD, access or bounds check failed: rkey 0x0000133f: MR in another protection domain"}},
		{"QP without REMOTE_WRITE", func(t *testing.T, f *mpt.File) { f.QPs[0].Access &^= hca.RemoteWrite }, []string{
			"frame 8 PSN 1543: QP lacks the remote access flag: QP 0x000021 lacks REMOTE_WRITE",
			"frame 9 PSN 1544: QP lacks the remote access flag: QP 0x000021 lacks REMOTE_WRITE",
			"frame 10 PSN 1545: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Middle without a FIRST",
			"frame 11 PSN 1546: UC: no message in progress (its FIRST was lost or dropped): UC RDMA Write Last without a FIRST",
			"frame 12 PSN 1547: QP lacks the remote access flag: QP 0x000021 lacks REMOTE_WRITE"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join("..", "testdata", "rxe", "uc")
			f, err := mpt.Load(base + ".mpt.json")
			if err != nil {
				t.Fatal(err)
			}
			c.mpt(t, f)
			rep := replayEdited(t, base+".pcap", f, hca.Options{Profile: hca.ProfileRXE}, nil)
			rep.Capture, rep.MPT = "uc.pcap", "uc.mpt.json"
			if !rep.Pass() || rep.Compared != 0 || len(rep.Sessions) != 1 {
				t.Fatalf("pass %v, %d compared, %d sessions", rep.Pass(), rep.Compared, len(rep.Sessions))
			}
			s := rep.Sessions[0]
			if !s.NothingToCompare() {
				t.Error("the UC session is not marked as having nothing to compare")
			}
			var got []string
			for i := range s.DropList {
				got = append(got, s.DropList[i].String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("drop list:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			txt := string(rep.AppendText(nil))
			for _, w := range append([]string{"UC sessions: nothing to compare (UC sends no responses)",
				"rocetap expert -r uc.pcap --mpt uc.mpt.json checks their remote accesses against the MPT",
				"1 UC session (QP 0x000021) gave the replay nothing to compare"}, c.want...) {
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q:\n%s", w, txt)
				}
			}
			var js struct {
				Notes    []string `json:"notes"`
				Sessions []struct {
					NothingToCompare bool `json:"nothing_to_compare"`
					DropList         []struct {
						Frame  int    `json:"frame"`
						Reason string `json:"reason"`
						Why    string `json:"why"`
					} `json:"drop_list"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(rep.AppendJSON(nil), &js); err != nil {
				t.Fatal(err)
			}
			if len(js.Sessions) != 1 || !js.Sessions[0].NothingToCompare || len(js.Sessions[0].DropList) != len(c.want) ||
				!strings.Contains(strings.Join(js.Notes, "\n"), "rocetap expert -r uc.pcap --mpt uc.mpt.json checks UC accesses") {
				t.Errorf("JSON: %+v", js)
			}
		})
	}
}
