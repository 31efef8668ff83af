package cli

import (
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
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

// madAnswers reads the capture once through a tracker to learn which
// frame answers each MAD request, for the pass that shows the packets
// (flow.Options.MADAnswers): two passes, as tshark -2. A capture on stdin
// cannot be read twice: it gets none, and response_in stays empty.
func madAnswers(o *readOptions, ios IO, skipCRCs bool) (map[int]int, error) {
	if o.Path == "-" || o.Path == "" {
		return nil, nil
	}
	first := *o
	first.out, first.live = nil, false
	tr := flow.New(flow.Options{RecordMADAnswers: true})
	if _, err := runTracked(&first, ios, skipCRCs, stream.TrackOptions{Pass: stream.Pass{Tracker: tr}}); err != nil && !isDamaged(err) {
		return nil, err
	}
	return tr.MADAnswers(), nil
}
