package decode

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// FieldType is a field's value type; the names are Wireshark's FT_* types.
type FieldType uint8

// Field types.
const (
	FTNone FieldType = iota
	FTProtocol
	FTBoolean
	FTUint8
	FTUint16
	FTUint24
	FTUint32
	FTUint64
	FTInt16
	FTInt32
	FTEther
	FTIPv4
	FTIPv6
	FTBytes
	FTString
	FTRelTime
	FTAbsTime
	FTDouble
)

var ftNames = [...]string{"FT_NONE", "FT_PROTOCOL", "FT_BOOLEAN", "FT_UINT8", "FT_UINT16", "FT_UINT24", "FT_UINT32", "FT_UINT64", "FT_INT16", "FT_INT32", "FT_ETHER", "FT_IPv4", "FT_IPv6", "FT_BYTES", "FT_STRING", "FT_RELATIVE_TIME", "FT_ABSOLUTE_TIME", "FT_DOUBLE"}

func (t FieldType) String() string { return ftNames[t] }

// IsInteger reports whether values of the type are integers (U).
func (t FieldType) IsInteger() bool { return t >= FTBoolean && t <= FTInt32 }

// width returns the number of hex digits tshark pads an integer type to.
func (t FieldType) width() int {
	switch t {
	case FTUint8:
		return 2
	case FTUint16, FTInt16:
		return 4
	case FTUint24:
		return 6
	case FTUint32:
		return 8
	case FTUint64:
		return 16
	}
	return 0
}

// Base is how an integer field is shown; the names are Wireshark's BASE_*.
type Base uint8

// Bases.
const (
	BaseNone Base = iota
	BaseDec
	BaseHex
	BaseDecHex
	BaseHexDec
	BaseOct
	BasePortUDP // BASE_PT_UDP: decimal
	BasePortTCP // BASE_PT_TCP: decimal
)

var baseNames = [...]string{"", "BASE_DEC", "BASE_HEX", "BASE_DEC_HEX", "BASE_HEX_DEC", "BASE_OCT", "BASE_PT_UDP", "BASE_PT_TCP"}

func (b Base) String() string { return baseNames[b] }

// Value is one occurrence of a field in a packet. Integers, booleans (0/1),
// IPv4 addresses and times (nanoseconds) use U; bytes, MAC and IPv6
// addresses use B; strings use S. B points into the packet: copy it to
// keep it.
type Value struct {
	U uint64
	B []byte
	S string
}

// Field is one entry of the field registry.
type Field struct {
	Abbrev  string // e.g. "infiniband.bth.opcode"
	Name    string // e.g. "Opcode"
	Type    FieldType
	Base    Base
	Bitmask uint64 // as tshark -G fields prints it (display only)
	Blurb   string
	Parent  *Field // the header (or protocol) this field belongs to
	Off     int    // byte offset within the parent header's bytes, -1 if none
	Len     int    // bytes the field spans, 0 if unknown
	Hidden  bool   // left out of the verbose tree (either-side fields)
	// Stateful fields come from a tracker (package flow) that must see
	// every packet in order: rocetap.session.*, .msg.*, .analysis.*.
	Stateful bool

	hdr    Hdr // header bits that must all be present
	values func(p *Packet, out []Value) []Value
	// uint and cond give single-occurrence integer fields a direct path:
	// present when hdr bits are set and cond (if any) holds.
	uint  func(p *Packet) uint64
	cond  func(p *Packet) bool
	span  func(p *Packet) []byte           // headers: the bytes they cover
	names func(v uint64) string            // value names for the verbose tree
	label func(b []byte, p *Packet) []byte // appends the verbose tree's name for it in p, nothing to keep Name
	id    int
	// inner: an ip.*, ipv6.* or udp.* field, which occurs a second time
	// in a packet with HdrInner (IPoIB over RoCEv2, see Multi).
	inner bool
	// ulp: a field of an upper-layer protocol (NVMe-oF, NFS over RDMA,
	// iSER, SMB Direct), read from p.Analysis.ULP: see NeedsULP.
	ulp bool
}

// NeedsULP reports whether f occurs only in packets whose
// p.Analysis.ULP is set (a tracker found an upper-layer protocol there):
// the fields of NVMe-oF, NFS over RDMA, iSER and SMB Direct. A printer
// that walks the registry skips them, a third of it, on other packets.
func (f *Field) NeedsULP() bool { return f.ulp }

