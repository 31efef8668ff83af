package filter

import (
	"bytes"
	"cmp"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

type node interface {
	eval(p *decode.Packet, f *Filter) bool
	String() string
}

type cmpOp uint8

const (
	opEq    cmpOp = iota // any occurrence equal
	opNe                 // no occurrence equal (at least one occurrence)
	opAllEq              // every occurrence equal
	opAnyNe              // some occurrence not equal
	opGt
	opGe
	opLt
	opLe
)

var opNames = [...]string{"==", "!=", "===", "!==", ">", ">=", "<", "<="}

// all reports whether the operator needs every occurrence to satisfy its
// per-occurrence test (!= and ===); the others need one.
func (o cmpOp) all() bool { return o == opNe || o == opAllEq }

// test applies the per-occurrence relation, c being compare(value, literal).
func (o cmpOp) test(c int) bool {
	switch o {
	case opEq, opAllEq:
		return c == 0
	case opNe, opAnyNe:
		return c != 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	case opLt:
		return c < 0
	}
	return c <= 0
}

// slice is [from:n]; n < 0 means to the end; noSlice means none.
type slice struct{ from, n int }

var noSlice = slice{from: 0, n: -2}

func (s slice) apply(b []byte) ([]byte, bool) {
	if s == noSlice {
		return b, true
	}
	from := s.from
	if from < 0 {
		from += len(b)
	}
	if from < 0 || from > len(b) {
		return nil, false
	}
	if s.n < 0 {
		return b[from:], true
	}
	if from+s.n > len(b) {
		return nil, false
	}
	return b[from : from+s.n], true
}

func (s slice) String() string {
	if s == noSlice {
		return ""
	}
	if s.n < 0 {
		return "[" + strconv.Itoa(s.from) + ":]"
	}
	return "[" + strconv.Itoa(s.from) + ":" + strconv.Itoa(s.n) + "]"
}

// fieldRef is a field, an optional slice and an optional & mask.
type fieldRef struct {
	fl      *decode.Field
	text    string
	sl      slice
	mask    uint64
	hasMask bool
}

func (r fieldRef) String() string {
	s := r.fl.Abbrev + r.sl.String()
	if r.hasMask {
		s += " & 0x" + strconv.FormatUint(r.mask, 16)
	}
	return s
}

// forInts calls fn for each integer occurrence (masked), and reports how
// many there were; fn returning true stops early.
func (r *fieldRef) ints(p *decode.Packet, f *Filter, all bool, test func(v uint64) bool) bool {
	if r.fl.HasUint() && !r.fl.Multi(p) {
		v, ok := r.fl.Uint(p)
		if !ok {
			return false
		}
		if r.hasMask {
			v &= r.mask
		}
		return test(v)
	}
	vals := f.values(r.fl, p)
	if len(vals) == 0 {
		return false
	}
	for i := range vals {
		v := vals[i].U
		if r.hasMask {
			v &= r.mask
		}
		if test(v) != all {
			return !all
		}
	}
	return all
}

// blobs is ints for byte and string values (after the slice).
func (r *fieldRef) blobs(p *decode.Packet, f *Filter, all bool, test func(b []byte) bool) bool {
	vals := f.values(r.fl, p)
	n := 0
	for i := range vals {
		b := vals[i].B
		if r.fl.Type == decode.FTString || vals[i].S != "" {
			b = unsafeBytes(vals[i].S)
		}
		b, ok := r.sl.apply(b)
		if !ok {
			continue
		}
		n++
		if test(b) != all {
			return !all
		}
	}
	return n > 0 && all
}

// andNode and orNode hold flattened chains (a and b and c ...).
type andNode struct{ list []node }
type orNode struct{ list []node }
type xorNode struct{ a, b node }
type notNode struct{ a node }

func (n *andNode) eval(p *decode.Packet, f *Filter) bool {
	for _, c := range n.list {
		if !c.eval(p, f) {
			return false
		}
	}
	return true
}

func (n *orNode) eval(p *decode.Packet, f *Filter) bool {
	for _, c := range n.list {
		if c.eval(p, f) {
			return true
		}
	}
	return false
}

func joinNodes(list []node, op string) string {
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, " "+op+" ") + ")"
}
func (n *xorNode) eval(p *decode.Packet, f *Filter) bool { return n.a.eval(p, f) != n.b.eval(p, f) }
func (n *notNode) eval(p *decode.Packet, f *Filter) bool { return !n.a.eval(p, f) }
func (n *andNode) String() string                        { return joinNodes(n.list, "and") }
func (n *orNode) String() string                         { return joinNodes(n.list, "or") }
func (n *xorNode) String() string                        { return "(" + n.a.String() + " xor " + n.b.String() + ")" }
func (n *notNode) String() string                        { return "not " + n.a.String() }

