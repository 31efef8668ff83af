package flow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Fabric health: congestion control (DCQCN: ECN CE marks, CNPs and the
// sender's reaction, cc.go) and priority flow control (PFC and PAUSE
// frames, pfc.go). The tracker runs both on every packet; this file holds
// what they share: the defaults, the priority map, the time series and
// the capture-wide results (FabricStats).

// Defaults of the fabric-health options.
const (
	// DefaultCNPTimeout: a CE mark with no CNP to its sender's QP within
	// this time is ce_without_cnp. A notification point answers within
	// microseconds, and sends at most one CNP per QP per interval
	// (mlx5's min_time_between_cnps, 4 µs by default; up to 50 µs is
	// common): 1 ms leaves room for both.
	DefaultCNPTimeout = time.Millisecond
	// DefaultRateWindow is the window of the sender-rate estimate.
	DefaultRateWindow = 100 * time.Microsecond
	// DefaultStormAfter: a priority paused continuously for longer is
	// a PFC storm (pfc_storm), as switch PFC watchdogs default to.
	DefaultStormAfter = 100 * time.Millisecond
	// DefaultLinkSpeed (bits/s) converts pause quanta to time when
	// neither --link-speed nor the capture's interface (pcapng if_speed)
	// gives the speed.
	DefaultLinkSpeed = 100_000_000_000
	// rateKept: a sender keeps at least this share of its rate after a
	// CNP for no_rate_reduction (a DCQCN reaction point cuts by α/2, up
	// to half).
	rateKeptPercent = 95
)

// PrioMap says how a RoCE packet's priority is found (--prio-map).
type PrioMap struct {
	Mode PrioMode
	// DSCP maps a DSCP value to a priority (PrioDSCP); -1: DSCP >> 3.
	DSCP [64]int8
}

// PrioMode is how PrioMap finds a priority.
type PrioMode uint8

// Priority modes.
const (
	PrioAuto PrioMode = iota // the outer VLAN tag's PCP when tagged, else DSCP >> 3
	PrioPCP                  // the outer VLAN tag's PCP only
	PrioDSCP                 // the DSCP, through the table (DSCP >> 3 when absent)
)

// ParsePrioMap parses --prio-map: "" or "auto", "pcp", "dscp", or DSCP
// to priority pairs "26=3,48=6" (DSCP trust; other DSCPs: DSCP >> 3).
func ParsePrioMap(s string) (*PrioMap, error) {
	m := &PrioMap{}
	for i := range m.DSCP {
		m.DSCP[i] = -1
	}
	switch s {
	case "", "auto":
		return m, nil
	case "pcp":
		m.Mode = PrioPCP
		return m, nil
	case "dscp":
		m.Mode = PrioDSCP
		return m, nil
	}
	m.Mode = PrioDSCP
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		d, err1 := strconv.ParseUint(k, 0, 8)
		p, err2 := strconv.ParseUint(v, 0, 8)
		if !ok || err1 != nil || err2 != nil || d > 63 || p > 7 {
			return nil, fmt.Errorf("--prio-map %q: want auto, pcp, dscp or DSCP=PRIORITY pairs such as 26=3,48=6 (DSCP 0-63, priority 0-7)", s)
		}
		m.DSCP[d] = int8(p)
	}
	return m, nil
}

// prio returns the priority of packet p, and false when it has none
// (untagged with PrioPCP, no IP header for DSCP).
func (m *PrioMap) prio(p *decode.Packet) (uint8, bool) {
	if m.Mode != PrioDSCP && p.NumVLAN > 0 {
		return p.VLAN[0].Priority & 7, true
	}
	if m.Mode == PrioPCP {
		return 0, false
	}
	var dscp uint8
	switch {
	case p.Has&decode.HdrIPv4 != 0:
		dscp = p.IPv4.TOS >> 2
	case p.Has&decode.HdrIPv6 != 0:
		dscp = p.IPv6.TrafficClass >> 2
	default:
		return 0, false
	}
	if v := m.DSCP[dscp]; v >= 0 {
		return uint8(v), true
	}
	return dscp >> 3, true
}

// SeriesBuckets is the number of buckets of a Series.
const SeriesBuckets = 60

