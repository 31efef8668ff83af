package printer

import (
	"strconv"
	"sync"

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
	walkLines(p, vals, keep, func(depth int, text []byte, f *decode.Field, off, n int) {
		out = append(out, Line{Depth: depth, Text: string(text), Field: f, Off: off, Len: n})
	}, func(depth int) { out = saLines(out, p, depth) }, nil)
	return out
}

// vField is a field of the registry as the tree shows it: what does not
// depend on the packet, worked out once (verboseFields).
type vField struct {
	f     *decode.Field
	hdr   decode.Hdr // the headers it needs (decode.Field.UintAccessor)
	depth int
	sa    bool // an SA record's field (decode.IsSARecordField)
}

var (
	vFieldsOnce sync.Once
	vFieldList  []vField
)

// verboseFields returns the fields the tree may show, in registry order:
// every field but the hidden ones. The tree used to work all this out,
// and look the field up in two maps, for each of the registry's 974
// fields on every packet: four fifths of -V's time. Each packet goes
// through the fields its headers may have (verboseCandidates).
func verboseFields() []vField {
	vFieldsOnce.Do(func() {
		for _, f := range decode.Fields() {
			if f.Hidden {
				continue
			}
			depth := 0
			for a := f.Parent; a != nil; a = a.Parent {
				depth++
			}
			if f.Parent == nil && f.Abbrev == "frame" {
				depth = 0
			}
			hdr, _, _ := f.UintAccessor()
			vFieldList = append(vFieldList, vField{f: f, hdr: hdr, depth: depth, sa: decode.IsSARecordField(f)})
		}
	})
	return vFieldList
}

// vShapes caches verboseCandidates' lists, by packet shape (the set of
// header bits, decode.Packet.Has, and whether it has an upper-layer
// protocol); a capture holds few. Bounded as JSONPrinter's
// byHas is (maxHasSets), and locked: the TUI builds trees on several
// goroutines.
var vShapes struct {
	sync.Mutex
	m map[jsonShape][]int32
}

// verboseCandidates returns the indexes in verboseFields of the fields
// that may occur in a packet of shape sh (as JSONPrinter.candidates finds
// them): those whose headers it has, the inner-occurrence ones when it
// has HdrInner (decode.Field.Multi), those of upper-layer protocols only
// when it has one (decode.Field.NeedsULP), and the SA record fields
// (saLines finds the records). Values finds nothing of the others.
func verboseCandidates(sh jsonShape) []int32 {
	has := sh.has
	vShapes.Lock()
	c, ok := vShapes.m[sh]
	vShapes.Unlock()
	if ok {
		return c
	}
	probe := decode.Packet{Has: has}
	c = []int32{}
	for i, vf := range verboseFields() {
		if vf.f.NeedsULP() && !sh.ulp {
			continue
		}
		if vf.sa || has&vf.hdr == vf.hdr || vf.f.Multi(&probe) {
			c = append(c, int32(i))
		}
	}
	vShapes.Lock()
	if vShapes.m == nil || len(vShapes.m) >= maxHasSets {
		vShapes.m = make(map[jsonShape][]int32)
	}
	vShapes.m[sh] = c
	vShapes.Unlock()
	return c
}

// walkLines calls line for each line of p's fields that keep accepts
// (every field when keep is nil), in order; text is valid only during
// the call. At the first SA record field it calls records instead (an SA
// MAD's records, each with its fields: saLines). Lines are made in b,
// which it returns, grown: a caller that keeps it allocates nothing.
func walkLines(p *decode.Packet, vals []decode.Value, keep func(*decode.Field) bool,
	line func(depth int, text []byte, f *decode.Field, off, n int), records func(depth int), b []byte) []byte {
	return walkFields(p, verboseCandidates(jsonShape{p.Has, p.Analysis.ULP != nil}), vals, keep, line, records, b)
}

// walkFields is walkLines over the fields of verboseFields at cands.
func walkFields(p *decode.Packet, cands []int32, vals []decode.Value, keep func(*decode.Field) bool,
	line func(depth int, text []byte, f *decode.Field, off, n int), records func(depth int), b []byte) []byte {
	recordsShown := false
	for _, i := range cands {
		vf := &vFieldList[i]
		f := vf.f
		if vf.sa {
			// SA records: each record's fields together, not each field's
			// records (saLines).
			if !recordsShown && (keep == nil || keep(f)) {
				records(vf.depth)
				recordsShown = true
			}
			continue
		}
		if keep != nil && !keep(f) {
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
			b = f.AppendLabel(b, p)
			if !isHeader {
				b = append(b, ": "...)
				if f.Type == decode.FTBytes && len(v.B) > 64 {
					b = f.AppendValue(b, decode.Value{B: v.B[:64]})
					b = append(b, "…"...)
				} else {
					b = f.AppendDisplay(b, v)
				}
			}
			line(vf.depth, b, f, off, n)
		}
	}
	return b
}

// Verbose writes -V trees, keeping its scratch from packet to packet, so
// that it allocates nothing a packet. It is not safe for concurrent use:
// one a goroutine.
type Verbose struct {
	vals []decode.Value
	line []byte // where each line is made
}

// NewVerbose returns a Verbose with room for the common packet.
func NewVerbose() *Verbose {
	return &Verbose{vals: make([]decode.Value, 0, 16), line: make([]byte, 0, 256)}
}

// Append appends the -V tree of p: every present header and field,
// indented under its parent, with its byte range in the frame
// ([offset+length]) where the field has one.
func (v *Verbose) Append(dst []byte, p *decode.Packet) []byte {
	dst = append(dst, "Frame "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = append(dst, ": "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Len), 10)
	dst = append(dst, " bytes on wire, "...)
	dst = strconv.AppendInt(dst, int64(p.Frame.CapLen), 10)
	dst = append(dst, " bytes captured\n"...)
	if p.Inner() != nil || p.Err != nil {
		for _, l := range Lines(p, v.vals) {
			dst = appendVerboseLine(dst, l.Depth, l.Text, l.Field, l.Off, l.Len)
		}
		return dst
	}
	// The common packet: its lines written as they are made, without a
	// string each.
	v.line = walkLines(p, v.vals, nil, func(depth int, text []byte, f *decode.Field, off, n int) {
		dst = appendVerboseLine(dst, depth, text, f, off, n)
	}, func(depth int) {
		for _, l := range saLines(nil, p, depth) {
			dst = appendVerboseLine(dst, l.Depth, l.Text, l.Field, l.Off, l.Len)
		}
	}, v.line[:0])
	return dst
}

// appendVerboseLine appends one line of the -V tree.
func appendVerboseLine[T string | []byte](dst []byte, depth int, text T, f *decode.Field, off, n int) []byte {
	for range depth {
		dst = append(dst, "    "...)
	}
	dst = append(dst, text...)
	if f != nil && off >= 0 {
		dst = append(dst, "  ["...)
		dst = strconv.AppendInt(dst, int64(off), 10)
		dst = append(dst, '+')
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, ']')
	}
	return append(dst, '\n')
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
		b := append(f.AppendLabel(nil, p), ": "...)
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
