package filter

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

type parser struct {
	expr   string
	toks   []token
	i      int
	fields []*decode.Field
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) errAt(t token, format string, a ...any) *SyntaxError {
	n := t.end - t.pos
	if n < 1 {
		n = 1
	}
	return &SyntaxError{Expr: p.expr, Pos: t.pos, Len: n, Msg: fmt.Sprintf(format, a...)}
}

// isKeyword reports whether t is one of the (case-insensitive) words or
// the symbol given.
func isKeyword(t token, words ...string) bool {
	if t.kind != tWord && t.kind != tOp {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

func (p *parser) parseOr() (node, error) {
	a, err := p.parseXor()
	if err != nil {
		return nil, err
	}
	if !isKeyword(p.peek(), "or", "||") {
		return a, nil
	}
	or := &orNode{list: []node{a}}
	for isKeyword(p.peek(), "or", "||") {
		p.next()
		b, err := p.parseXor()
		if err != nil {
			return nil, err
		}
		or.list = append(or.list, b)
	}
	return or, nil
}

func (p *parser) parseXor() (node, error) {
	a, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for isKeyword(p.peek(), "xor", "^^") {
		p.next()
		b, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		a = &xorNode{a, b}
	}
	return a, nil
}

func (p *parser) parseAnd() (node, error) {
	a, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	if !isKeyword(p.peek(), "and", "&&") {
		return a, nil
	}
	and := &andNode{list: []node{a}}
	for isKeyword(p.peek(), "and", "&&") {
		p.next()
		b, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		and.list = append(and.list, b)
	}
	and.list = groupFast(and.list)
	if len(and.list) == 1 {
		return and.list[0], nil
	}
	return and, nil
}

func (p *parser) parseUnary() (node, error) {
	if isKeyword(p.peek(), "not", "!") {
		p.next()
		a, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &notNode{a}, nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (node, error) {
	t := p.peek()
	switch t.kind {
	case tLParen:
		p.next()
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, p.errAt(c, "missing \")\": the \"(\" at column %d is never closed", t.pos+1)
		}
		return n, nil
	case tWord:
		n, err := p.parseRelation()
		if err != nil {
			return nil, err
		}
		return fast(n), nil
	case tEOF:
		return nil, p.errAt(t, "expression ends where a field or \"(\" was expected")
	}
	return nil, p.errAt(t, "expected a field name or \"(\", found %q", t.text)
}

// aliases are protocol names Wireshark users type that rocetap files under
// another name.
var aliases = map[string]string{"pfc": "macc.cbfc.enbv", "cm": "infiniband.cm", "mad": "infiniband.mad", "roce": "infiniband", "rroce": "infiniband"}

func (p *parser) field(t token) (*decode.Field, error) {
	name := t.text
	if a, ok := aliases[name]; ok && decode.FieldByName(name) == nil {
		name = a
	}
	fl := decode.FieldByName(name)
	if fl == nil {
		if isKeyword(t, "and", "or", "not", "xor", "in", "contains", "matches", "eq", "ne", "gt", "ge", "lt", "le") {
			return nil, p.errAt(t, "%q is an operator; a field name was expected here", t.text)
		}
		e := p.errAt(t, "unknown field %q", t.text)
		e.Suggest = decode.Suggest(t.text, 3)
		if len(t.text) > 0 && (t.text[0] >= '0' && t.text[0] <= '9') {
			e.Msg = fmt.Sprintf("expected a field name, found the value %q (put the field on the left: field == value)", t.text)
			e.Suggest = nil
		}
		return nil, e
	}
	p.fields = append(p.fields, fl)
	return fl, nil
}

var relOps = map[string]cmpOp{
	"==": opEq, "eq": opEq, "any_eq": opEq,
	"!=": opNe, "ne": opNe, "all_ne": opNe,
	"===": opAllEq, "all_eq": opAllEq,
	"!==": opAnyNe, "~=": opAnyNe, "any_ne": opAnyNe,
	">": opGt, "gt": opGt, ">=": opGe, "ge": opGe,
	"<": opLt, "lt": opLt, "<=": opLe, "le": opLe,
}

func (p *parser) parseRelation() (node, error) {
	ft := p.next()
	fl, err := p.field(ft)
	if err != nil {
		return nil, err
	}
	ref := fieldRef{fl: fl, text: ft.text, sl: noSlice}
	if p.peek().kind == tLBrack {
		if ref.sl, err = p.parseSlice(fl); err != nil {
			return nil, err
		}
	}
	t := p.peek()
	// Bitwise and: field & mask, optionally followed by a comparison.
	if t.kind == tOp && t.text == "&" {
		p.next()
		if !fl.Type.IsInteger() || ref.sl != noSlice {
			return nil, p.errAt(t, "& needs an integer field; %s is %s", fl.Abbrev, fl.Type)
		}
		mt := p.next()
		mask, err := p.intLiteral(fl, mt)
		if err != nil {
			return nil, err
		}
		ref.mask, ref.hasMask = mask, true
		t = p.peek()
		if _, ok := p.relOp(t); !ok {
			return &intTest{ref: ref}, nil
		}
	}
	if op, ok := p.relOp(t); ok {
		p.next()
		return p.parseCompare(ref, op, t)
	}
	switch {
	case isKeyword(t, "in"):
		p.next()
		return p.parseSet(ref, t)
	case isKeyword(t, "contains"):
		p.next()
		return p.parseContains(ref, t)
	case isKeyword(t, "matches", "~"):
		p.next()
		return p.parseMatches(ref, t)
	}
	return &presentNode{ref: ref}, nil
}

func (p *parser) relOp(t token) (cmpOp, bool) {
	if t.kind != tOp && t.kind != tWord {
		return 0, false
	}
	op, ok := relOps[strings.ToLower(t.text)]
	return op, ok
}

// rhs reads the value token after an operator.
func (p *parser) rhs(after token) (token, error) {
	t := p.next()
	switch t.kind {
	case tWord, tString:
		return t, nil
	case tEOF:
		return t, p.errAt(t, "expression ends after %q: a value was expected", after.text)
	}
	return t, p.errAt(t, "expected a value after %q, found %q", after.text, t.text)
}

func looksLikeLiteral(s string) bool { return s != "" && (s[0] >= '0' && s[0] <= '9') }

func (p *parser) parseCompare(ref fieldRef, op cmpOp, opTok token) (node, error) {
	vt, err := p.rhs(opTok)
	if err != nil {
		return nil, err
	}
	return p.compareValue(ref, op, opTok, vt)
}

// compareValue builds "ref op vt", parsing vt as a literal of ref's type.
func (p *parser) compareValue(ref fieldRef, op cmpOp, opTok, vt token) (node, error) {
	fl := ref.fl
	if other := decode.FieldByName(vt.text); vt.kind == tWord && other != nil && !looksLikeLiteral(vt.text) {
		return p.fieldCompare(ref, op, vt, other)
	}
	if ref.sl != noSlice {
		if ref.sl.n == 1 && vt.kind == tWord && strings.HasPrefix(vt.text, "0x") {
			// Wireshark compares a one-byte slice with an integer too.
			if v, err := strconv.ParseUint(vt.text, 0, 8); err == nil {
				return &bytesCmp{ref: ref, op: op, val: []byte{byte(v)}, text: vt.text}, nil
			}
		}
		b, err := p.bytesLiteral(vt, -1)
		if err != nil {
			return nil, err
		}
		return &bytesCmp{ref: ref, op: op, val: b}, nil
	}
	switch fl.Type {
	case decode.FTBoolean, decode.FTUint8, decode.FTUint16, decode.FTUint24, decode.FTUint32, decode.FTUint64:
		v, err := p.intLiteral(fl, vt)
		if err != nil {
			return nil, err
		}
		return &intCmp{ref: ref, op: op, val: v}, nil
	case decode.FTInt16, decode.FTInt32:
		v, err := strconv.ParseInt(vt.text, 0, 64)
		if err != nil {
			return nil, p.errAt(vt, "%q is not an integer (%s is %s)", vt.text, fl.Abbrev, fl.Type)
		}
		return &intCmp{ref: ref, op: op, val: uint64(v), signed: true}, nil
	case decode.FTRelTime:
		secs, err := strconv.ParseFloat(vt.text, 64)
		if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return nil, p.errAt(vt, "%q is not a number of seconds (e.g. 0.0015)", vt.text)
		}
		return &intCmp{ref: ref, op: op, val: uint64(int64(math.Round(secs * 1e9))), signed: true}, nil
	case decode.FTIPv4:
		if pf, err := netip.ParsePrefix(vt.text); err == nil && pf.Addr().Is4() {
			if op != opEq && op != opNe {
				return nil, p.errAt(opTok, "a CIDR prefix can only be compared with == or !=")
			}
			a := pf.Masked().Addr().As4()
			mask := uint64(0)
			if pf.Bits() > 0 {
				mask = (0xFFFFFFFF << (32 - pf.Bits())) & 0xFFFFFFFF
			}
			return &intCmp{ref: withMask(ref, mask), op: op, val: uint64(a[0])<<24 | uint64(a[1])<<16 | uint64(a[2])<<8 | uint64(a[3]), text: vt.text}, nil
		}
		a, err := netip.ParseAddr(vt.text)
		if err != nil || !a.Is4() {
			return nil, p.errAt(vt, "%q is not an IPv4 address or prefix (e.g. 10.77.0.1 or 10.77.0.0/16)", vt.text)
		}
		b := a.As4()
		return &intCmp{ref: ref, op: op, val: uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]), text: vt.text}, nil
	case decode.FTIPv6:
		if pf, err := netip.ParsePrefix(vt.text); err == nil && pf.Addr().Is6() {
			if op != opEq && op != opNe {
				return nil, p.errAt(opTok, "a CIDR prefix can only be compared with == or !=")
			}
			a := pf.Masked().Addr().As16()
			return &prefixCmp{ref: ref, op: op, prefix: a, bits: pf.Bits(), text: vt.text}, nil
		}
		a, err := netip.ParseAddr(vt.text)
		if err != nil || !a.Is6() {
			return nil, p.errAt(vt, "%q is not an IPv6 address or prefix (e.g. fd77::1 or fd77::/16)", vt.text)
		}
		b := a.As16()
		return &bytesCmp{ref: ref, op: op, val: b[:], text: vt.text}, nil
	case decode.FTEther:
		b, err := p.bytesLiteral(vt, 6)
		if err != nil {
			return nil, err
		}
		return &bytesCmp{ref: ref, op: op, val: b, text: vt.text}, nil
	case decode.FTBytes:
		b, err := p.bytesLiteral(vt, -1)
		if err != nil {
			return nil, err
		}
		return &bytesCmp{ref: ref, op: op, val: b, text: vt.text}, nil
	case decode.FTString:
		return &bytesCmp{ref: ref, op: op, val: []byte(vt.text), str: true}, nil
	case decode.FTAbsTime:
		return nil, p.errAt(vt, "comparing %s is not supported; use frame.time_epoch or frame.time_relative (seconds)", fl.Abbrev)
	}
	return nil, p.errAt(vt, "%s (%s) cannot be compared with a value; test its presence alone (%s)", fl.Abbrev, fl.Type, fl.Abbrev)
}

