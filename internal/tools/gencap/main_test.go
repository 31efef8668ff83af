package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/mpt"
)

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// The benchmark captures, and captures made before -pairs existed, must
// stay the same bytes: bench results and files cached by bench/run.sh
// compare across commits.
func TestDefaultOutputUnchanged(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		n     int
		pairs int
		seed  uint64
		mpt   bool
		want  string
	}{
		{"default", 20000, 8, 1, false, "b539f039fa97f4e6073ce8dfdc8133890074cfe006ac08d7a7dcf37eb9be42d4"},
		{"mpt", 20000, 8, 1, true, "1f1aeaabe8f86658a89822af91ad868bd301815731d046b4bab859522953584c"},
		{"qps3-seed7", 5000, 3, 7, false, "9d4521c3604b8c56a76f832bb9e5051282121b2dffea956e4ad8c2edec3e4440"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".pcap")
			mptPath := ""
			if tc.mpt {
				mptPath = filepath.Join(dir, tc.name+".mpt.json")
			}
			if err := run(out, tc.n, tc.pairs, tc.seed, mptPath); err != nil {
				t.Fatal(err)
			}
			if got := fileHash(t, out); got != tc.want {
				t.Errorf("sha256 %s, want %s", got, tc.want)
			}
		})
	}
}

// packets decodes every packet of path (ICRC checked) and runs it through
// a flow tracker, calling fn with each.
func packets(t *testing.T, path string, tr *flow.Tracker, fn func(*decode.Packet)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p decode.Packet
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Frame.Number, p.Frame.Time, p.Frame.Len = n, info.Timestamp, info.Length
		decode.Decode(&p, data, info.LinkType)
		tr.Track(&p)
		fn(&p)
	}
}

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pairs, n     int
		wantSessions int
	}{
		{"one exchange each", 1000, 4000, 1000},
		{"rounds", 8, 4000, 8},
		{"cut short", 100, 401, 100},
		{"more pairs than host pairs, few packets", 200, 10, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.pcap")
			if err := runPairs(path, tc.n, tc.pairs, 1); err != nil {
				t.Fatal(err)
			}
			events := 0
			tr := flow.New(flow.Options{OnEvent: func(*flow.Event) { events++ }})
			reqQPs := map[uint32]bool{}  // requesters' destination: the responder QPs
			respQPs := map[uint32]bool{} // responders' destination: the requester QPs
			lastPSN := map[uint32]decode.PSN{}
			var prev decode.Packet
			n := 0
			packets(t, path, tr, func(p *decode.Packet) {
				n++
				if p.ICRCStatus != decode.CRCGood {
					t.Fatalf("packet %d: ICRC %v", n, p.ICRCStatus)
				}
				op := p.BTH.Opcode
				qp, psn := p.BTH.DestQP, p.BTH.PSN
				switch op {
				case decode.OpWriteOnly, decode.OpReadRequest:
					reqQPs[qp] = true
					if last, ok := lastPSN[qp]; ok && psn != last.Add(1) {
						t.Fatalf("packet %d: QP %#x PSN %d after %d", n, qp, psn, last)
					}
					lastPSN[qp] = psn
				case decode.OpAcknowledge, decode.OpReadResponseOnly:
					respQPs[qp] = true
					// A response follows its request, same pair, same PSN.
					if prev.BTH.DestQP != qp+1 || prev.BTH.PSN != psn {
						t.Fatalf("packet %d: response to QP %#x PSN %d after a request to QP %#x PSN %d", n, qp, psn, prev.BTH.DestQP, prev.BTH.PSN)
					}
				default:
					t.Fatalf("packet %d: opcode %v", n, op)
				}
				prev = *p
			})
			if n != tc.n {
				t.Errorf("%d packets, want %d", n, tc.n)
			}
			if len(reqQPs) != min(tc.pairs, (tc.n+2)/4) || len(respQPs) != min(tc.pairs, (tc.n+3)/4) {
				t.Errorf("%d responder QPs and %d requester QPs, want %d pairs", len(reqQPs), len(respQPs), tc.pairs)
			}
			for qp := range reqQPs {
				if respQPs[qp] {
					t.Errorf("QP %#x is both a requester and a responder", qp)
				}
			}
			if got := len(tr.Sessions()); got != tc.wantSessions {
				t.Errorf("%d sessions, want %d", got, tc.wantSessions)
			}
			if events != 0 {
				t.Errorf("%d expert events, want 0 (a clean stream)", events)
			}
		})
	}
}

