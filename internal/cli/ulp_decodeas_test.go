package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/capture"
)

// The NVMe-oF capture that starts after the connection: only -d names the
// ULP of its QPs (testdata/README.md).
const (
	midstream   = td + "ulp/synth/nvme_midstream.pcap"
	midstreamAs = "infiniband.bth.destqp==0x13,nvme-rdma"
)

// TestReplayDecodeAs: replay's -Y sees the NVMe-oF fields of a
// mid-stream capture only with -d: the RDMA WRITEs of a command's data
// are replayed with it, nothing without.
func TestReplayDecodeAs(t *testing.T) {
	mptFile := filepath.Join(t.TempDir(), "host.mpt.json")
	if _, errOut, code := run(t, nil, "mpt", "learn", "-r", midstream, "-o", mptFile); code != 0 {
		t.Fatalf("mpt learn: exit %d: %s", code, errOut)
	}
	args := []string{"replay", "-r", midstream, "--mpt", mptFile, "-Y", "nvme-rdma"}
	if _, errOut, code := run(t, nil, args...); code == 0 || !strings.Contains(errOut, "nothing to replay") {
		t.Errorf("without -d: exit %d, %s", code, errOut)
	}
	out, errOut, _ := run(t, nil, append(args, "-d", midstreamAs)...)
	if !strings.Contains(out, "3 requests to the responder") {
		t.Errorf("with -d: %s%s", out, errOut)
	}
	if _, errOut, code := run(t, nil, append(args, "-d", "infiniband.bth.destqp==0x13,nosuch")...); code == 0 || !strings.Contains(errOut, "nosuch") {
		t.Errorf("a wrong -d: exit %d, %s", code, errOut)
	}
}

// fileLive is a live capture that plays a capture file (tests).
type fileLive struct{ *capture.Reader }

func (fileLive) Stats() (capture.LiveStats, error) { return capture.LiveStats{}, nil }
func (fileLive) Stop()                             {}
func (fileLive) LinkType() layers.LinkType         { return layers.LinkTypeEthernet }
func (fileLive) Snaplen() int                      { return 65535 }
func (fileLive) Interface() string                 { return "file" }
func (fileLive) Backend() string                   { return "test" }

// TestCaptureDecodeAs: capture's summary lines show the NVMe-oF commands
// of a mid-stream capture only with -d, and -Y selects them by their
// fields.
func TestCaptureDecodeAs(t *testing.T) {
	capt := func(args ...string) string {
		var out, errOut strings.Builder
		cmd := newCmdCapture(IO{Out: &out, ErrOut: &errOut}, func(o *CaptureOptions) error {
			o.signals = make(chan os.Signal)
			o.open = func(capture.LiveOptions) (capture.LiveSource, error) {
				r, err := capture.Open(midstream)
				return fileLive{r}, err
			}
			return captureRun(o, IO{Out: &out, ErrOut: &errOut})
		})
		cmd.SetArgs(append([]string{"-i", "file"}, args...))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("capture %v: %v; %s", args, err, errOut.String())
		}
		return out.String()
	}
	if out := capt(); strings.Contains(out, "NVMe") || strings.Count(out, "\n") != 10 {
		t.Errorf("without -d:\n%s", out)
	}
	if out := capt("-d", midstreamAs); !strings.Contains(out, "| NVMe Read cid=8 nsid=1 slba=2048") || strings.Count(out, "\n") != 10 {
		t.Errorf("with -d:\n%s", out)
	}
	if out := capt("-d", midstreamAs, "-Y", "nvme.cmd.opc == 0x02"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "NVMe Read cid=8") {
		t.Errorf("with -d and -Y:\n%s", out)
	}
}

// TestMPTLearnDecodeAs: mpt learn names the ULP of the responder's QP of
// a mid-stream capture only with -d.
func TestMPTLearnDecodeAs(t *testing.T) {
	const note = "QP 0x000012: carries NVMe-oF (from decode-as)"
	if _, errOut, code := run(t, nil, "mpt", "learn", "-r", midstream); code != 0 || strings.Contains(errOut, "carries") {
		t.Errorf("without -d: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, nil, "mpt", "learn", "-r", midstream, "-d", midstreamAs); code != 0 || !strings.Contains(errOut, note) {
		t.Errorf("with -d: exit %d, %s", code, errOut)
	}
}