func withMask(r fieldRef, mask uint64) fieldRef {
	r.mask, r.hasMask = mask, true
	return r
}

// intLiteral parses an integer for an integer field: decimal, 0x hex, 0
// octal, true/false for booleans.
func (p *parser) intLiteral(fl *decode.Field, t token) (uint64, error) {
	if t.kind != tWord {
		return 0, p.errAt(t, "%s is %s: compare it with a number, not %q", fl.Abbrev, fl.Type, t.text)
	}
	if fl.Type == decode.FTBoolean {
		switch strings.ToLower(t.text) {
		case "true":
			return 1, nil
		case "false":
			return 0, nil
		}
	}
	v, err := strconv.ParseUint(t.text, 0, 64)
	if err != nil {
		if strings.HasPrefix(t.text, "-") {
			return 0, p.errAt(t, "%s is unsigned: %q is negative", fl.Abbrev, t.text)
		}
		return 0, p.errAt(t, "%q is not an integer (decimal, 0x hex or 0 octal) for %s (%s)", t.text, fl.Abbrev, fl.Type)
	}
	if max := maxOf(fl.Type); v > max {
		return 0, p.errAt(t, "%s is %s: %s does not fit (largest is %d)", fl.Abbrev, fl.Type, t.text, max)
	}
	return v, nil
}

