package mpt

// Reading an MPT file in a stream (load.go says how the loader works):
// the lexer, pass 1 (is it JSON as the format takes it) and the reading
// of one value at a time into a small tree for pass 2.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// pos is where a token starts: input offset and 1-based line and byte
// column.
type pos struct {
	off       int64
	line, col int
}

// lexBufSize is the lexer's read size (a variable for tests that read a
// few bytes at a time).
var lexBufSize = 256 << 10

// lexer reads JSON tokens from an io.ReaderAt, keeping lines and columns.
// What it returns for a string or number is a slice of its buffer, valid
// until it reads more input, or, while a mark is set, until the mark is
// unset: reading more then moves to the spare buffer and leaves the old
// one be, to become the spare once the mark is unset (a fresh buffer when
// one marked stretch needs a second read).
type lexer struct {
	r         io.ReaderAt
	buf       []byte
	bufOff    int64 // input offset of buf[0]
	pos, end  int   // next byte; end of the bytes read
	eof       bool
	err       error // a read error other than io.EOF
	line      int   // line of buf[pos]
	lineStart int64 // input offset where that line starts
	mark      int   // buf index of the oldest byte slices are held of; -1 for none
	markReads int   // reads since mark was set
	spare     []byte
}

// setMark marks pos: the bytes from there stay where they are until
// unmark.
func (l *lexer) setMark() { l.mark, l.markReads = l.pos, 0 }

func (l *lexer) unmark() { l.mark = -1 }

// errSyntax: the input is not JSON as the format takes it; the message is
// firstError's.
var errSyntax = errors.New("not JSON")

// start makes the lexer read from at.
func (l *lexer) start(r io.ReaderAt, at pos) {
	*l = lexer{r: r, buf: l.buf[:0], spare: l.spare, bufOff: at.off, line: at.line, lineStart: at.off - int64(at.col-1), mark: -1}
}

func (l *lexer) here() pos {
	off := l.bufOff + int64(l.pos)
	return pos{off, l.line, int(off-l.lineStart) + 1}
}

// more reads more input, keeping the bytes from pos (and mark); false
// when there is none.
func (l *lexer) more() bool {
	if l.eof || l.err != nil {
		return false
	}
	keep := l.pos
	if l.mark >= 0 {
		keep = min(keep, l.mark)
	}
	n := l.end - keep
	size := max(lexBufSize, 2*n)
	switch {
	case l.mark >= 0:
		nb := l.spare[:cap(l.spare)]
		l.spare = nil
		if l.markReads > 0 || len(nb) < size {
			nb = make([]byte, size)
		}
		if l.markReads == 0 {
			l.spare = l.buf // holds the marked stretch only
		}
		l.markReads++
		copy(nb, l.buf[keep:l.end])
		l.buf = nb
	case cap(l.buf) == 0 || n > cap(l.buf)/2:
		nb := make([]byte, size)
		copy(nb, l.buf[keep:l.end])
		l.buf = nb
	default:
		l.buf = l.buf[:cap(l.buf)]
		copy(l.buf, l.buf[keep:l.end])
	}
	l.bufOff += int64(keep)
	l.pos -= keep
	l.end = n
	if l.mark >= 0 {
		l.mark -= keep
	}
	m, err := l.r.ReadAt(l.buf[n:], l.bufOff+int64(n))
	l.end += m
	switch {
	case err == io.EOF:
		l.eof = m == 0
	case err != nil:
		l.err = err
	}
	return m > 0
}

// space skips JSON whitespace and returns the next byte; false at the end
// of the input.
func (l *lexer) space() (byte, bool) {
	for {
		for l.pos < l.end {
			c := l.buf[l.pos]
			switch {
			case c > ' ': // most bytes, tested first
				return c, true
			case c == '\n':
				l.line++
				l.lineStart = l.bufOff + int64(l.pos) + 1
			case c != ' ' && c != '\t' && c != '\r':
				return c, true
			}
			l.pos++
		}
		if !l.more() {
			return 0, false
		}
	}
}

