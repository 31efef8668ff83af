package replay_test

// The model against the kernel, response by response: every Soft-RoCE
// capture in testdata/rxe that has an .mpt.json is replayed into the
// model with the rxe profile, and every response rdma_rxe sent must be the
// one the model sends. This is the acceptance test of hca's responder
// rules (hca.Model.Receive): a divergence here is either a responder rule
// the model gets wrong or an alignment bug in this package, and the
// message says which frame to look at.

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/replay"
)

// replayFile replays a capture into a model of its MPT file.
func replayFile(t testing.TB, pcap, mptPath string, opt hca.Options) *replay.Report {
	t.Helper()
	f, err := mpt.Load(mptPath)
	if err != nil {
		t.Fatal(err)
	}
	return replayEdited(t, pcap, f, opt, nil)
}

// replayEdited replays a capture into a model of f; editFrame, when not
// nil, may change each frame (numbered from 1) before it is decoded.
func replayEdited(t testing.TB, pcap string, f *mpt.File, opt hca.Options, editFrame func(n int, data []byte, linkType decode.LinkType)) *replay.Report {
	t.Helper()
	m, err := hca.NewModel(&f.Config, opt)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := replay.New(m, replay.Options{Responder: f.Responder, QPs: f.QPs})
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p decode.Packet
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if editFrame != nil {
			data = append([]byte(nil), data...)
			editFrame(n, data, info.LinkType)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		decode.Decode(&p, data, info.LinkType)
		rp.Feed(&p)
	}
	return rp.Finish()
}

// TestReplayRXE: zero divergences on every rxe capture with an MPT file.
// It fails while hca.Model.Receive is a stub (every captured response is
// then an extra response) and passes once the responder rules are right.
// The "series" run makes the model describe every multi-packet READ as a
// hca.ReadSeries (as it does for READs of more than 256 responses), so the
// aligner's path for long READs meets the kernel's responses too.
func TestReplayRXE(t *testing.T) {
	mpts, _ := filepath.Glob("../testdata/rxe/*.mpt.json")
	if len(mpts) < 20 {
		t.Fatalf("found %d .mpt.json files in testdata/rxe, want at least 20", len(mpts))
	}
	for _, run := range []struct {
		name string
		opt  hca.Options
	}{{"listed", hca.Options{Profile: hca.ProfileRXE}}, {"series", hca.Options{Profile: hca.ProfileRXE, ReadSeriesAt: 1}}} {
		var reqs, compared int
		for _, mpt := range mpts {
			base := strings.TrimSuffix(mpt, ".mpt.json")
			t.Run(run.name+"/"+filepath.Base(base), func(t *testing.T) {
				rep := replayFile(t, base+".pcap", mpt, run.opt)
				reqs += rep.Requests
				compared += rep.Compared
				if rep.Requests == 0 {
					t.Fatalf("no request fed to the model (responder %s)", rep.Responder)
				}
				for _, d := range rep.Divergences {
					t.Errorf("%s: %s", d.SessionName, d.Message)
				}
				if rep.CapturedResponses != rep.Compared && rep.DivergenceCount == 0 {
					t.Errorf("%d captured responses, %d compared, no divergence", rep.CapturedResponses, rep.Compared)
				}
			})
		}
		t.Logf("%s: %d requests fed, %d responses compared", run.name, reqs, compared)
	}
}
