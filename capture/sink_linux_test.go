//go:build linux

package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// TestSinkDiskFull fills a real 64 kB tmpfs (root only).
func TestSinkDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): a container without CAP_SYS_ADMIN?", err)
	}
	defer syscall.Unmount(dir, 0)
	path := filepath.Join(dir, "cap.pcapng")
	s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, bufSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(16, 400) // about 320 kB
	for _, p := range pkts {
		if err = s.WritePacket(p.info, p.data); err != nil {
			break
		}
	}
	if err == nil {
		err = s.Close(LiveStats{}, time.Time{})
	}
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err = %v, want a disk-full WriteError", err)
	}
	t.Log(err)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || uint64(len(got)) != we.Packets {
		t.Fatalf("file holds %d packets, the error says %d", len(got), we.Packets)
	}
	checkPackets(t, got, pkts[:len(got)], true, layers.LinkTypeEthernet)
}
