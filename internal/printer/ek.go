package printer

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// EKPrinter prints packets as tshark -T ek does: newline-delimited JSON
// for Elasticsearch's bulk API (also read by ClickHouse and DuckDB), two
// lines a packet:
//
//	{"index":{"_index":"packets-2026-11-22","_type":"doc"}}
//	{"timestamp":"1795320139153","layers":{"frame":{"frame_frame_number":"1",...},"eth":{"eth_eth_dst":"02:00:0a:4d:00:02",...},...}}
//
// A layer's keys are its protocol's name, "_", and the field's name with
// its dots made underscores ("infiniband_infiniband_bth_psn"); values are
// strings formatted as -T fields prints them, booleans true or false, an
// array when the field occurs more than once. With -e (Fields), the
// layers hold just those fields, each an array of strings:
// {"timestamp":"...","layers":{"frame_number":["1"],"infiniband_bth_psn":["768"]}}.
// Use one per goroutine.
type EKPrinter struct {
	fields []*decode.Field // -e, or nil for every field
	keys   [][]byte        // "frame_number": for fields
	vals   []decode.Value
	jp     JSONPrinter
}

// NewEKPrinter returns a printer of every field, or of fields (by name)
// when given.
func NewEKPrinter(fields []string) (*EKPrinter, error) {
	ep := &EKPrinter{vals: make([]decode.Value, 0, 16)}
	for _, name := range fields {
		f := decode.FieldByName(name)
		if f == nil {
			return nil, UnknownFieldError(name)
		}
		ep.fields = append(ep.fields, f)
		ep.keys = append(ep.keys, append(appendJSONString(nil, strings.ReplaceAll(f.Abbrev, ".", "_")), ':'))
	}
	return ep, nil
}

// Clone returns a printer of the same fields with scratch of its own.
func (ep *EKPrinter) Clone() *EKPrinter {
	return &EKPrinter{fields: ep.fields, keys: ep.keys, vals: make([]decode.Value, 0, 16)}
}

// Append appends p's two lines.
func (ep *EKPrinter) Append(dst []byte, p *decode.Packet) []byte {
	dst = append(dst, `{"index":{"_index":"packets-`...)
	dst = p.Frame.Time.Local().AppendFormat(dst, "2006-01-02")
	dst = append(dst, `","_type":"doc"}}`+"\n"+`{"timestamp":"`...)
	dst = strconv.AppendInt(dst, p.Frame.Time.UnixMilli(), 10)
	dst = append(dst, `","layers":{`...)
	if ep.fields != nil {
		first := true
		for i, f := range ep.fields {
			ep.vals = f.Values(p, ep.vals[:0])
			if len(ep.vals) == 0 {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, ep.keys[i]...)
			dst = append(dst, '[')
			for j, v := range ep.vals {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = ep.appendString(dst, f, v, f.Type != decode.FTString)
			}
			dst = append(dst, ']')
		}
		return append(dst, "}}\n"...)
	}
	// Every field: the fields that may occur in a packet of p's shape,
	// as -T json finds them (JSONPrinter.candidates).
	var root *decode.Field
	firstLayer, firstField := true, true
	for _, jc := range ep.jp.candidates(jsonShape{p.Has, p.Analysis.ULP != nil}) {
		direct := jc.get != nil
		var u uint64
		n := 1
		if direct {
			if jc.cond != nil && !jc.cond(p) {
				continue
			}
			u = jc.get(p)
		} else {
			ep.vals = jc.jf.f.Values(p, ep.vals[:0])
			if n = len(ep.vals); n == 0 {
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
		dst = append(dst, jf.ek...)
		if direct {
			dst = ep.appendValue(dst, jf, decode.Value{U: u})
			continue
		}
		if n > 1 {
			dst = append(dst, '[')
		}
		for j, v := range ep.vals {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = ep.appendValue(dst, jf, v)
		}
		if n > 1 {
			dst = append(dst, ']')
		}
	}
	if root != nil {
		dst = append(dst, '}')
	}
	return append(dst, "}}\n"...)
}

// appendValue appends v of every-field output: a boolean as true or
// false, anything else as appendString writes it.
func (ep *EKPrinter) appendValue(dst []byte, jf *jsonField, v decode.Value) []byte {
	if jf.f.Type == decode.FTBoolean {
		return strconv.AppendBool(dst, v.U != 0)
	}
	return ep.appendString(dst, jf.f, v, jf.safe)
}

// appendString appends v as a JSON string, formatted as -T fields does
// but for absolute times, which EK writes in ISO 8601 (UTC), as tshark;
// safe: what AppendValue writes of f needs no escaping (jsonField.safe).
func (ep *EKPrinter) appendString(dst []byte, f *decode.Field, v decode.Value, safe bool) []byte {
	if f.Type == decode.FTAbsTime {
		dst = append(dst, '"')
		dst = decode.AppendRFC3339Nano(dst, time.Unix(0, int64(v.U)))
		return append(dst, '"')
	}
	dst = append(dst, '"')
	mark := len(dst)
	dst = f.AppendValue(dst, v)
	if !safe {
		dst = ep.jp.escape(dst, mark)
	}
	return append(dst, '"')
}
