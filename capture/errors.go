package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
)

// FormatError reports a record that cannot be framed. Reading stops there;
// every packet before it was returned.
type FormatError struct {
	File      string // file name as given to Open ("" if unknown)
	Packet    int    // 1-based number the bad record would have had
	Offset    int64  // byte offset of the bad record's header in the file
	Reason    string // what is wrong, lower case, no trailing period
	Truncated bool   // the file ends inside the record (cut-short capture or download)
	// Compression is "gzip", "zstd" or "lz4" when the capture is
	// compressed: Offset then counts the decompressed bytes.
	Compression string
}

// at is "byte offset N", of the decompressed data for a compressed file.
func (e *FormatError) at() string {
	if e.Compression != "" {
		return fmt.Sprintf("byte offset %d of the %s-decompressed data", e.Offset, e.Compression)
	}
	return fmt.Sprintf("byte offset %d", e.Offset)
}

func (e *FormatError) Error() string {
	var b strings.Builder
	if e.Truncated {
		fmt.Fprintf(&b, "truncated capture %s: file ends inside packet %d at %s: %s; ",
			quoteName(e.File), e.Packet, e.at(), e.Reason)
		if e.Packet > 1 {
			fmt.Fprintf(&b, "the %d packets before it were read (the capture or its download was probably cut short)", e.Packet-1)
		} else {
			b.WriteString("no packet could be read (the capture or its download was probably cut short)")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "corrupt capture %s: packet %d at %s: %s; ",
		quoteName(e.File), e.Packet, e.at(), e.Reason)
	if e.Packet > 1 {
		b.WriteString("the packets before it were read; ")
	}
	b.WriteString("the rest of the file cannot be trusted (try editcap or pcapfix to salvage it)")
	return b.String()
}

// Is reports io.ErrUnexpectedEOF for a truncated file, so callers can tell a
// cut-short file from a corrupt one with errors.Is.
func (e *FormatError) Is(target error) bool {
	return e.Truncated && target == io.ErrUnexpectedEOF
}

func quoteName(name string) string {
	if name == "" {
		return "(unnamed input)"
	}
	return fmt.Sprintf("%q", name)
}

// ErrUnknownFormat matches (errors.Is) the error returned for input that is
// not a capture format this package reads, including an empty file.
var ErrUnknownFormat = errors.New("unknown capture format")

// ErrEmpty matches (errors.Is) the error returned for an empty input.
var ErrEmpty = errors.New("empty capture file")

const supportedFormats = "supported formats: pcap (microsecond or nanosecond, either byte order), pcapng and Endace ERF"

type unknownFormatError struct {
	file  string
	head  []byte // first bytes of the input
	hint  string
	empty bool
}

func (e *unknownFormatError) Error() string {
	if e.empty {
		return fmt.Sprintf("capture %s is empty (0 bytes): nothing to read; %s", quoteName(e.file), supportedFormats)
	}
	var hx strings.Builder
	for i, c := range e.head {
		if i > 0 {
			hx.WriteByte(' ')
		}
		fmt.Fprintf(&hx, "%02x", c)
	}
	msg := fmt.Sprintf("%s is not a capture file rocetap can read (first bytes: %s)", quoteName(e.file), hx.String())
	if e.hint != "" {
		msg += ": " + e.hint
	}
	return msg + "; " + supportedFormats + " (convert other formats with: editcap -F pcapng IN OUT)"
}

func (e *unknownFormatError) Is(target error) bool {
	return target == ErrUnknownFormat || (e.empty && target == ErrEmpty)
}

// formatHint recognizes a few common non-capture inputs.
func formatHint(head []byte) string {
	has := func(p string) bool { return strings.HasPrefix(string(head), p) }
	switch {
	case has("\x1f\x8b"):
		return "it is gzip-compressed; decompress it first (gunzip -k FILE) or pipe it: zcat FILE | rocetap ... -r -"
	case has("\x28\xb5\x2f\xfd"):
		return "it is zstd-compressed; decompress it first (zstd -d FILE) or pipe it: zstdcat FILE | rocetap ... -r -"
	case has("\xfd7zXZ\x00"):
		return "it is xz-compressed; decompress it first (unxz -k FILE) or pipe it: xzcat FILE | rocetap ... -r -"
	case has("BZh"):
		return "it is bzip2-compressed; decompress it first (bunzip2 -k FILE) or pipe it: bzcat FILE | rocetap ... -r -"
	case has("\xa1\xb2\xcd\x34"), has("\x34\xcd\xb2\xa1"):
		return "it is a Kuznetzov \"modified\" pcap; convert it with: editcap -F pcap IN OUT"
	case has("snoop\x00\x00\x00"):
		return "it is a Solaris snoop file; convert it with: editcap -F pcap IN OUT"
	}
	text := len(head) > 0
	for _, c := range head {
		if c < 0x09 || (c > 0x0d && c < 0x20) || c == 0x7f {
			text = false
			break
		}
	}
	if text {
		return "it looks like text (a tshark or tcpdump text dump?), not a capture"
	}
	return ""
}

// openError rewrites an os.Open/Stat error with advice, keeping the cause for
// errors.Is.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot open capture %q: no such file (check the path; use \"-\" to read standard input): %w", path, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot open capture %q: permission denied (check the file's permissions with ls -l, or run as a user that can read it): %w", path, err)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("cannot read capture %q: it is a directory, not a file: %w", path, err)
	}
	return fmt.Errorf("cannot open capture %q: %w", path, err)
}
