package mpt

// The MPT loader as it was before the streaming one (load.go): a tree of
// the whole file (jsontree.go), then the checks on it. It is the reference
// TestParseMatchesReference and FuzzParseMatchesReference hold Parse to:
// the same File, or the same error, for every input.

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// refParse is the former Parse.
func refParse(name string, data []byte) (*File, error) {
	w := &walker{file: name, data: data}
	root, err := w.parse()
	if err != nil {
		return nil, err
	}
	return w.build(root)
}

// object checks that n is an object with only the allowed keys and every
// required one.
func (w *walker) object(n *node, path string, allowed, required []string) error {
	if n.kind != '{' {
		return w.errf(n, path, "want an object, found %s", kindName(n))
	}
	for i, k := range n.keys {
		if !slices.Contains(allowed, k) {
			msg := fmt.Sprintf("unknown key %q (allowed: %s)", k, strings.Join(allowed, ", "))
			if s := closest(k, allowed); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return w.errAt(n.koff[i], path+"."+k, "%s", msg)
		}
	}
	for _, k := range required {
		if _, ok := n.obj[k]; !ok {
			return w.errf(n, path+"."+k, "missing; %s needs %s", describe(path), strings.Join(required, ", "))
		}
	}
	return nil
}

func (w *walker) array(n *node, path string) ([]*node, error) {
	if n.kind != '[' {
		return nil, w.errf(n, path, "want an array, found %s", kindName(n))
	}
	return n.arr, nil
}

func (w *walker) str(n *node, path string) (string, error) {
	if n.kind != '"' {
		return "", w.errf(n, path, "want a string, found %s", kindName(n))
	}
	return n.text, nil
}

// uint reads an integer written as a JSON number or a string in decimal or
// 0x hex, and checks that it fits bits.
func (w *walker) uint(n *node, path string, bits int, hint string) (uint64, error) {
	const how = `write a JSON number or a string in decimal or 0x hex, e.g. 4096 or "0x1000"`
	if n.kind != '0' && n.kind != '"' {
		return 0, w.errf(n, path, "want an integer, found %s (%s)", kindName(n), how)
	}
	s := n.text
	shown := s
	if n.kind == '"' {
		shown = strconv.Quote(s)
	}
	var v uint64
	var err error
	switch {
	case strings.HasPrefix(s, "-"):
		return 0, w.errf(n, path, "%s is negative", shown)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		v, err = strconv.ParseUint(s[2:], 16, 64)
	default:
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, w.errf(n, path, "%s does not fit 64 bits", s)
	}
	if err != nil {
		return 0, w.errf(n, path, "%s is not an integer (%s)", shown, how)
	}
	if bits < 64 && v>>bits != 0 {
		return 0, w.errf(n, path, "%s does not fit %d bits%s", s, bits, hint)
	}
	return v, nil
}

// addr reads a node address: an IP address or GID, or "lid:N".
func (w *walker) addr(n *node, path string) (decode.Node, error) {
	s, err := w.str(n, path)
	if err != nil {
		return decode.Node{}, err
	}
	a, err := decode.ParseNode(s)
	if err == nil {
		return a, nil
	}
	if z := strings.IndexByte(s, '%'); z >= 0 {
		return decode.Node{}, w.errf(n, path, "%q has a zone; write the address without %s", s, s[z:])
	}
	if len(s) >= 4 && strings.EqualFold(s[:4], "lid:") {
		return decode.Node{}, w.errf(n, path, "%q is not a LID: write a number from 1 to 65535 (0xffff), in decimal or 0x hex (e.g. \"lid:1\" or \"lid:0x1\")", s)
	}
	return decode.Node{}, w.errf(n, path, "%q is not an IPv4 address, IPv6 address or GID, or a LID (e.g. \"10.77.0.2\", \"fe80::2\" or \"lid:1\")", s)
}

