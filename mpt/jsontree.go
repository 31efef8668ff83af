package mpt

// A JSON tree with positions, read through encoding/json's tokens: what
// rdma's output (rdmares.go) is read with, and what MPT files were read
// with before the streaming loader (load.go); load_ref_test.go keeps that
// loader as the reference the streaming one must agree with.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
)

// node is a JSON value with the byte offset where it starts, so that
// errors can give a line and column as well as the path.
type node struct {
	kind byte // '{' object, '[' array, '"' string, '0' number, 't' bool, 'n' null
	off  int
	text string   // string value, or the number as written
	keys []string // object keys in file order
	koff []int    // and where each starts
	obj  map[string]*node
	arr  []*node
}

// maxDepth bounds nesting; real MPT files nest 5 deep.
const maxDepth = 32

type walker struct {
	file string
	data []byte
	dec  *json.Decoder
}

func (w *walker) errAt(off int, path, format string, args ...any) error {
	e := &Error{File: w.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if off >= 0 {
		e.Line, e.Column = lineCol(w.data, off)
	}
	return e
}

func (w *walker) errf(n *node, path, format string, args ...any) error {
	return w.errAt(n.off, path, format, args...)
}

func lineCol(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, off - start + 1
}

func (w *walker) parse() (*node, error) {
	if len(bytes.TrimSpace(w.data)) == 0 {
		return nil, w.errAt(-1, "", "empty file; an MPT file is a JSON object (rocetap help mpt-format describes it)")
	}
	w.dec = json.NewDecoder(bytes.NewReader(w.data))
	w.dec.UseNumber()
	root, err := w.value("$", 0)
	if err != nil {
		return nil, err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return nil, w.errAt(w.skip(int(w.dec.InputOffset())), "", "data after the top-level object")
	}
	return root, nil
}

// skip returns the offset of the next token at or after off.
func (w *walker) skip(off int) int {
	for off < len(w.data) && strings.IndexByte(" \t\r\n,:", w.data[off]) >= 0 {
		off++
	}
	return off
}

func (w *walker) token() (json.Token, int, error) {
	off := w.skip(int(w.dec.InputOffset()))
	tok, err := w.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, 0, w.errAt(int(se.Offset), "", "JSON syntax error: %v", se)
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, 0, w.errAt(len(w.data), "", "JSON syntax error: unexpected end of file")
		}
		return nil, 0, w.errAt(off, "", "JSON syntax error: %v", err)
	}
	return tok, off, nil
}

func (w *walker) value(path string, depth int) (*node, error) {
	tok, off, err := w.token()
	if err != nil {
		return nil, err
	}
	n := &node{off: off}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, w.errAt(off, path, "nested more than %d deep", maxDepth)
		}
		switch t {
		case '{':
			n.kind, n.obj = '{', map[string]*node{}
			for w.dec.More() {
				kt, koff, err := w.token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string) // the decoder only returns strings as keys
				kpath := path + "." + key
				if _, dup := n.obj[key]; dup {
					return nil, w.errAt(koff, kpath, "key %q appears twice in the same object", key)
				}
				v, err := w.value(kpath, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.koff = append(n.koff, koff)
				n.obj[key] = v
			}
		case '[':
			n.kind = '['
			for w.dec.More() {
				v, err := w.value(fmt.Sprintf("%s[%d]", path, len(n.arr)), depth+1)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		}
		if _, _, err := w.token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.kind, n.text = '"', t
	case json.Number:
		n.kind, n.text = '0', string(t)
	case bool:
		n.kind = 't'
	case nil:
		n.kind = 'n'
	}
	return n, nil
}

func kindName(n *node) string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return fmt.Sprintf("the string %q", n.text)
	case '0':
		return "the number " + n.text
	case 't':
		return "true/false"
	}
	return "null"
}

// postedAt reads seconds since the epoch exactly (a float64 would lose the
// microseconds' last digits).
func (w *walker) postedAt(n *node, path string) (time.Time, error) {
	if n.kind != '0' {
		return time.Time{}, w.errf(n, path, "want a number of seconds since the epoch (e.g. 1763779200.031), found %s", kindName(n))
	}
	t, msg := epochTime(n.text)
	if msg != "" {
		return time.Time{}, w.errf(n, path, "%s", msg)
	}
	return t, nil
}

// epochTime reads a JSON number of seconds since the epoch exactly, or
// says what is wrong with it.
func epochTime(text string) (time.Time, string) {
	r, ok := new(big.Rat).SetString(text)
	if !ok || r.Sign() < 0 {
		return time.Time{}, text + " is not a time in seconds since the epoch"
	}
	sec, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if !sec.IsInt64() || sec.Int64() > 1<<40 {
		return time.Time{}, text + " seconds since the epoch is too far in the future"
	}
	// nanoseconds = round(rem * 1e9 / denom)
	ns := new(big.Int).Mul(rem, big.NewInt(1e9))
	ns.Mul(ns, big.NewInt(2)).Add(ns, r.Denom()).Quo(ns, new(big.Int).Mul(r.Denom(), big.NewInt(2)))
	return time.Unix(sec.Int64(), ns.Int64()).UTC(), ""
}

// firstError returns the error parse would return for data, reading it
// as parse does but without building the tree: the streaming MPT loader
// asks it for the message of a JSON problem it found (the texts are
// encoding/json's), at the cost of the file in memory, not its tree.
// nil means parse finds nothing wrong.
func (w *walker) firstError() error {
	if len(bytes.TrimSpace(w.data)) == 0 {
		return w.errAt(-1, "", "empty file; an MPT file is a JSON object (rocetap help mpt-format describes it)")
	}
	w.dec = json.NewDecoder(bytes.NewReader(w.data))
	w.dec.UseNumber()
	if err := w.scan("$", 0); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return w.errAt(w.skip(int(w.dec.InputOffset())), "", "data after the top-level object")
	}
	return nil
}

// scan is value without the tree.
func (w *walker) scan(path string, depth int) error {
	tok, off, err := w.token()
	if err != nil {
		return err
	}
	t, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return w.errAt(off, path, "nested more than %d deep", maxDepth)
	}
	switch t {
	case '{':
		seen := map[string]bool{}
		for w.dec.More() {
			kt, koff, err := w.token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			kpath := path + "." + key
			if seen[key] {
				return w.errAt(koff, kpath, "key %q appears twice in the same object", key)
			}
			seen[key] = true
			if err := w.scan(kpath, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; w.dec.More(); i++ {
			if err := w.scan(fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	_, _, err = w.token() // the closing delimiter
	return err
}
