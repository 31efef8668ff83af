package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/rocetap/rocetap/internal/testcap"
)

// ngTestBlock is one block of a little-endian pcapng file, parsed
// independently of the Reader.
type ngTestBlock struct {
	typ  uint32
	body []byte // between the length fields
}

// ngTestBlocks splits a little-endian pcapng file into blocks, checking
// the framing.
func ngTestBlocks(t *testing.T, b []byte) []ngTestBlock {
	t.Helper()
	var out []ngTestBlock
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			t.Fatalf("%d bytes left at offset %d: not a whole block", len(b)-off, off)
		}
		typ := binary.LittleEndian.Uint32(b[off:])
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		if n < 12 || n%4 != 0 || off+n > len(b) {
			t.Fatalf("block 0x%x at offset %d: bad length %d (file %d bytes)", typ, off, n, len(b))
		}
		if tail := int(binary.LittleEndian.Uint32(b[off+n-4:])); tail != n {
			t.Fatalf("block 0x%x at offset %d: trailing length %d, leading %d", typ, off, tail, n)
		}
		out = append(out, ngTestBlock{typ, b[off+8 : off+n-4]})
		off += n
	}
	return out
}

// ngTestOptions parses an option list that must end with opt_endofopt
// (or be empty), and returns the options by code.
func ngTestOptions(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	opts := map[uint16][]byte{}
	if len(b) == 0 {
		return opts
	}
	for {
		if len(b) < 4 {
			t.Fatalf("option list ends without opt_endofopt")
		}
		code, l := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if code == 0 {
			if l != 0 || len(b) != 4 {
				t.Fatalf("opt_endofopt with length %d and %d bytes after it", l, len(b)-4)
			}
			return opts
		}
		padded := 4 + (l+3)&^3
		if padded > len(b) {
			t.Fatalf("option %d of length %d overruns the block", code, l)
		}
		if _, dup := opts[code]; dup {
			t.Fatalf("option %d twice", code)
		}
		opts[code] = b[4 : 4+l]
		b = b[padded:]
	}
}

// isbTicks reads an isb_starttime or isb_endtime value: high word first.
func isbTicks(v []byte) uint64 {
	return uint64(binary.LittleEndian.Uint32(v))<<32 | uint64(binary.LittleEndian.Uint32(v[4:]))
}

func ticksOf(ts time.Time, nano bool) uint64 {
	if nano {
		return uint64(ts.UnixNano())
	}
	return uint64(ts.UnixMicro())
}

// runTool runs an oracle and returns its standard output; any failure or
// message on standard error (besides the root warning) fails the test.
func runTool(t *testing.T, path string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var msgs []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "Running as user") {
			msgs = append(msgs, l)
		}
	}
	if err != nil || len(msgs) > 0 {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, strings.Join(msgs, "\n"))
	}
	return stdout.String()
}

