package mpt

// The MPT file loader: what the modeled responder had registered, read from
// the JSON format of docs/mpt-format.md.
//
// An MPT file may list a million MRs (200 MB of JSON). The loader reads it
// in two streaming passes and never holds it whole, nor a tree of it:
//
//  1. check: is it JSON as the format takes it (one object, no key twice
//     in an object, nested at most maxDepth deep, nothing after it)?
//     It notes where each top-level value starts and how many elements
//     each top-level array has.
//  2. build: reads the top-level values in the order the checks are
//     defined (version, responder, profile, pds, qps, mrs, mws, whatever
//     order the file has them in), one array element at a time into a
//     small tree that is reused, and checks each element as it comes.
//
// The checks and their messages are those of the loader that built a tree
// of the whole file first (3.8 KB per MR; load_ref_test.go keeps it, and
// the tests hold this one to it). A file that is not JSON as the format
// takes it is read again through that loader's reading (jsontree.go) for
// its message, which is encoding/json's: the file is then read into
// memory, but no tree is built.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// File is one MPT file: the responder's registrations (Config) with
// the file's version and default responder profile.
type File struct {
	Version int    // always 1
	Profile string // responder profile; "ibta" when the file names none
	hca.Config
}

// qp0or1 says why QP 0 or 1 is no QP of an MPT file.
func qp0or1(qpn uint32) string {
	name := map[uint32]string{0: "QP0, the SMI QP", 1: "QP1, the GSI QP"}[qpn]
	return fmt.Sprintf("QPN 0x%06x is %s: it carries management datagrams (subnet management, CM), not RDMA; an MPT file lists the responder's RC, UC, UD and XRC QPs, numbered 2 and up", qpn, name)
}

// NewModel builds the reference model the file describes, with opt's
// cache and page size; the profile is opt's when set, else the file's.
// It is the one way every command (mpt check, --mpt, replay) turns a
// file into a model, so a file mpt check calls valid every command
// accepts, and an error reads the same everywhere: "FILE: cannot build
// the model: what".
func (f *File) NewModel(name string, opt hca.Options, profileSet bool) (*hca.Model, error) {
	if !profileSet {
		opt.Profile, _ = hca.ProfileByName(f.Profile) // checked when loaded
	}
	m, err := hca.NewModel(&f.Config, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot build the model: %w", name, err)
	}
	return m, nil
}

// Error is a problem in an MPT file: which file, where in it (1-based
// line and byte column, 0 when unknown), the JSON path of the value
// ("$.mrs[2].rkey", "" for the file as a whole) and what is wrong.
type Error struct {
	File         string
	Line, Column int
	Path         string
	Msg          string
}

func (e *Error) Error() string { return fileError(e.File, e.Line, e.Column, e.Path, e.Msg) }

// fileError formats a problem in a JSON input file as
// "file:line:col: $.path: what", leaving out what is unknown.
func fileError(file string, line, col int, path, msg string) string {
	var b strings.Builder
	b.WriteString(file)
	if line > 0 {
		b.WriteString(":" + strconv.Itoa(line) + ":" + strconv.Itoa(col))
	}
	b.WriteString(": ")
	if path != "" {
		b.WriteString(path + ": ")
	}
	b.WriteString(msg)
	return b.String()
}

// Load reads and checks the MPT file at path. Problems in the file are
// returned as *Error. A regular file is read in a stream, twice, not into
// memory; anything else (a pipe) is read whole first.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		data, err := io.ReadAll(fh)
		if err != nil {
			return nil, err
		}
		return Parse(path, data)
	}
	return parse(path, fh)
}

// Parse parses and checks an MPT file; name is used in errors. Every
// problem is returned as *Error: JSON syntax, duplicate or unknown keys,
// missing required keys, wrong types, values out of range (24-bit QPNs and
// PSNs, 32-bit keys, MTU, flag names) and references (PDs, the MR and QP of
// a window, duplicate QPNs, keys and PD ids).
func Parse(name string, data []byte) (*File, error) {
	return parse(name, bytes.NewReader(data))
}

func parse(name string, r io.ReaderAt) (*File, error) {
	p := &parser{file: name, r: r}
	top, err := p.check()
	if err != nil {
		return nil, err
	}
	return p.build(top)
}

// ---- paths built when an error needs them ----

// jpath is a JSON path: base, then [i] when i ≥ 0, then .key when hasKey.
// Paths are formatted only for errors, so checking an element allocates
// nothing for them.
type jpath struct {
	base   string
	i      int
	key    string
	hasKey bool
}

func root(base string) jpath { return jpath{base: base, i: -1} }

