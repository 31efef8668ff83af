// Package hca is rocetap's reference HCA model: what a responder has
// registered (protection domains, QPs, memory regions with their MPT
// entries and MTT page tables, memory windows) and, built on it, the IBTA
// responder rules. It knows nothing of capture or MPT files: callers
// build the model from a Config and hand it decoded requests.
//
// Package mpt reads the Config from an MPT file (docs/mpt-format.md), the
// same format as the .mpt.json files of the Soft-RoCE captures. The
// responder's checks and what each transport does when one fails are
// listed in docs/model.md, one-to-one with checks.go.
package hca
