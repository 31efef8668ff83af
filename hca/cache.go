package hca

import (
	"fmt"
	"maps"
)

// CacheStats counts translation cache lookups.
type CacheStats struct {
	Hits, Misses uint64
}

// TranslationCache models a NIC's address translation cache: an LRU of a
// fixed number of page translations, keyed by MR key and virtual page
// number (pages of the MR's MTT). It counts hits and misses in total, per
// MR key and per QP, so scattered access patterns that would thrash a real
// NIC's cache show up. Lookups are O(1) and a hit does not allocate.
//
// Entries are allocated as misses fill the cache, up to its capacity: the
// capacity is a user's flag (up to 2^30), and a cache sized for a large
// NIC costs only the translations a capture looks up.
//
// A TranslationCache is not safe for concurrent use.
type TranslationCache struct {
	capacity  int
	index     map[cacheKey]int32
	ents      []cacheEntry // slots; linked from head (most recent) to tail
	head      int32        // -1 when empty
	tail      int32
	freeSlots []int32 // slots emptied by Invalidate

	total     CacheStats
	evictions uint64
	byMR      map[uint32]CacheStats
	byQP      map[uint32]CacheStats
}

type cacheKey struct {
	key uint32
	vpn uint64
}

type cacheEntry struct {
	k          cacheKey
	t          *MTT
	pa         uint64 // physical address of the page
	prev, next int32
}

// NewTranslationCache returns an empty cache of entries translations.
func NewTranslationCache(entries int) (*TranslationCache, error) {
	if entries <= 0 || entries > 1<<30 {
		return nil, fmt.Errorf("translation cache: %d entries: want 1 to 2^30", entries)
	}
	return &TranslationCache{
		capacity: entries,
		index:    make(map[cacheKey]int32),
		head:     -1,
		tail:     -1,
		byMR:     make(map[uint32]CacheStats),
		byQP:     make(map[uint32]CacheStats),
	}, nil
}

// Lookup translates va in the MR with key key, whose MTT is t, for QP qpn.
// hit says whether the page translation was cached; on a miss it is
// cached, evicting the least recently used one when the cache is full. An
// address outside the MR gives ok false and counts as neither (a NIC
// checks the MR's bounds before translating). An entry cached for another
// MTT under the same key (the MR re-registered) is a miss.
func (c *TranslationCache) Lookup(qpn, key uint32, t *MTT, va uint64) (pa uint64, hit bool, ok bool) {
	if t.freed || va < t.va || va-t.va >= t.length {
		return 0, false, false
	}
	k := cacheKey{key: key, vpn: va >> t.shift}
	off := va & (t.pageSize() - 1)
	i, found := c.index[k]
	if found && c.ents[i].t == t {
		c.touch(i)
		c.count(qpn, key, true)
		return c.ents[i].pa + off, true, true
	}
	pa, _ = t.Translate(va)
	switch {
	case found: // stale: refresh in place
	case len(c.freeSlots) > 0:
		i = c.freeSlots[len(c.freeSlots)-1]
		c.freeSlots = c.freeSlots[:len(c.freeSlots)-1]
		c.pushFront(i)
	case len(c.ents) < c.capacity:
		i = int32(len(c.ents))
		c.ents = append(c.ents, cacheEntry{})
		c.pushFront(i)
	default:
		i = c.tail
		delete(c.index, c.ents[i].k)
		c.evictions++
	}
	e := &c.ents[i]
	e.k, e.t, e.pa = k, t, pa-off
	c.index[k] = i
	c.touch(i)
	c.count(qpn, key, false)
	return pa, false, true
}

func (c *TranslationCache) count(qpn, key uint32, hit bool) {
	mr, qp := c.byMR[key], c.byQP[qpn]
	if hit {
		c.total.Hits++
		mr.Hits++
		qp.Hits++
	} else {
		c.total.Misses++
		mr.Misses++
		qp.Misses++
	}
	c.byMR[key], c.byQP[qpn] = mr, qp
}

func (c *TranslationCache) unlink(i int32) {
	e := &c.ents[i]
	if e.prev >= 0 {
		c.ents[e.prev].next = e.next
	} else {
		c.head = e.next
	}
	if e.next >= 0 {
		c.ents[e.next].prev = e.prev
	} else {
		c.tail = e.prev
	}
}

func (c *TranslationCache) pushFront(i int32) {
	e := &c.ents[i]
	e.prev, e.next = -1, c.head
	if c.head >= 0 {
		c.ents[c.head].prev = i
	} else {
		c.tail = i
	}
	c.head = i
}

// touch makes slot i, which is linked, the most recently used.
func (c *TranslationCache) touch(i int32) {
	if c.head != i {
		c.unlink(i)
		c.pushFront(i)
	}
}

// Invalidate drops the translations cached for MR key key, as a NIC does
// when the MR is deregistered or invalidated, and returns how many.
func (c *TranslationCache) Invalidate(key uint32) int {
	n := 0
	for i := c.head; i >= 0; {
		next := c.ents[i].next
		if c.ents[i].k.key == key {
			delete(c.index, c.ents[i].k)
			c.unlink(i)
			c.ents[i] = cacheEntry{}
			c.freeSlots = append(c.freeSlots, i)
			n++
		}
		i = next
	}
	return n
}

// Len returns the number of cached translations.
func (c *TranslationCache) Len() int { return len(c.index) }

// Capacity returns the number of entries the cache holds at most.
func (c *TranslationCache) Capacity() int { return c.capacity }

// Total returns the hits and misses of all lookups.
func (c *TranslationCache) Total() CacheStats { return c.total }

// Evictions returns how many translations were evicted to make room.
func (c *TranslationCache) Evictions() uint64 { return c.evictions }

// MR returns the hits and misses of lookups in the MR with key key.
func (c *TranslationCache) MR(key uint32) CacheStats { return c.byMR[key] }

// QP returns the hits and misses of lookups for QP qpn.
func (c *TranslationCache) QP(qpn uint32) CacheStats { return c.byQP[qpn] }

// PerMR returns a copy of the counts of every MR key looked up.
func (c *TranslationCache) PerMR() map[uint32]CacheStats { return maps.Clone(c.byMR) }

// PerQP returns a copy of the counts of every QP that looked up.
func (c *TranslationCache) PerQP() map[uint32]CacheStats { return maps.Clone(c.byQP) }