// TestWriteMRs: -mrs writes an MPT file that rocetap loads (mpt.Load and
// the model --mpt builds), with every MR.
func TestWriteMRs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mrs.mpt.json")
	if err := writeMRs(path, 1000); err != nil {
		t.Fatal(err)
	}
	f, err := mpt.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hca.NewModel(&f.Config, hca.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.MRs) != 1000 || m.MRByKey(0x10000000+999) == nil {
		t.Errorf("%d MRs loaded; the last one's rkey found: %v", len(f.MRs), m.MRByKey(0x10000000+999) != nil)
	}
}

// TestKeepsExistingFiles: an existing -o, -mpt or -mrs file is left as
// it is, with an error that names it and -force, and replaced with
// -force.
func TestKeepsExistingFiles(t *testing.T) {
	dir := t.TempDir()
	pcapPath, mptPath := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "a.mpt.json")
	mine := []byte("a user's file\n")
	for _, tc := range []struct {
		name, path, opt string
		gen             func() error
	}{
		{"o", pcapPath, "-o", func() error { return run(pcapPath, 100, 2, 1, "") }},
		{"o with mpt", pcapPath, "-o", func() error { return run(pcapPath, 100, 2, 1, mptPath) }},
		{"mpt", mptPath, "-mpt", func() error { return run(pcapPath+".2", 100, 2, 1, mptPath) }},
		{"pairs", pcapPath, "-o", func() error { return runPairs(pcapPath, 40, 10, 1) }},
		{"nvme", pcapPath, "-o", func() error { return runNVMe(pcapPath, 40, 2, 1) }},
		{"mrs", mptPath, "-o", func() error { return writeMRs(mptPath, 5) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{pcapPath, pcapPath + ".2", mptPath} {
				os.Remove(p)
			}
			if err := os.WriteFile(tc.path, mine, 0o644); err != nil {
				t.Fatal(err)
			}
			replace = false
			err := tc.gen()
			if !errors.Is(err, outfile.ErrExists) || !strings.Contains(err.Error(), tc.opt+" "+tc.path+": ") || !strings.Contains(err.Error(), "gencap does not replace") || !strings.Contains(err.Error(), " -force") || strings.Contains(err.Error(), "--force") {
				t.Errorf("error %v, want one naming %s %s, gencap and its -force", err, tc.opt, tc.path)
			}
			if b, _ := os.ReadFile(tc.path); string(b) != string(mine) {
				t.Errorf("the existing file was changed: %q", b)
			}
			// nothing is left of a run refused one of its files
			if _, err := os.Stat(pcapPath + ".2"); tc.name == "mpt" && err == nil {
				t.Errorf("the capture was left behind though its -mpt file was refused")
			}
			if _, err := os.Stat(mptPath); tc.name == "o with mpt" && err == nil {
				t.Errorf("the -mpt file was left behind though the capture was refused")
			}
			replace = true
			defer func() { replace = false }()
			if err := tc.gen(); err != nil {
				t.Fatalf("with -force: %v", err)
			}
			if b, _ := os.ReadFile(tc.path); string(b) == string(mine) || len(b) == 0 {
				t.Errorf("with -force the file was not replaced: %q", b)
			}
		})
	}
	t.Run("failed run with -force", func(t *testing.T) {
		// -force replaces a file with a complete one, never with
		// nothing: an MPT file that cannot be written (a directory of
		// that name) stops the run, and the capture is as it was.
		replace = true
		defer func() { replace = false }()
		if err := os.WriteFile(pcapPath, mine, 0o644); err != nil {
			t.Fatal(err)
		}
		dirPath := filepath.Join(dir, "a directory")
		if err := os.Mkdir(dirPath, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := run(pcapPath, 100, 2, 1, dirPath); err == nil {
			t.Fatal("no error for an MPT file that is a directory")
		}
		if b, _ := os.ReadFile(pcapPath); string(b) != string(mine) {
			t.Errorf("the capture -force would have replaced was changed by a run that failed: %q", b)
		}
		if err := run(pcapPath, 100, 2, 1, pcapPath); err == nil || !strings.Contains(err.Error(), "-o names too") {
			t.Errorf("-mpt naming the -o file: %v, want an error", err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("%s left behind", e.Name())
			}
		}
	})
}
