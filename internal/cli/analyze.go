package cli

import (
	"fmt"
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/gcphase"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/pathcmp"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// AnalyzeOptions are the flags of sessions, stats and expert.
type AnalyzeOptions struct {
	readOptions
	Output string // -T text|json
	Filter string // -Y
	MPT    string // --mpt: check remote accesses against this MPT file
	modelFlags
	trackFlags

	// Two capture points (twopoints.go): -r given twice, --window, and
	// the capture the comparison collects in this pass.
	Paths   []string
	Window  time.Duration
	collect *pathcmp.Capture

	Top int // --top (stats only): text details the Top busiest sessions, 0 all
}

// analysis is what one pass of the tracker over a capture gives the
// report commands.
type analysis struct {
	tracker  *flow.Tracker
	totals   flow.Totals
	expert   flow.ExpertLog
	sessions []*flow.Session // sessions with at least one packet the filter selected
	start    time.Time
}

// analyze runs the tracker over the whole capture. With -Y, the tracker
// still sees every packet (PSN analysis needs them all); the filter picks
// the packets counted in the totals, the events reported and the
// sessions listed.
func analyze(o *AnalyzeOptions, ios IO) (*analysis, error) {
	var flt *filter.Filter
	if o.Filter != "" {
		var err error
		if flt, err = filter.Compile(o.Filter); err != nil {
			return nil, err
		}
	}
	mpt, err := trackMPT(o.MPT, &o.modelFlags)
	if err != nil {
		return nil, err
	}
	an := &analysis{}
	var pending []flow.Event
	if err := o.trackFlags.check(o.Decode); err != nil {
		return nil, err
	}
	an.tracker = flow.New(o.trackFlags.options(flow.Options{
		MPT:        mpt,
		OnEvent:    func(e *flow.Event) { pending = append(pending, *e) },
		OnEvicting: func() { evictingGC() }, // (the caller set gcphase.Grow)
	}))
	matched := map[uint32]bool{}
	first := true
	_, err = runTracked(&o.readOptions, ios, false, stream.TrackOptions{Pass: stream.Pass{
		Tracker: an.tracker,
		Each: func(p *decode.Packet) bool {
			if first {
				an.start, first = p.Frame.Time, false
			}
			if o.collect != nil {
				o.collect.Add(p)
			}
			if flt != nil && !flt.Match(p) {
				pending = pending[:0]
				return true
			}
			an.totals.Add(p)
			if flt != nil && p.Analysis.Session != 0 {
				matched[p.Analysis.Session] = true
			}
			if len(pending) > 0 {
				for i := range pending {
					an.expert.Add(&pending[i])
				}
				pending = pending[:0]
			}
			return true
		},
	}})
	if err != nil && !isDamaged(err) {
		// Nothing was read (no such file, not a capture): no report.
		return nil, err
	}
	// A frame tracked before its session merged into another names the
	// provisional one: count it for the session that absorbed it.
	for id := range matched {
		matched[an.tracker.Resolve(id)] = true
	}
	if o.collect != nil {
		o.collect.Resolve(an.tracker.Resolve)
	}
	// Events at the end of the capture (unanswered requests).
	for i := range pending {
		if flt == nil || matched[pending[i].Session] {
			an.expert.Add(&pending[i])
		}
	}
	an.expert.Resolve(an.tracker.Resolve)
	an.totals.Fabric = an.tracker.Fabric()
	an.sessions = an.tracker.Sessions()
	if flt != nil {
		an.sessions = slices.DeleteFunc(an.sessions, func(s *flow.Session) bool { return !matched[s.ID] })
	}
	return an, err
}

// evicted returns what the sessions evicted past --max-sessions counted,
// nil when none was.
func (an *analysis) evicted(o *AnalyzeOptions) *printer.EvictedJSON {
	e := an.tracker.Evicted()
	if e.Sessions == 0 {
		return nil
	}
	return printer.ToEvictedJSON(&e, o.MaxSessions)
}

func newAnalyzeCmd(ios IO, use, short, long, example string, run func(*analysis, *AnalyzeOptions, *outBuf), two twoPointReport) *cobra.Command {
	return newAnalyzeCmdOpts(ios, &AnalyzeOptions{}, use, short, long, example, run, two)
}

// newAnalyzeCmdOpts is newAnalyzeCmd with the options given, for a
// command that registers flags of its own on them (stats: --top).
func newAnalyzeCmdOpts(ios IO, opts *AnalyzeOptions, use, short, long, example string, run func(*analysis, *AnalyzeOptions, *outBuf), two twoPointReport) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use + " -r FILE",
		Short:   short,
		Long:    long + twoPointsHelp,
		Example: example + "\n  rocetap " + use + " -r host.pcapng -r mirror.pcapng",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Output != "text" && opts.Output != "json" {
				return fmt.Errorf("-T %q: want text or json", opts.Output)
			}
			if opts.Top < 0 {
				return fmt.Errorf("--top %d: want how many sessions to detail, or 0 for all of them", opts.Top)
			}
			if len(opts.Paths) > 1 || cmd.Flags().Changed("window") {
				return twoPointsRun(cmd, opts, ios, run, two)
			}
			if len(opts.Paths) == 1 {
				opts.Path = opts.Paths[0]
			}
			defer gcphase.Set(gcphase.Grow)() // (Track from the first eviction: analyze)
			an, err := analyze(opts, ios)
			if an == nil {
				return err
			}
			defer gcReportPhase()()
			out := newOutBuf(ios.Out)
			run(an, opts, out)
			out.flush()
			if err == nil {
				err = out.err
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Paths, "read-file", "r", nil, "capture file to read (pcap, pcapng, ERF; - for stdin); twice, -r A -r B, for two capture points of the same traffic")
	f.StringVar(&opts.Format, "format", "", "capture format when it cannot be detected: pcap, pcapng or erf")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO; PROTO nvme-rdma, rpcordma, iser, smb_direct)")
	f.StringVarP(&opts.Output, "output", "T", "text", "output format: text or json")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "count only packets matching this display filter (the tracker still sees every packet)")
	f.StringVar(&opts.MPT, "mpt", "", mptFlagUsage)
	opts.modelFlags.register(f)
	opts.trackFlags.register(f)
	f.DurationVar(&opts.Window, "window", time.Second, "with -r A -r B: longest one-way delay between the points; copies of a PSN further apart are different packets")
	return cmd
}

