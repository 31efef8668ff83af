package replay

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/text"
)

// cacheModel is a Model with a translation cache, as *hca.Model is: the
// report then says how the replay's accesses used it.
type cacheModel interface {
	Cache() *hca.TranslationCache
	Mem() *hca.PhysMem
}

// CacheReport is how the replayed accesses used the model's address
// translation cache: every page of every READ, WRITE and ATOMIC the model
// executed is one lookup (hca.TranslationCache).
type CacheReport struct {
	Entries   int    // capacity, in page translations
	PageSize  uint64 // bytes
	Used      int    // translations cached at the end
	Total     hca.CacheStats
	Evictions uint64
	// MRs (by rkey) and QPs (by QPN) with their counts, most misses
	// first.
	MRs, QPs []CacheCount
	// PinnedPages are the pages the live registrations pin;
	// TouchedBytes the emulated memory the capture wrote to.
	PinnedPages, TouchedBytes uint64
}

// CacheCount is the lookups of one MR or QP.
type CacheCount struct {
	Key uint32 // rkey or QPN
	hca.CacheStats
}

// Lookups returns hits plus misses.
func (c CacheCount) Lookups() uint64 { return c.Hits + c.Misses }

func newCacheReport(m cacheModel) *CacheReport {
	c, mem := m.Cache(), m.Mem()
	if c == nil || mem == nil {
		return nil
	}
	r := &CacheReport{Entries: c.Capacity(), PageSize: mem.PageSize(), Used: c.Len(), Total: c.Total(),
		Evictions: c.Evictions(), PinnedPages: mem.PinnedPages(), TouchedBytes: mem.TouchedBytes()}
	r.MRs = cacheCounts(c.PerMR())
	r.QPs = cacheCounts(c.PerQP())
	return r
}

func cacheCounts(m map[uint32]hca.CacheStats) []CacheCount {
	out := make([]CacheCount, 0, len(m))
	for k, s := range m {
		out = append(out, CacheCount{k, s})
	}
	slices.SortFunc(out, func(a, b CacheCount) int {
		if c := cmp.Compare(b.Misses, a.Misses); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

// HitRate returns the percentage of lookups that hit (0 without lookups).
func hitRate(s hca.CacheStats) float64 {
	if n := s.Hits + s.Misses; n > 0 {
		return 100 * float64(s.Hits) / float64(n)
	}
	return 0
}

// Thrashing reports whether translations were evicted and then missed
// again: the accesses touch more pages than the cache holds.
func (c *CacheReport) Thrashing() bool {
	return c.Evictions > 0 && c.Total.Misses > uint64(c.Entries)
}

// maxCacheRows bounds the MRs and QPs the text report lists.
const maxCacheRows = 10

func (c *CacheReport) appendText(b []byte) []byte {
	b = append(b, "\nTranslation cache ("+strconv.Itoa(c.Entries)+" entries of "+strconv.FormatUint(c.PageSize, 10)+"-byte pages): "...)
	n := c.Total.Hits + c.Total.Misses
	if n == 0 {
		return append(b, "no remote memory access executed\n"...)
	}
	b = append(b, text.Plural(int(n), "lookup")+", "+text.Plural(int(c.Total.Hits), "hit")+" ("+
		strconv.FormatFloat(hitRate(c.Total), 'f', 1, 64)+"%), "+text.Plural(int(c.Total.Misses), "miss")+", "+
		text.Plural(int(c.Evictions), "eviction")+"\n"...)
	if c.Thrashing() {
		b = append(b, "  the accesses touch more pages than the cache holds: a NIC with this cache would fetch\n"+
			"  evicted translations from host memory again (--cache-entries and --page-size show what would fit)\n"...)
	}
	b = appendCacheRows(b, "MR rkey", c.MRs, hex32)
	b = appendCacheRows(b, "QP", c.QPs, hex24)
	return b
}

func appendCacheRows(b []byte, what string, rows []CacheCount, name func(uint32) string) []byte {
	if len(rows) == 0 {
		return b
	}
	tw := [][]string{{what, "lookups", "hits", "misses", "hit rate"}}
	for i, r := range rows {
		if i == maxCacheRows {
			break
		}
		tw = append(tw, []string{name(r.Key), strconv.FormatUint(r.Lookups(), 10), strconv.FormatUint(r.Hits, 10),
			strconv.FormatUint(r.Misses, 10), strconv.FormatFloat(hitRate(r.CacheStats), 'f', 1, 64) + "%"})
	}
	b = appendTable(b, tw)
	if len(rows) > maxCacheRows {
		b = append(b, "  ... and "+strconv.Itoa(len(rows)-maxCacheRows)+" more ("+what+"s with fewer misses; -T json lists all)\n"...)
	}
	return b
}

type jsonCacheCount struct {
	Key    string `json:"key"`
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
}

type jsonCache struct {
	Entries      int              `json:"entries"`
	PageSize     uint64           `json:"page_size"`
	Used         int              `json:"used"`
	Hits         uint64           `json:"hits"`
	Misses       uint64           `json:"misses"`
	Evictions    uint64           `json:"evictions"`
	Thrashing    bool             `json:"thrashing"`
	PinnedPages  uint64           `json:"pinned_pages"`
	TouchedBytes uint64           `json:"touched_bytes"`
	MRs          []jsonCacheCount `json:"mrs"`
	QPs          []jsonCacheCount `json:"qps"`
}

func (c *CacheReport) json() *jsonCache {
	j := &jsonCache{Entries: c.Entries, PageSize: c.PageSize, Used: c.Used, Hits: c.Total.Hits, Misses: c.Total.Misses,
		Evictions: c.Evictions, Thrashing: c.Thrashing(), PinnedPages: c.PinnedPages, TouchedBytes: c.TouchedBytes,
		MRs: []jsonCacheCount{}, QPs: []jsonCacheCount{}}
	for _, r := range c.MRs {
		j.MRs = append(j.MRs, jsonCacheCount{hex32(r.Key), r.Hits, r.Misses})
	}
	for _, r := range c.QPs {
		j.QPs = append(j.QPs, jsonCacheCount{hex24(r.Key), r.Hits, r.Misses})
	}
	return j
}

// appendTable appends rows as a table indented by two spaces: the first
// column left-aligned, the others right-aligned.
func appendTable(b []byte, rows [][]string) []byte {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		line := " "
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line += " " + c + pad
			} else {
				line += "  " + pad + c
			}
		}
		b = append(b, strings.TrimRight(line, " ")+"\n"...)
	}
	return b
}
