package pathcmp

import "github.com/rocetap/rocetap/decode"

// Collecting a capture in a pass that another reader drives (the
// sessions, stats and expert commands read each capture once, for their
// own report and for the comparison): NewCapture, then Add with every
// frame in capture order after the flow tracker has seen it, then
// Resolve with that tracker's Resolve.

// NewCapture returns an empty capture named name.
func NewCapture(name string) *Capture {
	return &Capture{Name: name, links: map[decode.LinkType]int{}, flowID: map[flowKey]uint32{}}
}

// Add records the next frame of the capture (every frame, in order:
// frame numbers index the records); p.Analysis.Session is its session.
func (c *Capture) Add(p *decode.Packet) {
	c.links[p.Frame.LinkType]++
	c.add(p)
}

// Resolve renames the sessions of the frames added to those they
// merged into by the end of the capture (flow.Tracker.Resolve).
func (c *Capture) Resolve(resolve func(uint32) uint32) {
	for i := range c.recs {
		if x := &c.recs[i]; x.session != 0 {
			x.session = resolve(x.session)
		}
	}
}
