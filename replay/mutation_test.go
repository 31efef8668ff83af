package replay_test

// Mutation tests: a wrong registration, or a responder that sends one
// wrong byte, must show up as exactly the divergence it causes, on the
// frames where it happens. Each case starts from a real Soft-RoCE capture
// that replays without a divergence (TestReplayRXE), changes one thing,
// and lists every divergence expected, in order: the first is the change
// itself; any after it are what follows from it (an error NAK moves the
// modeled QP to the error state, so it answers nothing after it).

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/replay"
)

// wantDiv is the part of a divergence a mutation test pins.
type wantDiv struct {
	kind          replay.Kind
	reqFrame      int
	respFrame     int
	expected      string // "" to skip
	actual        string // "" to skip
	offset, count int    // read_data
}

func (w wantDiv) String() string {
	return fmt.Sprintf("%s %d→%d exp=%q act=%q off=%d n=%d", w.kind, w.reqFrame, w.respFrame, w.expected, w.actual, w.offset, w.count)
}

func mrByKey(t *testing.T, f *mpt.File, rkey uint32) *hca.MRConfig {
	t.Helper()
	for i := range f.MRs {
		if f.MRs[i].RKey == rkey {
			return &f.MRs[i]
		}
	}
	t.Fatalf("no MR with rkey %#x in the MPT file", rkey)
	return nil
}

// payloadByte returns an edit that flips byte off of frame n's RoCE
// payload and recomputes its ICRC, as a responder that sends a wrong byte
// would.
func payloadByte(t *testing.T, frame, off int) func(int, []byte, decode.LinkType) {
	return func(n int, data []byte, lt decode.LinkType) {
		if n != frame {
			return
		}
		var p decode.Packet
		decode.Decode(&p, data, lt)
		if p.Has&decode.HdrBTH == 0 || off >= len(p.Payload) {
			t.Fatalf("frame %d has no payload byte %d", n, off)
		}
		data[p.Offset(p.Payload)+off] ^= 0x5a
		if err := decode.FixCRCs(data, lt); err != nil {
			t.Fatal(err)
		}
	}
}

// notRoCE returns an edit that makes frame frame's UDP destination port
// 4792, so it is no longer RoCE: the packet is lost to the replay.
func notRoCE(t *testing.T, frame int) func(int, []byte, decode.LinkType) {
	return func(n int, data []byte, lt decode.LinkType) {
		if n != frame {
			return
		}
		var p decode.Packet
		decode.Decode(&p, data, lt)
		if p.Has&decode.HdrUDP == 0 {
			t.Fatalf("frame %d has no UDP header", n)
		}
		data[p.L4Off+3]++ // destination port 4791 → 4792
	}
}

func TestReplayMutations(t *testing.T) {
	cases := []struct {
		name    string
		capture string
		mpt     func(t *testing.T, f *mpt.File)
		frame   func(t *testing.T) func(int, []byte, decode.LinkType)
		want    []wantDiv
	}{
		// Frame 1 writes the MR's last 256 bytes: one byte less and it
		// is out of bounds by 1, which rdma_rxe ACKed; the model's NAK
		// moves the QP to the error state, so the NAK of frame 4 is
		// extra.
		{
			name:    "MR one byte shorter",
			capture: "err_write_oob",
			mpt:     func(t *testing.T, f *mpt.File) { mrByKey(t, f, 0x22e2).Length-- },
			want: []wantDiv{
				{replay.KindSyndrome, 1, 2, "NAK Remote Access Error (0x62: rkey 0x000022e2: out of bounds by 1 bytes)", "ACK (0x1f)", 0, 0},
				{replay.KindExtraResponse, 3, 4, "", "RC Acknowledge PSN 4353 NAK Remote Access Error (0x62) MSN 1", 0, 0},
			},
		},
		// Frame 1 WRITEs into the MR.
		{
			name:    "MR without REMOTE_WRITE",
			capture: "err_bad_rkey",
			mpt:     func(t *testing.T, f *mpt.File) { mrByKey(t, f, 0x21b1).Access &^= hca.RemoteWrite },
			want: []wantDiv{
				{replay.KindSyndrome, 1, 2, "NAK Remote Access Error (0x62: rkey 0x000021b1: MR lacks REMOTE_WRITE)", "ACK (0x1f)", 0, 0},
				{replay.KindExtraResponse, 3, 4, "", "RC Acknowledge PSN 4097 NAK Remote Access Error (0x62) MSN 1", 0, 0},
			},
		},
		// Frame 1 READs the MR: in PD 7 it is not the QP's (PD 0); the
		// model NAKs where rdma_rxe sent the READ response.
		{
			name:    "MR in another PD",
			capture: "err_read_noperm",
			mpt: func(t *testing.T, f *mpt.File) {
				f.PDs = append(f.PDs, hca.PDConfig{ID: 7})
				mrByKey(t, f, 0x244e).PD = 7
			},
			want: []wantDiv{
				{replay.KindSyndrome, 1, 2, "RC Acknowledge NAK Remote Access Error (0x62: rkey 0x0000244e: MR in another protection domain)", "RC RDMA Read Response Only ACK (0x1f)", 0, 0},
				{replay.KindExtraResponse, 3, 4, "", "RC Acknowledge PSN 4609 NAK Remote Access Error (0x62) MSN 1", 0, 0},
			},
		},
		// Frame 13 READs 2000 bytes that frame 3 WRITE wrote; byte 100
		// of the first response (frame 14) is changed and its ICRC made
		// good again: one byte differs, at offset 100.
		{
			name:    "one wrong byte in a READ response",
			capture: "ipv6_mix",
			frame:   func(t *testing.T) func(int, []byte, decode.LinkType) { return payloadByte(t, 14, 100) },
			want: []wantDiv{
				{replay.KindReadData, 13, 14, "61 61 61 61 61 61 61 61", "3b 61 61 61 61 61 61 61", 100, 1},
			},
		},
		// Frame 14, the first of the two responses to the READ of frame
		// 13, is lost (its UDP port changed: not RoCE any more): the
		// model's first response is missing, the second still matches.
		{
			name:    "a READ response lost",
			capture: "ipv6_mix",
			frame:   func(t *testing.T) func(int, []byte, decode.LinkType) { return notRoCE(t, 14) },
			want: []wantDiv{
				{replay.KindMissingResponse, 13, 0, "RC RDMA Read Response First PSN 1800 ACK (0x1f) MSN 5", "", 0, 0},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join("..", "testdata", "rxe", c.capture)
			f, err := mpt.Load(base + ".mpt.json")
			if err != nil {
				t.Fatal(err)
			}
			if c.mpt != nil {
				c.mpt(t, f)
			}
			var edit func(int, []byte, decode.LinkType)
			if c.frame != nil {
				edit = c.frame(t)
			}
			// Listed READ responses, and every multi-packet READ as a
			// series: the same divergences.
			for _, seriesAt := range []int{0, 1} {
				rep := replayEdited(t, base+".pcap", f, hca.Options{Profile: hca.ProfileRXE, ReadSeriesAt: seriesAt}, edit)
				var got []wantDiv
				for _, d := range rep.Divergences {
					got = append(got, wantDiv{d.Kind, d.RequestFrame, d.ResponseFrame, d.Expected, d.Actual, d.Offset, d.Count})
					t.Logf("%s", d.Message)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("ReadSeriesAt %d: divergences:\n%v\nwant\n%v", seriesAt, got, c.want)
				}
			}
		})
	}
}
