package decode

import "time"

// Fabric is what the tracker's fabric-health analysis (package flow) found
// about a packet: congestion control (DCQCN: ECN CE marks, CNPs, the
// sender's reaction), the fields under rocetap.cc.*, and priority flow
// control (PFC and PAUSE frames, traffic sent while paused), the fields
// under rocetap.pfc.*. It is part of Analysis: Decode clears it, the
// tracker fills it. Frame numbers are 1-based; 0 means "none".
type Fabric struct {
	// On a CNP: the first CE-marked frame of the flow it answers, and
	// the time since (the notification point's reaction). On a packet
	// with ce_without_cnp: the mark that got no CNP.
	CEFrame  uint32
	CNPDelay time.Duration
	// On a CNP: the time since the previous CNP to the same QP, and the
	// CNPs to it per second since its first (from the second CNP on).
	CNPGap  time.Duration
	CNPRate uint32
	// On a CNP: the marked flow's sending rate (bits/s) over the rate
	// window before it. On the packet that closes the window after a CNP
	// (CNPFrame): the rate before that CNP and the rate over the window
	// after it (the reaction point's cut).
	RateBefore, RateAfter uint64
	CNPFrame              uint32
	// PFC and PAUSE frames: the link speed (bits/s) the pause times are
	// computed at.
	LinkSpeed uint64
	// On a frame with pfc_storm: how long its priority had been paused
	// continuously.
	StormFor time.Duration
	// On a RoCE packet with pfc_paused_traffic: the pause frame in force.
	PauseFrame uint32

	HasDelay, HasGap, HasRate, HasReaction bool
	PFC                                    bool  // a PFC or PAUSE frame the analysis looked at
	HasPrio                                bool  // Prio is known
	Prio                                   uint8 // the packet's priority (pfc_paused_traffic), or the storming one (pfc_storm)
}

// PauseTime is the time q pause quanta ask for at speed bits/s: each
// quantum is 512 bit times (IEEE 802.3 Annex 31B, 802.1Qbb). 0 when the
// speed is not known.
func PauseTime(q uint16, speed uint64) time.Duration {
	if speed == 0 {
		return 0
	}
	return time.Duration(uint64(q) * 512 * uint64(time.Second) / speed)
}

// fabricEventFields are the field names of the fabric-health expert
// events: rocetap.cc.* and rocetap.pfc.* instead of rocetap.analysis.*.
var fabricEventFields = map[Event]string{
	EventCEWithoutCNP:  "rocetap.cc.ce_without_cnp",
	EventCNPWithoutCE:  "rocetap.cc.cnp_without_ce",
	EventNoRateCut:     "rocetap.cc.no_rate_reduction",
	EventCNPUnknownQP:  "rocetap.cc.cnp_unknown_qp",
	EventPFCStorm:      "rocetap.pfc.storm",
	EventPFCPaused:     "rocetap.pfc.paused_traffic",
	EventPFCUnusedPrio: "rocetap.pfc.unused_priority",
}

// EventField returns the name of the boolean field of event kind e:
// rocetap.analysis.<name>, or rocetap.cc.* and rocetap.pfc.* for the
// fabric-health events.
func EventField(e Event) string {
	if f, ok := fabricEventFields[e]; ok {
		return f
	}
	name, _, _ := EventInfo(e)
	return "rocetap.analysis." + name
}

// PFCPriorities calls f for each priority a PFC frame names (its class
// enable vector), with its quanta; a PAUSE frame pauses every priority
// with its one value.
func PFCPriorities(p *Packet, f func(prio int, q uint16)) {
	switch {
	case p.Has&HdrPause != 0:
		for i := range 8 {
			f(i, p.PFC.Quanta[0])
		}
	case p.Has&HdrPFC != 0:
		for i := range 8 {
			if p.PFC.ClassEnable&(1<<i) != 0 {
				f(i, p.PFC.Quanta[i])
			}
		}
	}
}

