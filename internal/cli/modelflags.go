package cli

import (
	"fmt"

	"github.com/rocetap/rocetap/hca"
	"github.com/spf13/pflag"
)

// modelFlags size the reference model's address translation: the flags
// --cache-entries and --page-size of replay and of the --mpt commands.
type modelFlags struct {
	CacheEntries int    // --cache-entries
	PageSize     uint64 // --page-size
}

func (m *modelFlags) register(f *pflag.FlagSet) {
	f.IntVar(&m.CacheEntries, "cache-entries", hca.DefaultCacheEntries,
		"translation cache of the modeled HCA, in page translations (MPT/MTT lookups go through it; replay reports hits and misses)")
	f.Uint64Var(&m.PageSize, "page-size", hca.DefaultPageSize,
		"MTT page size of the modeled HCA in bytes: a power of two from 64 to 1073741824")
}

// options checks the flags and returns the model options with profile p.
func (m *modelFlags) options(p hca.Profile) (hca.Options, error) {
	if m.CacheEntries < 1 || m.CacheEntries > 1<<30 {
		return hca.Options{}, fmt.Errorf("--cache-entries %d: want 1 to 1073741824 page translations (default %d)", m.CacheEntries, hca.DefaultCacheEntries)
	}
	if ps := m.PageSize; ps&(ps-1) != 0 || ps < 64 || ps > 1<<30 {
		return hca.Options{}, fmt.Errorf("--page-size %d: want a power of two from 64 to 1073741824 bytes, e.g. 4096 or 2097152 (2 MiB huge pages)", ps)
	}
	return hca.Options{Profile: p, CacheEntries: m.CacheEntries, PageSize: m.PageSize}, nil
}
