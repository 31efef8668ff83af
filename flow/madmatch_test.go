package flow_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// madRun tracks a synthetic capture and returns, per frame, the MAD
// analysis and the values of some fields, and the expert events.
type madFrame struct {
	mad    decode.MADAnalysis
	fields map[string]string
}

func madTrack(t *testing.T, name string, o flow.Options, fields ...string) ([]madFrame, []string, *flow.Tracker) {
	t.Helper()
	var evs []string
	o.OnEvent = func(e *flow.Event) { evs = append(evs, ev(e.Frame, kindName(e.Kind))) }
	tr := flow.New(o)
	if !strings.Contains(name, "/") {
		name = "synth/" + name
	}
	r, err := capture.Open("../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []madFrame
	var p decode.Packet
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		decode.Decode(&p, data, info.LinkType)
		tr.Track(&p)
		f := madFrame{mad: p.Analysis.MAD, fields: map[string]string{}}
		f.mad.Segments = slices.Clone(f.mad.Segments)
		for _, name := range fields {
			fd := decode.FieldByName(name)
			if fd == nil {
				t.Fatalf("no field %s", name)
			}
			var s []string
			for _, v := range fd.Values(&p, nil) {
				s = append(s, string(fd.AppendValue(nil, v)))
			}
			f.fields[name] = strings.Join(s, ",")
		}
		out = append(out, f)
	}
	tr.Flush()
	return out, evs, tr
}

// TestMADMatching: CM and SA requests matched to their responses by
// transaction ID over RoCEv2, a MAD retry, RMPP STOP and ABORT, and the
// query never answered (testdata/README.md says what each frame is).
func TestMADMatching(t *testing.T) {
	frames, evs, tr := madTrack(t, "roce_sa.pcap", flow.Options{RecordMADAnswers: true})
	type want struct {
		to, orig int
		time     time.Duration
		segs     []int
	}
	wants := map[int]want{
		2:  {to: 1, time: 250 * time.Microsecond}, // CM REP → REQ
		5:  {to: 4, time: 250 * time.Microsecond}, // DREP → DREQ
		7:  {to: 6, time: 250 * time.Microsecond}, // first segment
		9:  {to: 6, time: 750 * time.Microsecond}, // second
		11: {to: 6, time: 1250 * time.Microsecond, segs: []int{7, 9, 11}},
		14: {orig: 13},                               // the retry
		15: {to: 13, time: 10500 * time.Microsecond}, // timed from the first copy
		17: {to: 16, time: 250 * time.Microsecond},
		20: {to: 19, time: 250 * time.Microsecond},
		24: {to: 23, time: 250 * time.Microsecond},
	}
	if len(frames) != 24 {
		t.Fatalf("%d frames, want 24", len(frames))
	}
	for i, f := range frames {
		w := wants[i+1]
		m := f.mad
		if m.ResponseTo != w.to || m.OrigFrame != w.orig || m.Time != w.time || !slices.Equal(m.Segments, w.segs) {
			t.Errorf("frame %d: response_to %d, original %d, time %v, segments %v; want %d, %d, %v, %v",
				i+1, m.ResponseTo, m.OrigFrame, m.Time, m.Segments, w.to, w.orig, w.time, w.segs)
		}
	}
	var mad []string
	for _, e := range evs {
		if strings.Contains(e, "mad_") {
			mad = append(mad, e)
		}
	}
	if want := []string{"22:mad_no_response"}; !slices.Equal(mad, want) {
		t.Errorf("MAD events %v, want %v", mad, want)
	}
	// A second pass with the first's answers gives the requests their
	// response_in.
	ans := tr.MADAnswers()
	frames, _, _ = madTrack(t, "roce_sa.pcap", flow.Options{MADAnswers: ans})
	in := map[int]int{}
	for i, f := range frames {
		if f.mad.ResponseIn > 0 {
			in[i+1] = f.mad.ResponseIn
		}
	}
	wantIn := map[int]int{1: 2, 4: 5, 6: 7, 13: 15, 16: 17, 19: 20, 23: 24}
	if fmt.Sprint(in) != fmt.Sprint(wantIn) {
		t.Errorf("response_in %v, want %v", in, wantIn)
	}
}

// TestRMPPReassembly: the records of a GetTableResp sent in several RMPP
// segments are decoded once, on the last segment, from the segments' SA
// data; the expected values are those internal/synth put in the records
// (IBA 15.2.5 layouts), not what the decoder reads.
func TestRMPPReassembly(t *testing.T) {
	fields := []string{"infiniband.pathrecord.dlid", "infiniband.pathrecord.flowlabel", "infiniband.pathrecord.preference",
		"infiniband.sa.lid", "infiniband.linkrecord.serviceid", "infiniband.linkrecord.servicelease", "rocetap.rmpp.length"}
	frames, _, _ := madTrack(t, "ib_sa.pcap", flow.Options{}, fields...)
	cases := []struct {
		frame int
		segs  []int
		field string
		want  string
	}{
		{6, []int{4, 6}, "infiniband.pathrecord.dlid", "0x0002,0x0003,0x0004,0x0005,0x0006"},
		{6, []int{4, 6}, "infiniband.pathrecord.flowlabel", "0x000000,0x000100,0x000200,0x000300,0x000400"},
		{6, []int{4, 6}, "infiniband.pathrecord.preference", "0x00,0x01,0x02,0x03,0x04"},
		{6, []int{4, 6}, "rocetap.rmpp.length", "320"},
		{13, []int{11, 13}, "infiniband.sa.lid", "0x0001,0x0002,0x0003"},
		{13, []int{11, 13}, "rocetap.rmpp.length", "336"},
		{22, []int{20, 22}, "infiniband.linkrecord.serviceid", "0x0000000001060106,0x0000000001060106"},
		{22, []int{20, 22}, "infiniband.linkrecord.servicelease", "0xffffffff,0x00000e10"},
	}
	for _, c := range cases {
		f := frames[c.frame-1]
		if got := f.fields[c.field]; got != c.want || !slices.Equal(f.mad.Segments, c.segs) {
			t.Errorf("frame %d %s: %q from segments %v, want %q from %v", c.frame, c.field, got, f.mad.Segments, c.want, c.segs)
		}
	}
	// The first segment shows no records: they are decoded once.
	if got := frames[3].fields["infiniband.pathrecord.dlid"]; got != "" {
		t.Errorf("frame 4 (first of 2 segments): records %q, want none", got)
	}
}

// TestMADMatchingRxe: in the kernel's CM captures (Linux rdma_cm over
// rxe) every REP, REJ and DREP answers the REQ or DREQ with its
// transaction ID, and no request is left unanswered.
func TestMADMatchingRxe(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[int]int // response frame -> request frame
	}{
		{"rxe/cm_rping.pcap", map[int]int{2: 1, 29: 28}},
		{"rxe/cm_perftest.pcap", map[int]int{2: 1, 25: 24, 62: 61, 64: 63}},
		{"rxe/cm_reject.pcap", map[int]int{2: 1}},
		{"rxe/cm_ucmatose.pcap", map[int]int{2: 1, 13: 12}},
		{"rxe/cm_udaddy.pcap", map[int]int{2: 1}},
	} {
		frames, evs, _ := madTrack(t, c.file, flow.Options{})
		got := map[int]int{}
		for i, f := range frames {
			if f.mad.ResponseTo > 0 {
				got[i+1] = f.mad.ResponseTo
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: responses %v, want %v", c.file, got, c.want)
		}
		for _, e := range evs {
			if strings.Contains(e, "mad_no_response") {
				t.Errorf("%s: %s", c.file, e)
			}
		}
	}
}
