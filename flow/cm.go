package flow

import (
	"github.com/rocetap/rocetap/decode"
	"strconv"
)

var cmTransport = [4]decode.Transport{decode.TransportRC, decode.TransportUC, decode.TransportRD, decode.TransportRC}

// cm follows the Communication Manager: a REQ carries the active side's QPN
// and starting PSN, the REP the passive side's; together they pair the two
// QPs of a connection before its first packet.
func (t *Tracker) cm(p *decode.Packet, src, dst addr16, lid bool) {
	c := &p.CM
	s := p.Analysis.Session
	switch c.AttributeID {
	case decode.CMAttrREQ:
		if len(t.cmReqs) < maxCMPending {
			t.cmReqs[cmKey{src, dst, c.LocalCommID}] = cmReq{qpn: c.LocalQPN, psn: c.StartingPSN,
				mtu: mtuFromCode(c.PathMTU), transport: c.TransportServiceType, frame: p.Frame.Number}
			t.ulpREQ(p, src, dst)
		}
		t.event(p, decode.EventConnect, s, "CM REQ: QP "+hex24(c.LocalQPN)+" asks to connect, starting PSN "+strconv.Itoa(int(c.StartingPSN)))
	case decode.CMAttrREP:
		k := cmKey{dst, src, c.RemoteCommID}
		req, ok := t.cmReqs[k]
		text := "CM REP: QP " + hex24(c.LocalQPN) + " accepts, starting PSN " + strconv.Itoa(int(c.StartingPSN))
		if !ok {
			t.event(p, decode.EventConnect, s, text+" (the REQ is not in the capture)")
			return
		}
		delete(t.cmReqs, k)
		n := t.newSession(cmTransport[req.transport&3], p.Frame.Time)
		n.Learned = decode.PairingCM
		n.qkeyComm = c.RemoteCommID
		n.A = endpoint(dst, lid)
		// Each side's Starting PSN is the PSN its receive queue expects
		// first (Linux ib_cm loads it into rq_psn): the other side's
		// first request carries it.
		n.A.QPN, n.A.QPNKnown, n.A.StartPSN, n.A.HasStart = req.qpn, true, c.StartingPSN, true
		n.B = endpoint(src, lid)
		n.B.QPN, n.B.QPNKnown, n.B.StartPSN, n.B.HasStart = c.LocalQPN, true, req.psn, true
		if req.mtu != 0 {
			n.MTU, n.mtuFrom = req.mtu, mtuCM
		}
		keys := [2]halfKey{{dst, src, c.LocalQPN}, {src, dst, req.qpn}}
		for side, k := range keys {
			if old, ok := t.get(k); ok && old.s != n {
				old.s.Closed = true // a new connection reuses the QPN
				t.dropUnpaired(old.s)
				t.retire(old.s)
			}
			t.setHalf(&k, half{n, uint8(side)})
			n.has[side] = true
		}
		t.ulpREP(p, k, n)
		t.event(p, decode.EventConnect, n.ID, text+": session "+strconv.Itoa(int(n.ID))+" "+n.A.String()+" <-> "+n.B.String())
	case decode.CMAttrRTU:
		t.event(p, decode.EventConnect, s, "CM RTU: connection ready to use")
	case decode.CMAttrREJ:
		delete(t.cmReqs, cmKey{dst, src, c.RemoteCommID})
		t.event(p, decode.EventReject, s, "CM REJ: connection rejected, reason "+strconv.Itoa(int(c.Reason))+" ("+decode.CMRejReasonString(c.Reason)+")")
	case decode.CMAttrDREQ:
		if h, ok := t.get(halfKey{src, dst, c.RemoteQPN}); ok && h.s.Learned == decode.PairingCM {
			h.s.Closed = true
			t.retire(h.s) // (when nothing is in flight: a closed QP sends no more)
		}
		t.event(p, decode.EventDisconnect, s, "CM DREQ: disconnect QP "+hex24(c.RemoteQPN))
	case decode.CMAttrDREP:
		t.event(p, decode.EventDisconnect, s, "CM DREP: disconnected")
	case decode.CMAttrSIDRREQ:
		t.event(p, decode.EventConnect, s, "CM SIDR REQ: service ID resolution")
	case decode.CMAttrSIDRREP:
		t.event(p, decode.EventConnect, s, "CM SIDR REP: QP "+hex24(c.QPN)+", Q_Key "+hexN(c.QKey, 8))
	}
}

// mtuFromCode converts the IBTA MTU code (1 = 256 … 5 = 4096) to bytes.
func mtuFromCode(c uint8) uint32 {
	if c >= 1 && c <= 5 {
		return 128 << c
	}
	return 0
}