// presentNode: the field (or protocol) occurs.
type presentNode struct{ ref fieldRef }

func (n *presentNode) eval(p *decode.Packet, f *Filter) bool {
	if n.ref.fl.HasUint() && n.ref.sl == noSlice && !n.ref.fl.Multi(p) {
		_, ok := n.ref.fl.Uint(p)
		return ok
	}
	if n.ref.sl != noSlice {
		return n.ref.blobs(p, f, false, func([]byte) bool { return true })
	}
	return len(f.values(n.ref.fl, p)) > 0
}
func (n *presentNode) String() string { return n.ref.String() }

// intTest: field & mask is non-zero.
type intTest struct{ ref fieldRef }

func (n *intTest) eval(p *decode.Packet, f *Filter) bool {
	return n.ref.ints(p, f, false, func(v uint64) bool { return v != 0 })
}
func (n *intTest) String() string { return n.ref.String() }

// intCmp compares integers (also IPv4 addresses, CIDR via the mask, and
// times in nanoseconds when signed).
type intCmp struct {
	ref    fieldRef
	op     cmpOp
	val    uint64
	signed bool
	text   string
}

func (n *intCmp) eval(p *decode.Packet, f *Filter) bool {
	r := &n.ref
	return r.ints(p, f, n.op.all(), func(v uint64) bool {
		if n.signed {
			return n.op.test(cmp.Compare(int64(v), int64(n.val)))
		}
		return n.op.test(cmp.Compare(v, n.val))
	})
}

func (n *intCmp) String() string {
	v := n.text
	if v == "" {
		if n.signed {
			v = strconv.FormatInt(int64(n.val), 10)
		} else {
			v = strconv.FormatUint(n.val, 10)
		}
	}
	if n.ref.fl.Type == decode.FTRelTime {
		v = strconv.FormatFloat(float64(int64(n.val))/1e9, 'f', -1, 64)
	}
	ref := n.ref
	if strings.Contains(n.text, "/") {
		ref.hasMask = false // the prefix length is the mask
	}
	return ref.String() + " " + opNames[n.op] + " " + v
}

// bytesCmp compares bytes, MACs, IPv6 addresses and strings.
type bytesCmp struct {
	ref  fieldRef
	op   cmpOp
	val  []byte
	str  bool
	text string
}

func (n *bytesCmp) eval(p *decode.Packet, f *Filter) bool {
	return n.ref.blobs(p, f, n.op.all(), func(b []byte) bool { return n.op.test(bytes.Compare(b, n.val)) })
}

func (n *bytesCmp) String() string {
	v := n.text
	if n.str || v == "" && n.ref.fl.Type == decode.FTString {
		v = strconv.Quote(string(n.val))
	} else if v == "" {
		parts := make([]string, len(n.val))
		for i, c := range n.val {
			parts[i] = strconv.FormatUint(uint64(c)|0x100, 16)[1:]
		}
		v = strings.Join(parts, ":")
	}
	return n.ref.String() + " " + opNames[n.op] + " " + v
}

// prefixCmp: an IPv6 field within (==) or outside (!=) a prefix.
type prefixCmp struct {
	ref    fieldRef
	op     cmpOp
	prefix [16]byte
	bits   int
	text   string
}

