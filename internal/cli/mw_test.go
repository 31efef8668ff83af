package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// mptVariant writes testdata/rxe/NAME.mpt.json changed by edit to a
// temporary file.
func mptVariant(t *testing.T, name string, edit func(*mpt.File)) string {
	t.Helper()
	f, err := mpt.Load(td + "rxe/" + name + ".mpt.json")
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	b, err := mpt.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".variant.mpt.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMPTWindowFindings: send_inv.pcap's responder (rdma_rxe) executed a
// WRITE through its type 2 memory window 0x0800019c (frame 1). MPT files
// in which the window lacks REMOTE_WRITE or is 128 bytes long make that
// WRITE forbidden; decode's summary, expert and replay must say what about
// the window forbids it, naming the window, not an MR.
func TestMPTWindowFindings(t *testing.T) {
	const mw = "MW 0x0800019c (type 2, bound to MR 0x00001563)"
	pcap := td + "rxe/send_inv.pcap"
	tests := []struct {
		name    string
		edit    func(w *hca.MWConfig)
		summary string // frame 1's finding in decode's summary
		expert  []string
		replay  string
	}{
		{"no REMOTE_WRITE", func(w *hca.MWConfig) { w.Access = hca.RemoteRead },
			"[MPT: " + mw + " lacks REMOTE_WRITE]",
			[]string{
				"frame 1  0.000000  #1  MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: " + mw + " lacks REMOTE_WRITE (access_denied)",
				"frame 2  0.000405  #1  responder accepted an access the MPT forbids: the write in frame 1 (rkey 0x0800019c: " + mw + " lacks REMOTE_WRITE)",
			},
			"frame 1 → 2: syndrome: model NAK Remote Access Error (0x62: " + mw + " lacks REMOTE_WRITE), captured ACK (0x1f) — the responder allowed an access the registration does not permit"},
		{"128-byte window", func(w *hca.MWConfig) { w.Length = 128 },
			"[MPT: outside the range of " + mw + " by 128 bytes]",
			[]string{
				"frame 1  0.000000  #1  MPT forbids the WRITE of 256 bytes at VA 0x0000555555578000 with rkey 0x0800019c: outside the range of " + mw + " by 128 bytes (out_of_bounds)",
				"frame 2  0.000405  #1  responder accepted an access outside MW 0x0800019c: the write in frame 1 (rkey 0x0800019c: outside the range of " + mw + " by 128 bytes)",
			},
			"frame 1 → 2: syndrome: model NAK Remote Access Error (0x62: outside the range of " + mw + " by 128 bytes), captured ACK (0x1f) — the responder accepted an access outside the memory region or window its rkey names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := mptVariant(t, "send_inv", func(f *mpt.File) { tt.edit(&f.MWs[0]) })
			out, errOut, code := run(t, nil, "decode", "-r", pcap, "--mpt", file, "-c", "1")
			if code != 0 || !strings.HasSuffix(out, tt.summary+"\n") {
				t.Errorf("decode: exit %d\n%s%s\nwant it to end with %s", code, out, errOut, tt.summary)
			}
			out, errOut, code = run(t, nil, "expert", "-r", pcap, "--mpt", file)
			for _, want := range tt.expert {
				if code != 0 || !strings.Contains(out, want+"\n") {
					t.Errorf("expert: exit %d, want %q in\n%s%s", code, want, out, errOut)
				}
			}
			if strings.Contains(out, "MR lacks") || strings.Contains(out, "any MR") {
				t.Errorf("expert blames an MR:\n%s", out)
			}
			out, errOut, code = run(t, nil, "replay", "-r", pcap, "--mpt", file)
			if code != ExitDivergence || !strings.Contains(out, "    "+tt.replay+"\n") {
				t.Errorf("replay: exit %d, want %q in\n%s%s", code, tt.replay, out, errOut)
			}
		})
	}
}
