package replay_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/replay"
)

// frames packs Ethernet frames as [2-byte length][frame]..., the fuzz
// input's format.
func frames(tb testing.TB, pcap string) []byte {
	tb.Helper()
	r, err := capture.Open(pcap)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var out []byte
	for {
		data, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(data)))
		out = append(out, data...)
	}
}

// FuzzReplay feeds arbitrary frames, as if captured, to a replay of
// read_atomic's responder: whatever the packets say, replay must not
// panic, its reports must be well formed and its counts consistent.
func FuzzReplay(f *testing.F) {
	for _, name := range []string{"read_atomic", "err_psn_seq", "err_rnr_recover", "pt_write", "send_inv"} {
		f.Add(frames(f, "../testdata/rxe/"+name+".pcap"))
	}
	file, err := mpt.Load("../testdata/rxe/read_atomic.mpt.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// Inputs of even length describe every multi-packet READ as a
		// series, so the aligner's series path is fuzzed too.
		m, err := hca.NewModel(&file.Config, hca.Options{Profile: hca.ProfileRXE, ReadSeriesAt: 1 - len(in)%2})
		if err != nil {
			t.Fatal(err)
		}
		rp, err := replay.New(m, replay.Options{Responder: file.Responder, QPs: file.QPs, MaxPending: 16, MaxDivergences: 50, MaxCompletions: 50})
		if err != nil {
			t.Fatal(err)
		}
		var p decode.Packet
		t0 := time.Unix(1767225600, 0)
		for n := 1; len(in) >= 2; n++ {
			l := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			l = min(l, len(in))
			p.Frame = decode.Frame{Number: n, Time: t0.Add(time.Duration(n) * time.Millisecond), Len: l}
			decode.Decode(&p, in[:l], decode.LinkTypeEthernet)
			rp.Feed(&p)
			in = in[l:]
		}
		rep := rp.Finish()
		if rep.Compared > rep.CapturedResponses || rep.Requests+rep.CapturedResponses+rep.Ignored.Total() != rep.Packets {
			t.Fatalf("counts: %d compared of %d captured; %d requests + %d responses + %d ignored != %d packets",
				rep.Compared, rep.CapturedResponses, rep.Requests, rep.CapturedResponses, rep.Ignored.Total(), rep.Packets)
		}
		if !json.Valid(rep.AppendJSON(nil)) {
			t.Fatal("invalid JSON report")
		}
		_ = rep.AppendText(nil)
		var buf bytes.Buffer
		if err := rep.WriteJUnit(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
