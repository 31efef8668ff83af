package hca

import (
	"cmp"
	"slices"

	"github.com/rocetap/rocetap/decode"
)

// DefaultReadSeriesAt is the number of READ response packets above which
// the model describes a READ's responses as a ReadSeries instead of
// listing them (Options.ReadSeriesAt).
const DefaultReadSeriesAt = 256

// ReadSeries describes the responses of a long READ without listing them:
// a READ may ask for up to 2 GiB, 2 million responses at an MTU of 1024,
// and the model must not hold them all. The Response that carries it
// (Response.Series) is the first, READ RESPONSE First; the others follow
// on consecutive PSNs: Middle ones without AETH, the Last with the same
// AETH. The bytes the model knew when it executed the READ are kept as
// pieces; every other byte is unknown. A ReadSeries is owned by the model
// and valid until the next Receive.
type ReadSeries struct {
	Count  uint32 // responses, Count ≥ 2
	MTU    uint32 // payload bytes of every response but the last
	Length uint64 // bytes the READ returns
	// Transport is the QP's: the responses carry its READ response
	// opcodes (RC's, or XRC's for an XRC target).
	Transport decode.Transport
	// HasData: the model read the MR (false only when a duplicate READ's
	// MR is gone): the responses carry data, of which Pieces are known.
	HasData bool
	Pieces  []ReadPiece
}

// Bytes returns the bytes of data the pieces hold.
func (s *ReadSeries) Bytes() int {
	n := 0
	for i := range s.Pieces {
		n += len(s.Pieces[i].Data)
	}
	return n
}

// ReadPiece is a run of READ data the model knew: Data from byte Off of
// the READ, Known saying which of its bytes (same length as Data), and
// Learned (nil when none) which of the known ones the model only learned
// from an earlier response (Response.Learned).
type ReadPiece struct {
	Off     uint64
	Data    []byte
	Known   []bool
	Learned []bool
}

// Response returns the opcode, whether it has an AETH (the first's
// syndrome and MSN; a Middle response has none), and the byte range
// [off, off+n) of the READ that response i (0-based) carries.
func (s *ReadSeries) Response(i uint32) (op decode.Opcode, aeth bool, off, n uint64) {
	off = uint64(i) * uint64(s.MTU)
	n = min(uint64(s.MTU), s.Length-min(off, s.Length))
	op = s.Transport.Opcode(decode.OpReadResponseFirst).InMessage(int(i), int(s.Count))
	return op, !op.Is(decode.PropMiddle), off, n
}

// Fill writes the READ's bytes [off, off+len(data)) into data and known
// (same length) and returns how many are known; unknown bytes are 0.
func (s *ReadSeries) Fill(off uint64, data []byte, known []bool) int {
	clear(data)
	clear(known)
	end := off + uint64(len(data))
	i, _ := slices.BinarySearchFunc(s.Pieces, off, func(p ReadPiece, off uint64) int {
		return cmp.Compare(p.Off+uint64(len(p.Data)), off+1)
	})
	n := 0
	for ; i < len(s.Pieces) && s.Pieces[i].Off < end; i++ {
		p := &s.Pieces[i]
		lo, hi := max(off, p.Off), min(end, p.Off+uint64(len(p.Data)))
		if lo >= hi {
			continue
		}
		copy(data[lo-off:hi-off], p.Data[lo-p.Off:hi-p.Off])
		for j := lo; j < hi; j++ {
			if p.Known[j-p.Off] {
				known[j-off] = true
				n++
			}
		}
	}
	return n
}

// FillLearned writes into learned which of the READ's bytes [off,
// off+len(learned)) the model only learned from an earlier response (see
// Response.Learned) and reports whether any is.
func (s *ReadSeries) FillLearned(off uint64, learned []bool) bool {
	clear(learned)
	end := off + uint64(len(learned))
	i, _ := slices.BinarySearchFunc(s.Pieces, off, func(p ReadPiece, off uint64) int {
		return cmp.Compare(p.Off+uint64(len(p.Data)), off+1)
	})
	any := false
	for ; i < len(s.Pieces) && s.Pieces[i].Off < end; i++ {
		p := &s.Pieces[i]
		lo, hi := max(off, p.Off), min(end, p.Off+uint64(len(p.Data)))
		if p.Learned == nil || lo >= hi {
			continue
		}
		src := p.Learned[lo-p.Off : hi-p.Off]
		copy(learned[lo-off:hi-off], src)
		any = any || slices.Contains(src, true)
	}
	return any
}