// NewCmdSessions builds `rocetap sessions`.
func NewCmdSessions(ios IO) *cobra.Command {
	return newAnalyzeCmd(ios, "sessions", "List the QP sessions of a capture: pairs of QPs and UD flows, with counts and errors",
		`Rebuild the sessions of a capture. An RC/UC/XRC session is the pair of
QPs of a connection, learned from CM REQ/REP when the capture has them
("cm"), otherwise from responses matched to outstanding requests
("response"); until then a direction stands alone ("unpaired"). A UD flow
is one (source QP, destination QP, Q_Key) between two addresses. With
--mpt FILE, each session also counts its remote accesses checked against
the MPT, the violations, and the responder's answers that disagree.`,
		`  rocetap sessions -r cm_rping.pcap
  rocetap sessions -r cap.pcap -T json
  rocetap sessions -r cap.pcap -Y 'infiniband.bth.opcode == 17'`,
		func(an *analysis, o *AnalyzeOptions, out *outBuf) {
			// a session at a time: a capture may have millions
			ev := an.evicted(o)
			if o.Output == "json" {
				out.b = append(out.b, '[')
				for i, s := range an.sessions {
					out.b = printer.AppendSessionJSON(out.b, i, s, an.start)
					out.maybeFlush()
				}
				n := len(an.sessions)
				if ev != nil {
					out.b = printer.AppendEvictedJSON(out.b, n, ev)
					n++
				}
				out.b = printer.AppendSessionsJSONEnd(out.b, n)
				return
			}
			t := printer.NewSessionsTable(an.sessions, an.start)
			out.b = t.AppendHead(out.b)
			out.b = printer.AppendEvicted(out.b, ev)
			for _, s := range an.sessions {
				out.b = t.AppendRow(out.b, s)
				out.maybeFlush()
			}
		}, twoPointReport{printer.AppendPathSessions, printer.AppendPathSessionsJSON})
}

