package cli

import (
	"fmt"

	"github.com/rocetap/rocetap/flow"
	"github.com/spf13/pflag"
)

// trackFlags are the tracker's own flags, on every command that tracks
// sessions: decode, sessions, stats, expert and tui.
type trackFlags struct {
	MaxSessions int // --max-sessions
	// decodeAs are the -d infiniband.bth.destqp==QP,PROTO options: the
	// ULP of connections whose CM exchange the capture lacks (check
	// fills it).
	decodeAs []flow.DecodeAs
	fabricFlags
}

// defaultMaxSessions is flow.DefaultMaxSessions.
const defaultMaxSessions = flow.DefaultMaxSessions

func (tf *trackFlags) register(f *pflag.FlagSet) {
	f.IntVar(&tf.MaxSessions, "max-sessions", defaultMaxSessions,
		"keep at most this many sessions (about 400 bytes each once idle, more for one whose message latencies were spread wide); past it the least recently active is evicted: the reports count it under \"evicted\", and a later packet of its QPs starts a new session (0: no limit)")
	tf.fabricFlags.register(f)
}

// check validates the flags, and reads the ULP decode-as options among
// the -d options (the others are readOptions').
func (tf *trackFlags) check(decodeAs []string) error {
	if tf.MaxSessions < 0 {
		return fmt.Errorf("--max-sessions %d: want a number of sessions, or 0 for no limit", tf.MaxSessions)
	}
	var err error
	if tf.decodeAs, err = ulpDecodeAs(decodeAs); err != nil {
		return err
	}
	return tf.fabricFlags.check()
}

// ulpDecodeAs reads the ULP decode-as options among the -d options
// (infiniband.bth.destqp==QP,PROTO; the others are readOptions'), for
// every command whose tracker sees ULPs: those with trackFlags, replay,
// capture and mpt learn.
func ulpDecodeAs(decodeAs []string) ([]flow.DecodeAs, error) {
	var out []flow.DecodeAs
	for _, d := range decodeAs {
		da, ok, err := flow.ParseDecodeAs(d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, da)
		}
	}
	return out, nil
}

// options returns the tracker options the flags set, on top of o.
func (tf *trackFlags) options(o flow.Options) flow.Options {
	o.MaxSessions = tf.MaxSessions
	o.DecodeAs = tf.decodeAs
	tf.fabricFlags.options(&o)
	return o
}
