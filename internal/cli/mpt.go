package cli

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/internal/text"
	"github.com/rocetap/rocetap/mpt"
	"github.com/rocetap/rocetap/mpt/learn"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// NewCmdMPT builds `rocetap mpt` and its subcommands learn, import and
// check.
func NewCmdMPT(ios IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mpt",
		Short: "Make and check MPT files: what the responder had registered (rocetap help mpt-format)",
		Long: `An MPT file tells rocetap what one responder node had registered while a
capture was taken: its protection domains, queue pairs and memory regions
(rocetap help mpt-format). decode/sessions/stats/expert --mpt check every remote
access against it; replay --mpt builds the reference HCA model from it.

  learn   infer one from a capture: the QPs and memory regions the responder's answers prove
  import  convert iproute2's rdma -j resource show mr/qp/pd output
  check   validate one and print what it holds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdMPTLearn(ios, nil), newCmdMPTImport(ios, nil), newCmdMPTCheck(ios, nil))
	return cmd
}

// ---- mpt learn ----

// MPTLearnOptions are the flags of `rocetap mpt learn`.
type MPTLearnOptions struct {
	readOptions
	Responder string // --responder
	Profile   string // --profile
	TrustUC   bool   // --trust-uc
	Out       string // -o
	Force     bool   // --force: -o may replace an existing file
}

func newCmdMPTLearn(ios IO, runF func(*MPTLearnOptions) error) *cobra.Command {
	opts := &MPTLearnOptions{}
	cmd := &cobra.Command{
		Use:   "learn -r FILE [-o OUT]",
		Short: "Infer an MPT file from a capture: the responder's QPs and the memory regions its answers prove",
		Long: `Infer the MPT file of the responder in a capture from what its answers
prove. The responder is the node that sent the most responses (ACKs, NAKs,
READ responses, ATOMIC ACKs) unless --responder names it; when two sent as
many, or none answered, it is the one the capture's first request went to
(with rdma_cm, the CM REQ's destination). Its QPs are the
destinations of the requests sent to it, with their transport, the first
request's PSN as expected_psn (or the PSN a PSN sequence error NAK names,
when that is the QP's first answer), the peer the responses go to, the MTU
the tracker learned (else 1024) and, as access flags, the operations the
responder executed. One PD (0) holds everything.

Memory regions are inferred per rkey from the accesses the responder
executed (ACKed WRITEs, READs answered with data, ATOMICs answered with an
ATOMIC ACK): the smallest range covering them, with the operations seen
plus LOCAL_WRITE, and lkey = rkey. NAKed accesses are not counted. RNR NAKs
give min_rnr_timer and a receive list; a SEND NAKed for its length gives a
receive too small for it. Notes on stderr say what was inferred from what,
and what the capture cannot tell.

The file is written to -o (default: standard output) and replays without
divergence against its own capture: rocetap replay -r FILE --mpt OUT.`,
		Example: `  rocetap mpt learn -r read_atomic.pcap -o read_atomic.learned.json
  rocetap mpt learn -r cap.pcap --responder 10.77.0.2 --profile rxe -o responder.mpt.json
  rocetap replay -r cap.pcap --mpt responder.mpt.json`,
		Args: noArgs("rocetap mpt learn -r FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Path == "" {
				return errors.New("no capture given: use -r FILE (or -r - to read a pcap/pcapng stream from stdin)")
			}
			if runF != nil {
				return runF(opts)
			}
			return mptLearnRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Path, "read-file", "r", "", "capture file to read (pcap, pcapng, ERF; - for stdin)")
	f.StringVar(&opts.Format, "format", "", "capture format when it cannot be detected: pcap, pcapng or erf")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO), which a note names")
	f.StringVar(&opts.Responder, "responder", "", "node to model: IPv4, IPv6 or GID address, or LID (lid:1); default: the node that sent the most responses")
	f.StringVar(&opts.Profile, "profile", "", "responder profile to write: ibta or rxe; default: rxe when the NAKs show Soft-RoCE's answers, else none (ibta)")
	f.BoolVar(&opts.TrustUC, "trust-uc", false, "count UC WRITEs as executed (UC has no acknowledgements to prove it)")
	f.StringVarP(&opts.Out, "output-file", "o", "", "write the MPT file here (default: standard output)")
	f.BoolVar(&opts.Force, "force", false, "let -o replace an existing file (never an input)")
	return cmd
}

func mptLearnRun(o *MPTLearnOptions, ios IO) error {
	lo := learn.Options{TrustUC: o.TrustUC}
	var err error
	if lo.DecodeAs, err = ulpDecodeAs(o.Decode); err != nil {
		return err
	}
	if o.Responder != "" {
		a, err := parseNodeFlag("--responder", o.Responder)
		if err != nil {
			return err
		}
		lo.Responder = a
	}
	if o.Profile != "" {
		if _, err := hca.ProfileByName(o.Profile); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		lo.Profile = o.Profile
	}
	l := learn.New(lo)
	_, readErr := runTracked(&o.readOptions, ios, false, stream.TrackOptions{Pass: stream.Pass{Each: func(p *decode.Packet) bool {
		l.Add(p)
		return true
	}}})
	var corrupt *exitError
	if readErr != nil && !errors.As(readErr, &corrupt) {
		return readErr // nothing was read: no such file, not a capture
	}
	res, err := l.Finish()
	if err != nil {
		if o.Responder == "" && strings.Contains(err.Error(), "name the node") {
			err = fmt.Errorf("%w with --responder ADDR", err)
		}
		if readErr != nil {
			return fmt.Errorf("%w (after: %v)", readErr, err)
		}
		return err
	}
	if err := writeMPTOut(o.Out, outfile.Options{Force: o.Force, Inputs: []string{o.Path}, Flag: "-o"}, ios, res.File); err != nil {
		return err
	}
	f := res.File
	fmt.Fprintf(ios.ErrOut, "rocetap mpt learn: responder %s (%s): %s, %s%s\n", f.Responder, res.ResponderFrom,
		text.Plural(len(f.QPs), "QP"), text.Plural(len(f.MRs), "MR"), outName(o.Out))
	for _, n := range res.Notes {
		fmt.Fprintln(ios.ErrOut, "  note: "+sanitizeLines(n))
	}
	return readErr // exit status 2 for a capture corrupt part-way, after the file of what came before
}

// ---- mpt import ----

// MPTImportOptions are the flags of `rocetap mpt import`.
type MPTImportOptions struct {
	RdmaJSON   string   // --rdma-json
	Snapshot   string   // --snapshot
	MRFile     string   // --mr
	QPFile     string   // --qp
	PDFile     string   // --pd
	Dev        string   // --dev
	PID        uint32   // --pid
	Responder  string   // --responder
	Profile    string   // --profile
	MTU        int      // --mtu
	QPAccess   string   // --qp-access
	HasQPAcc   bool     // --qp-access was given
	Remote     string   // --remote
	VA         []string // --va KEY=ADDR
	MRAccess   []string // --mr-access KEY=FLAGS
	RemoteOnly bool     // --remote-mrs-only
	Out        string   // -o
	Force      bool     // --force: -o may replace an existing file
}

func newCmdMPTImport(ios IO, runF func(*MPTImportOptions) error) *cobra.Command {
	opts := &MPTImportOptions{}
	cmd := &cobra.Command{
		Use:   "import (--rdma-json FILE | --mr FILE --qp FILE [--pd FILE]) --dev DEV [-o OUT]",
		Short: "Write an MPT file from iproute2's rdma -j resource show mr/qp/pd output",
		Long: `Convert what the kernel reports about one RDMA device into an MPT file:
the JSON output of 'rdma -j resource show mr', '... qp' and '... pd'
(--mr, --qp, --pd), or a file holding them together (--rdma-json: a
{"before": ..., "after": ...} pair of snapshots, as *.rdma-res.json,
or one snapshot {"mr": ..., "qp": ..., "pd": ...}).

rdma prints, and the import takes: QPNs, QP types (XRC_TGT as XRC; GSI/SMI
and XRC_INI left out), the receive PSN (rq-psn) as expected_psn, the peer's
QPN (rqpn), PDs (the kernel's pdn), MR rkeys, lkeys and lengths, and MR VAs
where the kernel reports an iova.

rdma does not print, and an MPT file needs: the device's address
(--responder), the path MTU (--mtu), the QPs' access flags (--qp-access;
UD QPs have none), and each MR's VA on kernels without iova (--va KEY=ADDR)
and access flags (--mr-access KEY=FLAGS). The import does not guess them:
it lists what is missing and writes nothing until it is supplied. Optional
values rdma lacks (the peer's address unless --remote, the receive queue,
max_dest_rd_atomic, min_rnr_timer, q_key, memory windows) are left out and
noted.`,
		Example: `  rocetap mpt import --rdma-json read_atomic.rdma-res.json --dev rxe1 \
      --responder 10.77.0.2 --remote 10.77.0.1 --mtu 1024 --profile rxe \
      --qp-access LOCAL_WRITE,REMOTE_WRITE,REMOTE_READ,REMOTE_ATOMIC \
      --va 9d2=0x55555557b000 --mr-access 9d2=LOCAL_WRITE,REMOTE_WRITE,REMOTE_READ,REMOTE_ATOMIC
  rdma -j resource show mr > mr.json; rdma -j resource show qp > qp.json
  rocetap mpt import --mr mr.json --qp qp.json --dev mlx5_0 --responder 192.168.1.2 --mtu 4096 ...`,
		Args: noArgs("rocetap mpt import --rdma-json FILE --dev DEV"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HasQPAcc = cmd.Flags().Changed("qp-access")
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return mptImportRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.RdmaJSON, "rdma-json", "", `file holding the rdma views together ({"before","after"} snapshots or one {"mr","qp","pd"})`)
	f.StringVar(&opts.Snapshot, "snapshot", "", "with --rdma-json: the snapshot to import, before (default) or after")
	f.StringVar(&opts.MRFile, "mr", "", "output of rdma -j resource show mr")
	f.StringVar(&opts.QPFile, "qp", "", "output of rdma -j resource show qp")
	f.StringVar(&opts.PDFile, "pd", "", "output of rdma -j resource show pd (optional)")
	f.StringVar(&opts.Dev, "dev", "", "RDMA device to import (rdma's ifname, e.g. rxe1 or mlx5_0)")
	f.Uint32Var(&opts.PID, "pid", 0, "import only this process's resources")
	f.StringVar(&opts.Responder, "responder", "", "the device's address: IPv4, IPv6 or GID, or LID (lid:1) (rdma does not print it)")
	f.StringVar(&opts.Profile, "profile", "", "responder profile to write: ibta or rxe (default: none, ibta)")
	f.IntVar(&opts.MTU, "mtu", 0, "path MTU of every QP: 256, 512, 1024, 2048 or 4096 (rdma does not print it)")
	f.StringVar(&opts.QPAccess, "qp-access", "", "access flags of every RC/UC/XRC QP, e.g. REMOTE_WRITE,REMOTE_READ (none: \"\")")
	f.StringVar(&opts.Remote, "remote", "", "the peer's address (IPv4, IPv6, GID or lid:N), for the remote of every connected QP")
	f.StringArrayVar(&opts.VA, "va", nil, "KEY=ADDR: VA of the MR with lkey or rkey KEY (hex, as rdma prints it), e.g. 9d2=0x55555557b000 (repeatable)")
	f.StringArrayVar(&opts.MRAccess, "mr-access", nil, "KEY=FLAGS: access flags of the MR with lkey or rkey KEY, e.g. 9d2=LOCAL_WRITE,REMOTE_READ (repeatable)")
	f.BoolVar(&opts.RemoteOnly, "remote-mrs-only", false, "leave out MRs rdma shows with rkey 0 (no remote access on rxe)")
	f.StringVarP(&opts.Out, "output-file", "o", "", "write the MPT file here (default: standard output)")
	f.BoolVar(&opts.Force, "force", false, "let -o replace an existing file (never an input)")
	return cmd
}

func (o *MPTImportOptions) validate() error {
	sep := o.MRFile != "" || o.QPFile != "" || o.PDFile != ""
	switch {
	case o.RdmaJSON != "" && sep:
		return errors.New("--rdma-json and --mr/--qp/--pd are alternatives: give one or the other")
	case o.RdmaJSON == "" && !sep:
		return errors.New("no rdma output given: use --rdma-json FILE, or --mr FILE --qp FILE [--pd FILE] with the output of rdma -j resource show mr|qp|pd")
	case sep && (o.MRFile == "" || o.QPFile == ""):
		return errors.New("--mr and --qp go together: give the output of both rdma -j resource show mr and ... show qp")
	case o.Snapshot != "" && o.RdmaJSON == "":
		return errors.New("--snapshot needs --rdma-json")
	case o.Snapshot != "" && o.Snapshot != "before" && o.Snapshot != "after":
		return fmt.Errorf("--snapshot %q: want before or after", o.Snapshot)
	case o.Dev == "":
		return errors.New("no device: name the RDMA device to import with --dev (rdma's ifname, e.g. rxe1)")
	}
	return nil
}

// selection turns the flags into an mpt.RdmaSelect.
func (o *MPTImportOptions) selection() (mpt.RdmaSelect, error) {
	sel := mpt.RdmaSelect{Dev: o.Dev, PID: o.PID, Profile: o.Profile, MTU: o.MTU, RemoteOnly: o.RemoteOnly}
	var err error
	if o.Responder != "" {
		if sel.Responder, err = parseNodeFlag("--responder", o.Responder); err != nil {
			return sel, err
		}
	}
	if o.Remote != "" {
		if sel.Remote, err = parseNodeFlag("--remote", o.Remote); err != nil {
			return sel, err
		}
	}
	if o.HasQPAcc {
		if sel.QPAccess, err = parseAccessFlag("--qp-access", o.QPAccess); err != nil {
			return sel, err
		}
		sel.HasQPAccess = true
	}
	mr := func(flag, v string) (uint32, string, error) {
		k, val, ok := strings.Cut(v, "=")
		key, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(k, "0x"), "0X"), 16, 32)
		if !ok || err != nil {
			return 0, "", fmt.Errorf("%s %q: want KEY=VALUE with KEY the MR's lkey or rkey in hex as rdma prints it (e.g. %s 9d2=...)", flag, v, flag)
		}
		return uint32(key), val, nil
	}
	for _, v := range o.VA {
		key, val, err := mr("--va", v)
		if err != nil {
			return sel, err
		}
		va, err := strconv.ParseUint(val, 0, 64)
		if err != nil {
			return sel, fmt.Errorf("--va %q: %q is not an address: write 0x and hex digits (e.g. 0x55555557b000) or decimal", v, val)
		}
		if sel.MRs == nil {
			sel.MRs = map[uint32]mpt.RdmaMR{}
		}
		m := sel.MRs[key]
		m.VA, m.HasVA = va, true
		sel.MRs[key] = m
	}
	for _, v := range o.MRAccess {
		key, val, err := mr("--mr-access", v)
		if err != nil {
			return sel, err
		}
		a, err := parseAccessFlag("--mr-access", val)
		if err != nil {
			return sel, err
		}
		if sel.MRs == nil {
			sel.MRs = map[uint32]mpt.RdmaMR{}
		}
		m := sel.MRs[key]
		m.Access, m.HasAccess = a, true
		sel.MRs[key] = m
	}
	return sel, nil
}

func mptImportRun(o *MPTImportOptions, ios IO) error {
	sel, err := o.selection()
	if err != nil {
		return err
	}
	var imp *mpt.RdmaImport
	if o.RdmaJSON != "" {
		imp, err = mpt.LoadRdmaRes(o.RdmaJSON, o.Snapshot, sel)
	} else {
		var v mpt.RdmaViews
		v.MRFile, v.QPFile, v.PDFile = o.MRFile, o.QPFile, o.PDFile
		if v.MR, err = readInput(ios, "--mr", o.MRFile); err == nil {
			if v.QP, err = readInput(ios, "--qp", o.QPFile); err == nil && o.PDFile != "" {
				v.PD, err = readInput(ios, "--pd", o.PDFile)
			}
		}
		if err != nil {
			return err
		}
		imp, err = mpt.ParseRdmaRes(v, sel)
	}
	if err != nil {
		var re *mpt.RdmaError
		if errors.As(err, &re) || errors.Is(err, os.ErrNotExist) {
			return err
		}
		return fmt.Errorf("mpt import: %w", err)
	}
	if len(imp.Missing) > 0 {
		return importGapsError(imp.Missing)
	}
	if err := writeMPTOut(o.Out, outfile.Options{Force: o.Force, Inputs: []string{o.RdmaJSON, o.Snapshot, o.MRFile, o.QPFile, o.PDFile}, Flag: "-o"}, ios, imp.File); err != nil {
		return err
	}
	f := imp.File
	fmt.Fprintf(ios.ErrOut, "rocetap mpt import: %s: %s, %s, %s%s\n", o.Dev, text.Plural(len(f.PDs), "PD"), text.Plural(len(f.QPs), "QP"), text.Plural(len(f.MRs), "MR"), outName(o.Out))
	for _, n := range imp.Notes {
		fmt.Fprintln(ios.ErrOut, "  note: "+sanitizeLines(n))
	}
	return nil
}

// importGapsError says what the import lacks and which flag supplies it.
func importGapsError(gaps []mpt.RdmaGap) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mpt import: the rdma output lacks %d value(s) an MPT file needs; nothing written. Supply them:", len(gaps))
	for _, g := range gaps {
		key := fmt.Sprintf("%x", g.LKey)
		if g.LKey == 0 && g.RKey != 0 {
			key = fmt.Sprintf("%x", g.RKey)
		}
		var flag string
		switch g.Kind {
		case mpt.GapResponder:
			flag = "--responder ADDR"
		case mpt.GapMTU:
			flag = "--mtu N"
		case mpt.GapQPAccess:
			flag = "--qp-access FLAGS"
		case mpt.GapMRVA:
			flag = "--va " + key + "=ADDR"
		case mpt.GapMRAccess:
			flag = "--mr-access " + key + "=FLAGS"
			if g.RKey == 0 {
				flag += " (or --remote-mrs-only to leave it out)"
			}
		case mpt.GapMRKeys:
			flag = "run rdma as root"
		}
		fmt.Fprintf(&b, "\n  %s: %s -> %s", g.Path, g.Msg, flag)
	}
	return errors.New(b.String())
}

// ---- mpt check ----

// MPTCheckOptions are the arguments of `rocetap mpt check`.
type MPTCheckOptions struct {
	Path string
}

func newCmdMPTCheck(ios IO, runF func(*MPTCheckOptions) error) *cobra.Command {
	opts := &MPTCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate an MPT file and print what it holds",
		Long: `Read an MPT file as decode/replay --mpt do (rocetap help mpt-format) and print
its responder, PDs, QPs, MRs and MWs. A file that is not valid stops with
the first problem, as file:line:col: $.path: what is wrong, and exit
status 2.`,
		Example: `  rocetap mpt check send_inv.mpt.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one MPT file (rocetap mpt check FILE), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return mptCheckRun(opts, ios)
		},
	}
	return cmd
}

