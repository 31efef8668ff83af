package decode

import "encoding/binary"

// xdr reads XDR items (RFC 4506: big-endian 4-byte units, opaques padded
// to 4) from b. The first read that runs past the end sets short; from
// then on every read returns zero, so a decoder reads straight through and
// asks ok() at the points where it records what it has.
type xdr struct {
	b     []byte
	off   int
	short bool
	// bad: a value the XDR does not allow (a union's unknown arm) stopped
	// the reads, not the end of the bytes
	bad bool
	// reduced are the offsets in b where a variable-length opaque's bytes
	// (and padding) are absent from the stream, its length word present:
	// RPC-over-RDMA moved them to a read chunk (RFC 8166, 3.5.3)
	reduced []int
	// ddp counts the DDP-eligible data items (ddpOpaque) still to come
	// whose bytes are in write chunks, not in b
	ddp int
	// status collects the nfsstat4 values read inside an NFSv4 op's
	// arguments or results (skipStatus)
	status []uint32
}

func (x *xdr) ok() bool { return !x.short }

// invalid stops the reads at a value the XDR does not allow.
func (x *xdr) invalid() { x.short, x.bad = true, true }

// left returns the bytes not read yet.
func (x *xdr) left() int { return len(x.b) - x.off }

func (x *xdr) take(n int) []byte {
	if x.short || n < 0 || n > len(x.b)-x.off {
		x.short = true
		return nil
	}
	s := x.b[x.off : x.off+n]
	x.off += n
	return s
}

func (x *xdr) u32() uint32 {
	if s := x.take(4); s != nil {
		return binary.BigEndian.Uint32(s)
	}
	return 0
}

func (x *xdr) u64() uint64 {
	if s := x.take(8); s != nil {
		return binary.BigEndian.Uint64(s)
	}
	return 0
}

// fixed reads a fixed-length opaque of n bytes and its padding.
func (x *xdr) fixed(n int) []byte {
	s := x.take(n)
	x.take(pad4(n))
	return s
}

// opaque reads a variable-length opaque (or string): a length, the bytes,
// their padding.
func (x *xdr) opaque() []byte {
	n := x.u32()
	for len(x.reduced) > 0 && x.reduced[0] < x.off {
		x.reduced = x.reduced[1:]
	}
	if !x.short && len(x.reduced) > 0 && x.off == x.reduced[0] {
		x.reduced = x.reduced[1:]
		return nil
	}
	if x.short || uint64(n) > uint64(x.left()) {
		x.short = true
		return nil
	}
	return x.fixed(int(n))
}

// ddpOpaque reads a DDP-eligible variable-length opaque: its length
// only, when RPC-over-RDMA moved its bytes to a write chunk (ddp).
func (x *xdr) ddpOpaque() {
	if x.ddp > 0 {
		x.ddp--
		x.u32()
		return
	}
	x.opaque()
}

// count reads an array length and checks that at least min bytes per
// element remain, so that a hostile count cannot make a decoder loop long.
func (x *xdr) count(min int) int {
	n := x.u32()
	if x.short || uint64(n)*uint64(min) > uint64(x.left()) {
		x.short = true
		return 0
	}
	return int(n)
}

// skip reads n bytes and drops them.
func (x *xdr) skip(n int) { x.take(n) }

// skipWords drops n 4-byte units.
func (x *xdr) skipWords(n int) { x.take(4 * n) }

// skipOpaques drops n variable-length opaques.
func (x *xdr) skipOpaques(n int) {
	for range n {
		x.opaque()
	}
}

// skipBitmap drops a bitmap4 (a counted array of words).
func (x *xdr) skipBitmap() { x.skipWords(x.count(4)) }

func pad4(n int) int { return (4 - n%4) % 4 }
