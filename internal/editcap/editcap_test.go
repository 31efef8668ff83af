package editcap

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

const rxe = "../../testdata/rxe/"

func load(t *testing.T, name string) []Frame {
	t.Helper()
	frames, _, err := Read(rxe + name)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// seq returns the tokens "a" .. "b".
func seq(a, b int) []string {
	var s []string
	for i := a; i <= b; i++ {
		s = append(s, strconv.Itoa(i))
	}
	return s
}

// layout builds an expected output: numbers are input frames, "N" a NAK.
func layout(parts ...any) []string {
	var s []string
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			s = append(s, strconv.Itoa(v))
		case string:
			s = append(s, v)
		case []string:
			s = append(s, v...)
		}
	}
	return s
}

// checkLayout checks that output frame i holds the bytes of input frame
// want[i] (or is a NAK where want[i] is "N"), and that timestamps never go
// backwards.
func checkLayout(t *testing.T, in, out []Frame, want []string) {
	t.Helper()
	if len(out) != len(want) {
		t.Fatalf("%d output frames, want %d (%v)", len(out), len(want), want)
	}
	for i, w := range want {
		if w == "N" {
			if op := out[i].Data; len(op) == 0 {
				t.Errorf("out %d: empty NAK", i+1)
			}
			continue
		}
		n, _ := strconv.Atoi(w)
		if !bytes.Equal(out[i].Data, in[n-1].Data) {
			t.Errorf("out %d: bytes differ from input frame %d", i+1, n)
		}
	}
	for i := 1; i < len(out); i++ {
		if out[i].Info.Timestamp.Before(out[i-1].Info.Timestamp) {
			t.Errorf("out %d: timestamp %v is before out %d's %v", i+1, out[i].Info.Timestamp, i, out[i-1].Info.Timestamp)
		}
	}
}