// Multi reports whether f may occur more than once in p although it has
// a direct path (HasUint): the IP and UDP fields of a RoCEv2 packet whose
// IPoIB SEND carries an IP packet. Callers of Uint and UintAccessor use
// Values for such packets.
func (f *Field) Multi(p *Packet) bool { return f.inner && p.Has&HdrInner != 0 }

// Values appends the field's occurrences in p to out and returns it.
func (f *Field) Values(p *Packet, out []Value) []Value {
	if p.Has&f.hdr != f.hdr && !f.Multi(p) {
		return out
	}
	return f.values(p, out)
}

// Uint returns the value of a single-occurrence integer field without
// building a Value slice; ok is false when the field is absent. Fields
// that can occur several times (ip.addr, vlan.id) have no direct path:
// HasUint reports which do.
func (f *Field) Uint(p *Packet) (v uint64, ok bool) {
	if p.Has&f.hdr != f.hdr || f.cond != nil && !f.cond(p) {
		return 0, false
	}
	return f.uint(p), true
}

// UintAccessor returns the pieces of Uint for callers that evaluate a field
// millions of times (display filters): the header bits that must be
// present, an extra presence test (may be nil) and the getter. get is nil
// for fields without a direct path.
func (f *Field) UintAccessor() (hdr Hdr, cond func(*Packet) bool, get func(*Packet) uint64) {
	return f.hdr, f.cond, f.uint
}

// HasUint reports whether Uint may be used for f.
func (f *Field) HasUint() bool { return f.uint != nil }

// Present reports whether the field occurs in p.
func (f *Field) Present(p *Packet) bool {
	if p.Has&f.hdr != f.hdr && !f.Multi(p) {
		return false
	}
	var buf [2]Value
	return len(f.values(p, buf[:0])) > 0
}

// Span returns the bytes of the frame a header field covers, or nil.
func (f *Field) Span(p *Packet) []byte {
	if f.span == nil || p.Has&f.hdr != f.hdr {
		return nil
	}
	return f.span(p)
}

// Label returns the name the verbose tree gives the field in p: Name,
// unless the item says more about what it holds in this packet, as
// Wireshark's proto_item_set_text does (the item registered as "SMP Data"
// reads "CM ConnectRequest" in a CM REQ).
func (f *Field) Label(p *Packet) string {
	if f.label == nil {
		return f.Name
	}
	return string(f.AppendLabel(nil, p))
}

// AppendLabel appends Label(p) to b, allocating nothing (the verbose
// tree labels every header of every packet).
func (f *Field) AppendLabel(b []byte, p *Packet) []byte {
	if f.label != nil {
		n := len(b)
		if b = f.label(b, p); len(b) > n {
			return b
		}
	}
	return append(b, f.Name...)
}

// appendNamed appends "NAME (WHAT)", the label of an item whose value has
// a name, or nothing when what is "" (the item keeps its Name).
func appendNamed(b []byte, name, what string) []byte {
	if what == "" {
		return b
	}
	return append(append(append(append(b, name...), " ("...), what...), ')')
}

// ID returns the field's index in Fields().
func (f *Field) ID() int { return f.id }

// ValueName returns the name of an integer value ("RC Send Only" for
// opcode 4) or "".
func (f *Field) ValueName(v uint64) string {
	if f.names == nil {
		return ""
	}
	return f.names(v)
}

var (
	registry []*Field
	byName   = map[string]*Field{}
)

// init registers every field, in one fixed order: each header's rows live
// next to the header (lrh.go, bth.go, reth.go, ...), and this is the one
// place that calls them. The order is the order of a header's fields in
// Fields(), -V and rocetap fields.
func init() {
	ib := registerInfiniBandField()
	registerLRHFields(ib)
	registerGRHFields(ib)
	registerBTHFields(ib)
	registerRDETHFields(ib)
	registerDETHFields(ib)
	registerXRCETHFields(ib)
	registerFETHFields(ib)
	registerRETHFields(ib)
	registerAtomicETHFields(ib)
	registerAETHFields(ib)
	registerAtomicAckETHFields(ib)
	registerImmDtFields(ib)
	registerIETHFields(ib)
	registerCNPFields(ib)
	registerMADFields(ib)
	registerCMFields(ib)
	registerSMPFields(ib)
	registerPMAFields(ib)
	registerSAFields(ib)
	registerPayloadFields(ib)
	rt := registerDecodeFields()
	registerNetFields()
	registerAnalysisFields(rt)
	registerSummaryFields()
	ulpFrom := len(registry)
	registerNVMeFields(rt)
	registerRPCFields(rt)
	registerISERFields()
	registerSMBDirectFields()
	for _, f := range registry[ulpFrom:] {
		f.ulp = true
	}
	registerPathFields(rt)
}

