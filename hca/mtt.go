package hca

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// DefaultPageSize is the page size of a PhysMem made with page size 0.
const DefaultPageSize = 4096

// Errors of MTT accesses, for errors.Is.
var (
	// ErrMTTRange: the range is not inside the MR.
	ErrMTTRange = errors.New("range outside the memory region")
	// ErrMTTMisaligned: an atomic on an address that is not 8-byte aligned.
	ErrMTTMisaligned = errors.New("atomic address not 8-byte aligned")
	// ErrMTTDeregistered: the MR was deregistered.
	ErrMTTDeregistered = errors.New("memory region deregistered")
)

// The emulated physical address space: 2^physBlockBits blocks of
// physBlockPages pages each. Registration takes blocks in the order of a
// full-period LCG over the block numbers, so consecutive blocks are far
// apart, and uses a random-length prefix of each block (1 page with
// probability 7/8, else 2, 4 or 8), so adjacent virtual pages are usually,
// but not always, physically apart.
const (
	physBlockBits  = 24
	physBlockPages = 8
	physBlockMask  = 1<<physBlockBits - 1
	physFrames     = physBlockPages << physBlockBits

	// The LCG modulo 2^24: c odd and a ≡ 1 (mod 4) give the full period
	// (Hull–Dobell), so no block is handed out twice.
	lcgMul = 6364136223846793005 & physBlockMask
	lcgInc = 1442695040888963407 & physBlockMask
)

// Byte storage is kept per 4 KiB chunk of physical address space, whatever
// the page size, so huge pages cost memory only where they are touched.
const (
	storeShift = 12
	storeSize  = 1 << storeShift
	storeMask  = storeSize - 1
)

// storeChunk holds 4 KiB of physical memory and which of its bytes are
// known (bit i of known[i/64] for byte i). Unknown bytes hold 0.
type storeChunk struct {
	data  [storeSize]byte
	known [storeSize / 64]uint64
}

// learnedBits says which known bytes of a chunk are learned (same layout
// as storeChunk.known).
type learnedBits [storeSize / 64]uint64

// chunkRef is a storage chunk as PhysMem keeps it, with its learned bits
// (nil until something is learned of it). A known byte is written (a
// request stored it: WRITE, ATOMIC) or learned (only a response showed
// it, MTT.Learn). A written byte is a fact; a learned one is an
// expectation, since the responder's CPU may rewrite its own buffer
// without anything on the wire. The learned bits hang off the map entry,
// not the chunk, and sum says which of the chunk's 64-byte words may hold
// learned bytes (bit i: learned[i] may be non-zero): memory nothing was
// learned of costs what it did before, in size and in cache lines
// touched. Measured on the replay of a 1M-packet gencap capture: 60% of
// the reads and writes land in a chunk something was learned of, 1% on
// learned bytes; reading the learned bits each time cost 5% of the CPU.
type chunkRef struct {
	c       *storeChunk
	learned *learnedBits
	sum     uint64
}

// wordSpan is the mask of the 64-byte words that bytes [lo, hi) of a
// chunk touch (lo < hi): bit i for word i, as chunkRef.sum.
func wordSpan(lo, hi uint64) uint64 {
	lw, hw := lo>>6, (hi-1)>>6
	if hw-lw == 63 {
		return ^uint64(0)
	}
	return (1<<(hw-lw+1) - 1) << lw
}

// PhysMem is the emulated physical memory behind the memory regions: it
// pins physical pages for registrations and holds the bytes written to
// them. Page placement is deterministic: the same registrations, in the
// same order, from the same seed, get the same physical addresses.
//
// Memory is host memory: bytes are stored as written, and the atomics work
// on little-endian uint64 values (the byte order of the x86 and arm64 hosts
// RDMA NICs sit in), not on the wire's big-endian order.
//
// A PhysMem is not safe for concurrent use.
type PhysMem struct {
	pageSize uint64
	shift    uint

	gen       frameGen // draws the fresh frames
	blocks    uint32   // blocks gen has drawn
	free      []uint64
	freeHead  int // free[freeHead:] are free frames, reused first in the order freed
	pinned    uint64
	largeNext uint64 // next frame for a large MR's chunk (0: largeBase)

	chunks map[uint64]chunkRef // by physical address >> storeShift
}