func (w *walker) access(n *node, path string) (hca.Access, error) {
	items, err := w.array(n, path)
	if err != nil {
		return 0, err
	}
	var a hca.Access
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, err := w.str(it, p)
		if err != nil {
			return 0, err
		}
		f, ok := hca.AccessByName(s)
		if !ok {
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
			return 0, w.errf(it, p, "%s", msg)
		}
		a |= f
	}
	return a, nil
}

// refs holds what later entries refer to, with the path that defined it.
type refRefs struct {
	pds   map[uint32]string
	qps   map[uint32]int // QPN -> index in File.QPs
	mrs   map[uint32]int // nonzero rkey -> index in File.MRs
	rkeys map[uint32]string
	lkeys map[uint32]string
}

func (w *walker) build(root *node) (*File, error) {
	if err := w.object(root, "$", topKeys, topRequired); err != nil {
		return nil, err
	}
	f := &File{Profile: "ibta"}
	v, err := w.uint(root.obj["version"], "$.version", 64, "")
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, w.errf(root.obj["version"], "$.version", "version %d is not supported (this rocetap reads version 1)", v)
	}
	f.Version = 1

	resp := root.obj["responder"]
	if err := w.object(resp, "$.responder", []string{"address"}, []string{"address"}); err != nil {
		return nil, err
	}
	if f.Responder, err = w.addr(resp.obj["address"], "$.responder.address"); err != nil {
		return nil, err
	}
	if n, ok := root.obj["profile"]; ok {
		if f.Profile, err = w.str(n, "$.profile"); err != nil {
			return nil, err
		}
		if f.Profile == "" {
			return nil, w.errf(n, "$.profile", "empty; leave the key out for the default (ibta)")
		}
		if _, err := hca.ProfileByName(f.Profile); err != nil {
			return nil, w.errf(n, "$.profile", "%v", err)
		}
	}

	ix := &refRefs{pds: map[uint32]string{}, qps: map[uint32]int{}, mrs: map[uint32]int{},
		rkeys: map[uint32]string{}, lkeys: map[uint32]string{}}
	// The order matters: QPs and MRs refer to PDs, MWs to MRs and QPs.
	pds, err := w.array(root.obj["pds"], "$.pds")
	if err != nil {
		return nil, err
	}
	for i, n := range pds {
		pd, err := w.pd(n, fmt.Sprintf("$.pds[%d]", i), ix)
		if err != nil {
			return nil, err
		}
		f.PDs = append(f.PDs, pd)
	}
	qps, err := w.array(root.obj["qps"], "$.qps")
	if err != nil {
		return nil, err
	}
	for i, n := range qps {
		qp, err := w.qp(n, fmt.Sprintf("$.qps[%d]", i), ix)
		if err != nil {
			return nil, err
		}
		ix.qps[qp.QPN] = len(f.QPs)
		f.QPs = append(f.QPs, qp)
	}
	mrs, err := w.array(root.obj["mrs"], "$.mrs")
	if err != nil {
		return nil, err
	}
	for i, n := range mrs {
		mr, err := w.mr(n, fmt.Sprintf("$.mrs[%d]", i), ix)
		if err != nil {
			return nil, err
		}
		if mr.RKey != 0 {
			ix.mrs[mr.RKey] = len(f.MRs)
		}
		f.MRs = append(f.MRs, mr)
	}
	if n, ok := root.obj["mws"]; ok {
		mws, err := w.array(n, "$.mws")
		if err != nil {
			return nil, err
		}
		for i, n := range mws {
			mw, err := w.mw(n, fmt.Sprintf("$.mws[%d]", i), ix, f)
			if err != nil {
				return nil, err
			}
			f.MWs = append(f.MWs, mw)
		}
	}
	return f, nil
}