// str reads the string whose opening quote is at pos and returns its
// value. Strings with escapes or non-ASCII bytes are decoded by
// encoding/json, as the format's first loader read them (invalid UTF-8
// becomes U+FFFD).
func (l *lexer) str() ([]byte, error) {
	i, slow := l.pos+1, false
	for {
		for i < l.end {
			switch c := l.buf[i]; {
			case c == '"':
				raw := l.buf[l.pos : i+1]
				l.pos = i + 1
				if !slow {
					return raw[1 : len(raw)-1], nil
				}
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					return nil, errSyntax
				}
				return []byte(s), nil
			case c == '\\':
				slow = true
				i += 2
				continue
			case c < 0x20:
				return nil, errSyntax
			case c >= 0x80:
				slow = true
			}
			i++
		}
		rel := i - l.pos
		if !l.more() {
			return nil, errSyntax
		}
		i = l.pos + rel // more moved the bytes
	}
}

// number reads the number at pos and returns it as written.
func (l *lexer) number() ([]byte, error) {
	i := l.pos
	for {
		for i < l.end && isNumByte(l.buf[i]) {
			i++
		}
		if i < l.end {
			break
		}
		rel := i - l.pos
		ok := l.more()
		i = l.pos + rel // more moves the bytes, even when there are no more
		if !ok {
			break
		}
	}
	s := l.buf[l.pos:i]
	if !validNumber(s) {
		return nil, errSyntax
	}
	l.pos = i
	return s, nil
}

func isNumByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber reports whether s is a JSON number.
func validNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// literal reads true, false or null at pos and returns the node kind.
func (l *lexer) literal() (byte, error) {
	for l.end-l.pos < 5 {
		if !l.more() {
			break
		}
	}
	rest := string(l.buf[l.pos:min(l.pos+5, l.end)])
	for _, w := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(rest, w) {
			l.pos += len(w)
			if w == "null" {
				return 'n', nil
			}
			return 't', nil
		}
	}
	return 0, errSyntax
}

// ---- pass 1: is it JSON as the format takes it ----

// member is a top-level key and where its value is.
type member struct {
	key   string
	kat   pos  // the key
	at    pos  // the value
	kind  byte // the value's first byte
	count int  // elements, when the value is an array
}

// top is what check learns of the top-level value.
type top struct {
	kind    byte // its first byte
	at      pos
	members []member // when an object, in file order
}

// parser reads one MPT file.
type parser struct {
	file string
	r    io.ReaderAt
	l    lexer
	keys [][]string // check: the keys of the object open at each depth

	nodes []enode // build: the tree of the value being read, reused
}

// check makes pass 1. A problem is returned as firstError words it.
func (p *parser) check() (*top, error) {
	p.l.start(p.r, pos{0, 1, 1})
	t := &top{}
	err := p.checkRoot(t)
	if p.l.err != nil {
		return nil, p.l.err
	}
	if err != nil {
		return nil, p.jsonError()
	}
	return t, nil
}

func (p *parser) checkRoot(t *top) error {
	c, ok := p.l.space()
	if !ok {
		return errSyntax // empty
	}
	t.kind, t.at = c, p.l.here()
	if _, err := p.checkValue(0, t); err != nil {
		return err
	}
	if t.kind != '{' && t.kind != '[' && (p.l.pos < p.l.end || p.l.more()) {
		// encoding/json reads a top-level scalar to the byte after it,
		// which must be a space
		if c := p.l.buf[p.l.pos]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return errSyntax
		}
	}
	if _, ok := p.l.space(); ok {
		return errSyntax // data after the top-level value
	}
	return nil
}

// checkValue reads the value at the lexer and returns how many elements
// it has when it is an array. t is not nil for the top-level value, whose
// members it notes.
func (p *parser) checkValue(depth int, t *top) (int, error) {
	c, ok := p.l.space()
	if !ok {
		return 0, errSyntax
	}
	switch {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, errSyntax
		}
		p.l.pos++
		if c == '{' {
			return 0, p.checkObject(depth, t)
		}
		return p.checkArray(depth)
	case c == '"':
		_, err := p.l.str()
		return 0, err
	case c == '-' || '0' <= c && c <= '9':
		_, err := p.l.number()
		return 0, err
	}
	_, err := p.l.literal()
	return 0, err
}