// NewPhysMem returns an empty physical memory with the page size (0 means
// DefaultPageSize; otherwise a power of two from 64 to 1 GiB). The seed
// selects the page placement.
func NewPhysMem(pageSize, seed uint64) (*PhysMem, error) {
	if pageSize == 0 {
		pageSize = DefaultPageSize
	}
	if pageSize&(pageSize-1) != 0 || pageSize < 64 || pageSize > 1<<30 {
		return nil, fmt.Errorf("physical memory: page size %d: want a power of two from 64 to 1 GiB", pageSize)
	}
	m := &PhysMem{
		pageSize: pageSize,
		shift:    uint(bits.TrailingZeros64(pageSize)),
		gen:      frameGen{rng: seed},
		chunks:   make(map[uint64]chunkRef),
	}
	m.gen.lcg = uint32(splitmix64(&m.gen.rng) & physBlockMask)
	return m, nil
}

// PageSize returns the page size in bytes.
func (m *PhysMem) PageSize() uint64 { return m.pageSize }

// PinnedPages returns how many pages the live registrations pin.
func (m *PhysMem) PinnedPages() uint64 { return m.pinned }

// TouchedBytes returns the bytes of storage allocated for written memory:
// it grows with the 4 KiB chunks written to, not with the registrations.
func (m *PhysMem) TouchedBytes() uint64 {
	return uint64(len(m.chunks)) * storeSize
}

func splitmix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// allocFrame returns a free physical page frame number: a freed one
// first, else a fresh one.
func (m *PhysMem) allocFrame() (uint64, bool) {
	if m.freeHead < len(m.free) {
		f := m.free[m.freeHead]
		m.freeHead++
		if m.freeHead == len(m.free) {
			m.free, m.freeHead = m.free[:0], 0
		}
		return f, true
	}
	return m.gen.next(&m.blocks)
}

// frameGen draws fresh frames: blocks in the LCG's order, and the length
// of the contiguous chunk used of each. It is small and copyable, so an
// MTT can keep the state it started from and draw its frames again when
// they are first needed (MTT.materialize): the same frames as drawing
// them at registration, without holding them until then.
type frameGen struct {
	rng  uint64 // splitmix64 state for chunk lengths
	cur  uint64 // next frame of the current contiguous chunk
	lcg  uint32 // last block number drawn
	left uint8  // frames left in the current chunk
}

// newBlock draws the next block and its chunk length, counting it in
// *used; false when every block is used.
func (g *frameGen) newBlock(used *uint32) bool {
	if *used == 1<<physBlockBits {
		return false
	}
	*used++
	g.lcg = (g.lcg*lcgMul + lcgInc) & physBlockMask
	block := uint64(g.lcg ^ g.lcg>>13) // a bijection on 24 bits: spreads the LCG's weak low bits
	g.cur = block * physBlockPages
	g.left = 1
	if r := splitmix64(&g.rng); r&7 == 0 {
		g.left = uint8(chunkLens[r>>3&3])
	}
	return true
}

// next returns a fresh frame, counting a new block in *used.
func (g *frameGen) next(used *uint32) (uint64, bool) {
	if g.left == 0 && !g.newBlock(used) {
		return 0, false
	}
	f := g.cur
	g.cur++
	g.left--
	return f, true
}

// skip draws n frames without returning them, a chunk at a time; false
// when the blocks run out first (g is then partly advanced).
func (g *frameGen) skip(n uint64, used *uint32) bool {
	for n > 0 {
		if g.left == 0 && !g.newBlock(used) {
			return false
		}
		k := min(n, uint64(g.left))
		g.cur += k
		g.left -= uint8(k)
		n -= k
	}
	return true
}

// chunkLens are the lengths of the contiguous chunks that are not a single
// page (1 in 8): 2 half the time, 4 or 8 a quarter each.
var chunkLens = [4]uint64{2, 2, 4, 8}

func (m *PhysMem) freeFrame(f uint64) {
	m.clearPA(f<<m.shift, m.pageSize)
	m.free = append(m.free, f)
}

// PageRun is one entry of an MTT as a scatter-gather table holds it:
// Pages virtual pages from VA (page aligned) mapped to physically
// contiguous pages from PA.
type PageRun struct {
	VA, PA uint64
	Pages  uint64
}

// Segment is a piece of an address range that is physically contiguous.
type Segment struct {
	VA, PA, Len uint64
}

// MTT is the page table of one memory region: the pages pinned for it, in
// virtual order, merged into runs of physically contiguous pages. Its
// methods translate and access the MR's addresses; they do not check
// access flags, keys or PDs (the MPT entry does).
//
// The runs are built when the MR is first translated or accessed: until
// then the MTT holds the frame generator's state at registration (gen),
// from which materialize draws exactly the frames registration would
// have. An MPT file may register a million MRs of which a capture touches
// a few; each holding its runs cost ~400 bytes an MR (a 64 KiB MR is ~14
// runs, 7 in 8 pages being physically apart).
type MTT struct {
	mem    *PhysMem
	va     uint64
	length uint64
	rs     *[]PageRun // the runs, nil until built
	gen    packedGen  // lazy: where its frames are drawn from
	access Access
	shift  uint8 // log2 of the page size
	freed  bool
	large  bool // pinned by registerLarge
	lazy   bool // runs not built yet
}

