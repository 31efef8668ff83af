// Package hca is rocetap's reference HCA model: what a responder has
// registered (protection domains, QPs, memory regions with their MPT
// entries and MTT page tables, memory windows) and, built on it, the IBTA
// responder rules. It knows nothing of capture files: callers hand it
// decoded requests.
//
// The registrations come from an MPT file (docs/mpt-format.md), the same
// format as the .mpt.json files of the Soft-RoCE captures.
package hca
