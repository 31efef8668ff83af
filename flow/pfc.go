package flow

import (
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Priority flow control. A port (a source MAC on a capture interface)
// pauses a priority with a PFC frame (802.1Qbb) for quanta × 512 bit
// times at the link speed, resumes it with quanta 0 (XON); a refresh
// before the time runs out keeps it paused. An 802.3x PAUSE frame pauses
// every priority. A pause is continuous from the first XOFF until it
// runs out or an XON ends it.

// speed returns the link speed of a capture interface and where it came
// from.
func (t *Tracker) speed(iface int) (uint64, string) {
	if t.opts.LinkSpeed > 0 {
		return t.opts.LinkSpeed, "--link-speed"
	}
	if t.opts.InterfaceSpeed != nil {
		if v := t.opts.InterfaceSpeed(iface); v > 0 {
			return v, "if_speed"
		}
	}
	return DefaultLinkSpeed, "default"
}

// pfcFrame analyzes a PFC or PAUSE frame.
func (t *Tracker) pfcFrame(p *decode.Packet) {
	f := t.fab
	k := pfcPortKey{max(p.Frame.Interface, 0), p.Eth.Src}
	port := f.ports[k]
	if port == nil {
		port = &PFCPort{Iface: k.iface, MAC: k.mac}
		port.Speed, port.SpeedFrom = t.speed(k.iface)
		f.ports[k] = port
		f.stats.Ports = append(f.stats.Ports, port)
		for len(f.byIface) <= k.iface {
			f.byIface = append(f.byIface, nil)
		}
		f.byIface[k.iface] = append(f.byIface[k.iface], port)
	}
	x := &p.Analysis.Fabric
	x.PFC, x.LinkSpeed = true, port.Speed
	pause := p.Has&decode.HdrPause != 0
	if pause {
		port.Pauses++
	}
	now, frame := t.now, uint32(p.Frame.Number)
	decode.PFCPriorities(p, func(i int, q uint16) {
		pr := &port.Prio[i]
		if pr.paused && now >= pr.until {
			t.pauseEnd(port, i, pr.until)
		}
		if q == 0 {
			if !pause {
				pr.XON++
			}
			if pr.paused {
				t.pauseEnd(port, i, now)
			}
			return
		}
		d := decode.PauseTime(q, port.Speed)
		if !pause {
			pr.XOFF++
			if pr.firstPFC == 0 {
				pr.firstPFC, pr.firstPFCT = frame, now
			}
			pr.pausedByPFC = true
		}
		pr.Asked += d
		if !pr.paused {
			pr.paused, pr.storm, pr.since, pr.startFrame = true, false, now, frame
			f.paused++
		}
		pr.until, pr.lastFrame = now+int64(d), frame
		if !pr.storm && now-pr.since > f.stormAfter {
			pr.storm = true
			t.storm(p, port, i, time.Duration(now-pr.since))
		}
	})
}

// storm reports priority i of port paused continuously for d (on p; at
// the end of the pause when p is nil).
func (t *Tracker) storm(p *decode.Packet, port *PFCPort, i int, d time.Duration) {
	pr := &port.Prio[i]
	pr.Storms++
	t.fab.stats.Storms++
	text := "priority " + strconv.Itoa(i) + " of " + port.Name() + " paused continuously for " + d.String() + " (since frame " + strconv.Itoa(int(pr.startFrame)) + ", threshold " + time.Duration(t.fab.stormAfter).String() + ")"
	if p == nil {
		t.emit(decode.EventPFCStorm, int(pr.lastFrame), pr.since, 0, text)
		return
	}
	x := &p.Analysis.Fabric
	x.StormFor, x.Prio, x.HasPrio = d, uint8(i), true
	t.event(p, decode.EventPFCStorm, 0, text)
}

// pauseEnd ends the pause of priority i of port at end.
func (t *Tracker) pauseEnd(port *PFCPort, i int, end int64) {
	f := t.fab
	pr := &port.Prio[i]
	pr.paused = false
	f.paused--
	end = max(end, pr.since) // (timestamps that go backwards)
	d := time.Duration(end - pr.since)
	pr.Total += d
	pr.Longest = max(pr.Longest, d)
	f.stats.PauseSeries[i].addSpan(f.start, pr.since, end)
	if !pr.storm && int64(d) > f.stormAfter {
		pr.storm = true
		t.storm(nil, port, i, d)
	}
}

// pfcTraffic checks a RoCE packet against the pauses in force on its
// capture interface: a packet of a paused priority, not sent by the port
// that paused it, went out while it should not have.
func (t *Tracker) pfcTraffic(p *decode.Packet) {
	f := t.fab
	prio, ok := f.prio.prio(p)
	if !ok {
		return
	}
	ifc := p.Frame.Interface
	if ifc < 0 {
		return
	}
	for len(f.roce) <= ifc {
		f.roce = append(f.roce, 0)
	}
	f.roce[ifc] |= 1 << prio
	if f.paused == 0 || ifc >= len(f.byIface) || p.Has&decode.HdrEth == 0 {
		return
	}
	for _, port := range f.byIface[ifc] {
		pr := &port.Prio[prio]
		if !pr.paused {
			continue
		}
		if t.now >= pr.until {
			t.pauseEnd(port, int(prio), pr.until)
			continue
		}
		if p.Eth.Src == port.MAC {
			continue // the pausing port's own traffic toward us is not paused
		}
		f.stats.PausedTraffic++
		x := &p.Analysis.Fabric
		x.PauseFrame, x.Prio, x.HasPrio = pr.lastFrame, prio, true
		t.event(p, decode.EventPFCPaused, p.Analysis.Session, "priority "+strconv.Itoa(int(prio))+" sent while "+port.Name()+" paused it (frame "+strconv.Itoa(int(pr.lastFrame))+")")
		return
	}
}

// pfcEnd ends the pauses still in force at the end of the capture (at
// their end, or at the capture's) and reports the priorities paused that
// carried no RoCE.
func (t *Tracker) pfcEnd() {
	f := t.fab
	for _, port := range f.stats.Ports {
		for i := range port.Prio {
			pr := &port.Prio[i]
			if pr.paused {
				t.pauseEnd(port, i, min(pr.until, t.now))
			}
			ifc := port.Iface
			if pr.pausedByPFC && (ifc >= len(f.roce) || f.roce[ifc]&(1<<i) == 0) {
				f.stats.UnusedPrio++
				t.emit(decode.EventPFCUnusedPrio, int(pr.firstPFC), pr.firstPFCT, 0, "priority "+strconv.Itoa(i)+" paused by "+port.Name()+" ("+strconv.FormatUint(pr.XOFF, 10)+" XOFF frames) but no RoCE packet of that priority on the interface")
			}
		}
	}
}
