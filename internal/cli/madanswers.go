package cli

import (
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/stream"
)

// responseIn is the field only a second pass can fill: on a MAD request,
// the frame of its response, which comes after the request is shown.
const responseIn = "rocetap.mad.response_in"

// needsMADAnswers reports whether -e or -Y names rocetap.mad.response_in.
func needsMADAnswers(fields []string, flt *filter.Filter) bool {
	for _, f := range fields {
		if f == responseIn {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if f.Abbrev == responseIn {
				return true
			}
		}
	}
	return false
}

// firstPass reads the capture once through a tracker, for the pass that
// shows the packets: what only the end of the capture tells, as tshark -2
// does. mad records which frame answers each MAD request
// (rocetap.mad.response_in, flow.Options.MADAnswers); ulp keeps every ULP
// command so that its completion, data and latency reach all its packets
// (flow.Options.Prior). One read serves both. A capture on stdin cannot be
// read twice: it gets no first pass (nil).
func firstPass(o *readOptions, tf *trackFlags, ios IO, skipCRCs bool, mpt *hca.Model, mad, ulp bool) (*flow.Tracker, error) {
	if (!mad && !ulp) || o.Path == "-" || o.Path == "" {
		return nil, nil
	}
	first := *o
	first.out, first.live = nil, false
	tr := flow.New(tf.options(flow.Options{MPT: mpt, RecordMADAnswers: mad, KeepULP: ulp}))
	if _, err := runTracked(&first, ios, skipCRCs, stream.TrackOptions{Pass: stream.Pass{Tracker: tr}}); err != nil && !isDamaged(err) {
		return nil, err
	}
	return tr, nil
}