func (p *parser) checkObject(depth int, t *top) error {
	for len(p.keys) <= depth {
		p.keys = append(p.keys, nil)
	}
	seen := p.keys[depth][:0]
	var big map[string]bool // past 16 keys
	c, ok := p.l.space()
	if ok && c == '}' {
		p.l.pos++
		return nil
	}
	for {
		if !ok || c != '"' {
			return errSyntax
		}
		kat := p.l.here()
		kb, err := p.l.str()
		if err != nil {
			return err
		}
		key := intern(kb)
		switch {
		case big != nil:
			if big[key] {
				return errSyntax
			}
			big[key] = true
		case slices.Contains(seen, key):
			return errSyntax
		case len(seen) == 16:
			big = map[string]bool{key: true}
			for _, k := range seen {
				big[k] = true
			}
		default:
			seen = append(seen, key)
		}
		if c, ok = p.l.space(); !ok || c != ':' {
			return errSyntax
		}
		p.l.pos++
		var m member
		if t != nil {
			m.key, m.kat = key, kat
			m.kind, _ = p.l.space()
			m.at = p.l.here()
		}
		n, err := p.checkValue(depth+1, nil)
		if err != nil {
			return err
		}
		if t != nil {
			m.count = n
			t.members = append(t.members, m)
		}
		if c, ok = p.l.space(); !ok {
			return errSyntax
		}
		p.l.pos++
		switch c {
		case '}':
			p.keys[depth] = seen[:0] // for the next object at this depth
			return nil
		case ',':
			c, ok = p.l.space()
		default:
			return errSyntax
		}
	}
}

func (p *parser) checkArray(depth int) (int, error) {
	c, ok := p.l.space()
	if ok && c == ']' {
		p.l.pos++
		return 0, nil
	}
	for n := 1; ; n++ {
		if _, err := p.checkValue(depth+1, nil); err != nil {
			return 0, err
		}
		if c, ok = p.l.space(); !ok {
			return 0, errSyntax
		}
		p.l.pos++
		switch c {
		case ']':
			return n, nil
		case ',':
		default:
			return 0, errSyntax
		}
	}
}

// intern returns b as a string, without allocating for the keys of the
// format (a switch on string(b) compiles to comparisons, not a
// conversion; TestInternKnowsEveryKey checks the list).
func intern(b []byte) string {
	switch string(b) {
	case "version":
		return "version"
	case "responder":
		return "responder"
	case "profile":
		return "profile"
	case "pds":
		return "pds"
	case "qps":
		return "qps"
	case "mrs":
		return "mrs"
	case "mws":
		return "mws"
	case "qpn":
		return "qpn"
	case "pd":
		return "pd"
	case "type":
		return "type"
	case "access":
		return "access"
	case "mtu":
		return "mtu"
	case "expected_psn":
		return "expected_psn"
	case "rq_depth":
		return "rq_depth"
	case "max_dest_rd_atomic":
		return "max_dest_rd_atomic"
	case "min_rnr_timer":
		return "min_rnr_timer"
	case "q_key":
		return "q_key"
	case "remote":
		return "remote"
	case "recv":
		return "recv"
	case "address":
		return "address"
	case "length":
		return "length"
	case "posted_at":
		return "posted_at"
	case "rkey":
		return "rkey"
	case "lkey":
		return "lkey"
	case "va":
		return "va"
	case "mr_rkey":
		return "mr_rkey"
	case "id":
		return "id"
	}
	return string(b)
}

// jsonError returns the problem pass 1 found, in the words of the tree
// loader's reading (encoding/json's for syntax): the input is read into
// memory for it.
func (p *parser) jsonError() error {
	data, err := io.ReadAll(io.NewSectionReader(p.r, 0, 1<<62))
	if err != nil {
		return err
	}
	w := &walker{file: p.file, data: data}
	if err := w.firstError(); err != nil {
		return err
	}
	// Pass 1 and encoding/json disagree: say where pass 1 stopped.
	at := p.l.here()
	return &Error{File: p.file, Line: at.line, Column: at.col, Msg: "JSON syntax error"}
}

// ---- pass 2: the values, checked ----

