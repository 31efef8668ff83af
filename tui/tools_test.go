package tui

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
)

// selectedFrame is the frame number of the packet the App has selected.
func (h *harness) selectedFrame() int {
	ch := make(chan int, 1)
	h.app.app.QueueUpdate(func() { ch <- h.app.selected + 1 })
	return <-ch
}

// waitFrame waits until the App has selected frame want (keys are
// handled in the background); it returns the frame selected last.
func (h *harness) waitFrame(want int) int {
	deadline := time.Now().Add(waitLimit)
	for {
		f := h.selectedFrame()
		if f == want || time.Now().After(deadline) {
			return f
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAppMarks: m marks the selected packet (its row is reversed), ] and [
// walk the marks, m again unmarks.
func TestAppMarks(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	mark := func(frame int) {
		h.typ(":")
		h.waitText("Go to packet:")
		h.typ(itoa(frame))
		h.key(tcell.KeyEnter)
		h.waitText("Frame " + itoa(frame) + ":")
		h.typ("m")
	}
	mark(5)
	mark(12)
	mark(20)
	h.typ(":")
	h.waitText("Go to packet:")
	h.typ("1")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 1:")
	var got []int
	for _, want := range []int{5, 12, 20} {
		h.typ("]")
		got = append(got, h.waitFrame(want))
	}
	if !slices.Equal(got, []int{5, 12, 20}) {
		t.Errorf("] walked %v, want the marks 5, 12, 20", got)
	}
	h.typ("]")
	h.waitText("no more marked packets that way")
	h.typ("[")
	if f := h.waitFrame(12); f != 12 {
		t.Errorf("[ from 20 selected %d, want 12", f)
	}
	h.typ("m") // unmark 12
	h.typ(":")
	h.waitText("Go to packet:")
	h.typ("1")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 1:")
	h.typ("]")
	h.typ("]")
	if f := h.waitFrame(20); f != 20 {
		t.Errorf("after unmarking 12, ] ] selected %d, want 20", f)
	}
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// TestAppFind: f finds text in the summary, hex bytes and a filter, after
// the selected packet; Ctrl-N finds the next.
func TestAppFind(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/err_psn_seq.pcap")
	h.waitText("Frame 1:")
	find := func(what string) {
		h.typ("f")
		h.waitText("Find:")
		h.typ(what)
		h.key(tcell.KeyEnter)
	}
	find("psn sequence")
	if f := h.waitFrame(2); f != 2 {
		t.Errorf("find text: frame %d, want 2 (the NAK)", f)
	}
	find("filter:infiniband.bth.opcode == 10")
	if f := h.waitFrame(3); f != 3 {
		t.Errorf("find filter: frame %d, want 3 (the next WRITE Only)", f)
	}
	h.key(tcell.KeyCtrlN)
	if f := h.waitFrame(4); f != 4 {
		t.Errorf("Ctrl-N: frame %d, want 4", f)
	}
	h.key(tcell.KeyCtrlN) // wraps to frame 1
	h.waitText(`find "filter:infiniband.bth.opcode == 10": wrapped to the start`)
	if f := h.waitFrame(1); f != 1 {
		t.Errorf("Ctrl-N at the end: frame %d, want 1 (wrapped)", f)
	}
	// A regular expression, in the detail tree too (the AETH's MSN field).
	find(`re:Message Sequence Number: 0\b`)
	if f := h.waitFrame(2); f != 2 {
		t.Errorf("find re: frame %d, want 2", f)
	}
	find("nosuchtext")
	h.waitText(`find "nosuchtext": no match`)
	h.typ(":")
	h.waitText("Go to packet:")
	h.typ("1")
	h.key(tcell.KeyEnter)
	h.waitText("Frame 1:")
	find("hex:12b7") // UDP port 4791 in every frame: the next one
	if f := h.waitFrame(2); f != 2 {
		t.Errorf("find hex: frame %d, want 2", f)
	}
	find("hex:zz")
	h.waitText("want hex digits after hex:")
}

// TestAppWrite: w writes the shown packets (here those a filter selects)
// to a pcapng file that reads back byte for byte.
func TestAppWrite(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	h.typ("/")
	h.typ("infiniband.bth.opcode == 4")
	h.key(tcell.KeyEnter)
	h.waitText("shown: 8")
	out := filepath.Join(t.TempDir(), "shown.pcapng")
	h.typ("w")
	h.waitText("Write the shown packets to:")
	h.typ(out)
	h.key(tcell.KeyEnter)
	h.waitText("wrote 8 packets to " + out)
	want := matching(t, h.ix, "infiniband.bth.opcode == 4")
	r, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		data, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("the file holds %d packets, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		orig, _, _ := h.ix.Read(want[i]-1, nil)
		if !bytes.Equal(data, orig) {
			t.Fatalf("packet %d of the file is not frame %d", i+1, want[i])
		}
	}
	h.typ("w")
	h.waitText("Write the shown packets to:")
	h.typ(filepath.Join(t.TempDir(), "no", "such", "dir", "x.pcapng"))
	h.key(tcell.KeyEnter)
	h.waitText("not written: ", "no/such/dir/x.pcapng: the directory")
}

// TestAppWriteKeepsFiles: w never loses a file (issue 17: writing to the
// open capture deleted it). The open capture is refused; an existing file
// is replaced only after a yes; n keeps it; ~/ is the home directory; no
// temporary file is left.
func TestAppWriteKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	capf := filepath.Join(dir, "cm_rping.pcap")
	orig, err := os.ReadFile(td + "rxe/cm_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(capf, orig, 0o644)
	h := startApp(t, capf)
	h.waitText("Frame 1:")
	write := func(path string) {
		h.typ("w")
		h.waitText("Write the shown packets to:")
		h.typ(path)
		h.key(tcell.KeyEnter)
	}
	write(capf)
	h.waitText("is the capture open here")
	if b, _ := os.ReadFile(capf); !bytes.Equal(b, orig) {
		t.Fatal("the open capture changed")
	}
	h.typ("j") // the session still works
	h.waitText("Frame 2:")

	other := filepath.Join(dir, "precious.pcapng")
	os.WriteFile(other, []byte("precious"), 0o644)
	write(other)
	h.waitText("precious.pcapng exists. Replace it? (y/N)")
	h.typ("n")
	h.key(tcell.KeyEnter)
	if b, _ := os.ReadFile(other); string(b) != "precious" {
		t.Fatal("answering n replaced the file")
	}
	write(other)
	h.waitText("Replace it?")
	h.typ("y")
	h.key(tcell.KeyEnter)
	h.waitText("wrote 29 packets to " + other)
	if r, err := capture.Open(other); err != nil {
		t.Fatalf("the replaced file does not read: %v", err)
	} else {
		r.Close()
	}

	home := t.TempDir()
	t.Setenv("HOME", home)
	write("~/in-home.pcapng")
	h.waitText("wrote 29 packets to " + filepath.Join(home, "in-home.pcapng"))
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Errorf("the directory holds %d files, want the capture and precious.pcapng (a temporary file was left?)", len(es))
	}
}

// TestMarkedRowColors (issue 17.6): a mark keeps the row's colors (a NAK
// stays red), adds a sign before the number and underlines the row; it
// is gone when unmarked.
func TestMarkedRowColors(t *testing.T) {
	t.Parallel()
	ix := buildIndex(t, td+"rxe/err_psn_seq.pcap") // frame 2 is a NAK
	c := newListContent(ix)
	style := func(col int) (fg, bg tcell.Color, attrs tcell.AttrMask, text string) {
		cell := c.GetCell(2, col)
		fg, bg, attrs = cell.Style.Decompose()
		return fg, bg, attrs, cell.Text
	}
	fg0, bg0, a0, text0 := style(0)
	c.toggleMark(1)
	fg, bg, a, text := style(0)
	if fg != fg0 || bg != bg0 || fg != tcell.ColorRed {
		t.Errorf("marked NAK row: %v on %v, want its own red on %v", fg, bg, bg0)
	}
	if a&markAttrs != markAttrs || a0&tcell.AttrUnderline != 0 || strings.TrimSpace(text) != markSign+strings.TrimSpace(text0) {
		t.Errorf("marked row: attributes %v text %q (unmarked %v %q)", a, text, a0, text0)
	}
	if _, _, a, _ := style(8); a&markAttrs != markAttrs {
		t.Error("the Info cell of a marked row is not underlined")
	}
	c.toggleMark(1)
	if _, _, a, text := style(0); a != a0 || strings.TrimSpace(text) != strings.TrimSpace(text0) {
		t.Errorf("unmarked row keeps the mark: %v %q", a, text)
	}
}

// TestSortList (issue 17): o orders the list by a column (-len:
// descending) and back to capture order; the filter's packets keep the
// order.
func TestSortList(t *testing.T) {
	t.Parallel()
	h := startApp(t, td+"rxe/cm_rping.pcap")
	h.waitText("Frame 1:")
	order := func(spec string) {
		h.typ("o")
		h.waitText("Order by")
		h.key(tcell.KeyCtrlU)
		h.typ(spec)
		h.key(tcell.KeyEnter)
	}
	lengths := func() []int {
		var out []int
		h.app.Application().QueueUpdateDraw(func() {})
		for range 100 {
			out = out[:0]
			done := make(chan struct{})
			h.app.Application().QueueUpdate(func() {
				for r := 1; r <= h.app.content.count(); r++ {
					pi, _ := h.app.content.packetAt(r - 1)
					e, _ := h.ix.Entry(pi)
					out = append(out, e.Length)
				}
				close(done)
			})
			<-done
			if len(out) > 0 {
				break
			}
		}
		return out
	}
	order("-len")
	h.waitText("ordered by -len")
	got := lengths()
	if !slices.IsSortedFunc(got, func(a, b int) int { return b - a }) || len(got) != 29 {
		t.Errorf("ordered by -len: %v", got)
	}
	// A column made from the packets: PSN, compared as numbers.
	order("psn")
	h.waitText("ordered by psn")
	var psns []int
	done := make(chan struct{})
	h.app.Application().QueueUpdate(func() {
		for r := 1; r <= h.app.content.count(); r++ {
			pi, _ := h.app.content.packetAt(r - 1)
			var p decode.Packet
			h.ix.Decode(pi, &p, nil)
			if p.Has&decode.HdrBTH != 0 {
				psns = append(psns, int(p.BTH.PSN))
			}
		}
		close(done)
	})
	<-done
	if !slices.IsSorted(psns) || len(psns) == 0 {
		t.Errorf("ordered by psn: %v", psns)
	}
	order("nosuch")
	h.waitText(`order by "nosuch": want a column`)
	order("")
	h.waitText("capture order")
	h.app.Application().QueueUpdate(func() {})
	if pi, _ := h.app.content.packetAt(0); pi != 0 {
		t.Errorf("capture order: first row is packet %d", pi)
	}
}
