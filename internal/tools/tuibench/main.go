// Command tuibench measures rocetap tui on a capture, in-process, on a
// tcell simulation screen (bench/run.sh runs it on a big gencap capture):
//
//	go run ./internal/tools/tuibench -r bench/out/tui.pcap
//
// It prints key=value lines:
//
//   - index_s, index_bytes_per_packet: the index alone (no tracker, no UI):
//     the time Build takes, and the heap it grows by per packet (after a
//     GC; the bound is tui.BytesPerPacket).
//   - first_paint_s, first_paint_row: from OpenIndex to the first screen
//     (Show) whose packet list shows a packet, with the UI set up as
//     rocetap tui sets it (tracker, standard views, Build in the
//     background with a 200 ms Notify, at the collector setting the
//     command uses, gcphase.Track); the first row it shows.
//   - row1_s: from OpenIndex to the first screen whose list shows packet
//     1 at the top ("never" if none did by a second after indexing).
//   - indexed_s: from OpenIndex until the index is complete (Done).
//   - indexed_cpu_s: the CPU time (user+sys) the process spent in that
//     while, on every goroutine: the index and its tracker, the UI's
//     draws, the garbage collector (bench/run.sh's primary measure, as
//     for the other commands: wall time on two cores depends on what
//     else runs).
//   - heap_bytes_per_packet: the heap then, over the packet count (index,
//     tracker and UI).
//   - filter_s, filter_shown: from the Enter that applies -filter (typed
//     into the filter bar) to the first screen that shows "shown: N";
//     N.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/gcphase"
	"github.com/rocetap/rocetap/tui"
)

// recScreen is a simulation screen that tells, on every Show, the time
// and whether the screen matches what is awaited.
type recScreen struct {
	tcell.SimulationScreen
	mu    sync.Mutex
	want  func(lines []string) bool
	found chan time.Time
	last  []string
	row1  time.Time // the first screen whose list shows packet 1
}

func (r *recScreen) Init() error {
	if err := r.SimulationScreen.Init(); err != nil {
		return err
	}
	r.SetSize(160, 45)
	return nil
}

func (r *recScreen) Show() {
	r.SimulationScreen.Show()
	now := time.Now()
	lines := tui.ScreenLines(r.SimulationScreen)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = lines
	if r.row1.IsZero() {
		for _, l := range lines[:min(len(lines), 4)] {
			if firstRow.MatchString(l) {
				r.row1 = now
			}
		}
	}
	if r.want != nil && r.want(lines) {
		r.want = nil
		r.found <- now
	}
}

// await arms want and returns the channel that gets the time of the first
// Show that satisfies it.
func (r *recScreen) await(want func([]string) bool) <-chan time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want, r.found = want, make(chan time.Time, 1)
	return r.found
}

func (r *recScreen) screen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.last, "\n")
}

var (
	firstRow = regexp.MustCompile(`^[│║ ]*1 +0\.0`)
	anyRow   = regexp.MustCompile(`^[│║ ]*[0-9]+ +[0-9]+\.[0-9]{6} `)
)