func maxOf(t decode.FieldType) uint64 {
	switch t {
	case decode.FTBoolean:
		return 1
	case decode.FTUint8:
		return 0xFF
	case decode.FTUint16:
		return 0xFFFF
	case decode.FTUint24:
		return 0xFFFFFF
	case decode.FTUint32:
		return 0xFFFFFFFF
	}
	return math.MaxUint64
}

// bytesLiteral parses aa:bb:cc (or - . separators, or a single byte), a
// Cisco-style MAC (aabb.ccdd.eeff) or a quoted string. n is the required
// length, or -1.
func (p *parser) bytesLiteral(t token, n int) ([]byte, error) {
	if t.kind == tString {
		if n >= 0 && len(t.text) != n {
			return nil, p.errAt(t, "want %d bytes, the string has %d", n, len(t.text))
		}
		return []byte(t.text), nil
	}
	s := t.text
	var out []byte
	if n == 6 && len(s) == 14 && s[4] == '.' && s[9] == '.' { // aabb.ccdd.eeff
		s = s[0:2] + ":" + s[2:4] + ":" + s[5:7] + ":" + s[7:9] + ":" + s[10:12] + ":" + s[12:14]
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' || r == '.' })
	if len(parts) == 1 && len(s)%2 == 0 && len(s) > 2 && n != 6 {
		// Unseparated hex: split into pairs.
		parts = nil
		for i := 0; i < len(s); i += 2 {
			parts = append(parts, s[i:i+2])
		}
	}
	for _, part := range parts {
		if len(part) == 0 || len(part) > 2 || !isHex(part[0]) || len(part) == 2 && !isHex(part[1]) {
			return nil, p.errAt(t, "%q is not a byte string (hex bytes separated by ':', e.g. 01:02:ff)", t.text)
		}
		v, _ := strconv.ParseUint(part, 16, 8)
		out = append(out, byte(v))
	}
	if len(out) == 0 {
		return nil, p.errAt(t, "%q is not a byte string (hex bytes separated by ':', e.g. 01:02:ff)", t.text)
	}
	if n >= 0 && len(out) != n {
		return nil, p.errAt(t, "%q has %d bytes; a MAC address has %d (e.g. 02:00:0a:4d:00:01)", t.text, len(out), n)
	}
	return out, nil
}

func (p *parser) parseSet(ref fieldRef, inTok token) (node, error) {
	if t := p.next(); t.kind != tLBrace {
		return nil, p.errAt(t, "\"in\" needs a set in braces, e.g. in {4 6..11}")
	}
	fl := ref.fl
	intLike := fl.Type.IsInteger() || fl.Type == decode.FTIPv4
	set := &setNode{ref: ref}
	for {
		t := p.next()
		switch {
		case t.kind == tRBrace:
			if len(set.ranges) == 0 && len(set.items) == 0 {
				return nil, p.errAt(t, "empty set")
			}
			return set, nil
		case t.kind == tComma:
			continue
		case t.kind == tEOF:
			return nil, p.errAt(t, "missing \"}\" to close the set")
		case t.kind != tWord && t.kind != tString:
			return nil, p.errAt(t, "unexpected %q in a set", t.text)
		}
		if intLike && ref.sl == noSlice {
			lo, hi := t, t
			if a, b, ok := strings.Cut(t.text, ".."); ok {
				lo = token{kind: tWord, text: a, pos: t.pos, end: t.pos + len(a)}
				hi = token{kind: tWord, text: b, pos: t.pos + len(a) + 2, end: t.end}
				if b == "" {
					hi = p.next()
				}
			} else if n := p.peek(); n.kind == tWord && n.text == ".." {
				p.next()
				hi = p.next()
			} else if n := p.peek(); n.kind == tWord && strings.HasPrefix(n.text, "..") {
				p.next()
				hi = token{kind: tWord, text: n.text[2:], pos: n.pos + 2, end: n.end}
			}
			l, err := p.setValue(ref, lo)
			if err != nil {
				return nil, err
			}
			h, err := p.setValue(ref, hi)
			if err != nil {
				return nil, err
			}
			if h < l {
				return nil, p.errAt(t, "range %s..%s is empty (low end first)", lo.text, hi.text)
			}
			set.ranges = append(set.ranges, rng{l, h})
			continue
		}
		n, err := p.compareValue(ref, opEq, inTok, t)
		if err != nil {
			return nil, err
		}
		set.items = append(set.items, n)
	}
}

func (p *parser) setValue(ref fieldRef, t token) (uint64, error) {
	if ref.fl.Type == decode.FTIPv4 {
		a, err := netip.ParseAddr(t.text)
		if err != nil || !a.Is4() {
			return 0, p.errAt(t, "%q is not an IPv4 address", t.text)
		}
		b := a.As4()
		return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]), nil
	}
	return p.intLiteral(ref.fl, t)
}

