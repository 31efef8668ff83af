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
		if ulpLinkField(f) {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if ulpLinkField(f.Abbrev) {
				return true
			}
		}
	}
	return false
}

// ulpLinkField reports whether a field shows ULP links a first pass
// completes.
func ulpLinkField(name string) bool {
	return strings.HasPrefix(name, "rocetap.nvme.") || strings.HasPrefix(name, "rocetap.rpc.")
}

// nvmeStats returns the NVMe-oF summary of the capture, nil when it has
// no NVMe-oF connection.
func (an *analysis) nvmeStats() *flow.NVMeStats {
	if l, ok := an.tracker.ULPLinker(decode.ULPNVMe).(*flow.NVMeLinker); ok {
		return l.Stats()
	}
	return nil
}
