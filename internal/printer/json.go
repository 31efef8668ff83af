package printer

import (
	"strconv"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
)

// AppendJSON appends one packet as a JSON object on one line:
//
//	{"frame":{"number":1,"time":"...","time_relative":"0.000000000","len":74,"cap_len":74,"linktype":1},
//	 "summary":{"source":"10.77.0.1","destination":"10.77.0.2","protocol":"RoCEv2","info":"..."},
//	 "layers":{"eth":{"eth.dst":"...",...},"ip":{...},"udp":{...},"infiniband":{"infiniband.bth.opcode":"12",...},"rocetap":{...}},
//	 "flags":["icrc-bad"]}
//
// Field values are strings formatted exactly as -T fields prints them;
// a field that occurs more than once is an array of strings. Layers are
// keyed by their protocol (the root of the field registry) and appear in
// registry order. The schema is documented in docs/json.md.
func AppendJSON(dst []byte, p *decode.Packet, vals []decode.Value) []byte {
	dst = append(dst, `{"frame":{"number":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = append(dst, `,"time":"`...)
	dst = p.Frame.Time.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z")
	dst = append(dst, `","time_relative":"`...)
	dst = decode.AppendSeconds(dst, int64(p.Frame.TimeRelative), 9)
	dst = append(dst, `","len":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Len), 10)
	dst = append(dst, `,"cap_len":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.CapLen), 10)
	dst = append(dst, `,"linktype":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.LinkType), 10)
	dst = append(dst, `,"interface_id":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Interface), 10)
	dst = append(dst, `},"summary":{"source":`...)
	tmp := appendAddr(nil, p, true)
	dst = appendJSONString(dst, string(tmp))
	dst = append(dst, `,"destination":`...)
	tmp = appendAddr(tmp[:0], p, false)
	dst = appendJSONString(dst, string(tmp))
	dst = append(dst, `,"protocol":`...)
	dst = appendJSONString(dst, Protocol(p))
	dst = append(dst, `,"info":`...)
	tmp = AppendInfo(tmp[:0], p)
	dst = appendJSONString(dst, string(tmp))
	dst = append(dst, `},"layers":{`...)
	var root *decode.Field
	firstLayer, firstField := true, true
	for _, f := range decode.Fields() {
		r := f
		for r.Parent != nil {
			r = r.Parent
		}
		if r == f {
			continue // protocols themselves are the keys
		}
		vals = f.Values(p, vals[:0])
		if len(vals) == 0 {
			continue
		}
		if r != root {
			if root != nil {
				dst = append(dst, '}')
			}
			if !firstLayer {
				dst = append(dst, ',')
			}
			firstLayer, firstField = false, true
			root = r
			dst = appendJSONString(dst, r.Abbrev)
			dst = append(dst, ":{"...)
		}
		if !firstField {
			dst = append(dst, ',')
		}
		firstField = false
		dst = appendJSONString(dst, f.Abbrev)
		dst = append(dst, ':')
		if len(vals) > 1 {
			dst = append(dst, '[')
		}
		for i, v := range vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			tmp = f.AppendValue(tmp[:0], v)
			dst = appendJSONString(dst, string(tmp))
		}
		if len(vals) > 1 {
			dst = append(dst, ']')
		}
	}
	if root != nil {
		dst = append(dst, '}')
	}
	dst = append(dst, `},"flags":[`...)
	for i, n := range p.Flags.Names() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, n)
	}
	return append(dst, "]}"...)
}

func appendJSONString(dst []byte, s string) []byte {
	const hx = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20 || c == 0x7F:
				dst = append(dst, '\\', 'u', '0', '0', hx[c>>4], hx[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
