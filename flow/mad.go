package flow

import (
	"maps"
	"slices"
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// mad reports a MAD response whose status says an error and a Trap(): the
// expert events of subnet management, performance management and the
// other management classes.
func (t *Tracker) mad(p *decode.Packet, session uint32) {
	m := &p.MAD
	// The text is made only for an event: most MADs raise none.
	info := func() string { return string(decode.AppendMADInfo(nil, m.MgmtClass, m.MethodByte(), m.AttributeID)) }
	if m.R && decode.MADStatusError(m.MgmtClass, m.Status) != 0 {
		t.event(p, decode.EventMADStatus, session, info()+": status "+hexN(uint32(m.Status), 4)+" ("+string(decode.AppendMADStatus(nil, m.MgmtClass, m.Status))+")")
	}
	if m.MethodByte() == decode.MADMethodTrap {
		t.event(p, decode.EventMADTrap, session, info()+trapText(p))
	}
}

// trapText describes the Notice of an SMP trap: ": trap 128 (link state
// of a switch port changed) from LID 2".
func trapText(p *decode.Packet) string {
	n, ok := p.SMPNotice()
	if !ok {
		return ""
	}
	if !n.Generic {
		return ": vendor notice, device ID " + hexN(uint32(n.TrapNumber), 4) + " from LID " + strconv.Itoa(int(n.IssuerLID))
	}
	s := ": trap " + strconv.Itoa(int(n.TrapNumber))
	if d := decode.TrapString(n.TrapNumber); d != "" {
		s += " (" + d + ")"
	}
	return s + " from LID " + strconv.Itoa(int(n.IssuerLID))
}

// MADKey is one kind of MAD: class, method byte (response bit included)
// and attribute.
type MADKey struct {
	Class, Method uint8
	Attr          uint16
}

// String is the MAD's Info text: "SubnGet(NodeInfo)".
func (k MADKey) String() string { return string(decode.AppendMADInfo(nil, k.Class, k.Method, k.Attr)) }

// MADStatusKey is a MAD kind with an error status.
type MADStatusKey struct {
	MADKey
	Status uint16
}

// MADTotals counts management datagrams: every MAD by kind, the responses
// with an error status, and the traps by number. Maps are made on first
// use; a capture without MADs costs nothing.
type MADTotals struct {
	Kinds    map[MADKey]uint64
	Statuses map[MADStatusKey]uint64
	Traps    map[uint16]uint64 // SMP traps by trap number (vendor notices: device ID)
	Total    uint64
}

// add counts one MAD.
func (mt *MADTotals) add(p *decode.Packet) {
	m := &p.MAD
	k := MADKey{m.MgmtClass, m.MethodByte(), m.AttributeID}
	if mt.Kinds == nil {
		mt.Kinds = map[MADKey]uint64{}
	}
	mt.Kinds[k]++
	mt.Total++
	if m.R && decode.MADStatusError(m.MgmtClass, m.Status) != 0 {
		if mt.Statuses == nil {
			mt.Statuses = map[MADStatusKey]uint64{}
		}
		mt.Statuses[MADStatusKey{k, m.Status}]++
	}
	if k.Method == decode.MADMethodTrap {
		if n, ok := p.SMPNotice(); ok {
			if mt.Traps == nil {
				mt.Traps = map[uint16]uint64{}
			}
			mt.Traps[n.TrapNumber]++
		}
	}
}

// MADCount is the count of one kind of MAD.
type MADCount struct {
	MADKey
	N uint64
}

// KindCounts returns the MADs counted by kind, in class, attribute and
// method order.
func (mt *MADTotals) KindCounts() []MADCount {
	out := make([]MADCount, 0, len(mt.Kinds))
	for k, n := range mt.Kinds {
		out = append(out, MADCount{k, n})
	}
	slices.SortFunc(out, func(a, b MADCount) int { return cmpMADKey(a.MADKey, b.MADKey) })
	return out
}

func cmpMADKey(a, b MADKey) int {
	switch {
	case a.Class != b.Class:
		return int(a.Class) - int(b.Class)
	case a.Attr != b.Attr:
		return int(a.Attr) - int(b.Attr)
	}
	return int(a.Method) - int(b.Method)
}

// MADStatusCount is the count of one kind of MAD with one error status.
type MADStatusCount struct {
	MADStatusKey
	N uint64
}

// StatusCounts returns the error statuses counted, in kind then status
// order.
func (mt *MADTotals) StatusCounts() []MADStatusCount {
	out := make([]MADStatusCount, 0, len(mt.Statuses))
	for k, n := range mt.Statuses {
		out = append(out, MADStatusCount{k, n})
	}
	slices.SortFunc(out, func(a, b MADStatusCount) int {
		if c := cmpMADKey(a.MADKey, b.MADKey); c != 0 {
			return c
		}
		return int(a.Status) - int(b.Status)
	})
	return out
}

// TrapCount is the count of one trap number.
type TrapCount struct {
	Trap uint16
	N    uint64
}

// TrapCounts returns the traps counted, by trap number.
func (mt *MADTotals) TrapCounts() []TrapCount {
	out := make([]TrapCount, 0, len(mt.Traps))
	for k, n := range mt.Traps {
		out = append(out, TrapCount{k, n})
	}
	slices.SortFunc(out, func(a, b TrapCount) int { return int(a.Trap) - int(b.Trap) })
	return out
}

// clone returns a copy of mt that shares no map with it.
func (mt *MADTotals) clone() MADTotals {
	return MADTotals{Kinds: maps.Clone(mt.Kinds), Statuses: maps.Clone(mt.Statuses), Traps: maps.Clone(mt.Traps), Total: mt.Total}
}

// Snapshot returns a copy of tt that shares no map with it: a copy
// another goroutine reads while tt goes on counting (the TUI's stats
// view publishes one every 250 ms).
func (tt *Totals) Snapshot() Totals {
	c := *tt
	c.CMOther = maps.Clone(tt.CMOther)
	c.MADs = tt.MADs.clone()
	return c
}