func (n *prefixCmp) eval(p *decode.Packet, f *Filter) bool {
	in := func(b []byte) bool {
		if len(b) != 16 {
			return false
		}
		full := n.bits / 8
		if !bytes.Equal(b[:full], n.prefix[:full]) {
			return false
		}
		if rem := n.bits % 8; rem != 0 {
			m := byte(0xFF << (8 - rem))
			return b[full]&m == n.prefix[full]
		}
		return true
	}
	if n.op == opNe {
		return n.ref.blobs(p, f, true, func(b []byte) bool { return !in(b) })
	}
	return n.ref.blobs(p, f, false, in)
}
func (n *prefixCmp) String() string { return n.ref.String() + " " + opNames[n.op] + " " + n.text }

type rng struct{ lo, hi uint64 }

// fastInt is the common case compiled down: a single-occurrence unsigned
// field compared with a constant, as "value & mask within [lo, hi]",
// negated for !=. No closure over the filter, one getter call.
type fastInt struct {
	hdr    decode.Hdr
	cond   func(*decode.Packet) bool
	get    func(*decode.Packet) uint64
	mask   uint64
	lo, hi uint64
	neg    bool
	ranges []rng // sets: several [lo, hi]
	desc   node  // the node it replaces, for String and packets where fl is Multi
	fl     *decode.Field
}

func (n *fastInt) eval(p *decode.Packet, f *Filter) bool {
	if n.fl.Multi(p) {
		return n.desc.eval(p, f) // a second occurrence (IPoIB over RoCEv2)
	}
	if p.Has&n.hdr != n.hdr || n.cond != nil && !n.cond(p) {
		return false
	}
	v := n.get(p) & n.mask
	if n.ranges != nil {
		for _, r := range n.ranges {
			if v >= r.lo && v <= r.hi {
				return true
			}
		}
		return false
	}
	return (v >= n.lo && v <= n.hi) != n.neg
}

func (n *fastInt) String() string { return n.desc.String() }

// fast returns a fastInt for integer comparisons and sets on fields with
// a direct accessor, or nd unchanged.
func fast(nd node) node {
	var ref *fieldRef
	switch n := nd.(type) {
	case *intCmp:
		if n.signed {
			return nd
		}
		ref = &n.ref
	case *setNode:
		if n.items != nil {
			return nd
		}
		ref = &n.ref
	default:
		return nd
	}
	hdr, cond, get := ref.fl.UintAccessor()
	if get == nil || ref.sl != noSlice {
		return nd
	}
	fi := &fastInt{hdr: hdr, cond: cond, get: get, mask: ^uint64(0), desc: nd, fl: ref.fl}
	if ref.hasMask {
		fi.mask = ref.mask
	}
	switch n := nd.(type) {
	case *intCmp:
		v := n.val
		switch n.op {
		case opEq, opAllEq:
			fi.lo, fi.hi = v, v
		case opNe, opAnyNe:
			fi.lo, fi.hi, fi.neg = v, v, true
		case opGt:
			if v == ^uint64(0) {
				fi.lo, fi.hi = 1, 0 // empty
			} else {
				fi.lo, fi.hi = v+1, ^uint64(0)
			}
		case opGe:
			fi.lo, fi.hi = v, ^uint64(0)
		case opLt:
			if v == 0 {
				fi.lo, fi.hi = 1, 0 // empty
			} else {
				fi.lo, fi.hi = 0, v-1
			}
		case opLe:
			fi.lo, fi.hi = 0, v
		}
	case *setNode:
		fi.ranges = n.ranges
	}
	return fi
}

// setNode: field in {…}: any occurrence equal to an element or within a
// range.
type setNode struct {
	ref    fieldRef
	ranges []rng
	items  []node // equality tests for non-integer fields
}

