//go:build !linux

package flow

// mapSlotsMin: elsewhere every table is in the Go heap.
const mapSlotsMin = 1 << 62

type slotMem struct{}

func allocSlots(n int) ([]dirSlot, *slotMem) { return make([]dirSlot, n), nil }

func (m *slotMem) free() {}
