package hca

import (
	"bytes"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestReadSeries: a READ answered as a ReadSeries carries exactly the
// responses, opcodes, AETHs, bytes and known masks the listed responses
// carry, for READs of memory partly written, across pages and MTUs.
func TestReadSeries(t *testing.T) {
	write := []byte("0123456789abcdef")
	cases := []struct {
		name   string
		va     uint64
		length uint32
	}{
		{"2 responses, nothing known", mrVA + 4096, 1500},
		{"3 responses, partly known", mrVA + 1000, 2500},
		{"exactly 2 MTUs", mrVA, 2048},
		{"the whole MR", mrVA, 8192},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(seriesAt int) []Response {
				f := testConfig()
				m, err := NewModel(f, Options{ReadSeriesAt: seriesAt})
				if err != nil {
					t.Fatal(err)
				}
				// Known bytes: 16 at the start of the MR, 16 straddling the
				// first page boundary, 16 near the end.
				for i, va := range []uint64{mrVA, mrVA + 4096 - 8, mrVA + 8000} {
					m.feed(req{op: decode.OpWriteOnly, psn: 100 + uint32(i), ack: true, va: va, rkey: mrKey, dmaLen: 16, payload: write})
				}
				r := m.feed(req{op: decode.OpReadRequest, psn: 103, ack: true, va: c.va, rkey: mrKey, dmaLen: c.length})
				var out []Response
				for _, x := range r.Responses {
					if x.Series == nil {
						x.Payload, x.Known = bytes.Clone(x.Payload), slices.Clone(x.Known)
						out = append(out, x)
						continue
					}
					s := x.Series
					for i := uint32(0); i < s.Count; i++ {
						y := x
						y.Series = nil
						var off, n uint64
						y.Opcode, y.HasAETH, off, n = s.Response(i)
						if !y.HasAETH {
							y.Syndrome = 0
						}
						y.PSN = x.PSN.Add(int(i))
						y.Payload, y.Known = make([]byte, n), make([]bool, n)
						s.Fill(off, y.Payload, y.Known)
						out = append(out, y)
					}
				}
				return out
			}
			listed, series := run(0), run(1)
			if len(listed) < 2 || len(listed) != len(series) {
				t.Fatalf("%d listed responses, %d from the series", len(listed), len(series))
			}
			known := 0
			for i := range listed {
				a, b := listed[i], series[i]
				for _, k := range a.Known {
					if k {
						known++
					}
				}
				if a.Opcode != b.Opcode || a.PSN != b.PSN || a.HasAETH != b.HasAETH || a.Syndrome != b.Syndrome || a.MSN != b.MSN ||
					!bytes.Equal(a.Payload, b.Payload) || !slices.Equal(a.Known, b.Known) {
					t.Errorf("response %d: listed %v PSN %d AETH %v syn %#x MSN %d known %d; series %v PSN %d AETH %v syn %#x MSN %d",
						i, a.Opcode, a.PSN, a.HasAETH, a.Syndrome, a.MSN, len(a.Known), b.Opcode, b.PSN, b.HasAETH, b.Syndrome, b.MSN)
				}
			}
			t.Logf("%d responses, %d known bytes", len(listed), known)
		})
	}
}

// TestReadSeriesLarge: a 2 GiB READ of a 4 GiB MR costs the model one
// Response and the bytes the capture wrote, not 2 GiB.
func TestReadSeriesLarge(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, func(f *Config) { f.MRs[0].Length = 1 << 32 })
	m.feed(req{op: decode.OpWriteOnly, psn: 100, ack: true, va: mrVA + 1<<30, rkey: mrKey, dmaLen: 4, payload: []byte("data")})
	r := m.feed(req{op: decode.OpReadRequest, psn: 101, ack: true, va: mrVA, rkey: mrKey, dmaLen: 1<<31 - 1})
	if len(r.Responses) != 1 || r.Responses[0].Series == nil {
		t.Fatalf("%d responses, series %v", len(r.Responses), len(r.Responses) > 0 && r.Responses[0].Series != nil)
	}
	s := r.Responses[0].Series
	if s.Count != 1<<21 || len(s.Pieces) != 1 || s.Pieces[0].Off != 1<<30 || len(s.Pieces[0].Data) != storeSize {
		t.Fatalf("series: %d responses, pieces %+v", s.Count, s.Pieces)
	}
	op, aeth, off, n := s.Response(s.Count - 1)
	if op != decode.OpReadResponseLast || !aeth || off != uint64(s.Count-1)*1024 || n != 1023 {
		t.Errorf("last response: %v %v [%d, +%d)", op, aeth, off, n)
	}
	data, known := make([]byte, 8), make([]bool, 8)
	if k := s.Fill(1<<30-2, data, known); k != 4 || string(data[2:6]) != "data" || known[1] || !known[2] || known[6] {
		t.Errorf("Fill around the written bytes: %q %v (%d known)", data, known, k)
	}
	if n := m.Cache().Total().Hits + m.Cache().Total().Misses; n != 1+1<<19 {
		t.Errorf("%d translations, want one per page of the READ plus the WRITE's", n)
	}
	if next := m.feed(req{op: decode.OpSendOnly, psn: 101 + 1<<21, ack: true}); next.Drop != DropNone || len(next.Responses) != 1 {
		t.Errorf("the QP did not expect the PSN after the READ's responses: drop %v, %d responses", next.Drop, len(next.Responses))
	}
}