func (n *setNode) eval(p *decode.Packet, f *Filter) bool {
	if n.items != nil {
		for _, it := range n.items {
			if it.eval(p, f) {
				return true
			}
		}
		return false
	}
	return n.ref.ints(p, f, false, func(v uint64) bool {
		for _, r := range n.ranges {
			if v >= r.lo && v <= r.hi {
				return true
			}
		}
		return false
	})
}

func (n *setNode) String() string {
	var parts []string
	for _, r := range n.ranges {
		if r.lo == r.hi {
			parts = append(parts, strconv.FormatUint(r.lo, 10))
		} else {
			parts = append(parts, strconv.FormatUint(r.lo, 10)+".."+strconv.FormatUint(r.hi, 10))
		}
	}
	for _, it := range n.items {
		s := it.String()
		parts = append(parts, s[strings.LastIndex(s, " == ")+4:])
	}
	return n.ref.String() + " in {" + strings.Join(parts, " ") + "}"
}

type containsNode struct {
	ref    fieldRef
	needle []byte
}

func (n *containsNode) eval(p *decode.Packet, f *Filter) bool {
	return n.ref.blobs(p, f, false, func(b []byte) bool { return bytes.Contains(b, n.needle) })
}
func (n *containsNode) String() string {
	return n.ref.String() + " contains " + strconv.Quote(string(n.needle))
}

type matchesNode struct {
	ref  fieldRef
	re   *regexp.Regexp
	text string
}

func (n *matchesNode) eval(p *decode.Packet, f *Filter) bool {
	return n.ref.blobs(p, f, false, n.re.Match)
}
func (n *matchesNode) String() string { return n.ref.String() + " matches " + strconv.Quote(n.text) }

// fastAnd is a run of fastInt clauses joined by and, evaluated in one
// loop over a contiguous array (no interface call per clause).
type fastAnd struct{ list []fastInt }

func (n *fastAnd) eval(p *decode.Packet, f *Filter) bool {
	for i := range n.list {
		if !n.list[i].eval(p, f) {
			return false
		}
	}
	return true
}

func (n *fastAnd) String() string {
	parts := make([]node, len(n.list))
	for i := range n.list {
		parts[i] = &n.list[i]
	}
	return joinNodes(parts, "and")
}

// groupFast merges consecutive fastInt clauses of an and chain.
func groupFast(list []node) []node {
	var out []node
	var run []fastInt
	flush := func() {
		switch len(run) {
		case 0:
		case 1:
			c := run[0]
			out = append(out, &c)
		default:
			out = append(out, &fastAnd{list: run})
		}
		run = nil
	}
	for _, c := range list {
		if fi, ok := c.(*fastInt); ok {
			run = append(run, *fi)
			continue
		}
		flush()
		out = append(out, c)
	}
	flush()
	return out
}

// fieldCmp compares two fields of the same kind.
type fieldCmp struct {
	a, b *decode.Field
	op   cmpOp
}

func (n *fieldCmp) eval(p *decode.Packet, f *Filter) bool {
	av := f.values(n.a, p)
	f.scratch2 = n.b.Values(p, f.scratch2[:0])
	bv := f.scratch2
	if len(av) == 0 || len(bv) == 0 {
		return false
	}
	all := n.op.all()
	for i := range av {
		for j := range bv {
			var c int
			if usesU(n.a.Type) {
				c = cmp.Compare(av[i].U, bv[j].U)
			} else if av[i].S != "" || bv[j].S != "" {
				c = strings.Compare(av[i].S, bv[j].S)
			} else {
				c = bytes.Compare(av[i].B, bv[j].B)
			}
			if n.op.test(c) != all {
				return !all
			}
		}
	}
	return all
}

func (n *fieldCmp) String() string { return n.a.Abbrev + " " + opNames[n.op] + " " + n.b.Abbrev }

// usesU reports whether values of t are held in Value.U.
func usesU(t decode.FieldType) bool {
	return t.IsInteger() || t == decode.FTIPv4 || t == decode.FTRelTime || t == decode.FTAbsTime
}
