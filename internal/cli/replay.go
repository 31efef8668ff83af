package cli

import (
	"errors"
	"fmt"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/replay"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// ReplayOptions are the flags of `rocetap replay`.
type ReplayOptions struct {
	readOptions
	MPT            string // --mpt
	Responder      string // --responder: overrides the MPT's responder.address
	Profile        string // --profile: overrides the MPT's profile
	Output         string // -T text|json
	JUnit          string // --junit FILE
	Force          bool   // --force: --junit may replace an existing file
	Filter         string // -Y
	MaxDivergences int    // --max-divergences (0: all)
	MaxCompletions int    // --max-completions (0: all)
	modelFlags
}

// NewCmdReplay builds `rocetap replay`.
func NewCmdReplay(ios IO) *cobra.Command { return newCmdReplay(ios, nil) }

// newCmdReplay builds the command; runF replaces the run function in
// tests of flag parsing.
func newCmdReplay(ios IO, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{}
	cmd := &cobra.Command{
		Use:   "replay -r FILE --mpt MPT",
		Short: "Replay a capture into the reference HCA model and report where the real responder answered differently",
		Long: `Feed every request the capture shows arriving at the responder (the node
the MPT file describes) into rocetap's reference HCA model, in capture
order, and compare each response the model sends with the one the real
responder sent: missing and extra responses, opcode, PSN, ACK/NAK syndrome,
MSN, READ data (the bytes the model knows) and ATOMIC original values.
What the rules leave to the responder (ACKs it was not asked for, one ACK
for several requests, memory its CPU changed since an earlier READ
showed it) is a note, not a divergence. UC sends no responses: the
report lists what the model dropped and why. The report also lists the
work completions the model predicts.

The responder is the MPT file's responder.address unless --responder
names another: an IPv4 or IPv6 address, a GID (an IPv4-mapped GID is its
IPv4 address) or, for native InfiniBand without GRHs, a LID (lid:1). The responder
profile is --profile, else the MPT file's "profile", else ibta: rxe
answers like the Linux Soft-RoCE driver where it departs from the spec.

Exit status: 0 when the model and the capture agree, 1 when they diverge,
2 on a usage or input error (bad flags, no or malformed MPT file,
unreadable or corrupt capture). With --junit FILE, a JUnit XML report for
CI systems is written too: one test case per session, one failure per
divergence.`,
		Example: `  rocetap replay -r err_bad_rkey.pcap --mpt err_bad_rkey.mpt.json
  rocetap replay -r cap.pcap --mpt responder.mpt.json --profile rxe -T json
  rocetap replay -r cap.pcap --mpt responder.mpt.json --junit replay.xml
  rocetap replay -r cap.pcap --mpt responder.mpt.json -Y 'infiniband.bth.destqp == 0x11'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q: give the capture with -r (rocetap replay -r FILE --mpt MPT)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return replayRun(opts, ios)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see rocetap replay --help)", err)
	})
	f := cmd.Flags()
	f.StringVarP(&opts.Path, "read-file", "r", "", "capture file to read (pcap, pcapng, ERF; - for stdin)")
	f.StringVar(&opts.Format, "format", "", "capture format when it cannot be detected: pcap, pcapng or erf")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO), for -Y")
	f.StringVar(&opts.MPT, "mpt", "", "MPT file of the responder: its QPs, memory regions and windows (rocetap help mpt-format)")
	f.StringVar(&opts.Responder, "responder", "", "the responder: IPv4, IPv6 or GID address, or LID (lid:1); default: the MPT file's responder.address")
	f.StringVar(&opts.Profile, "profile", "", "responder profile: ibta (the spec) or rxe (Linux Soft-RoCE); default: the MPT file's, else ibta")
	f.StringVarP(&opts.Output, "output", "T", "text", "output format: text or json")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to this file (for CI); an existing file is kept unless --force")
	f.BoolVar(&opts.Force, "force", false, "let --junit replace an existing file")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "replay only packets matching this display filter")
	f.IntVar(&opts.MaxDivergences, "max-divergences", 1000, "list at most this many divergences (all are counted; 0: no limit)")
	f.IntVar(&opts.MaxCompletions, "max-completions", 1000, "list at most this many completions in -T json (all are counted; 0: no limit)")
	opts.modelFlags.register(f)
	return cmd
}

func (o *ReplayOptions) validate() error {
	switch {
	case o.Output != "text" && o.Output != "json":
		return fmt.Errorf("-T %q: want text or json", o.Output)
	case o.Path == "":
		return errors.New("no capture given: use -r FILE (or -r - to read a pcap/pcapng stream from stdin)")
	case o.MPT == "":
		return errors.New("no MPT file given: use --mpt FILE, the responder's QPs and memory registrations (rocetap help mpt-format)")
	case o.MaxDivergences < 0:
		return fmt.Errorf("--max-divergences %d: want 0 (no limit) or more", o.MaxDivergences)
	case o.MaxCompletions < 0:
		return fmt.Errorf("--max-completions %d: want 0 (no limit) or more", o.MaxCompletions)
	}
	return nil
}

// replaySetup is what replay needs before reading the capture.
type replaySetup struct {
	file      *mpt.File
	profile   hca.Profile
	responder decode.Node
	filter    *filter.Filter
	decodeAs  []flow.DecodeAs // -d's ULPs, for the tracker -Y may need
}

// setup reads the MPT file and checks the flags that depend on it; every
// error says what to do.
func (o *ReplayOptions) setup() (*replaySetup, error) {
	st := &replaySetup{}
	f, err := loadMPTFile(o.MPT)
	if err != nil {
		return nil, err
	}
	st.file = f
	if st.decodeAs, err = ulpDecodeAs(o.Decode); err != nil {
		return nil, err
	}
	name, from := f.Profile, "the MPT file's profile ("+o.MPT+")"
	if o.Profile != "" {
		name, from = o.Profile, "--profile"
	}
	if st.profile, err = hca.ProfileByName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	st.responder = f.Responder
	if o.Responder != "" {
		if st.responder, err = parseNodeFlag("--responder", o.Responder); err != nil {
			return nil, err
		}
	}
	if o.Filter != "" {
		if st.filter, err = filter.Compile(o.Filter); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func replayRun(o *ReplayOptions, ios IO) error {
	st, err := o.setup()
	if err != nil {
		return err
	}
	var junit *outfile.File // refused now, not after the replay, when it may not be written
	if o.JUnit != "" {
		inputs := []string{o.MPT}
		if o.Path != "-" {
			inputs = append(inputs, o.Path)
		}
		if junit, err = outfile.Create(o.JUnit, outfile.Options{Force: o.Force, Inputs: inputs, Flag: "--junit"}); err != nil {
			return err
		}
		defer junit.Abort() // nothing after Commit
	}
	mo, err := o.modelFlags.options(st.profile)
	if err != nil {
		return err
	}
	m, err := st.file.NewModel(o.MPT, mo, true)
	if err != nil {
		return err
	}
	rp, err := replay.New(m, replay.Options{Responder: st.responder, QPs: st.file.QPs,
		MaxDivergences: o.MaxDivergences, MaxCompletions: o.MaxCompletions,
		Capture: o.Path, MPT: o.MPT, Profile: st.profile.String()})
	if err != nil {
		return err
	}
	// The model's work per packet dwarfs reading it: one goroutine (see
	// stream.TrackOptions.OneGoroutine).
	to := stream.TrackOptions{OneGoroutine: true, Pass: stream.Pass{Each: func(p *decode.Packet) bool {
		if st.filter != nil && !st.filter.Match(p) {
			rp.Skip()
			return true
		}
		rp.Feed(p)
		return true
	}}}
	if stream.NeedsTracker(nil, st.filter) {
		to.Tracker = flow.New(flow.Options{DecodeAs: st.decodeAs})
	}
	_, readErr := runTracked(&o.readOptions, ios, false, to)
	var corrupt *exitError
	if readErr != nil && !errors.As(readErr, &corrupt) {
		return readErr // nothing was read: no such file, not a capture
	}
	if readErr != nil {
		rp.CutShort()
	}
	rep := rp.Finish()
	if rep.Requests == 0 && readErr == nil {
		msg := "nothing to replay: no request in " + o.Path + " goes to the responder " + st.responder.String()
		if o.Responder == "" {
			msg += " (the MPT file's responder.address)"
		}
		if st.filter != nil {
			msg += " among the packets -Y selects"
		}
		if len(rep.RequestHosts) > 0 {
			msg += "; the capture's RDMA requests go to"
			for i, a := range rep.RequestHosts {
				if i > 0 {
					msg += ","
				}
				msg += " " + a.String()
			}
			msg += ": pass --responder ADDR with the node the MPT file describes"
		}
		return errors.New(msg)
	}
	out := newOutBuf(ios.Out)
	if o.Output == "json" {
		out.b = rep.AppendJSON(out.b)
	} else {
		out.b = rep.AppendText(out.b)
	}
	out.flush()
	if junit != nil {
		if err := rep.WriteJUnit(junit); err != nil {
			return fmt.Errorf("--junit %s: %w", o.JUnit, err)
		}
		if err := junit.Commit(); err != nil {
			return err
		}
	}
	switch {
	case readErr != nil:
		return readErr // exit status 2, after the report of what came before
	case out.err != nil:
		return out.err
	case !rep.Pass():
		return &exitError{code: ExitDivergence, err: fmt.Errorf("replay: %d divergence%s from the reference model (profile %s): the responder in %s did not answer as the model does",
			rep.DivergenceCount, map[bool]string{true: "", false: "s"}[rep.DivergenceCount == 1], st.profile, o.Path)}
	}
	return nil
}
