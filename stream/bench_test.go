package stream

import (
	"runtime"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// The benchmarks below read a 20,000-packet capture (read_atomic.pcap's
// packets over and over) per iteration and report per packet (ns/op is
// per packet; allocs/op must stay 0 in the steady state: what the loop
// allocates once is spread over 20,000 packets and rounds to 0).

const benchPackets = 20000

func benchEach(b *testing.B, run func(path string)) {
	path, _ := writeCapture(b, benchPackets)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += benchPackets {
		run(path)
	}
}

func openBench(b *testing.B, path string) *Source {
	src, err := Open(path, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkRead: the one loop over a source, frames set.
func BenchmarkRead(b *testing.B) {
	var f decode.Frame
	benchEach(b, func(path string) {
		src := openBench(b, path)
		if err := src.Read(func(pk *Packet) error { pk.SetFrame(&f); return nil }); err != nil {
			b.Fatal(err)
		}
		src.Close()
	})
}

// BenchmarkParallel: Parallel with a render that appends the opcode.
func BenchmarkParallel(b *testing.B) {
	for _, procs := range []int{1, 2} {
		b.Run("procs="+string(rune('0'+procs)), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			dec := decode.NewDecoder()
			dec.SkipCRCs = true
			benchEach(b, func(path string) {
				src := openBench(b, path)
				_, err := src.Parallel(ParallelOptions{Decoder: dec, Workers: 1,
					NewRender: func() Render {
						return func(dst []byte, p *decode.Packet) []byte { return append(dst, byte(p.BTH.Opcode)) }
					},
					Emit: func(int, []byte) {}})
				if err != nil {
					b.Fatal(err)
				}
				src.Close()
			})
		})
	}
}

// BenchmarkTrack: Track with the tracker and every ICRC checked, as stats
// reads. Its allocations are the tracker's: read_atomic.pcap played over
// and over makes every request a duplicate, and flow formats each
// duplicate's expert text as it finds it.
func BenchmarkTrack(b *testing.B) {
	for _, procs := range []int{1, 2} {
		b.Run("procs="+string(rune('0'+procs)), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			benchEach(b, func(path string) {
				src := openBench(b, path)
				_, err := src.Track(TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{Tracker: flow.New(flow.Options{})}})
				if err != nil {
					b.Fatal(err)
				}
				src.Close()
			})
		})
	}
}

// TestNoAllocationPerPacket: reading, and Parallel's both paths,
// allocate per source (buffers, batches), never per packet: a capture
// twice as long costs no more allocations.
func TestNoAllocationPerPacket(t *testing.T) {
	short, _ := writeCapture(t, 2000)
	long, _ := writeCapture(t, 20000)
	dec := decode.NewDecoder()
	runs := map[string]func(path string){
		"Read": func(path string) {
			src, _ := Open(path, "", nil)
			var f decode.Frame
			src.Read(func(pk *Packet) error { pk.SetFrame(&f); return nil })
			src.Close()
		},
		"Parallel": func(path string) {
			src, _ := Open(path, "", nil)
			buf := make([]byte, 0, 64)
			src.Parallel(ParallelOptions{Decoder: dec, Workers: 1,
				NewRender: func() Render {
					return func(dst []byte, p *decode.Packet) []byte { return append(dst, byte(p.BTH.Opcode)) }
				},
				Emit: func(_ int, out []byte) { buf = append(buf[:0], out...) }})
			src.Close()
		},
	}
	for _, procs := range []int{1, 2} {
		for name, run := range runs {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				a := testing.AllocsPerRun(3, func() { run(short) })
				b := testing.AllocsPerRun(3, func() { run(long) })
				if b > a+20 { // goroutine and channel noise, not 18,000 packets
					t.Errorf("%s, GOMAXPROCS=%d: %v allocations for 2,000 packets, %v for 20,000", name, procs, a, b)
				}
			}()
		}
	}
}
