// Package mpt reads and writes MPT files: what one responder had
// registered while a capture was taken (protection domains, QPs, memory
// regions and windows), in the JSON format of docs/mpt-format.md. It also
// imports what iproute2's `rdma -j resource show` prints about a device;
// package mpt/learn infers an MPT file from a capture.
//
// A File embeds the hca.Config it describes, so the reference model is
// built from it with hca.NewModel(&f.Config, opt). Problems in a file are
// returned as *Error, naming the file, line, column and JSON path.
package mpt
