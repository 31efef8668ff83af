package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compressed captures are read as tshark reads them: a gzip, zstd or LZ4
// (frame format) file or stream is recognised by its magic number,
// whatever its name, and decompressed as it is read. Packet numbers are
// unchanged; the byte offsets in errors count the decompressed data, and
// say so.

// compression names a compressed file's format from its first 4 bytes,
// or returns "".
func compression(head []byte) string {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return "gzip"
	case len(head) >= 4 && binary.LittleEndian.Uint32(head) == 0xfd2fb528:
		return "zstd"
	case len(head) >= 4 && binary.LittleEndian.Uint32(head) == 0x184d2204:
		return "lz4"
	}
	return ""
}

// decompress puts a decompressor in front of r's input when its first
// bytes (already in r.buf) are a compressed file's, and starts r's
// buffer over on the decompressed data.
func (r *Reader) decompress() error {
	kind := compression(r.buf[r.pos:r.end])
	if kind == "" {
		return nil
	}
	in := io.MultiReader(bytes.NewReader(bytes.Clone(r.buf[r.pos:r.end])), r.src)
	dec, closeDec, err := newDecompressor(kind, in)
	if err != nil {
		return fmt.Errorf("reading capture %s: %w", quoteName(r.name), err)
	}
	r.src, r.decClose = dec, closeDec
	r.compression = kind
	r.size = -1 // progress by offset would compare decompressed with compressed bytes
	r.pos, r.end, r.base, r.eof = 0, 0, 0, false
	return nil
}

// newDecompressor returns kind's decompressor over in, and what releases
// it (nil when nothing must).
func newDecompressor(kind string, in io.Reader) (io.Reader, func(), error) {
	switch kind {
	case "gzip":
		z, err := gzip.NewReader(in) // multistream, as cat a.gz b.gz makes
		if err != nil {
			return nil, nil, &DecompressError{Format: kind, Err: err}
		}
		return &decompressed{r: z, kind: kind}, nil, nil
	case "zstd":
		z, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, nil, &DecompressError{Format: kind, Err: err}
		}
		return &decompressed{r: z, kind: kind}, z.Close, nil
	case "lz4":
		return &decompressed{r: lz4.NewReader(in), kind: kind}, nil, nil
	}
	return in, nil, nil
}

// Decompressed returns a reader of in's data, decompressed when it is a
// gzip, zstd or LZ4 stream, with the format's name ("" when in is not
// compressed: the reader then gives in's bytes unchanged). A reader that
// must read a capture at random (the TUI's index) spools this.
func Decompressed(in io.Reader) (io.Reader, string, error) {
	br := bufio.NewReaderSize(in, 64<<10)
	head, _ := br.Peek(4)
	kind := compression(head)
	if kind == "" {
		return br, "", nil
	}
	dec, _, err := newDecompressor(kind, br)
	return dec, kind, err
}

// decompressed names the format in a decompression error.
type decompressed struct {
	r    io.Reader
	kind string
}

func (d *decompressed) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return n, io.EOF // a cut-short compressed file: the records say where
		}
		return n, &DecompressError{Format: d.kind, Err: err}
	}
	return n, err
}

// DecompressError is damaged compressed data (a bad checksum, an invalid
// block). Met inside the records, the reader reports it as a corrupt
// capture (a *FormatError) from the packet it was reading.
type DecompressError struct {
	Format string // gzip, zstd, lz4
	Err    error
}

func (e *DecompressError) Error() string {
	return fmt.Sprintf("the %s data is corrupt (%v)", e.Format, e.Err)
}

func (e *DecompressError) Unwrap() error { return e.Err }
