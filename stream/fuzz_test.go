package stream

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// FuzzRoad feeds arbitrary bytes to the packet road as a stream on stdin
// and reads it twice: through the tracked pass (decode, session tracker)
// and through the parallel decode with ordered output. Neither may panic,
// both must hand on the same packets in the same order, and a stream that
// stops part-way must stop both with a *CorruptError after the same
// packets.
func FuzzRoad(f *testing.F) {
	for _, name := range []string{"rxe/read_atomic.pcap", "synth/sll_sll2_raw.pcapng", "synth/erf_ib_eth.pcap", "synth/truncated.pcap"} {
		data, err := os.ReadFile(filepath.Join(td, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)*2/3])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tracked []string
		var trackErr error
		if s, err := Open("-", "", bytes.NewReader(data)); err == nil {
			_, trackErr = s.Track(TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{
				Tracker: flow.New(flow.Options{}),
				Each: func(p *decode.Packet) bool {
					tracked = append(tracked, strconv.Itoa(p.Frame.Number)+"/"+strconv.Itoa(p.Frame.CapLen)+"/"+strconv.Itoa(int(p.Has)))
					return true
				}}})
			s.Close()
		} else {
			return // not a capture: nothing was read
		}
		s, err := Open("-", "", bytes.NewReader(data))
		if err != nil {
			t.Fatalf("the second open failed where the first did not: %v", err)
		}
		defer s.Close()
		var parallel []string
		_, parErr := s.Parallel(ParallelOptions{
			Decoder: decode.NewDecoder(),
			NewRender: func() Render {
				return func(dst []byte, p *decode.Packet) []byte {
					return append(dst, strconv.Itoa(p.Frame.Number)+"/"+strconv.Itoa(p.Frame.CapLen)+"/"+strconv.Itoa(int(p.Has))...)
				}
			},
			Emit: func(i int, out []byte) { parallel = append(parallel, string(out)) },
		})
		if len(tracked) != len(parallel) {
			t.Fatalf("tracked pass handed on %d packets, parallel path %d", len(tracked), len(parallel))
		}
		for i := range tracked {
			if tracked[i] != parallel[i] {
				t.Fatalf("packet %d: tracked %s, parallel %s", i+1, tracked[i], parallel[i])
			}
		}
		var c1, c2 *CorruptError
		if errors.As(trackErr, &c1) != errors.As(parErr, &c2) {
			t.Fatalf("the tracked pass ended with %v, the parallel path with %v", trackErr, parErr)
		}
	})
}
