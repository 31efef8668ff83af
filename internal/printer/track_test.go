package printer

import (
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// eachTracked decodes frames (numbered from 1) and runs them through one
// tracker made with opts, as the commands do, calling fn (when not nil)
// with each frame and its packet (p is reused: valid during the call);
// it returns the tracker.
func eachTracked(frames []testcap.Frame, opts flow.Options, fn func(fr testcap.Frame, p *decode.Packet)) *flow.Tracker {
	tr := flow.New(opts)
	var p decode.Packet
	for i, fr := range frames {
		p.Frame.Number, p.Frame.Len, p.Frame.Time = i+1, fr.Len, fr.Time
		decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
		tr.Track(&p)
		if fn != nil {
			fn(fr, &p)
		}
	}
	return tr
}