func (p *parser) parseContains(ref fieldRef, opTok token) (node, error) {
	vt, err := p.rhs(opTok)
	if err != nil {
		return nil, err
	}
	if !bytesLike(ref.fl) && ref.sl == noSlice {
		return nil, p.errAt(opTok, "contains needs a byte or string field; %s is %s", ref.fl.Abbrev, ref.fl.Type)
	}
	var needle []byte
	if vt.kind == tString || ref.fl.Type == decode.FTString && ref.sl == noSlice {
		needle = []byte(vt.text)
	} else if needle, err = p.bytesLiteral(vt, -1); err != nil {
		return nil, err
	}
	return &containsNode{ref: ref, needle: needle}, nil
}

func (p *parser) parseMatches(ref fieldRef, opTok token) (node, error) {
	vt, err := p.rhs(opTok)
	if err != nil {
		return nil, err
	}
	if !bytesLike(ref.fl) && ref.sl == noSlice {
		return nil, p.errAt(opTok, "matches needs a byte or string field; %s is %s", ref.fl.Abbrev, ref.fl.Type)
	}
	if vt.kind != tString {
		return nil, p.errAt(vt, "matches needs a quoted regular expression, e.g. matches \"^CM\"")
	}
	// Wireshark's matches is case-insensitive by default.
	re, err := regexp.Compile("(?is)" + vt.text)
	if err != nil {
		return nil, p.errAt(vt, "bad regular expression: %v", err)
	}
	return &matchesNode{ref: ref, re: re, text: vt.text}, nil
}

