package capture

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// realCaptures holds the project's real Soft-RoCE captures (copies of
// ../shared/captures, with tshark's packet counts in tshark_summary.txt).
const realCaptures = "../testdata/rxe"

// sharedCaptures is where they came from: -update rebuilds goldens from
// it.
const sharedCaptures = "../../shared/captures"

var update = flag.Bool("update", false, "regenerate testdata goldens with tshark")

// TestRealCaptures reads every shared capture to the packet count tshark
// reported, and checks every packet against gopacket's pcapgo.
func TestRealCaptures(t *testing.T) {
	summary, err := os.ReadFile(filepath.Join(realCaptures, "tshark_summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^=== (\S+\.pcap): (\d+) packets`).FindAllStringSubmatch(string(summary), -1) {
		want[m[1]], _ = strconv.Atoi(m[2])
	}
	files, _ := filepath.Glob(filepath.Join(realCaptures, "*.pcap"))
	if len(files) < 30 || len(want) < 30 {
		t.Fatalf("found %d captures and %d summary lines", len(files), len(want))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			n, ok := want[name]
			if !ok {
				t.Fatalf("%s is not in tshark_summary.txt", name)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != "pcap" {
				t.Errorf("Format() = %q", r.Format())
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("read %d packets, tshark counted %d", len(got), n)
			}
			comparePcapgo(t, path, got)

			// The same file as a non-seekable stream.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sr, err := NewReader(noSeek{f})
			if err != nil {
				t.Fatal(err)
			}
			got2, err := readAll(t, sr)
			if err != nil {
				t.Fatal(err)
			}
			if len(got2) != n || !bytes.Equal(got2[n-1].data, got[n-1].data) {
				t.Fatalf("stream read %d packets, differing from the file read", len(got2))
			}
		})
	}
	// The counts quoted in the task: a guard against a wrong summary parse.
	for name, n := range map[string]int{"read_atomic.pcap": 16, "cm_rping.pcap": 29, "cm_perftest.pcap": 64} {
		if want[name] != n {
			t.Errorf("summary says %s has %d packets, expected %d", name, want[name], n)
		}
	}
}

// comparePcapgo reads path with pcapgo and checks got matches packet for
// packet.
func comparePcapgo(t *testing.T, path string, got []pkt) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		data, ci, err := pr.ReadPacketData()
		if err == io.EOF {
			if i != len(got) {
				t.Fatalf("pcapgo read %d packets, we read %d", i, len(got))
			}
			return
		}
		if err != nil {
			t.Fatalf("pcapgo: %v", err)
		}
		if i >= len(got) {
			t.Fatalf("pcapgo has more packets than our %d", len(got))
		}
		g := got[i]
		if !bytes.Equal(data, g.data) || !ci.Timestamp.Equal(g.info.Timestamp) ||
			ci.CaptureLength != g.info.CaptureLength || ci.Length != g.info.Length ||
			pr.LinkType() != g.info.LinkType {
			t.Fatalf("packet %d differs: pcapgo %v/%d/%d/lt %d, ours %v/%d/%d/lt %d", i+1,
				ci.Timestamp, ci.CaptureLength, ci.Length, pr.LinkType(),
				g.info.Timestamp, g.info.CaptureLength, g.info.Length, g.info.LinkType)
		}
	}
}

// tsharkLine is one packet as tshark reports it.
type tsharkLine struct {
	iface  int
	epoch  string // seconds.nanoseconds
	length int
	caplen int
}

func parseTshark(t *testing.T, text string) []tsharkLine {
	t.Helper()
	var out []tsharkLine
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 4 {
			t.Fatalf("bad golden line %q", line)
		}
		var l tsharkLine
		l.iface, _ = strconv.Atoi(f[0])
		l.epoch = f[1]
		l.length, _ = strconv.Atoi(f[2])
		l.caplen, _ = strconv.Atoi(f[3])
		out = append(out, l)
	}
	return out
}

func epoch(ts time.Time) string {
	return fmt.Sprintf("%d.%09d", ts.Unix(), ts.Nanosecond())
}

