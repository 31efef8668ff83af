package printer

import (
	"strconv"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// verbosePackets decodes every packet of the synthetic, rxe and ULP
// captures.
func verbosePackets(t testing.TB) []decode.Packet {
	t.Helper()
	var ps []decode.Packet
	for _, f := range testcap.Glob(t, 10, "../../testdata/synth/*.pcap*", "../../testdata/rxe/*.pcap", "../../testdata/ulp/*.pcap", "../../testdata/ulp/synth/*.pcap") {
		for _, fr := range testcap.ReadFile(t, f) {
			var p decode.Packet
			p.Frame.Number, p.Frame.Len, p.Frame.Time = fr.Number, fr.Len, fr.Time
			decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
			ps = append(ps, p)
		}
	}
	return ps
}

// -V writes a packet's lines as it makes them (walkLines); the TUI's
// detail pane takes them as Lines. Both give the same tree.
func TestAppendVerboseMatchesLines(t *testing.T) {
	ps := verbosePackets(t)
	for i := range ps {
		p := &ps[i]
		want := []byte("Frame " + strconv.Itoa(p.Frame.Number) + ": " + strconv.Itoa(p.Frame.Len) + " bytes on wire, " + strconv.Itoa(p.Frame.CapLen) + " bytes captured\n")
		for _, l := range Lines(p, nil) {
			want = appendVerboseLine(want, l.Depth, l.Text, l.Field, l.Off, l.Len)
		}
		if got := NewVerbose().Append(nil, p); string(got) != string(want) {
			t.Fatalf("frame %d: Verbose.Append:\n%s\nLines:\n%s", p.Frame.Number, got, want)
		}
	}
	t.Logf("%d packets", len(ps))
}

// The tree goes through the fields a packet's shape allows
// (verboseCandidates); through every field it shows the same lines. The
// packets are tracked, so that those of an upper-layer protocol (the
// ULP captures' NVMe-oF and NFS, learned from their CM exchanges) have
// their fields, and every packet its analysis fields.
func TestVerboseCandidatesMissNoLine(t *testing.T) {
	all := make([]int32, len(verboseFields()))
	for i := range all {
		all[i] = int32(i)
	}
	render := func(p *decode.Packet, cands []int32) string {
		var dst []byte
		walkFields(p, cands, nil, nil, func(depth int, text []byte, f *decode.Field, off, n int) {
			dst = appendVerboseLine(dst, depth, text, f, off, n)
		}, func(depth int) {
			for _, l := range saLines(nil, p, depth) {
				dst = appendVerboseLine(dst, l.Depth, l.Text, l.Field, l.Off, l.Len)
			}
		}, nil)
		return string(dst)
	}
	n, ulp := 0, 0
	for _, f := range testcap.Glob(t, 10, "../../testdata/synth/*.pcap*", "../../testdata/rxe/*.pcap", "../../testdata/ulp/*.pcap", "../../testdata/ulp/synth/*.pcap") {
		eachTracked(testcap.ReadFile(t, f), flow.Options{}, func(fr testcap.Frame, p *decode.Packet) {
			n++
			if p.Analysis.ULP != nil {
				ulp++
			}
			if got, want := render(p, verboseCandidates(jsonShape{p.Has, p.Analysis.ULP != nil})), render(p, all); got != want {
				t.Fatalf("%s frame %d: through the candidates:\n%s\nthrough every field:\n%s", f, fr.Number, got, want)
			}
		})
	}
	if ulp == 0 {
		t.Fatal("no packet with an upper-layer protocol: the test covers none of their fields")
	}
	t.Logf("%d packets, %d with an upper-layer protocol", n, ulp)
}

// BenchmarkVerbose writes the -V tree of every test packet.
func BenchmarkVerbose(b *testing.B) {
	ps := verbosePackets(b)
	buf := make([]byte, 0, 1<<20)
	v := NewVerbose()
	b.ReportAllocs()
	for range b.N {
		for i := range ps {
			buf = v.Append(buf[:0], &ps[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ps)), "ns/packet")
}

// TestAppendVerboseDoesNotAllocate: -V on the common packets (tracked
// RoCEv2 WRITE, READ, SEND and ACKs) allocates nothing once its buffers
// have grown; the headers' labels ("Internet Protocol Version 4, Src:
// …") allocated a string each, and each line's buffer grew anew.
func TestAppendVerboseDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64<<10)
	v := NewVerbose()
	for _, path := range []string{"../../testdata/rxe/read_atomic.pcap", "../../testdata/rxe/write_imm.pcap"} {
		// tracked, as -V shows them: with rocetap.* analysis
		eachTracked(testcap.ReadFile(t, path), flow.Options{}, func(fr testcap.Frame, p *decode.Packet) {
			if n := testing.AllocsPerRun(20, func() { buf = v.Append(buf[:0], p) }); n != 0 {
				t.Fatalf("%s frame %d: %v allocations per packet", path, fr.Number, n)
			}
		})
	}
}
