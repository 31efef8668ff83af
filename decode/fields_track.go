package decode

// Fields of the session analysis (see Analysis). They exist only on
// packets a tracker looked at; Field.Stateful marks them so a command knows
// to run the tracker when a filter or -e names one.

func init() {
	rt := byName["rocetap"]
	tracked := func(p *Packet) bool { return p.Analysis.Tracked }
	var all []*Field
	u := func(abbrev, name string, t FieldType, base Base, ok func(*Packet) bool, get func(*Packet) uint64) {
		all = append(all, condUint(rt, abbrev, name, t, base, 0, -1, 0, func(p *Packet) bool { return p.Analysis.Tracked && ok(p) }, get))
	}
	s := func(abbrev, name string, get func(*Packet) string) {
		all = append(all, stringField(rt, abbrev, name, 0, func(p *Packet) string {
			if !p.Analysis.Tracked {
				return ""
			}
			return get(p)
		}))
	}
	frame := func(abbrev, name string, get func(a *Analysis) int) {
		u(abbrev, name, FTUint32, BaseDec, func(p *Packet) bool { return get(&p.Analysis) > 0 }, func(p *Packet) uint64 { return uint64(get(&p.Analysis)) })
	}
	a := func(p *Packet) *Analysis { return &p.Analysis }

	u("rocetap.session.id", "Session", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Session > 0 }, func(p *Packet) uint64 { return uint64(a(p).Session) })
	s("rocetap.session.pairing", "Session pairing learned from", func(p *Packet) string {
		if a(p).Session == 0 {
			return ""
		}
		return a(p).Learned.String()
	})
	s("rocetap.session.direction", "Direction", func(p *Packet) string {
		if a(p).Session == 0 {
			return ""
		}
		return [2]string{"A->B", "B->A"}[a(p).Dir&1]
	})

	s("rocetap.msg.kind", "Message kind", func(p *Packet) string { return a(p).MsgKind.String() })
	msg := func(p *Packet) bool { return a(p).MsgKind != MsgNone }
	u("rocetap.msg.length", "Message length", FTUint64, BaseDec, msg, func(p *Packet) uint64 { return a(p).MsgLength })
	frame("rocetap.msg.first_frame", "Message starts in frame", func(a *Analysis) int { return a.MsgFirst })
	u("rocetap.msg.packets", "Message packets", FTUint32, BaseDec, msg, func(p *Packet) uint64 { return uint64(a(p).MsgPackets) })
	u("rocetap.msg.partial", "Message started before the capture", FTBoolean, BaseNone, func(p *Packet) bool { return msg(p) && a(p).MsgPartial }, func(p *Packet) uint64 { return 1 })

	u("rocetap.analysis.expected_psn", "Expected PSN", FTUint24, BaseDec, func(p *Packet) bool { return a(p).HasExpected }, func(p *Packet) uint64 { return uint64(a(p).ExpectedPSN) })
	u("rocetap.analysis.psn_gap", "PSNs missing before this packet", FTUint32, BaseDec, func(p *Packet) bool { return a(p).Events&EventPSNGap != 0 }, func(p *Packet) uint64 { return uint64(a(p).Lost) })
	for i := range numEvents {
		e := Event(1) << i
		if e == EventPSNGap {
			continue
		}
		in := &eventTable[i]
		u("rocetap.analysis."+in.name, in.summary, FTBoolean, BaseNone, func(p *Packet) bool { return a(p).Events&e != 0 }, func(p *Packet) uint64 { return 1 })
	}
	frame("rocetap.analysis.original_frame", "First sent in frame", func(a *Analysis) int { return a.OrigFrame })
	s("rocetap.analysis.cause", "Retransmission cause", func(p *Packet) string { return a(p).Cause.String() })
	frame("rocetap.analysis.cause_frame", "Retransmission asked for in frame", func(a *Analysis) int { return a.CauseFrame })
	frame("rocetap.analysis.request_frame", "Response to the request in frame", func(a *Analysis) int { return a.RequestFrame })
	u("rocetap.analysis.ack_rtt", "Time since the request", FTRelTime, BaseNone, func(p *Packet) bool { return a(p).HasRTT }, func(p *Packet) uint64 { return uint64(a(p).RTT) })
	acked := multiField(rt, "rocetap.analysis.acked_frame", "Completes the request in frame", FTUint32, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if !p.Analysis.Tracked {
			return out
		}
		for _, f := range p.Analysis.Acked {
			out = append(out, Value{U: uint64(f)})
		}
		return out
	})
	all = append(all, acked)
	u("rocetap.analysis.acked_count", "Requests completed", FTUint32, BaseDec, func(p *Packet) bool { return len(a(p).Acked) > 0 }, func(p *Packet) uint64 { return uint64(len(a(p).Acked)) })
	u("rocetap.analysis.mtu", "Path MTU (inferred)", FTUint32, BaseDec, func(p *Packet) bool { return a(p).MTU > 0 }, func(p *Packet) uint64 { return uint64(a(p).MTU) })

	s("rocetap.expert.severity", "Expert severity", func(p *Packet) string {
		if s, ok := a(p).Events.MaxSeverity(); ok {
			return s.String()
		}
		return ""
	})
	all = append(all, multiField(rt, "rocetap.expert.kind", "Expert event", FTString, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if !tracked(p) {
			return out
		}
		for i := range numEvents {
			if p.Analysis.Events&(1<<i) != 0 {
				out = append(out, Value{S: eventTable[i].name})
			}
		}
		return out
	}))
	all = append(all, mptFields(rt)...)
	for _, f := range all {
		f.Stateful = true
	}
}
