package conformance

// Display filters: rocetap decode -Y and tshark must select the same
// frames with the same Wireshark filter.
//
// Every capture tshark can read is concatenated (mergecap -a) into one
// pcapng, so each tool reads one file per filter. tshark evaluates all the
// filters in one run, one Lua tap per filter (a tap's filter is a display
// filter, compiled and applied by the same engine as -Y; a sample of the
// filters is checked against tshark -Y). ROCETAP_TSHARK_Y=1 runs one tshark
// -Y per filter instead (~25 s). rocetap runs in-process through cli.Main.
//
// A frame may differ only where README.md documents a tshark 4.0
// difference (filterExcuse); the test logs those frames.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/cli"
	"github.com/rocetap/rocetap/internal/testcap"
)

// filterCase is one display filter of TestFiltersMatchTshark. Every filter
// is Wireshark 4.0 syntax that tshark 4.0.17 accepts; unless empty is set
// it selects at least one frame of testdata/ (the test checks both, so a
// filter cannot silently become vacuous).
type filterCase struct {
	expr  string
	empty bool // selects no frame, on purpose
}

var filterCases = []filterCase{
	// Protocol names. macc is Wireshark's name for MAC Control (PAUSE and
	// PFC); ieee8021ad is the outer 0x88a8 tag of QinQ, vlan the 0x8100 one.
	{expr: "frame"}, // every frame
	{expr: "infiniband"},
	{expr: "udp"},
	{expr: "ip"},
	{expr: "ipv6"},
	{expr: "eth"},
	{expr: "vlan"},
	{expr: "ieee8021ad"},
	{expr: "macc"},
	{expr: "data"},
	{expr: "erf"},
	{expr: "sll"},

	// Field presence, one per header.
	{expr: "infiniband.reth"},
	{expr: "infiniband.aeth.syndrome"},
	{expr: "infiniband.immdt"},
	{expr: "infiniband.ieth"},
	{expr: "infiniband.deth"},
	{expr: "infiniband.atomiceth"},
	{expr: "infiniband.atomicacketh"},
	{expr: "infiniband.grh"},
	{expr: "infiniband.lrh"},
	{expr: "infiniband.mad"},
	{expr: "infiniband.cm.req.localqpn"},

	// The six comparisons, symbols and words; decimal, hex, octal literals.
	{expr: "infiniband.bth.psn > 770"},
	{expr: "infiniband.bth.psn gt 770 and infiniband.bth.psn lt 775"},
	{expr: "infiniband.bth.psn >= 16777208"},
	{expr: "infiniband.bth.psn ge 16777208"},
	{expr: "infiniband.bth.psn < 3"},
	{expr: "infiniband.bth.psn le 2"},
	{expr: "infiniband.bth.opcode == 16"},
	{expr: "infiniband.bth.opcode eq 0x10"},
	{expr: "infiniband.bth.opcode == 020"}, // octal 16
	{expr: "infiniband.bth.opcode == 0X1C"},
	{expr: "infiniband.bth.opcode != 17"},
	{expr: "infiniband.bth.opcode ne 17 and infiniband.bth.opcode ne 4"},
	{expr: "infiniband.bth.destqp == 0x000017"},
	{expr: "infiniband.bth.destqp == 23"},
	{expr: "infiniband.bth.padcnt > 0"},
	{expr: "infiniband.bth.padcnt == 3"},
	{expr: "infiniband.bth.se == 1"},
	{expr: "infiniband.bth.a == 0"},
	{expr: "infiniband.bth.p_key != 65535"},

	// Sets (Wireshark 4.0 wants commas) and ranges.
	{expr: "infiniband.bth.opcode in {10, 11, 12}"},
	{expr: "infiniband.bth.opcode in {6..11}"},
	{expr: "infiniband.bth.opcode in {4, 6..11, 17}"},
	{expr: "infiniband.bth.opcode in {0x64, 0x65}"},
	{expr: "frame.number in {1, 100, 560}"},
	{expr: "vlan.id in {7, 29, 31}"},
	{expr: "udp.port in {53, 4792}"},
	{expr: `frame.protocols in {"eth:ethertype:macc", "no:such:stack"}`},

	// Bitwise and, alone and before a comparison.
	{expr: "infiniband.bth.opcode & 0x20"},
	{expr: "infiniband.bth.opcode & 0x60 == 0x60"},
	{expr: "infiniband.aeth.syndrome & 0x60 == 0x60"},
	{expr: "macc.cbfc.enbv & 0x10"},

	// AETH.
	{expr: "infiniband.aeth.syndrome == 31"},
	{expr: "infiniband.aeth.syndrome >= 96 and infiniband.aeth.syndrome <= 127"},
	{expr: "infiniband.aeth.syndrome.opcode == 3"},
	{expr: "infiniband.aeth.syndrome.error_code == 2"},
	{expr: "infiniband.aeth.syndrome.timer == 14"},
	{expr: "infiniband.aeth.syndrome.credit_count == 10"},
	{expr: "infiniband.aeth.msn > 5"},
	{expr: "infiniband.aeth.msn == 0 && infiniband.aeth.syndrome >= 0x60"},

	// RETH, DETH, AtomicETH, AtomicAckETH, ImmDt, IETH.
	{expr: "infiniband.reth.r_key == 0x000009d2"},
	{expr: "infiniband.reth.dmalen >= 3000"},
	{expr: "infiniband.reth.dmalen == 0"},
	{expr: "infiniband.reth.va > 0x0000555555578000"},
	{expr: "infiniband.deth.q_key == 0x80010000"},
	{expr: "infiniband.deth.srcqp == 0x1e"},
	{expr: "infiniband.atomiceth.swapdt == 1234605616436508552"},
	{expr: "infiniband.atomiceth.cmpdt != 0"},
	{expr: "infiniband.atomicacketh.origremdt > 10000000000000000000"},
	{expr: "infiniband.immdt == c0:de:00:02"},
	{expr: "infiniband.immdt == 00:00:60:0d"},
	{expr: "infiniband.ieth == 08:00:01:9c"},

	// GRH (RoCEv1 and ERF InfiniBand records), LRH and VCRC (ERF).
	{expr: "infiniband.grh.dgid == fe80::2:c903:0:b"},
	{expr: "infiniband.grh.sgid == fe80::2:c903:0:a and infiniband.grh.dgid == fe80::2:c903:0:b"},
	{expr: "infiniband.grh.hoplmt == 64"},
	{expr: "infiniband.grh.tclass == 104"},
	{expr: "infiniband.grh.flowlabel == 0xabcd"},
	{expr: "infiniband.lrh.dlid == 2"},
	{expr: "infiniband.lrh.lnh == 0x03"},
	{expr: "infiniband.lrh.pktlen < 10"},
	{expr: "infiniband.variant.crc == 0x9032"},

	// CM and MAD.
	{expr: "infiniband.cm.req.localqpn == 0x27"},
	{expr: "infiniband.cm.rep.localqpn >= 0x26 && infiniband.cm.rep.localqpn <= 0x27"},
	{expr: "infiniband.cm.req.prim_localgid_ipv4 == 10.77.0.1"},
	{expr: "infiniband.cm.req.serviceid.dport == 0x4853"},
	{expr: "infiniband.cm.rej.reason == 8"},
	{expr: "infiniband.mad.attributeid == 0x0012"},
	{expr: "infiniband.mad.mgmtclass == 7 and infiniband.mad.attributeid in {0x15, 0x16}"},

	// Slices of byte fields: [i:len], [i], [i-j], [:len], [-i:], [-i:len];
	// a one-byte slice against a byte (0c) and against an integer (0x1f).
	{expr: "infiniband.bth[0] == 0c"},
	{expr: "infiniband.aeth[0] == 0x1f"},
	{expr: "infiniband.bth[4:4] == 00:00:00:17"},
	{expr: "infiniband.reth[8:4] == 00:00:09:d2"},
	{expr: "infiniband.reth[12:4] == 00:00:0b:b8"},
	{expr: "infiniband.atomiceth[0:8] == 00:00:55:55:55:57:c0:00"},
	{expr: "data.data[0:4] == 61:61:61:61"},
	{expr: "data.data[2] == 0e"},
	{expr: "data.data[1-2] == 07:0e"},
	{expr: "data.data[0-1] == 31:31"},
	{expr: "data.data[:2] == 00:07"},
	{expr: "data.data[-1:] == 42"},
	{expr: "data.data[-4:4] == 3b:42:49:50"},

	// contains and matches (and its alias ~) on bytes and strings; quoted
	// strings with escapes; matches is case-insensitive in Wireshark 4.0.
	{expr: "data.data contains 61:61:61"},
	{expr: `data.data contains "aaaa"`},
	{expr: `data.data contains "\x3c\x3c\x3c"`},
	{expr: `data.data matches "^aaaa"`},
	{expr: `data.data matches "rdma-ping"`},
	{expr: `data.data matches "RDMA-PING"`},
	{expr: `data.data ~ "^(\x11)+$"`},
	{expr: "data.len > 1000"},
	{expr: `frame.protocols contains "ipv6"`},
	{expr: `frame.protocols contains "vlan"`},
	{expr: `frame.protocols contains "ieee8021ad"`},
	{expr: `frame.protocols matches "^sll"`},
	{expr: `frame.protocols matches "ipv6.*infiniband"`},
	{expr: `frame.protocols matches "IPV6"`},

	// frame.* (times are relative to the first frame of the merged file;
	// the first rxe capture is later than the synthetic ones, so many are
	// negative). frame.time_delta > 0 and < 1 µs: the ns_timestamps frames.
	{expr: "frame.number <= 10"},
	{expr: "frame.len > 1000"},
	{expr: "frame.len == 62"},
	{expr: "frame.len < 40"},
	{expr: "frame.cap_len < frame.len"}, // field against field
	{expr: "frame.time_relative > 0.001"},
	{expr: "frame.time_relative < 0"},
	{expr: "frame.time_delta > 1"},
	{expr: "frame.time_delta > 0 and frame.time_delta < 0.000001"},
	{expr: "frame.interface_id == 32"},

	// Ethernet, VLAN, QinQ: MAC literals in three spellings; eth.addr is
	// either side, and != holds only when no occurrence equals the value.
	{expr: "eth.src == 02:00:0a:4d:00:01"},
	{expr: "eth.src == 0200.0a4d.0001"},
	{expr: "eth.addr == 02:00:0a:4d:00:01"},
	{expr: "eth.addr != 02:00:0a:4d:00:01"},
	{expr: "eth.dst == 01-80-c2-00-00-01"},
	{expr: "eth.type == 0x8915"},
	{expr: "eth.type == 0x88a8"},
	{expr: "vlan.id == 100"},
	{expr: "vlan.id == 20"},
	{expr: "vlan.id >= 100"},
	{expr: "ieee8021ad.id == 10"},

	// IPv4: ECN, DSCP, TTL, either-side ip.addr, CIDR.
	{expr: "ip.dsfield.ecn == 3"},
	{expr: "ip.dsfield.ecn == 1 or ip.dsfield.ecn == 2"},
	{expr: "ip.dsfield.ecn ge 1 and ip.dsfield.ecn le 2"},
	{expr: "ip.dsfield.dscp == 48"},
	{expr: "ip.ttl < 64"},
	{expr: "ip.addr == 10.77.0.1"},
	{expr: "ip.addr != 10.77.0.1"},
	{expr: "ip.src != 10.77.0.1"},
	{expr: "ip.addr == 10.77.0.0/16"},
	{expr: "ip.dst == 192.168.77.11/32"},
	{expr: "ip.addr == 192.168.77.0/24 and ip.dsfield.ecn == 3"},
	{expr: "ip.addr == 10.77.0.1 and ip.addr == 10.77.0.2"},

	// IPv6.
	{expr: "ipv6.addr == fd77::1"},
	{expr: "ipv6.addr != fd77::1"},
	{expr: "ipv6.src == fd77::/16"},
	{expr: "ipv6.dst == fd00:77::a"},
	{expr: "ipv6.addr == fd00::/8"},
	{expr: "ipv6.hlim == 1"},
	{expr: "ipv6.tclass.ecn == 3"},
	{expr: "ipv6.flow != 0"},

	// UDP: udp.port is either side; === all equal, !== and ~= any not equal.
	{expr: "udp.port == 53"},
	{expr: "udp.port != 4791"},
	{expr: "udp.port === 4791"},
	{expr: "udp.port !== 4791"},
	{expr: "udp.port ~= 4791"},
	{expr: "udp.srcport > 60000"},
	{expr: "udp.length lt 40"},
	{expr: "udp.srcport == 53 || udp.dstport == 4792"},

	// MAC Control: PAUSE and PFC.
	{expr: "macc.opcode == 0x0101"},
	{expr: "macc.pause_time == 0x1234"},
	{expr: "macc.cbfc.pause_time.c3 == 65535"},
	{expr: "macc.cbfc.pause_time.c7 > 0"},
	{expr: "macc.opcode == 0x0001 and macc.pause_time == 0"},

	// Logic: and binds tighter than or; not tighter than and; ! && ||.
	{expr: "infiniband.bth.opcode == 4 or infiniband.bth.opcode == 17 and infiniband.aeth.syndrome != 31"},
	{expr: "(infiniband.bth.opcode == 4 or infiniband.bth.opcode == 17) and infiniband.aeth.syndrome != 31"},
	{expr: "not infiniband.reth and infiniband.bth.opcode < 16"},
	{expr: "!(infiniband.reth) && !ip"},
	{expr: "not infiniband"},
	{expr: "not (ip or ipv6)"},
	{expr: "!infiniband.aeth || infiniband.aeth.syndrome == 31"},

	// Filters that select nothing.
	{expr: "infiniband.bth.opcode == 255", empty: true},
	{expr: "ip.addr == 1.2.3.4", empty: true},
	{expr: "infiniband.reth and infiniband.aeth", empty: true},
	{expr: "ip.src == 10.77.0.2 and ip.addr != 10.77.0.1", empty: true},
	{expr: "infiniband.bth.destqp == 0x102 and infiniband.mad", empty: true},

	// Management datagrams (issue 19): SMP, traps, PMA.
	{expr: "infiniband.smpdirected"},
	{expr: "infiniband.smpdirected.hoppointer == 2 and infiniband.smpdirected.drslid == 0xffff"},
	{expr: "infiniband.portinfo.portstate == 4 && infiniband.portinfo.linkwidthactive == 2"},
	{expr: "infiniband.nodeinfo.nodetype == 2"},
	{expr: "infiniband.nodedescription.nodestring contains \"switch\""},
	{expr: "infiniband.p_keytable.p_keybase == 0x7fff"},
	{expr: "infiniband.notice.trapnumberdeviceid >= 256"},
	{expr: "infiniband.trap.lidaddr == 2"},
	{expr: "infiniband.portcounters.symbolerrorcounter > 0"},
	{expr: "infiniband.portcounters_ext.portxmitpkts > 4000000000"},
	{expr: "infiniband.classportinfo.capabilitymask == 0x0600"},
	// Subnet administration and RMPP (issue 19).
	{expr: "infiniband.sa.attributeoffset == 8"},
	{expr: "infiniband.rmpp.rmpptype == 2"},
	{expr: "infiniband.rmpp.segmentnumber > 1 and infiniband.rmpp.rmpptype == 1"},
	{expr: "infiniband.rmpp.rmppstatus != 0"},
	{expr: "infiniband.sa.componentmask & 0x0c"},
}