func mptCheckRun(o *MPTCheckOptions, ios IO) error {
	var f *mpt.File
	var err error
	name := o.Path
	if o.Path == "-" {
		name = "<stdin>"
		var data []byte
		if data, err = io.ReadAll(ios.In); err != nil {
			return fmt.Errorf("cannot read the MPT file: %w", err)
		}
		f, err = mpt.Parse(name, data)
	} else {
		f, err = mpt.Load(o.Path) // in a stream: an MPT file may hold a million MRs
	}
	if err != nil {
		var me *mpt.Error
		if errors.As(err, &me) {
			return fmt.Errorf("%w (rocetap help mpt-format describes the format)", err) // as --mpt's
		}
		return fmt.Errorf("cannot read the MPT file: %w", err)
	}
	// Valid means every command accepts it: the model --mpt and replay
	// build must build (an MR too large for the emulated memory fails
	// here, as it would there).
	if _, err := f.NewModel(name, hca.Options{}, false); err != nil { // the default cache and page size
		return err
	}
	out := newOutBuf(ios.Out)
	writeMPTSummary(out, name, f)
	out.flush()
	return out.err
}

// writeMPTSummary describes an MPT file: one line per PD list, QP, MR and
// MW, flushed as it goes (a line per MR of a million).
func writeMPTSummary(out *outBuf, name string, f *mpt.File) {
	b := out.b
	b = fmt.Appendf(b, "%s: valid MPT file (version %d)\n", decode.Sanitize(name), f.Version)
	b = fmt.Appendf(b, "responder %s, profile %s\n", f.Responder, decode.Sanitize(f.Profile))
	ids := make([]string, len(f.PDs))
	for i, pd := range f.PDs {
		ids[i] = strconv.FormatUint(uint64(pd.ID), 10)
	}
	b = fmt.Appendf(b, "PDs %d: %s\n", len(f.PDs), strings.Join(ids, ", "))
	b = fmt.Appendf(b, "QPs %d\n", len(f.QPs))
	for _, q := range f.QPs {
		b = fmt.Appendf(b, "  %#06x %-3s pd %d  mtu %d  access %s", q.QPN, q.Type, q.PD, q.MTU, q.Access)
		if q.HasExpectedPSN {
			b = fmt.Appendf(b, "  expected_psn %#06x", q.ExpectedPSN)
		}
		if q.Remote != nil {
			b = fmt.Appendf(b, "  remote %s/%#06x", q.Remote.Addr, q.Remote.QPN)
		}
		if q.HasRQDepth {
			b = fmt.Appendf(b, "  rq_depth %d", q.RQDepth)
		}
		if q.HasMaxDestRdAtomic {
			b = fmt.Appendf(b, "  max_dest_rd_atomic %d", q.MaxDestRdAtomic)
		}
		if q.HasMinRNRTimer {
			b = fmt.Appendf(b, "  min_rnr_timer %d", q.MinRNRTimer)
		}
		if q.HasQKey {
			b = fmt.Appendf(b, "  q_key %#08x", q.QKey)
		}
		if q.HasRecv {
			b = fmt.Appendf(b, "  recv %d", len(q.Recv))
		}
		if q.NeverConnected() {
			b = append(b, "  (no remote and no expected_psn: never reached RTR, drops every packet)"...)
		}
		b = append(b, '\n')
		out.b = b
		out.maybeFlush()
		b = out.b
	}
	b = fmt.Appendf(b, "MRs %d\n", len(f.MRs))
	lastAccess, access := ^hca.Access(0), ""
	for i := range f.MRs {
		if m := &f.MRs[i]; m.Access != lastAccess {
			lastAccess, access = m.Access, m.Access.String()
		}
		b = appendMRLine(b, &f.MRs[i], access)
		out.b = b
		out.maybeFlush()
		b = out.b
	}
	b = fmt.Appendf(b, "MWs %d\n", len(f.MWs))
	for _, w := range f.MWs {
		b = fmt.Appendf(b, "  rkey %#08x type %d  [%#016x, +%d)  pd %d  %s  on MR %#08x", w.RKey, w.Type, w.VA, w.Length, w.PD, w.Access, w.MRRKey)
		if w.HasQPN {
			b = fmt.Appendf(b, "  QP %#06x", w.QPN)
		}
		b = append(b, '\n')
		out.b = b
		out.maybeFlush()
		b = out.b
	}
	out.b = b
}