// NewCmdStats builds `rocetap stats`.
func NewCmdStats(ios IO) *cobra.Command {
	opts := &AnalyzeOptions{}
	cmd := newAnalyzeCmdOpts(ios, opts, "stats", "Statistics: opcodes, syndromes, congestion, PFC, and per-session messages and latencies",
		`Count a capture: the BTH opcode histogram, AETH syndromes, CNPs and
ECN marks, PFC pauses per priority, CM messages, and for each session its
messages by kind with request→completion latency (min, median, p99, max),
NAKs by syndrome, RNR NAKs by timer, retransmissions and losses.

The text report details the 20 sessions with the most packets (--top N;
--top 0: every session) and says how many it left out; the counts above
cover every session, rocetap sessions lists every session a line each,
and -T json always has every session.`,
		`  rocetap stats -r pt_write.pcap
  rocetap stats -r cap.pcap -T json
  rocetap stats -r cap.pcap --top 0`,
		func(an *analysis, o *AnalyzeOptions, out *outBuf) {
			// a session at a time: a capture may have millions
			ev := an.evicted(o)
			if o.Output == "json" {
				head, tail := printer.StatsJSON(&an.totals, len(an.sessions), ev)
				tail = printer.AppendNVMeStatsJSON(tail, an.nvmeStats())
				tail = printer.AppendRPCStatsJSON(tail, an.rpcStats())
				out.b = append(out.b, head...)
				for i, s := range an.sessions {
					out.b = printer.AppendStatsJSONSession(out.b, i, s, an.start)
					out.maybeFlush()
				}
				out.b = append(out.b, tail...)
				return
			}
			out.b = printer.AppendStatsHead(out.b, &an.totals, len(an.sessions))
			out.b = printer.AppendEvicted(out.b, ev)
			detailed := printer.BusiestSessions(an.sessions, o.Top)
			for _, s := range detailed {
				out.b = printer.AppendStatsSession(out.b, s, an.start)
				out.maybeFlush()
			}
			out.b = printer.AppendStatsNotDetailed(out.b, len(an.sessions)-len(detailed), o.Top)
			out.b = printer.AppendNVMeStats(out.b, an.nvmeStats())
			out.b = printer.AppendRPCStats(out.b, an.rpcStats())
		}, twoPointReport{printer.AppendPathStats, printer.AppendPathStatsJSON})
	cmd.Flags().IntVar(&opts.Top, "top", defaultStatsTop,
		"text: detail the `N` sessions with the most packets (0: every session); the counts cover every session, and -T json always has every session")
	return cmd
}

// defaultStatsTop is how many sessions stats details by default: a
// screenful or two, where every session of a fabric capture (millions)
// made a report no one reads.
const defaultStatsTop = 20

// NewCmdExpert builds `rocetap expert`.
func NewCmdExpert(ios IO) *cobra.Command {
	return newAnalyzeCmd(ios, "expert", "Expert events (gaps, retransmissions, NAKs, ...) grouped by severity and kind",
		`List what the tracker found, like Wireshark's Expert Information:
errors (PSN gaps, NAKs, ICRC errors, opcode sequence errors, a requester
that likely gave up: retry counter exceeded), warnings (retransmissions,
duplicates, out-of-order packets, RNR NAKs, unanswered requests,
incomplete messages), notes (CNPs, ECN marks, context missing at the
capture start) and chats (connection setup). Each event names its frame and session;
the same findings are per-packet fields rocetap.analysis.* for -Y and -e.

With --mpt FILE, every remote access sent to the file's responder is
checked against its memory registrations: mpt_violation (warning) on an
access the MPT forbids, mpt_accepted (error) on a response that executed
one anyway, mpt_rejected (error) on a NAK of an access the MPT allows.

Fabric health: ce_without_cnp, cnp_without_ce, no_rate_reduction and
cnp_unknown_qp (DCQCN, fields rocetap.cc.*; --cnp-timeout, --rate-window),
pfc_storm, pfc_paused_traffic and pfc_unused_priority (PFC, fields
rocetap.pfc.*; --storm-threshold, --link-speed, --prio-map).`,
		`  rocetap expert -r err_rnr.pcap
  rocetap expert -r err_write_oob.pcap --mpt err_write_oob.mpt.json
  rocetap expert -r cap.pcap -Y 'rocetap.session.id == 3'`,
		func(an *analysis, o *AnalyzeOptions, out *outBuf) {
			if o.Output == "json" {
				out.b = printer.AppendExpertJSON(out.b, an.expert.Groups(), an.start, an.evicted(o))
				return
			}
			out.b = printer.AppendExpert(out.b, an.expert.Groups(), an.start, an.evicted(o))
		}, twoPointReport{printer.AppendPathExpert, printer.AppendPathExpertJSON})
}
