package stream

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// setFrame is the one place a decode.Frame is made: packet number n,
// captured at t (ns: t.UnixNano()), in a capture whose first packet came
// at first and whose previous packet at prev (ns since the epoch; prev is
// ns for the first packet), length bytes on the wire, on pcapng interface
// iface. Decoding sets the bytes, their length and the link type; they
// are cleared here.
//
// It sets the fields one by one: assigning a decode.Frame{...} literal to
// a Packet on the heap moves the whole struct through the write barrier
// (runtime.wbMove), 11 ns a packet against 3.5 ns for this (measured on
// the project's machine), and every packet of every command comes here.
// A new field of decode.Frame must be set here too (TestSetFrameSetsAll).
func setFrame(f *decode.Frame, n int, t time.Time, ns, first, prev int64, length, iface int) {
	f.Number, f.Time, f.TimeRelative, f.TimeDelta = n, t, time.Duration(ns-first), time.Duration(ns-prev)
	f.Len, f.Interface = length, iface
	f.CapLen, f.LinkType, f.Data = 0, 0, nil
}

// SetFrameAt sets f to the frame of packet number n read again out of
// order, as the TUI's index does: t is its time, first and prev the first
// packet's and the previous packet's times in nanoseconds since the epoch
// (t's for the first packet), length its length on the wire and iface its
// pcapng interface. It is the frame Read gave the packet.
func SetFrameAt(f *decode.Frame, n int, t time.Time, first, prev int64, length, iface int) {
	setFrame(f, n, t, t.UnixNano(), first, prev, length, iface)
}
