package printer

import (
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

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
	for _, f := range decode.Fields() {
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
		vals = f.Values(p, vals[:0])
		if len(vals) == 0 {
			continue
		}
		isHeader := f.Parent == nil || f.Type == decode.FTProtocol || (f.Type == decode.FTBytes && f.Span(p) != nil && f.Len == 0 && f.Off <= 0 && isContainer(f))
		for _, v := range vals {
			for range depth {
				dst = append(dst, "    "...)
			}
			dst = append(dst, f.Name...)
			if !isHeader {
				dst = append(dst, ": "...)
				if f.Type == decode.FTBytes && len(v.B) > 64 {
					dst = f.AppendValue(dst, decode.Value{B: v.B[:64]})
					dst = append(dst, "…"...)
				} else {
					dst = f.AppendDisplay(dst, v)
				}
			}
			dst = appendRange(dst, p, f)
			dst = append(dst, '\n')
		}
	}
	if p.Err != nil {
		dst = append(dst, "[Decode problem: "...)
		dst = decode.AppendSanitized(dst, p.Err.Error())
		dst = append(dst, "]\n"...)
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

// appendRange appends "  [off+len]" for fields with a known place.
func appendRange(dst []byte, p *decode.Packet, f *decode.Field) []byte {
	off, n := -1, 0
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
	if off < 0 {
		return dst
	}
	dst = append(dst, "  ["...)
	dst = strconv.AppendInt(dst, int64(off), 10)
	dst = append(dst, '+')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, ']')
}
