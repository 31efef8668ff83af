package tui

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// allocCaptures are realistic captures for the allocation tests: RoCEv2
// RC WRITE and READ, NVMe-oF capsules and their data, NFS over RDMA
// (RPC-over-RDMA calls, replies and chunks), iSER and SMB Direct.
var allocCaptures = []string{
	td + "synth/rc_all_opcodes.pcap",
	td + "ulp/nvmeof_io.pcap",
	td + "ulp/nfs_rdma_v41.pcap",
	td + "synth/iser_smb_direct.pcap",
}

// TestListRowAllocs pins what the packet list allocates. A row rendered
// (not in the row cache) makes one string, of which its cells are
// pieces: the floor, since tview takes a cell's text as a string and the
// row is cached. With field columns (--columns) it also makes the slice
// of their cells. A cell drawn from a cached row makes the
// *tview.TableCell GetCell must return (TableContent's contract), and
// the escaped or padded text when tview must have one. A sort key is at
// most one string (none for one byte, which Go keeps static). (Ten runs
// each: AllocsPerRun rounds down, so a stray allocation of the runtime's
// in the background does not fail the test, and one per run does.)
func TestListRowAllocs(t *testing.T) {
	seen := map[string]int{}
	for _, path := range allocCaptures {
		ix := buildIndex(t, path)
		c := newListContent(ix)
		withFields := newListContent(ix)
		cols, err := ParseColumns("no,info,infiniband.bth.psn,ip.src")
		if err != nil {
			t.Fatal(err)
		}
		withFields.setColumns(cols)
		render := func(c *listContent, pi int) func() {
			return func() {
				c.mu.Lock()
				c.clearRows()
				c.mu.Unlock()
				if _, ok := c.row(pi); !ok {
					t.Fatalf("%s: no row %d", path, pi)
				}
			}
		}
		for pi := range ix.Len() {
			if n := testing.AllocsPerRun(10, render(c, pi)); n != 1 {
				r, _ := c.row(pi)
				t.Errorf("%s frame %d: a row rendered allocates %v times, want 1 (%s)", path, pi+1, n, r.cells[8])
			}
			if n := testing.AllocsPerRun(10, render(withFields, pi)); n != 2 {
				t.Errorf("%s frame %d: a row with field columns allocates %v times, want 2", path, pi+1, n)
			}
			// Sorting by a column makes each packet's cell there: one
			// string, the key's text (not the row's, which it would keep).
			var p decode.Packet
			var buf []byte
			var rb rowBuf
			for _, spec := range cols {
				if n := testing.AllocsPerRun(10, func() { c.cellKey(int32(pi), spec, &p, &buf, &rb) }); n > 1 {
					t.Errorf("%s frame %d: the sort key of %s allocates %v times, want at most 1", path, pi+1, spec.title, n)
				}
			}
			r, _ := c.row(pi)
			info := r.cells[8]
			for _, what := range []string{"RDMA Write", "RDMA Read", " | NVMe", " | NFS", " | iSER", " | SMB Direct"} {
				if strings.Contains(info, what) {
					seen[what]++
				}
			}
			want := 1.0
			if escape(info) != info {
				want = 2 // and the escaped text ("[Coalesced ACK[]")
			}
			for _, narrow := range []bool{false, true} {
				c.narrow.Store(narrow)
				vcol := len(c.visible()) - 1 // Info
				if n := testing.AllocsPerRun(10, func() { c.GetCell(1+pi, vcol) }); n != want {
					t.Errorf("%s frame %d: GetCell of Info (narrow %v) allocates %v times, want %v (%s)", path, pi+1, narrow, n, want, info)
				}
			}
			c.narrow.Store(false)
		}
		// No., right-aligned, padded to the widest number shown: the
		// padded text is one more string.
		for pi := range ix.Len() {
			c.GetCell(1+pi, 0)
		}
		for pi := range ix.Len() {
			r, _ := c.row(pi)
			want := 1.0
			if len(r.cells[0]) < c.widths[columns[0]] {
				want = 2
			}
			if n := testing.AllocsPerRun(10, func() { c.GetCell(1+pi, 0) }); n != want {
				t.Errorf("%s frame %d: GetCell of No. allocates %v times, want %v", path, pi+1, n, want)
			}
		}
	}
	for _, what := range []string{"RDMA Write", "RDMA Read", " | NVMe", " | NFS", " | iSER", " | SMB Direct"} {
		if seen[what] == 0 {
			t.Errorf("no row with %q: the test checks nothing of it", what)
		}
	}
}

