package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		path string
		is   error
		want []string
	}{
		{"missing", filepath.Join(dir, "nope.pcap"), fs.ErrNotExist, []string{`"` + filepath.Join(dir, "nope.pcap") + `"`, "no such file", "check the path"}},
		{"directory", dir, nil, []string{"is a directory"}},
		{"empty", write("empty.pcap", nil), ErrEmpty, []string{"empty.pcap", "is empty", "pcapng"}},
		{"html", write("page.pcap", []byte("<html><body>404 Not Found</body></html>\n")),
			ErrUnknownFormat, []string{"page.pcap", "3c 68 74 6d 6c 3e", "looks like text", "supported formats: pcap", "pcapng", "ERF"}},
		{"corrupt gzip", write("x.pcap.gz", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8}),
			nil, []string{"x.pcap.gz", "gzip data is corrupt"}},
		{"binary junk", write("junk", []byte{0, 1, 2, 3, 4, 5, 6, 7, 99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
			ErrUnknownFormat, []string{"00 01 02 03 04 05 06 07 63 00 00 00 00 00 00 00"}},
		{"short pcap header", write("short.pcap", []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0}),
			nil, []string{"truncated capture", "24-byte pcap file header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Open(c.path)
			if err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if os.Getuid() != 0 {
		p := write("secret.pcap", []byte{0xd4, 0xc3, 0xb2, 0xa1})
		os.Chmod(p, 0)
		_, err := Open(p)
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "permissions") {
			t.Errorf("unreadable file: %v", err)
		}
	}
	if _, err := OpenFormat(write("a.pcap", []byte{1}), "snoop"); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("bad format name: %v", err)
	}
}

// TestERFDetection: ERF is recognized by content, by the .erf extension, or
// when forced; plausibility checks reject look-alikes.
func TestERFDetection(t *testing.T) {
	var file []byte
	for _, f := range frames(20, 5, 200) {
		file = append(file, erfRecord(t0, f, 0, erfTypeETH)...)
	}
	if r, err := NewReader(bytes.NewReader(file)); err != nil || r.Format() != "erf" {
		t.Fatalf("5 ERF records not detected: %v", err)
	}
	one := erfRecord(t0, make([]byte, 60), 1, erfTypeETH)
	if r, err := NewReader(bytes.NewReader(one)); err != nil || r.Format() != "erf" {
		t.Fatalf("a complete one-record ERF file not detected: %v", err)
	}
	// Timestamp 0 (1970) and unknown types are not taken for ERF...
	zero := append([]byte(nil), file...)
	clear(zero[:8])
	bad := append([]byte(nil), file...)
	bad[8] = 26
	for name, b := range map[string][]byte{"zero time": zero, "type 26": bad, "cut first record": file[:100]} {
		if _, err := NewReader(bytes.NewReader(b)); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("%s: %v", name, err)
		}
		// ...unless forced, or named .erf.
		if r, err := NewReaderFormat(bytes.NewReader(b), "erf"); err != nil || r.Format() != "erf" {
			t.Errorf("%s forced: %v", name, err)
		}
		p := filepath.Join(t.TempDir(), "x.ERF")
		os.WriteFile(p, b, 0o644)
		if r, err := Open(p); err != nil || r.Format() != "erf" {
			t.Errorf("%s as .erf: %v", name, err)
		} else {
			r.Close()
		}
	}
	// A pcap named .erf is still a pcap.
	p := filepath.Join(t.TempDir(), "x.erf")
	os.WriteFile(p, builtPcap(binary.LittleEndian, false).file, 0o644)
	if r, err := Open(p); err != nil || r.Format() != "pcap" {
		t.Errorf("pcap named .erf: %v", err)
	}
}

func TestFCSLength(t *testing.T) {
	b := pcapBuild(binary.LittleEndian, false, 0x04000000|2<<28|uint32(layers.LinkTypeEthernet), 0, nil)
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r.FCSLength() != 4 {
		t.Errorf("FCSLength() = %d, want 4", r.FCSLength())
	}
	b = pcapBuild(binary.LittleEndian, false, uint32(layers.LinkTypeEthernet), 0, testPackets(1, 1))
	r, _ = NewReader(bytes.NewReader(b))
	if r.FCSLength() != -1 {
		t.Errorf("FCSLength() = %d, want -1", r.FCSLength())
	}
	_, info, err := r.Next()
	if err != nil || info.LinkType != layers.LinkTypeEthernet {
		t.Errorf("link type %d, %v", info.LinkType, err)
	}
}