// readSeries answers a READ of n > Options.ReadSeriesAt responses with one
// Response carrying a ReadSeries: the bytes the MR's memory holds for
// [va, va+length) are copied as pieces (as much memory as the capture
// wrote there, not the READ's length), and every page is translated
// through the cache as for listed responses.
func (m *Model) readSeries(qp *QP, mr *MR, rkey uint32, psn decode.PSN, va, length uint64, n uint32, dup bool) {
	r := m.respond(qp, decode.OpReadResponseFirst, psn, synACK, true, "")
	r.Duplicate = dup
	s := &m.series
	*s = ReadSeries{Count: n, MTU: uint32(qp.MTU), Length: length, Transport: qp.Type, Pieces: s.Pieces[:0]}
	if mr != nil {
		s.HasData = true
		m.translate(qp.QPN, rkey, mr.MTT, va, length)
		// checkRKey (or the duplicate's resource) put the range inside the MR.
		var err error
		m.segs, err = mr.MTT.AppendSegments(m.segs[:0], va, length)
		m.fault(&m.res, err)
		m.spans = m.spans[:0]
		for _, sg := range m.segs {
			m.mem.touched(sg.PA, sg.Len, func(pa uint64, r chunkRef, lo, hi uint64) {
				c, start := r.c, len(m.arena)
				soft := r.sum&wordSpan(lo, hi) != 0
				m.spans = append(m.spans, pieceSpan{off: sg.VA - va + (pa + lo - sg.PA), start: start, n: int(hi - lo), learned: soft})
				m.arena = append(m.arena, c.data[lo:hi]...)
				for b := lo; b < hi; b++ {
					m.known = append(m.known, c.known[b>>6]>>(b&63)&1 != 0)
				}
				if soft {
					knownBits(m.learnedMask(start, int(hi-lo)), r.learned[:], lo)
				}
			})
		}
		// The arena has stopped growing: point the pieces into it.
		for _, sp := range m.spans {
			p := ReadPiece{Off: sp.off, Data: m.arena[sp.start : sp.start+sp.n], Known: m.known[sp.start : sp.start+sp.n]}
			if sp.learned {
				p.Learned = m.learned[sp.start : sp.start+sp.n]
			}
			s.Pieces = append(s.Pieces, p)
		}
		slices.SortFunc(s.Pieces, func(a, b ReadPiece) int { return cmp.Compare(a.Off, b.Off) })
	}
	r.Series = s
}

// pieceSpan is a ReadPiece while the arena grows: its bytes are
// arena[start:start+n].
type pieceSpan struct {
	off      uint64
	start, n int
	learned  bool // the chunk may hold learned bytes: the piece has a Learned mask
}

// touched calls fn for every stored chunk that overlaps [pa, pa+n), with
// the chunk's physical address and the overlapping bytes [lo, hi) of it,
// visiting either the range's chunks or the stored ones, whichever are
// fewer: a READ of 2 GiB of memory the capture never wrote costs little.
func (m *PhysMem) touched(pa, n uint64, fn func(pa uint64, r chunkRef, lo, hi uint64)) {
	end := pa + n
	if n/storeSize > uint64(len(m.chunks)) {
		for k, r := range m.chunks {
			if lo := k << storeShift; lo < end && lo+storeSize > pa {
				fn(lo, r, max(lo, pa)-lo, min(lo+storeSize, end)-lo)
			}
		}
		return
	}
	for a := pa &^ storeMask; a < end; a += storeSize {
		if r := m.chunks[a>>storeShift]; r.c != nil {
			fn(a, r, max(a, pa)-a, min(a+storeSize, end)-a)
		}
	}
}