func (p jpath) String() string {
	s := p.base
	if p.i >= 0 {
		s += "[" + strconv.Itoa(p.i) + "]"
	}
	if p.hasKey {
		s += "." + p.key
	}
	return s
}

// dot returns the path of member k.
func (p jpath) dot(k string) jpath {
	if !p.hasKey {
		return jpath{p.base, p.i, k, true}
	}
	return jpath{base: p.String() + "." + k, i: -1}
}

// at returns the path of element i.
func (p jpath) at(i int) jpath {
	if p.i < 0 && !p.hasKey {
		return jpath{base: p.base, i: i}
	}
	return jpath{base: p.String(), i: i}
}

// ---- typed accessors ----

func (p *parser) errAt(at pos, path jpath, format string, args ...any) error {
	return &Error{File: p.file, Line: at.line, Column: at.col, Path: path.String(), Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) errf(n *enode, path jpath, format string, args ...any) error {
	return p.errAt(n.at, path, format, args...)
}

func enodeKind(n *enode) string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return fmt.Sprintf("the string %q", n.text)
	case '0':
		return "the number " + string(n.text)
	case 't':
		return "true/false"
	}
	return "null"
}

// object checks that n is an object with only the allowed keys and every
// required one.
func (p *parser) object(n *enode, path jpath, allowed, required []string) error {
	_, err := p.members(n, path, allowed, required)
	return err
}

// members is object that also returns the members, by their index in
// allowed (nil when absent): one pass over them for the MR, which every
// line of a large file is.
func (p *parser) members(n *enode, path jpath, allowed, required []string) (m [12]*enode, err error) {
	if n.kind != '{' {
		return m, p.errf(n, path, "want an object, found %s", enodeKind(n))
	}
	for c := n.child; c >= 0; c = p.nodes[c].next {
		k := p.nodes[c].key
		i := slices.Index(allowed, k)
		if i < 0 {
			msg := fmt.Sprintf("unknown key %q (allowed: %s)", k, strings.Join(allowed, ", "))
			if s := closest(k, allowed); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return m, p.errAt(p.nodes[c].kat, path.dot(k), "%s", msg)
		}
		m[i] = &p.nodes[c]
	}
	for _, k := range required {
		if m[slices.Index(allowed, k)] == nil {
			return m, p.errf(n, path.dot(k), "missing; %s needs %s", describe(path.String()), strings.Join(required, ", "))
		}
	}
	return m, nil
}

// describe names the object at path for messages: "$.qps[0]" -> "a QP".
func describe(path string) string {
	if path == "$" {
		return "the file"
	}
	last := path[strings.LastIndexByte(path, '.')+1:]
	if i := strings.IndexByte(last, '['); i >= 0 {
		last = last[:i]
	}
	switch last {
	case "pds":
		return "a PD"
	case "qps":
		return "a QP"
	case "mrs":
		return "an MR"
	case "mws":
		return "an MW"
	case "recv":
		return "a receive"
	}
	return last
}

