package mpt

// Import of iproute2's `rdma -j resource show mr|qp|pd` output into an MPT
// file: what the kernel reports about a device's memory regions, queue
// pairs and protection domains.
//
// rdma prints less than an MPT file holds. What it lacks is either
// supplied by the caller (RdmaSelect) or reported as missing (RdmaGap),
// never guessed: an MR without its VA cannot be bounds-checked, and a QP
// without its access flags or MTU cannot be modeled. Optional values rdma
// does not print (receive queue, max_dest_rd_atomic, min_rnr_timer,
// q_key) are left out and listed in the notes.

import (
	"bytes"
	"encoding/json"
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

// RdmaViews is the output of `rdma -j resource show mr`, `... show qp`
// and, optionally, `... show pd`, each with the name of the file it came
// from (for messages). Each is a JSON array of entries, or several arrays
// one after the other.
type RdmaViews struct {
	MR, QP, PD             []byte // PD may be nil
	MRFile, QPFile, PDFile string
}

// RdmaSelect says which resources of the rdma output to import and
// supplies what rdma does not print.
type RdmaSelect struct {
	// Dev is the RDMA device whose resources are imported (rdma's
	// "ifname", e.g. "rxe1"). Required.
	Dev string
	// PID, when not 0, imports only the resources of that process.
	PID uint32

	// What rdma does not print. The zero value of each means "not
	// supplied": the import reports it missing where the MPT file needs
	// it.

	// Responder is the device's address (IP address, GID or LID), the MPT
	// file's responder.address.
	Responder decode.Node
	// Profile is the MPT file's profile ("" leaves it out: ibta).
	Profile string
	// MTU is the path MTU of every QP (256, 512, 1024, 2048 or 4096).
	MTU int
	// QPAccess is the access flags of every RC, UC and XRC QP (UD QPs
	// have none), when HasQPAccess.
	QPAccess    hca.Access
	HasQPAccess bool
	// Remote is the peer's address, for "remote" of every connected QP
	// whose remote QPN rdma printed.
	Remote decode.Node
	// MRs gives the VA and access flags of MRs, by lkey (or by rkey).
	MRs map[uint32]RdmaMR
	// RemoteOnly leaves out the MRs rdma shows with rkey 0: on rxe those
	// have no remote access, so no request can name them.
	RemoteOnly bool
}

// RdmaMR is what rdma does not print about one MR.
type RdmaMR struct {
	VA        uint64
	HasVA     bool
	Access    hca.Access
	HasAccess bool
}

// RdmaGapKind is the kind of value an MPT file needs that neither the rdma
// output nor RdmaSelect gave.
type RdmaGapKind uint8

// Missing values.
const (
	GapResponder RdmaGapKind = iota + 1 // the device's address
	GapMTU                              // a QP's path MTU
	GapQPAccess                         // a QP's access flags
	GapMRVA                             // an MR's VA: rdma printed no iova
	GapMRAccess                         // an MR's access flags
	GapMRKeys                           // an MR's rkey/lkey: rdma printed none (it needs CAP_NET_ADMIN)
)

// RdmaGap is one value the MPT file needs that the import could not fill.
type RdmaGap struct {
	Kind RdmaGapKind
	Path string // where in the MPT file: "$.mrs[0].va"
	QPN  uint32 // GapMTU, GapQPAccess
	LKey uint32 // GapMRVA, GapMRAccess: the MR (0 with GapMRKeys)
	RKey uint32
	MRN  uint32 // the kernel's MR number
	Msg  string // what is missing and why, for humans
}

// RdmaImport is the result of an import: the MPT file as far as the rdma
// output and RdmaSelect fill it, what it still lacks, and notes on what was
// left out or taken from where.
type RdmaImport struct {
	// File holds every value that was found. Where Missing names a value,
	// File holds zero: it is not a valid MPT file until Missing is empty.
	File    *File
	Missing []RdmaGap
	Notes   []string
	// TakenAt is when the snapshot was taken (wrapper files only).
	TakenAt time.Time
}

// Err returns nil when the import is complete, else an
// *RdmaIncompleteError listing every missing value.
func (r *RdmaImport) Err() error {
	if len(r.Missing) == 0 {
		return nil
	}
	return &RdmaIncompleteError{Gaps: r.Missing}
}

// RdmaIncompleteError says which values an MPT file needs that the rdma
// output does not have.
type RdmaIncompleteError struct {
	Gaps []RdmaGap
}

func (e *RdmaIncompleteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the rdma output lacks %d value(s) an MPT file needs; supply them:", len(e.Gaps))
	for _, g := range e.Gaps {
		b.WriteString("\n  " + g.Path + ": " + g.Msg)
	}
	return b.String()
}

// RdmaError is a problem in rdma's JSON output: which file, where (1-based
// line and byte column, 0 when unknown), the JSON path of the value and
// what is wrong.
type RdmaError struct {
	File         string
	Line, Column int
	Path         string
	Msg          string
}

func (e *RdmaError) Error() string { return fileError(e.File, e.Line, e.Column, e.Path, e.Msg) }

// LoadRdmaRes reads a file holding rdma resource snapshots (see
// ParseRdmaResFile) and imports one of them.
func LoadRdmaRes(path, snapshot string, sel RdmaSelect) (*RdmaImport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRdmaResFile(path, data, snapshot, sel)
}

// ParseRdmaResFile imports one snapshot of a file that holds the three
// views together: either {"before": S, "after": S} (the .rdma-res.json
// files of testdata/rxe) or a single S, where S is {"taken_at": seconds,
// "mr": [...], "qp": [...], "pd": [...], "mw": ...} with each view the
// parsed output of `rdma -j resource show <view>`, or an object
// {"error": ...} when that command failed. snapshot picks "before" (the
// default when "") or "after"; it must be "" for a single S.
func ParseRdmaResFile(name string, data []byte, snapshot string, sel RdmaSelect) (*RdmaImport, error) {
	w := &walker{file: name, data: data}
	root, err := w.parse()
	if err != nil {
		return nil, rdmaFromMPT(err)
	}
	if root.kind != '{' {
		return nil, rdmaErrAt(w, root.off, "$", "want an object with \"before\"/\"after\" snapshots or with \"mr\" and \"qp\" views, found %s", kindName(root))
	}
	path := "$"
	snap := root
	_, hasBefore := root.obj["before"]
	_, hasAfter := root.obj["after"]
	switch {
	case hasBefore || hasAfter:
		if snapshot == "" {
			snapshot = "before"
		}
		if snapshot != "before" && snapshot != "after" {
			return nil, &RdmaError{File: name, Msg: fmt.Sprintf("snapshot %q: want before or after", snapshot)}
		}
		s, ok := root.obj[snapshot]
		if !ok {
			return nil, rdmaErrAt(w, root.off, "$."+snapshot, "missing: the file has no %q snapshot", snapshot)
		}
		path, snap = "$."+snapshot, s
		if snap.kind != '{' {
			return nil, rdmaErrAt(w, snap.off, path, "want an object with the views (\"mr\", \"qp\", \"pd\"), found %s", kindName(snap))
		}
	case snapshot != "":
		return nil, rdmaErrAt(w, root.off, "$", "snapshot %q: the file holds a single snapshot (no \"before\"/\"after\"); leave the snapshot out", snapshot)
	}
	_, hasMR := snap.obj["mr"]
	_, hasQPs := snap.obj["qps"]
	if !hasMR && hasQPs {
		return nil, rdmaErrAt(w, snap.off, path, "this is an MPT file, not rdma output: use it as it is (rocetap mpt check FILE)")
	}
	imp := &RdmaImport{}
	if t, ok := snap.obj["taken_at"]; ok && t.kind == '0' {
		if at, err := w.postedAt(t, path+".taken_at"); err == nil {
			imp.TakenAt = at
		}
	}
	var views [3]rdmaView
	for i, v := range []string{"mr", "qp", "pd"} {
		n, ok := snap.obj[v]
		if !ok {
			if v == "pd" {
				continue
			}
			return nil, rdmaErrAt(w, snap.off, path+"."+v, "missing: the snapshot needs the output of `rdma -j resource show %s`", v)
		}
		views[i] = rdmaView{w: w, nodes: []*node{n}, path: path + "." + v, what: v}
	}
	if mw, ok := snap.obj["mw"]; ok {
		imp.Notes = append(imp.Notes, "memory windows: not imported ("+rdmaMWNote(mw)+"); add bound windows to \"mws\" by hand")
	}
	return importRdma(imp, views[0], views[1], views[2], sel)
}

func rdmaMWNote(n *node) string {
	if n.kind == '{' {
		if e, ok := n.obj["error"]; ok && e.kind == '"' {
			return "the mw view failed: " + strconv.Quote(strings.TrimSpace(e.text))
		}
	}
	return "rdma shows no binding of a window to its MR"
}

// ParseRdmaRes imports the output of `rdma -j resource show mr`, `... qp`
// and (optionally) `... pd` for the device sel.Dev. Problems in the input
// (not JSON, wrong types, no such device) are returned as *RdmaError;
// values the MPT file needs that neither the input nor sel gives are
// listed in the result's Missing.
func ParseRdmaRes(v RdmaViews, sel RdmaSelect) (*RdmaImport, error) {
	var views [3]rdmaView
	for i, in := range []struct {
		data       []byte
		file, what string
	}{{v.MR, v.MRFile, "mr"}, {v.QP, v.QPFile, "qp"}, {v.PD, v.PDFile, "pd"}} {
		if in.data == nil {
			if in.what == "pd" {
				continue
			}
			return nil, &RdmaError{File: in.file, Msg: fmt.Sprintf("no %s view: give the output of `rdma -j resource show %s`", in.what, in.what)}
		}
		w, nodes, err := rdmaParseArrays(in.file, in.data)
		if err != nil {
			return nil, err
		}
		views[i] = rdmaView{w: w, nodes: nodes, path: "$", what: in.what}
	}
	return importRdma(&RdmaImport{}, views[0], views[1], views[2], sel)
}

// rdmaParseArrays parses one view: a JSON value, or several one after the
// other (older iproute2 prints one array per device).
func rdmaParseArrays(file string, data []byte) (*walker, []*node, error) {
	w := &walker{file: file, data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &RdmaError{File: file, Msg: "empty; want the JSON output of `rdma -j resource show ...`"}
	}
	w.dec = json.NewDecoder(bytes.NewReader(data))
	w.dec.UseNumber()
	var nodes []*node
	for w.dec.More() {
		n, err := w.value("$", 0)
		if err != nil {
			return nil, nil, rdmaFromMPT(err)
		}
		nodes = append(nodes, n)
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return nil, nil, rdmaErrAt(w, w.skip(int(w.dec.InputOffset())), "", "unexpected data: want JSON arrays of rdma resource entries")
	}
	return w, nodes, nil
}

// rdmaFromMPT turns the JSON walker's *Error into an *RdmaError.
func rdmaFromMPT(err error) error {
	var me *Error
	if errors.As(err, &me) {
		return &RdmaError{File: me.File, Line: me.Line, Column: me.Column, Path: me.Path, Msg: me.Msg}
	}
	return err
}

func rdmaErrAt(w *walker, off int, path, format string, args ...any) error {
	e := &RdmaError{File: w.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if off >= 0 {
		e.Line, e.Column = lineCol(w.data, off)
	}
	return e
}

// rdmaView is one view's JSON: the top-level values (arrays of entries),
// the walker that knows their positions, and the path of the first.
type rdmaView struct {
	w     *walker
	nodes []*node
	path  string
	what  string // "mr", "qp", "pd"
}

// rdmaEntry is one resource entry (an object) of a view.
type rdmaEntry struct {
	w    *walker
	n    *node
	path string
}

// entries returns the objects of the view; nil for an absent view.
func (v *rdmaView) entries() ([]rdmaEntry, error) {
	if v.w == nil {
		return nil, nil
	}
	var out []rdmaEntry
	for k, n := range v.nodes {
		path := v.path
		if len(v.nodes) > 1 {
			path = fmt.Sprintf("%s(array %d)", v.path, k+1)
		}
		if n.kind == '{' {
			if e, ok := n.obj["error"]; ok {
				msg := kindName(e)
				if e.kind == '"' {
					msg = strconv.Quote(strings.TrimSpace(e.text))
				}
				return nil, rdmaErrAt(v.w, n.off, path, "the %s view is an error record (%s), not rdma's output: record `rdma -j resource show %s` again", v.what, msg, v.what)
			}
		}
		if n.kind != '[' {
			return nil, rdmaErrAt(v.w, n.off, path, "want the JSON array `rdma -j resource show %s` prints, found %s", v.what, kindName(n))
		}
		for i, e := range n.arr {
			p := fmt.Sprintf("%s[%d]", path, i)
			if e.kind != '{' {
				return nil, rdmaErrAt(v.w, e.off, p, "want an object (one %s), found %s", v.what, kindName(e))
			}
			out = append(out, rdmaEntry{v.w, e, p})
		}
	}
	return out, nil
}

func (e rdmaEntry) errf(key, format string, args ...any) error {
	n := e.n
	path := e.path
	if key != "" {
		path += "." + key
		if m, ok := e.n.obj[key]; ok {
			n = m
		}
	}
	return rdmaErrAt(e.w, n.off, path, format, args...)
}

func (e rdmaEntry) has(key string) bool { _, ok := e.n.obj[key]; return ok }

// str returns a string value; ok false when the key is absent.
func (e rdmaEntry) str(key string) (string, bool, error) {
	n, ok := e.n.obj[key]
	if !ok {
		return "", false, nil
	}
	if n.kind != '"' {
		return "", false, e.errf(key, "want a string, found %s", kindName(n))
	}
	return n.text, true, nil
}

// num returns an unsigned integer printed as a JSON number (or a string of
// decimal digits) that fits bits.
func (e rdmaEntry) num(key string, bits int) (uint64, bool, error) {
	n, ok := e.n.obj[key]
	if !ok {
		return 0, false, nil
	}
	if n.kind != '0' && n.kind != '"' {
		return 0, false, e.errf(key, "want a number, found %s", kindName(n))
	}
	v, err := strconv.ParseUint(n.text, 10, 64)
	if err != nil {
		return 0, false, e.errf(key, "%s is not a non-negative integer", strconv.Quote(n.text))
	}
	if bits < 64 && v>>bits != 0 {
		return 0, false, e.errf(key, "%d does not fit %d bits", v, bits)
	}
	return v, true, nil
}

// hex returns a value rdma prints as hex digits without 0x (rkey, lkey,
// iova); a leading 0x is accepted, and a JSON number is taken as decimal.
func (e rdmaEntry) hex(key string, bits int) (uint64, bool, error) {
	n, ok := e.n.obj[key]
	if !ok {
		return 0, false, nil
	}
	var v uint64
	var err error
	switch n.kind {
	case '"':
		s := strings.TrimPrefix(strings.TrimPrefix(n.text, "0x"), "0X")
		v, err = strconv.ParseUint(s, 16, 64)
	case '0':
		v, err = strconv.ParseUint(n.text, 10, 64)
	default:
		return 0, false, e.errf(key, "want a hex string (rdma prints e.g. \"9d2\"), found %s", kindName(n))
	}
	if err != nil {
		return 0, false, e.errf(key, "%s is not a hex number (rdma prints keys as hex digits, e.g. \"9d2\")", strconv.Quote(n.text))
	}
	if bits < 64 && v>>bits != 0 {
		return 0, false, e.errf(key, "%#x does not fit %d bits", v, bits)
	}
	return v, true, nil
}

// selected reports whether the entry belongs to the device (and process)
// sel names; devs collects the device names seen.
func (e rdmaEntry) selected(sel *RdmaSelect, devs map[string]bool) (bool, error) {
	dev, ok, err := e.str("ifname")
	if err != nil {
		return false, err
	}
	if !ok {
		return false, e.errf("", "no \"ifname\": every entry of rdma's output names its device")
	}
	devs[dev] = true
	if dev != sel.Dev {
		return false, nil
	}
	if sel.PID != 0 {
		pid, ok, err := e.num("pid", 32)
		if err != nil || !ok || uint32(pid) != sel.PID {
			return false, err
		}
	}
	return true, nil
}

// rdmaQPType maps rdma's QP type to the MPT file's; ok is false for the
// types an MPT file has no place for.
func rdmaQPType(t string) (decode.Transport, bool) {
	switch t {
	case "RC", "UC", "UD":
		return decode.TransportByName(t)
	case "XRC_TGT":
		return decode.TransportXRC, true
	}
	return 0, false
}

// rdmaQPStates are rdma's QP state names in the order of the verbs states.
var rdmaQPStates = []string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}

func importRdma(imp *RdmaImport, mrv, qpv, pdv rdmaView, sel RdmaSelect) (*RdmaImport, error) {
	if sel.Dev == "" {
		return nil, errors.New("no device: name the RDMA device whose resources to import (rdma's \"ifname\", e.g. rxe1)")
	}
	if sel.MTU != 0 {
		switch sel.MTU {
		case 256, 512, 1024, 2048, 4096:
		default:
			return nil, fmt.Errorf("MTU %d is not an InfiniBand MTU (256, 512, 1024, 2048 or 4096)", sel.MTU)
		}
	}
	if sel.Profile != "" {
		if _, err := hca.ProfileByName(sel.Profile); err != nil {
			return nil, err
		}
	}
	f := &File{Version: 1, Profile: "ibta", Config: hca.Config{Responder: sel.Responder}}
	if sel.Profile != "" {
		f.Profile = strings.ToLower(sel.Profile)
	}
	imp.File = f
	devs := map[string]bool{}
	pdRefs := map[uint32]bool{}
	var pdOrder []uint32
	ref := func(pd uint32) {
		if !pdRefs[pd] {
			pdRefs[pd] = true
			pdOrder = append(pdOrder, pd)
		}
	}
	gap := func(g RdmaGap) { imp.Missing = append(imp.Missing, g) }

	if !sel.Responder.IsValid() {
		gap(RdmaGap{Kind: GapResponder, Path: "$.responder.address",
			Msg: "the address of " + sel.Dev + " (rdma's resource views print no addresses): give the IPv4/IPv6 address or GID of its port, or its LID (lid:N)"})
	}

	// QPs.
	qps, err := qpv.entries()
	if err != nil {
		return nil, err
	}
	var skipped []string
	var inInit, inErr, noRemote, noPSN, noQKey, rcLike []string
	seenQPN := map[uint32]string{}
	for _, e := range qps {
		ok, err := e.selected(&sel, devs)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		lqpn, has, err := e.num("lqpn", 24)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"lqpn\": every QP entry of `rdma resource show qp` has one")
		}
		qpn := uint32(lqpn)
		typ, has, err := e.str("type")
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"type\" for QP %#06x", qpn)
		}
		mtype, ok := rdmaQPType(typ)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%#06x (%s)", qpn, typ))
			continue
		}
		if prev, dup := seenQPN[qpn]; dup {
			return nil, e.errf("lqpn", "QP %#06x of %s is also %s: one snapshot lists each QP once", qpn, sel.Dev, prev)
		}
		seenQPN[qpn] = e.path
		state, _, err := e.str("state")
		if err != nil {
			return nil, err
		}
		pdn, has, err := e.num("pdn", 32)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"pdn\" for QP %#06x: an MPT file needs every QP's PD (iproute2 prints pdn for user QPs)", qpn)
		}
		ref(uint32(pdn))
		i := len(f.QPs)
		qp := hca.QPConfig{QPN: qpn, PD: uint32(pdn), Type: mtype}
		path := fmt.Sprintf("$.qps[%d]", i)
		name := fmt.Sprintf("QP %#06x", qpn)

		// MTU: rdma's QP view has no path MTU (iproute2 6.1); a
		// "path-mtu" key, should a version print one, is taken.
		switch {
		case sel.MTU != 0:
			qp.MTU = sel.MTU
		case e.has("path-mtu"):
			m, _, err := e.num("path-mtu", 32)
			if err != nil {
				return nil, err
			}
			switch m {
			case 256, 512, 1024, 2048, 4096:
				qp.MTU = int(m)
			default:
				return nil, e.errf("path-mtu", "%d is not an InfiniBand MTU (256, 512, 1024, 2048 or 4096)", m)
			}
		default:
			gap(RdmaGap{Kind: GapMTU, Path: path + ".mtu", QPN: qpn,
				Msg: "the path MTU of " + name + " (rdma prints none; it is the port's active MTU, e.g. 1024 for Ethernet MTU 1500)"})
		}

		// Access: verbs UD QPs have no access flags.
		switch {
		case mtype == decode.TransportUD:
		case sel.HasQPAccess:
			qp.Access = sel.QPAccess
		default:
			gap(RdmaGap{Kind: GapQPAccess, Path: path + ".access", QPN: qpn,
				Msg: "the access flags of " + name + " (rdma prints no qp_access_flags)"})
		}

		st := slices.Index(rdmaQPStates, state)
		if mtype != decode.TransportUD {
			rcLike = append(rcLike, fmt.Sprintf("%#06x", qpn))
			switch {
			case st >= 0 && st < 2:
				// Never reached RTR: no expected PSN or peer was
				// applied; the model keeps such a QP in INIT and
				// drops its packets, as the HCA does.
				inInit = append(inInit, fmt.Sprintf("%#06x (%s)", qpn, state))
			default:
				if st == len(rdmaQPStates)-1 {
					inErr = append(inErr, fmt.Sprintf("%#06x", qpn))
				}
				psn, has, err := e.num("rq-psn", 24)
				if err != nil {
					return nil, err
				}
				if has {
					qp.ExpectedPSN, qp.HasExpectedPSN = decode.PSN(psn), true
				} else {
					noPSN = append(noPSN, fmt.Sprintf("%#06x", qpn))
				}
				rqpn, has, err := e.num("rqpn", 24)
				if err != nil {
					return nil, err
				}
				switch {
				case has && sel.Remote.IsValid():
					qp.Remote = &hca.Peer{Addr: sel.Remote, QPN: uint32(rqpn)}
				case has:
					noRemote = append(noRemote, fmt.Sprintf("%#06x (peer QPN %#06x)", qpn, rqpn))
				}
			}
		} else {
			noQKey = append(noQKey, fmt.Sprintf("%#06x", qpn))
		}
		f.QPs = append(f.QPs, qp)
	}

	// MRs.
	mrs, err := mrv.entries()
	if err != nil {
		return nil, err
	}
	var localSkipped, fromIOVA []string
	for _, e := range mrs {
		ok, err := e.selected(&sel, devs)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		mrn, _, err := e.num("mrn", 32)
		if err != nil {
			return nil, err
		}
		rkey, hasR, err := e.hex("rkey", 32)
		if err != nil {
			return nil, err
		}
		lkey, hasL, err := e.hex("lkey", 32)
		if err != nil {
			return nil, err
		}
		length, has, err := e.num("mrlen", 64)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"mrlen\": every MR entry of `rdma resource show mr` has one")
		}
		pdn, has, err := e.num("pdn", 32)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"pdn\" for MR %d: an MPT file needs every MR's PD", mrn)
		}
		name := fmt.Sprintf("MR mrn %d", mrn)
		if hasL {
			name = fmt.Sprintf("MR lkey %#x (mrn %d)", lkey, mrn)
		}
		if sel.RemoteOnly && hasR && rkey == 0 {
			localSkipped = append(localSkipped, name)
			continue
		}
		ref(uint32(pdn))
		i := len(f.MRs)
		path := fmt.Sprintf("$.mrs[%d]", i)
		mr := hca.MRConfig{RKey: uint32(rkey), LKey: uint32(lkey), Length: length, PD: uint32(pdn)}
		if !hasR || !hasL {
			// Without its keys the MR cannot be named to supply its VA
			// and access flags: those wait for a run as root.
			gap(RdmaGap{Kind: GapMRKeys, Path: path + ".rkey", MRN: uint32(mrn),
				Msg: "the rkey and lkey of " + name + " (rdma prints keys only to a user with CAP_NET_ADMIN: run it as root; then its VA and access flags can be given)"})
			f.MRs = append(f.MRs, mr)
			continue
		}
		var fill RdmaMR
		var hasFill bool
		if hasL {
			fill, hasFill = sel.MRs[uint32(lkey)]
		}
		if !hasFill && hasR && rkey != 0 {
			fill, hasFill = sel.MRs[uint32(rkey)]
		}
		iova, hasIOVA, err := e.hex("iova", 64)
		if err != nil {
			return nil, err
		}
		switch {
		case hasFill && fill.HasVA:
			mr.VA = fill.VA
		case hasIOVA:
			mr.VA = iova
			fromIOVA = append(fromIOVA, name)
		default:
			gap(RdmaGap{Kind: GapMRVA, Path: path + ".va", LKey: uint32(lkey), RKey: uint32(rkey), MRN: uint32(mrn),
				Msg: fmt.Sprintf("the VA of %s, %d bytes (this kernel prints no iova): the address the application registered", name, length)})
		}
		if hasFill && fill.HasAccess {
			mr.Access = fill.Access
		} else {
			hint := ""
			if hasR && rkey == 0 {
				hint = "; rkey 0: on rxe an MR without remote access"
			}
			gap(RdmaGap{Kind: GapMRAccess, Path: path + ".access", LKey: uint32(lkey), RKey: uint32(rkey), MRN: uint32(mrn),
				Msg: "the access flags of " + name + " (rdma prints none" + hint + ")"})
		}
		if mr.Length > 0 && mr.VA+(mr.Length-1) < mr.VA {
			return nil, e.errf("mrlen", "VA %#x + length %d of %s wraps past 2^64", mr.VA, mr.Length, name)
		}
		f.MRs = append(f.MRs, mr)
	}

	// PDs: the ones the imported QPs and MRs use.
	pds, err := pdv.entries()
	if err != nil {
		return nil, err
	}
	inView := map[uint32]bool{}
	var unused []string
	for _, e := range pds {
		ok, err := e.selected(&sel, devs)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		pdn, has, err := e.num("pdn", 32)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, e.errf("", "no \"pdn\": every PD entry of `rdma resource show pd` has one")
		}
		inView[uint32(pdn)] = true
		if !pdRefs[uint32(pdn)] {
			who, _, _ := e.str("comm")
			unused = append(unused, fmt.Sprintf("%d (%s)", pdn, who))
		}
	}
	if !devs[sel.Dev] {
		names := slices.Sorted(maps.Keys(devs))
		if len(names) == 0 {
			return nil, errors.New("the rdma output lists no resources at all")
		}
		return nil, fmt.Errorf("no resource of device %q in the rdma output (devices: %s); name one of those", sel.Dev, strings.Join(names, ", "))
	}
	if len(f.QPs) == 0 && len(f.MRs) == 0 {
		msg := fmt.Sprintf("device %q has no QP or MR an MPT file can hold in the rdma output", sel.Dev)
		if sel.PID != 0 {
			msg = fmt.Sprintf("device %q has no QP or MR of process %d in the rdma output (leave the process out to see every process's)", sel.Dev, sel.PID)
		}
		return nil, errors.New(msg)
	}
	slices.Sort(pdOrder)
	var notInView []string
	for _, pd := range pdOrder {
		f.PDs = append(f.PDs, hca.PDConfig{ID: pd})
		if pdv.w != nil && !inView[pd] {
			notInView = append(notInView, strconv.FormatUint(uint64(pd), 10))
		}
	}

	// Notes: where values came from and what was left out.
	note := func(format string, args ...any) { imp.Notes = append(imp.Notes, fmt.Sprintf(format, args...)) }
	if !imp.TakenAt.IsZero() {
		note("snapshot taken at %s", imp.TakenAt.Format(time.RFC3339Nano))
	}
	who := sel.Dev
	if sel.PID != 0 {
		who += fmt.Sprintf(", process %d", sel.PID)
	}
	note("imported from %s: %d QP(s), %d MR(s), %d PD(s)", who, len(f.QPs), len(f.MRs), len(f.PDs))
	if len(f.PDs) > 0 {
		note("PD ids are the kernel's pdn (not the application's ibv_pd handle); only which QPs and MRs share a PD matters")
	}
	if len(skipped) > 0 {
		note("QPs left out (no MPT QP type; GSI/SMI carry MADs, XRC_INI only sends): %s", strings.Join(skipped, ", "))
	}
	if len(inInit) > 0 {
		note("QPs that never reached RTR, left without expected_psn and remote so the model drops their packets as the HCA does: %s", strings.Join(inInit, ", "))
	}
	if len(inErr) > 0 {
		note("QPs in the error state when the snapshot was taken (the MPT format has no QP state; they are modeled as ready): %s", strings.Join(inErr, ", "))
	}
	if len(noPSN) > 0 {
		note("QPs without rq-psn: expected_psn left out (the model takes the first request's PSN): %s", strings.Join(noPSN, ", "))
	}
	if len(noRemote) > 0 {
		note("remote left out (rdma prints the peer's QPN but not its address; supply it to fill remote): %s", strings.Join(noRemote, ", "))
	}
	if len(rcLike) > 0 {
		note("not printed by rdma, left out: max_dest_rd_atomic and min_rnr_timer of QPs %s (the model allows 16 outstanding READs/ATOMICs and sends RNR NAKs with timer 0)", strings.Join(rcLike, ", "))
	}
	if len(f.QPs) > 0 {
		note("not printed by rdma, left out: the receive queue (recv, rq_depth): the model finds a receive for every SEND")
	}
	if len(noQKey) > 0 {
		note("not printed by rdma, left out: the q_key of UD QPs %s (the model accepts every Q_Key)", strings.Join(noQKey, ", "))
	}
	if len(fromIOVA) > 0 {
		note("VA from rdma's iova: %s", strings.Join(fromIOVA, ", "))
	}
	if len(localSkipped) > 0 {
		note("MRs with rkey 0 left out (no remote access on rxe, so no request can name them): %s", strings.Join(localSkipped, ", "))
	}
	if len(unused) > 0 {
		note("PDs no imported QP or MR uses, left out: %s", strings.Join(unused, ", "))
	}
	if len(notInView) > 0 {
		note("PDs used by QPs or MRs but missing from the pd view (created between the two commands?): %s", strings.Join(notInView, ", "))
	}
	if f.Profile == "ibta" {
		note("profile: ibta (rdma does not say which driver answers; rxe for Soft-RoCE)")
	}
	return imp, nil
}
