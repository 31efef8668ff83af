package conformance

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestDecodeWriteLikeTshark: `rocetap decode -r IN -Y F -w OUT [-F fmt]`
// writes the packets `tshark -r IN -Y F -w OUT [-F fmt]` writes: read
// back by tshark, both files give the same timestamps, lengths,
// interfaces, protocols and bytes (tshark -x).
func TestDecodeWriteLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	cases := []struct{ file, filter, format string }{
		{"rxe/read_atomic.pcap", "infiniband.bth.opcode == 18", "pcapng"},
		{"rxe/read_atomic.pcap", "infiniband.bth.opcode == 18", "pcap"},
		{"rxe/cm_rping.pcap", "", "pcapng"},
		{"synth/sll_sll2_raw.pcapng", "infiniband", "pcapng"},
		{"synth/erf_ib_eth.pcap", "infiniband.bth.psn > 0", "pcapng"},
		{"rxe/err_rnr.pcap", "infiniband.aeth", "pcap"},
	}
	for _, c := range cases {
		t.Run(c.file+" "+c.filter+" "+c.format, func(t *testing.T) {
			in := "../../testdata/" + c.file
			dir := t.TempDir()
			mine, theirs := filepath.Join(dir, "rocetap."+c.format), filepath.Join(dir, "tshark."+c.format)
			args := []string{"-r", in, "-F", c.format}
			if c.filter != "" {
				args = append(args, "-Y", c.filter)
			}
			if out, err := exec.Command(ts, append(args, "-w", theirs)...).CombinedOutput(); err != nil {
				t.Fatalf("tshark: %v: %s", err, out)
			}
			if _, err := rocetapOut(append([]string{"decode"}, append(args, "-w", mine)...)...); err != nil {
				t.Fatal(err)
			}
			read := func(path string, extra ...string) string {
				out, err := exec.Command(ts, append([]string{"-r", path}, extra...)...).Output()
				if err != nil {
					t.Fatalf("tshark -r %s: %v", path, err)
				}
				return string(out)
			}
			fields := []string{"-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len", "-e", "frame.protocols", "-e", "frame.interface_id", "-e", "frame.encap_type"}
			if a, b := read(mine, fields...), read(theirs, fields...); a != b || a == "" {
				t.Errorf("frames differ:\nrocetap's file:\n%s\ntshark's file:\n%s", a, b)
			}
			if a, b := read(mine, "-x"), read(theirs, "-x"); a != b {
				t.Errorf("bytes differ (tshark -x): %d vs %d lines", strings.Count(a, "\n"), strings.Count(b, "\n"))
			}
		})
	}
}

// TestHexDumpLikeTshark: decode -x prints each frame's bytes as tshark -x
// does (alone, with -P after the summary line). Where tshark adds other
// data sources (a reassembly its heuristics made), only its "Frame (N
// bytes):" dump is compared; captures tshark cannot open are compared
// wrapped in ERF (ibInERF).
func TestHexDumpLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	for _, file := range captures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if conv := ibInERF(t, file); conv != "" {
				file = conv
			}
			extra := perFile[filepath.Base(file)]
			want, err := exec.Command(ts, append([]string{"-r", file, "-x"}, extra...)...).Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			got, err := rocetapOut(append([]string{"decode", "-r", file, "-x"}, extra...)...)
			if err != nil {
				t.Fatal(err)
			}
			if w, g := frameDumps(string(want)), strings.Split(string(got), "\n\n"); len(w) != len(g)-1 {
				t.Fatalf("tshark dumps %d frames, rocetap %d", len(w), len(g)-1)
			} else {
				for i := range w {
					if strings.TrimRight(w[i], "\n") != strings.TrimRight(g[i], "\n") {
						t.Errorf("frame %d:\ntshark:\n%s\nrocetap:\n%s", i+1, w[i], g[i])
						break
					}
				}
			}
		})
	}
}

// frameDumps splits tshark -x output into one dump per frame: the frame's
// own bytes, without the other data sources' dumps.
func frameDumps(out string) []string {
	var dumps []string
	for _, pkt := range strings.Split(strings.TrimSuffix(out, "\n"), "\n\n") {
		lines := strings.Split(pkt, "\n")
		if strings.HasPrefix(lines[0], "Frame (") {
			var keep []string
			for _, l := range lines[1:] {
				if strings.HasSuffix(l, " bytes):") {
					break
				}
				keep = append(keep, l)
			}
			lines = keep
		}
		dumps = append(dumps, strings.Join(lines, "\n"))
	}
	return dumps
}

