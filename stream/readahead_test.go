package stream

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// TestReadAhead: with the capture reader's read-ahead (ROCETAP_READAHEAD=1)
// Track finds exactly what it finds without it, on one goroutine and
// with the reader goroutine (whose batches keep the read-ahead buffers),
// and a capture cut short stops after the same packets.
func TestReadAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	path, _ := writeCapture(t, 40000)
	if st, err := os.Stat(path); err != nil || st.Size() < 5<<20 {
		t.Fatalf("capture of %v bytes (%v): too small to read ahead in several buffers", st.Size(), err)
	}
	run := func(path, ahead, workers string) ([]tracked, int, error) {
		t.Setenv("ROCETAP_READAHEAD", ahead)
		t.Setenv("ROCETAP_WORKERS", workers)
		var seen []tracked
		events := 0
		tr := flow.New(flow.Options{OnEvent: func(*flow.Event) { events++ }})
		_, err := open(t, path).Track(TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{
			Tracker: tr,
			Each: func(p *decode.Packet) bool {
				seen = append(seen, tracked{p.Frame.Number, p.Analysis.Session, p.Analysis.Events})
				return true
			}}})
		return seen, events, err
	}
	ref, refEvents, err := run(path, "0", "1")
	if err != nil || len(ref) != 40000 {
		t.Fatalf("without read-ahead: %d packets, %v", len(ref), err)
	}
	for _, workers := range []string{"1", "2"} {
		got, events, err := run(path, "1", workers)
		if err != nil || !slices.Equal(got, ref) || events != refEvents {
			t.Errorf("read ahead, ROCETAP_WORKERS=%s: %d packets, %d events, %v; want %d, %d", workers, len(got), events, err, len(ref), refEvents)
		}
	}
	cut := cutCapture(t, path, 30001)
	for _, ahead := range []string{"0", "1"} {
		seen, _, err := run(cut, ahead, "1")
		var ce *CorruptError
		if len(seen) != 30000 || !errors.As(err, &ce) || ce.Packets != 30000 {
			t.Errorf("ROCETAP_READAHEAD=%s: capture cut in packet 30001: %d passed, %v", ahead, len(seen), err)
		}
	}
}