// TestTsharkGoldens compares our reader with tshark on files written by
// other programs: Wireshark's own pcapng writer (mergecap, two interfaces of
// different link types; and two such files concatenated, i.e. two
// sections), and an ERF file from our ERFWriter that tshark decoded. The
// goldens are tshark's output, regenerated with -update when tshark is
// installed.
func TestTsharkGoldens(t *testing.T) {
	if *update {
		makeGoldens(t)
	}
	cases := []struct {
		file, format string
		packets      int
	}{
		{"mixed_linktypes.pcapng", "pcapng", 34},
		{"two_sections.pcapng", "pcapng", 68},
		{"read_atomic.erf", "erf", 16},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", c.file+".tshark"))
			if err != nil {
				t.Fatal(err)
			}
			want := parseTshark(t, string(golden))
			r, err := Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != c.format {
				t.Errorf("Format() = %q, want %q", r.Format(), c.format)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(got) != c.packets {
				t.Fatalf("read %d packets, tshark %d, expected %d", len(got), len(want), c.packets)
			}
			linkOf := map[int]layers.LinkType{}
			for i, g := range got {
				w := want[i]
				length, caplen := g.info.Length, g.info.CaptureLength
				if c.format == "erf" {
					// tshark reports the packet inside the ERF record.
					hl := erfHeaderLength(g.data)
					length -= hl
					caplen = min(length, caplen-hl)
				}
				if c.format == "erf" {
					w.iface = 0 // tshark numbers ERF interfaces by host and source id
				}
				if g.info.InterfaceIndex != w.iface || epoch(g.info.Timestamp) != w.epoch ||
					length != w.length || caplen != w.caplen {
					t.Fatalf("packet %d: ours iface %d %s len %d cap %d; tshark iface %d %s len %d cap %d",
						i+1, g.info.InterfaceIndex, epoch(g.info.Timestamp), length, caplen,
						w.iface, w.epoch, w.length, w.caplen)
				}
				if lt, ok := linkOf[g.info.InterfaceIndex]; ok && lt != g.info.LinkType {
					t.Fatalf("packet %d: interface %d changed link type", i+1, g.info.InterfaceIndex)
				}
				linkOf[g.info.InterfaceIndex] = g.info.LinkType
			}
			if c.file == "mixed_linktypes.pcapng" && (linkOf[0] != layers.LinkTypeEthernet || linkOf[1] != layers.LinkTypeRaw) {
				t.Errorf("link types per interface = %v, want 0:1 (Ethernet) 1:101 (raw IP)", linkOf)
			}
			if c.format == "erf" {
				for _, g := range got {
					if g.info.LinkType != linkTypeERF {
						t.Fatalf("ERF packet has link type %d", g.info.LinkType)
					}
				}
			}
		})
	}
}

// makeGoldens rebuilds testdata from the shared captures with Wireshark's
// tools and our ERF writer, then records tshark's view of each file.
func makeGoldens(t *testing.T) {
	for _, tool := range []string{"tshark", "editcap", "mergecap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("-update needs %s: %v", tool, err)
		}
	}
	run := func(name string, args ...string) []byte {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return out
	}
	tmp := t.TempDir()
	src := func(n string) string { return filepath.Join(sharedCaptures, n) }
	run("editcap", "-F", "pcapng", src("cm_rping.pcap"), filepath.Join(tmp, "a.pcapng"))
	run("editcap", "-T", "rawip", src("ud_imm.pcap"), filepath.Join(tmp, "b.pcap"))
	mixed := filepath.Join("testdata", "mixed_linktypes.pcapng")
	run("mergecap", "-F", "pcapng", "-w", mixed, filepath.Join(tmp, "a.pcapng"), filepath.Join(tmp, "b.pcap"))
	m, err := os.ReadFile(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "two_sections.pcapng"), append(m, m...), 0o644); err != nil {
		t.Fatal(err)
	}
	// ERF: the Ethernet frames of read_atomic.pcap as ERF type-2 records,
	// some with extension headers, with a PAD record in the middle.
	r, err := Open(src("read_atomic.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var erf bytes.Buffer
	w := NewERFWriter(&erf)
	for i := 0; ; i++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(erfRecord(info.Timestamp, data, i%3, erfTypeETH)); err != nil {
			t.Fatal(err)
		}
		if i == 7 {
			pad := erfRecord(info.Timestamp, make([]byte, 30), 0, erfTypePad)
			if err := w.WriteRecord(pad); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close()
	if err := os.WriteFile(filepath.Join("testdata", "read_atomic.erf"), erf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"mixed_linktypes.pcapng", "two_sections.pcapng", "read_atomic.erf"} {
		out := run("tshark", "-r", filepath.Join("testdata", f), "-T", "fields",
			"-e", "frame.interface_id", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len")
		var b bytes.Buffer
		bw := bufio.NewWriter(&b)
		fmt.Fprintf(bw, "# tshark -r %s -T fields -e frame.interface_id -e frame.time_epoch -e frame.len -e frame.cap_len\n", f)
		bw.Write(out)
		bw.Flush()
		if err := os.WriteFile(filepath.Join("testdata", f+".tshark"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