func TestEditApplySimple(t *testing.T) {
	in := load(t, "write_imm.pcap") // 22 frames
	ts := func(n int) time.Time { return in[n-1].Info.Timestamp }
	cases := []struct {
		name string
		ops  Ops
		want []string
		// times: output number -> expected timestamp
		times map[int]time.Time
		check func(t *testing.T, r *Report)
	}{
		{"drop", Ops{Drop: []int{3}}, layout(1, 2, seq(4, 22)), map[int]time.Time{3: ts(4)}, func(t *testing.T, r *Report) {
			if r.OutNumber(3) != 0 || r.OutNumber(4) != 3 || !slices.Equal(r.Drops, []int{3}) {
				t.Errorf("OutNumber(3)=%d OutNumber(4)=%d Drops=%v", r.OutNumber(3), r.OutNumber(4), r.Drops)
			}
		}},
		{"drop range", Ops{Drop: []int{1, 2, 22}}, seq(3, 21), nil, nil},
		{"dup", Ops{Dup: []int{5}}, layout(seq(1, 5), 5, seq(6, 22)),
			map[int]time.Time{5: ts(5), 6: ts(5).Add(time.Microsecond), 7: ts(6)}, func(t *testing.T, r *Report) {
				if want := []Dup{{In: 5, Out: 5, Copy: 6}}; !slices.Equal(r.Dups, want) {
					t.Errorf("Dups = %v, want %v", r.Dups, want)
				}
			}},
		{"dup last", Ops{Dup: []int{22}}, layout(seq(1, 22), 22), map[int]time.Time{23: ts(22).Add(time.Microsecond)}, nil},
		{"swap", Ops{Swap: []int{7}}, layout(seq(1, 6), 8, 7, seq(9, 22)),
			map[int]time.Time{7: ts(7), 8: ts(8)}, func(t *testing.T, r *Report) {
				if want := []Swap{{In: 7, Out: [2]int{8, 7}}}; !slices.Equal(r.Swaps, want) {
					t.Errorf("Swaps = %v, want %v", r.Swaps, want)
				}
			}},
		{"all three", Ops{Drop: []int{2}, Dup: []int{10, 12}, Swap: []int{20}},
			layout(1, seq(3, 10), 10, 11, 12, 12, seq(13, 19), 21, 20, 22), nil, func(t *testing.T, r *Report) {
				want := []Dup{{In: 10, Out: 9, Copy: 10}, {In: 12, Out: 12, Copy: 13}}
				if !slices.Equal(r.Dups, want) {
					t.Errorf("Dups = %v, want %v", r.Dups, want)
				}
				if r.OutNumber(21) != 21 || r.OutNumber(20) != 22 || r.OutFrames != 23 {
					t.Errorf("OutNumber(20)=%d OutNumber(21)=%d OutFrames=%d", r.OutNumber(20), r.OutNumber(21), r.OutFrames)
				}
			}},
		// With --go-back-n a dropped ACK is still a plain drop.
		{"go-back-n drop of an ACK", Ops{Drop: []int{2}, GoBackN: true}, layout(1, seq(3, 22)), nil, func(t *testing.T, r *Report) {
			if len(r.Recoveries) != 0 {
				t.Errorf("recoveries %v for a dropped ACK", r.Recoveries)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rep, err := Apply(in, c.ops)
			if err != nil {
				t.Fatal(err)
			}
			checkLayout(t, in, out, c.want)
			for n, want := range c.times {
				if got := out[n-1].Info.Timestamp; !got.Equal(want) {
					t.Errorf("out %d: timestamp %v, want %v", n, got, want)
				}
			}
			if rep.InFrames != len(in) || rep.OutFrames != len(out) {
				t.Errorf("report counts %d -> %d, want %d -> %d", rep.InFrames, rep.OutFrames, len(in), len(out))
			}
			if c.check != nil {
				c.check(t, rep)
			}
		})
	}
}

// A copy is never later than the next frame.
func TestEditDupClamp(t *testing.T) {
	in := slices.Clone(load(t, "write_imm.pcap"))
	in[5].Info.Timestamp = in[4].Info.Timestamp.Add(300 * time.Nanosecond)
	out, _, err := Apply(in, Ops{Dup: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out[5].Info.Timestamp, in[5].Info.Timestamp; !got.Equal(want) {
		t.Errorf("copy at %v, want the next frame's %v", got, want)
	}
}

func TestEditApplyErrors(t *testing.T) {
	in := load(t, "write_imm.pcap")
	var reqs []Frame // pt_write without its ACKs: nothing to build a NAK from
	for _, f := range load(t, "pt_write.pcap") {
		if len(f.Data) != 62 {
			reqs = append(reqs, f)
		}
	}
	cases := []struct {
		name   string
		frames []Frame
		ops    Ops
		want   string
	}{
		{"past the end", in, Ops{Drop: []int{23}}, "--drop 23: no such frame: the capture has 22 frames, numbered 1 to 22"},
		{"zero", in, Ops{Dup: []int{0}}, "--dup 0: no such frame"},
		{"empty capture", nil, Ops{Drop: []int{1}}, "--drop 1: the capture has no frames"},
		{"twice", in, Ops{Drop: []int{3, 3}}, "--drop 3: frame 3 is given twice"},
		{"drop and dup", in, Ops{Drop: []int{3}, Dup: []int{3}}, "frame 3 is in both --drop 3 and --dup 3"},
		{"swap and drop", in, Ops{Drop: []int{6}, Swap: []int{5}}, "frame 6 is in both --drop 6 and --swap 5 (which exchanges frames 5 and 6)"},
		{"overlapping swaps", in, Ops{Swap: []int{5, 6}}, "frame 6 is in both --swap 5"},
		{"swap last", in, Ops{Swap: []int{22}}, "--swap 22: frame 22 is the last frame, there is no frame 23 to swap it with; --swap 21 exchanges frames 21 and 22"},
		{"dup of trigger", in, Ops{Drop: []int{8}, Dup: []int{10}, GoBackN: true}, "--dup 10: frame 10 is the request that triggers the NAK of the go-back-N recovery of dropped frame 8"},
		{"dup of moved", in, Ops{Drop: []int{8}, Dup: []int{9}, GoBackN: true}, "--dup 9: frame 9 is a response that moves after the retransmission"},
		{"no template", reqs, Ops{Drop: []int{1}, GoBackN: true}, "--go-back-n: frame 1: no response packet of this connection to build the NAK from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Apply(c.frames, c.ops)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// nakWant is what a synthesized NAK must decode to.
type nakWant struct {
	psn, msn, destQP uint32
}

func TestEditGoBackN(t *testing.T) {
	setUDPChecksums := func(fs []Frame) []Frame {
		// A non-zero UDP checksum (wrong, but masked by the ICRC) makes
		// the NAK carry a correct one.
		out := slices.Clone(fs)
		for i := range out {
			d := bytes.Clone(out[i].Data)
			binary.BigEndian.PutUint16(d[14+20+6:], 0x1234)
			out[i].Data = d
		}
		return out
	}
	cases := []struct {
		name   string
		file   string
		mutate func([]Frame) []Frame
		ops    Ops
		want   []string
		naks   []nakWant
		check  func(t *testing.T, in, out []Frame, r *Report)
	}{
		{
			// WRITE Last PSN 260 lost; WRITE First 261 (in 10) shows the
			// gap; the ACK of 260 (in 9) moves after the retransmission.
			name: "write last", file: "write_imm.pcap", ops: Ops{Drop: []int{8}, GoBackN: true},
			want: layout(seq(1, 7), 10, "N", 8, 10, 9, seq(11, 22)),
			naks: []nakWant{{psn: 260, msn: 3, destQP: 0x14}},
			check: func(t *testing.T, in, out []Frame, r *Report) {
				want := Recovery{
					Src: mustAddr("10.77.0.1"), Dst: mustAddr("10.77.0.2"), DestQP: 0x14, RequesterQP: 0x14,
					PSN: 260, Lost: []int{8}, Trigger: 10, TriggerOut: 8, NAK: 9, NAKMSN: 3, Template: 9,
					Retransmits: []Copy{{8, 10, 260}, {10, 11, 261}}, Moved: []Copy{{9, 12, 260}},
				}
				checkRecovery(t, r, want)
				t10 := in[9].Info.Timestamp
				for i, n := range []int{9, 10, 11, 12} {
					if got, w := out[n-1].Info.Timestamp, t10.Add(time.Duration(i+1)*time.Microsecond); !got.Equal(w) {
						t.Errorf("out %d at %v, want %v", n, got, w)
					}
				}
				if r.OutNumber(9) != 12 || r.OutNumber(8) != 0 || r.OutNumber(10) != 8 {
					t.Errorf("OutNumber 8,9,10 = %d,%d,%d", r.OutNumber(8), r.OutNumber(9), r.OutNumber(10))
				}
			},
		},
		{
			// Three connections; QP 0x13's first ACK comes after the loss,
			// so the MSN is 0.
			name: "write middle", file: "pt_write.pcap", ops: Ops{Drop: []int{22}, GoBackN: true},
			want: layout(seq(1, 21), 23, "N", 22, 23, seq(24, 50)),
			naks: []nakWant{{psn: 1735327, msn: 0, destQP: 0x13}},
		},
		{
			name: "first packet", file: "pt_write.pcap", ops: Ops{Drop: []int{1}, GoBackN: true},
			want: layout(3, "N", 1, 3, 2, seq(4, 50)),
			naks: []nakWant{{psn: 9926126, msn: 0, destQP: 0x11}},
		},
		{
			name: "burst", file: "write_imm.pcap", ops: Ops{Drop: []int{10, 11, 12}, GoBackN: true},
			want: layout(seq(1, 9), 13, "N", 10, 11, 12, 13, seq(14, 22)),
			naks: []nakWant{{psn: 261, msn: 4, destQP: 0x14}},
			check: func(t *testing.T, in, out []Frame, r *Report) {
				if len(r.Recoveries) != 1 || !slices.Equal(r.Recoveries[0].Lost, []int{10, 11, 12}) {
					t.Errorf("recoveries %+v, want one losing 10,11,12", r.Recoveries)
				}
			},
		},
		{
			// IPv6; the READ responses to 1800-1801 move after the
			// retransmitted READ request.
			name: "ipv6 read", file: "ipv6_mix.pcap", ops: Ops{Drop: []int{13}, GoBackN: true},
			want: layout(seq(1, 12), 16, "N", 13, 16, 14, 15, seq(17, 21)),
			naks: []nakWant{{psn: 1800, msn: 4, destQP: 0x23}},
		},
		{
			// No Acknowledge in this capture: the NAK is cut down from
			// the nearest response with an AETH, the 1014-byte READ
			// response Last (in 10).
			name: "atomic, template not an ACK", file: "read_atomic.pcap", ops: Ops{Drop: []int{11}, GoBackN: true},
			want: layout(seq(1, 10), 13, "N", 11, 13, 12, seq(14, 16)),
			naks: []nakWant{{psn: 774, msn: 4, destQP: 0x17}},
			check: func(t *testing.T, in, out []Frame, r *Report) {
				if tp := r.Recoveries[0].Template; tp != 10 {
					t.Errorf("template in %d, want 10", tp)
				}
				if n := len(out[11].Data); n != 62 {
					t.Errorf("NAK is %d bytes, want 62", n)
				}
			},
		},
		{
			name: "udp checksum", file: "write_imm.pcap", mutate: setUDPChecksums, ops: Ops{Drop: []int{8}, GoBackN: true},
			want: layout(seq(1, 7), 10, "N", 8, 10, 9, seq(11, 22)),
			naks: []nakWant{{psn: 260, msn: 3, destQP: 0x14}},
		},
		{
			// The last request is lost: the requester times out.
			name: "tail", file: "send_imm.pcap", ops: Ops{Drop: []int{17}, GoBackN: true},
			want: seq(1, 18),
			check: func(t *testing.T, in, out []Frame, r *Report) {
				want := Recovery{
					Src: mustAddr("10.77.0.1"), Dst: mustAddr("10.77.0.2"), DestQP: 0x1a, RequesterQP: 0x1a,
					PSN: 522, Lost: []int{17}, Timeout: true,
					Retransmits: []Copy{{17, 17, 522}}, Moved: []Copy{{18, 18, 522}},
				}
				checkRecovery(t, r, want)
				last := in[17].Info.Timestamp
				if got := out[16].Info.Timestamp; !got.Equal(last.Add(10 * time.Millisecond)) {
					t.Errorf("retransmission at %v, want 10 ms after %v", got, last)
				}
				if got := out[17].Info.Timestamp; !got.Equal(last.Add(10*time.Millisecond + time.Microsecond)) {
					t.Errorf("moved ACK at %v", got)
				}
			},
		},
		{
			// The capture resends PSN 4864 itself (RNR retries): no gap.
			name: "resent by the capture", file: "err_rnr.pcap", ops: Ops{Drop: []int{1}, GoBackN: true},
			want: seq(2, 6),
			check: func(t *testing.T, in, out []Frame, r *Report) {
				if len(r.Recoveries) != 0 {
					t.Errorf("recoveries %+v, want none", r.Recoveries)
				}
			},
		},
		{
			name: "two losses and more", file: "pt_write.pcap",
			ops:  Ops{Drop: []int{1, 22}, Dup: []int{40}, Swap: []int{45}, GoBackN: true},
			want: layout(3, "N", 1, 3, 2, seq(4, 21), 23, "N", 22, 23, seq(24, 40), 40, seq(41, 44), 46, 45, seq(47, 50)),
			naks: []nakWant{{psn: 9926126, msn: 0, destQP: 0x11}, {psn: 1735327, msn: 0, destQP: 0x13}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // tshark is slow to start
			in := load(t, c.file)
			if c.mutate != nil {
				in = c.mutate(in)
			}
			out, rep, err := Apply(in, c.ops)
			if err != nil {
				t.Fatal(err)
			}
			checkLayout(t, in, out, c.want)
			var naks []int
			for i, w := range c.want {
				if w == "N" {
					naks = append(naks, i+1)
				}
			}
			if len(naks) != len(c.naks) || len(rep.Recoveries) < len(naks) {
				t.Fatalf("%d NAKs in the layout, %d expected, %d recoveries", len(naks), len(c.naks), len(rep.Recoveries))
			}
			for i, n := range naks {
				if rep.Recoveries[i].NAK != n {
					t.Errorf("recovery %d: NAK out %d, want %d", i, rep.Recoveries[i].NAK, n)
				}
				checkNAK(t, out[n-1], c.naks[i])
			}
			for _, rc := range rep.Recoveries {
				for _, r := range rc.Retransmits {
					if !bytes.Equal(out[r.Out-1].Data, in[r.In-1].Data) {
						t.Errorf("retransmission out %d differs from in %d", r.Out, r.In)
					}
				}
			}
			if c.check != nil {
				c.check(t, in, out, rep)
			}
			checkTshark(t, in, out, c.want, c.naks)
		})
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func checkRecovery(t *testing.T, r *Report, want Recovery) {
	t.Helper()
	if len(r.Recoveries) != 1 {
		t.Fatalf("%d recoveries, want 1", len(r.Recoveries))
	}
	got := r.Recoveries[0]
	if got.Src != want.Src || got.Dst != want.Dst || got.DestQP != want.DestQP || got.RequesterQP != want.RequesterQP ||
		got.PSN != want.PSN || !slices.Equal(got.Lost, want.Lost) || got.Timeout != want.Timeout ||
		got.Trigger != want.Trigger || got.TriggerOut != want.TriggerOut || got.NAK != want.NAK ||
		got.NAKMSN != want.NAKMSN || got.Template != want.Template ||
		!slices.Equal(got.Retransmits, want.Retransmits) || !slices.Equal(got.Moved, want.Moved) {
		t.Errorf("recovery\n got %+v\nwant %+v", got, want)
	}
}

// checkNAK decodes f with the decode package and compares it with the
// real NAK PSN sequence error that rxe sent in err_psn_seq.pcap.
func checkNAK(t *testing.T, f Frame, w nakWant) {
	t.Helper()
	var p decode.Packet
	decode.Decode(&p, f.Data, f.Info.LinkType)
	if p.Err != nil || p.Flags != 0 {
		t.Errorf("NAK decodes with flags %v: %v", p.Flags.Names(), p.Err)
	}
	if p.Has&decode.HdrAETH == 0 || p.BTH.Opcode != decode.Opcode(decode.TransportRC|decode.OpAcknowledge) {
		t.Fatalf("NAK is %v", p.BTH.Opcode)
	}
	if p.AETH.Syndrome != 0x60 || p.BTH.PSN != decode.PSN(w.psn) || p.AETH.MSN != w.msn || p.BTH.DestQP != w.destQP {
		t.Errorf("NAK syndrome %#x PSN %d MSN %d QP %#x, want 0x60 %d %d %#x", p.AETH.Syndrome, p.BTH.PSN, p.AETH.MSN, p.BTH.DestQP, w.psn, w.msn, w.destQP)
	}
	if p.ICRCStatus != decode.CRCGood {
		t.Errorf("NAK ICRC %s", p.ICRCStatus)
	}
	if len(p.Payload) != 0 || p.Has&decode.HdrPayload != 0 {
		t.Errorf("NAK has %d payload bytes", len(p.Payload))
	}
	real := load(t, "err_psn_seq.pcap")[1]
	var r decode.Packet
	decode.Decode(&r, real.Data, real.Info.LinkType)
	a, b := p.BTH, r.BTH
	if a.SE != b.SE || a.MigReq != b.MigReq || a.PadCount != b.PadCount || a.TVer != b.TVer || a.AckReq != b.AckReq ||
		a.FECN != b.FECN || a.BECN != b.BECN || a.Reserved7 != b.Reserved7 || p.AETH.Syndrome != r.AETH.Syndrome ||
		(p.Has&decode.HdrIPv4 != 0 && len(f.Data) != len(real.Data)) {
		t.Errorf("NAK differs from rxe's:\n got %+v %d bytes\nwant %+v %d bytes", a, len(f.Data), b, len(real.Data))
	}
}

// checkTshark writes out, reads it back with pcapgo and with tshark, and
// compares every frame's BTH and AETH with what tshark says about the
// input frame it copies (or with the NAK's expected values).
func checkTshark(t *testing.T, in, out []Frame, want []string, naks []nakWant) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.pcap")
	if err := Write(path, out, in[0].Info.LinkType); err != nil {
		t.Fatal(err)
	}
	// pcapgo, not our reader: the file holds out, timestamps included.
	back := testcap.ReadPcap(t, path)
	if len(back) != len(out) {
		t.Errorf("pcapgo read %d frames, want %d", len(back), len(out))
	}
	for i := range min(len(back), len(out)) {
		if !bytes.Equal(back[i].Data, out[i].Data) || !back[i].Time.Equal(out[i].Info.Timestamp) {
			t.Fatalf("pcapgo: frame %d differs from what was written", i+1)
		}
	}

	if testcap.ToolPart(t, "tshark", testcap.InstallTshark) == "" {
		return // the tshark comparison
	}
	fields := func(p string) [][]string {
		cmd := exec.Command("tshark", "-r", p, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-T", "fields",
			"-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.a",
			"-e", "infiniband.aeth.syndrome", "-e", "infiniband.aeth.msn", "-e", "infiniband.invariant.crc",
			"-e", "ip.checksum.status", "-e", "udp.checksum.status")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark: %v: %s", err, stderr.String())
		}
		var rows [][]string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			rows = append(rows, strings.Split(l, "\t"))
		}
		return rows
	}
	inPath := filepath.Join(t.TempDir(), "in.pcap")
	if err := Write(inPath, in, in[0].Info.LinkType); err != nil {
		t.Fatal(err)
	}
	inRows, outRows := fields(inPath), fields(path)
	if len(outRows) != len(want) {
		t.Fatalf("tshark shows %d frames, want %d", len(outRows), len(want))
	}
	k := 0
	for i, w := range want {
		got := outRows[i]
		if w != "N" {
			n, _ := strconv.Atoi(w)
			if !slices.Equal(got, inRows[n-1]) {
				t.Errorf("tshark out %d: %q, want in %d's %q", i+1, got, n, inRows[n-1])
			}
			continue
		}
		nw := naks[k]
		k++
		var p decode.Packet
		decode.Decode(&p, out[i].Data, out[i].Info.LinkType)
		exp := []string{"17", strconv.Itoa(int(nw.psn)), "0x" + strconv.FormatUint(uint64(nw.destQP)|1<<24, 16)[1:], "0", "96",
			strconv.Itoa(int(nw.msn)), "0x" + strconv.FormatUint(uint64(p.ICRCComputed)|1<<32, 16)[1:]}
		if len(got) < 9 || !slices.Equal(got[:7], exp) {
			t.Errorf("tshark NAK out %d: %q, want %q", i+1, got[:7], exp)
		}
		// Checksum status: 0 bad, 1 good, 3 not present (IPv4 UDP
		// checksum 0), 4 illegal (IPv6 UDP checksum 0, as rxe sends).
		if got[7] != "" && got[7] != "1" {
			t.Errorf("tshark NAK out %d: IPv4 checksum status %s, want 1 (good)", i+1, got[7])
		}
		if got[8] == "0" {
			t.Errorf("tshark NAK out %d: UDP checksum is bad", i+1)
		}
	}
}

func TestEditNAKUDPChecksumGood(t *testing.T) {
	testcap.Tshark(t)
	in := slices.Clone(load(t, "write_imm.pcap"))
	for i := range in {
		d := bytes.Clone(in[i].Data)
		binary.BigEndian.PutUint16(d[14+20+6:], 0x1234)
		in[i].Data = d
	}
	out, rep, err := Apply(in, Ops{Drop: []int{8}, GoBackN: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.pcap")
	if err := Write(path, out, 1); err != nil {
		t.Fatal(err)
	}
	nak := strconv.Itoa(rep.Recoveries[0].NAK)
	b, err := exec.Command("tshark", "-r", path, "-o", "udp.check_checksum:TRUE", "-Y", "frame.number == "+nak,
		"-T", "fields", "-e", "udp.checksum.status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(b)); s != "1" {
		t.Errorf("NAK UDP checksum status %q, want 1 (good)", s)
	}
}

func TestEditReadWriteRoundTrip(t *testing.T) {
	for _, name := range []string{"write_imm.pcap", "ipv6_mix.pcap"} {
		in, link, err := Read(rxe + name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := Write(path, in, link); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want, _ := os.ReadFile(rxe + name)
		// Same records; the file header may differ (snaplen).
		if len(got) != len(want) || !bytes.Equal(got[24:], want[24:]) {
			t.Errorf("%s: rewritten file differs from the original", name)
		}
	}
}

func TestEditReportString(t *testing.T) {
	in := load(t, "write_imm.pcap")
	_, rep, err := Apply(in, Ops{Drop: []int{2, 8}, Dup: []int{15}, Swap: []int{19}, GoBackN: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `read 22 frames, wrote 24
drop  in 2
dup   in 15 -> out 16, copy out 17
swap  in 19,20 -> out 22,21
go-back-n: lost in 8 (10.77.0.1 -> 10.77.0.2 QP 0x000014, PSN 260)
  in 10 -> out 7 shows the gap
  out 8  NAK PSN sequence error, PSN 260, MSN 3, to QP 0x000014 (built from in 9)
  out 9  retransmit in 8, PSN 260
  out 10  retransmit in 10, PSN 261
  out 11  response in 9 (PSN 260) moved after the retransmission
`
	if got := rep.String(); got != want {
		t.Errorf("String:\n%s\nwant:\n%s", got, want)
	}
}