// TestPcapngInterfaceStats writes packets, then a statistics block, and
// checks the block byte by byte, that the Reader skips it, and what tshark
// makes of the file: every packet, and (read as a file format by its
// pcapng file dissector) every option of the interface and the statistics.
func TestPcapngInterfaceStats(t *testing.T) {
	start := time.Date(2026, 11, 23, 15, 45, 1, 123456789, time.UTC)
	end := start.Add(90*time.Second + 987654321)
	all := InterfaceStats{Timestamp: end, Start: start, End: end,
		Received: 50, HasReceived: true, IfDrops: 1 << 40, HasIfDrops: true, OSDrops: 7, HasOSDrops: true}
	for _, tc := range []struct {
		name   string
		nano   bool
		ifaces int // the statistics are for the last interface
		st     InterfaceStats
		len    int
	}{
		{"all options, nanoseconds", true, 1, all, 24 + 5*12 + 4},
		{"all options, microseconds", false, 1, all, 88},
		{"counters only", true, 1, InterfaceStats{Timestamp: end, Received: 3, HasReceived: true, OSDrops: 0, HasOSDrops: true}, 24 + 2*12 + 4},
		{"times only", true, 1, InterfaceStats{Timestamp: end, Start: start, End: end}, 24 + 2*12 + 4},
		{"no options", true, 1, InterfaceStats{Timestamp: end}, 24},
		{"second interface", true, 2, all, 88},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkts := testPackets(3, 50)
			var buf bytes.Buffer
			w, err := NewPcapngWriter(&buf)
			if err != nil {
				t.Fatal(err)
			}
			io := InterfaceOptions{Name: "eth0", Description: "RoCE port 1", Filter: "udp dst port 4791", Nanoseconds: tc.nano}
			var id int
			for i := range tc.ifaces {
				if id, err = w.AddInterfaceWith(layers.LinkTypeEthernet, 9000+i, io); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range pkts {
				info := p.info
				info.InterfaceIndex = id
				if err := w.WritePacket(info, p.data); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteInterfaceStats(id, tc.st); err != nil {
				t.Fatal(err)
			}
			if got := ngISBLen(tc.st); got != tc.len {
				t.Errorf("ngISBLen = %d, want %d", got, tc.len)
			}

			// The block, parsed independently.
			blocks := ngTestBlocks(t, buf.Bytes())
			if len(blocks) != 1+tc.ifaces+len(pkts)+1 {
				t.Fatalf("%d blocks, want %d", len(blocks), 1+tc.ifaces+len(pkts)+1)
			}
			idb := blocks[1]
			iopts := ngTestOptions(t, idb.body[8:])
			if string(iopts[2]) != "eth0" || string(iopts[3]) != "RoCE port 1" || string(iopts[11]) != "\x00udp dst port 4791" {
				t.Errorf("IDB options %q", iopts)
			}
			isb := blocks[len(blocks)-1]
			if isb.typ != 5 || len(isb.body)+12 != tc.len {
				t.Fatalf("last block: type %d, %d bytes; want 5, %d", isb.typ, len(isb.body)+12, tc.len)
			}
			if got := binary.LittleEndian.Uint32(isb.body); got != uint32(id) {
				t.Errorf("ISB interface %d, want %d", got, id)
			}
			if got := isbTicks(isb.body[4:]); got != ticksOf(tc.st.Timestamp, tc.nano) {
				t.Errorf("ISB timestamp %d, want %d", got, ticksOf(tc.st.Timestamp, tc.nano))
			}
			opts := ngTestOptions(t, isb.body[12:])
			wantOpts := map[uint16]uint64{}
			if !tc.st.Start.IsZero() {
				wantOpts[2] = ticksOf(tc.st.Start, tc.nano)
			}
			if !tc.st.End.IsZero() {
				wantOpts[3] = ticksOf(tc.st.End, tc.nano)
			}
			if tc.st.HasReceived {
				wantOpts[4] = tc.st.Received
			}
			if tc.st.HasIfDrops {
				wantOpts[5] = tc.st.IfDrops
			}
			if tc.st.HasOSDrops {
				wantOpts[7] = tc.st.OSDrops
			}
			if len(opts) != len(wantOpts) {
				t.Errorf("ISB options %v, want codes of %v", opts, wantOpts)
			}
			for code, want := range wantOpts {
				v, ok := opts[code]
				if !ok || len(v) != 8 {
					t.Errorf("option %d: %x, want 8 bytes", code, v)
					continue
				}
				got := binary.LittleEndian.Uint64(v)
				if code == 2 || code == 3 {
					got = isbTicks(v)
				}
				if got != want {
					t.Errorf("option %d = %d, want %d", code, got, want)
				}
			}

			// Our reader skips it.
			got, err := readBytes(t, buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			checkPackets(t, got, pkts, tc.nano, layers.LinkTypeEthernet)

			// tshark reads every packet, and its pcapng file dissector
			// sees the options.
			tshark := testcap.Tshark(t)
			path := filepath.Join(t.TempDir(), "stats.pcapng")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			frames := strings.Fields(runTool(t, tshark, "-r", path, "-T", "fields", "-e", "frame.number"))
			if len(frames) != len(pkts) || frames[len(frames)-1] != strconv.Itoa(len(pkts)) {
				t.Fatalf("tshark reads %d frames, want %d", len(frames), len(pkts))
			}
			out := runTool(t, tshark, "-X", "read_format:MIME Files Format", "-r", path, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;",
				"-e", "pcapng.block.type", "-e", "pcapng.options.option.data.interface.name",
				"-e", "pcapng.options.option.data.interface.description", "-e", "pcapng.options.option.data.interface.filter.string",
				"-e", "pcapng.options.option.code",
				"-e", "pcapng.options.option.data.interface.received", "-e", "pcapng.options.option.data.interface.dropped",
				"-e", "pcapng.options.option.data.interface.dropped_by_os", "-e", "_ws.expert")
			f := strings.Split(strings.TrimRight(out, "\n"), "\t")
			if len(f) != 9 {
				t.Fatalf("tshark pcapng dissector: %d fields in %q", len(f), out)
			}
			types := strings.Split(f[0], ";")
			if len(types) != len(blocks) || types[len(types)-1] != "0x00000005" {
				t.Errorf("tshark sees blocks %v, want %d ending with the ISB (0x00000005)", types, len(blocks))
			}
			wantName := strings.TrimSuffix(strings.Repeat("eth0;", tc.ifaces), ";")
			if f[1] != wantName || !strings.HasPrefix(f[2], "RoCE port 1") || !strings.HasPrefix(f[3], "udp dst port 4791") {
				t.Errorf("tshark interface options: name %q description %q filter %q", f[1], f[2], f[3])
			}
			codes := strings.Split(f[4], ";")
			var isbCodes []string
			for code := range wantOpts {
				isbCodes = append(isbCodes, strconv.Itoa(int(code)))
			}
			if len(wantOpts) > 0 {
				isbCodes = append(isbCodes, "0")
			}
			if tail := codes[max(0, len(codes)-len(isbCodes)):]; !sameSet(tail, isbCodes) {
				t.Errorf("tshark sees ISB option codes %v, want %v", tail, isbCodes)
			}
			for i, code := range []uint16{4, 5, 7} {
				want := ""
				if v, ok := wantOpts[code]; ok {
					want = strconv.FormatUint(v, 10)
				}
				if f[5+i] != want {
					t.Errorf("tshark: option %d = %q, want %q", code, f[5+i], want)
				}
			}
			if f[8] != "" {
				t.Errorf("tshark's pcapng dissector reports problems: %s", f[8])
			}
			info := runTool(t, testcap.Tool(t, "capinfos", "it comes with tshark: `apt-get install -y wireshark-common`"), path)
			if !strings.Contains(info, "Number of stat entries = 1") || !strings.Contains(info, fmt.Sprintf("Number of packets:   %d", len(pkts))) {
				t.Errorf("capinfos does not count 1 statistics block and %d packets:\n%s", len(pkts), info)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, s := range a {
		n[s]++
	}
	for _, s := range b {
		n[s]--
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestPcapngInterfaceStatsErrors: statistics for an interface that was
// not added, and times pcapng cannot hold, are refused with nothing
// written.
func TestPcapngInterfaceStatsErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		iface   int
		st      InterfaceStats
		wantErr string
	}{
		{"no such interface", 1, InterfaceStats{}, "interface 1 was not added (have 1)"},
		{"negative interface", -1, InterfaceStats{}, "interface -1 was not added"},
		{"timestamp before 1970", 0, InterfaceStats{Timestamp: time.Unix(-1, 0)}, "before 1970"},
		{"start before 1970", 0, InterfaceStats{Start: time.Unix(-5, 0)}, "before 1970"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, _ := NewPcapngWriter(&buf)
			if _, err := w.AddInterface(layers.LinkTypeEthernet, 0, "", true); err != nil {
				t.Fatal(err)
			}
			n := buf.Len()
			err := w.WriteInterfaceStats(tc.iface, tc.st)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if buf.Len() != n {
				t.Errorf("%d bytes written with the error", buf.Len()-n)
			}
		})
	}
	w, _ := NewPcapngWriter(&bytes.Buffer{})
	if _, err := w.AddInterfaceWith(layers.LinkTypeEthernet, 0, InterfaceOptions{Filter: strings.Repeat("x", 0xfff0)}); err == nil {
		t.Error("a filter longer than an option can hold was accepted")
	}
}