// rootRank orders protocols as they nest on the wire.
var rootRank = map[string]int{"frame": 0, "erf": 1, "sll": 2, "eth": 3, "ieee8021ad": 4, "vlan": 4, "macc": 5, "ip": 6, "ipv6": 7, "udp": 8, "infiniband": 9, "data": 10, "rocetap": 11, "nvme-rdma": 10, "nvme": 10,
	"rpcordma": 10, "rpc": 10, "nfs": 10, "iser": 10, "smb_direct": 10}

var sortOnce sync.Once

// Fields returns every registered field: protocols in the order they nest
// on the wire, each followed by its headers and fields in registration
// order.
func Fields() []*Field {
	sortOnce.Do(func() {
		rank := func(f *Field) int {
			for f.Parent != nil {
				f = f.Parent
			}
			if r, ok := rootRank[f.Abbrev]; ok {
				return r
			}
			return len(rootRank)
		}
		sort.SliceStable(registry, func(i, j int) bool { return rank(registry[i]) < rank(registry[j]) })
		for i, f := range registry {
			f.id = i
		}
	})
	return registry
}

// FieldByName returns the field with the given abbreviation, or nil.
func FieldByName(abbrev string) *Field { return byName[abbrev] }

func register(f *Field) *Field {
	if _, dup := byName[f.Abbrev]; dup {
		panic("decode: field registered twice: " + f.Abbrev)
	}
	if f.Parent != nil && f.hdr == 0 {
		f.hdr = f.Parent.hdr
	}
	if f.Len == 0 && f.Off == 0 && f.span == nil {
		f.Off = -1
	}
	f.id = len(registry)
	registry = append(registry, f)
	byName[f.Abbrev] = f
	return f
}

// AppendValue appends v formatted as tshark -T fields prints it.
func (f *Field) AppendValue(dst []byte, v Value) []byte {
	switch f.Type {
	case FTNone:
		return append(dst, '1') // as tshark prints an FT_NONE item
	case FTProtocol:
		if v.B != nil {
			return appendHex(dst, v.B)
		}
		return append(dst, f.Abbrev...)
	case FTBoolean, FTUint8, FTUint16, FTUint24, FTUint32, FTUint64, FTInt16, FTInt32, FTIPv4, FTRelTime, FTAbsTime:
		return f.appendU(dst, v.U)
	case FTEther:
		return appendMAC(dst, v.B)
	case FTIPv6:
		if len(v.B) == 16 {
			return netip.AddrFrom16([16]byte(v.B)).AppendTo(dst)
		}
		return dst
	case FTBytes:
		return appendHex(dst, v.B)
	case FTString:
		return AppendSanitized(dst, v.S)
	}
	return dst
}

// appendU appends the value u of a field whose values use U (integers,
// booleans, IPv4 addresses, times): the one formatting of such values,
// for AppendValue and AppendUint.
func (f *Field) appendU(dst []byte, u uint64) []byte {
	switch f.Type {
	case FTBoolean:
		if u != 0 {
			return append(dst, '1')
		}
		return append(dst, '0')
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		switch f.Base {
		case BaseHex, BaseHexDec:
			return appendHexInt(dst, u, f.Type.width())
		case BaseOct:
			dst = append(dst, '0')
			return strconv.AppendUint(dst, u, 8)
		}
		return appendDec(dst, u)
	case FTInt16, FTInt32:
		return strconv.AppendInt(dst, int64(u), 10)
	case FTIPv4:
		return appendIPv4(dst, uint32(u))
	case FTRelTime:
		return appendRelTime(dst, int64(u))
	case FTAbsTime:
		return AppendAbsTime(dst, int64(u))
	}
	return dst
}