func (w *walker) pd(n *node, path string, ix *refRefs) (hca.PDConfig, error) {
	if err := w.object(n, path, []string{"id"}, []string{"id"}); err != nil {
		return hca.PDConfig{}, err
	}
	id, err := w.uint(n.obj["id"], path+".id", 32, " (PD handles are 32-bit)")
	if err != nil {
		return hca.PDConfig{}, err
	}
	if prev, dup := ix.pds[uint32(id)]; dup {
		return hca.PDConfig{}, w.errf(n.obj["id"], path+".id", "PD %d is already %s; PD ids must be unique", id, prev)
	}
	ix.pds[uint32(id)] = path
	return hca.PDConfig{ID: uint32(id)}, nil
}

// pdRef reads a "pd" key and checks that it names a PD of $.pds.
func (w *walker) pdRef(n *node, path string, ix *refRefs) (uint32, error) {
	id, err := w.uint(n, path, 32, " (PD handles are 32-bit)")
	if err != nil {
		return 0, err
	}
	if _, ok := ix.pds[uint32(id)]; !ok {
		pids := slices.Sorted(maps.Keys(ix.pds))
		ids := make([]string, len(pids))
		for i, pid := range pids {
			ids[i] = strconv.FormatUint(uint64(pid), 10)
		}
		return 0, w.errf(n, path, "PD %d is not in $.pds (ids: %s); add {\"id\": %d} to pds or fix the reference", id, strings.Join(ids, ", "), id)
	}
	return uint32(id), nil
}

func (w *walker) qp(n *node, path string, ix *refRefs) (hca.QPConfig, error) {
	var qp hca.QPConfig
	if err := w.object(n, path, qpKeys, qpRequired); err != nil {
		return qp, err
	}
	o := n.obj
	v, err := w.uint(o["qpn"], path+".qpn", 24, hintQPN)
	if err != nil {
		return qp, err
	}
	qp.QPN = uint32(v)
	if qp.QPN <= 1 {
		return qp, w.errf(o["qpn"], path+".qpn", "%s", qp0or1(qp.QPN))
	}
	if i, dup := ix.qps[qp.QPN]; dup {
		return qp, w.errf(o["qpn"], path+".qpn", "QPN 0x%06x is already $.qps[%d]; QPNs must be unique", qp.QPN, i)
	}
	if qp.PD, err = w.pdRef(o["pd"], path+".pd", ix); err != nil {
		return qp, err
	}
	typ, err := w.str(o["type"], path+".type")
	if err != nil {
		return qp, err
	}
	if !slices.Contains(qpTypes, typ) {
		msg := fmt.Sprintf("unknown QP type %q (known: %s)", typ, strings.Join(qpTypes, ", "))
		if slices.Contains(qpTypes, strings.ToUpper(typ)) {
			msg += fmt.Sprintf("; write %q, in capitals", strings.ToUpper(typ))
		}
		return qp, w.errf(o["type"], path+".type", "%s", msg)
	}
	qp.Type, _ = decode.TransportByName(typ)
	if qp.Access, err = w.access(o["access"], path+".access"); err != nil {
		return qp, err
	}
	if v, err = w.uint(o["mtu"], path+".mtu", 64, ""); err != nil {
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
		return qp, w.errf(o["mtu"], path+".mtu", "%s", msg)
	}
	if m, ok := o["expected_psn"]; ok {
		if v, err = w.uint(m, path+".expected_psn", 24, hintPSN); err != nil {
			return qp, err
		}
		qp.ExpectedPSN, qp.HasExpectedPSN = decode.PSN(v), true
	}
	if m, ok := o["rq_depth"]; ok {
		if v, err = w.uint(m, path+".rq_depth", 32, ""); err != nil {
			return qp, err
		}
		qp.RQDepth, qp.HasRQDepth = uint32(v), true
	}
	if m, ok := o["max_dest_rd_atomic"]; ok {
		if v, err = w.uint(m, path+".max_dest_rd_atomic", 8, " (verbs max_dest_rd_atomic is 8-bit)"); err != nil {
			return qp, err
		}
		qp.MaxDestRdAtomic, qp.HasMaxDestRdAtomic = uint8(v), true
	}
	if m, ok := o["min_rnr_timer"]; ok {
		if v, err = w.uint(m, path+".min_rnr_timer", 5, " (min_rnr_timer is the 5-bit code 0..31 of the IBTA table, not milliseconds)"); err != nil {
			return qp, err
		}
		qp.MinRNRTimer, qp.HasMinRNRTimer = uint8(v), true
	}
	if m, ok := o["q_key"]; ok {
		if v, err = w.uint(m, path+".q_key", 32, ` (Q_Keys are 32-bit, e.g. "0x11111111")`); err != nil {
			return qp, err
		}
		qp.QKey, qp.HasQKey = uint32(v), true
	}
	if m, ok := o["remote"]; ok {
		rp := path + ".remote"
		if err := w.object(m, rp, remoteKeys, remoteKeys); err != nil {
			return qp, err
		}
		r := &hca.Peer{}
		if r.Addr, err = w.addr(m.obj["address"], rp+".address"); err != nil {
			return qp, err
		}
		if v, err = w.uint(m.obj["qpn"], rp+".qpn", 24, hintQPN); err != nil {
			return qp, err
		}
		r.QPN = uint32(v)
		qp.Remote = r
	}
	if m, ok := o["recv"]; ok {
		items, err := w.array(m, path+".recv")
		if err != nil {
			return qp, err
		}
		qp.HasRecv, qp.Recv = true, make([]hca.RecvWQE, 0, len(items))
		var last time.Time
		lastPath := ""
		for i, it := range items {
			rp := fmt.Sprintf("%s.recv[%d]", path, i)
			if err := w.object(it, rp, recvKeys, recvRequired); err != nil {
				return qp, err
			}
			var r hca.RecvWQE
			if r.Length, err = w.uint(it.obj["length"], rp+".length", 64, ""); err != nil {
				return qp, err
			}
			if pa, ok := it.obj["posted_at"]; ok {
				if r.PostedAt, err = w.postedAt(pa, rp+".posted_at"); err != nil {
					return qp, err
				}
				r.HasPostedAt = true
				if lastPath != "" && r.PostedAt.Before(last) {
					return qp, w.errf(pa, rp+".posted_at", "%s is earlier than %s.posted_at; list the receives in posting order", pa.text, lastPath)
				}
				last, lastPath = r.PostedAt, rp
			}
			qp.Recv = append(qp.Recv, r)
		}
	}
	return qp, nil
}

