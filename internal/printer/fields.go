package printer

import (
	"fmt"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

// FieldsOptions are tshark's -E options for -T fields.
type FieldsOptions struct {
	Header     bool // -E header=y: first line names the fields
	Separator  byte // -E separator=/t|/s|c (default tab)
	Occurrence byte // -E occurrence=f|l|a (default a: all)
	Aggregator byte // -E aggregator=,|/s|c (default ',')
	Quote      byte // -E quote=d|s|n (default none)
}

// DefaultFieldsOptions are tshark's defaults.
func DefaultFieldsOptions() FieldsOptions {
	return FieldsOptions{Separator: '\t', Occurrence: 'a', Aggregator: ','}
}

// ParseE applies one -E option ("header=y", "separator=,", ...).
func (o *FieldsOptions) ParseE(opt string) error {
	k, v, ok := strings.Cut(opt, "=")
	if !ok {
		return fmt.Errorf("-E %q: want name=value, e.g. -E header=y or -E separator=,", opt)
	}
	char := func() (byte, error) {
		switch v {
		case "/t":
			return '\t', nil
		case "/s":
			return ' ', nil
		}
		if len(v) != 1 {
			return 0, fmt.Errorf("-E %s=%q: want one character, /t (tab) or /s (space)", k, v)
		}
		return v[0], nil
	}
	var err error
	switch k {
	case "header":
		switch v {
		case "y":
			o.Header = true
		case "n":
			o.Header = false
		default:
			return fmt.Errorf("-E header=%q: want y or n", v)
		}
	case "separator":
		o.Separator, err = char()
	case "aggregator":
		o.Aggregator, err = char()
	case "occurrence":
		if v != "f" && v != "l" && v != "a" {
			return fmt.Errorf("-E occurrence=%q: want f (first), l (last) or a (all)", v)
		}
		o.Occurrence = v[0]
	case "quote":
		switch v {
		case "d":
			o.Quote = '"'
		case "s":
			o.Quote = '\''
		case "n":
			o.Quote = 0
		default:
			return fmt.Errorf("-E quote=%q: want d, s or n", v)
		}
	default:
		return fmt.Errorf("-E %q: unknown option; rocetap knows header, separator, occurrence, aggregator and quote", k)
	}
	return err
}

// FieldsPrinter prints selected fields, one line per packet, as tshark -T
// fields does. It reuses its buffers: printing allocates nothing.
type FieldsPrinter struct {
	fields []*decode.Field
	// direct[i].get is set when fields[i] occurs at most once and has an
	// integer value: it is printed without building a Value slice.
	direct []directField
	opts   FieldsOptions
	vals   []decode.Value
}

// NewFieldsPrinter resolves field names; an unknown name is an error that
// suggests the closest known names.
func NewFieldsPrinter(names []string, opts FieldsOptions) (*FieldsPrinter, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("-T fields needs at least one -e FIELD (list them with `rocetap fields`)")
	}
	fp := &FieldsPrinter{opts: opts, vals: make([]decode.Value, 0, 16)}
	for _, n := range names {
		f := decode.FieldByName(n)
		if f == nil {
			return nil, UnknownFieldError(n)
		}
		fp.fields = append(fp.fields, f)
		var d directField
		if d.hdr, d.cond, d.get = f.UintAccessor(); d.get != nil {
			d.app = f.UintAppender()
		}
		fp.direct = append(fp.direct, d)
	}
	return fp, nil
}

// directField is a field with a direct path: its presence test, getter
// and formatter (decode.Field.UintAccessor and UintAppender), called
// without going through the Field for every line.
type directField struct {
	hdr  decode.Hdr
	cond func(*decode.Packet) bool
	get  func(*decode.Packet) uint64
	app  decode.UintFormat
}

// UnknownFieldError says a field name is unknown and suggests close ones.
func UnknownFieldError(name string) error {
	msg := fmt.Sprintf("unknown field %q", name)
	if s := decode.Suggest(name, 3); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, ", ") + "?)"
	}
	return fmt.Errorf("%s; `rocetap fields` lists every field", msg)
}

// AppendHeader appends the header line (field names).
func (fp *FieldsPrinter) AppendHeader(dst []byte) []byte {
	for i, f := range fp.fields {
		if i > 0 {
			dst = append(dst, fp.opts.Separator)
		}
		dst = append(dst, f.Abbrev...)
	}
	return append(dst, '\n')
}

// Append appends one packet's line.
func (fp *FieldsPrinter) Append(dst []byte, p *decode.Packet) []byte {
	q := fp.opts.Quote
	for i, f := range fp.fields {
		if i > 0 {
			dst = append(dst, fp.opts.Separator)
		}
		if d := &fp.direct[i]; d.get != nil && !f.Multi(p) {
			// One occurrence at most: the occurrence and aggregator
			// options change nothing.
			if p.Has&d.hdr != d.hdr || d.cond != nil && !d.cond(p) {
				continue
			}
			if q != 0 {
				dst = append(dst, q)
			}
			dst = d.app.Append(dst, d.get(p))
			if q != 0 {
				dst = append(dst, q)
			}
			continue
		}
		fp.vals = f.Values(p, fp.vals[:0])
		vs := fp.vals
		if len(vs) == 0 {
			continue
		}
		switch fp.opts.Occurrence {
		case 'f':
			vs = vs[:1]
		case 'l':
			vs = vs[len(vs)-1:]
		}
		if q != 0 {
			dst = append(dst, q)
		}
		for j, v := range vs {
			if j > 0 {
				dst = append(dst, fp.opts.Aggregator)
			}
			dst = f.AppendValue(dst, v)
		}
		if q != 0 {
			dst = append(dst, q)
		}
	}
	return append(dst, '\n')
}

// Clone returns a printer with the same fields and options and its own
// scratch buffer, for use on another goroutine.
func (fp *FieldsPrinter) Clone() *FieldsPrinter {
	return &FieldsPrinter{fields: fp.fields, direct: fp.direct, opts: fp.opts, vals: make([]decode.Value, 0, 16)}
}