// TestEKLikeTshark: decode -T ek writes tshark's -T ek: two lines a
// packet, each valid JSON; the same index and timestamp; layer keys named
// as tshark names them, with the same values for the fields both decode;
// with -e, the same documents.
func TestEKLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	for _, name := range []string{"rxe/read_atomic.pcap", "rxe/cm_rping.pcap", "rxe/err_rnr.pcap", "synth/rocev1.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := "../../testdata/" + name
			for _, extra := range [][]string{nil, {"-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "ip.src", "-e", "udp.port"}} {
				want, err := exec.Command(ts, append([]string{"-r", file, "-T", "ek"}, extra...)...).Output()
				if err != nil {
					t.Fatalf("tshark: %v", err)
				}
				got, err := rocetapOut(append([]string{"decode", "-r", file, "-T", "ek"}, extra...)...)
				if err != nil {
					t.Fatal(err)
				}
				wl, gl := lines(want), lines(got)
				if len(wl) != len(gl) {
					t.Fatalf("%v: tshark %d lines, rocetap %d", extra, len(wl), len(gl))
				}
				for i := range gl {
					var g, w map[string]any
					if err := json.Unmarshal([]byte(gl[i]), &g); err != nil {
						t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, gl[i])
					}
					json.Unmarshal([]byte(wl[i]), &w)
					if i%2 == 0 || extra != nil {
						if !reflect.DeepEqual(g, w) {
							t.Errorf("%v line %d:\ntshark  %s\nrocetap %s", extra, i+1, wl[i], gl[i])
						}
						continue
					}
					if g["timestamp"] != w["timestamp"] {
						t.Errorf("line %d: timestamp %v, tshark %v", i+1, g["timestamp"], w["timestamp"])
					}
					gLayers, _ := g["layers"].(map[string]any)
					wLayers, _ := w["layers"].(map[string]any)
					// frame.protocols: tshark names the payload's sub-dissector
					// (":data"); see conformance_test.go.
					for _, layer := range []string{"frame", "eth", "ip", "udp"} {
						gf, _ := gLayers[layer].(map[string]any)
						wf, _ := wLayers[layer].(map[string]any)
						for k, v := range gf {
							if wv, ok := wf[k]; ok && !reflect.DeepEqual(v, wv) && !strings.HasSuffix(k, "_addr") && !strings.HasSuffix(k, "_host") && k != "frame_frame_protocols" {
								t.Errorf("line %d: %s = %v, tshark %v", i+1, k, v, wv)
							}
						}
					}
					for _, k := range []string{"infiniband_infiniband_bth_opcode", "infiniband_infiniband_bth_psn", "infiniband_infiniband_bth_destqp"} {
						gv := gLayers["infiniband"].(map[string]any)[k]
						wv := wLayers["infiniband"].(map[string]any)[k]
						if !reflect.DeepEqual(gv, wv) {
							t.Errorf("line %d: %s = %v, tshark %v", i+1, k, gv, wv)
						}
					}
				}
			}
		})
	}
}

// TestEKLayersLikeTshark: every-field -T ek has a layer for each header
// tshark has a layer for, the headers inside an IPoIB payload included
// (an IP header there is the packet's only one on RoCEv1).
func TestEKLayersLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	headers := []string{"eth", "ip", "ipv6", "udp", "tcp", "icmp", "icmpv6", "arp", "infiniband"}
	for _, name := range []string{"synth/summaries.pcap", "rxe/read_atomic.pcap", "synth/rocev1.pcap"} {
		file := "../../testdata/" + name
		want, err := exec.Command(ts, "-r", file, "-T", "ek").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		got, err := rocetapOut("decode", "-r", file, "-T", "ek")
		if err != nil {
			t.Fatal(err)
		}
		wl, gl := lines(want), lines(got)
		if len(wl) != len(gl) {
			t.Fatalf("%s: tshark %d lines, rocetap %d", name, len(wl), len(gl))
		}
		for i := 1; i < len(gl); i += 2 {
			var g, w struct{ Layers map[string]any }
			if err := json.Unmarshal([]byte(gl[i]), &g); err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
			if err := json.Unmarshal([]byte(wl[i]), &w); err != nil {
				t.Fatalf("%s line %d: tshark's is not JSON: %v", name, i+1, err)
			}
			for _, h := range headers {
				if _, ok := w.Layers[h]; ok {
					if _, ok := g.Layers[h]; !ok {
						t.Errorf("%s packet %d: no %s layer; tshark has one", name, i/2+1, h)
					}
				}
			}
		}
	}
}

// TestTimeFormatsLikeTshark: decode -t shows the summary's time as
// tshark -t does, for every format, with a filter (dd counts from the
// previous packet shown).
func TestTimeFormatsLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	t.Setenv("TZ", "UTC")
	const file = "../../testdata/rxe/read_atomic.pcap"
	timeOf := func(out []byte) []string {
		var ts []string
		for _, l := range lines(out) {
			f := strings.Fields(l)
			if len(f) > 2 {
				ts = append(ts, f[1])
				if _, err := strconv.Atoi(strings.ReplaceAll(f[2], "-", "")); err == nil || strings.Count(f[1], "-") == 2 {
					ts[len(ts)-1] += " " + f[2] // a date, then the time
				}
			}
		}
		return ts
	}
	for _, tf := range printer.TimeFormats {
		args := []string{"-r", file, "-t", tf, "-Y", "infiniband.bth.opcode == 16"}
		want, err := exec.Command(ts, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := rocetapOut(append([]string{"decode"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if w, g := timeOf(want), timeOf(got); !reflect.DeepEqual(w, g) || len(g) == 0 {
			t.Errorf("-t %s: tshark %q, rocetap %q", tf, w, g)
		}
	}
}
