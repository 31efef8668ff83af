package flow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// TestMPTWindowTexts: send_inv.pcap is real rdma_rxe traffic through a
// type 2 memory window (rkey 0x0800019c over MR 0x00001563): a WRITE of
// 256 bytes at the window's start (frame 1, ACKed), a SEND with
// Invalidate of the window (3, ACKed), a WRITE through the invalidated
// window (5, NAKed). Variants of its MPT file make the window forbid what
// the responder did; every finding must name the window, not an MR, and
// agree with hca's responder.
func TestMPTWindowTexts(t *testing.T) {
	const mw = "MW 0x0800019c (type 2, bound to MR 0x00001563)"
	window := func(edit func(w *hca.MWConfig)) func(*mpt.File) {
		return func(f *mpt.File) { edit(&f.MWs[0]) }
	}
	tests := []struct {
		name     string
		edit     func(*mpt.File)
		verdicts []string
		whys     map[int]string // frame → rocetap.mpt's Why
		events   []string       // texts of the mpt_* events, in order
	}{
		{"as registered", nil, []string{"1:ok", "3:ok", "5:invalid_rkey"},
			map[int]string{5: mw + " is no longer valid"},
			[]string{"MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: " + mw + " is no longer valid (invalid_rkey)"}},
		{"window without REMOTE_WRITE", window(func(w *hca.MWConfig) { w.Access = hca.RemoteRead }),
			[]string{"1:access_denied", "3:ok", "5:invalid_rkey"},
			map[int]string{1: mw + " lacks REMOTE_WRITE", 5: mw + " is no longer valid"},
			[]string{
				"MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: " + mw + " lacks REMOTE_WRITE (access_denied)",
				"responder accepted an access the MPT forbids: the write in frame 1 (rkey 0x0800019c: " + mw + " lacks REMOTE_WRITE)",
				"MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: " + mw + " is no longer valid (invalid_rkey)",
			}},
		{"window of 128 bytes", window(func(w *hca.MWConfig) { w.Length = 128 }),
			[]string{"1:out_of_bounds+128", "3:ok", "5:invalid_rkey"},
			map[int]string{1: "outside the range of " + mw + " by 128 bytes"},
			[]string{
				"MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: outside the range of " + mw + " by 128 bytes (out_of_bounds)",
				"responder accepted an access outside MW 0x0800019c: the write in frame 1 (rkey 0x0800019c: outside the range of " + mw + " by 128 bytes)",
				"MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: " + mw + " is no longer valid (invalid_rkey)",
			}},
		{"window in another PD", func(f *mpt.File) {
			f.PDs = append(f.PDs, hca.PDConfig{ID: 7})
			f.MWs[0].PD = 7
		}, []string{"1:pd_mismatch", "3:pd_mismatch", "5:pd_mismatch"},
			map[int]string{1: mw + " in another protection domain", 3: mw + " in another protection domain"},
			nil},
		{"window bound to another QP", window(func(w *hca.MWConfig) { w.QPN = 0x23 }),
			[]string{"1:mw_qp_mismatch", "3:ok", "5:invalid_rkey"},
			map[int]string{1: mw + " is bound to QP 0x000023, not this one"},
			nil},
		{"type 1 window", window(func(w *hca.MWConfig) { w.Type, w.HasQPN = 1, false }),
			[]string{"1:ok", "3:access_denied", "5:ok"},
			map[int]string{3: "MW 0x0800019c (type 1, bound to MR 0x00001563) cannot be invalidated remotely: only a type 2 window can"},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runMPT(t, "send_inv", tt.edit, true)
			if got := run.verdicts(); !slices.Equal(got, tt.verdicts) {
				t.Errorf("verdicts %v, want %v", got, tt.verdicts)
			}
			for _, g := range run.pkts {
				m := &g.an.MPT
				if !m.Checked {
					continue
				}
				if want, ok := tt.whys[g.frame]; ok && m.Why != want {
					t.Errorf("frame %d: why %q, want %q", g.frame, m.Why, want)
				}
				if !m.Allowed && (!m.Window || strings.Contains(m.Why, "MR lacks") || strings.Contains(m.Why, "any MR") || !strings.Contains(m.Why, "MW 0x0800019c (type ")) {
					t.Errorf("frame %d: %s: why %q does not name the window", g.frame, m.VerdictName, m.Why)
				}
				if v, seen := run.verdOf[g.frame]; seen && uint8(v) != m.Verdict {
					t.Errorf("frame %d: verdict %s, hca's responder %s", g.frame, m.VerdictName, v)
				}
			}
			if tt.events != nil {
				var texts []string
				for _, e := range run.evs {
					if strings.HasPrefix(kindName(e.Kind), "mpt_") {
						texts = append(texts, e.Text)
					}
				}
				if !slices.Equal(texts, tt.events) {
					t.Errorf("MPT events:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(tt.events, "\n"))
				}
			}
		})
	}
}
