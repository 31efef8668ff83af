package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/pathcmp"
)

// pathTableTabwriter is the table of flows as text/tabwriter writes it,
// which is how the path report wrote it before PathTable: the reference.
func pathTableTabwriter(flows []*pathcmp.Flow) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "session\tflow\tdir\tupstream\tdownstream\tmatched\tlost\tnaked\tdup\treordered\tonly down\toutside\tdelay min\tmedian\tp99\tmax\tspikes\t\n")
	for _, f := range flows {
		dir := f.Dir.String()
		if dir == "" {
			dir = "off path"
		}
		delays := "\t\t\t"
		if f.Delay.N > 0 {
			delays = dur(f.Delay.Min) + "\t" + dur(f.Delay.Median) + "\t" + dur(f.Delay.P99) + "\t" + dur(f.Delay.Max)
		}
		session := "-"
		if f.Session != 0 {
			session = u(uint64(f.Session))
			if f.SessionPoint == pathcmp.B {
				session = "B:" + session
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t\n", session, f.Name(), dir, f.Upstream, f.Downstream, f.Matched,
			f.Lost, f.NAKed, f.Duplicates, f.Reordered, f.OnlyDownstream, f.Outside, delays, f.Spikes)
	}
	tw.Flush()
	return b.String()
}

// PathTable writes the table of flows as text/tabwriter did: on flows of
// every kind (sessions of A and B, none, off path, with and without
// delays in ns, µs, ms and s, wide counts, IPv6 and LID endpoints).
func TestPathTableLikeTabwriter(t *testing.T) {
	var flows []*pathcmp.Flow
	addrs := []string{"10.0.0.1", "10.77.0.2", "fe80::2:c903:0:a", "lid:1", "192.168.100.200"}
	delays := []time.Duration{0, 40 * time.Nanosecond, 999 * time.Nanosecond, 1500 * time.Nanosecond, 12345678 * time.Nanosecond, 3 * time.Second, -2 * time.Microsecond}
	for i := range 200 {
		f := &pathcmp.Flow{Session: uint32(i * 7919 % 1000), SessionPoint: uint8(i % 2), Src: addrs[i%len(addrs)], Dst: addrs[(i/3)%len(addrs)],
			DestQP: uint32(i * 104729 % (1 << 24)), Dir: decode.PathDir(i % 3), Upstream: i * i, Downstream: i * 31, Matched: i, Lost: i % 5,
			NAKed: i % 3, Duplicates: i % 7, Reordered: i % 11, OnlyDownstream: i % 13, Outside: i * 1000003, Spikes: i % 2}
		if i%4 != 0 {
			d := delays[i%len(delays)]
			f.Delay = pathcmp.DelayStats{N: i, Min: d, Median: d * 2, P90: d * 3, P99: d * 4, Max: delays[(i/2)%len(delays)]}
		}
		flows = append(flows, f)
	}
	for _, n := range []int{0, 1, 2, len(flows)} {
		r := &pathcmp.Result{Flows: flows[:n]}
		tab := NewPathTable(r)
		got := tab.AppendHead(nil)
		for _, f := range r.Flows {
			got = tab.AppendRow(got, f)
		}
		if want := pathTableTabwriter(r.Flows); string(got) != want {
			gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%d flows, line %d:\n got %q\nwant %q", n, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("%d flows: %d lines, want %d", n, len(gl), len(wl))
		}
	}
}