// closest returns the allowed key within edit distance 2 of k, if any.
func closest(k string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := decode.EditDistance(strings.ToLower(k), a); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

func (p *parser) str(n *enode, path jpath) (string, error) {
	if n.kind != '"' {
		return "", p.errf(n, path, "want a string, found %s", enodeKind(n))
	}
	return string(n.text), nil
}

// Width hints for uint.
const (
	hintQPN = ` (QPNs are 24-bit, e.g. "0x000011")`
	hintPSN = ` (PSNs are 24-bit, e.g. "0x3c1a2b")`
	hintKey = ` (keys are 32-bit, e.g. "0x00001234")`
)

// uint reads an integer written as a JSON number or a string in decimal or
// 0x hex, and checks that it fits bits.
func (p *parser) uint(n *enode, path jpath, bits int, hint string) (uint64, error) {
	const how = `write a JSON number or a string in decimal or 0x hex, e.g. 4096 or "0x1000"`
	if n.kind != '0' && n.kind != '"' {
		return 0, p.errf(n, path, "want an integer, found %s (%s)", enodeKind(n), how)
	}
	v, ok := plainUint(n.text)
	if !ok {
		// Signs, fractions, too many digits, not digits: strconv says which.
		s := string(n.text)
		shown := s
		if n.kind == '"' {
			shown = strconv.Quote(s)
		}
		var err error
		switch {
		case strings.HasPrefix(s, "-"):
			return 0, p.errf(n, path, "%s is negative", shown)
		case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
			v, err = strconv.ParseUint(s[2:], 16, 64)
		default:
			v, err = strconv.ParseUint(s, 10, 64)
		}
		if errors.Is(err, strconv.ErrRange) {
			return 0, p.errf(n, path, "%s does not fit 64 bits", s)
		}
		if err != nil {
			return 0, p.errf(n, path, "%s is not an integer (%s)", shown, how)
		}
	}
	if bits < 64 && v>>bits != 0 {
		return 0, p.errf(n, path, "%s does not fit %d bits%s", n.text, bits, hint)
	}
	return v, nil
}

// plainUint reads 1 to 19 decimal digits, or 0x and 1 to 16 hex digits:
// what no uint64 overflows.
func plainUint(s []byte) (uint64, bool) {
	var v uint64
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		if len(s) > 18 {
			return 0, false
		}
		for _, c := range s[2:] {
			switch {
			case '0' <= c && c <= '9':
				v = v<<4 | uint64(c-'0')
			case 'a' <= c && c <= 'f':
				v = v<<4 | uint64(c-'a'+10)
			case 'A' <= c && c <= 'F':
				v = v<<4 | uint64(c-'A'+10)
			default:
				return 0, false
			}
		}
		return v, true
	}
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// addr reads a node address: an IP address or GID, or "lid:N".
func (p *parser) addr(n *enode, path jpath) (decode.Node, error) {
	s, err := p.str(n, path)
	if err != nil {
		return decode.Node{}, err
	}
	a, err := decode.ParseNode(s)
	if err == nil {
		return a, nil
	}
	if z := strings.IndexByte(s, '%'); z >= 0 {
		return decode.Node{}, p.errf(n, path, "%q has a zone; write the address without %s", s, s[z:])
	}
	if len(s) >= 4 && strings.EqualFold(s[:4], "lid:") {
		return decode.Node{}, p.errf(n, path, "%q is not a LID: write a number from 1 to 65535 (0xffff), in decimal or 0x hex (e.g. \"lid:1\" or \"lid:0x1\")", s)
	}
	return decode.Node{}, p.errf(n, path, "%q is not an IPv4 address, IPv6 address or GID, or a LID (e.g. \"10.77.0.2\", \"fe80::2\" or \"lid:1\")", s)
}

// accessFlag returns the flag named b, without allocating.
func accessFlag(b []byte) (hca.Access, bool) {
	for _, f := range accessFlags {
		if string(b) == f.name {
			return f.a, true
		}
	}
	return 0, false
}

var accessFlags = func() []struct {
	a    hca.Access
	name string
} {
	var out []struct {
		a    hca.Access
		name string
	}
	for _, f := range hca.AccessFlags() {
		out = append(out, struct {
			a    hca.Access
			name string
		}{f, f.String()})
	}
	return out
}()

func (p *parser) access(n *enode, path jpath) (hca.Access, error) {
	if n.kind != '[' {
		return 0, p.errf(n, path, "want an array, found %s", enodeKind(n))
	}
	var a hca.Access
	i := 0
	for c := n.child; c >= 0; c, i = p.nodes[c].next, i+1 {
		it := &p.nodes[c]
		if it.kind != '"' {
			return 0, p.errf(it, path.at(i), "want a string, found %s", enodeKind(it))
		}
		f, ok := accessFlag(it.text)
		if !ok {
			s := string(it.text)
			var names []string
			for _, flag := range hca.AccessFlags() {
				names = append(names, flag.String())
			}
			msg := fmt.Sprintf("unknown access flag %q (known: %s)", s, strings.Join(names, ", "))
			if t, ok := strings.CutPrefix(strings.ToUpper(s), "IBV_ACCESS_"); ok {
				if _, ok := hca.AccessByName(t); ok {
					msg += fmt.Sprintf("; write %q, without the IBV_ACCESS_ prefix", t)
				}
			} else if _, ok := hca.AccessByName(strings.ToUpper(s)); ok {
				msg += fmt.Sprintf("; write %q, in capitals", strings.ToUpper(s))
			}
			return 0, p.errf(it, path.at(i), "%s", msg)
		}
		a |= f
	}
	return a, nil
}

// postedAt reads seconds since the epoch exactly (a float64 would lose the
// microseconds' last digits).
func (p *parser) postedAt(n *enode, path jpath) (time.Time, error) {
	if n.kind != '0' {
		return time.Time{}, p.errf(n, path, "want a number of seconds since the epoch (e.g. 1763779200.031), found %s", enodeKind(n))
	}
	t, msg := epochTime(string(n.text))
	if msg != "" {
		return time.Time{}, p.errf(n, path, "%s", msg)
	}
	return t, nil
}

// ---- the schema ----

var (
	topKeys      = []string{"version", "responder", "profile", "pds", "qps", "mrs", "mws"}
	topRequired  = []string{"version", "responder", "pds", "qps", "mrs"}
	qpKeys       = []string{"qpn", "pd", "type", "access", "mtu", "expected_psn", "rq_depth", "max_dest_rd_atomic", "min_rnr_timer", "q_key", "remote", "recv"}
	qpRequired   = []string{"qpn", "pd", "type", "access", "mtu"}
	remoteKeys   = []string{"address", "qpn"}
	recvKeys     = []string{"length", "posted_at"}
	recvRequired = []string{"length"}
	mrKeys       = []string{"rkey", "lkey", "va", "length", "pd", "access"}
	mwKeys       = []string{"rkey", "type", "va", "length", "pd", "access", "mr_rkey", "qpn"}
	mwRequired   = []string{"rkey", "type", "va", "length", "pd", "access", "mr_rkey"}
)

// The indexes of mrKeys.
const (
	mrRKey = iota
	mrLKey
	mrVA
	mrLength
	mrPD
	mrAccess
)

// refs holds what later entries refer to: where each PD, QP and key is.
type refs struct {
	pds   map[uint32]int // PD id -> index in File.PDs
	qps   map[uint32]int // QPN -> index in File.QPs
	rkeys keyIndex       // nonzero rkeys: MR i as i+1, MW j as -(j+1)
	lkeys keyIndex       // nonzero lkeys: MR i as i+1
}

// build makes pass 2 over the file check found to be JSON.
func (p *parser) build(t *top) (*File, error) {
	if t.kind != '{' {
		n := &enode{kind: t.kind, at: t.at}
		if t.kind != '[' {
			var err error
			if n, err = p.readAt(t.at); err != nil {
				return nil, err
			}
		}
		return nil, p.errf(n, root("$"), "want an object, found %s", enodeKind(n))
	}
	byKey := map[string]*member{}
	for i := range t.members {
		m := &t.members[i]
		if !slices.Contains(topKeys, m.key) {
			msg := fmt.Sprintf("unknown key %q (allowed: %s)", m.key, strings.Join(topKeys, ", "))
			if s := closest(m.key, topKeys); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, p.errAt(m.kat, root("$."+m.key), "%s", msg)
		}
		byKey[m.key] = m
	}
	for _, k := range topRequired {
		if byKey[k] == nil {
			return nil, p.errAt(t.at, root("$."+k), "missing; the file needs %s", strings.Join(topRequired, ", "))
		}
	}

	f := &File{Profile: "ibta"}
	n, err := p.readAt(byKey["version"].at)
	if err != nil {
		return nil, err
	}
	v, err := p.uint(n, root("$.version"), 64, "")
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, p.errf(n, root("$.version"), "version %d is not supported (this rocetap reads version 1)", v)
	}
	f.Version = 1

	if n, err = p.readAt(byKey["responder"].at); err != nil {
		return nil, err
	}
	if err := p.object(n, root("$.responder"), []string{"address"}, []string{"address"}); err != nil {
		return nil, err
	}
	if f.Responder, err = p.addr(p.get(n, "address"), root("$.responder.address")); err != nil {
		return nil, err
	}
	if m := byKey["profile"]; m != nil {
		if n, err = p.readAt(m.at); err != nil {
			return nil, err
		}
		if f.Profile, err = p.str(n, root("$.profile")); err != nil {
			return nil, err
		}
		if f.Profile == "" {
			return nil, p.errf(n, root("$.profile"), "empty; leave the key out for the default (ibta)")
		}
		if _, err := hca.ProfileByName(f.Profile); err != nil {
			// Every command refuses it: mpt check says so too.
			return nil, p.errf(n, root("$.profile"), "%v", err)
		}
	}

	ix := &refs{pds: map[uint32]int{}, qps: map[uint32]int{}}
	mrs := byKey["mrs"]
	ix.rkeys = newKeyIndex(mrs.count)
	ix.lkeys = newKeyIndex(mrs.count)
	// The order matters: QPs and MRs refer to PDs, MWs to MRs and QPs.
	if err := section(p, byKey["pds"], "$.pds", &f.PDs, func(i int, n *enode, path jpath) error {
		pd, err := p.pd(n, path, ix)
		if err == nil {
			ix.pds[pd.ID] = i
			f.PDs = append(f.PDs, pd)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if err := section(p, byKey["qps"], "$.qps", &f.QPs, func(i int, n *enode, path jpath) error {
		qp, err := p.qp(n, path, ix)
		if err == nil {
			ix.qps[qp.QPN] = i
			f.QPs = append(f.QPs, qp)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if err := section(p, mrs, "$.mrs", &f.MRs, func(i int, n *enode, path jpath) error {
		mr, err := p.mr(n, path, ix)
		if err == nil {
			f.MRs = append(f.MRs, mr)
			if mr.RKey != 0 {
				ix.rkeys.insert(mr.RKey, int32(i+1))
			}
			if mr.LKey != 0 {
				ix.lkeys.insert(mr.LKey, int32(i+1))
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	if m := byKey["mws"]; m != nil {
		if err := section(p, m, "$.mws", &f.MWs, func(i int, n *enode, path jpath) error {
			mw, err := p.mw(n, path, ix, f)
			if err == nil {
				f.MWs = append(f.MWs, mw)
				ix.rkeys.insert(mw.RKey, int32(-(i + 1)))
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// section reads the top-level array m, named base, into *dst (allocated
// for its elements), calling fn for each element.
func section[T any](p *parser, m *member, base string, dst *[]T, fn func(i int, n *enode, path jpath) error) error {
	if m.kind != '[' {
		n, err := p.readAt(m.at)
		if err != nil {
			return err
		}
		return p.errf(n, root(base), "want an array, found %s", enodeKind(n))
	}
	if m.count > 0 {
		*dst = make([]T, 0, m.count)
	}
	return p.elements(m.at, func(i int, n *enode) error { return fn(i, n, root(base).at(i)) })
}

func (p *parser) pd(n *enode, path jpath, ix *refs) (hca.PDConfig, error) {
	if err := p.object(n, path, []string{"id"}, []string{"id"}); err != nil {
		return hca.PDConfig{}, err
	}
	idn := p.get(n, "id")
	id, err := p.uint(idn, path.dot("id"), 32, " (PD handles are 32-bit)")
	if err != nil {
		return hca.PDConfig{}, err
	}
	if prev, dup := ix.pds[uint32(id)]; dup {
		return hca.PDConfig{}, p.errf(idn, path.dot("id"), "PD %d is already $.pds[%d]; PD ids must be unique", id, prev)
	}
	return hca.PDConfig{ID: uint32(id)}, nil
}

// pdRef reads a "pd" key and checks that it names a PD of $.pds.
func (p *parser) pdRef(n *enode, path jpath, ix *refs) (uint32, error) {
	id, err := p.uint(n, path, 32, " (PD handles are 32-bit)")
	if err != nil {
		return 0, err
	}
	if _, ok := ix.pds[uint32(id)]; !ok {
		pids := slices.Sorted(maps.Keys(ix.pds))
		ids := make([]string, len(pids))
		for i, pid := range pids {
			ids[i] = strconv.FormatUint(uint64(pid), 10)
		}
		return 0, p.errf(n, path, "PD %d is not in $.pds (ids: %s); add {\"id\": %d} to pds or fix the reference", id, strings.Join(ids, ", "), id)
	}
	return uint32(id), nil
}

var qpTypes = []string{"RC", "UC", "UD", "XRC"}

func (p *parser) qp(n *enode, path jpath, ix *refs) (hca.QPConfig, error) {
	var qp hca.QPConfig
	if err := p.object(n, path, qpKeys, qpRequired); err != nil {
		return qp, err
	}
	o := func(k string) *enode { return p.get(n, k) }
	v, err := p.uint(o("qpn"), path.dot("qpn"), 24, hintQPN)
	if err != nil {
		return qp, err
	}
	qp.QPN = uint32(v)
	if qp.QPN <= 1 {
		return qp, p.errf(o("qpn"), path.dot("qpn"), "%s", qp0or1(qp.QPN))
	}
	if i, dup := ix.qps[qp.QPN]; dup {
		return qp, p.errf(o("qpn"), path.dot("qpn"), "QPN 0x%06x is already $.qps[%d]; QPNs must be unique", qp.QPN, i)
	}
	if qp.PD, err = p.pdRef(o("pd"), path.dot("pd"), ix); err != nil {
		return qp, err
	}
	typ, err := p.str(o("type"), path.dot("type"))
	if err != nil {
		return qp, err
	}
	if !slices.Contains(qpTypes, typ) {
		msg := fmt.Sprintf("unknown QP type %q (known: %s)", typ, strings.Join(qpTypes, ", "))
		if slices.Contains(qpTypes, strings.ToUpper(typ)) {
			msg += fmt.Sprintf("; write %q, in capitals", strings.ToUpper(typ))
		}
		return qp, p.errf(o("type"), path.dot("type"), "%s", msg)
	}
	qp.Type, _ = decode.TransportByName(typ)
	if qp.Access, err = p.access(o("access"), path.dot("access")); err != nil {
		return qp, err
	}
	if v, err = p.uint(o("mtu"), path.dot("mtu"), 64, ""); err != nil {
		return qp, err
	}
	switch v {
	case 256, 512, 1024, 2048, 4096:
		qp.MTU = int(v)
	default:
		msg := fmt.Sprintf("%d is not an InfiniBand MTU (256, 512, 1024, 2048 or 4096)", v)
		if v > 4096 || v == 1500 {
			msg += "; this looks like an Ethernet MTU: write the RoCE path MTU, e.g. 1024 for Ethernet MTU 1500"
		}
		return qp, p.errf(o("mtu"), path.dot("mtu"), "%s", msg)
	}
	if m := o("expected_psn"); m != nil {
		if v, err = p.uint(m, path.dot("expected_psn"), 24, hintPSN); err != nil {
			return qp, err
		}
		qp.ExpectedPSN, qp.HasExpectedPSN = decode.PSN(v), true
	}
	if m := o("rq_depth"); m != nil {
		if v, err = p.uint(m, path.dot("rq_depth"), 32, ""); err != nil {
			return qp, err
		}
		qp.RQDepth, qp.HasRQDepth = uint32(v), true
	}
	if m := o("max_dest_rd_atomic"); m != nil {
		if v, err = p.uint(m, path.dot("max_dest_rd_atomic"), 8, " (verbs max_dest_rd_atomic is 8-bit)"); err != nil {
			return qp, err
		}
		qp.MaxDestRdAtomic, qp.HasMaxDestRdAtomic = uint8(v), true
	}
	if m := o("min_rnr_timer"); m != nil {
		if v, err = p.uint(m, path.dot("min_rnr_timer"), 5, " (min_rnr_timer is the 5-bit code 0..31 of the IBTA table, not milliseconds)"); err != nil {
			return qp, err
		}
		qp.MinRNRTimer, qp.HasMinRNRTimer = uint8(v), true
	}
	if m := o("q_key"); m != nil {
		if v, err = p.uint(m, path.dot("q_key"), 32, ` (Q_Keys are 32-bit, e.g. "0x11111111")`); err != nil {
			return qp, err
		}
		qp.QKey, qp.HasQKey = uint32(v), true
	}
	if m := o("remote"); m != nil {
		rp := path.dot("remote")
		if err := p.object(m, rp, remoteKeys, remoteKeys); err != nil {
			return qp, err
		}
		r := &hca.Peer{}
		if r.Addr, err = p.addr(p.get(m, "address"), rp.dot("address")); err != nil {
			return qp, err
		}
		if v, err = p.uint(p.get(m, "qpn"), rp.dot("qpn"), 24, hintQPN); err != nil {
			return qp, err
		}
		r.QPN = uint32(v)
		qp.Remote = r
	}
	if m := o("recv"); m != nil {
		recv := path.dot("recv")
		if m.kind != '[' {
			return qp, p.errf(m, recv, "want an array, found %s", enodeKind(m))
		}
		count := 0
		for c := m.child; c >= 0; c = p.nodes[c].next {
			count++
		}
		qp.HasRecv, qp.Recv = true, make([]hca.RecvWQE, 0, count)
		var last time.Time
		lastPath := ""
		i := 0
		for c := m.child; c >= 0; c, i = p.nodes[c].next, i+1 {
			it := &p.nodes[c]
			rp := recv.at(i)
			if err := p.object(it, rp, recvKeys, recvRequired); err != nil {
				return qp, err
			}
			var r hca.RecvWQE
			if r.Length, err = p.uint(p.get(it, "length"), rp.dot("length"), 64, ""); err != nil {
				return qp, err
			}
			if pa := p.get(it, "posted_at"); pa != nil {
				if r.PostedAt, err = p.postedAt(pa, rp.dot("posted_at")); err != nil {
					return qp, err
				}
				r.HasPostedAt = true
				if lastPath != "" && r.PostedAt.Before(last) {
					return qp, p.errf(pa, rp.dot("posted_at"), "%s is earlier than %s.posted_at; list the receives in posting order", pa.text, lastPath)
				}
				last, lastPath = r.PostedAt, rp.String()
			}
			qp.Recv = append(qp.Recv, r)
		}
	}
	return qp, nil
}

// key reads an rkey or lkey and checks that no other entry in seen has it.
// Key 0 may repeat: rxe gives rkey 0 to every MR without remote access.
func (p *parser) key(n *enode, path jpath, seen *keyIndex, what string) (uint32, error) {
	v, err := p.uint(n, path, 32, hintKey)
	if err != nil {
		return 0, err
	}
	k := uint32(v)
	if k != 0 {
		if e, dup := seen.find(k); dup {
			prev := fmt.Sprintf("$.mrs[%d].%s", e-1, what)
			if e < 0 {
				prev = fmt.Sprintf("$.mws[%d].%s", -e-1, what)
			}
			return 0, p.errf(n, path, "%s 0x%08x is also %s; %ss must be unique", what, k, prev, what)
		}
	}
	return k, nil
}

func (p *parser) mr(n *enode, path jpath, ix *refs) (hca.MRConfig, error) {
	var mr hca.MRConfig
	o, err := p.members(n, path, mrKeys, mrKeys)
	if err != nil {
		return mr, err
	}
	if mr.RKey, err = p.key(o[mrRKey], path.dot("rkey"), &ix.rkeys, "rkey"); err != nil {
		return mr, err
	}
	if mr.LKey, err = p.key(o[mrLKey], path.dot("lkey"), &ix.lkeys, "lkey"); err != nil {
		return mr, err
	}
	if mr.VA, mr.Length, err = p.extent(o[mrVA], o[mrLength], path); err != nil {
		return mr, err
	}
	if mr.PD, err = p.pdRef(o[mrPD], path.dot("pd"), ix); err != nil {
		return mr, err
	}
	if mr.Access, err = p.access(o[mrAccess], path.dot("access")); err != nil {
		return mr, err
	}
	if mr.Access&hca.ZeroBased != 0 && mr.VA != 0 {
		return mr, p.errf(o[mrVA], path.dot("va"), "%s with ZERO_BASED; a zero-based MR starts at va 0", o[mrVA].text)
	}
	return mr, nil
}

// extent reads va and length and checks that the range does not wrap.
func (p *parser) extent(van, ln *enode, path jpath) (va, length uint64, err error) {
	if va, err = p.uint(van, path.dot("va"), 64, ""); err != nil {
		return
	}
	if length, err = p.uint(ln, path.dot("length"), 64, ""); err != nil {
		return
	}
	if length > 0 && va+(length-1) < va {
		err = p.errf(ln, path.dot("length"), "va %#x + length %d wraps past 2^64", va, length)
	}
	return
}

func (p *parser) mw(n *enode, path jpath, ix *refs, f *File) (hca.MWConfig, error) {
	var mw hca.MWConfig
	if err := p.object(n, path, mwKeys, mwRequired); err != nil {
		return mw, err
	}
	o := func(k string) *enode { return p.get(n, k) }
	var err error
	if mw.RKey, err = p.key(o("rkey"), path.dot("rkey"), &ix.rkeys, "rkey"); err != nil {
		return mw, err
	}
	if mw.RKey == 0 {
		return mw, p.errf(o("rkey"), path.dot("rkey"), "a bound window has a nonzero rkey")
	}
	t, err := p.uint(o("type"), path.dot("type"), 64, "")
	if err != nil {
		return mw, err
	}
	if t != 1 && t != 2 {
		return mw, p.errf(o("type"), path.dot("type"), "MW type %d is unknown (1 or 2)", t)
	}
	mw.Type = int(t)
	if mw.VA, mw.Length, err = p.extent(o("va"), o("length"), path); err != nil {
		return mw, err
	}
	if mw.PD, err = p.pdRef(o("pd"), path.dot("pd"), ix); err != nil {
		return mw, err
	}
	if mw.Access, err = p.access(o("access"), path.dot("access")); err != nil {
		return mw, err
	}

	// The MR it is bound to.
	m := o("mr_rkey")
	v, err := p.uint(m, path.dot("mr_rkey"), 32, hintKey)
	if err != nil {
		return mw, err
	}
	mw.MRRKey = uint32(v)
	e, ok := ix.rkeys.find(mw.MRRKey)
	if !ok || e < 0 {
		return mw, p.errf(m, path.dot("mr_rkey"), "no MR in $.mrs has rkey 0x%08x; give the rkey of the MR the window is bound to", mw.MRRKey)
	}
	i := int(e - 1)
	mr := f.MRs[i]
	mrPath := fmt.Sprintf("$.mrs[%d]", i)
	if mr.Access&hca.MWBind == 0 {
		return mw, p.errf(m, path.dot("mr_rkey"), "%s (rkey 0x%08x) lacks MW_BIND, so no window can be bound to it", mrPath, mw.MRRKey)
	}
	if mr.PD != mw.PD {
		return mw, p.errf(o("pd"), path.dot("pd"), "PD %d differs from PD %d of its MR %s", mw.PD, mr.PD, mrPath)
	}
	if mr.Access&hca.ZeroBased == 0 && mw.Access&hca.ZeroBased == 0 && mw.Length > 0 &&
		(mw.VA < mr.VA || mw.VA-mr.VA > mr.Length || mw.Length > mr.Length-(mw.VA-mr.VA)) {
		return mw, p.errf(o("va"), path.dot("va"), "window [%#x, +%d) is not inside its MR %s [%#x, +%d)", mw.VA, mw.Length, mrPath, mr.VA, mr.Length)
	}

	// The QP it is bound to (type 2 only).
	q := o("qpn")
	switch {
	case mw.Type == 2 && q == nil:
		return mw, p.errf(n, path.dot("qpn"), "missing; a type 2 window is bound to a QP: give its qpn")
	case mw.Type == 1 && q != nil:
		return mw, p.errf(q, path.dot("qpn"), "a type 1 window is bound to no QP; remove qpn or set type 2")
	case q != nil:
		if v, err = p.uint(q, path.dot("qpn"), 24, hintQPN); err != nil {
			return mw, err
		}
		mw.QPN, mw.HasQPN = uint32(v), true
		qi, ok := ix.qps[mw.QPN]
		if !ok {
			return mw, p.errf(q, path.dot("qpn"), "no QP in $.qps has QPN 0x%06x; give the QP the window is bound to", mw.QPN)
		}
		if qpd := f.QPs[qi].PD; qpd != mw.PD {
			return mw, p.errf(o("pd"), path.dot("pd"), "PD %d differs from PD %d of its QP $.qps[%d]", mw.PD, qpd, qi)
		}
	}
	return mw, nil
}

// keyIndex finds an MR or MW by a key, for the uniqueness checks. While
// the keys come in increasing order, as in a file written from a device's
// MPT, they are a sorted list: no key can repeat an earlier one, and
// appending costs no random access. Past the first key out of order they
// go into an open-addressing table of keys and entries, 8 bytes a slot
// and at most half full (a map from key to path cost ~60 bytes an MR), at
// about a cache miss a lookup.
type keyIndex struct {
	sorted []keySlot // while in order: every key so far, increasing
	slots  []keySlot // else: the table
	shift  uint      // 32 - log2(len(slots))
	n      int
}

type keySlot struct {
	key uint32
	e   int32 // 0 when empty
}

func newKeyIndex(n int) keyIndex {
	return keyIndex{sorted: make([]keySlot, 0, n)}
}

// home is Fibonacci hashing: the top bits of the key times 2^32/φ.
func (x *keyIndex) home(k uint32) uint32 { return (k * 0x9e3779b1) >> x.shift }

// find returns the entry with key k.
func (x *keyIndex) find(k uint32) (int32, bool) {
	if x.slots == nil {
		if len(x.sorted) == 0 || k > x.sorted[len(x.sorted)-1].key {
			return 0, false
		}
		i, ok := slices.BinarySearchFunc(x.sorted, k, func(s keySlot, k uint32) int { return cmp.Compare(s.key, k) })
		if !ok {
			return 0, false
		}
		return x.sorted[i].e, true
	}
	mask := uint32(len(x.slots) - 1)
	for i := x.home(k); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.e == 0 {
			return 0, false
		}
		if s.key == k {
			return s.e, true
		}
	}
}

// insert adds entry e, whose key is k and not in x yet.
func (x *keyIndex) insert(k uint32, e int32) {
	if x.slots == nil {
		if len(x.sorted) == 0 || k > x.sorted[len(x.sorted)-1].key {
			x.sorted = append(x.sorted, keySlot{k, e})
			return
		}
		size, shift := 16, uint(28)
		for size < 4*len(x.sorted) {
			size, shift = size<<1, shift-1
		}
		x.slots, x.shift = make([]keySlot, size), shift
		for _, s := range x.sorted {
			x.put(s)
		}
		x.sorted = nil
	}
	if 2*(x.n+1) > len(x.slots) {
		old := x.slots
		x.slots, x.shift, x.n = make([]keySlot, 2*len(old)), x.shift-1, 0
		for _, s := range old {
			if s.e != 0 {
				x.put(s)
			}
		}
	}
	x.put(keySlot{k, e})
}

func (x *keyIndex) put(s keySlot) {
	mask := uint32(len(x.slots) - 1)
	i := x.home(s.key)
	for x.slots[i].e != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = s
	x.n++
}