// registerFabricFields registers rocetap.cc.* and rocetap.pfc.* under rt
// (the expert events among them are registered with the others, in
// registerAnalysisFields).
func registerFabricFields(rt *Field) {
	x := func(p *Packet) *Fabric { return &p.Analysis.Fabric }
	var all []*Field
	u := func(abbrev, name string, t FieldType, base Base, ok func(*Fabric) bool, get func(*Fabric) uint64) {
		all = append(all, condUint(rt, abbrev, name, t, base, 0, -1, 0,
			func(p *Packet) bool { return p.Analysis.Tracked && ok(x(p)) },
			func(p *Packet) uint64 { return get(x(p)) }))
	}
	// rocetap.cc.ce needs no tracker: the IP header says it.
	condUint(rt, "rocetap.cc.ce", "ECN Congestion Experienced (IPv4 or IPv6)", FTBoolean, BaseNone, 0, -1, 0,
		func(p *Packet) bool { e, ok := p.ECN(); return ok && e == 3 && p.Has&HdrBTH != 0 }, func(*Packet) uint64 { return 1 })
	u("rocetap.cc.ce_frame", "CE mark in frame", FTUint32, BaseDec, func(f *Fabric) bool { return f.CEFrame > 0 }, func(f *Fabric) uint64 { return uint64(f.CEFrame) })
	u("rocetap.cc.cnp_delay", "Time from the CE mark to the CNP", FTRelTime, BaseNone, func(f *Fabric) bool { return f.HasDelay }, func(f *Fabric) uint64 { return uint64(f.CNPDelay) })
	u("rocetap.cc.cnp_interval", "Time since the previous CNP to the QP", FTRelTime, BaseNone, func(f *Fabric) bool { return f.HasGap }, func(f *Fabric) uint64 { return uint64(f.CNPGap) })
	u("rocetap.cc.cnps_per_second", "CNPs to the QP per second, since its first", FTUint32, BaseDec, func(f *Fabric) bool { return f.HasGap }, func(f *Fabric) uint64 { return uint64(f.CNPRate) })
	u("rocetap.cc.rate_before", "Sender rate before the CNP (bits/s)", FTUint64, BaseDec, func(f *Fabric) bool { return f.HasRate }, func(f *Fabric) uint64 { return f.RateBefore })
	u("rocetap.cc.rate_after", "Sender rate after the CNP (bits/s)", FTUint64, BaseDec, func(f *Fabric) bool { return f.HasReaction }, func(f *Fabric) uint64 { return f.RateAfter })
	u("rocetap.cc.cnp_frame", "Reaction to the CNP in frame", FTUint32, BaseDec, func(f *Fabric) bool { return f.HasReaction }, func(f *Fabric) uint64 { return uint64(f.CNPFrame) })

	isPFC := func(p *Packet) bool { return p.Analysis.Tracked && x(p).PFC }
	u("rocetap.pfc.link_speed", "Link speed of the pause times (bits/s)", FTUint64, BaseDec, func(f *Fabric) bool { return f.PFC }, func(f *Fabric) uint64 { return f.LinkSpeed })
	all = append(all, multiField(rt, "rocetap.pfc.priority", "Priority paused or resumed", FTUint8, BaseDec, 0, func(p *Packet, out []Value) []Value {
		if isPFC(p) {
			PFCPriorities(p, func(i int, _ uint16) { out = append(out, Value{U: uint64(i)}) })
		}
		return out
	}))
	all = append(all, multiField(rt, "rocetap.pfc.pause_time", "Pause time asked for (quanta × 512 bit times)", FTRelTime, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if isPFC(p) {
			PFCPriorities(p, func(_ int, q uint16) { out = append(out, Value{U: uint64(PauseTime(q, x(p).LinkSpeed))}) })
		}
		return out
	}))
	all = append(all, condUint(rt, "rocetap.pfc.xon", "Resumes a priority (XON: quanta 0)", FTBoolean, BaseNone, 0, -1, 0, func(p *Packet) bool {
		xon := false
		if isPFC(p) {
			PFCPriorities(p, func(_ int, q uint16) { xon = xon || q == 0 })
		}
		return xon
	}, func(*Packet) uint64 { return 1 }))
	u("rocetap.pfc.prio", "Priority of the packet (VLAN PCP or DSCP)", FTUint8, BaseDec, func(f *Fabric) bool { return f.HasPrio }, func(f *Fabric) uint64 { return uint64(f.Prio) })
	u("rocetap.pfc.pause_frame", "Sent while paused by frame", FTUint32, BaseDec, func(f *Fabric) bool { return f.PauseFrame > 0 }, func(f *Fabric) uint64 { return uint64(f.PauseFrame) })
	u("rocetap.pfc.storm_duration", "Priority paused continuously for", FTRelTime, BaseNone, func(f *Fabric) bool { return f.StormFor > 0 }, func(f *Fabric) uint64 { return uint64(f.StormFor) })
	for _, f := range all {
		f.Stateful = true
	}
}
