package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// order is a byte order that can also append.
type order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// pkt is a packet with its data copied out of the reader's buffer.
type pkt struct {
	data []byte
	info PacketInfo
}

// readAll reads r to the end and returns the packets and the final error
// (nil for a clean io.EOF). It also checks the invariants every packet must
// satisfy.
func readAll(t testing.TB, r *Reader) ([]pkt, error) {
	t.Helper()
	var out []pkt
	for {
		data, info, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil
			}
			return out, err
		}
		if len(data) != info.CaptureLength {
			t.Fatalf("packet %d: len(data)=%d but CaptureLength=%d", len(out)+1, len(data), info.CaptureLength)
		}
		if r.PacketNumber() != len(out)+1 {
			t.Fatalf("PacketNumber()=%d after %d packets", r.PacketNumber(), len(out)+1)
		}
		out = append(out, pkt{append([]byte(nil), data...), info})
	}
}

func readBytes(t testing.TB, b []byte) ([]pkt, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(t, r)
}

// noSeek hides every method but Read, like a pipe or standard input.
type noSeek struct{ r io.Reader }

func (n noSeek) Read(p []byte) (int, error) { return n.r.Read(p) }

// frames returns n deterministic pseudo-random frames of 14..maxLen bytes.
func frames(seed uint64, n, maxLen int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]byte, n)
	for i := range out {
		f := make([]byte, 14+rng.IntN(maxLen-13))
		for j := range f {
			f[j] = byte(rng.Uint32())
		}
		out[i] = f
	}
	return out
}

// t0 is a fixed, nanosecond-precise base time.
var t0 = time.Date(2024, 5, 17, 10, 11, 12, 123456789, time.UTC)

// pcapBuild writes a classic pcap by hand, in either byte order; it is
// independent of PcapWriter so the two can check each other.
func pcapBuild(bo order, nano bool, linkType uint32, snaplen uint32, pkts []pkt) []byte {
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	b := bo.AppendUint32(nil, magic)
	b = bo.AppendUint16(b, 2)
	b = bo.AppendUint16(b, 4)
	b = bo.AppendUint32(b, 0)
	b = bo.AppendUint32(b, 0)
	b = bo.AppendUint32(b, snaplen)
	b = bo.AppendUint32(b, linkType)
	for _, p := range pkts {
		frac := p.info.Timestamp.Nanosecond()
		if !nano {
			frac /= 1000
		}
		b = bo.AppendUint32(b, uint32(p.info.Timestamp.Unix()))
		b = bo.AppendUint32(b, uint32(frac))
		b = bo.AppendUint32(b, uint32(len(p.data)))
		b = bo.AppendUint32(b, uint32(p.info.Length))
		b = append(b, p.data...)
	}
	return b
}

// ngBuild assembles pcapng blocks by hand in any byte order.
type ngBuild struct {
	bo     order
	buf    []byte
	blocks []blk
}

// blk is one record or block of a built file: [start, end) and whether it
// is a packet.
type blk struct {
	start, end int
	packet     bool
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (g *ngBuild) block(typ uint32, body []byte) {
	body = pad4(append([]byte(nil), body...))
	n := uint32(12 + len(body))
	g.blocks = append(g.blocks, blk{len(g.buf), len(g.buf) + int(n), typ == 2 || typ == 3 || typ == 6})
	g.buf = g.bo.AppendUint32(g.buf, typ)
	g.buf = g.bo.AppendUint32(g.buf, n)
	g.buf = append(g.buf, body...)
	g.buf = g.bo.AppendUint32(g.buf, n)
}

func (g *ngBuild) opt(b []byte, code uint16, v []byte) []byte {
	b = g.bo.AppendUint16(b, code)
	b = g.bo.AppendUint16(b, uint16(len(v)))
	return pad4(append(b, v...))
}

func (g *ngBuild) shb(bo order) {
	g.bo = bo
	b := bo.AppendUint32(nil, 0x1A2B3C4D)
	b = bo.AppendUint16(b, 1)
	b = bo.AppendUint16(b, 0)
	b = bo.AppendUint64(b, ^uint64(0))
	b = g.opt(b, 3, []byte("test os")) // shb_os
	b = append(b, 0, 0, 0, 0)
	g.block(0x0A0D0D0A, b)
}

// idb adds an interface; tsresol < 0 omits the option, tsoffset 0 omits it.
func (g *ngBuild) idb(linkType layers.LinkType, snaplen uint32, tsresol int, tsoffset int64) {
	b := g.bo.AppendUint16(nil, uint16(linkType))
	b = g.bo.AppendUint16(b, 0)
	b = g.bo.AppendUint32(b, snaplen)
	b = g.opt(b, 2, []byte("eth0"))
	if tsresol >= 0 {
		b = g.opt(b, 9, []byte{byte(tsresol)})
	}
	if tsoffset != 0 {
		b = g.opt(b, 14, g.bo.AppendUint64(nil, uint64(tsoffset)))
	}
	b = append(b, 0, 0, 0, 0)
	g.block(1, b)
}

func (g *ngBuild) epb(ifid uint32, ts uint64, orig int, data []byte) {
	b := g.bo.AppendUint32(nil, ifid)
	b = g.bo.AppendUint32(b, uint32(ts>>32))
	b = g.bo.AppendUint32(b, uint32(ts))
	b = g.bo.AppendUint32(b, uint32(len(data)))
	b = g.bo.AppendUint32(b, uint32(orig))
	b = pad4(append(b, data...))
	b = g.opt(b, 1, []byte("a comment"))
	b = append(b, 0, 0, 0, 0)
	g.block(6, b)
}

func (g *ngBuild) opb(ifid uint16, ts uint64, orig int, data []byte) {
	b := g.bo.AppendUint16(nil, ifid)
	b = g.bo.AppendUint16(b, 0)
	b = g.bo.AppendUint32(b, uint32(ts>>32))
	b = g.bo.AppendUint32(b, uint32(ts))
	b = g.bo.AppendUint32(b, uint32(len(data)))
	b = g.bo.AppendUint32(b, uint32(orig))
	g.block(2, append(b, data...))
}

func (g *ngBuild) spb(orig int, data []byte) {
	g.block(3, append(g.bo.AppendUint32(nil, uint32(orig)), data...))
}

// erfRecord builds an ERF Ethernet record (type 2) around frame, with
// nExt extension headers.
func erfRecord(ts time.Time, frame []byte, nExt int, typ byte) []byte {
	hl := 16 + 8*nExt
	if typ == erfTypeETH {
		hl += 2
	}
	rec := make([]byte, hl+len(frame))
	binary.LittleEndian.PutUint64(rec, ERFTimestamp(ts))
	rec[8] = typ
	if nExt > 0 {
		rec[8] |= 0x80
	}
	for i := range nExt {
		e := rec[16+8*i:]
		e[0] = 17 // host id extension header
		if i < nExt-1 {
			e[0] |= 0x80
		}
		e[7] = byte(i)
	}
	binary.BigEndian.PutUint16(rec[10:], uint16(len(rec)))
	binary.BigEndian.PutUint16(rec[14:], uint16(len(frame)+4)) // wlen counts the FCS
	copy(rec[hl:], frame)
	return rec
}