// An MTT is 56 bytes: a model of a million MRs holds a million of them.
// The runs are behind a pointer, and the generator state packed, because
// an MTT needs the one until it is built and the other after.

// runs returns the runs (nil when there are none, or not built yet).
func (t *MTT) runs() []PageRun {
	if t.rs == nil {
		return nil
	}
	return *t.rs
}

func (t *MTT) setRuns(r []PageRun) { t.rs = &r }

// packedGen is a frameGen in 16 bytes: rng, and cur<<32 | lcg<<8 | left
// (a block frame is below 2^27); for a large MR's chunks, rng and cur.
type packedGen [2]uint64

func packGen(g frameGen, large bool) packedGen {
	if large {
		return packedGen{g.rng, g.cur}
	}
	return packedGen{g.rng, g.cur<<32 | uint64(g.lcg)<<8 | uint64(g.left)}
}

func (p packedGen) unpack(large bool) frameGen {
	if large {
		return frameGen{rng: p[0], cur: p[1]}
	}
	return frameGen{rng: p[0], cur: p[1] >> 32, lcg: uint32(p[1]>>8) & physBlockMask, left: uint8(p[1])}
}

// pageSize returns the size of the MTT's pages.
func (t *MTT) pageSize() uint64 { return 1 << t.shift }

// Pages returns the number of pages pinned.
func (t *MTT) Pages() uint64 {
	if t.length == 0 {
		return 0
	}
	return (t.va+t.length-1)>>t.shift - t.va>>t.shift + 1
}

// Register pins the pages covering [va, va+length) and returns their MTT.
// va need not be page aligned: the first page holds va's offset within a
// page, as with a host buffer. With ZeroBased the MR's addresses start at
// 0 and va must be 0 (an MPT file writes va 0 for such MRs; the host
// buffer is taken as page aligned). OnDemand MRs are pinned like the
// others. A zero-length MR pins nothing and translates nothing.
func (m *PhysMem) Register(va, length uint64, access Access) (*MTT, error) {
	if access&ZeroBased != 0 && va != 0 {
		return nil, fmt.Errorf("register: ZERO_BASED MR at va %#x: a zero-based MR starts at 0", va)
	}
	if length > 0 && length-1 > math.MaxUint64-va {
		return nil, fmt.Errorf("register: va %#x + length %d overflows 64 bits", va, length)
	}
	t := new(MTT)
	if err := m.register(t, va, length, access); err != nil {
		return nil, err
	}
	return t, nil
}

// register is Register into *t, so that a caller registering many MRs can
// allocate their MTTs together. The frames are drawn from the generator
// without being kept (the MTT keeps the generator's state instead) when no
// freed frame is waiting to be reused, as before any deregistration.
func (m *PhysMem) register(t *MTT, va, length uint64, access Access) error {
	*t = MTT{mem: m, va: va, length: length, access: access, shift: uint8(m.shift)}
	if length == 0 {
		return nil
	}
	first, last := va>>m.shift, (va+length-1)>>m.shift
	n := last - first + 1
	if n > maxRunsPerMR {
		if err := m.registerLarge(t, first, n); err != nil {
			return err
		}
		m.pinned += n
		return nil
	}
	if m.freeHead == len(m.free) {
		start, blocks := m.gen, m.blocks
		if m.gen.skip(n, &m.blocks) {
			t.gen, t.lazy = packGen(start, false), true
			m.pinned += n
			return nil
		}
		m.gen, m.blocks = start, blocks // exhausted: fail as drawing the frames one by one does
	}
	var runs []PageRun
	for p := first; p <= last; p++ {
		f, ok := m.allocFrame()
		if !ok {
			t.setRuns(runs)
			t.freeFrames()
			return fmt.Errorf("register: emulated physical memory exhausted after %d of %d pages", p-first, n)
		}
		runs = appendFrame(runs, p<<m.shift, f<<m.shift, m.pageSize)
	}
	t.setRuns(runs)
	m.pinned += n
	return nil
}

// materialize builds the runs of a lazy MTT: the frames its registration
// drew, drawn again from the generator state it started from.
func (t *MTT) materialize() {
	if !t.lazy {
		return
	}
	t.lazy = false
	first := t.va >> t.shift
	g := t.gen.unpack(t.large)
	if t.large {
		t.setRuns(largeRuns(first, t.Pages(), &g, t.shift, true))
		return
	}
	runs := make([]PageRun, 0, 4)
	var blocks uint32 // registration counted them
	for p := range t.Pages() {
		f, _ := g.next(&blocks) // registration drew these frames: they exist
		runs = appendFrame(runs, (first+p)<<t.shift, f<<t.shift, t.pageSize())
	}
	t.setRuns(runs)
}

