package printer

import (
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// Line is one line of a packet's detail tree: a header or a field, at a
// depth under its parent, with the bytes it covers in the frame (Off -1
// when it has no place of its own).
type Line struct {
	Depth    int
	Text     string // "Name: value" for a field, "Name" for a header
	Field    *decode.Field
	Off, Len int
}

// Lines returns the detail tree of one packet, as -V prints it: every
// present header and field, in order, then a decode problem if any (Field
// nil).
func Lines(p *decode.Packet, vals []decode.Value) []Line {
	var out []Line
	if q := p.Inner(); q != nil {
		out = linesInner(p, q, vals)
	} else {
		out = lines(p, vals, nil)
	}
	if p.Err != nil {
		out = append(out, Line{Text: "[Decode problem: " + decode.Sanitize(p.Err.Error()) + "]", Off: -1})
	}
	return out
}

// linesInner is the tree of a RoCEv2 packet whose IPoIB SEND carries an
// IP packet: the packet's own headers, and the carried IP and UDP headers
// (q) after the IPoIB header, as tshark nests them.
func linesInner(p, q *decode.Packet, vals []decode.Value) []Line {
	own := *p // the fields of p without the carried occurrences
	own.Has &^= decode.HdrInner
	out := lines(&own, vals, nil)
	carried := lines(q, vals, func(f *decode.Field) bool {
		r := f
		for r.Parent != nil {
			r = r.Parent
		}
		return r.Abbrev == "ip" || r.Abbrev == "ipv6" || r.Abbrev == "udp"
	})
	at := len(out)
	for i, l := range out {
		if l.Field != nil && l.Field.Abbrev == "ipoib" {
			for at = i + 1; at < len(out) && out[at].Depth > 0; at++ {
			}
			break
		}
	}
	return append(out[:at], append(carried, out[at:]...)...)
}

// lines returns the lines of p's fields that keep accepts (every field
// when keep is nil).
func lines(p *decode.Packet, vals []decode.Value, keep func(*decode.Field) bool) []Line {
	var out []Line
	var b []byte
	recordsShown := false
	for _, f := range decode.Fields() {
		if keep != nil && !keep(f) {
			continue
		}
		depth := 0
		for a := f.Parent; a != nil; a = a.Parent {
			depth++
		}
		if f.Parent == nil && f.Abbrev == "frame" {
			depth = 0
		}
		if f.Hidden {
			continue
		}
		if decode.IsSARecordField(f) {
			// SA records: each record's fields together, not each field's
			// records (saLines).
			if !recordsShown {
				out = saLines(out, p, depth)
				recordsShown = true
			}
			continue
		}
		vals = f.Values(p, vals[:0])
		if len(vals) == 0 {
			continue
		}
		isHeader := f.Parent == nil || f.Type == decode.FTProtocol || (f.Type == decode.FTBytes && f.Span(p) != nil && f.Len == 0 && f.Off <= 0 && isContainer(f))
		off, n := fieldRange(p, f)
		if isHeader {
			// A header is one line, however many items Wireshark adds
			// under its name (the SA item: the MAD, the SA data, each
			// record).
			vals = vals[:1]
		}
		for _, v := range vals {
			b = b[:0]
			if !isHeader && f.Bitmask != 0 && off >= 0 && n >= 1 && n <= 8 && off+n <= len(p.Frame.Data) {
				// As tshark: the field's bits in its bytes ("0100 .... = ").
				b = appendBits(b, p.Frame.Data[off:off+n], f.Bitmask)
				b = append(b, " = "...)
			}
			b = append(b, f.Label(p)...)
			if !isHeader {
				b = append(b, ": "...)
				if f.Type == decode.FTBytes && len(v.B) > 64 {
					b = f.AppendValue(b, decode.Value{B: v.B[:64]})
					b = append(b, "…"...)
				} else {
					b = f.AppendDisplay(b, v)
				}
			}
			out = append(out, Line{Depth: depth, Text: string(b), Field: f, Off: off, Len: n})
		}
	}
	return out
}

// AppendVerbose appends the -V tree of one packet: every present header
// and field, indented under its parent, with its byte range in the frame
// ([offset+length]) where the field has one.
func AppendVerbose(dst []byte, p *decode.Packet, vals []decode.Value) []byte {
	dst = append(dst, "Frame "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = append(dst, ": "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Len), 10)
	dst = append(dst, " bytes on wire, "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.CapLen), 10)
	dst = append(dst, " bytes captured\n"...)
	for _, l := range Lines(p, vals) {
		for range l.Depth {
			dst = append(dst, "    "...)
		}
		dst = append(dst, l.Text...)
		if l.Field != nil && l.Off >= 0 {
			dst = append(dst, "  ["...)
			dst = strconv.AppendInt(dst, int64(l.Off), 10)
			dst = append(dst, '+')
			dst = strconv.AppendInt(dst, int64(l.Len), 10)
			dst = append(dst, ']')
		}
		dst = append(dst, '\n')
	}
	return dst
}

