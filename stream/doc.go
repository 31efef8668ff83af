// Package stream is the packet road: it opens a packet source (a capture
// file, a stream on stdin, a live capture, or the spool of a stream or a
// live capture read as it grows), reads it in one loop, numbers and times
// its frames, and runs the passes every command and the TUI share: the
// parallel decode with ordered output, the sequential pass through the
// session tracker, and the display-filter pass. It also owns stopping
// (packet count, signals, errors) and the progress line.
//
// Everything that reads packets in order goes through [Source.Read]: the
// one loop over capture.Source.Next. Every decode.Frame is built by one
// function, whether the packet was just read ([Packet.SetFrame]) or is
// read again at random from an index ([SetFrameAt]), so frame.number,
// frame.time_* and frame.interface_id agree everywhere.
//
// A capture that stops part-way (a record that cannot be framed, a file cut
// short, a read error) ends reading with a [*CorruptError], after every
// packet before it was handed on; callers give it their exit status.
//
// stream imports capture, decode, decode/filter and flow; never hca (the
// tracker's MPT model comes in a flow.Tracker), the UI or the commands.
package stream
