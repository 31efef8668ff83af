package mpt

// The MPT file writer: the JSON of docs/mpt-format.md, laid out as the
// examples there are, so that files rocetap writes read like the ones
// people write by hand.

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// inlineWidth is the longest line an inline array of objects ("pds",
// "recv") may make before it is written one element per line.
const inlineWidth = 100

// Marshal returns the MPT file f in the JSON format of
// docs/mpt-format.md: QPNs and PSNs as "0x%06x", keys and Q_Keys as
// "0x%08x", VAs as "0x%016x", other integers as JSON numbers, posted_at as
// exact seconds since the epoch. Optional values whose Has* field is false
// are left out, as are "profile" when it is ibta (the default) and "mws"
// when there are none. For every f that Parse returns, Parse of the
// output gives f back.
//
// Marshal refuses what the format cannot say (an invalid responder
// address, access bits without a name, a receive posted before 1970); it
// does not check what Parse checks (references, uniqueness, MTU values):
// parse the output to validate it.
func Marshal(f *File) ([]byte, error) {
	if f == nil {
		return nil, fmt.Errorf("write MPT: no file")
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, fmt.Errorf("write MPT: version %d: only version 1 can be written", f.Version)
	}
	w := &writer{}
	w.line(0, "{")
	w.line(1, `"version": 1,`)
	addr, err := jsonAddr(f.Responder, "responder address")
	if err != nil {
		return nil, err
	}
	w.line(1, `"responder": { "address": `+addr+` },`)
	if f.Profile != "" && f.Profile != "ibta" {
		w.line(1, `"profile": `+strconv.Quote(f.Profile)+`,`)
	}
	pds := make([]string, len(f.PDs))
	for i, pd := range f.PDs {
		pds[i] = `{ "id": ` + strconv.FormatUint(uint64(pd.ID), 10) + ` }`
	}
	w.inlineArray(1, `"pds": `, pds, ",")

	if len(f.QPs) == 0 {
		w.line(1, `"qps": [],`)
	} else {
		w.line(1, `"qps": [`)
		for i := range f.QPs {
			if err := w.qp(&f.QPs[i], i); err != nil {
				return nil, err
			}
			w.close(2, "}", i < len(f.QPs)-1)
		}
		w.line(1, "],")
	}

	last := len(f.MWs) == 0
	if len(f.MRs) == 0 {
		w.close(1, `"mrs": []`, !last)
	} else {
		w.line(1, `"mrs": [`)
		for i, mr := range f.MRs {
			acc, err := jsonAccess(mr.Access, fmt.Sprintf("mrs[%d]", i))
			if err != nil {
				return nil, err
			}
			w.line(2, "{")
			w.line(3, `"rkey": `+jsonKey(mr.RKey)+`,`)
			w.line(3, `"lkey": `+jsonKey(mr.LKey)+`,`)
			w.line(3, `"va": `+jsonVA(mr.VA)+`,`)
			w.line(3, `"length": `+strconv.FormatUint(mr.Length, 10)+`,`)
			w.line(3, `"pd": `+strconv.FormatUint(uint64(mr.PD), 10)+`,`)
			w.line(3, `"access": `+acc)
			w.close(2, "}", i < len(f.MRs)-1)
		}
		w.close(1, "]", !last)
	}
	if !last {
		w.line(1, `"mws": [`)
		for i, mw := range f.MWs {
			acc, err := jsonAccess(mw.Access, fmt.Sprintf("mws[%d]", i))
			if err != nil {
				return nil, err
			}
			w.line(2, "{")
			w.line(3, `"rkey": `+jsonKey(mw.RKey)+`,`)
			w.line(3, `"type": `+strconv.Itoa(mw.Type)+`,`)
			w.line(3, `"va": `+jsonVA(mw.VA)+`,`)
			w.line(3, `"length": `+strconv.FormatUint(mw.Length, 10)+`,`)
			w.line(3, `"pd": `+strconv.FormatUint(uint64(mw.PD), 10)+`,`)
			w.line(3, `"access": `+acc+`,`)
			w.close(3, `"mr_rkey": `+jsonKey(mw.MRRKey), mw.HasQPN)
			if mw.HasQPN {
				w.line(3, `"qpn": `+jsonQPN(mw.QPN))
			}
			w.close(2, "}", i < len(f.MWs)-1)
		}
		w.line(1, "]")
	}
	w.line(0, "}")
	return w.b.Bytes(), nil
}

