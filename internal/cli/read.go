package cli

import (
	"errors"
	"strconv"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/stream"
)

// readOptions say which capture to read and how to decode it.
type readOptions struct {
	Path   string   // -r: file, or "-" for stdin
	Format string   // --format: "" (detect), pcap, pcapng, erf
	Decode []string // -d udp.port==N,infiniband
	// Read is how many packets to read (decode -c, as tshark: packets
	// the display filter drops count too); 0 reads them all.
	Read int
	// out, when set, is the command's output: if the source is live (a
	// pipe on stdin, see stream.Source.Live) it is flushed as packets
	// come and before every wait, and the packets go one at a time
	// instead of in batches (live is then set).
	out  *outBuf
	live bool
}

// decoder builds the Decoder for -d options.
func (o *readOptions) decoder() (*decode.Decoder, error) {
	ports, err := decodeAsPorts(o.Decode)
	if err != nil {
		return nil, err
	}
	return decode.NewDecoder(ports...), nil
}

// decodeAsPorts parses the -d options: the extra UDP ports carrying RoCEv2.
func decodeAsPorts(decodeAs []string) ([]uint16, error) {
	var ports []uint16
	for _, d := range decodeAs {
		if _, ulp, _ := flow.ParseDecodeAs(d); ulp {
			continue // a ULP's: the tracker's (trackFlags)
		}
		rest, ok := cutPrefix(d, "udp.port==")
		var port uint64
		var err error
		if ok {
			num, proto, _ := cut(rest, ",")
			if proto != "" && proto != "infiniband" && proto != "roce" && proto != "rocev2" {
				return nil, errors.New("-d " + strconv.Quote(d) + ": rocetap decodes only InfiniBand over UDP; write -d udp.port==" + num + ",infiniband")
			}
			port, err = strconv.ParseUint(num, 10, 16)
		}
		if !ok || err != nil || port == 0 {
			return nil, errors.New("-d " + strconv.Quote(d) + ": want udp.port==PORT,infiniband (e.g. -d udp.port==4792,infiniband) or infiniband.bth.destqp==QP,PROTO (e.g. -d infiniband.bth.destqp==0x12,nvme-rdma)")
		}
		ports = append(ports, uint16(port))
	}
	return ports, nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// openSource opens -r (stdin for "-") with the decoder for -d; on a
// terminal, the source shows the progress line.
func openSource(o *readOptions, ios IO, skipCRCs bool) (*decode.Decoder, *stream.Source, error) {
	dec, err := o.decoder()
	if err != nil {
		return nil, nil, err
	}
	dec.SkipCRCs = skipCRCs
	if o.Path == "" {
		return nil, nil, errors.New("no capture given: use -r FILE (or -r - to read a pcap/pcapng stream from stdin)")
	}
	src, err := stream.Open(o.Path, o.Format, ios.In)
	if err != nil {
		return nil, nil, err
	}
	if ios.ErrIsTerminal {
		src.ShowProgress(ios.ErrOut)
	}
	if o.Read > 0 {
		src.StopAfter(o.Read)
	}
	if src.Live() && o.out != nil {
		o.live, o.out.live = true, true
		src.OnIdle(o.out.flush)
	}
	return dec, src, nil
}

// runTracked reads, decodes and tracks every packet of -r in capture
// order (stream's Track). A capture corrupt part-way ends with an exit
// status 2 error after every packet before it went through.
func runTracked(o *readOptions, ios IO, skipCRCs bool, to stream.TrackOptions) (int, error) {
	dec, src, err := openSource(o, ios, skipCRCs)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	to.Decoder = dec
	if o.live {
		to.OneGoroutine = true // each packet as it comes, not in batches
	}
	n, err := src.Track(to)
	return n, exitCorrupt(err)
}

// exitCorrupt gives a capture damaged part-way (a *stream.CorruptError)
// exit status ExitDamaged; other errors keep theirs.
func exitCorrupt(err error) error {
	if isDamaged(err) {
		return &exitError{code: ExitDamaged, err: err}
	}
	return err
}
