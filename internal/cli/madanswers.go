package cli

import (
	"os"

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
	return namesField(fields, flt, func(name string) bool { return name == responseIn })
}

// namesField reports whether a field -e or the -Y filter names is one of
// those want accepts.
func namesField(fields []string, flt *filter.Filter, want func(string) bool) bool {
	for _, f := range fields {
		if want(f) {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if want(f.Abbrev) {
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
// (flow.Options.Prior). One read serves both. Only a regular file can be
// read twice: stdin, a pipe or a device gets no first pass (nil).
func firstPass(o *readOptions, tf *trackFlags, ios IO, skipCRCs bool, mpt *hca.Model, mad, ulp bool) (*flow.Tracker, error) {
	if (!mad && !ulp) || !rereadable(o.Path) {
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

// rereadable reports whether path names a regular file, which a second
// pass can read again (not stdin, a FIFO such as <(...), or a device).
func rereadable(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