// appendMRLine appends the summary line of MR m, whose access flags read
// access: what "  rkey %#08x lkey %#08x  [%#016x, +%d)  pd %d  %s\n"
// prints, without fmt, which took half of `mpt check`'s time on a million
// MRs.
func appendMRLine(b []byte, m *hca.MRConfig, access string) []byte {
	b = append(b, "  rkey "...)
	b = appendHex0x(b, uint64(m.RKey), 8)
	b = append(b, " lkey "...)
	b = appendHex0x(b, uint64(m.LKey), 8)
	b = append(b, "  ["...)
	b = appendHex0x(b, m.VA, 16)
	b = append(b, ", +"...)
	b = strconv.AppendUint(b, m.Length, 10)
	b = append(b, ")  pd "...)
	b = strconv.AppendUint(b, uint64(m.PD), 10)
	b = append(b, "  "...)
	b = append(b, access...)
	return append(b, '\n')
}

// appendHex0x appends v as %#0<width>x does: 0x, then at least width hex
// digits. (decode has the same, unexported.)
func appendHex0x(b []byte, v uint64, width int) []byte {
	b = append(b, '0', 'x')
	n := max((bits.Len64(v)+3)/4, 1)
	for ; width > n; width-- {
		b = append(b, '0')
	}
	for i := n - 1; i >= 0; i-- {
		b = append(b, "0123456789abcdef"[v>>(4*uint(i))&0xf])
	}
	return b
}

