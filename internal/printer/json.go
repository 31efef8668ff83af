package printer

import (
	"strconv"
	"strings"
	"sync"
	"time"
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
//
// vals is scratch space; a JSONPrinter also keeps its other scratch
// buffer and allocates nothing.
func AppendJSON(dst []byte, p *decode.Packet, vals []decode.Value) []byte {
	jp := JSONPrinter{vals: vals}
	return jp.Append(dst, p)
}

// JSONPrinter prints packets as AppendJSON does, reusing its scratch
// buffers: printing allocates nothing. Use one per goroutine.
type JSONPrinter struct {
	vals []decode.Value
	tmp  []byte
	// byHas caches, for each set of header bits (decode.Packet.Has) seen,
	// with or without an upper-layer protocol, the fields that may occur
	// in a packet with those headers. Which fields may occur depends on
	// these alone, and a capture holds few distinct sets, so the loop over
	// the registry (974 fields, of which a RoCEv2 packet has about 50)
	// runs once per set, not once per packet: it took a fifth of -T
	// json's time.
	byHas map[jsonShape][]jsonCand
}

// jsonShape is what decides which fields may occur in a packet: its
// headers, and whether a tracker found an upper-layer protocol in it
// (decode.Field.NeedsULP).
type jsonShape struct {
	has decode.Hdr
	ulp bool
}

// maxHasSets bounds byHas: a printer forgets the sets it has seen when
// it has seen more, so a fuzzed capture cannot grow it without end
// (each set holds some 350 fields, 8 KiB).
const maxHasSets = 256

// NewJSONPrinter returns a JSONPrinter.
func NewJSONPrinter() *JSONPrinter {
	return &JSONPrinter{vals: make([]decode.Value, 0, 16), tmp: make([]byte, 0, 256), byHas: make(map[jsonShape][]jsonCand)}
}

// jsonField is a field of the registry as JSON prints it.
type jsonField struct {
	// The field's presence test and direct getter (decode.Field.UintAccessor),
	// copied here: most fields are absent from a packet, and the loop over
	// the registry then touches this slice only.
	hdr  decode.Hdr
	cond func(*decode.Packet) bool
	get  func(*decode.Packet) uint64
	f    *decode.Field
	root *decode.Field // its protocol, the layer's key
	// safe: what AppendValue prints for it never needs escaping in a
	// JSON string (digits, hex, addresses, times, field names), so it is
	// appended as it is, not scanned byte by byte.
	safe  bool
	key   []byte // "abbrev":
	layer []byte // "root":{
	ek    []byte // -T ek's key: "root_abbrev_with_underscores":
}

var (
	jsonFieldsOnce sync.Once
	jsonFieldList  []jsonField
)

// jsonFields returns every field JSON prints (all but the protocols,
// which are the layers' keys), in registry order.
func jsonFields() []jsonField {
	jsonFieldsOnce.Do(func() {
		for _, f := range decode.Fields() {
			r := f
			for r.Parent != nil {
				r = r.Parent
			}
			if r == f {
				continue
			}
			hdr, cond, get := f.UintAccessor()
			jsonFieldList = append(jsonFieldList, jsonField{hdr: hdr, cond: cond, get: get, f: f, root: r, safe: f.Type != decode.FTString,
				key: append(appendJSONString(nil, f.Abbrev), ':'), layer: append(appendJSONString(nil, r.Abbrev), ":{"...),
				ek: append(appendJSONString(nil, r.Abbrev+"_"+strings.ReplaceAll(f.Abbrev, ".", "_")), ':')})
		}
	})
	return jsonFieldList
}

// jsonCand is a field that may occur in packets with a given set of
// header bits, with what the loop in Append needs of it in one place: the
// loop then reads a few KiB in order instead of a jsonField and a
// decode.Field scattered over the heap for each of some 300 fields.
type jsonCand struct {
	cond func(*decode.Packet) bool
	get  func(*decode.Packet) uint64 // nil: use Values
	jf   *jsonField
}

// candidates returns the fields, in registry order, that may occur in a
// packet of shape sh: those whose headers are all present, and the
// inner-occurrence fields when it has HdrInner (decode.Field.Multi),
// which go through Values; the fields of upper-layer protocols only if
// it has one.
func (jp *JSONPrinter) candidates(sh jsonShape) []jsonCand {
	if c, ok := jp.byHas[sh]; ok {
		return c
	}
	if jp.byHas == nil || len(jp.byHas) >= maxHasSets {
		jp.byHas = make(map[jsonShape][]jsonCand)
	}
	has := sh.has
	probe := decode.Packet{Has: has}
	c := []jsonCand{}
	for i := range jsonFields() {
		jf := &jsonFieldList[i]
		multi := jf.f.Multi(&probe)
		if has&jf.hdr != jf.hdr && !multi || jf.f.NeedsULP() && !sh.ulp {
			continue
		}
		jc := jsonCand{jf: jf}
		if jf.get != nil && !multi {
			jc.cond, jc.get = jf.cond, jf.get
		}
		c = append(c, jc)
	}
	jp.byHas[sh] = c
	return c
}

// Append appends p as AppendJSON does.
func (jp *JSONPrinter) Append(dst []byte, p *decode.Packet) []byte {
	dst = append(dst, `{"frame":{"number":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = append(dst, `,"time":"`...)
	dst = decode.AppendRFC3339Nano(dst, p.Frame.Time)
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
	dst = append(dst, `},"summary":{"source":"`...)
	mark := len(dst)
	dst = jp.escape(appendAddr(dst, p, true), mark)
	dst = append(dst, `","destination":"`...)
	mark = len(dst)
	dst = jp.escape(appendAddr(dst, p, false), mark)
	dst = append(dst, `","protocol":`...)
	dst = appendJSONString(dst, Protocol(p))
	dst = append(dst, `,"info":"`...)
	mark = len(dst)
	dst = jp.escape(AppendInfo(dst, p), mark)
	dst = append(dst, `"},"layers":{`...)
	dst = jp.appendLayers(dst, p, false)
	dst = append(dst, `},"flags":[`...)
	if p.Flags != 0 {
		for i, n := range p.Flags.Names() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, n)
		}
	}
	return append(dst, "]}"...)
}

