package tui

import (
	"sync"

	"github.com/rocetap/rocetap/flow"
)

// What the RDMA views (ladder, stats, MPT) need from the App beyond the
// View interface, and the background job they compute in.

// Selected returns the index of the packet selected in the list (-1:
// none). Call it from the UI goroutine (a key's Do, a view's Refresh, or
// through QueueUpdate).
func (a *App) Selected() int { return a.selected }

// NewTracker makes a tracker like the index's (with the same MPT), or
// returns nil when the App was given none.
func (a *App) NewTracker(onEvent func(*flow.Event)) *flow.Tracker {
	if a.o.NewTracker == nil {
		return nil
	}
	return a.o.NewTracker(onEvent)
}

// front returns the name of the page in front ("main": the three panes)
// and its view (nil for the panes and for pages that are not views:
// help, prompts).
func (a *App) front() (string, View) {
	name, _ := a.pages.GetFrontPage()
	return name, a.views[name]
}

// showRDMAView opens a view from the panes or another view; on other
// pages (help, a prompt) the key is theirs.
func (a *App) showRDMAView(name string) bool {
	if front, v := a.front(); !a.hasView(name) || front != "main" && v == nil {
		return false
	}
	a.ShowView(name)
	return true
}

// bgJob runs a view's work in one goroutine at a time: start while it
// runs asks for one more run after it, so a view refreshed on every
// chunk of a growing index computes at most twice in a row, never in
// parallel. The work's own state needs no lock: runs are serialized, and
// each happens after the previous one (through mu).
type bgJob struct {
	mu      sync.Mutex
	running bool
	again   bool
}

// start runs work in the background, now or after the current run.
func (j *bgJob) start(work func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running {
		j.again = true
		return
	}
	j.running = true
	go func() {
		for {
			work()
			j.mu.Lock()
			if !j.again {
				j.running = false
				j.mu.Unlock()
				return
			}
			j.again = false
			j.mu.Unlock()
		}
	}()
}