// key reads an rkey or lkey and checks that no other entry in seen has it.
// Key 0 may repeat: rxe gives rkey 0 to every MR without remote access.
func (w *walker) key(n *node, path string, seen map[uint32]string, what string) (uint32, error) {
	v, err := w.uint(n, path, 32, hintKey)
	if err != nil {
		return 0, err
	}
	k := uint32(v)
	if k != 0 {
		if prev, dup := seen[k]; dup {
			return 0, w.errf(n, path, "%s 0x%08x is also %s; %ss must be unique", what, k, prev, what)
		}
		seen[k] = path
	}
	return k, nil
}

func (w *walker) mr(n *node, path string, ix *refRefs) (hca.MRConfig, error) {
	var mr hca.MRConfig
	if err := w.object(n, path, mrKeys, mrKeys); err != nil {
		return mr, err
	}
	o := n.obj
	var err error
	if mr.RKey, err = w.key(o["rkey"], path+".rkey", ix.rkeys, "rkey"); err != nil {
		return mr, err
	}
	if mr.LKey, err = w.key(o["lkey"], path+".lkey", ix.lkeys, "lkey"); err != nil {
		return mr, err
	}
	if mr.VA, mr.Length, err = w.extent(o, path); err != nil {
		return mr, err
	}
	if mr.PD, err = w.pdRef(o["pd"], path+".pd", ix); err != nil {
		return mr, err
	}
	if mr.Access, err = w.access(o["access"], path+".access"); err != nil {
		return mr, err
	}
	if mr.Access&hca.ZeroBased != 0 && mr.VA != 0 {
		return mr, w.errf(o["va"], path+".va", "%s with ZERO_BASED; a zero-based MR starts at va 0", o["va"].text)
	}
	return mr, nil
}

