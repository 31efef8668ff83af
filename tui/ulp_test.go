package tui

import (
	"strings"
	"testing"
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