// UintAppender returns how a value of a field with a direct path
// (HasUint) is appended as AppendValue prints it: for printers that take
// the value from UintAccessor's getter, it skips AppendValue's switch on
// the field's type and base for the common cases.
func (f *Field) UintAppender() UintFormat {
	switch f.Type {
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		switch f.Base {
		case BaseHex, BaseHexDec:
			return UintFormat{hex: f.Type.width()}
		case BaseOct:
		default:
			return UintFormat{}
		}
	}
	return UintFormat{hex: -1, other: f.appendU}
}

// UintFormat is how UintAppender's field prints a value: in decimal (the
// zero value), in hex of at least a width, or by the field's own
// function. The common two are a switch, not a call through a function
// value (a closure, for hex): BenchmarkFieldsPrinter/bth4 took 28.76 ns
// a line against 29.16 (medians of 5 interleaved runs of the two
// builds' test binaries).
type UintFormat struct {
	hex   int // > 0: hex, at least this many digits; 0: decimal; -1: other
	other func(dst []byte, u uint64) []byte
}

// Append appends v as the field prints it.
func (fm UintFormat) Append(dst []byte, v uint64) []byte {
	switch {
	case fm.hex > 0:
		return appendHexInt(dst, v, fm.hex)
	case fm.hex == 0:
		return AppendUint(dst, v)
	}
	return fm.other(dst, v)
}

// AppendUint appends the field's value in p as AppendValue prints it,
// for a field with a direct path (HasUint), without building a Value
// slice: the printers' fast path. ok is false, and nothing is appended,
// when the field is absent from p.
func (f *Field) AppendUint(dst []byte, p *Packet) (out []byte, ok bool) {
	if p.Has&f.hdr != f.hdr || f.cond != nil && !f.cond(p) {
		return dst, false
	}
	return f.appendU(dst, f.uint(p)), true
}

// AppendDisplay appends v as the verbose tree shows it: integer values
// with their name, hex values also in decimal where tshark does.
func (f *Field) AppendDisplay(dst []byte, v Value) []byte {
	if f.Type.IsInteger() && f.Type != FTBoolean {
		if n := f.ValueName(v.U); n != "" {
			dst = append(dst, n...)
			dst = append(dst, " ("...)
			dst = f.AppendValue(dst, v)
			return append(dst, ')')
		}
		if f.Base == BaseHex || f.Base == BaseHexDec {
			dst = f.AppendValue(dst, v)
			dst = append(dst, " ("...)
			dst = strconv.AppendUint(dst, v.U, 10)
			return append(dst, ')')
		}
	}
	if f.Type == FTBoolean {
		if v.U != 0 {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	}
	return f.AppendValue(dst, v)
}

const hexDigits = "0123456789abcdef"

// hexPairs[c] is c's two hex digits, the first in the low byte.
var hexPairs = func() (t [256]uint16) {
	for i := range t {
		t[i] = uint16(hexDigits[i>>4]) | uint16(hexDigits[i&0xF])<<8
	}
	return t
}()

// appendHex appends b in lower-case hex. It grows dst once and stores
// four bytes' digits at a time: digit by digit, the payload of -T json
// cost more than the rest of a packet (1.1 us a KiB against 0.43).
func appendHex(dst, b []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(b))[:n+2*len(b)]
	h := dst[n:]
	for len(b) >= 4 && len(h) >= 8 {
		binary.LittleEndian.PutUint64(h, uint64(hexPairs[b[0]])|uint64(hexPairs[b[1]])<<16|uint64(hexPairs[b[2]])<<32|uint64(hexPairs[b[3]])<<48)
		b, h = b[4:], h[8:]
	}
	for i, c := range b {
		binary.LittleEndian.PutUint16(h[2*i:], hexPairs[c])
	}
	return dst
}

// decPairs holds "00" to "99".
const decPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendDec appends u in decimal, as strconv.AppendUint(dst, u, 10) does.
// It grows dst once and writes the digits in place, two at a time:
// AppendUint formats into a buffer of its own, then copies it (a call to
// memmove for a few bytes, for every integer field of every line).
func appendDec(dst []byte, u uint64) []byte {
	n := DecimalWidth(u)
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	d := dst[l:]
	i := n
	for u >= 100 {
		r := u % 100 * 2
		u /= 100
		i -= 2
		d[i], d[i+1] = decPairs[r], decPairs[r+1]
	}
	if u >= 10 {
		d[0], d[1] = decPairs[u*2], decPairs[u*2+1]
	} else {
		d[0] = byte('0' + u)
	}
	return dst
}