func bytesLike(fl *decode.Field) bool {
	switch fl.Type {
	case decode.FTBytes, decode.FTString, decode.FTEther, decode.FTIPv6, decode.FTProtocol, decode.FTNone:
		return true
	}
	return false
}

// parseSlice reads [i:len], [i-j], [i], [:len], [i:] (negative i counts
// from the end).
func (p *parser) parseSlice(fl *decode.Field) (slice, error) {
	open := p.next()
	var text string
	start := p.peek().pos
	for {
		t := p.next()
		if t.kind == tRBrack {
			break
		}
		if t.kind == tEOF {
			return noSlice, p.errAt(open, "missing \"]\" to close the slice")
		}
		if t.kind == tComma {
			return noSlice, p.errAt(t, "slice lists ([a,b]) are not supported; use one range")
		}
		text += t.text
	}
	bad := func() (slice, error) {
		return noSlice, &SyntaxError{Expr: p.expr, Pos: start, Len: max(1, len(text)), Msg: fmt.Sprintf("%q is not a slice: use [offset:length], [from-to], [offset], [:length] or [offset:]", text)}
	}
	if !bytesLike(fl) {
		return noSlice, p.errAt(open, "%s is %s; only byte and string fields can be sliced", fl.Abbrev, fl.Type)
	}
	atoi := func(s string) (int, bool) {
		v, err := strconv.Atoi(s)
		return v, err == nil
	}
	switch {
	case strings.Contains(text, ":"):
		a, b, _ := strings.Cut(text, ":")
		s := slice{from: 0, n: -1}
		var ok bool
		if a != "" {
			if s.from, ok = atoi(a); !ok {
				return bad()
			}
		}
		if b != "" {
			if s.n, ok = atoi(b); !ok || s.n < 0 {
				return bad()
			}
		}
		return s, nil
	case strings.Count(text, "-") == 1 && text[0] != '-' || strings.Count(text, "-") == 2 && text[0] == '-':
		i := strings.LastIndex(text, "-")
		a, ok1 := atoi(text[:i])
		b, ok2 := atoi(text[i+1:])
		if !ok1 || !ok2 || b < a {
			return bad()
		}
		return slice{from: a, n: b - a + 1}, nil
	default:
		a, ok := atoi(text)
		if !ok {
			return bad()
		}
		return slice{from: a, n: 1}, nil
	}
}

// fieldCompare builds "ref op other": true when some pair of occurrences
// satisfies it (Wireshark's semantics); != when no pair is equal.
func (p *parser) fieldCompare(ref fieldRef, op cmpOp, vt token, other *decode.Field) (node, error) {
	a, b := ref.fl.Type, other.Type
	if usesU(a) != usesU(b) || !a.IsInteger() && a != b || ref.sl != noSlice || ref.hasMask {
		return nil, p.errAt(vt, "%s (%s) and %s (%s) cannot be compared", ref.fl.Abbrev, a, other.Abbrev, b)
	}
	p.fields = append(p.fields, other)
	return &fieldCmp{a: ref.fl, b: other, op: op}, nil
}
