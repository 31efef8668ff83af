// Package conformance checks rocetap against tshark, the independent
// oracle: every field both know prints the same on every capture in
// testdata/, and every Wireshark field rocetap registers has tshark's type
// and base.
package conformance

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/cli"
	"github.com/rocetap/rocetap/internal/testcap"
)

type tsField struct{ typ, base string }

// tsharkFields parses `tshark -G fields`.
func tsharkFields(t *testing.T, ts string) map[string]tsField {
	t.Helper()
	out, err := exec.Command(ts, "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	m := map[string]tsField{}
	for _, line := range strings.Split(string(out), "\n") {
		c := strings.Split(line, "\t")
		if len(c) >= 7 && c[0] == "F" {
			m[c[2]] = tsField{c[3], c[5]}
		}
	}
	return m
}

// compared says which fields the conformance test compares: every field
// tshark also has, except those whose value depends on the reader's
// locale or on tshark's choice of sub-dissector.
func compared(name string) bool {
	switch name {
	case "frame.time", // tshark prints it in the local time zone
		"frame.protocols",    // tshark names the payload's sub-dissector
		"infiniband.payload", // tshark hands payload to "data": data.data is compared
		"frame.interface_id": // tshark omits it for pcap files
		return false
	}
	return !ulpField(name)
}

// tsharkArgs are the options that make tshark decode every frame as
// InfiniBand the way rocetap does: the UDP destination port decides, and
// no heuristic sub-dissector claims the payload.
var tsharkArgs = []string{
	"--disable-protocol", "rpcordma", "--disable-protocol", "smb_direct", "--disable-protocol", "smc",
	"--disable-protocol", "nvme-rdma", "--disable-protocol", "lnet", "--disable-protocol", "iser",
	"--disable-protocol", "infiniband.eoib", "--disable-protocol", "infiniband_sdp", "--disable-protocol", "fcoib",
}

// perFile lists extra tshark options for captures where tshark would
// otherwise pick another dissector (README: "Where rocetap and tshark differ").
var perFile = map[string][]string{
	// A RoCEv2 frame from UDP source port 53: tshark's UDP dissector tries
	// the lower port first and calls it DNS; rocetap goes by the
	// destination port 4791 like the RoCEv2 spec says.
	"vlan_qinq_ipv6.pcap": {"-d", "udp.port==53,infiniband"},
}

// linkTypeInfiniBand is LINKTYPE_INFINIBAND (247), which tshark 4.0
// cannot open ("network type 247 unknown or unsupported"). Such a capture
// is compared through ibInERF: the same records wrapped in ERF InfiniBand
// records (type 21), as ibdump and DAG cards write them, which tshark
// reads.
const linkTypeInfiniBand = 247

// ibInERF rewrites a LINKTYPE_INFINIBAND pcap as a LINKTYPE_ERF pcap of
// ERF type 21 records holding the same LRH-first frames and timestamps.
// It returns "" for any other capture.
func ibInERF(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 24 || binary.LittleEndian.Uint32(data) != 0xa1b2c3d4 || binary.LittleEndian.Uint32(data[20:]) != linkTypeInfiniBand {
		return ""
	}
	out := append([]byte(nil), data[:24]...)
	binary.LittleEndian.PutUint32(out[20:], 197) // LINKTYPE_ERF
	binary.LittleEndian.PutUint32(out[16:], 65535)
	for off := 24; off+16 <= len(data); {
		sec, usec := binary.LittleEndian.Uint32(data[off:]), binary.LittleEndian.Uint32(data[off+4:])
		incl, orig := int(binary.LittleEndian.Uint32(data[off+8:])), int(binary.LittleEndian.Uint32(data[off+12:]))
		if off+16+incl > len(data) {
			t.Fatalf("%s: record at byte %d runs past the end", path, off)
		}
		frame := data[off+16 : off+16+incl]
		off += 16 + incl
		erf := make([]byte, 16, 16+len(frame))
		binary.LittleEndian.PutUint64(erf, uint64(sec)<<32|(uint64(usec)<<32)/1e6)
		erf[8], erf[9] = 21, 0x04 // InfiniBand, varying-length record
		binary.BigEndian.PutUint16(erf[10:], uint16(16+len(frame)))
		binary.BigEndian.PutUint16(erf[14:], uint16(orig))
		erf = append(erf, frame...)
		rec := binary.LittleEndian.AppendUint32(nil, sec)
		rec = binary.LittleEndian.AppendUint32(rec, usec)
		rec = binary.LittleEndian.AppendUint32(rec, uint32(len(erf)))
		rec = binary.LittleEndian.AppendUint32(rec, uint32(16+orig))
		out = append(append(out, rec...), erf...)
	}
	conv := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".pcap")+".erf.pcap")
	if err := os.WriteFile(conv, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return conv
}