// ---- helpers ----

// noArgs rejects positional arguments with the usage to follow.
func noArgs(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unexpected argument %q: give files with flags (%s)", args[0], usage)
		}
		return nil
	}
}

// parseNodeFlag reads a node address flag (--responder, --remote): an
// IPv4 or IPv6 address, a GID or a LID (lid:1, lid:0x1).
func parseNodeFlag(flag, s string) (decode.Node, error) {
	n, err := decode.ParseNode(s)
	switch {
	case err == nil:
		return n, nil
	case len(s) >= 4 && strings.EqualFold(s[:4], "lid:"):
		// what is wrong with the LID: "lid:0" is not a LID: write ...
		return decode.Node{}, fmt.Errorf("%s %w", flag, err)
	}
	return decode.Node{}, fmt.Errorf("%s %q: want %s", flag, s, decode.NodeSyntax)
}

// parseAccessFlag reads access flag names separated by commas or |, as
// in MPT files (REMOTE_WRITE); case and an IBV_ACCESS_ prefix do not
// matter. "" and "none" are no flags.
func parseAccessFlag(flag, s string) (hca.Access, error) {
	var a hca.Access
	if strings.EqualFold(strings.TrimSpace(s), "none") {
		return 0, nil
	}
	for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		n := strings.TrimPrefix(strings.ToUpper(name), "IBV_ACCESS_")
		f, ok := hca.AccessByName(n)
		if !ok {
			var known []string
			for i := range 7 {
				known = append(known, hca.Access(1<<i).String())
			}
			return 0, fmt.Errorf("%s: unknown access flag %q (known: %s)", flag, name, strings.Join(known, ", "))
		}
		a |= f
	}
	return a, nil
}

// readInput reads a file named by a flag; "-" is standard input.
func readInput(ios IO, flag, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(ios.In)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return b, nil
}

// writeMPTOut writes the MPT file to path (as outfile's options allow),
// or to standard output for "".
func writeMPTOut(path string, o outfile.Options, ios IO, f *mpt.File) error {
	b, err := mpt.Marshal(f)
	if err != nil {
		return err
	}
	// What is written must read back as the format says.
	if _, err := mpt.Parse("output", b); err != nil {
		var me *mpt.Error
		if errors.As(err, &me) {
			return fmt.Errorf("the MPT file made is not valid (%s: %s); nothing written", me.Path, me.Msg)
		}
		return err
	}
	if path == "" {
		_, err = ios.Out.Write(b)
		return err
	}
	out, err := outfile.Create(path, o)
	if err != nil {
		return err
	}
	defer out.Abort()
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	return out.Commit()
}

func outName(path string) string {
	if path == "" {
		return ""
	}
	return " -> " + path
}
