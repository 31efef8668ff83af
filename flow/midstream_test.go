package flow_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/editcap"
)

// A capture may start anywhere: mid-message, mid-connection, on a
// response, on a retransmission. Every real capture is cut at every
// frame; the tail must produce no finding the whole capture did not have
// at the same frame, except mid_stream ("context unknown").
func TestStartAnywhere(t *testing.T) {
	files, _ := filepath.Glob(rxe + "*.pcap")
	if len(files) == 0 {
		t.Fatal("no captures in " + rxe)
	}
	cuts := 0
	for _, f := range files {
		in, _, err := editcap.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		full := map[string]bool{}
		for _, e := range trackFrames(in).events {
			full[eventKey(e, 0)] = true
		}
		for k := 1; k < len(in); k++ {
			cuts++
			for _, e := range trackFrames(in[k:]).events {
				if e.Kind&(decode.EventMidStream|decode.EventConnect|decode.EventDisconnect) != 0 {
					continue
				}
				if !full[eventKey(e, k)] {
					t.Errorf("%s from frame %d: %s at frame %d (%s) is not in the whole capture's analysis", filepath.Base(f), k+1, kindName(e.Kind), e.Frame+k, e.Text)
				}
			}
		}
	}
	t.Logf("%d captures cut at %d places", len(files), cuts)
}

func eventKey(e flow.Event, shift int) string {
	f := e.Frame
	if f > 0 {
		f += shift
	}
	if e.Kind == decode.EventNoResponse {
		f = 0 // cut before the first transmission, the request is a retransmission: still unanswered
	}
	return kindName(e.Kind) + "@" + strconv.Itoa(f)
}

func kindName(k decode.Event) string { n, _, _ := decode.EventInfo(k); return n }

// The synthetic captures (every opcode, truncated frames, bad ICRCs, native
// IB, RoCEv1, PFC, ...) go through the tracker without a panic, and every
// truncated or corrupt frame with a transport header is reported.
func TestSyntheticCaptures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/synth/*")
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".pcap") && !strings.HasSuffix(f, ".pcapng") {
			continue
		}
		r, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n++
		var evs []flow.Event
		tr := flow.New(flow.Options{OnEvent: func(e *flow.Event) { evs = append(evs, *e) }})
		dec := decode.NewDecoder()
		var p decode.Packet
		for i := 0; ; i++ {
			data, info, err := r.Next()
			if err != nil {
				break
			}
			p.Frame = decode.Frame{Number: i + 1, Time: info.Timestamp, Len: info.Length}
			dec.Decode(&p, data, info.LinkType)
			evs = evs[:0]
			tr.Track(&p)
			if p.Has&decode.HdrBTH == 0 || p.BTH.Opcode == decode.CNP || !p.BTH.Opcode.Known() {
				continue
			}
			if p.Flags&decode.FlagTruncated != 0 && p.Analysis.Events&decode.EventTruncated == 0 {
				t.Errorf("%s frame %d: truncated but not reported", filepath.Base(f), i+1)
			}
			if p.Flags&decode.FlagICRCBad != 0 && p.Analysis.Events&decode.EventICRCBad == 0 {
				t.Errorf("%s frame %d: bad ICRC not reported", filepath.Base(f), i+1)
			}
		}
		r.Close()
		tr.Flush()
	}
	if n < 10 {
		t.Fatalf("only %d synthetic captures read", n)
	}
}
