package printer

import (
	"strconv"
	"strings"

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
				dst = ep.jp.appendQuoted(dst, f, v, f.Type != decode.FTString, true)
			}
			dst = append(dst, ']')
		}
		return append(dst, "}}\n"...)
	}
	// Every field: the fields that may occur in a packet of p's shape,
	// as -T json finds and writes them, with EK's keys and values.
	dst = ep.jp.appendLayers(dst, p, true)
	return append(dst, "}}\n"...)
}
