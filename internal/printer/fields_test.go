package printer

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestFieldsDirectPath: a field printed through its direct path
// (decode.Field.AppendUint, or UintAccessor's getter and UintAppender)
// reads as it does through Values and
// AppendValue, for every such field and every frame of the test captures.
func TestFieldsDirectPath(t *testing.T) {
	var p decode.Packet
	var vals []decode.Value
	for _, path := range testCaptures(t) {
		for _, fr := range testcap.ReadPcap(t, path) {
			p.Frame.Number, p.Frame.Len = fr.Number, fr.Len
			decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
			for _, f := range decode.Fields() {
				if !f.HasUint() || f.Multi(&p) {
					continue // Multi: the printers use Values (IPoIB over RoCEv2)
				}
				var want []byte
				vals = f.Values(&p, vals[:0])
				if len(vals) > 1 {
					t.Fatalf("%s: %d occurrences in frame %d of %s, but it has a direct path", f.Abbrev, len(vals), fr.Number, path)
				}
				if len(vals) == 1 {
					want = f.AppendValue(nil, vals[0])
				}
				got, ok := f.AppendUint(nil, &p)
				if ok != (len(vals) == 1) || string(got) != string(want) {
					t.Fatalf("%s in frame %d of %s: %q (present %v), want %q", f.Abbrev, fr.Number, path, got, ok, want)
				}
				if ok {
					_, _, get := f.UintAccessor()
					if got := f.UintAppender().Append(nil, get(&p)); string(got) != string(want) {
						t.Fatalf("%s in frame %d of %s: UintAppender printed %q, want %q", f.Abbrev, fr.Number, path, got, want)
					}
				}
			}
		}
	}
}

// benchFields are the fields bench/limitprobe prints.
var benchFields = []string{"infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.r_key"}

func benchPackets(tb testing.TB) []decode.Packet {
	var ps []decode.Packet
	for _, path := range []string{"../../testdata/rxe/read_atomic.pcap", "../../testdata/rxe/write_imm.pcap"} {
		for _, fr := range testcap.ReadPcap(tb, path) {
			var p decode.Packet
			p.Frame.Number, p.Frame.Len = fr.Number, fr.Len
			decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
			ps = append(ps, p)
		}
	}
	return ps
}

// TestFieldsPrinterDoesNotAllocate: printing a line into a buffer with room
// allocates nothing, direct-path fields or not.
func TestFieldsPrinterDoesNotAllocate(t *testing.T) {
	ps := benchPackets(t)
	fp, err := NewFieldsPrinter(append(benchFields, "rocetap.icrc.status", "ip.addr", "frame.time_relative"), DefaultFieldsOptions())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	for i := range ps {
		if n := testing.AllocsPerRun(20, func() { buf = fp.Append(buf[:0], &ps[i]) }); n != 0 {
			t.Fatalf("frame %d: %v allocations per line", ps[i].Frame.Number, n)
		}
	}
}

func BenchmarkFieldsPrinter(b *testing.B) {
	ps := benchPackets(b)
	for _, bc := range []struct {
		name   string
		fields []string
	}{
		{"bth4", benchFields},
		{"bth4+icrc", append(benchFields[:4:4], "rocetap.icrc.status")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fp, err := NewFieldsPrinter(bc.fields, DefaultFieldsOptions())
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf = fp.Append(buf[:0], &ps[i%len(ps)])
			}
		})
	}
}
