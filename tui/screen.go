package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
)

// ScreenLines returns what a simulation screen shows, a string per row
// (tests and benchmarks read the UI with it).
func ScreenLines(s tcell.SimulationScreen) []string {
	cells, w, h := s.GetContents()
	lines := make([]string, h)
	for y := range h {
		var b strings.Builder
		for x := range w {
			if rs := cells[y*w+x].Runes; len(rs) > 0 && rs[0] != 0 {
				b.WriteRune(rs[0])
			} else {
				b.WriteByte(' ')
			}
		}
		lines[y] = b.String()
	}
	return lines
}
