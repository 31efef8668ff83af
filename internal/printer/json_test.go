package printer

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestJSONMatchesReference: JSONPrinter, which appends known-safe values
// without escaping them and escapes the rest in place, prints every frame
// of the test captures, and copies of them with bytes turned into quotes,
// backslashes, control characters and invalid UTF-8, byte for byte as the
// straightforward printer it replaced (appendJSONRef, below), which
// escaped every value through a string.
func TestJSONMatchesReference(t *testing.T) {
	jp := NewJSONPrinter()
	rng := rand.New(rand.NewPCG(1, 2))
	nasty := []byte{'"', '\\', 0x01, 0x7f, 0xff, 0xc3, 0xa9}
	var p decode.Packet
	var got, want []byte
	frames := 0
	for _, path := range testCaptures(t) {
		for _, fr := range testcap.ReadPcap(t, path) {
			for variant := range 4 {
				data := fr.Data
				if variant > 0 {
					data = bytes.Clone(fr.Data)
					for i := 14; i < len(data); i++ {
						if rng.IntN(20) == 0 {
							data[i] = nasty[rng.IntN(len(nasty))]
						}
					}
				}
				p.Frame.Number, p.Frame.Len, p.Frame.Time = fr.Number, fr.Len, fr.Time
				decode.Decode(&p, data, decode.LinkType(fr.LinkType))
				got = jp.Append(got[:0], &p)
				want = appendJSONRef(want[:0], &p, nil)
				if !bytes.Equal(got, want) {
					t.Fatalf("frame %d of %s (variant %d):\n got %s\nwant %s", fr.Number, path, variant, got, want)
				}
				frames++
			}
		}
	}
	t.Logf("%d frames", frames)
}

// TestJSONPrinterDoesNotAllocate: printing a packet into a buffer with
// room allocates nothing.
func TestJSONPrinterDoesNotAllocate(t *testing.T) {
	ps := benchPackets(t)
	jp := NewJSONPrinter()
	buf := make([]byte, 0, 64<<10)
	for i := range ps {
		if n := testing.AllocsPerRun(20, func() { buf = jp.Append(buf[:0], &ps[i]) }); n != 0 {
			t.Fatalf("frame %d: %v allocations per packet", ps[i].Frame.Number, n)
		}
	}
}

func BenchmarkJSONPrinter(b *testing.B) {
	ps := benchPackets(b)
	jp := NewJSONPrinter()
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = jp.Append(buf[:0], &ps[i%len(ps)])
	}
}

// appendJSONRef is AppendJSON as it was before JSONPrinter: every value
// formatted into a scratch slice, then escaped byte by byte.
func appendJSONRef(dst []byte, p *decode.Packet, vals []decode.Value) []byte {
	dst = append(dst, `{"frame":{"number":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = append(dst, `,"time":"`...)
	dst = p.Frame.Time.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z")
	dst = append(dst, `","time_relative":"`...)
	dst = decode.AppendSeconds(dst, int64(p.Frame.TimeRelative), 9)
	dst = append(dst, `","len":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Len), 10)
	dst = append(dst, `,"cap_len":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.CapLen), 10)
	dst = append(dst, `,"linktype":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.LinkType), 10)
	dst = append(dst, `,"interface_id":`...)
	dst = strconv.AppendInt(dst, int64(p.Frame.Interface), 10)
	dst = append(dst, `},"summary":{"source":`...)
	tmp := appendAddr(nil, p, true)
	dst = appendJSONStringRef(dst, string(tmp))
	dst = append(dst, `,"destination":`...)
	tmp = appendAddr(tmp[:0], p, false)
	dst = appendJSONStringRef(dst, string(tmp))
	dst = append(dst, `,"protocol":`...)
	dst = appendJSONStringRef(dst, Protocol(p))
	dst = append(dst, `,"info":`...)
	tmp = AppendInfo(tmp[:0], p)
	dst = appendJSONStringRef(dst, string(tmp))
	dst = append(dst, `},"layers":{`...)
	var root *decode.Field
	firstLayer, firstField := true, true
	for _, f := range decode.Fields() {
		r := f
		for r.Parent != nil {
			r = r.Parent
		}
		if r == f {
			continue // protocols themselves are the keys
		}
		vals = f.Values(p, vals[:0])
		if len(vals) == 0 {
			continue
		}
		if r != root {
			if root != nil {
				dst = append(dst, '}')
			}
			if !firstLayer {
				dst = append(dst, ',')
			}
			firstLayer, firstField = false, true
			root = r
			dst = appendJSONStringRef(dst, r.Abbrev)
			dst = append(dst, ":{"...)
		}
		if !firstField {
			dst = append(dst, ',')
		}
		firstField = false
		dst = appendJSONStringRef(dst, f.Abbrev)
		dst = append(dst, ':')
		if len(vals) > 1 {
			dst = append(dst, '[')
		}
		for i, v := range vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			tmp = f.AppendValue(tmp[:0], v)
			dst = appendJSONStringRef(dst, string(tmp))
		}
		if len(vals) > 1 {
			dst = append(dst, ']')
		}
	}
	if root != nil {
		dst = append(dst, '}')
	}
	dst = append(dst, `},"flags":[`...)
	for i, n := range p.Flags.Names() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONStringRef(dst, n)
	}
	return append(dst, "]}"...)
}
func appendJSONStringRef(dst []byte, s string) []byte {
	const hx = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20 || c == 0x7F:
				dst = append(dst, '\\', 'u', '0', '0', hx[c>>4], hx[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