// isContainer reports whether some registered field has f as its parent.
func isContainer(f *decode.Field) bool {
	return containers[f]
}

var containers = func() map[*decode.Field]bool {
	m := map[*decode.Field]bool{}
	for _, f := range decode.Fields() {
		if f.Parent != nil {
			m[f.Parent] = true
		}
	}
	return m
}()

// fieldRange returns where field f lies in the frame, or -1.
func fieldRange(p *decode.Packet, f *decode.Field) (off, n int) {
	off = -1
	if s := f.Span(p); s != nil {
		off, n = p.Offset(s), len(s)
	} else if f.Parent != nil && f.Off >= 0 && f.Len > 0 {
		if s := f.Parent.Span(p); s != nil {
			if base := p.Offset(s); base >= 0 {
				off, n = base+f.Off, f.Len
			}
		}
	} else if f.Abbrev == "infiniband.payload" {
		if len(p.Payload) > 0 {
			off, n = p.Offset(p.Payload), len(p.Payload)
		}
	}
	return off, n
}

// appendBits appends the bits of the big-endian bytes that mask selects,
// '.' for the others, in groups of four: "0100 ....", "...0 0000 0000 0000".
func appendBits(dst, bytes []byte, mask uint64) []byte {
	var raw uint64
	for _, c := range bytes {
		raw = raw<<8 | uint64(c)
	}
	bits := len(bytes) * 8
	for i := bits - 1; i >= 0; i-- {
		switch {
		case mask>>i&1 == 0:
			dst = append(dst, '.')
		case raw>>i&1 == 1:
			dst = append(dst, '1')
		default:
			dst = append(dst, '0')
		}
		if i > 0 && i%4 == 0 {
			dst = append(dst, ' ')
		}
	}
	return dst
}

// saLines appends the records of an SA MAD (or of the RMPP transfer it
// completes): a line per record ("PathRecord 1") at depth, the depth of
// the SA header's fields, with the record's fields under it.
func saLines(out []Line, p *decode.Packet, depth int) []Line {
	decode.WalkSARecords(p, func(i int, attr uint16) {
		text := decode.MADAttrString(decode.MgmtClassSubnAdm, attr) + " " + strconv.Itoa(i+1)
		out = append(out, Line{Depth: depth, Text: text, Off: -1})
	}, func(f *decode.Field, v decode.Value) {
		b := append([]byte(f.Label(p)), ": "...)
		if f.Type == decode.FTBytes && len(v.B) > 64 {
			b = f.AppendValue(b, decode.Value{B: v.B[:64]})
			b = append(b, "…"...)
		} else {
			b = f.AppendDisplay(b, v)
		}
		out = append(out, Line{Depth: depth + 1, Text: string(b), Field: f, Off: -1})
	})
	return out
}
