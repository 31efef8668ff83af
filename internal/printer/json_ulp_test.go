package printer

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestJSONTrackedMatchesReference: on tracked packets, where the
// stateful fields and the upper-layer protocols' (NVMe-oF, NFS over RDMA,
// iSER, SMB Direct) are filled, JSONPrinter, which walks only the fields
// a packet's shape allows, prints every frame of every test capture as
// appendJSONRef, which walks the whole registry; and no field that
// decode.Field.NeedsULP says needs an upper-layer protocol occurs in a
// packet without one. The NVMe-oF captures without their CM exchange
// are tracked with -d's QP as the CLI tests do.
func TestJSONTrackedMatchesReference(t *testing.T) {
	da, _, err := flow.ParseDecodeAs("infiniband.bth.destqp==0x13,nvme-rdma")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range []string{"rxe/*.pcap", "synth/*.pcap*", "ulp/*.pcap", "ulp/synth/*.pcap", "path/*.pcapng"} {
		m, err := filepath.Glob(filepath.Join("../../testdata", g))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	var ulpFields []*decode.Field
	for _, f := range decode.Fields() {
		if f.NeedsULP() {
			ulpFields = append(ulpFields, f)
		}
	}
	if len(ulpFields) < 100 {
		t.Fatalf("%d fields need an upper-layer protocol; NVMe-oF alone has more", len(ulpFields))
	}
	jp := NewJSONPrinter()
	var got, want []byte
	frames, ulpFrames := 0, 0
	for _, path := range paths {
		opts := flow.Options{}
		if filepath.Base(filepath.Dir(path)) == "synth" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "ulp" {
			opts.DecodeAs = []flow.DecodeAs{da}
		}
		eachTracked(testcap.ReadFile(t, path), opts, func(fr testcap.Frame, p *decode.Packet) {
			frames++
			if p.Analysis.ULP != nil {
				ulpFrames++
			} else {
				for _, f := range ulpFields {
					if f.Present(p) {
						t.Fatalf("frame %d of %s: %s present without an upper-layer protocol", fr.Number, path, f.Abbrev)
					}
				}
			}
			got = jp.Append(got[:0], p)
			want = appendJSONRef(want[:0], p, nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("frame %d of %s:\n got %s\nwant %s", fr.Number, path, got, want)
			}
		})
	}
	if ulpFrames == 0 {
		t.Fatal("no frame with an upper-layer protocol: the test checks nothing of NeedsULP")
	}
	t.Logf("%d frames, %d with an upper-layer protocol, %d fields need one", frames, ulpFrames, len(ulpFields))
}

// TestJSONShapeCacheBounded: a capture of ever new header sets (fuzzed)
// does not grow a printer's field lists without end, and a list rebuilt
// after the cache was emptied prints as before.
func TestJSONShapeCacheBounded(t *testing.T) {
	ps := benchPackets(t)
	jp := NewJSONPrinter()
	want := jp.Append(nil, &ps[0])
	for i := range 3 * maxHasSets {
		jp.candidates(jsonShape{has: decode.Hdr(i) << 40, ulp: i%2 == 0})
		if len(jp.byHas) > maxHasSets {
			t.Fatalf("after %d sets: %d cached", i+1, len(jp.byHas))
		}
	}
	if got := jp.Append(nil, &ps[0]); !bytes.Equal(got, want) {
		t.Fatalf("after the cache was emptied:\n got %s\nwant %s", got, want)
	}
}