// maxRunsPerMR bounds the MTT of one MR. An MR of more pages (256 MiB
// and up with 4 KiB pages; MRs of hundreds of GiB are common on GPU hosts)
// is pinned in physically contiguous chunks of a power-of-two number of
// pages, at most maxRunsPerMR of them, as an IOMMU or huge pages coalesce
// a large buffer: its MTT then costs at most maxRunsPerMR runs, whatever
// its size.
const maxRunsPerMR = 1 << 16

// The chunks of large MRs come from a region of their own, above the
// blocks: frame numbers from largeBase up, handed out in order with a gap
// of a few frames between chunks so consecutive chunks are not adjacent.
// Frames there are never reused.
const (
	largeBase = physFrames + physBlockPages
	// largeFrames bounds the region: 2^36 frames is 256 TiB of 4 KiB pages.
	largeFrames = 1 << 36
)

// registerLarge pins n pages from virtual page first for t in chunks.
func (m *PhysMem) registerLarge(t *MTT, first, n uint64) error {
	chunk := largeChunk(n)
	if m.largeNext == 0 {
		m.largeNext = largeBase
	}
	// Every frame number must stay below 2^64 >> shift once shifted.
	limit := min(uint64(largeBase+largeFrames), ^uint64(0)>>m.shift)
	if n > limit-m.largeNext || n+(n/chunk+1)*physBlockPages > limit-m.largeNext {
		return fmt.Errorf("register: %d pages exceed the emulated physical memory (%d pages left for large regions)", n, limit-m.largeNext)
	}
	// Draw the chunks to advance the generators, keeping only where they
	// start: materialize draws them again.
	g := frameGen{rng: m.gen.rng, cur: m.largeNext}
	t.gen = packGen(g, true)
	largeRuns(first, n, &g, uint8(m.shift), false)
	m.gen.rng, m.largeNext = g.rng, g.cur
	t.large, t.lazy = true, true
	return nil
}

// largeChunk returns the pages of each chunk of a large MR of n pages: the
// smallest power of two from 2 that needs at most maxRunsPerMR chunks.
func largeChunk(n uint64) uint64 {
	chunk := uint64(2)
	for (n+chunk-1)/chunk > maxRunsPerMR {
		chunk <<= 1
	}
	return chunk
}

// largeRuns returns the runs of a large MR of n pages from virtual page
// first, drawing its chunks from g (g.cur: the next frame of the large
// region; g.rng: the gaps' generator). With keep false it only advances
// g, returning nil.
func largeRuns(first, n uint64, g *frameGen, shift uint8, keep bool) []PageRun {
	chunk := largeChunk(n)
	var runs []PageRun
	if keep {
		runs = make([]PageRun, 0, (n+chunk-1)/chunk)
	}
	for done := uint64(0); done < n; {
		k := min(chunk, n-done)
		f := g.cur
		g.cur += k + 1 + splitmix64(&g.rng)&(physBlockPages-1)
		if keep {
			runs = append(runs, PageRun{VA: (first + done) << shift, PA: f << shift, Pages: k})
		}
		done += k
	}
	return runs
}

// appendFrame adds the virtual page at va, mapped to pa, to runs, merging
// it into the last run when both are contiguous.
func appendFrame(runs []PageRun, va, pa, pageSize uint64) []PageRun {
	if n := len(runs); n > 0 {
		r := &runs[n-1]
		if r.VA+r.Pages*pageSize == va && r.PA+r.Pages*pageSize == pa {
			r.Pages++
			return runs
		}
	}
	return append(runs, PageRun{VA: va, PA: pa, Pages: 1})
}

// Deregister unpins the MR's pages and forgets their bytes. Afterwards the
// MTT translates nothing.
func (m *PhysMem) Deregister(t *MTT) error {
	if t.mem != m {
		return errors.New("deregister: MTT of another physical memory")
	}
	if t.freed {
		return fmt.Errorf("deregister: %w", ErrMTTDeregistered)
	}
	t.freeFrames()
	m.pinned -= t.Pages()
	t.freed = true
	return nil
}

func (t *MTT) freeFrames() {
	t.materialize()
	if t.large { // the region's frames are not reused: just forget the bytes
		for _, r := range t.runs() {
			t.mem.clearPA(r.PA, r.Pages*t.pageSize())
		}
		return
	}
	for _, r := range t.runs() {
		for i := range r.Pages {
			t.mem.freeFrame(r.PA>>t.shift + i)
		}
	}
}