// appendHexInt appends v as 0x and at least width hex digits.
func appendHexInt(dst []byte, v uint64, width int) []byte {
	n := max((bits.Len64(v)+3)/4, width, 1)
	l := len(dst)
	dst = slices.Grow(dst, n+2)[:l+n+2]
	h := dst[l:]
	h[0], h[1] = '0', 'x'
	i := n + 2
	for ; i >= 4; i -= 2 { // two digits a step, from the pair table
		binary.LittleEndian.PutUint16(h[i-2:i], hexPairs[v&0xFF])
		v >>= 8
	}
	if i == 3 {
		h[2] = hexDigits[v&0xF]
	}
	return dst
}

func appendMAC(dst, b []byte) []byte {
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xF])
	}
	return dst
}

func appendIPv4(dst []byte, a uint32) []byte {
	return AppendIPv4(dst, [4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)})
}

// appendRelTime appends nanoseconds as seconds with nine decimals.
func appendRelTime(dst []byte, ns int64) []byte { return AppendSeconds(dst, ns, 9) }

// AppendSeconds appends ns nanoseconds as seconds with the given number of
// decimals (0-9, truncated), e.g. 0.000342. It writes the decimals in
// place, two at a time: the Start of every row of a sessions table of a
// million sessions is one.
func AppendSeconds(dst []byte, ns int64, decimals int) []byte {
	u := uint64(ns)
	if ns < 0 {
		dst = append(dst, '-')
		u = -u // the magnitude, math.MinInt64's too
	}
	dst = AppendUint(dst, u/1e9)
	if decimals <= 0 {
		return dst
	}
	frac := u % 1e9
	l := len(dst)
	dst = slices.Grow(dst, 10)[:l+1+min(decimals, 9)]
	b := dst[l : l+10] // the point and nine digits, those past decimals beyond dst's length
	b[0] = '.'
	b[9] = byte('0' + frac%10)
	frac /= 10
	for i := 7; i >= 1; i -= 2 {
		r := frac % 100 * 2
		frac /= 100
		b[i], b[i+1] = decPairs[r], decPairs[r+1]
	}
	return dst
}

// AppendSanitized appends s with control characters (C0, DEL, C1),
// invalid UTF-8 (\xNN), and bidi controls and line separators (\uNNNN)
// escaped, so packet data, file names and any other text from outside
// rocetap can never drive a terminal or reorder what it shows. It is the
// one escaping function: everything that did not come from rocetap itself
// goes through it (or Sanitize) before a terminal.
func AppendSanitized(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			dst = append(dst, c)
			i++
			continue
		}
		if c >= 0x80 {
			r, n := decodeRune(s[i:])
			if r >= 0xA0 && n > 1 {
				if unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029 {
					// Bidi controls reorder what follows on the line
					// ("Trojan Source"); line and paragraph separators
					// break it.
					dst = append(dst, '\\', 'u')
					dst = append(dst, hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
				} else {
					dst = append(dst, s[i:i+n]...)
				}
				i += n
				continue
			}
		}
		dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xF])
		i++
	}
	return dst
}

// Sanitize returns s made safe for a terminal (see AppendSanitized).
func Sanitize(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F {
			return string(AppendSanitized(nil, s))
		}
	}
	return s
}

func decodeRune(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return r, 1
	}
	return r, n
}

// Suggest returns up to n registered field names closest to name, for
// "did you mean" messages.
func Suggest(name string, n int) []string {
	if len(name) > 120 {
		return nil // no field name is that long; don't spend time on it
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, f := range Fields() {
		d := EditDistance(name, f.Abbrev)
		if strings.HasPrefix(f.Abbrev, name) || strings.Contains(f.Abbrev, name) {
			d = min(d, 2)
		}
		// "dqp" for "destqp": the typed letters appear in order.
		if d > 0 && isSubsequence(lastPart(name), lastPart(f.Abbrev)) {
			d--
		}
		if d <= max(3, len(name)/3) {
			cs = append(cs, cand{f.Abbrev, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func lastPart(s string) string { return s[strings.LastIndexByte(s, '.')+1:] }

// isSubsequence reports whether the letters of a occur in b in order.
func isSubsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a) && len(a) > 0
}

// EditDistance returns the Levenshtein distance between a and b, counted
// in bytes: the fewest insertions, deletions and substitutions that turn
// one into the other. Suggest ranks field names with it, and the MPT file
// loader its "did you mean" keys.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