func main() {
	path := flag.String("r", "", "capture file")
	expr := flag.String("filter", "infiniband.bth.opcode == 17", "display filter to time")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up after this long")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for go tool pprof)")
	flag.Parse()
	if *path == "" {
		fmt.Fprintln(os.Stderr, "tuibench: -r FILE is required")
		os.Exit(2)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tuibench:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if err := run(*path, *expr, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "tuibench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func run(path, expr string, timeout time.Duration) error {
	// The index alone.
	before := heap()
	t0 := time.Now()
	ix, err := tui.OpenIndex(path)
	if err != nil {
		return err
	}
	ix.Build(tui.BuildOptions{})
	indexS := time.Since(t0).Seconds()
	if _, err := ix.Done(); err != nil {
		return err
	}
	n := ix.Len()
	grew := int64(heap()) - int64(before)
	fmt.Printf("packets=%d\nindex_s=%.3f\nindex_bytes_per_packet=%.2f\n", n, indexS, float64(grew)/float64(n))
	runtime.KeepAlive(ix)
	ix.Close()
	ix = nil

	// The UI, as rocetap tui sets it up.
	before = heap()
	// as rocetap tui makes its trackers by default (internal/cli/tui.go)
	newTracker := func(onEvent func(*flow.Event)) *flow.Tracker {
		return flow.New(flow.Options{OnEvent: onEvent, ULPOps: true, MaxSessions: flow.DefaultMaxSessions})
	}
	scr := &recScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8")}
	var firstShown string
	painted := scr.await(func(lines []string) bool {
		for _, l := range lines[:min(len(lines), 4)] {
			if anyRow.MatchString(l) {
				firstShown = strings.Fields(strings.Trim(l, "│║ "))[0]
				return true
			}
		}
		return false
	})
	t0 = time.Now()
	cpu0 := cpuTime()
	ix, err = tui.OpenIndex(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	app := tui.New(tui.Options{Index: ix, NewTracker: newTracker, Screen: scr})
	tui.AddStandardViews(app)
	type end struct {
		t   time.Time
		cpu time.Duration
	}
	built := make(chan end, 1)
	go func() {
		defer gcphase.Set(gcphase.Track)() // as rocetap tui builds (internal/cli/tui.go)
		ix.Build(tui.BuildOptions{NewTracker: newTracker, Notify: app.Refresh, Every: 200 * time.Millisecond})
		built <- end{time.Now(), cpuTime()}
	}()
	ran := make(chan error, 1)
	go func() { ran <- app.Run() }()
	giveUp := time.After(timeout)
	select {
	case t := <-painted:
		scr.mu.Lock()
		fmt.Printf("first_paint_s=%.3f\nfirst_paint_row=%s\n", t.Sub(t0).Seconds(), firstShown)
		scr.mu.Unlock()
	case err := <-ran:
		return fmt.Errorf("the UI ended before the first row was drawn: %v", err)
	case <-giveUp:
		return fmt.Errorf("no row 1 after %v:\n%s", timeout, scr.screen())
	}
	var e end
	select {
	case e = <-built:
	case <-giveUp:
		return fmt.Errorf("not indexed after %v", timeout)
	}
	if _, err := ix.Done(); err != nil {
		return err
	}
	fmt.Printf("indexed_s=%.3f\nindexed_cpu_s=%.3f\n", e.t.Sub(t0).Seconds(), (e.cpu - cpu0).Seconds())
	time.Sleep(time.Second) // the last Notify's draw
	scr.mu.Lock()
	if scr.row1.IsZero() {
		fmt.Printf("row1_s=never\n")
	} else {
		fmt.Printf("row1_s=%.3f\n", scr.row1.Sub(t0).Seconds())
	}
	scr.mu.Unlock()
	fmt.Printf("heap_bytes_per_packet=%.2f\n", float64(int64(heap())-int64(before))/float64(ix.Len()))

	// The filter, typed into the bar.
	shownRE := regexp.MustCompile(`shown: (\d+)`)
	var shown string
	filtered := scr.await(func(lines []string) bool {
		st := lines[len(lines)-1]
		m := shownRE.FindStringSubmatch(st)
		if m == nil || strings.Contains(st, "filtering") {
			return false
		}
		shown = m[1]
		return true
	})
	scr.InjectKey(tcell.KeyRune, '/', tcell.ModNone)
	for _, r := range expr {
		scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	// Wait for the bar to show the whole filter before timing Enter.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(scr.screen(), "Filter: "+expr); {
		if time.Now().After(deadline) {
			return fmt.Errorf("the filter bar does not show %q:\n%s", expr, scr.screen())
		}
		time.Sleep(time.Millisecond)
	}
	t2 := time.Now()
	scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	select {
	case t := <-filtered:
		scr.mu.Lock()
		fmt.Printf("filter_s=%.3f\nfilter_shown=%s\n", t.Sub(t2).Seconds(), shown)
		scr.mu.Unlock()
	case <-giveUp:
		return fmt.Errorf("the filter did not finish in %v:\n%s", timeout, scr.screen())
	}
	scr.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	select {
	case err := <-ran:
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("q did not end the UI")
	}
}