// Series is a quantity over the capture time in SeriesBuckets buckets of
// Width from Start. The width starts at 1 ms and doubles (neighbouring
// buckets merged) whenever the capture outgrows it, so a series costs the
// same for a second as for a day.
type Series struct {
	Start int64 // Unix nanoseconds
	Width time.Duration
	V     [SeriesBuckets]float64
}

// Empty reports whether nothing was added.
func (s *Series) Empty() bool { return s.Width == 0 }

// maxSeriesWidth bounds a bucket (2^56 ns, 2.3 years: 60 of them span
// 137 years, as far as a capture's timestamps can): hostile timestamps
// land in the last bucket instead of widening it forever.
const maxSeriesWidth = time.Duration(1) << 56

// index returns the bucket of time at, widening the buckets until it fits.
func (s *Series) index(start, at int64) int {
	if s.Width == 0 {
		s.Start, s.Width = start, time.Millisecond
	}
	if at <= s.Start {
		return 0
	}
	d := uint64(at) - uint64(s.Start) // no overflow: at > Start
	for d/SeriesBuckets >= uint64(s.Width) && s.Width*2 <= maxSeriesWidth {
		for j := range SeriesBuckets / 2 {
			s.V[j] = s.V[2*j] + s.V[2*j+1]
		}
		clear(s.V[SeriesBuckets/2:])
		s.Width *= 2
	}
	return int(min(d/uint64(s.Width), SeriesBuckets-1))
}

// add adds v at time at (start: the capture's start).
func (s *Series) add(start, at int64, v float64) {
	i := s.index(start, at)
	s.V[i] += v
}

// addSpan adds the nanoseconds of [from, to) to the buckets they cover.
func (s *Series) addSpan(start, from, to int64) {
	if to <= from {
		return
	}
	s.index(start, to-1)
	for from < to {
		i := s.index(start, from)
		end := to
		if i < SeriesBuckets-1 && from >= s.Start {
			end = min(to, s.Start+int64(i+1)*int64(s.Width))
		}
		if from < s.Start && to > s.Start {
			end = s.Start // (what lies before the series counts in its first bucket)
		}
		s.V[i] += float64(end - from)
		from = end
	}
}

// FabricStats is the capture-wide fabric health: congestion control and
// PFC, with the options they were found with.
type FabricStats struct {
	CNPTimeout, RateWindow, StormAfter time.Duration

	// Congestion control.
	CE, CNPs                   uint64
	CEWithoutCNP, CNPWithoutCE uint64
	CNPUnknownQP               uint64
	Reactions, RateCut         uint64 // windows after a CNP with a verdict; those with the rate cut
	NoRateReduction            uint64
	CNPDelay                   Latency // CE mark → CNP
	CESeries, CNPSeries        Series  // marks and CNPs over time

	// PFC.
	Ports         []*PFCPort
	Storms        uint64
	PausedTraffic uint64
	UnusedPrio    uint64
	PauseSeries   [8]Series // time paused per priority, summed over the ports
}

// PFCPort is what one port sent: the PFC and PAUSE frames of one source
// MAC on one capture interface.
type PFCPort struct {
	Iface     int
	MAC       [6]byte
	Speed     uint64 // bits/s
	SpeedFrom string // "--link-speed", "if_speed" or "default"
	Pauses    uint64 // 802.3x PAUSE frames
	Prio      [8]PFCPrio
}

// Name is the port as the reports name it: "if 0 02:00:5e:10:00:0a".
func (p *PFCPort) Name() string {
	m := p.MAC
	return fmt.Sprintf("if %d %02x:%02x:%02x:%02x:%02x:%02x", p.Iface, m[0], m[1], m[2], m[3], m[4], m[5])
}

// PFCPrio is one priority of a port.
type PFCPrio struct {
	XOFF, XON uint64        // PFC frames pausing it (quanta > 0), resuming it (quanta 0)
	Asked     time.Duration // pause time the XOFF frames asked for, summed
	Total     time.Duration // time paused (overlapping requests counted once)
	Longest   time.Duration // longest continuous pause
	Storms    uint64

	paused      bool
	storm       bool  // the current pause was reported as a storm
	since       int64 // the current pause started
	until       int64 // and lasts until (without a refresh or XON)
	startFrame  uint32
	lastFrame   uint32 // the latest XOFF
	firstPFC    uint32 // first PFC XOFF (not PAUSE) frame
	firstPFCT   int64
	pausedByPFC bool
}

