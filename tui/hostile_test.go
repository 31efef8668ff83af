package tui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/internal/synth"
)

// hostile is what a packet could carry to drive a terminal or tview: a
// clear screen, OSC 52 (set the clipboard) ended by BEL, SGR, C1 CSI as a
// byte and as UTF-8, DEL, CR LF, and tview color and region tags.
var hostile = []byte("\x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07\x07\x9b31m\xc2\x9b2J\x7f\r\n\t" +
	"[red]RED[-][::r]REV[::-][\"r1\"]x[\"\"]\x1b[31mSGR\x1b[0m\x1bPq\x1b\\\x90\x9d\x9c")

// hostileCapture writes a pcap whose packets carry hostile bytes where
// they are shown: a RoCE SEND payload, a CM REQ's private data, the
// payload of a UDP datagram that is not RoCE, and an Ethernet frame of an
// unknown type. It returns the path and the frames.
func hostileCapture(t *testing.T, dir string) (string, [][]byte) {
	t.Helper()
	var frames [][]byte
	send, _, _, err := synth.RoCEv2{T: synth.Transport{
		BTH:     decode.BTH{Opcode: decode.OpSendOnly, DestQP: 0x11, PSN: 7, AckReq: true, PadCount: uint8(-len(hostile) & 3)},
		Payload: hostile,
	}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	frames = append(frames, send)

	// cm_rping's CM REQ with its private data replaced.
	ix := buildIndex(t, td+"rxe/cm_rping.pcap")
	var p decode.Packet
	req, err := ix.Decode(0, &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	req = bytes.Clone(req)
	priv := -1
	for _, l := range printer.Lines(&p, nil) {
		if l.Field != nil && strings.HasSuffix(l.Field.Abbrev, ".private") && l.Off > 0 {
			priv = l.Off
			copy(req[l.Off:l.Off+l.Len], bytes.Repeat(hostile, 1+l.Len/len(hostile)))
		}
	}
	if priv < 0 {
		t.Fatal("cm_rping's packet 1 has no CM private data")
	}
	if err := decode.FixCRCs(req, decode.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	frames = append(frames, req)

	udp, _, _, err := synth.RoCEv2{DstPort: 9999, UDPChecksum: true, T: synth.Transport{Payload: hostile}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	frames = append(frames, udp)

	eth := append([]byte{0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x1b, 0x5b}, hostile...)
	frames = append(frames, eth)

	path := filepath.Join(dir, "hostile.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapWriter(f, decode.LinkTypeEthernet, 65535, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, fr := range frames {
		info := capture.PacketInfo{Timestamp: time.Unix(1700000000, int64(i)*1000), CaptureLength: len(fr), Length: len(fr)}
		if err := w.WritePacket(info, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, frames
}

// controlCells returns the cells that hold a control character (C0, DEL
// or C1): a terminal would act on them.
func controlCells(s *screen) []string {
	var out []string
	for i, c := range s.cells {
		for _, r := range c.Runes {
			if r != 0 && (r < 0x20 || (r >= 0x7f && r <= 0x9f)) {
				out = append(out, fmt.Sprintf("%U at %d,%d", r, i%s.w, i/s.w))
			}
		}
	}
	return out
}

// checkScreen fails on any control character on the screen, and on a
// color in the bytes pane that packet bytes could have asked for.
func checkScreen(t *testing.T, s *screen, where string) {
	t.Helper()
	if bad := controlCells(s); len(bad) > 0 {
		t.Errorf("%s: control characters reach the screen: %v\n%s", where, bad[:min(len(bad), 10)], s)
	}
	top, bottom, left, right, ok := s.box(" Bytes ")
	if !ok {
		return
	}
	for y := top; y <= bottom; y++ {
		for x := left; x <= right; x++ {
			if fg, _, _ := s.at(x, y).Style.Decompose(); fg == tcell.ColorRed {
				t.Errorf("%s: the bytes pane has red text at %d,%d: a [red] tag from the packet was obeyed\n%s", where, x, y, s)
				return
			}
		}
	}
}

// TestHostilePackets: packet bytes with terminal escape sequences and
// tview tags are drawn as text in every pane (list, details with every
// line selected, bytes), never as control characters or styles.
func TestHostilePackets(t *testing.T) {
	t.Parallel()
	path, frames := hostileCapture(t, t.TempDir())
	h := startApp(t, path)
	h.waitText("Frame 1:")
	for i, fr := range frames {
		h.typ(":" + strconv.Itoa(i+1))
		h.key(tcell.KeyEnter)
		h.waitText(fmt.Sprintf("Frame %d: %d bytes", i+1, len(fr)))
		s := h.settle()
		checkScreen(t, s, fmt.Sprintf("packet %d", i+1))
		// The ASCII column shows the bytes, printable ones as themselves
		// (the pane may have scrolled: what it shows is a part of them).
		var ascii strings.Builder
		for _, l := range s.boxLines(" Bytes ") {
			if len(l) > 56 {
				ascii.WriteString(strings.TrimRight(l[56:], " "))
			}
		}
		if want := printable(fr); !strings.Contains(want, ascii.String()) || ascii.Len() < 16 {
			t.Errorf("packet %d: the ASCII column shows %q, want a part of %q", i+1, ascii.String(), want)
		}
		// Select every line of the tree: each highlights its bytes.
		lines, _ := fullLines(t, h.ix, i)
		h.key(tcell.KeyTab)
		for n := range lines {
			h.key(tcell.KeyDown)
			checkScreen(t, h.snapshot(), fmt.Sprintf("packet %d, details line %d", i+1, n+1))
		}
		checkScreen(t, h.settle(), fmt.Sprintf("packet %d, last details line", i+1))
		h.keys(tcell.KeyTab, tcell.KeyTab) // bytes, then the list again
	}
	// The other views too.
	for _, k := range []string{"s", "e", "?"} {
		h.typ(k)
		s := h.settle()
		checkScreen(t, s, "view "+k)
		h.key(tcell.KeyEscape)
	}
}

// TestHostileFileName: a capture's name is shown in the status line as
// text, whatever characters it has.
func TestHostileFileName(t *testing.T) {
	data, err := os.ReadFile(td + "rxe/read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	name := "x\x1b[2J\x07[red]y.pcap"
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startApp(t, name)
	s := h.waitText("Frame 1:")
	checkScreen(t, s, "status line")
	if !strings.Contains(statusLine(s), "[red]y.pcap") {
		t.Errorf("status line %q does not show the name's [red] as text", statusLine(s))
	}
}

// TestCorruptHalfwayApp: a capture corrupt (or cut short) in the middle
// lists its good packets, and the status line says where it stopped.
func TestCorruptHalfwayApp(t *testing.T) {
	for _, how := range []string{"length", "cut"} {
		t.Run(how, func(t *testing.T) {
			path, off := corruptCopy(t, "rxe/read_atomic.pcap", 8, how)
			t.Chdir(filepath.Dir(path)) // a short name, so the status line has room
			h := startApp(t, filepath.Base(path))
			s := h.waitText("Frame 1:", "packets: 8")
			st := statusLine(s)
			for _, want := range []string{"stopped:", "packet 9", "byte offset " + strconv.Itoa(off)} {
				if !strings.Contains(st, want) {
					t.Errorf("status line %q does not say %q", st, want)
				}
			}
			if got := rowNumbers(s); len(got) != 8 || got[0] != 1 || got[7] != 8 {
				t.Errorf("rows %v, want the 8 good packets", got)
			}
			h.typ("G")
			s = h.waitText("Frame 8:")
			if got := rowNumbers(s); got[len(got)-1] != 8 {
				t.Errorf("the last row is %d, want 8", got[len(got)-1])
			}
			h.typ(":9")
			h.key(tcell.KeyEnter)
			h.waitText(`no packet "9": the capture has packets 1 to 8`)
		})
	}
}