func captures(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../../testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "fuzz" {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "ulp" {
			// NVMe-oF captures: TestULPFieldsMatchTshark compares them
			// with tshark's ULP dissectors on. With them off (tsharkArgs)
			// tshark reads a 16-byte CQE starting 08 00 00 00 as an IPoIB
			// header and decodes IPv4 in it.
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".pcap", ".pcapng", ".erf":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no captures under testdata/")
	}
	return files
}

func TestFieldsMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	known := tsharkFields(t, ts)
	var names []string
	for _, f := range decode.Fields() {
		if _, ok := known[f.Abbrev]; ok && compared(f.Abbrev) && f.Type != decode.FTProtocol && f.Abbrev != "frame.number" {
			names = append(names, f.Abbrev)
		}
	}
	sort.Strings(names)
	names = append([]string{"frame.number"}, names...)
	totalCells, totalFrames := 0, 0
	for _, file := range captures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if conv := ibInERF(t, file); conv != "" {
				t.Logf("tshark 4.0 cannot open link type 247: comparing %s wrapped in ERF InfiniBand records", conv)
				file = conv
			}
			args := append([]string{"-r", file, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"}, tsharkArgs...)
			args = append(args, perFile[filepath.Base(file)]...)
			for _, n := range names {
				args = append(args, "-e", n)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(ts, args...)
			cmd.Stderr = &stderr
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("tshark %s: %v\n%s", file, err, stderr.String())
			}
			rargs := []string{"decode", "-r", file, "-T", "fields"}
			for _, n := range names {
				rargs = append(rargs, "-e", n)
			}
			var out, errOut bytes.Buffer
			if code := cli.Main(rargs, cli.IO{Out: &out, ErrOut: &errOut}); code != 0 {
				t.Fatalf("rocetap %v: exit %d: %s", rargs, code, errOut.String())
			}
			wl, gl := lines(want), lines(out.Bytes())
			if len(wl) != len(gl) {
				t.Fatalf("tshark printed %d frames, rocetap %d", len(wl), len(gl))
			}
			col := map[string]int{}
			for j, n := range names {
				col[n] = j
			}
			bad := map[string]int{}
			var examples []string
			for i := range wl {
				wc, gc := strings.Split(wl[i], "\t"), strings.Split(gl[i], "\t")
				if len(wc) != len(names) || len(gc) != len(names) {
					t.Fatalf("frame %d: %d/%d columns, want %d", i+1, len(wc), len(gc), len(names))
				}
				for j := range names {
					totalCells++
					if wc[j] != gc[j] && !knownDifference(names[j], wc[j], gc[j], func(f string) string { return gc[col[f]] }) {
						if bad[names[j]] == 0 {
							examples = append(examples, fmt.Sprintf("frame %d %s: tshark %q, rocetap %q", i+1, names[j], trunc(wc[j]), trunc(gc[j])))
						}
						bad[names[j]]++
					}
				}
			}
			totalFrames += len(wl)
			for _, e := range examples {
				t.Error(e)
			}
		})
	}
	t.Logf("compared %d fields on %d frames: %d values", len(names), totalFrames, totalCells)
}

