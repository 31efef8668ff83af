package stream

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// frame is the one place a decode.Frame is made: packet number n,
// captured at t (ns: t.UnixNano()), in a capture whose first packet came
// at first and whose previous packet at prev (ns since the epoch; prev is
// ns for the first packet), length bytes on the wire, on pcapng interface
// iface. Decoding sets the rest (the bytes, their length, the link type).
func frame(n int, t time.Time, ns, first, prev int64, length, iface int) decode.Frame {
	return decode.Frame{Number: n, Time: t, TimeRelative: time.Duration(ns - first), TimeDelta: time.Duration(ns - prev),
		Len: length, Interface: iface}
}

// FrameAt is the frame of packet number n read again out of order, as the
// TUI's index does: t is its time, first and prev the first packet's and
// the previous packet's times in nanoseconds since the epoch (t's for the
// first packet), length its length on the wire and iface its pcapng
// interface. It is the frame Read gave the packet.
func FrameAt(n int, t time.Time, first, prev int64, length, iface int) decode.Frame {
	return frame(n, t, t.UnixNano(), first, prev, length, iface)
}