// extent reads va and length and checks that the range does not wrap.
func (w *walker) extent(o map[string]*node, path string) (va, length uint64, err error) {
	if va, err = w.uint(o["va"], path+".va", 64, ""); err != nil {
		return
	}
	if length, err = w.uint(o["length"], path+".length", 64, ""); err != nil {
		return
	}
	if length > 0 && va+(length-1) < va {
		err = w.errf(o["length"], path+".length", "va %#x + length %d wraps past 2^64", va, length)
	}
	return
}

func (w *walker) mw(n *node, path string, ix *refRefs, f *File) (hca.MWConfig, error) {
	var mw hca.MWConfig
	if err := w.object(n, path, mwKeys, mwRequired); err != nil {
		return mw, err
	}
	o := n.obj
	var err error
	if mw.RKey, err = w.key(o["rkey"], path+".rkey", ix.rkeys, "rkey"); err != nil {
		return mw, err
	}
	if mw.RKey == 0 {
		return mw, w.errf(o["rkey"], path+".rkey", "a bound window has a nonzero rkey")
	}
	t, err := w.uint(o["type"], path+".type", 64, "")
	if err != nil {
		return mw, err
	}
	if t != 1 && t != 2 {
		return mw, w.errf(o["type"], path+".type", "MW type %d is unknown (1 or 2)", t)
	}
	mw.Type = int(t)
	if mw.VA, mw.Length, err = w.extent(o, path); err != nil {
		return mw, err
	}
	if mw.PD, err = w.pdRef(o["pd"], path+".pd", ix); err != nil {
		return mw, err
	}
	if mw.Access, err = w.access(o["access"], path+".access"); err != nil {
		return mw, err
	}

	// The MR it is bound to.
	m := o["mr_rkey"]
	v, err := w.uint(m, path+".mr_rkey", 32, hintKey)
	if err != nil {
		return mw, err
	}
	mw.MRRKey = uint32(v)
	i, ok := ix.mrs[mw.MRRKey]
	if !ok {
		return mw, w.errf(m, path+".mr_rkey", "no MR in $.mrs has rkey 0x%08x; give the rkey of the MR the window is bound to", mw.MRRKey)
	}
	mr := f.MRs[i]
	mrPath := fmt.Sprintf("$.mrs[%d]", i)
	if mr.Access&hca.MWBind == 0 {
		return mw, w.errf(m, path+".mr_rkey", "%s (rkey 0x%08x) lacks MW_BIND, so no window can be bound to it", mrPath, mw.MRRKey)
	}
	if mr.PD != mw.PD {
		return mw, w.errf(o["pd"], path+".pd", "PD %d differs from PD %d of its MR %s", mw.PD, mr.PD, mrPath)
	}
	if mr.Access&hca.ZeroBased == 0 && mw.Access&hca.ZeroBased == 0 && mw.Length > 0 &&
		(mw.VA < mr.VA || mw.VA-mr.VA > mr.Length || mw.Length > mr.Length-(mw.VA-mr.VA)) {
		return mw, w.errf(o["va"], path+".va", "window [%#x, +%d) is not inside its MR %s [%#x, +%d)", mw.VA, mw.Length, mrPath, mr.VA, mr.Length)
	}

	// The QP it is bound to (type 2 only).
	q, hasQ := o["qpn"]
	switch {
	case mw.Type == 2 && !hasQ:
		return mw, w.errf(n, path+".qpn", "missing; a type 2 window is bound to a QP: give its qpn")
	case mw.Type == 1 && hasQ:
		return mw, w.errf(q, path+".qpn", "a type 1 window is bound to no QP; remove qpn or set type 2")
	case hasQ:
		if v, err = w.uint(q, path+".qpn", 24, hintQPN); err != nil {
			return mw, err
		}
		mw.QPN, mw.HasQPN = uint32(v), true
		qi, ok := ix.qps[mw.QPN]
		if !ok {
			return mw, w.errf(q, path+".qpn", "no QP in $.qps has QPN 0x%06x; give the QP the window is bound to", mw.QPN)
		}
		if qpd := f.QPs[qi].PD; qpd != mw.PD {
			return mw, w.errf(o["pd"], path+".pd", "PD %d differs from PD %d of its QP $.qps[%d]", mw.PD, qpd, qi)
		}
	}
	return mw, nil
}