// enode is a JSON value of the element being read, in parser.nodes.
type enode struct {
	kind  byte // '{' object, '[' array, '"' string, '0' number, 't' bool, 'n' null
	at    pos
	text  []byte // string value, or the number as written: a slice of the lexer's buffer
	key   string // its key, in an object
	kat   pos    // where the key starts
	child int32  // first child, -1 for none
	last  int32  // last child
	next  int32  // next sibling, -1 for none
}

// value reads the value at the lexer into p.nodes and returns its index.
// Pass 1 has checked the JSON: an error here means the file changed.
func (p *parser) value() (int32, error) {
	c, ok := p.l.space()
	if !ok {
		return 0, errSyntax
	}
	i := int32(len(p.nodes))
	p.nodes = append(p.nodes, enode{at: p.l.here(), child: -1, last: -1, next: -1})
	var err error
	switch {
	case c == '{' || c == '[':
		p.l.pos++
		p.nodes[i].kind = c
		err = p.children(i, c)
	case c == '"':
		p.nodes[i].kind = '"'
		p.nodes[i].text, err = p.l.str()
	case c == '-' || '0' <= c && c <= '9':
		p.nodes[i].kind = '0'
		p.nodes[i].text, err = p.l.number()
	default:
		p.nodes[i].kind, err = p.l.literal()
	}
	return i, err
}

func (p *parser) children(i int32, open byte) error {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	c, ok := p.l.space()
	if ok && c == closer {
		p.l.pos++
		return nil
	}
	for {
		var key string
		var kat pos
		if open == '{' {
			kat = p.l.here()
			kb, err := p.l.str()
			if err != nil {
				return err
			}
			key = intern(kb)
			if c, ok = p.l.space(); !ok || c != ':' {
				return errSyntax
			}
			p.l.pos++
		}
		ci, err := p.value()
		if err != nil {
			return err
		}
		p.nodes[ci].key, p.nodes[ci].kat = key, kat
		if last := p.nodes[i].last; last >= 0 {
			p.nodes[last].next = ci
		} else {
			p.nodes[i].child = ci
		}
		p.nodes[i].last = ci
		if c, ok = p.l.space(); !ok {
			return errSyntax
		}
		p.l.pos++
		switch c {
		case closer:
			return nil
		case ',':
			if _, ok = p.l.space(); !ok { // to the next key, for its position
				return errSyntax
			}
		default:
			return errSyntax
		}
	}
}

// node returns the node at index i.
func (p *parser) node(i int32) *enode { return &p.nodes[i] }

// get returns the member of object n with the key, or nil.
func (p *parser) get(n *enode, key string) *enode {
	for c := n.child; c >= 0; c = p.nodes[c].next {
		if p.nodes[c].key == key {
			return &p.nodes[c]
		}
	}
	return nil
}

// readAt reads the value at at into a fresh tree and returns it.
func (p *parser) readAt(at pos) (*enode, error) {
	p.l.start(p.r, at)
	p.nodes = p.nodes[:0]
	p.l.setMark() // the tree holds slices of the buffer, until the next start
	i, err := p.value()
	if err != nil {
		return nil, p.changed(err)
	}
	return p.node(i), nil
}

// changed is the error of pass 2 meeting what pass 1 did not: the file
// changed while it was read.
func (p *parser) changed(err error) error {
	if p.l.err != nil {
		return p.l.err
	}
	return fmt.Errorf("%s: the file changed while it was read: %w", p.file, err)
}

// elements reads the array at at one element at a time, calling fn with
// each element's index and tree; an array of count elements.
func (p *parser) elements(at pos, fn func(i int, n *enode) error) error {
	p.l.start(p.r, at)
	if c, ok := p.l.space(); !ok || c != '[' {
		return p.changed(errSyntax)
	}
	p.l.pos++
	c, ok := p.l.space()
	if ok && c == ']' {
		return nil
	}
	for i := 0; ; i++ {
		p.nodes = p.nodes[:0]
		p.l.setMark() // the tree holds slices of the buffer
		ni, err := p.value()
		if err != nil {
			return p.changed(err)
		}
		if err := fn(i, p.node(ni)); err != nil {
			return err
		}
		p.l.unmark()
		if c, ok = p.l.space(); !ok {
			return p.changed(errSyntax)
		}
		p.l.pos++
		switch c {
		case ']':
			return nil
		case ',':
		default:
			return p.changed(errSyntax)
		}
	}
}
