package tui

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rivo/tview"
)

// TestEscape: escape is tview.Escape, on every string of up to 8 of '[',
// ']', 'a' and '/' (a tag character and one that is not), on random
// strings of every character tview's pattern names and some it does not,
// and on every cell of the test captures' rows; it makes one string when
// it escapes and none when it does not.
func TestEscape(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := escape(s), tview.Escape(s); got != want {
			t.Fatalf("escape(%q) = %q, tview.Escape %q", s, got, want)
		}
	}
	var all func(prefix string, n int)
	all = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for _, c := range []string{"[", "]", "a", "/"} {
			all(prefix+c, n-1)
		}
	}
	all("", 8)
	chars := []rune(`[]]azAZ09_,;: -."#/é'` + "\t")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteRune(chars[rng.IntN(len(chars))])
		}
		check(b.String())
	}
	escaped := 0
	for _, path := range allocCaptures {
		ix := buildIndex(t, path)
		c := newListContent(ix)
		for pi := range ix.Len() {
			r, _ := c.row(pi)
			for _, cell := range r.cells {
				check(cell)
				want := 0.0
				if escape(cell) != cell {
					want, escaped = 1, escaped+1
				}
				if n := testing.AllocsPerRun(10, func() { escape(cell) }); n != want {
					t.Errorf("escape(%q) allocates %v times, want %v", cell, n, want)
				}
			}
		}
	}
	if escaped == 0 {
		t.Error("no cell of the captures escaped: the test checks nothing of it")
	}
}

// TestMayBeFloat: every text mayBeFloat turns away is one
// strconv.ParseFloat rejects (so a sort compares as before), on floats
// in every syntax ParseFloat takes, random strings of their characters
// and others, and every cell of the test captures' rows; and it turns
// away the addresses and the Info text.
func TestMayBeFloat(t *testing.T) {
	texts := []string{"0", "-1.5", "+.5e-3", "1e308", "0x1.8p1", "0X1P-2", "1_000", "0x_1p0", "inf", "-Infinity", "NaN", "+INF", "12.", ".", "", "1.2.3"}
	chars := []byte("0123456789+-._eEpPxXaAfFiInNtTyY .:/g")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		b := make([]byte, rng.IntN(10))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		texts = append(texts, string(b))
	}
	for _, path := range allocCaptures {
		ix := buildIndex(t, path)
		c := newListContent(ix)
		for pi := range ix.Len() {
			r, _ := c.row(pi)
			texts = append(texts, r.cells[:]...)
			for _, i := range []int{2, 3, 8} {
				if mayBeFloat(r.cells[i]) {
					t.Errorf("%s frame %d: mayBeFloat(%q)", path, pi+1, r.cells[i])
				}
			}
		}
	}
	parsed := 0
	for _, s := range texts {
		_, err := strconv.ParseFloat(s, 64)
		if err == nil {
			parsed++
		}
		if !mayBeFloat(s) && err == nil {
			t.Errorf("mayBeFloat(%q) is false; ParseFloat takes it", s)
		}
	}
	if parsed < 1000 {
		t.Errorf("only %d texts are floats: the test checks little", parsed)
	}
}
