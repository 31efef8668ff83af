package hca

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

// Profile selects how the modeled responder answers where real responders
// legitimately differ from the InfiniBand spec.
type Profile uint8

// Responder profiles.
const (
	// ProfileIBTA follows the spec (IBA Vol. 1 ch. 9): MR and QP access
	// violations and bounds errors are Remote Access Errors; a misaligned
	// atomic and a SEND longer than the receive buffer are Invalid
	// Requests.
	ProfileIBTA Profile = iota
	// ProfileRXE answers like the Linux Soft-RoCE driver (rdma_rxe, Linux
	// 6.1): a QP without the remote access flag gets NAK Invalid Request;
	// a SEND longer than the receive buffer gets NAK Remote Operational
	// Error; a SEND with Invalidate's receive completion does not report
	// the invalidated rkey. (docs/model.md has the table.)
	ProfileRXE
)

var profileNames = []string{ProfileIBTA: "ibta", ProfileRXE: "rxe"}

// Profiles lists the profile names.
func Profiles() []string { return slices.Clone(profileNames) }

// ProfileByName returns the profile called name ("ibta", "rxe").
func ProfileByName(name string) (Profile, error) {
	for i, n := range profileNames {
		if strings.EqualFold(n, name) {
			return Profile(i), nil
		}
	}
	return 0, fmt.Errorf("unknown responder profile %q: use one of %s", name, strings.Join(profileNames, ", "))
}