// appendLayers appends p's fields layer by layer ("root":{"key":value,
// ...},...): the fields that may occur in a packet of p's shape
// (candidates), as -T json writes them, or, with ek, as -T ek does (its
// keys, booleans bare, absolute times in ISO 8601).
func (jp *JSONPrinter) appendLayers(dst []byte, p *decode.Packet, ek bool) []byte {
	var root *decode.Field
	firstLayer, firstField := true, true
	cands := jp.candidates(jsonShape{p.Has, p.Analysis.ULP != nil})
	for ci := range cands {
		jc := &cands[ci]
		direct := jc.get != nil
		var u uint64
		n := 1
		if direct {
			// At most one occurrence, an integer: no Value slice.
			if jc.cond != nil && !jc.cond(p) {
				continue
			}
			u = jc.get(p)
		} else {
			jp.vals = jc.jf.f.Values(p, jp.vals[:0])
			if n = len(jp.vals); n == 0 {
				continue
			}
		}
		jf := jc.jf
		if jf.root != root {
			if root != nil {
				dst = append(dst, '}')
			}
			if !firstLayer {
				dst = append(dst, ',')
			}
			firstLayer, firstField = false, true
			root = jf.root
			dst = append(dst, jf.layer...)
		}
		if !firstField {
			dst = append(dst, ',')
		}
		firstField = false
		if ek {
			dst = append(dst, jf.ek...)
		} else {
			dst = append(dst, jf.key...)
		}
		switch {
		case ek:
			if direct {
				dst = jp.appendEKValue(dst, jf, decode.Value{U: u})
				continue
			}
		case direct:
			// -T json's integers, written here: the calls cost 8% of its
			// instructions
			dst = append(dst, '"')
			dst = jf.f.AppendValue(dst, decode.Value{U: u})
			dst = append(dst, '"')
			continue
		}
		if n > 1 {
			dst = append(dst, '[')
		}
		for i, v := range jp.vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			if ek {
				dst = jp.appendEKValue(dst, jf, v)
				continue
			}
			dst = append(dst, '"')
			mark := len(dst)
			dst = jf.f.AppendValue(dst, v)
			if !jf.safe {
				dst = jp.escape(dst, mark)
			}
			dst = append(dst, '"')
		}
		if n > 1 {
			dst = append(dst, ']')
		}
	}
	if root != nil {
		dst = append(dst, '}')
	}
	return dst
}

// appendEKValue appends one value of field jf as -T ek writes it: a
// boolean as true or false, anything else as appendQuoted does.
func (jp *JSONPrinter) appendEKValue(dst []byte, jf *jsonField, v decode.Value) []byte {
	if jf.f.Type == decode.FTBoolean {
		return strconv.AppendBool(dst, v.U != 0)
	}
	return jp.appendQuoted(dst, jf.f, v, jf.safe, true)
}

// appendQuoted appends v as a JSON string, formatted as -T fields does,
// but for -T ek (ek) an absolute time, which it writes in ISO 8601 (UTC),
// as tshark; safe: what AppendValue writes of f needs no escaping
// (jsonField.safe).
func (jp *JSONPrinter) appendQuoted(dst []byte, f *decode.Field, v decode.Value, safe, ek bool) []byte {
	dst = append(dst, '"')
	if ek && f.Type == decode.FTAbsTime {
		dst = decode.AppendRFC3339Nano(dst, time.Unix(0, int64(v.U)))
		return append(dst, '"')
	}
	mark := len(dst)
	dst = f.AppendValue(dst, v)
	if !safe {
		dst = jp.escape(dst, mark)
	}
	return append(dst, '"')
}

// escape makes dst[mark:], text appended as it is, the inside of a JSON
// string, as appendJSONString writes it. Most text needs nothing: it is
// only scanned.
func (jp *JSONPrinter) escape(dst []byte, mark int) []byte {
	i := mark
	for ; i < len(dst); i++ {
		if c := dst[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' {
			break
		}
	}
	if i == len(dst) {
		return dst
	}
	jp.tmp = append(jp.tmp[:0], dst[i:]...)
	dst = appendJSONText(dst[:i], jp.tmp)
	return dst
}

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(appendJSONText(dst, s), '"')
}

// appendJSONText appends s escaped for the inside of a JSON string:
// quotes, backslashes and control characters escaped, invalid UTF-8 as
// U+FFFD.
func appendJSONText[T string | []byte](dst []byte, s T) []byte {
	const hx = "0123456789abcdef"
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
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}