// fabric is the tracker's fabric-health state.
type fabric struct {
	start      int64 // the capture's first packet (series start)
	timeout    int64
	window     int64
	stormAfter int64
	prio       *PrioMap
	stats      FabricStats

	ports    map[pfcPortKey]*PFCPort
	byIface  [][]*PFCPort // ports by capture interface
	roce     []uint8      // by capture interface: priorities RoCE was seen on
	paused   int          // priorities of ports paused now
	udSender map[udSenderKey]*Session
	// ucSender: the UC sessions by their addresses (sender, receiver);
	// without CM a UC sender's QP is never seen, but a CNP names it.
	ucSender map[pairKey][]*Session
}

type pfcPortKey struct {
	iface int
	mac   [6]byte
}

// udSenderKey is a UD flow as a CNP names it: sent from src to dst by
// QP qp (the CNP goes from dst to src, to qp).
type udSenderKey struct {
	src, dst addr16
	qp       uint32
}

func newFabric(o *Options) *fabric {
	f := &fabric{timeout: int64(o.CNPTimeout), window: int64(o.RateWindow), stormAfter: int64(o.StormAfter), prio: o.PrioMap,
		ports: map[pfcPortKey]*PFCPort{}, udSender: map[udSenderKey]*Session{}, ucSender: map[pairKey][]*Session{}}
	if f.timeout <= 0 {
		f.timeout = int64(DefaultCNPTimeout)
	}
	if f.window <= 0 {
		f.window = int64(DefaultRateWindow)
	}
	if f.stormAfter <= 0 {
		f.stormAfter = int64(DefaultStormAfter)
	}
	if f.prio == nil {
		f.prio, _ = ParsePrioMap("")
	}
	f.stats.CNPTimeout, f.stats.RateWindow, f.stats.StormAfter = time.Duration(f.timeout), time.Duration(f.window), time.Duration(f.stormAfter)
	return f
}

// Fabric returns the capture-wide fabric health found so far (complete
// after Flush).
func (t *Tracker) Fabric() *FabricStats { return &t.fab.stats }

// fabricPacket runs the fabric analysis on a RoCE packet (not a CNP) of
// session s sent by side.
func (t *Tracker) fabricPacket(p *decode.Packet, s *Session, side uint8) {
	t.ccSent(p, s, side)
	t.pfcTraffic(p)
}

// fabricEnd ends the fabric analysis at the end of the capture.
func (t *Tracker) fabricEnd() {
	t.ccEnd()
	t.pfcEnd()
}

// SetInterfaceSpeed gives the tracker the capture interfaces' speeds
// (Options.InterfaceSpeed) when its options gave none: the reader of the
// capture knows them once it has opened it.
func (t *Tracker) SetInterfaceSpeed(f func(iface int) uint64) {
	if t.opts.InterfaceSpeed == nil {
		t.opts.InterfaceSpeed = f
	}
}

// Clone returns a copy of s that the tracker no longer changes (its ports
// copied too), for a report made while the tracker goes on.
func (s *FabricStats) Clone() *FabricStats {
	c := *s
	c.Ports = make([]*PFCPort, len(s.Ports))
	for i, p := range s.Ports {
		cp := *p
		c.Ports[i] = &cp
	}
	c.CNPDelay = s.CNPDelay.clone()
	return &c
}

// Empty reports whether the capture had no CE mark, no CNP and no pause
// frame.
func (s *FabricStats) Empty() bool { return s.CE == 0 && s.CNPs == 0 && len(s.Ports) == 0 }

// clone returns a copy of l that shares nothing with it.
func (l Latency) clone() Latency {
	if l.more != nil {
		m := *l.more
		m.exact = slices.Clone(m.exact)
		if m.hist != nil {
			h := *m.hist
			m.hist = &h
		}
		l.more = &m
	}
	return l
}