// rocetapOut runs rocetap in-process and returns its stdout, or an error
// with its stderr.
func rocetapOut(args ...string) ([]byte, error) {
	var out, errOut bytes.Buffer
	if code := cli.Main(args, cli.IO{Out: &out, ErrOut: &errOut}); code != 0 {
		return nil, fmt.Errorf("rocetap %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}

// frameOrigin says where a frame of the merged capture comes from, and
// what rocetap decodes in it (to recognise documented tshark differences).
type frameOrigin struct {
	file           string // base name
	frame          int    // frame number in that file
	opcode         string // infiniband.bth.opcode, "" without a BTH
	padcnt         int
	capLen, wirLen string
}

type mergedCapture struct {
	path   string
	files  int
	frames []frameOrigin // index: merged frame number - 1
	tshark []string      // tshark options: tsharkArgs and every perFile option
}

// mergeCaptures concatenates every capture tshark can read into one pcapng
// (mergecap -a keeps each file's interfaces and link types and numbers the
// frames in file order), so that each filter costs one tshark start.
func mergeCaptures(t *testing.T, mergecap string) mergedCapture {
	t.Helper()
	m := mergedCapture{path: filepath.Join(t.TempDir(), "merged.pcapng")}
	var files []string
	var lens []string
	extra := map[string][]string{} // perFile option -> files it is for
	var extraOrder []string
	for _, f := range captures(t) {
		base := filepath.Base(f)
		if conv := ibInERF(t, f); conv != "" {
			f = conv // tshark 4.0 cannot open link type 247
		}
		files = append(files, f)
		out, err := rocetapOut("decode", "-r", f, "-T", "fields", "-e", "frame.len")
		if err != nil {
			t.Fatal(err)
		}
		l := lines(out)
		for i := range l {
			m.frames = append(m.frames, frameOrigin{file: base, frame: i + 1})
		}
		lens = append(lens, l...)
		for i := 0; i+1 < len(perFile[base]); i += 2 {
			opt := perFile[base][i] + " " + perFile[base][i+1]
			if extra[opt] == nil {
				extraOrder = append(extraOrder, opt)
			}
			extra[opt] = append(extra[opt], base)
		}
	}
	m.files = len(files)
	if out, err := exec.Command(mergecap, append([]string{"-a", "-F", "pcapng", "-w", m.path}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, out)
	}
	out, err := rocetapOut("decode", "-r", m.path, "-T", "fields", "-e", "frame.len", "-e", "infiniband.bth.opcode",
		"-e", "infiniband.bth.padcnt", "-e", "frame.cap_len", "-e", "udp.srcport", "-e", "udp.dstport")
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != len(m.frames) {
		t.Fatalf("merged capture: rocetap reads %d frames, the %d files hold %d", len(rows), len(files), len(m.frames))
	}
	ports := map[string]map[string]bool{} // UDP port -> files using it
	for i, row := range rows {
		c := strings.Split(row, "\t")
		if len(c) != 6 || c[0] != lens[i] {
			t.Fatalf("merged frame %d (%s frame %d): frame.len %q, the file says %s", i+1, m.frames[i].file, m.frames[i].frame, c[0], lens[i])
		}
		o := &m.frames[i]
		o.opcode, o.capLen, o.wirLen = c[1], c[3], c[0]
		o.padcnt, _ = strconv.Atoi(c[2])
		for _, p := range c[4:] {
			if p != "" {
				if ports[p] == nil {
					ports[p] = map[string]bool{}
				}
				ports[p][o.file] = true
			}
		}
	}
	// A per-file "-d udp.port==N,infiniband" now applies to every file:
	// it must not change how another file decodes, so no other file may
	// use port N.
	m.tshark = append([]string{}, tsharkArgs...)
	portOpt := regexp.MustCompile(`^-d udp\.port==(\d+),`)
	for _, opt := range extraOrder {
		sm := portOpt.FindStringSubmatch(opt)
		if sm == nil {
			t.Fatalf("perFile option %q: TestFiltersMatchTshark cannot tell whether it is harmless for the other captures of the merged file", opt)
		}
		for f := range ports[sm[1]] {
			if !contains(extra[opt], f) {
				t.Fatalf("perFile option %q (for %v) would change how %s decodes: it uses UDP port %s too", opt, extra[opt], f, sm[1])
			}
		}
		m.tshark = append(m.tshark, strings.SplitN(opt, " ", 2)...)
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func frameNumbers(out []byte) (map[int]bool, error) {
	set := map[int]bool{}
	for _, l := range lines(out) {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil {
			return nil, fmt.Errorf("not a frame number: %q", l)
		}
		set[n] = true
	}
	return set, nil
}

var (
	filterQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	filterIdent  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*`)
)

// filterExcuse says why frame o may be selected by one tool and not the
// other: the README's documented tshark 4.0 differences (the same ones
// knownDifference accepts for field values), applied to the fields the
// filter names. "" when there is no excuse.
func filterExcuse(expr string, o frameOrigin) string {
	ib, data := false, false
	for _, id := range filterIdent.FindAllString(filterQuoted.ReplaceAllString(expr, `""`), -1) {
		switch {
		case id == "data" || strings.HasPrefix(id, "data."):
			data = true
		case strings.HasPrefix(id, "infiniband.") && id != "infiniband.bth" && !strings.HasPrefix(id, "infiniband.bth."):
			ib = true
		}
	}
	op, err := strconv.Atoi(o.opcode)
	switch {
	case err == nil && tshark4Unknown(op) && (ib || data):
		return "tshark 4.0 stops after the BTH of FLUSH, ATOMIC WRITE, RD, XRC, CNP and unknown opcodes"
	case o.opcode == "" && data:
		return "tshark shows any UDP payload as data; rocetap describes RoCE payloads only"
	case o.capLen != o.wirLen && data:
		return "tshark shows no data for a payload cut by the snapshot length"
	case o.padcnt > 0 && data:
		return "tshark counts the BTH pad bytes as data"
	}
	return ""
}

// describeFrames lists merged frame numbers as "file: n n n; file: n".
func describeFrames(m mergedCapture, nums []int) string {
	var b strings.Builder
	last := ""
	for _, n := range nums {
		o := m.frames[n-1]
		if o.file != last {
			if last != "" {
				b.WriteString("; ")
			}
			b.WriteString(o.file + ":")
			last = o.file
		}
		fmt.Fprintf(&b, " %d", o.frame)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// selection is the set of merged frame numbers a filter selects, or why
// the tool refused the filter.
type selection struct {
	set map[int]bool
	err error
}

func sameSet(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if !b[n] {
			return false
		}
	}
	return true
}

// tsharkSelectLua evaluates every filter in one tshark run: a Lua
// Listener (a tap) per filter, each with the filter as its display filter,
// prints the frames it sees. tshark starts in ~0.3 s, so this is ~100
// times faster than one -Y run per filter. ok is false when this tshark
// runs no Lua.
func tsharkSelectLua(t *testing.T, ts string, m mergedCapture, exprs []string) (res []selection, ok bool) {
	t.Helper()
	var b strings.Builder
	b.WriteString("io.stdout:write(\"READY\\n\")\nlocal filters = {\n")
	for _, e := range exprs {
		if strings.Contains(e, "]==]") || strings.Contains(e, "\n") {
			t.Fatalf("%q cannot be written as a Lua long string", e)
		}
		fmt.Fprintf(&b, "  [==[%s]==],\n", e)
	}
	b.WriteString(`}
for i, f in ipairs(filters) do
  local ok, tap = pcall(Listener.new, "frame", f)
  if ok then
    tap.packet = function(pinfo) io.stdout:write(string.format("M %d %d\n", i, pinfo.number)) end
  else
    io.stdout:write(string.format("E %d %s\n", i, (tostring(tap):gsub("%s+", " "))))
  end
end
`)
	script := filepath.Join(t.TempDir(), "filters.lua")
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-r", m.path}, m.tshark...)
	args = append(args, "-q", "-X", "lua_script:"+script)
	var stderr bytes.Buffer
	cmd := exec.Command(ts, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark with the Lua taps: %v\n%s", err, stderr.String())
	}
	rows := lines(out)
	if len(rows) == 0 || rows[0] != "READY" {
		return nil, false
	}
	res = make([]selection, len(exprs))
	for i := range res {
		res[i].set = map[int]bool{}
	}
	for _, row := range rows[1:] {
		f := strings.SplitN(row, " ", 3)
		if len(f) != 3 {
			t.Fatalf("tshark Lua tap output: %q", row)
		}
		i, err := strconv.Atoi(f[1])
		if err != nil || i < 1 || i > len(exprs) {
			t.Fatalf("tshark Lua tap output: %q", row)
		}
		switch f[0] {
		case "M":
			n, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatalf("tshark Lua tap output: %q", row)
			}
			res[i-1].set[n] = true
		case "E":
			res[i-1].set, res[i-1].err = nil, fmt.Errorf("%s", f[2])
		default:
			t.Fatalf("tshark Lua tap output: %q", row)
		}
	}
	return res, true
}

// tsharkSelectY runs tshark -Y for the filters at indices, in parallel.
func tsharkSelectY(ts string, m mergedCapture, exprs []string, indices []int) []selection {
	res := make([]selection, len(exprs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.NumCPU(), 8); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				args := append([]string{"-r", m.path}, m.tshark...)
				args = append(args, "-Y", exprs[i], "-T", "fields", "-e", "frame.number")
				var stderr bytes.Buffer
				cmd := exec.Command(ts, args...)
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					res[i].err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
					continue
				}
				res[i].set, res[i].err = frameNumbers(out)
			}
		}()
	}
	for _, i := range indices {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return res
}

// TestFiltersMatchTshark compares, for every filter of filterCases, the
// frames tshark and rocetap select from the merged capture, and reports
// the frames only one of them selects, by file and frame number.
func TestFiltersMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	m := mergeCaptures(t, testcap.Tool(t, "mergecap", "it comes with tshark: `apt-get install -y wireshark-common`"))

	exprs := make([]string, len(filterCases))
	for i, c := range filterCases {
		exprs[i] = c.expr
	}
	begin := time.Now()
	method := "one Lua tap per filter, one tshark run"
	var want []selection
	ok := false
	if os.Getenv("ROCETAP_TSHARK_Y") != "1" {
		want, ok = tsharkSelectLua(t, ts, m, exprs)
	}
	if ok {
		// The taps use the same filter engine as -Y; check it on a sample.
		var sample []int
		for i := 0; i < len(exprs); i += 20 {
			sample = append(sample, i)
		}
		check := tsharkSelectY(ts, m, exprs, sample)
		for _, i := range sample {
			if (check[i].err == nil) != (want[i].err == nil) || !sameSet(check[i].set, want[i].set) {
				t.Fatalf("%q: tshark -Y selects %d frames (%v), tshark's Lua tap %d (%v): the batch oracle is not tshark -Y",
					exprs[i], len(check[i].set), check[i].err, len(want[i].set), want[i].err)
			}
		}
		method += fmt.Sprintf(", %d checked against tshark -Y", len(sample))
	} else {
		method = "one tshark -Y per filter (ROCETAP_TSHARK_Y=1, or this tshark has no Lua)"
		all := make([]int, len(exprs))
		for i := range all {
			all[i] = i
		}
		want = tsharkSelectY(ts, m, exprs, all)
	}
	elapsed := time.Since(begin)

	got := make([]selection, len(filterCases))
	for i, c := range filterCases {
		var out, errOut bytes.Buffer
		if code := cli.Main([]string{"decode", "-r", m.path, "-Y", c.expr, "-T", "fields", "-e", "frame.number"}, cli.IO{Out: &out, ErrOut: &errOut}); code != 0 {
			got[i].err = fmt.Errorf("rocetap exits %d: %s", code, strings.TrimSpace(errOut.String()))
			continue
		}
		got[i].set, got[i].err = frameNumbers(out.Bytes())
	}

	sorted := func(set map[int]bool, keep func(int) bool) []int {
		var s []int
		for n := range set {
			if keep(n) {
				s = append(s, n)
			}
		}
		sort.Ints(s)
		return s
	}
	total := len(m.frames)
	agree, excusedFrames, emptyCount, allCount := 0, 0, 0, 0
	for i, c := range filterCases {
		w, g := want[i], got[i]
		if w.err != nil {
			t.Errorf("tshark 4.0 rejects %q (fix the table): %v", c.expr, w.err)
			continue
		}
		switch {
		case c.empty && len(w.set) > 0:
			t.Errorf("%q should select nothing but tshark selects %s", c.expr, describeFrames(m, sorted(w.set, func(int) bool { return true })))
		case !c.empty && len(w.set) == 0:
			t.Errorf("%q selects nothing in tshark: pick a value that occurs in testdata/ or mark it empty", c.expr)
		}
		if len(w.set) == 0 {
			emptyCount++
		}
		if len(w.set) == total {
			allCount++
		}
		if g.err != nil {
			t.Errorf("filter %q: tshark selects %d frames, %v", c.expr, len(w.set), g.err)
			continue
		}
		excuses := map[string][]int{}
		unexcused := func(other map[int]bool) func(int) bool {
			return func(n int) bool {
				if other[n] {
					return false
				}
				if why := filterExcuse(c.expr, m.frames[n-1]); why != "" {
					excuses[why] = append(excuses[why], n)
					return false
				}
				return true
			}
		}
		onlyT := sorted(w.set, unexcused(g.set))
		onlyR := sorted(g.set, unexcused(w.set))
		t.Logf("%-100s tshark %3d  rocetap %3d", c.expr, len(w.set), len(g.set))
		var whys []string
		for why := range excuses {
			whys = append(whys, why)
		}
		sort.Strings(whys)
		for _, why := range whys {
			nums := excuses[why]
			sort.Ints(nums)
			excusedFrames += len(nums)
			t.Logf("    excused (%s): %s", why, describeFrames(m, nums))
		}
		if len(onlyT) > 0 || len(onlyR) > 0 {
			t.Errorf("filter %q: only tshark selected %s; only rocetap selected %s", c.expr, describeFrames(m, onlyT), describeFrames(m, onlyR))
			continue
		}
		agree++
	}
	t.Logf("%d filters on %d frames of %d captures: %d agree (%d documented frame differences excused); %d select nothing, %d select every frame; tshark took %v (%s)",
		len(filterCases), total, m.files, agree, excusedFrames, emptyCount, allCount, elapsed.Round(time.Millisecond), method)
}

// handCase is a filter tshark cannot check (rocetap.* fields, captures
// tshark cannot open, opcodes tshark 4.0 does not decode, xor), with the
// frames it must select, derived from testdata/README.md.
type handCase struct {
	file string // under testdata/
	expr string
	want []int
	why  string
}

var handCases = []handCase{
	{"synth/bad_icrc.pcap", `rocetap.icrc.status == "bad"`, []int{1, 2, 3, 4, 5},
		"flipped bit, zero, byte-swapped, P_Key changed in flight, RoCEv1 wrong ICRC; frame 6 changed only variant fields"},
	{"synth/bad_icrc.pcap", `rocetap.icrc.bad`, []int{1, 2, 3, 4, 5}, "the boolean form of the same"},
	{"synth/bad_icrc.pcap", `rocetap.icrc.status == "good"`, []int{6}, "TTL, ECN CE, FECN and IP checksum are variant: ICRC stays good"},
	// A boolean field is present whatever its value (Wireshark: tcp.flags.syn
	// matches every TCP frame); rocetap.bth.fecn/becn are on every BTH.
	{"synth/bad_icrc.pcap", `rocetap.bth.fecn`, []int{1, 2, 3, 4, 5, 6}, "every frame has a BTH, so the FECN bit"},
	{"synth/bad_icrc.pcap", `rocetap.bth.fecn == 1`, []int{6}, "FECN set in flight on the last frame"},
	{"synth/bad_icrc.pcap", `rocetap.encap == "RoCEv1"`, []int{5}, "the RoCEv1 frame with a wrong ICRC"},
	{"synth/rocev1.pcap", `rocetap.encap == "RoCEv1"`, []int{1, 2, 3, 4, 5, 6, 7}, "every frame is RoCEv1"},
	{"synth/rocev1.pcap", `rocetap.encap == "RoCEv1" and vlan.id == 7`, []int{5, 6}, "one pair over 802.1Q VLAN 7 (the READ)"},
	{"synth/truncated.pcap", `rocetap.truncated`, []int{1, 2, 3, 4, 5, 6, 7}, "snaplen 64 cuts frames 1-7; frame 8 is a complete 60-byte frame"},
	{"synth/truncated.pcap", `rocetap.icrc.status == "bad"`, nil, "the ICRC of a snapped RoCE frame is unverifiable, never bad"},
	{"synth/truncated.pcap", `rocetap.icrc.unverifiable`, []int{1, 2, 3, 4, 5, 7},
		"snapped RoCE frames; 6 is cut inside the UDP header, before its destination port, so it is not known to be RoCE"},
	{"synth/truncated.pcap", `rocetap.icrc.status == "unverifiable"`, []int{1, 2, 3, 4, 5, 7}, "the string form of the same"},
	{"synth/truncated.pcap", `ieee8021ad.id == 30`, []int{6}, "the QinQ IPv6 frame cut inside the UDP header (outer tag 30)"},
	{"synth/truncated.pcap", `vlan.id == 31 and ieee8021ad`, []int{6}, "its inner tag is 31"},
	{"synth/rc_all_opcodes.pcap", `infiniband.bth.opcode == 0x1c`, []int{38}, "FLUSH"},
	{"synth/rc_all_opcodes.pcap", `rocetap.feth`, []int{38}, "FLUSH carries the FETH"},
	{"synth/rc_all_opcodes.pcap", `infiniband.reth and infiniband.bth.opcode in {0x1c, 0x1d}`, []int{38, 40}, "FLUSH (FETH + RETH) and ATOMIC WRITE (RETH + 8 B)"},
	{"synth/rc_all_opcodes.pcap", `rocetap.ieth.r_key == 0x1a2b3c04`, []int{36}, "SEND Only with Invalidate"},
	{"synth/rc_all_opcodes.pcap", `infiniband.ieth`, []int{34, 36}, "SEND Last and Only with Invalidate"},
	{"synth/rc_all_opcodes.pcap", `rocetap.aeth.kind == "RNR NAK"`, []int{17, 20}, "RNR NAK, timers 1 and 14"},
	{"synth/rc_all_opcodes.pcap", `rocetap.aeth.kind == "NAK"`, []int{22, 35, 37, 41, 43}, "NAK codes 0-4"},
	{"synth/rc_all_opcodes.pcap", `rocetap.payload.length == 0 and infiniband.bth.opcode in {4, 10}`, []int{8, 21},
		"the 0-byte SEND Only padded to 60 bytes by Ethernet and the 0-length WRITE"},
	{"synth/rc_all_opcodes.pcap", `infiniband.bth.psn >= 0xfffff8 or infiniband.bth.psn < 2`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		"the PSN wraps from 0xFFFFF8 (frame 1) through 0 (frame 12); PSN 1 is the WRITE Last and its ACK (13, 14)"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `rocetap.xrceth.xrcsrq == 0x99`, []int{27, 29, 30, 31, 33, 35}, "XRC requests carry XRCETH"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `infiniband.bth.opcode >= 0xa0 and infiniband.bth.opcode < 0xc0 and not rocetap.xrceth`, []int{28, 32, 34},
		"XRC responses (ACK, READ Response, ATOMIC ACK) have no XRCETH"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `rocetap.transport == "RD"`, []int{18, 19, 20, 21, 22, 23, 24, 25, 26}, "the RD opcodes"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `infiniband.rdeth && infiniband.deth`, []int{18, 20, 21, 22, 24, 26}, "RD requests carry DETH after RDETH (IBA 9.3.1), responses do not"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `infiniband.bth.opcode == 0x81`, []int{36, 37}, "CNPs over IPv4 and IPv6"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `rocetap.bth.becn == 1 && ipv6`, []int{37}, "the IPv6 CNP (BECN)"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `rocetap.cnp and ip.dsfield.dscp == 48`, []int{36}, "the IPv4 CNP, DSCP 48"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `rocetap.unknown_opcode`, []int{38, 39}, "unknown opcodes 0x1A and 0xE5"},
	{"synth/uc_ud_rd_xrc_cnp.pcap", `infiniband.bth.destqp == 0x102 and not infiniband.mad`, []int{17},
		"the MAD-looking payload to QP 0x102 is payload, not a MAD"},
	{"rxe/ipv6_mix.pcap", `infiniband.payload[0:4] == 61:61:61:61`, []int{1, 3, 4, 5, 7, 9, 10, 11, 14, 15, 18},
		"rocetap always fills infiniband.payload (tshark only data.data): the frames tshark selects with data.data[0:4] == 61:61:61:61"},
	{"rxe/ipv6_mix.pcap", `infiniband.payload contains "ccc"`, []int{20, 21}, "the two UD SENDs carry 0x63 ('c') bytes"},
	{"synth/ib_native.pcap", `infiniband.lrh`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, "native InfiniBand: LRH first"},
	{"synth/ib_native.pcap", `infiniband.lrh.lnh == 3 and infiniband.grh`, []int{7, 8, 9}, "LNH 3: GRH follows"},
	{"synth/ib_native.pcap", `infiniband.lrh.vl == 15 && infiniband.bth.destqp == 0`, []int{6}, "the VL15 SMP to QP0"},
	{"synth/ib_native.pcap", `rocetap.vcrc.status == "good" and rocetap.icrc.status == "good"`, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, "every CRC checks"},
	{"synth/ib_bad_vcrc.pcap", `rocetap.vcrc.status == "bad"`, []int{1, 3}, "wrong VCRC; both wrong"},
	{"synth/ib_bad_vcrc.pcap", `rocetap.icrc.bad`, []int{2, 3}, "wrong ICRC (VCRC recomputed over it); both wrong"},
	{"synth/ib_bad_vcrc.pcap", `rocetap.vcrc.bad xor rocetap.icrc.bad`, []int{1, 2}, "exactly one CRC wrong"},
	{"synth/ib_bad_vcrc.pcap", `rocetap.vcrc.bad ^^ rocetap.icrc.bad`, []int{1, 2}, "^^ is xor"},
	{"synth/ib_bad_vcrc.pcap", `!rocetap.vcrc.bad && !rocetap.icrc.bad`, []int{4}, "the good packet"},
	{"synth/erf_ib_eth.pcap", `rocetap.encap == "InfiniBand"`, []int{1, 2, 3}, "ERF type 21 records"},
	{"synth/erf_ib_eth.pcap", `erf.types.type == 2 and udp.dstport == 4791`, []int{4, 5}, "ERF type 2 Ethernet records carrying RoCEv2"},
	{"synth/sll_sll2_raw.pcapng", `rocetap.frame.linktype == 276`, []int{2, 5}, "the SLL2 interface"},
	{"synth/sll_sll2_raw.pcapng", `frame.interface_id == 2 and ipv6`, []int{3}, "raw IP interface, IPv6 frame"},
	{"synth/ns_timestamps.pcap", `frame.time_delta == 0.000000001`, []int{2}, "1 ns after frame 1"},
	{"synth/ns_timestamps.pcap", `frame.time_delta > 0 and frame.time_delta < 0.000001`, []int{2, 3, 4}, "1 ns, 997 ns and 2 ns apart"},
	{"synth/ns_timestamps.pcap", `frame.time_relative >= 1`, []int{6}, "across a second boundary"},
	{"synth/vlan_qinq_ipv6.pcap", `udp.srcport == 53 and infiniband.bth`, []int{9}, "RoCEv2 from UDP source port 53: the destination port 4791 decides"},
	{"synth/vlan_qinq_ipv6.pcap", `udp.dstport == 4792 and not infiniband`, []int{11}, "a UDP datagram to port 4792 is not RoCE"},
	// MAD matching and RMPP reassembly (issue 19): the frames
	// testdata/README.md describes.
	{"synth/roce_sa.pcap", `rocetap.mad.response_to == 6`, []int{7, 9, 11}, "the three RMPP segments answering the GetTable(PathRecord)"},
	{"synth/roce_sa.pcap", `rocetap.mad.response_in`, []int{1, 4, 6, 13, 16, 19, 23}, "every answered request (CM REQ, DREQ, the SA queries); 14 is a retry of 13, 22 is never answered"},
	{"synth/roce_sa.pcap", `rocetap.mad.original_frame == 13`, []int{14}, "the GetTable sent again with the same TID"},
	{"synth/roce_sa.pcap", `rocetap.mad.time > 0.01`, []int{15}, "the answer to the retry, timed from the first copy 10.5 ms before"},
	{"synth/roce_sa.pcap", `rocetap.rmpp.segment_count == 3`, []int{11}, "the last segment of the 3-segment transfer"},
	{"synth/roce_sa.pcap", `infiniband.pathrecord.flowlabel == 6`, []int{11}, "the 7th PathRecord, decoded once from the reassembled transfer"},
	{"synth/roce_sa.pcap", `infiniband.rmpp.rmpptype in {3, 4}`, []int{18, 21}, "RMPP STOP and ABORT"},
	{"synth/ib_sa.pcap", `infiniband.sa.lid == 3`, []int{13}, "the third NodeRecord, on the last of its 2 segments"},
	// PortInfo's extended speeds and trap 259 (issue 19): tshark 4.0
	// decodes neither; ib_smp_ext.pcap as testdata/README.md describes it.
	{"synth/ib_smp_ext.pcap", `rocetap.portinfo.linkspeedextactive >= 4`, []int{4, 6}, "the HDR and NDR switch ports"},
	{"synth/ib_smp_ext.pcap", `rocetap.portinfo.linkspeedextenabled == 31`, []int{11}, "the SubnSet asking for every supported extended speed"},
	{"synth/ib_smp_ext.pcap", `rocetap.portinfo.capabilitymask2`, []int{2, 4, 6, 10, 11, 12}, "every PortInfo announcing CapabilityMask2; not frame 8, whose bytes 60-63 are leftovers"},
	{"synth/ib_smp_ext.pcap", `rocetap.portinfo.linkspeedextsupported and not rocetap.portinfo.capabilitymask.isextendedspeedssupported == 1`, nil, "extended speeds only where CapabilityMask announces them"},
	{"synth/ib_smp_ext.pcap", `infiniband.trap.pkey == 0x8002 and rocetap.trap.swlidaddr == 2 and infiniband.trap.portno == 7`, []int{13}, "trap 259: the P_Key, switch LID and port"},
	{"synth/ib_smp_ext.pcap", `rocetap.trap.capabilitymask2change == 1 and rocetap.trap.capabilitymask2 == 0x0012`, []int{14}, "trap 144 reporting a CapabilityMask2 change"},
}

// TestFiltersHandChecked runs the filters tshark cannot judge against
// the frames testdata/README.md says they must select.
func TestFiltersHandChecked(t *testing.T) {
	for _, c := range handCases {
		out, err := rocetapOut("decode", "-r", filepath.Join("../../testdata", c.file), "-Y", c.expr, "-T", "fields", "-e", "frame.number")
		if err != nil {
			t.Errorf("%s %q: %v", c.file, c.expr, err)
			continue
		}
		set, err := frameNumbers(out)
		if err != nil {
			t.Errorf("%s %q: %v", c.file, c.expr, err)
			continue
		}
		var got []int
		for n := range set {
			got = append(got, n)
		}
		sort.Ints(got)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %q selects %v, want %v (%s)", c.file, c.expr, got, c.want, c.why)
		}
	}
}
