package cli

import (
	"os"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
)

// needsULPLinks reports whether decode shows the links of ULP commands
// (rocetap.nvme.*: a command's completion, data and latency on every
// packet of it) and can read the capture twice: -V, JSON and EK show them,
// -e and -Y when they name one; the input must be a regular file (not
// stdin, which is read once).
func needsULPLinks(opts *DecodeOptions, flt *filter.Filter) bool {
	if opts.Path == "" || opts.Path == "-" {
		return false
	}
	if st, err := os.Stat(opts.Path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	if opts.Verbose || opts.Output == "json" || opts.Output == "ek" {
		return true
	}
	for _, f := range opts.Fields {
		if strings.HasPrefix(f, "rocetap.nvme.") {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if strings.HasPrefix(f.Abbrev, "rocetap.nvme.") {
				return true
			}
		}
	}
	return false
}

// nvmeStats returns the NVMe-oF summary of the capture, nil when it has
// no NVMe-oF connection.
func (an *analysis) nvmeStats() *flow.NVMeStats {
	if l, ok := an.tracker.ULPLinker(decode.ULPNVMe).(*flow.NVMeLinker); ok {
		return l.Stats()
	}
	return nil
}