// knownDifference accepts the places where tshark 4.0 is wrong and rocetap
// is not; each is listed in README.md ("Where rocetap and tshark differ").
// row returns rocetap's value of another field of the same frame.
func knownDifference(field, tshark, rocetap string, row func(string) string) bool {
	op, _ := strconv.Atoi(row("infiniband.bth.opcode"))
	if tshark4Unknown(op) && !strings.HasPrefix(field, "infiniband.bth.") && (strings.HasPrefix(field, "infiniband.") || strings.HasPrefix(field, "data.")) {
		// tshark 4.0 does not know FLUSH, ATOMIC WRITE, XRC and CNP (it
		// stops after the BTH) and misreads the RD extended headers.
		return true
	}
	if row("infiniband.bth.opcode") == "" && strings.HasPrefix(field, "data.") {
		// tshark shows the payload of any UDP datagram as data; rocetap
		// describes RoCE payloads only.
		return true
	}
	if tshark == "" && strings.HasPrefix(field, "data.") && row("frame.cap_len") != row("frame.len") {
		// tshark shows no data for a payload cut by the snapshot length.
		return true
	}
	if madKnownDifference(field, tshark, rocetap, row) {
		return true
	}
	if saKnownDifference(field, tshark, rocetap, row) {
		return true
	}
	if strings.HasPrefix(field, "ipoib.") && tshark == "" && row("infiniband.bth.opcode") != "" {
		// tshark 4.0 hands an IPoIB payload inside InfiniBand straight to
		// its EtherType table, without the ipoib items; rocetap shows the
		// IPoIB header as on DLT_IPOIB (issue 19).
		return true
	}
	switch field {
	case "infiniband.immdt", "infiniband.ieth":
		// tshark adds the ImmDt item twice on UD SEND Only with Immediate,
		// and the IETH item twice on SEND with Invalidate.
		return tshark == rocetap+","+rocetap
	case "data.data":
		// tshark leaves the BTH pad bytes at the end of the payload;
		// rocetap strips them (IBA 9.2: pad is not payload).
		pad, _ := strconv.Atoi(row("infiniband.bth.padcnt"))
		return pad > 0 && len(tshark) == len(rocetap)+2*pad && strings.HasPrefix(tshark, rocetap)
	case "data.len":
		pad, _ := strconv.Atoi(row("infiniband.bth.padcnt"))
		w, err1 := strconv.Atoi(tshark)
		g, err2 := strconv.Atoi(rocetap)
		return pad > 0 && err1 == nil && err2 == nil && w == g+pad
	}
	return false
}

// tshark4Unknown: opcodes tshark 4.0 does not decode past the BTH (FLUSH,
// ATOMIC WRITE, RD, CNP, XRC).
func tshark4Unknown(op int) bool {
	return op == 0x1C || op == 0x1D || op >= 0x40 && op < 0x60 || op == 0x81 || op >= 0xA0 && op < 0xC0 || !decode.Opcode(op).Known()
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// TestRegistryMatchesTshark: every Wireshark-named field has tshark's
// type and base, so printed values and filters behave the same.
func TestRegistryMatchesTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	known := tsharkFields(t, ts)
	n := 0
	for _, f := range decode.Fields() {
		if strings.HasPrefix(f.Abbrev, "rocetap") || f.Type == decode.FTProtocol {
			continue
		}
		k, ok := known[f.Abbrev]
		if !ok {
			t.Errorf("%s: not a Wireshark field; rocetap's own fields belong under rocetap.*", f.Abbrev)
			continue
		}
		n++
		if k.typ != f.Type.String() {
			t.Errorf("%s: type %s, tshark %s", f.Abbrev, f.Type, k.typ)
		}
		if f.Type.IsInteger() && f.Type != decode.FTBoolean && k.base != f.Base.String() {
			t.Errorf("%s: base %s, tshark %s", f.Abbrev, f.Base, k.base)
		}
	}
	t.Logf("%d Wireshark fields checked", n)
}
