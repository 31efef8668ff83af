package cli

import (
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
)

// needsULPLinks reports whether decode shows the links of ULP commands
// (rocetap.nvme.*: a command's completion, data and latency on every
// packet of it), which a first pass completes (firstPass: a regular file
// only): -V, JSON and EK show them, -e and -Y when they name one.
func needsULPLinks(opts *DecodeOptions, flt *filter.Filter) bool {
	return opts.Verbose || opts.Output == "json" || opts.Output == "ek" || namesField(opts.Fields, flt, ulpLinkField)
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