// sameParse checks that Parse and refParse agree on data: the same error
// text, or the same File.
func sameParse(t *testing.T, data []byte) {
	t.Helper()
	got, gotErr := Parse("x.json", data)
	want, wantErr := refParse("x.json", data)
	switch {
	case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Fatalf("input %q:\nParse:     %v\nreference: %v", data, gotErr, wantErr)
	case gotErr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("input %q:\nParse:     %+v\nreference: %+v", data, got, want)
	}
	if gotErr != nil {
		var me *Error
		if !errors.As(gotErr, &me) {
			t.Fatalf("input %q: error %v is not an *Error", data, gotErr)
		}
	}
}

// refCorpus is every MPT file of testdata/rxe, the format's example and
// inputs at the edges of JSON and of the streaming loader.
func refCorpus(t testing.TB) [][]byte {
	files, _ := filepath.Glob("../testdata/rxe/*.mpt.json")
	var out [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	const head = `{"version": 1, "responder": {"address": "10.77.0.2"}, `
	for _, s := range []string{
		baseExample,
		"", " ", "\f", "\u00a0\n", "\ufeff{}", "{}", "[]", "1", "1 ", " 1", "\r\r-0.5e3", " true", "1x", "1 x", "nullnull", "null", "true false",
		`"a"`, `"a"x`, `{} ,`, `{}x`, `{},`, `{}:`, `{} {}`, `[1,]`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a" 1}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+5}`, `{"a":-0.5E-3}`, `{"a":tru}`, `{"a":nul}`,
		`{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a":"\u00"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"a"`, `{"a":`, `{"a":1`, `{`, `[`, `"`, `"abc`, `"ab\`,
		`{"version": 1, "version": 1}`, `{"a":{"b":1,"b":2}}`,
		`{"v\u0065rsion": 1, "responder": {"address": "10.77.0.2"}, "pds": [], "qps": [], "mrs": []}`,
		head + `"pds": [], "qps": [], "mrs": []}`,
		head + `"mrs": [], "qps": [], "pds": []}`,
		head + `"mrs": [{"rkey": 1, "lkey": 1, "va": 0, "length": 1, "pd": 9, "access": []}], "qps": [], "pds": [{"id": 9}]}`,
		head + `"mws": [{"rkey": 5, "type": 1, "va": 0, "length": 1, "pd": 9, "access": [], "mr_rkey": 1}], "mrs": [{"rkey": 1, "lkey": 1, "va": 0, "length": 1, "pd": 9, "access": ["MW_BIND"]}], "qps": [], "pds": [{"id": 9}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": 1, "lkey": 2, "va": 0, "length": 1, "pd": 1, "access": []}, {"rkey": 2, "lkey": 1, "va": 0, "length": 1, "pd": 1, "access": []}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": 1, "lkey": 2, "va": 0, "length": 1, "pd": 1, "access": []}], "mws": [{"rkey": 2, "type": 1, "va": 0, "length": 1, "pd": 1, "access": [], "mr_rkey": 2}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": 1, "lkey": 2, "va": 0, "length": 1, "pd": 1, "access": ["MW_BIND"]}], "mws": [{"rkey": 2, "type": 1, "va": 0, "length": 1, "pd": 1, "access": [], "mr_rkey": 1}, {"rkey": 3, "type": 1, "va": 0, "length": 1, "pd": 1, "access": [], "mr_rkey": 2}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": "0xFFFFFFFFFFFFFFFFFg", "lkey": 2, "va": 0, "length": 1, "pd": 1, "access": []}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": "+5", "lkey": "0X1F", "va": "00012", "length": "0x", "pd": 1, "access": []}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": 1, "lkey": 1, "va": "0xffffffffffffffff", "length": 18446744073709551615, "pd": 1, "access": []}]}`,
		head + `"pds": [{"id": 1}], "qps": [], "mrs": [{"rkey": 1, "lkey": 1, "va": "99999999999999999999", "length": 1, "pd": 1, "access": []}]}`,
		head + `"pds": {"id": 1}, "qps": [], "mrs": []}`,
		head + `"pds": "x", "qps": 5, "mrs": null}`,
		head + `"pds": [1], "qps": [], "mrs": []}`,
		head + `"pds": [], "qps": [], "mrs": [], "extra": 1, "mws": []}`,
		head + `"pds": [], "qps": [], "mrs": [], "profil": "rxe"}`,
		head + `"pds": [{"id": 1}], "qps": [{"qpn": 1, "pd": 1, "type": "UD", "access": [], "mtu": 256, "recv": {"length": 1}}], "mrs": []}`,
		head + `"pds": [{"id": 1}], "qps": [{"qpn": 1, "pd": 1, "type": "UD", "access": [], "mtu": 256, "recv": [{"length": 1, "posted_at": 5}, {"length": 2, "posted_at": 4.5}]}], "mrs": []}`,
		head + `"pds": [{"id": 1}], "qps": [{"qpn": 1, "pd": 1, "type": "UD", "access": [], "mtu": 256, "recv": []}], "mrs": []}`,
		`{"a":` + strings.Repeat(`{"b":`, 40) + `1` + strings.Repeat(`}`, 41),
		`{"a":` + strings.Repeat(`[`, 31) + strings.Repeat(`]`, 31) + `}`,
		`{"a":` + strings.Repeat(`[`, 32) + strings.Repeat(`]`, 32) + `}`,
	} {
		out = append(out, []byte(s))
	}
	var big strings.Builder
	big.WriteString(`{"k0": 1`)
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&big, `, "k%d": 1`, i%30)
	}
	big.WriteString(`}`)
	out = append(out, []byte(big.String()))
	return out
}

// TestParseMatchesReference holds the streaming loader to the tree
// loader it replaced: on the corpus, and on one-byte edits of the
// format's example (deleted, or a JSON character put before or in place
// of it; at every 4th byte, every 17th with -short), the same File or the
// same error. FuzzParseMatchesReference goes further.
func TestParseMatchesReference(t *testing.T) {
	for _, data := range refCorpus(t) {
		sameParse(t, data)
	}
	base := []byte(baseExample)
	step := 4
	if testing.Short() {
		step = 17
	}
	for i := 0; i < len(base); i += step {
		sameParse(t, slices.Concat(base[:i], base[i+1:]))
		for _, c := range []byte("{}[],:\"\\0-9.ex \nt") {
			sameParse(t, slices.Concat(base[:i], []byte{c}, base[i:]))
			sameParse(t, slices.Concat(base[:i], []byte{c}, base[i+1:]))
		}
	}
}

func FuzzParseMatchesReference(f *testing.F) {
	for _, data := range refCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameParse(t, data)
		defer func(n int) { lexBufSize = n }(lexBufSize)
		lexBufSize = 3 // every token straddles reads
		sameParse(t, data)
	})
}

// TestParseMatchesReferenceSmallReads reads the corpus and a file of 3,000
// MRs a few bytes at a time, so that tokens, elements and marked stretches
// straddle every read.
func TestParseMatchesReferenceSmallReads(t *testing.T) {
	defer func(n int) { lexBufSize = n }(lexBufSize)
	for _, size := range []int{1, 7, 64} {
		lexBufSize = size
		for _, data := range refCorpus(t) {
			sameParse(t, data)
		}
		data, err := os.ReadFile(manyMRsFile(t, 3000))
		if err != nil {
			t.Fatal(err)
		}
		sameParse(t, data)
	}
}