func (p Profile) String() string {
	if int(p) < len(profileNames) {
		return profileNames[p]
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// KeyState is the state of an MPT entry (MR or MW).
type KeyState uint8

// MPT entry states.
const (
	KeyValid KeyState = iota
	// KeyInvalid: invalidated (SEND with Invalidate, local invalidate); the
	// registration still exists.
	KeyInvalid
	// KeyFree: deregistered (MR) or deallocated (MW).
	KeyFree
)

func (s KeyState) String() string {
	switch s {
	case KeyValid:
		return "valid"
	case KeyInvalid:
		return "invalid"
	case KeyFree:
		return "free"
	}
	return "?"
}

// MR is a memory region's MPT entry and its MTT.
type MR struct {
	RKey, LKey uint32
	VA, Length uint64 // VA is 0 for ZERO_BASED regions
	PD         uint32
	Access     Access
	State      KeyState
	MTT        *MTT
}

// MW is a memory window's MPT entry.
type MW struct {
	RKey       uint32
	Type       int // 1 or 2
	VA, Length uint64
	PD         uint32
	Access     Access
	MR         *MR
	QPN        uint32 // type 2: the QP it is bound to
	State      KeyState
}

// String names the window as findings do: "MW 0x0800019c (type 2, bound
// to MR 0x00001563)".
func (w *MW) String() string {
	if w.MR == nil {
		return fmt.Sprintf("MW %#08x (type %d)", w.RKey, w.Type)
	}
	return fmt.Sprintf("MW %#08x (type %d, bound to MR %#08x)", w.RKey, w.Type, w.MR.RKey)
}

// Options configure a Model.
type Options struct {
	// Profile is the responder profile.
	Profile Profile
	// PageSize is the MTT page size in bytes (a power of two); 0 is 4096.
	PageSize uint64
	// CacheEntries is the translation cache size in page translations; 0
	// is DefaultCacheEntries.
	CacheEntries int
	// Seed chooses where the emulated physical pages lie.
	Seed uint64
	// ReadSeriesAt: a READ answered by more responses than this is
	// described by one Response with a ReadSeries rather than listed; 0
	// is DefaultReadSeriesAt.
	ReadSeriesAt int
}

// DefaultCacheEntries is the translation cache size when Options names none.
const DefaultCacheEntries = 1024

// Model is the reference HCA: protection domains, memory regions and
// windows (MPT entries with their MTTs over emulated physical memory), and
// the responder's QPs. It is not safe for concurrent use.
type Model struct {
	Profile   Profile
	Responder decode.Node

	mem   *PhysMem
	cache *TranslationCache

	pds   map[uint32]bool
	mrs   mrTable // in registration order, and by non-zero rkey
	mws   map[uint32]*MW
	qps   map[uint32]*QP
	qpOrd []*QP

	// Per-Receive state, reused.
	res     Result
	arena   []byte // READ response data
	known   []bool // which arena bytes are known
	learned []bool // which arena bytes are learned; shorter than arena: grown only when a response has some
	frame   int    // the frame being received
	// A long READ's responses (readSeries).
	readSeriesAt int
	series       ReadSeries
	segs         []Segment
	spans        []pieceSpan

	keyByte uint8 // the last key byte Register handed out

	faults     int // errors of the emulated memory after the checks (fault)
	firstFault error
}

// NewModel builds the model of the responder c describes: every MR is
// registered (pages pinned, MTT built), every MW bound, every QP created
// in the state c implies (a QP that NeverConnected starts in INIT).
func NewModel(c *Config, opt Options) (*Model, error) {
	mem, err := NewPhysMem(opt.PageSize, opt.Seed)
	if err != nil {
		return nil, err
	}
	n := opt.CacheEntries
	if n == 0 {
		n = DefaultCacheEntries
	}
	cache, err := NewTranslationCache(n)
	if err != nil {
		return nil, err
	}
	if opt.ReadSeriesAt <= 0 {
		opt.ReadSeriesAt = DefaultReadSeriesAt
	}
	m := &Model{
		readSeriesAt: opt.ReadSeriesAt,
		Profile:      opt.Profile,
		Responder:    c.Responder,
		mem:          mem,
		cache:        cache,
		pds:          map[uint32]bool{},
		mrs:          newMRTable(len(c.MRs)),
		mws:          map[uint32]*MW{},
		qps:          map[uint32]*QP{},
	}
	for _, pd := range c.PDs {
		m.pds[pd.ID] = true
	}
	for _, r := range c.MRs {
		if _, err := m.RegisterMR(r); err != nil {
			return nil, err
		}
	}
	for _, w := range c.MWs {
		mr := m.mrs.byKey(w.MRRKey)
		if mr == nil {
			return nil, fmt.Errorf("memory window rkey %#08x: bound to MR rkey %#08x, which is not registered", w.RKey, w.MRRKey)
		}
		m.mws[w.RKey] = &MW{RKey: w.RKey, Type: w.Type, VA: w.VA, Length: w.Length, PD: w.PD,
			Access: w.Access, MR: mr, QPN: w.QPN}
	}
	for i := range c.QPs {
		qp := newQP(&c.QPs[i])
		m.qps[qp.QPN] = qp
		m.qpOrd = append(m.qpOrd, qp)
	}
	return m, nil
}

// RegisterMR registers a memory region with the keys given: it pins
// emulated pages and builds the MTT.
func (m *Model) RegisterMR(r MRConfig) (*MR, error) {
	s := m.mrs.nextSlot()
	if err := m.mem.register(&s.mtt, r.VA, r.Length, r.Access); err != nil {
		return nil, fmt.Errorf("memory region rkey %#08x lkey %#08x (va %#x, %d bytes): %w", r.RKey, r.LKey, r.VA, r.Length, err)
	}
	s.mr = MR{RKey: r.RKey, LKey: r.LKey, VA: r.VA, Length: r.Length, PD: r.PD, Access: r.Access, MTT: &s.mtt}
	m.mrs.add(s)
	return &s.mr, nil
}

// DeregisterMR deregisters the MR with the rkey: its pages are unpinned
// and every later access with the key fails.
func (m *Model) DeregisterMR(rkey uint32) bool {
	mr := m.mrs.byKey(rkey)
	if mr == nil || mr.State == KeyFree {
		return false
	}
	mr.State = KeyFree
	m.cache.Invalidate(rkey)
	// The state check above leaves Deregister nothing to refuse.
	m.fault(nil, m.mem.Deregister(mr.MTT))
	return true
}

// Invalidate invalidates the MR or MW with the rkey, as a SEND with
// Invalidate or a local invalidate does. It reports whether a valid entry
// was invalidated. Type 1 windows and MRs without remote access cannot be
// invalidated remotely; Invalidate does not check that: see CanInvalidate.
func (m *Model) Invalidate(rkey uint32) bool {
	if w := m.mws[rkey]; w != nil {
		if w.State != KeyValid {
			return false
		}
		w.State = KeyInvalid
		m.cache.Invalidate(rkey)
		return true
	}
	if mr := m.mrs.byKey(rkey); mr != nil && mr.State == KeyValid {
		mr.State = KeyInvalid
		m.cache.Invalidate(rkey)
		return true
	}
	return false
}

// BindMW binds a memory window (type 1 or 2) over part of an MR.
func (m *Model) BindMW(w MWConfig) error {
	mr := m.mrs.byKey(w.MRRKey)
	if mr == nil || mr.State != KeyValid {
		return fmt.Errorf("bind memory window rkey %#08x: MR rkey %#08x is not a valid registration", w.RKey, w.MRRKey)
	}
	if mr.Access&MWBind == 0 {
		return fmt.Errorf("bind memory window rkey %#08x: MR rkey %#08x lacks MW_BIND", w.RKey, w.MRRKey)
	}
	if w.VA < mr.VA || w.Length > mr.Length || w.VA-mr.VA > mr.Length-w.Length {
		return fmt.Errorf("bind memory window rkey %#08x: [%#x, +%d) is not inside MR rkey %#08x", w.RKey, w.VA, w.Length, w.MRRKey)
	}
	m.mws[w.RKey] = &MW{RKey: w.RKey, Type: w.Type, VA: w.VA, Length: w.Length, PD: w.PD,
		Access: w.Access, MR: mr, QPN: w.QPN}
	return nil
}

// MRs returns the registered memory regions in registration order.
func (m *Model) MRs() []*MR {
	out := make([]*MR, m.mrs.len())
	for i := range out {
		out[i] = m.mrs.at(i)
	}
	return out
}

// MRByKey returns the MR registered with rkey, or nil.
func (m *Model) MRByKey(rkey uint32) *MR { return m.mrs.byKey(rkey) }

// MW returns the memory window with rkey, or nil.
func (m *Model) MW(rkey uint32) *MW { return m.mws[rkey] }

// QP returns the responder QP with the number, or nil.
func (m *Model) QP(qpn uint32) *QP { return m.qps[qpn] }

// QPs returns the responder's QPs in file order.
func (m *Model) QPs() []*QP { return slices.Clone(m.qpOrd) }

// Cache returns the translation cache.
func (m *Model) Cache() *TranslationCache { return m.cache }

// Mem returns the emulated physical memory.
func (m *Model) Mem() *PhysMem { return m.mem }

// AccessOp is the kind of remote access a request makes: decode's MPTOp,
// one enum for the packet's field and the model's check.
type AccessOp = decode.MPTOp

// Remote access kinds.
const (
	OpRead   = decode.MPTOpRead
	OpWrite  = decode.MPTOpWrite
	OpAtomic = decode.MPTOpAtomic
)

// AccessFlag returns the access flag an MR (and a QP) needs for op.
func AccessFlag(o AccessOp) Access {
	switch o {
	case OpRead:
		return RemoteRead
	case OpWrite:
		return RemoteWrite
	case OpAtomic:
		return RemoteAtomic
	}
	return 0
}

// Verdict is the outcome of checking one remote access against the MPT.
type Verdict uint8

// Verdicts, in the order the checks are made.
const (
	VerdictNone         Verdict = iota // not checked
	VerdictOK                          // inside a valid MR or MW the QP may use
	VerdictZeroLength                  // a zero-length READ or WRITE: the rkey is not checked
	VerdictUnknownQP                   // the destination QP is not in the MPT
	VerdictQPAccess                    // the QP lacks the remote access flag
	VerdictUnknownRKey                 // no MR or MW has the rkey
	VerdictInvalidKey                  // the MR or MW was invalidated or deregistered
	VerdictPDMismatch                  // the MR's or MW's PD is not the QP's
	VerdictMWQP                        // a type 2 window bound to another QP
	VerdictAccessDenied                // the MR or MW lacks the access flag
	VerdictOutOfBounds                 // the range is not inside the MR or MW
	VerdictMisaligned                  // an atomic on an address not 8-byte aligned
)

var verdictNames = [...]string{
	VerdictNone: "none", VerdictOK: "ok", VerdictZeroLength: "zero_length",
	VerdictUnknownQP: "unknown_qp", VerdictQPAccess: "qp_access_denied",
	VerdictUnknownRKey: "unknown_rkey", VerdictInvalidKey: "invalid_rkey",
	VerdictPDMismatch: "pd_mismatch", VerdictMWQP: "mw_qp_mismatch",
	VerdictAccessDenied: "access_denied", VerdictOutOfBounds: "out_of_bounds",
	VerdictMisaligned: "misaligned_atomic",
}

// String returns the verdict's short name ("ok", "out_of_bounds"), as in
// the rocetap.mpt.verdict field.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "?"
}

// Allowed reports whether a responder following the MPT executes the
// access.
func (v Verdict) Allowed() bool { return v == VerdictOK || v == VerdictZeroLength }

// Check is the result of checking one remote access against the MPT.
type Check struct {
	Verdict Verdict
	Op      AccessOp
	RKey    uint32
	// Window: the rkey named a memory window, MW; MR is the region
	// behind it. The verdict is about the window (its state, PD, QP,
	// access flags and range), and Describe names it.
	Window bool
	MW     *MW
	MR     *MR
	// Base and Size are the range the key grants: the MR's or the MW's.
	Base, Size uint64
	// Offset is the access's offset from Base (valid when the key was
	// found and VA ≥ Base).
	Offset uint64
	// PA is the physical address of the first byte (HasPA when the first
	// byte is inside the MR).
	PA    uint64
	HasPA bool
	// Over is how many bytes of the access lie outside the range.
	Over uint64
	// Hit is whether the translation cache held the first page.
	Hit bool
}

// Describe says the verdict in words, e.g. "out of bounds by 256 bytes".
// A verdict about a memory window names the window, not an MR: "MW
// 0x0800019c (type 2, bound to MR 0x00001563) lacks REMOTE_WRITE".
func (c *Check) Describe() string {
	if c.MW != nil {
		if s := c.describeMW(); s != "" {
			return s
		}
	}
	switch c.Verdict {
	case VerdictOK:
		return "ok"
	case VerdictZeroLength:
		return "zero-length access, rkey not checked"
	case VerdictUnknownQP:
		return "destination QP not in the MPT"
	case VerdictQPAccess:
		return fmt.Sprintf("QP lacks REMOTE_%s", strings.ToUpper(c.Op.String()))
	case VerdictUnknownRKey:
		return fmt.Sprintf("no MR or MW has rkey %#08x", c.RKey)
	case VerdictInvalidKey:
		return fmt.Sprintf("rkey %#08x is no longer valid", c.RKey)
	case VerdictPDMismatch:
		return "MR in another protection domain"
	case VerdictMWQP:
		return "memory window bound to another QP"
	case VerdictAccessDenied:
		return fmt.Sprintf("MR lacks REMOTE_%s", strings.ToUpper(c.Op.String()))
	case VerdictOutOfBounds:
		return fmt.Sprintf("out of bounds by %d bytes", c.Over)
	case VerdictMisaligned:
		return "atomic address not 8-byte aligned"
	}
	return "not checked"
}

// describeMW says a verdict about the window c.MW in words, or "" for a
// verdict that is not about the key.
func (c *Check) describeMW() string {
	w := c.MW
	switch c.Verdict {
	case VerdictInvalidKey:
		if w.State == KeyValid && w.MR != nil && w.MR.State != KeyValid {
			return fmt.Sprintf("MW %#08x (type %d) is bound to MR %#08x, which is no longer valid", w.RKey, w.Type, w.MR.RKey)
		}
		return fmt.Sprintf("%s is no longer valid", w)
	case VerdictPDMismatch:
		return fmt.Sprintf("%s in another protection domain", w)
	case VerdictMWQP:
		return fmt.Sprintf("%s is bound to QP %#06x, not this one", w, w.QPN)
	case VerdictAccessDenied:
		if c.Op == decode.MPTOpInvalidate {
			return fmt.Sprintf("%s cannot be invalidated remotely: only a type 2 window can", w)
		}
		return fmt.Sprintf("%s lacks REMOTE_%s", w, strings.ToUpper(c.Op.String()))
	case VerdictOutOfBounds:
		return fmt.Sprintf("outside the range of %s by %d bytes", w, c.Over)
	}
	return ""
}

// Check checks a remote access by QP qpn against the MPT: the IBTA rkey
// checks (exists, valid, PD, access, bounds) plus the QP's own access
// flags and atomic alignment, in the order a responder makes them. A
// zero-length READ or WRITE is allowed without looking at the rkey. Check
// does not change the model except for the translation cache's counters.
func (m *Model) Check(qpn uint32, op AccessOp, rkey uint32, va, length uint64) Check {
	return m.check(qpn, op, rkey, va, length, true)
}

// check is Check; with cached false the first page's translation does not
// go through the translation cache (the responder looks up every page it
// touches itself).
func (m *Model) check(qpn uint32, op AccessOp, rkey uint32, va, length uint64, cached bool) Check {
	c := Check{Op: op, RKey: rkey}
	qp := m.qps[qpn]
	if qp == nil {
		c.Verdict = VerdictUnknownQP
		return c
	}
	if qp.Access&AccessFlag(op) == 0 {
		c.Verdict = VerdictQPAccess
		return c
	}
	if length == 0 && op != OpAtomic {
		c.Verdict = VerdictZeroLength
		return c
	}
	var mr *MR
	var access Access
	var pd uint32
	state := KeyValid
	if w := m.mws[rkey]; w != nil {
		c.Window, c.MW, mr, c.Base, c.Size, access, pd, state = true, w, w.MR, w.VA, w.Length, w.Access, w.PD, w.State
		if mr.State != KeyValid {
			state = mr.State
		}
		if state == KeyValid && w.Type == 2 && w.QPN != qpn {
			c.MR = mr
			c.Verdict = VerdictMWQP
			return c
		}
	} else if mr = m.mrs.byKey(rkey); mr != nil {
		c.Base, c.Size, access, pd, state = mr.VA, mr.Length, mr.Access, mr.PD, mr.State
	} else {
		c.Verdict = VerdictUnknownRKey
		return c
	}
	c.MR = mr
	if va >= c.Base {
		c.Offset = va - c.Base
	}
	switch {
	case state != KeyValid:
		c.Verdict = VerdictInvalidKey
		return c
	case pd != qp.PD:
		c.Verdict = VerdictPDMismatch
		return c
	case access&AccessFlag(op) == 0:
		c.Verdict = VerdictAccessDenied
		return c
	}
	if op == OpAtomic {
		length = 8
	}
	// How far the access reaches outside the MR: the bytes before its
	// start, plus the distance from its end to the access's end. Both
	// ends are 65-bit sums (va+length and Base+Size may pass 2^64: an
	// access 257 bytes past an MR that ends at 2^64 is 257 out of bounds,
	// not its whole length).
	end := wide(va, length)
	mrEnd := wide(c.Base, c.Size)
	c.Over = end.minus(mrEnd)
	if va < c.Base {
		c.Over = satAdd(min(c.Base-va, length), c.Over)
	}
	if cached && c.Over == 0 && va >= c.Base && va-c.Base < c.Size {
		if pa, hit, ok := m.cache.Lookup(qpn, rkey, mr.MTT, va); ok {
			c.PA, c.HasPA, c.Hit = pa, true, hit
		}
	} else if pa, ok := mr.MTT.Translate(va); ok {
		c.PA, c.HasPA = pa, true
	}
	if c.Over != 0 {
		c.Verdict = VerdictOutOfBounds
		return c
	}
	if op == OpAtomic && va&7 != 0 {
		c.Verdict = VerdictMisaligned
		return c
	}
	c.Verdict = VerdictOK
	return c
}

// Register registers a memory region the way an HCA does: it picks the
// next MPT index and a key byte, and makes lkey = rkey = index<<8 | key.
// An MR without remote access gets rkey 0 (as rxe gives it). Use
// RegisterMR to register with the keys a capture used.
func (m *Model) Register(pd uint32, va, length uint64, access Access) (*MR, error) {
	if !m.pds[pd] {
		return nil, fmt.Errorf("register MR: protection domain %d does not exist", pd)
	}
	m.keyByte = m.keyByte*5 + 0x3b // a full-period sequence mod 256
	lkey := uint32(m.mrs.len()+1)<<8 | uint32(m.keyByte)
	for m.mrs.byKey(lkey) != nil || m.mws[lkey] != nil {
		lkey += 1 << 8
	}
	rkey := lkey
	if access&(RemoteWrite|RemoteRead|RemoteAtomic|MWBind) == 0 {
		rkey = 0
	}
	return m.RegisterMR(MRConfig{RKey: rkey, LKey: lkey, VA: va, Length: length, PD: pd, Access: access})
}

// u65 is a sum of two uint64s that may pass 2^64.
type u65 struct {
	hi, lo uint64
}

func wide(a, b uint64) u65 {
	lo, carry := bits.Add64(a, b, 0)
	return u65{carry, lo}
}

// minus returns x - y when x > y, else 0, capped at 2^64-1.
func (x u65) minus(y u65) uint64 {
	if x.hi < y.hi || x.hi == y.hi && x.lo <= y.lo {
		return 0
	}
	lo, borrow := bits.Sub64(x.lo, y.lo, 0)
	if x.hi-y.hi-borrow > 0 {
		return ^uint64(0)
	}
	return lo
}

// satAdd adds, stopping at 2^64-1.
func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}