// Write writes f to out as Marshal formats it.
func Write(out io.Writer, f *File) error {
	b, err := Marshal(f)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

type writer struct{ b bytes.Buffer }

func (w *writer) line(indent int, s string) {
	for range indent {
		w.b.WriteString("  ")
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// close writes s, with a comma when more follows.
func (w *writer) close(indent int, s string, more bool) {
	if more {
		s += ","
	}
	w.line(indent, s)
}

// inlineArray writes key followed by the elements: on one line as
// `[ a, b ]` when it fits, else one element per line; end follows the
// closing bracket.
func (w *writer) inlineArray(indent int, key string, elems []string, end string) {
	if len(elems) == 0 {
		w.line(indent, key+"[]"+end)
		return
	}
	one := key + "[ " + strings.Join(elems, ", ") + " ]" + end
	if 2*indent+len(one) <= inlineWidth {
		w.line(indent, one)
		return
	}
	w.line(indent, key+"[")
	for i, e := range elems {
		w.close(indent+1, e, i < len(elems)-1)
	}
	w.line(indent, "]"+end)
}

func (w *writer) qp(q *hca.QPConfig, i int) error {
	acc, err := jsonAccess(q.Access, fmt.Sprintf("qps[%d]", i))
	if err != nil {
		return err
	}
	// The keys in the order of docs/mpt-format.md; every line but the
	// last gets a comma, so collect them first.
	var kv []string
	kv = append(kv,
		`"qpn": `+jsonQPN(q.QPN),
		`"pd": `+strconv.FormatUint(uint64(q.PD), 10),
		`"type": `+strconv.Quote(q.Type.String()),
		`"access": `+acc,
		`"mtu": `+strconv.Itoa(q.MTU))
	if q.HasExpectedPSN {
		kv = append(kv, `"expected_psn": `+jsonQPN(uint32(q.ExpectedPSN)))
	}
	if q.HasRQDepth {
		kv = append(kv, `"rq_depth": `+strconv.FormatUint(uint64(q.RQDepth), 10))
	}
	if q.HasMaxDestRdAtomic {
		kv = append(kv, `"max_dest_rd_atomic": `+strconv.Itoa(int(q.MaxDestRdAtomic)))
	}
	if q.HasMinRNRTimer {
		kv = append(kv, `"min_rnr_timer": `+strconv.Itoa(int(q.MinRNRTimer)))
	}
	if q.HasQKey {
		kv = append(kv, `"q_key": `+jsonKey(q.QKey))
	}
	if q.Remote != nil {
		addr, err := jsonAddr(q.Remote.Addr, fmt.Sprintf("qps[%d].remote address", i))
		if err != nil {
			return err
		}
		kv = append(kv, `"remote": { "address": `+addr+`, "qpn": `+jsonQPN(q.Remote.QPN)+` }`)
	}
	w.line(2, "{")
	for j, s := range kv {
		w.close(3, s, j < len(kv)-1 || q.HasRecv)
	}
	if q.HasRecv {
		recv := make([]string, len(q.Recv))
		for j, r := range q.Recv {
			s := `{ "length": ` + strconv.FormatUint(r.Length, 10)
			if r.HasPostedAt {
				t, err := jsonPostedAt(r)
				if err != nil {
					return fmt.Errorf("write MPT: qps[%d].recv[%d]: %w", i, j, err)
				}
				s += `, "posted_at": ` + t
			}
			recv[j] = s + " }"
		}
		w.inlineArray(3, `"recv": `, recv, "")
	}
	return nil
}

func jsonQPN(v uint32) string { return fmt.Sprintf(`"0x%06x"`, v) }
func jsonKey(v uint32) string { return fmt.Sprintf(`"0x%08x"`, v) }
func jsonVA(v uint64) string  { return fmt.Sprintf(`"0x%016x"`, v) }

// jsonAddr writes a node's address as Parse reads it: an IP address
// (an IPv4-mapped one as the IPv4 address), a GID or "lid:N".
func jsonAddr(a decode.Node, what string) (string, error) {
	if !a.IsValid() {
		return "", fmt.Errorf("write MPT: no %s (an MPT file needs an IPv4, IPv6 or GID address, or a LID)", what)
	}
	return strconv.Quote(a.String()), nil
}

// jsonAccess writes an access set as a JSON array of flag names in the
// order of the verbs values.
func jsonAccess(a hca.Access, where string) (string, error) {
	var names []string
	for _, flag := range hca.AccessFlags() {
		if a&flag != 0 {
			names = append(names, strconv.Quote(flag.String()))
			a &^= flag
		}
	}
	if a != 0 {
		return "", fmt.Errorf("write MPT: %s: access bits %#x have no name in the MPT format", where, uint32(a))
	}
	return "[" + strings.Join(names, ", ") + "]", nil
}

// jsonPostedAt writes a time as exact seconds since the epoch.
func jsonPostedAt(r hca.RecvWQE) (string, error) {
	sec, ns := r.PostedAt.Unix(), r.PostedAt.Nanosecond()
	if sec < 0 {
		return "", fmt.Errorf("posted_at %s is before 1970: the format counts seconds since the epoch", r.PostedAt)
	}
	s := strconv.FormatInt(sec, 10)
	if ns != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
	}
	return s, nil
}
