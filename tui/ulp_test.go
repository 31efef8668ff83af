package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
)

// TestULPInfoColumn: the packet list's Info shows on every packet of an
// NVMe-oF command what rocetap decode shows: the command, its data with
// the offset, its completion with the command's name; the ACKs stay as
// they are.
func TestULPInfoColumn(t *testing.T) {
	ix := buildIndex(t, td+"ulp/nvmeof_io.pcap")
	c := newListContent(ix)
	for _, w := range []struct {
		frame int
		want  string
	}{
		{139, " | NVMe Read cid=9 nsid=1 slba=0 nlb=7 (8 blocks)"},
		{141, " | NVMe Read data cid=9 +0"},
		{142, " | NVMe Read data cid=9 +1024"},
		{146, " | NVMe CQE Read cid=9 Successful Completion"},
		{10, " | NVMe Property Get CAP cid=1"},
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

// ulpPart is the upper-layer protocol part of an Info: what follows " | "
// up to the flags and analysis in brackets ("" without one).
func ulpPart(info string) string {
	_, s, ok := strings.Cut(info, " | ")
	if !ok {
		return ""
	}
	if i := strings.Index(s, " ["); i >= 0 {
		s = s[:i]
	}
	return s
}

// decodeULP returns, by frame, the ULP part of the Info `rocetap decode
// -r path` prints (one pass: what its Info shows without -V), made as the
// decode command makes it (a tracked pass, printer.AppendInfo); and, for
// the earlier SENDs of a message carried by several, the Info of the one
// that completes it.
func decodeULP(t *testing.T, path string, opts flow.Options) (info map[int]string, earlier map[int]int) {
	t.Helper()
	src, err := stream.Open(path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info, earlier = map[int]string{}, map[int]int{}
	var b []byte
	_, err = src.Track(stream.TrackOptions{Decoder: decode.NewDecoder(), OneGoroutine: true, Pass: stream.Pass{Tracker: flow.New(opts), Each: func(p *decode.Packet) bool {
		b = printer.AppendInfo(b[:0], p)
		if s := ulpPart(string(b)); s != "" {
			info[p.Frame.Number] = s
			if u := p.Analysis.ULP; u != nil && len(u.MsgFrames) > 1 {
				for _, f := range u.MsgFrames[:len(u.MsgFrames)-1] {
					earlier[f] = p.Frame.Number
				}
			}
		}
		return true
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return info, earlier
}

// TestULPInfoAsDecode: on every frame of the ULP captures (the kernel's
// NVMe-oF and NFS-over-RDMA captures, the synthetic NVMe scenarios with
// -d, the synthetic NFS errors, iSER and SMB Direct), the packet list's Info has the ULP part rocetap decode prints; the
// earlier SENDs of a capsule or call carried by several, where decode
// shows nothing (it reassembles on the last one), show the last one's.
func TestULPInfoAsDecode(t *testing.T) {
	caps, _ := filepath.Glob(td + "ulp/*.pcap")
	synth, _ := filepath.Glob(td + "ulp/synth/*.pcap")
	if len(caps) < 3 || len(synth) < 5 {
		t.Fatalf("want the ULP captures in %sulp, found %d and %d synthetic", td, len(caps), len(synth))
	}
	// NFS errors, iSER and SMB Direct (internal/synth/ulp.go)
	caps = append(caps, td+"synth/nfs_rdma_errors.pcap", td+"synth/iser_smb_direct.pcap", td+"synth/nfs_rdma_nomsg.pcap", td+"synth/nfs4_ops.pcap")
	da, _, err := flow.ParseDecodeAs("infiniband.bth.destqp==0x13,nvme-rdma")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append(caps, synth...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var opts flow.Options
			if strings.Contains(path, "ulp/synth") {
				opts.DecodeAs = []flow.DecodeAs{da}
			}
			want, earlier := decodeULP(t, path, opts)
			ix, err := OpenIndex(path)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			ix.Build(BuildOptions{NewTracker: func(on func(*flow.Event)) *flow.Tracker {
				o := opts
				o.OnEvent = on
				return flow.New(o)
			}})
			c := newListContent(ix)
			shown, spanned := 0, 0
			for i := range ix.Len() {
				r, ok := c.row(i)
				if !ok {
					t.Fatalf("frame %d: no row", i+1)
				}
				f, got := i+1, ulpPart(r.cells[8])
				w := want[f]
				if last, ok := earlier[f]; ok && w == "" {
					w = want[last]
					spanned++
				}
				if got != w {
					t.Errorf("frame %d: Info %q, decode's %q", f, got, w)
				}
				if got != "" {
					shown++
				}
			}
			if shown == 0 {
				t.Errorf("no packet shows its ULP")
			}
			t.Logf("%d frames, %d with their ULP, %d of them earlier SENDs of a message", ix.Len(), shown, spanned)
		})
	}
}

// TestULPInfoAsDecodeGolden: the Info of the first 150 frames of
// nvmeof_io.pcap is what `rocetap decode -r nvmeof_io.pcap -c 150` printed
// (the golden file internal/cli's TestULPGolden pins); a Send First or
// Middle, where decode prints nothing, shows what the Send Last that
// completes its message shows.
func TestULPInfoAsDecodeGolden(t *testing.T) {
	b, err := os.ReadFile(td + "golden/ulp_nvmeof_io.text.golden")
	if err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(t, td+"ulp/nvmeof_io.pcap")
	c := newListContent(ix)
	want := map[int]string{}
	pending := map[string][]int{} // Send First/Middle frames by QP
	qp := regexp.MustCompile(` RC Send (First|Middle|Last|Only)\S* .*QP=(0x[0-9a-f]+)`)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n, err := strconv.Atoi(strings.Fields(l)[0])
		if err != nil {
			t.Fatalf("not a decode line: %q", l)
		}
		want[n] = ulpPart(l)
		if m := qp.FindStringSubmatch(l); m != nil {
			switch m[1] {
			case "First", "Middle":
				pending[m[2]] = append(pending[m[2]], n)
			case "Last":
				for _, f := range pending[m[2]] {
					want[f] = want[n]
				}
				delete(pending, m[2])
			}
		}
	}
	if len(want) != 150 {
		t.Errorf("%d lines in the golden file, want 150", len(want))
	}
	for n, w := range want {
		r, ok := c.row(n - 1)
		if !ok {
			t.Fatalf("frame %d: no row", n)
		}
		if got := ulpPart(r.cells[8]); got != w {
			t.Errorf("frame %d: Info %q, decode printed %q", n, got, w)
		}
	}
}

// TestULPTagEarlier: a SEND First already published when its message's
// last SEND is indexed gets the message's Info, and the list drops the
// row it rendered without it.
func TestULPTagEarlier(t *testing.T) {
	ix := buildIndex(t, td+"ulp/nvmeof_io.pcap")
	c := newListContent(ix)
	const first = 83 // the I/O queue's Connect: Send First 83, Send Last 84
	tag := ix.at(first - 1).ulp
	if tag == 0 || ix.at(first).ulp != tag {
		t.Fatalf("frames 83 and 84 tagged %#x and %#x, want the same tag", tag, ix.at(first).ulp)
	}
	ix.at(first - 1).ulp = 0
	if r, _ := c.row(first - 1); strings.Contains(r.cells[8], "NVMe") {
		t.Fatalf("untagged: %q", r.cells[8])
	}
	ix.tagEarlier([]int{first}, tag, nil)
	if r, _ := c.row(first - 1); !strings.HasSuffix(r.cells[8], " | NVMe Connect cid=0 subnqn=nqn.2024-01.io.rocetap:ulpgen-brd0") {
		t.Errorf("tagged again: %q", r.cells[8])
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

// TestULPViewRPC: on the kernel's NFSv4.1-over-RDMA capture, u lists
// every RPC of its .expect.json (from the kernel's tracepoints), one per
// row, with its xid, procedure and COMPOUND ops, status, latency and the
// bytes the server moved for its chunks; Enter on the 4 KiB READ shows its
// packets: the call, the RDMA WRITEs of its write chunk and the reply.
func TestULPViewRPC(t *testing.T) {
	t.Parallel()
	path := td + "ulp/nfs_rdma_v41.pcap"
	b, err := os.ReadFile(strings.TrimSuffix(path, ".pcap") + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var expect struct {
		RPCs []struct {
			XID        string `json:"xid_hex"`
			ClientProc string `json:"client_proc"`
			ServerOps  []struct {
				Op     string `json:"op"`
				Status int    `json:"status"`
			} `json:"server_ops"`
			Writes []struct{ Len uint64 } `json:"server_write_segments"`
			Reads  []struct{ Len uint64 } `json:"server_read_segments"`
		} `json:"rpcs"`
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	if len(expect.RPCs) < 30 {
		t.Fatalf("%d RPCs in the expect file", len(expect.RPCs))
	}
	h := startApp(t, path)
	h.waitText("Frame 1:")
	h.typ("u")
	h.waitText("ULP operations", "CID/XID", "RPC COMPOUND SEQUENCE PUTFH READ")
	var rows [][]string
	h.ui(func() {
		tb := h.app.views["ulp"].(*ulpView).table
		for r := 1; r < tb.GetRowCount(); r++ {
			var row []string
			for c := range len(ulpColumns) {
				row = append(row, tb.GetCell(r, c).Text)
			}
			rows = append(rows, row)
		}
	})
	if len(rows) != len(expect.RPCs) {
		t.Errorf("%d rows, the kernel traced %d RPCs", len(rows), len(expect.RPCs))
	}
	for i, e := range expect.RPCs {
		if i >= len(rows) {
			break
		}
		r := rows[i]
		name, status, bytes := "RPC NULL", "OK", uint64(0)
		if len(e.ServerOps) > 0 {
			name = "RPC COMPOUND"
			for _, o := range e.ServerOps {
				name += " " + strings.TrimPrefix(o.Op, "OP_")
				if o.Status != 0 && status == "OK" {
					status = "status " + strconv.Itoa(o.Status)
				}
			}
		}
		for _, s := range e.Writes {
			bytes += s.Len
		}
		for _, s := range e.Reads {
			bytes += s.Len
		}
		if r[ulpColID] != e.XID || r[2] != name || r[ulpColStatus] != status || r[9] != strconv.FormatUint(bytes, 10) || r[8] == "" || !strings.Contains(r[10], "-") {
			t.Errorf("row %d: %q, want xid %s, %q, %s, %d bytes, a latency and the call and reply frames", i+1, r, e.XID, name, status, bytes)
		}
	}
	// Enter on the 4 KiB READ (call 86, WRITE 88-91, reply 93)
	h.ui(func() {
		for i, r := range rows {
			if r[ulpColID] == "0x1d94a661" {
				h.app.views["ulp"].(*ulpView).table.Select(i+1, 0)
			}
		}
	})
	h.key(tcell.KeyEnter)
	h.waitText("rocetap.rpc.call_frame == 86")
	want := []int32{85, 87, 88, 89, 90, 92}
	h.waitFor("the READ's packets", func(*screen) bool {
		c := h.app.content
		var shown []int32
		for i := range c.count() {
			pi, _ := c.packetAt(i)
			shown = append(shown, int32(pi))
		}
		return slices.Equal(shown, want)
	})
}

// ui runs fn on the UI goroutine and waits for it.
func (h *harness) ui(fn func()) {
	h.t.Helper()
	onUI(h.t, h.app, fn)
}

// TestULPOffsetRuns: the offsets of a command's data packets, kept as
// runs, come back for each packet: a READ request and its responses at
// the same PSNs, a second READ, a WRITE of several packets, packets of a
// PSN wrap.
func TestULPOffsetRuns(t *testing.T) {
	type pkt struct {
		frame int32
		psn   uint32
		off   uint64
	}
	for _, c := range []struct {
		name string
		pkts []pkt
		runs int // runs beyond the first
	}{
		{"write", []pkt{{10, 100, 0}, {11, 101, 1024}, {12, 102, 2048}, {13, 103, 3072}}, 0},
		{"read request and responses", []pkt{{10, 100, 0}, {12, 100, 0}, {13, 101, 1024}, {14, 102, 2048}}, 0},
		{"two reads", []pkt{{10, 100, 0}, {11, 120, 20480}, {12, 100, 0}, {13, 101, 1024}, {30, 120, 20480}, {31, 121, 21504}}, 3},
		{"PSN wrap", []pkt{{10, psnMask, 512}, {11, 0, 1536}, {12, 1, 2560}}, 0},
		{"not at the stride", []pkt{{10, 7, 0}, {11, 8, 1024}, {12, 9, 4096}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x ulpIndex
			x.nvme = []nvmeRec{{}}
			for _, p := range c.pkts {
				x.addOffset(0, p.frame, p.psn, p.off)
			}
			if n := len(x.moreRuns[0]); n != c.runs {
				t.Errorf("%d runs after the first, want %d", n, c.runs)
			}
			for _, p := range c.pkts {
				if off, ok := x.offset(0, p.frame, p.psn); !ok || off != p.off {
					t.Errorf("frame %d (PSN %d): offset %d %v, want %d", p.frame, p.psn, off, ok, p.off)
				}
			}
			if _, ok := x.offset(0, 9, c.pkts[0].psn); ok {
				t.Errorf("an offset for a frame before the data")
			}
		})
	}
}

// TestULPViewRPCNoMsg: an RDMA_NOMSG call's header names no procedure;
// the READ response that completes the call does (it carries it), and the
// view's row names the call from it, one row for the whole call.
func TestULPViewRPCNoMsg(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"synth/nfs_rdma_nomsg.pcap")
	h.waitText("Frame 1:")
	h.typ("u")
	h.waitText("ULP operations", "RPC COMPOUND SEQUENCE PUTFH SETXATTR GETATTR", "0x00000301")
	var n int
	h.ui(func() { n = h.app.views["ulp"].(*ulpView).table.GetRowCount() - 1 })
	if n != 1 {
		t.Errorf("%d rows, want the call's one", n)
	}
}
