package capture

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// TestSinkHeaderFailureKeepsFiles: a header that cannot be made (a
// capture filter too long for a pcapng option) stops the sink before it
// creates, truncates or removes any file, and the error says so. With
// Overwrite (capture --force) the file that was there stays as it was.
func TestSinkHeaderFailureKeepsFiles(t *testing.T) {
	long := strings.Repeat("udp ", 1<<14+1) // 65540 bytes: over a pcapng option's 65535
	for _, tc := range []struct {
		name      string
		ring      bool // -b filesize:2
		overwrite bool
		existing  bool // a user's file is at the name the sink writes first
	}{
		{"new file", false, false, false},
		{"new ring file", true, false, false},
		{"force over an existing file", false, true, true},
		{"force over an existing ring file", true, true, true},
		{"force, no file there", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cap.pcapng")
			first := path
			var kb int64
			if tc.ring {
				kb = 2
				first = ringName(path, 1, clockStart)
			}
			if tc.existing {
				if err := os.WriteFile(first, []byte("precious"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := onDisk(t, dir)
			clk := &testClock{t: clockStart}
			_, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, Filter: long, FileSizeKB: kb, Overwrite: tc.overwrite, Now: clk.Now})
			if err == nil {
				t.Fatal("a 65540-byte filter was written into a pcapng header")
			}
			for _, w := range []string{first, "capture filter too long", "neither created nor changed", "-f"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := onDisk(t, dir); !slices.Equal(got, before) {
				t.Errorf("directory holds %q, held %q before", got, before)
			}
			if tc.existing {
				if b, err := os.ReadFile(first); string(b) != "precious" {
					t.Errorf("the existing file now holds %q (%v)", b, err)
				}
			}
		})
	}
}

// TestSinkRingDeletesOnlyItsOwnFiles: -b files:N deletes only files this
// run created, and only while they are still the files it wrote: never a
// file that was there before (even one capture --force replaced), nor
// one the user put in the place of a ring file during the capture.
func TestSinkRingDeletesOnlyItsOwnFiles(t *testing.T) {
	const keep = 2
	pkts := testPackets(17, 80) // about 25 files of 2 kB
	for _, tc := range []struct {
		name    string
		before  []int // ring files (by sequence) a user made before the capture
		swap    bool  // once file 1 is finished, the user puts a file of theirs in its place
		kept    []int // files that are not the ring's to delete, by sequence
		notRun  []int // of those, the ones that do not hold this run's packets
		ownKept int   // ring files the capture leaves
	}{
		{"no file there before", nil, false, nil, nil, keep},
		{"force over ring files 1 and 3", []int{1, 3}, false, []int{1, 3}, nil, keep},
		{"force over a ring name never reached", []int{999}, false, []int{999}, []int{999}, keep},
		{"user replaces ring file 1", nil, true, []int{1}, []int{1}, keep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cap.pcapng")
			clk := &testClock{t: clockStart} // never moves: ring names differ only by sequence
			for _, seq := range tc.before {
				if err := os.WriteFile(ringName(path, seq, clockStart), []byte("precious"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, FileSizeKB: 2, Files: keep, Overwrite: true, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pkts {
				if err := s.WritePacket(p.info, p.data); err != nil {
					t.Fatalf("packet %d: %v", i+1, err)
				}
				if tc.swap && s.seq == 2 { // file 1 is finished, and the ring has not deleted it yet
					tc.swap = false
					f1 := ringName(path, 1, clockStart)
					if err := os.Remove(f1); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(f1, []byte("precious"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := s.Close(LiveStats{}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if s.seq < 10 {
				t.Fatalf("only %d files written: the ring never deleted", s.seq)
			}
			var want []string
			for _, seq := range tc.kept {
				want = append(want, ringName(path, seq, clockStart))
			}
			for seq := s.seq - tc.ownKept + 1; seq <= s.seq; seq++ {
				want = append(want, ringName(path, seq, clockStart))
			}
			slices.Sort(want)
			if got := onDisk(t, dir); !slices.Equal(got, want) {
				t.Errorf("directory holds %q, want %q", got, want)
			}
			want = slices.DeleteFunc(want, func(name string) bool {
				return slices.ContainsFunc(tc.notRun, func(seq int) bool { return name == ringName(path, seq, clockStart) })
			})
			if got := s.Files(); !slices.Equal(got, want) {
				t.Errorf("Files() = %q, want %q", got, want)
			}
			for _, name := range want {
				readSinkFile(t, name) // a whole capture file of this run
			}
		})
	}
}
