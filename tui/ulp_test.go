package tui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/flow"
)

// TestULPInfoColumn: the packet list's Info shows an NVMe-oF capsule sent
// by one SEND as the command or completion, as rocetap decode does; the
// packets around it are left as they are.
func TestULPInfoColumn(t *testing.T) {
	ix := buildIndex(t, td+"ulp/nvmeof_io.pcap")
	c := newListContent(ix)
	for _, w := range []struct {
		frame int
		want  string
	}{
		{139, " | NVMe Read cid=9 nsid=1 slba=0 nlb=7 (8 blocks)"},
		{146, " | NVMe CQE cid=9 Successful Completion"},
		{10, " | NVMe Property Get CAP cid=1"},
		{141, ""}, // RDMA WRITE data: the list renders a packet alone
		{140, ""}, // ACK
	} {
		r, ok := c.row(w.frame - 1)
		if !ok {
			t.Fatalf("frame %d: no row", w.frame)
		}
		info := r.cells[8]
		if w.want == "" {
			if strings.Contains(info, "NVMe") {
				t.Errorf("frame %d: %q", w.frame, info)
			}
		} else if !strings.HasSuffix(info, w.want) {
			t.Errorf("frame %d: %q, want it to end with %q", w.frame, info, w.want)
		}
	}
}

// TestULPView: u lists the NVMe-oF commands, one per row, as the tracker
// recorded them; Enter shows the selected command's packets.
func TestULPView(t *testing.T) {
	t.Parallel()
	ix, err := OpenIndex(td + "ulp/nvmeof_io.pcap")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	withOps := func(on func(*flow.Event)) *flow.Tracker { return flow.New(flow.Options{OnEvent: on, ULPOps: true}) }
	ix.Build(BuildOptions{NewTracker: withOps})
	h := startAppIndex(t, ix, func(o *Options) { o.NewTracker = withOps })
	h.waitText("Frame 1:")
	h.typ("u")
	h.waitText("ULP operations", "Session", "Command", "Property Get", "Successful Completion", "never completed")
	// the first row: the admin queue's Connect (frames 4 to 8)
	h.key(tcell.KeyEnter)
	h.waitText("rocetap.nvme.cmd_frame == 4")
}