// VA returns the MR's first address (0 for a zero-based MR).
func (t *MTT) VA() uint64 { return t.va }

// Len returns the MR's length in bytes.
func (t *MTT) Len() uint64 { return t.length }

// Access returns the access flags the MR was registered with.
func (t *MTT) Access() Access { return t.access }

// PageSize returns the size of the MTT's pages.
func (t *MTT) PageSize() uint64 { return t.pageSize() }

// Runs returns a copy of the runs in virtual address order. Two adjacent
// runs are never physically contiguous.
func (t *MTT) Runs() []PageRun {
	t.materialize()
	return slices.Clone(t.runs())
}

// Contains reports whether [va, va+length) lies inside the MR. A zero
// length is inside when va is in [VA, VA+Len].
func (t *MTT) Contains(va, length uint64) bool {
	return !t.freed && va >= t.va && va-t.va <= t.length && length <= t.length-(va-t.va)
}

// runIndex returns the index of the run holding va, which must be inside
// the MR, building the runs first if need be.
func (t *MTT) runIndex(va uint64) int {
	t.materialize()
	runs := t.runs()
	lo, hi := 0, len(runs) // the answer is in [lo, hi)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if runs[mid].VA <= va {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// Translate returns the physical address of va, and false when va is not
// inside the MR.
func (t *MTT) Translate(va uint64) (pa uint64, ok bool) {
	if t.freed || va < t.va || va-t.va >= t.length {
		return 0, false
	}
	i := t.runIndex(va) // before reading the runs, which it may build
	r := &(*t.rs)[i]
	return r.PA + (va - r.VA), true
}

// Segments splits [va, va+length) into physically contiguous segments, at
// the run boundaries. A zero length gives no segments.
func (t *MTT) Segments(va, length uint64) ([]Segment, error) {
	return t.AppendSegments(nil, va, length)
}

// AppendSegments appends the segments of [va, va+length) to dst, as
// Segments does, without allocating when dst has room.
func (t *MTT) AppendSegments(dst []Segment, va, length uint64) ([]Segment, error) {
	if err := t.check(va, length); err != nil {
		return dst, err
	}
	for i := t.runIndex(va); length > 0; i++ {
		r := &(*t.rs)[i]
		n := min(length, r.VA+r.Pages*t.pageSize()-va)
		dst = append(dst, Segment{VA: va, PA: r.PA + (va - r.VA), Len: n})
		va += n
		length -= n
	}
	return dst, nil
}

func (t *MTT) check(va, length uint64) error {
	if t.freed {
		return ErrMTTDeregistered
	}
	if length == 0 {
		return nil
	}
	if !t.Contains(va, length) {
		return fmt.Errorf("[%#x, +%d) not in MR [%#x, +%d): %w", va, length, t.va, t.length, ErrMTTRange)
	}
	return nil
}

// Write stores data at va, which with len(data) must lie inside the MR:
// the bytes are written (a fact), whatever they were.
func (t *MTT) Write(va uint64, data []byte) error {
	if err := t.check(va, uint64(len(data))); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	t.eachRun(va, data, t.mem.WritePA)
	return nil
}

// Learn stores data at va, which with len(data) must lie inside the MR,
// as learned bytes: only where the bytes are unknown or were learned
// before. Bytes a request wrote stay as they are. It is what a READ
// response or an ATOMIC ACK teaches the model (Model.Observe): the value
// the memory held then, which its owner may change again.
func (t *MTT) Learn(va uint64, data []byte) error {
	if err := t.check(va, uint64(len(data))); err != nil {
		return fmt.Errorf("learn: %w", err)
	}
	t.eachRun(va, data, t.mem.learnPA)
	return nil
}

// eachRun calls fn with the physical address of every run-contiguous part
// of [va, va+len(data)) and that part of data.
func (t *MTT) eachRun(va uint64, data []byte, fn func(pa uint64, data []byte)) {
	for i := t.runIndex(va); len(data) > 0; i++ {
		r := &(*t.rs)[i]
		n := min(uint64(len(data)), r.VA+r.Pages*t.pageSize()-va)
		fn(r.PA+(va-r.VA), data[:n])
		data = data[n:]
		va += n
	}
}

// Read fills data from va, which with len(data) must lie inside the MR,
// and returns how many of the bytes are known. Unknown bytes (never
// written) read as 0; known, if not nil, must have len(data) and receives
// which bytes are known.
func (t *MTT) Read(va uint64, data []byte, known []bool) (int, error) {
	nKnown, _, err := t.ReadState(va, data, known, nil)
	return nKnown, err
}

// ReadState is Read that also says which of the known bytes are only
// learned (MTT.Learn): nLearned counts them, and learned, if not nil,
// must have len(data) and receives them.
func (t *MTT) ReadState(va uint64, data []byte, known, learned []bool) (nKnown, nLearned int, err error) {
	clear(learned)
	return t.readState(va, data, known, learned)
}

// readState is ReadState with learned, if not nil, all false already:
// only the parts of memory something was learned of are visited.
func (t *MTT) readState(va uint64, data []byte, known, learned []bool) (nKnown, nLearned int, err error) {
	if err := t.check(va, uint64(len(data))); err != nil {
		return 0, 0, fmt.Errorf("read: %w", err)
	}
	if known != nil && len(known) != len(data) || learned != nil && len(learned) != len(data) {
		return 0, 0, fmt.Errorf("read: masks of %d and %d for %d bytes", len(known), len(learned), len(data))
	}
	for i := t.runIndex(va); len(data) > 0; i++ {
		r := &(*t.rs)[i]
		n := min(uint64(len(data)), r.VA+r.Pages*t.pageSize()-va)
		var k, l []bool
		if known != nil {
			k, known = known[:n], known[n:]
		}
		if learned != nil {
			l, learned = learned[:n], learned[n:]
		}
		nk, nl := t.mem.readPA(r.PA+(va-r.VA), data[:n], k, l)
		nKnown += nk
		nLearned += nl
		data = data[n:]
		va += n
	}
	return nKnown, nLearned, nil
}

// atomic8 returns the physical address of the 8 bytes at va, an aligned
// address in the MR, and their storage chunk, nil when never written.
func (t *MTT) atomic8(va uint64) (r chunkRef, pa uint64, err error) {
	if va&7 != 0 {
		return r, 0, fmt.Errorf("atomic at %#x: %w", va, ErrMTTMisaligned)
	}
	if err := t.check(va, 8); err != nil {
		return r, 0, fmt.Errorf("atomic: %w", err)
	}
	pa, _ = t.Translate(va) // 8 aligned bytes never cross a page or a chunk
	return t.mem.chunks[pa>>storeShift], pa, nil
}

// known8 reports whether the 8 aligned bytes at pa in c are all known.
func (c *storeChunk) known8(pa uint64) bool {
	off := pa & storeMask
	return c != nil && c.known[off>>6]>>(off&63)&0xff == 0xff
}

// learned8 reports whether any of the 8 aligned bytes at pa in r's chunk
// is learned.
func (r chunkRef) learned8(pa uint64) bool {
	off := pa & storeMask
	return r.sum&wordSpan(off, off+8) != 0 && r.learned[off>>6]>>(off&63)&0xff != 0
}

// FetchAdd adds add to the little-endian uint64 at va (8-byte aligned,
// inside the MR) and returns the original value. When any of the 8 bytes
// is unknown, the original value is unknown (known false) and so are the
// 8 bytes afterwards; a caller that learns the value (from the captured
// AtomicAckETH) can Write it first.
func (t *MTT) FetchAdd(va, add uint64) (orig uint64, known bool, err error) {
	orig, known, _, err = t.atomic(va, func(v uint64) uint64 { return v + add })
	return orig, known, err
}

// CompareSwap stores swap in the little-endian uint64 at va (8-byte
// aligned, inside the MR) when it equals compare, and returns the original
// value. When any of the 8 bytes is unknown, the original value is unknown
// (known false) and so are the 8 bytes afterwards, as for FetchAdd.
func (t *MTT) CompareSwap(va, compare, swap uint64) (orig uint64, known bool, err error) {
	orig, known, _, err = t.atomic(va, compareSwap(compare, swap))
	return orig, known, err
}

func compareSwap(compare, swap uint64) func(uint64) uint64 {
	return func(v uint64) uint64 {
		if v == compare {
			return swap
		}
		return v
	}
}

// atomic replaces the little-endian uint64 at va (8-byte aligned, inside
// the MR) with op of it and returns the original value: unknown (known
// false, and the 8 bytes are unknown afterwards) when any byte is unknown;
// learned when any byte is learned, and then the new value is learned too
// (it follows from an expectation, not from what requests wrote).
func (t *MTT) atomic(va uint64, op func(uint64) uint64) (orig uint64, known, learned bool, err error) {
	r, pa, err := t.atomic8(va)
	if err != nil {
		return 0, false, false, err
	}
	c := r.c
	if !c.known8(pa) {
		t.mem.clearPA(pa, 8)
		return 0, false, false, nil
	}
	off := pa & storeMask
	orig = binary.LittleEndian.Uint64(c.data[off:])
	binary.LittleEndian.PutUint64(c.data[off:], op(orig))
	if learned = r.learned8(pa); learned {
		setBits(r.learned[:], off, off+8)
	}
	return orig, true, learned, nil
}

// chunk returns the storage chunk of pa, allocating it.
func (m *PhysMem) chunk(pa uint64) chunkRef {
	r := m.chunks[pa>>storeShift]
	if r.c == nil {
		r.c = new(storeChunk)
		m.chunks[pa>>storeShift] = r
	}
	return r
}

// WritePA stores data at physical address pa, making those bytes known
// and written.
func (m *PhysMem) WritePA(pa uint64, data []byte) {
	for len(data) > 0 {
		off := pa & storeMask
		n := min(uint64(len(data)), storeSize-off)
		r := m.chunk(pa)
		c := r.c
		copy(c.data[off:], data[:n])
		setBits(c.known[:], off, off+n)
		if span := wordSpan(off, off+n); r.sum&span != 0 {
			// Written over learned bytes: they are facts now.
			clearBits(r.learned[:], off, off+n)
			for b := r.sum & span; b != 0; b &= b - 1 {
				if w := bits.TrailingZeros64(b); r.learned[w] == 0 {
					r.sum &^= 1 << w
				}
			}
			m.chunks[pa>>storeShift] = r
		}
		data = data[n:]
		pa += n
	}
}

// learnPA stores data at physical address pa as learned bytes, where the
// bytes are unknown or learned; written bytes keep their value.
func (m *PhysMem) learnPA(pa uint64, data []byte) {
	for len(data) > 0 {
		off := pa & storeMask
		n := min(uint64(len(data)), storeSize-off)
		r := m.chunk(pa)
		if r.learned == nil {
			r.learned = new(learnedBits)
		}
		if span := wordSpan(off, off+n); r.sum&span != span {
			r.sum |= span // a word that keeps only written bytes may be marked: sum may say too much, never too little
			m.chunks[pa>>storeShift] = r
		}
		c, learned := r.c, r.learned
		if !anyWritten(c, learned, off, off+n) {
			// Usually nothing there was written: one copy.
			copy(c.data[off:off+n], data[:n])
			setBits(c.known[:], off, off+n)
			setBits(learned[:], off, off+n)
			data = data[n:]
			pa += n
			continue
		}
		bitRange(off, off+n, func(w, mask uint64) {
			// The bytes of this word that are not written by a request.
			free := (^c.known[w] | learned[w]) & mask
			if free == mask { // all of them, usually: one copy
				lo := w<<6 + uint64(bits.TrailingZeros64(mask))
				copy(c.data[lo:lo+uint64(bits.OnesCount64(mask))], data[lo-off:])
			} else {
				for b := free; b != 0; b &= b - 1 {
					i := w<<6 + uint64(bits.TrailingZeros64(b))
					c.data[i] = data[i-off]
				}
			}
			c.known[w] |= free
			learned[w] |= free
		})
		data = data[n:]
		pa += n
	}
}

// anyWritten reports whether a request wrote any byte of [lo, hi) of c:
// known and not learned.
func anyWritten(c *storeChunk, learned *learnedBits, lo, hi uint64) bool {
	lw, hw, lm, hm := wordMasks(lo, hi)
	for w := lw; w <= hw; w++ {
		mask := ^uint64(0)
		if w == lw {
			mask &= lm
		}
		if w == hw {
			mask &= hm
		}
		if c.known[w]&^learned[w]&mask != 0 {
			return true
		}
	}
	return false
}

// ReadPA fills data from physical address pa and returns how many bytes
// are known; unknown bytes read as 0. known, if not nil, must have
// len(data) and receives which bytes are known.
func (m *PhysMem) ReadPA(pa uint64, data []byte, known []bool) int {
	n, _ := m.readPA(pa, data, known, nil)
	return n
}

// readPA is ReadPA that also counts the learned bytes and, when learned is
// not nil (and all false), marks which they are.
func (m *PhysMem) readPA(pa uint64, data []byte, known, learned []bool) (nKnown, nLearned int) {
	for len(data) > 0 {
		off := pa & storeMask
		n := min(uint64(len(data)), storeSize-off)
		r := m.chunks[pa>>storeShift]
		c := r.c
		if c == nil {
			clear(data[:n])
			if known != nil {
				clear(known[:n])
			}
		} else {
			copy(data[:n], c.data[off:])
			if known != nil {
				nKnown += knownBits(known[:n], c.known[:], off)
			} else {
				nKnown += countBits(c.known[:], off, off+n)
			}
		}
		if r.sum&wordSpan(off, off+n) != 0 {
			if nl := countBits(r.learned[:], off, off+n); nl > 0 {
				nLearned += nl
				if learned != nil {
					knownBits(learned[:n], r.learned[:], off)
				}
			}
		}
		data = data[n:]
		if known != nil {
			known = known[n:]
		}
		if learned != nil {
			learned = learned[n:]
		}
		pa += n
	}
	return nKnown, nLearned
}

var allTrue [64]bool

// allLearned is the Learned mask of a READ response whose every byte is
// learned (up to the largest MTU), shared read-only.
var allLearned [4096]bool

func init() {
	for i := range allTrue {
		allTrue[i] = true
	}
	for i := range allLearned {
		allLearned[i] = true
	}
}

// knownBits sets known[i] to bit off+i of words, 64 at a time where a
// whole word is aligned, and returns how many are set (so a read that
// fills a mask needs no countBits pass of its own).
func knownBits(known []bool, words []uint64, off uint64) int {
	n := 0
	for i := 0; i < len(known); {
		b := off + uint64(i)
		if b&63 == 0 && len(known)-i >= 64 {
			switch w := words[b>>6]; w {
			case ^uint64(0):
				copy(known[i:i+64], allTrue[:])
				i, n = i+64, n+64
				continue
			case 0:
				clear(known[i : i+64])
				i += 64
				continue
			}
		}
		k := words[b>>6]>>(b&63)&1 != 0
		known[i] = k
		if k {
			n++
		}
		i++
	}
	return n
}

// clearPA forgets the bytes of [pa, pa+n), dropping chunks left empty.
func (m *PhysMem) clearPA(pa, n uint64) {
	end := pa + n
	if n/storeSize > uint64(len(m.chunks)) { // a huge page: visit the chunks, not the range
		for k, r := range m.chunks {
			if lo := k << storeShift; lo >= pa && lo+storeSize <= end {
				delete(m.chunks, k)
			} else if lo < end && lo+storeSize > pa {
				m.clearInChunk(k, r, max(lo, pa)-lo, min(lo+storeSize, end)-lo)
			}
		}
		return
	}
	for pa < end {
		off := pa & storeMask
		l := min(end-pa, storeSize-off)
		if r := m.chunks[pa>>storeShift]; r.c != nil {
			m.clearInChunk(pa>>storeShift, r, off, off+l)
		}
		pa += l
	}
}

func (m *PhysMem) clearInChunk(k uint64, r chunkRef, lo, hi uint64) {
	c := r.c
	clearBits(c.known[:], lo, hi)
	if r.sum&wordSpan(lo, hi) != 0 {
		clearBits(r.learned[:], lo, hi)
	}
	clear(c.data[lo:hi])
	for _, w := range c.known {
		if w != 0 {
			return
		}
	}
	delete(m.chunks, k)
}

// bitRange calls fn for each word of [lo, hi) with the mask of the bits in
// the range.
func bitRange(lo, hi uint64, fn func(w uint64, mask uint64)) {
	for lo < hi {
		w, b := lo>>6, lo&63
		n := min(hi-lo, 64-b)
		mask := ^uint64(0)
		if n < 64 {
			mask = (1<<n - 1) << b
		}
		fn(w, mask)
		lo += n
	}
}

// setBits, clearBits and countBits work on bits [lo, hi) of words a word
// at a time: every write and read of memory runs them on its range, so
// the whole words in the middle take one store or popcount each.
func setBits(words []uint64, lo, hi uint64) {
	if lo >= hi {
		return
	}
	lw, hw, lm, hm := wordMasks(lo, hi)
	if lw == hw {
		words[lw] |= lm & hm
		return
	}
	words[lw] |= lm
	for w := lw + 1; w < hw; w++ {
		words[w] = ^uint64(0)
	}
	words[hw] |= hm
}

func clearBits(words []uint64, lo, hi uint64) {
	if lo >= hi {
		return
	}
	lw, hw, lm, hm := wordMasks(lo, hi)
	if lw == hw {
		words[lw] &^= lm & hm
		return
	}
	words[lw] &^= lm
	clear(words[lw+1 : hw])
	words[hw] &^= hm
}

func countBits(words []uint64, lo, hi uint64) int {
	if lo >= hi {
		return 0
	}
	lw, hw, lm, hm := wordMasks(lo, hi)
	if lw == hw {
		return bits.OnesCount64(words[lw] & lm & hm)
	}
	n := bits.OnesCount64(words[lw]&lm) + bits.OnesCount64(words[hw]&hm)
	for _, w := range words[lw+1 : hw] {
		n += bits.OnesCount64(w)
	}
	return n
}

// wordMasks returns the first and last word of bits [lo, hi) (lo < hi)
// and the masks of the range's bits in them.
func wordMasks(lo, hi uint64) (lw, hw, lm, hm uint64) {
	lw, hw = lo>>6, (hi-1)>>6
	return lw, hw, ^uint64(0) << (lo & 63), ^uint64(0) >> (63 - (hi-1)&63)
}
