// Package filter compiles Wireshark display filters and evaluates them on
// decoded packets.
//
// The language is Wireshark's, on rocetap's field registry (any field
// `rocetap fields` lists, including analysis fields other packages
// register): field presence (infiniband.reth), comparisons (== != > >= <
// <= and eq ne gt ge lt le, plus === for all-equal and !== / ~= for
// any-not-equal), contains, matches (RE2 regular expressions), bitwise
// and (&, alone or before a comparison), sets and ranges (in {4 6..11}),
// slices of byte fields ([i:len], [i-j], [i], [:len], [i:], negative
// offsets from the end), not/and/xor/or (also ! && ^^ ||) with
// parentheses. not binds tightest, then and, xor, or.
//
// Literals take the type of the field they are compared with: integers in
// decimal, hex (0x1f) or octal (017); MAC, IPv4 and IPv6 addresses and
// CIDR prefixes (ip.addr == 10.1.0.0/16); byte strings (aa:bb:cc); quoted
// strings; seconds for time fields.
//
// Fields that occur more than once (ip.addr, udp.port, vlan.id) follow
// Wireshark: == and the other comparisons hold if any occurrence matches;
// != holds if no occurrence equals the value. A comparison with an absent
// field is false.
//
// A compiled Filter evaluates without allocating; it keeps scratch space,
// so use Clone for each goroutine.
package filter

import (
	"strings"

	"github.com/rocetap/rocetap/decode"
)

// Filter is a compiled display filter.
type Filter struct {
	expr     string
	root     node
	fields   []*decode.Field
	scratch  []decode.Value
	scratch2 []decode.Value
}

// Compile parses and type-checks expr against the field registry. Errors
// are *SyntaxError with the position of the bad token.
func Compile(expr string) (*Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks}
	if p.peek().kind == tEOF {
		return nil, p.errAt(p.peek(), "empty filter: write an expression such as infiniband.bth.opcode == 4")
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errAt(t, "unexpected %q after a complete expression (missing and/or?)", t.text)
	}
	return &Filter{expr: expr, root: root, fields: p.fields, scratch: make([]decode.Value, 0, 16), scratch2: make([]decode.Value, 0, 16)}, nil
}

// MustCompile is Compile for expressions known to be valid; it panics on
// error.
func MustCompile(expr string) *Filter {
	f, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return f
}

// Match reports whether p passes the filter.
func (f *Filter) Match(p *decode.Packet) bool { return f.root.eval(p, f) }

// Clone returns a Filter sharing the compiled expression with its own
// scratch space, for another goroutine.
func (f *Filter) Clone() *Filter {
	c := *f
	c.scratch = make([]decode.Value, 0, 16)
	c.scratch2 = make([]decode.Value, 0, 16)
	return &c
}

// Expr returns the expression as written.
func (f *Filter) Expr() string { return f.expr }

// String returns the expression in canonical form, fully parenthesized.
func (f *Filter) String() string { return f.root.String() }

// Fields returns the fields the filter refers to, in order of appearance.
func (f *Filter) Fields() []*decode.Field { return f.fields }

// values fetches the occurrences of field into the filter's scratch.
func (f *Filter) values(fl *decode.Field, p *decode.Packet) []decode.Value {
	f.scratch = fl.Values(p, f.scratch[:0])
	return f.scratch
}

// Explain describes the compiled filter for `rocetap filter check`.
func (f *Filter) Explain() string {
	var b strings.Builder
	b.WriteString("valid filter\n  canonical: ")
	b.WriteString(f.String())
	b.WriteString("\n  fields:\n")
	seen := map[*decode.Field]bool{}
	for _, fl := range f.fields {
		if seen[fl] {
			continue
		}
		seen[fl] = true
		kind := fl.Type.String()
		if fl.Base != decode.BaseNone {
			kind += ", " + fl.Base.String()
		}
		b.WriteString("    " + fl.Abbrev + "  (" + kind + ") " + fl.Name)
		if fl.Hidden {
			b.WriteString(" (either side: matches when any occurrence does)")
		}
		b.WriteString("\n")
	}
	return b.String()
}
