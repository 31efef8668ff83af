package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/printer"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// statsBar is a histogram line as drawn: name, count, bar.
var statsBar = regexp.MustCompile(`^[║│ ]*  (\S.*?)\s{2,}(\d+)  (▇+)\s*[║│]?$`)

// rvHistogram reads the histogram under the heading from the screen:
// each name's count and bar length.
func rvHistogram(s *rvScreen, heading string) (counts, bars map[string]int) {
	counts, bars = map[string]int{}, map[string]int{}
	y := s.line(heading)
	if y < 0 {
		return
	}
	for _, l := range s.lines[y+1:] {
		m := statsBar.FindStringSubmatch(l)
		if m == nil {
			break
		}
		counts[m[1]], _ = strconv.Atoi(m[2])
		bars[m[1]] = len([]rune(m[3]))
	}
	return
}

// TestStatsOpcodes: the opcode and syndrome histograms count what a
// direct decode of every packet counts, and the bars are as long as the
// counts say (the largest fills the room).
func TestStatsOpcodes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"read_atomic.pcap", "ipv6_mix.pcap", "err_rnr.pcap", "cm_rping.pcap", "err_psn_seq.pcap"} {
		t.Run(name, func(t *testing.T) {
			rh := rvStart(t, name, "", 120, 60, rvNoDetails)
			wantOps, wantSyn := map[string]int{}, map[string]int{}
			var p decode.Packet
			var buf []byte
			for i := range rh.ix.Len() {
				var err error
				if buf, err = rh.ix.Decode(i, &p, buf); err != nil {
					t.Fatal(err)
				}
				if p.Has&decode.HdrBTH != 0 {
					wantOps[p.BTH.Opcode.String()]++
				}
				if p.Has&decode.HdrAETH != 0 {
					wantSyn[decode.SyndromeString(p.AETH.Syndrome)]++
				}
			}
			rh.press('S')
			s := rh.wait("the statistics", func(s *rvScreen) bool {
				return s.line("Packets: "+strconv.Itoa(rh.ix.Len())+" (") >= 0 && s.line("counting") < 0 && s.line("Throughput") >= 0
			})
			for _, c := range []struct {
				heading string
				want    map[string]int
			}{{"Opcodes", wantOps}, {"AETH syndromes", wantSyn}} {
				got, bars := rvHistogram(s, c.heading)
				if len(got) != len(c.want) {
					t.Errorf("%s: got %v, want %v:\n%s", c.heading, got, c.want, s)
				}
				peak := 0
				for name, n := range c.want {
					if got[name] != n {
						t.Errorf("%s: %s counted %d, want %d", c.heading, name, got[name], n)
					}
					peak = max(peak, n)
				}
				// name, count and bar fill the inner width (118) less the
				// margins: the longest bar takes what is left.
				nameW, countW := 0, len(strconv.Itoa(peak))
				for name := range c.want {
					nameW = max(nameW, len(name))
				}
				room := 118 - 2 - nameW - 2 - countW - 2
				for name, n := range c.want {
					if want := max(1, n*room/peak); bars[name] != want {
						t.Errorf("%s: %s has a bar of %d, want %d", c.heading, name, bars[name], want)
					}
				}
			}
		})
	}
}

// TestStatsThroughput: each session's line says its packets and bytes as
// the tracker counts them, and its sparkline has a mark in exactly the
// time buckets holding its packets, the busiest at █.
func TestStatsThroughput(t *testing.T) {
	t.Parallel()
	rh := rvStart(t, "cm_rping.pcap", "", 120, 60, rvNoDetails)
	rh.press('S')
	s := rh.waitText("Throughput of the 3 busiest sessions")
	var sessions []*flow.Session
	rh.ix.WithTracker(func(tr *flow.Tracker, _ *flow.ExpertLog) { sessions = tr.Sessions() })
	start := rh.ix.Start()
	last, _ := rh.ix.Entry(rh.ix.Len() - 1)
	span := int64(last.Time.Sub(start))
	for _, ss := range sessions {
		label := "#" + strconv.Itoa(int(ss.ID)) + " " + ss.Transport.String() + " " + ss.A.String() + " ↔ " + ss.B.String() + "  " +
			strconv.Itoa(int(ss.Packets())) + " packets, " + strconv.Itoa(int(ss.Bytes())) + " bytes, peak "
		y := s.line(label)
		if y < 0 {
			t.Fatalf("no line %q:\n%s", label, s)
		}
		var want [sparkBuckets]int
		for i := range rh.ix.Len() {
			e, _ := rh.ix.Entry(i)
			if e.Session == ss.ID {
				want[int64(e.Time.Sub(start))*sparkBuckets/(span+1)] += e.Length
			}
		}
		line := []rune(s.lines[y+1])
		x := strings.Index(s.lines[y+1], "    ")
		spark := line[len([]rune(s.lines[y+1][:x]))+4:]
		peak := 0
		for _, n := range want {
			peak = max(peak, n)
		}
		for i, n := range want {
			switch c := spark[i]; {
			case n == 0 && c != ' ', n > 0 && !strings.ContainsRune("▁▂▃▄▅▆▇█", c), n == peak && c != '█':
				t.Errorf("session %d bucket %d: %d bytes drawn %q:\n%s", ss.ID, i, n, c, s.lines[y+1])
			}
		}
	}
}

// TestStatsGrowing: the view opened before the index is built counts the
// packets as they come.
func TestStatsGrowing(t *testing.T) {
	t.Parallel()
	rh := rvNew(t, "read_atomic.pcap", "", 120, 40)
	rvNoDetails(rh.app)
	rh.run()
	rh.press('S')
	rh.waitText("Packets: 0 (")
	go rh.ix.Build(BuildOptions{NewTracker: rh.newTracker, Notify: rh.app.Refresh})
	s := rh.wait("16 packets counted", func(s *rvScreen) bool {
		return s.line("Packets: 16 (") >= 0 && s.line("counting") < 0 && s.line("Throughput") >= 0
	})
	if got, _ := rvHistogram(s, "Opcodes"); got["RC RDMA Read Request"] != 4 || got["RC Compare Swap"] != 2 {
		t.Errorf("opcodes %v, want 4 READ requests and 2 CmpSwap:\n%s", got, s)
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []uint64
		want string
	}{
		{[]uint64{0, 1, 8}, " ▁█"},
		{[]uint64{1, 2, 3, 4, 5, 6, 7, 8}, "▁▂▃▄▅▆▇█"},
		{[]uint64{0, 0}, "  "},
		{[]uint64{5, 5}, "██"},
		{[]uint64{1, 1000}, "▁█"},
	} {
		if got := sparkline(c.in); got != c.want {
			t.Errorf("sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStatsBitRate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bps  float64
		want string
	}{{0, "0 bit/s"}, {999, "999 bit/s"}, {1500, "1.50 kbit/s"}, {57.03e6, "57.03 Mbit/s"}, {2e9, "2.00 Gbit/s"}} {
		if got := printer.BitRate(c.bps); got != c.want {
			t.Errorf("printer.BitRate(%v) = %q, want %q", c.bps, got, c.want)
		}
	}
	if got := statsDur(18634 * time.Microsecond); got != "18.634ms" {
		t.Errorf("statsDur = %q", got)
	}
}