// TestULPTextRecordNoAllocs: the index tags an iSER or SMB Direct
// message whose Info it has seen before without allocating (it looks the
// text up from a buffer, not a string made for the packet).
func TestULPTextRecordNoAllocs(t *testing.T) {
	tr := flow.New(flow.Options{})
	var x ulpIndex
	var p decode.Packet
	n := 0
	for _, fr := range readRef(t, td+"synth/iser_smb_direct.pcap").pkts {
		n++
		p.Frame.Number, p.Frame.Len, p.Frame.Time = n, fr.info.Length, fr.info.Timestamp
		decode.Decode(&p, fr.data, fr.info.LinkType)
		tr.Track(&p)
		u := p.Analysis.ULP
		if u == nil || u.ISER == nil && u.SMBDirect == nil {
			continue
		}
		tag, _ := x.record(&p)
		if tag == 0 {
			t.Fatalf("frame %d: no tag", n)
		}
		if a := testing.AllocsPerRun(5, func() {
			if again, _ := x.record(&p); again != tag {
				t.Fatalf("frame %d: tag %#x, then %#x", n, tag, again)
			}
		}); a != 0 {
			t.Errorf("frame %d: tagging a seen message allocates %v times", n, a)
		}
	}
	if len(x.texts) == 0 {
		t.Fatal("no iSER or SMB Direct message: the test checks nothing")
	}
}

// TestIndexBuildAllocsPerPacket: indexing a capture with a tracker
// allocates, beyond what the tracker allocates itself (flow's), nothing
// per packet: the allocations that grow with the capture are the ULP
// records' strings (an RPC's call and reply Info and its name), the
// amortized growth of the records' tables and the index's chunks. Each
// capture is indexed copied 4 and 8 times (times moving on), and what
// Build allocates more than a decode-and-track loop over the same file
// may grow by 1 per 100 packets added, 5 per RPC recorded, and 8 for one
// more doubling of the tables that grow (expert log, records).
func TestIndexBuildAllocsPerPacket(t *testing.T) {
	for _, src := range allocCaptures {
		var extra, packets, rpcs [2]int
		for i, k := range []int{4, 8} {
			path := repeatCapture(t, src, k)
			track := mallocs(func() { packets[i] = trackOnly(t, path) })
			var ix *Index
			build := mallocs(func() { ix = buildIndex(t, path) })
			if ix.Len() != packets[i] {
				t.Fatalf("%s: %d packets indexed, %d tracked", path, ix.Len(), packets[i])
			}
			extra[i], rpcs[i] = int(build)-int(track), len(ix.ulp.rpc)
		}
		grew, added, budget := extra[1]-extra[0], packets[1]-packets[0], (packets[1]-packets[0])/100+5*(rpcs[1]-rpcs[0])+8
		t.Logf("%s: %d more allocations for %d more packets (%d more RPC records)", filepath.Base(src), grew, added, rpcs[1]-rpcs[0])
		if grew > budget {
			t.Errorf("%s: Build allocates %d more times than tracking for %d more packets, want at most %d", filepath.Base(src), grew, added, budget)
		}
	}
}

// mallocs counts the allocations fn makes: the fewest of 3 runs, as the
// count is the process's, and goroutines an earlier test left (an app's
// detail tree on its way) may allocate meanwhile.
func mallocs(fn func()) uint64 {
	n := uint64(1<<64 - 1)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		n = min(n, after.Mallocs-before.Mallocs)
	}
	return n
}

// trackOnly decodes and tracks every packet of path, as Build does
// without the index, and returns their count.
func trackOnly(t testing.TB, path string) int {
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := flow.New(flow.Options{})
	p := new(decode.Packet)
	n := 0
	for {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		decode.Decode(p, data, info.LinkType)
		tr.Track(p)
	}
}

// repeatCapture writes src's packets k times over, each copy after the
// one before, and returns the path.
func repeatCapture(t testing.TB, src string, k int) string {
	ref := readRef(t, src)
	m := len(ref.pkts)
	span := ref.pkts[m-1].info.Timestamp.Sub(ref.pkts[0].info.Timestamp) + time.Millisecond
	return writeRepeated(t, ref, k*m, func(i int) time.Time {
		return ref.pkts[i%m].info.Timestamp.Add(time.Duration(i/m) * span)
	})
}

// writeRepeated writes n packets, ref's over and over, packet i at the
// time at(i), and returns the path.
func writeRepeated(t testing.TB, ref *refCapture, n int, at func(i int) time.Time) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "repeated.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapWriter(f, decode.LinkTypeEthernet, 65535, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		rp := ref.pkts[i%len(ref.pkts)]
		info := rp.info
		info.Timestamp = at(i)
		if err := w.WritePacket(info, rp.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
