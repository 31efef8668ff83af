package decode

import "time"

// MADAnalysis is what a tracker (package flow) found about a MAD: the
// request it answers or the response that answers it, matched by
// transaction ID, and the RMPP transfer it completes. Frame numbers are
// 1-based; 0 means none.
type MADAnalysis struct {
	// ResponseIn is, on a request, the frame of its response. A single
	// pass over the capture learns it only after the request was shown:
	// the tracker fills it from an earlier pass (flow.Options.MADAnswers).
	ResponseIn int
	// ResponseTo is, on a response, the frame of the request it answers,
	// and Time the time since that request.
	ResponseTo int
	Time       time.Duration
	// OrigFrame is, on a request sent again with the same transaction ID
	// (a MAD retry), the frame of its first copy.
	OrigFrame int

	// Reassembled is, on the last DATA segment of an RMPP transfer of
	// several segments, the transfer's data: for SA, the SA data of every
	// segment in segment order, cut to the length PayloadLength gives.
	// Segments are the frames of the segments, in segment order.
	Reassembled []byte
	Segments    []int
}

// madAnalysisFields registers rocetap.mad.* and rocetap.rmpp.* under rt
// and returns them.
func madAnalysisFields(rt *Field) []*Field {
	var all []*Field
	m := func(p *Packet) *MADAnalysis { return &p.Analysis.MAD }
	frame := func(abbrev, name string, get func(*MADAnalysis) int) {
		all = append(all, condUint(rt, abbrev, name, FTUint32, BaseDec, 0, -1, 0,
			func(p *Packet) bool { return p.Analysis.Tracked && get(m(p)) > 0 },
			func(p *Packet) uint64 { return uint64(get(m(p))) }))
	}
	frame("rocetap.mad.response_in", "Response in frame", func(a *MADAnalysis) int { return a.ResponseIn })
	frame("rocetap.mad.response_to", "Response to the request in frame", func(a *MADAnalysis) int { return a.ResponseTo })
	all = append(all, condUint(rt, "rocetap.mad.time", "Time since the request", FTRelTime, BaseNone, 0, -1, 0,
		func(p *Packet) bool { return p.Analysis.Tracked && m(p).ResponseTo > 0 },
		func(p *Packet) uint64 { return uint64(m(p).Time) }))
	frame("rocetap.mad.original_frame", "Same transaction ID first sent in frame (MAD retry)", func(a *MADAnalysis) int { return a.OrigFrame })
	reassembled := func(p *Packet) bool { return p.Analysis.Tracked && m(p).Reassembled != nil }
	all = append(all, multiField(rt, "rocetap.rmpp.segment_frame", "RMPP segment in frame", FTUint32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if !reassembled(p) {
			return out
		}
		for _, f := range m(p).Segments {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	}))
	all = append(all, condUint(rt, "rocetap.rmpp.segment_count", "RMPP segments", FTUint32, BaseDec, 0, -1, 0, reassembled,
		func(p *Packet) uint64 { return uint64(len(m(p).Segments)) }))
	all = append(all, condUint(rt, "rocetap.rmpp.length", "Reassembled RMPP data length", FTUint32, BaseDec, 0, -1, 0, reassembled,
		func(p *Packet) uint64 { return uint64(len(m(p).Reassembled)) }))
	all = append(all, multiField(rt, "rocetap.rmpp.reassembled", "Reassembled RMPP data", FTBytes, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if !reassembled(p) {
			return out
		}
		return append(out, Value{B: m(p).Reassembled})
	}))
	return all
}
