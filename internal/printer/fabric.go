package printer

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/flow"
)

// The fabric-health reports: DCQCN congestion control and PFC, in the
// stats report's Congestion section (capture-wide, with time series the
// TUI's statistics view shows as it is) and per session.

var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values as ▁..█ scaled to full (the peak when full is
// 0); zero is a space.
func Sparkline(vals []float64, full float64) string {
	if full <= 0 {
		for _, v := range vals {
			full = max(full, v)
		}
	}
	out := make([]rune, len(vals))
	for i, v := range vals {
		switch {
		case v <= 0 || full <= 0:
			out[i] = ' '
		default:
			k := int(v*float64(len(sparkRunes))/full+0.999999) - 1
			out[i] = sparkRunes[min(max(k, 0), len(sparkRunes)-1)]
		}
	}
	return string(out)
}

// seriesSpan describes a series' buckets: "60 × 1ms".
func seriesSpan(s *flow.Series) string {
	return strconv.Itoa(flow.SeriesBuckets) + " × " + s.Width.String()
}

// latencyLine is "min 4µs, median 4µs, max 4µs (2)".
func latencyLine(l *flow.Latency) string {
	if l.N == 0 {
		return "-"
	}
	return fmt.Sprintf("min %s, median %s, max %s (%d)", dur(l.Min), dur(l.Quantile(0.5)), dur(l.Max), l.N)
}

// AppendFabric appends the DCQCN and PFC part of the Congestion section;
// nothing when the capture had no CE mark, CNP or pause frame.
func AppendFabric(dst []byte, fs *flow.FabricStats) []byte {
	if fs == nil || fs.Empty() {
		return dst
	}
	if fs.CE+fs.CNPs > 0 {
		dst = fmt.Appendf(dst, "  DCQCN (CNP timeout %s, rate window %s)\n", fs.CNPTimeout, fs.RateWindow)
		dst = fmt.Appendf(dst, "    CE marks %d, CNPs %d; CE→CNP %s\n", fs.CE, fs.CNPs, latencyLine(&fs.CNPDelay))
		dst = fmt.Appendf(dst, "    ce_without_cnp %d, cnp_without_ce %d, cnp_unknown_qp %d\n", fs.CEWithoutCNP, fs.CNPWithoutCE, fs.CNPUnknownQP)
		dst = fmt.Appendf(dst, "    sender reactions %d: rate cut %d, no_rate_reduction %d\n", fs.Reactions, fs.RateCut, fs.NoRateReduction)
		if !fs.CESeries.Empty() {
			dst = fmt.Appendf(dst, "    CE marks over time (%s): |%s|\n", seriesSpan(&fs.CESeries), Sparkline(fs.CESeries.V[:], 0))
		}
		if !fs.CNPSeries.Empty() {
			dst = fmt.Appendf(dst, "    CNPs over time     (%s): |%s|\n", seriesSpan(&fs.CNPSeries), Sparkline(fs.CNPSeries.V[:], 0))
		}
	}
	if len(fs.Ports) == 0 {
		return dst
	}
	dst = fmt.Appendf(dst, "  PFC (storm threshold %s)\n", fs.StormAfter)
	dst = fmt.Appendf(dst, "    pfc_storm %d, pfc_paused_traffic %d, pfc_unused_priority %d\n", fs.Storms, fs.PausedTraffic, fs.UnusedPrio)
	for _, p := range fs.Ports {
		dst = fmt.Appendf(dst, "    %s at %s (%s)", p.Name(), BitRate(float64(p.Speed)), p.SpeedFrom)
		if p.Pauses > 0 {
			dst = fmt.Appendf(dst, ", %d PAUSE frames", p.Pauses)
		}
		dst = append(dst, '\n')
		for i := range p.Prio {
			pr := &p.Prio[i]
			if pr.XOFF+pr.XON == 0 && pr.Total == 0 {
				continue
			}
			dst = fmt.Appendf(dst, "      priority %d: XOFF %d, XON %d, asked %s, paused %s, longest %s", i, pr.XOFF, pr.XON, dur(pr.Asked), dur(pr.Total), dur(pr.Longest))
			if pr.Storms > 0 {
				dst = fmt.Appendf(dst, ", storms %d", pr.Storms)
			}
			dst = append(dst, '\n')
		}
	}
	head := false
	for i := range fs.PauseSeries {
		s := &fs.PauseSeries[i]
		if s.Empty() {
			continue
		}
		if !head {
			dst = fmt.Appendf(dst, "    time paused per priority (%s, █ = paused the whole bucket)\n", seriesSpan(s))
			head = true
		}
		dst = fmt.Appendf(dst, "      priority %d: |%s|\n", i, Sparkline(s.V[:], float64(s.Width)))
	}
	return dst
}

// CCDirJSON is the congestion control of one flow of a session: the
// sends of one side, marked CE, and the CNPs to its QP.
type CCDirJSON struct {
	Sender          string       `json:"sender"` // "a" or "b"
	CE              uint64       `json:"ce_marks"`
	CNPs            uint64       `json:"cnps"`
	CNPsPerSecond   float64      `json:"cnps_per_second"`
	CNPDelay        *LatencyJSON `json:"ce_to_cnp,omitempty"`
	CEWithoutCNP    uint64       `json:"ce_without_cnp"`
	CNPWithoutCE    uint64       `json:"cnp_without_ce"`
	Reactions       uint64       `json:"reactions"`
	RateCut         uint64       `json:"rate_cut"`
	NoRateReduction uint64       `json:"no_rate_reduction"`
	MeanRateKept    float64      `json:"mean_rate_kept,omitempty"` // of the cuts: rate after / rate before
}

func latencyJSON(l *flow.Latency) *LatencyJSON {
	if l.N == 0 {
		return nil
	}
	return &LatencyJSON{Count: l.N, Min: l.Min.Seconds(), Median: l.Quantile(0.5).Seconds(), P99: l.Quantile(0.99).Seconds(), Max: l.Max.Seconds()}
}

// congestionJSON returns the flows of s with a CE mark or a CNP.
func congestionJSON(s *flow.Session) []CCDirJSON {
	c := s.Congestion()
	if c == nil {
		return nil
	}
	var out []CCDirJSON
	for i := range c.Dir {
		d := &c.Dir[i]
		if d.CE+d.CNPs == 0 {
			continue
		}
		j := CCDirJSON{Sender: [2]string{"a", "b"}[i], CE: d.CE, CNPs: d.CNPs, CNPsPerSecond: d.CNPRate(), CNPDelay: latencyJSON(&d.CNPDelay),
			CEWithoutCNP: d.CEWithoutCNP, CNPWithoutCE: d.CNPWithoutCE, Reactions: d.Reactions, RateCut: d.RateCut, NoRateReduction: d.NoRateReduction}
		if d.RateCut > 0 {
			j.MeanRateKept = d.CutRatio / float64(d.RateCut)
		}
		out = append(out, j)
	}
	return out
}

// appendSessionCongestion appends a session's congestion lines (stats).
func appendSessionCongestion(dst []byte, s *flow.Session) []byte {
	for _, j := range congestionJSON(s) {
		d := &s.Congestion().Dir[0]
		if j.Sender == "b" {
			d = &s.Congestion().Dir[1]
		}
		dir := "A->B"
		if j.Sender == "b" {
			dir = "B->A"
		}
		dst = fmt.Appendf(dst, "  Congestion %s: CE marks %d, CNPs %d", dir, j.CE, j.CNPs)
		if j.CNPsPerSecond > 0 {
			dst = fmt.Appendf(dst, " (%.0f/s)", j.CNPsPerSecond)
		}
		dst = fmt.Appendf(dst, ", CE→CNP %s\n", latencyLine(&d.CNPDelay))
		dst = fmt.Appendf(dst, "    sender reactions %d: rate cut %d", j.Reactions, j.RateCut)
		if j.RateCut > 0 {
			dst = fmt.Appendf(dst, " (to %.0f%% on average)", j.MeanRateKept*100)
		}
		dst = fmt.Appendf(dst, ", no_rate_reduction %d; ce_without_cnp %d, cnp_without_ce %d\n", j.NoRateReduction, j.CEWithoutCNP, j.CNPWithoutCE)
	}
	return dst
}

// FabricJSON is the fabric health in the stats JSON ("fabric").
type FabricJSON struct {
	CC  *CCJSON  `json:"dcqcn,omitempty"`
	PFC *PFCJSON `json:"pfc,omitempty"`
}

// CCJSON is the capture's congestion control.
type CCJSON struct {
	CNPTimeout      float64      `json:"cnp_timeout"`
	RateWindow      float64      `json:"rate_window"`
	CE              uint64       `json:"ce_marks"`
	CNPs            uint64       `json:"cnps"`
	CNPDelay        *LatencyJSON `json:"ce_to_cnp,omitempty"`
	CEWithoutCNP    uint64       `json:"ce_without_cnp"`
	CNPWithoutCE    uint64       `json:"cnp_without_ce"`
	CNPUnknownQP    uint64       `json:"cnp_unknown_qp"`
	Reactions       uint64       `json:"reactions"`
	RateCut         uint64       `json:"rate_cut"`
	NoRateReduction uint64       `json:"no_rate_reduction"`
	CESeries        SeriesJSON   `json:"ce_marks_over_time"`
	CNPSeries       SeriesJSON   `json:"cnps_over_time"`
}

// SeriesJSON is a time series: bucket i covers [start + i×width,
// start + (i+1)×width) seconds from the capture's first packet.
type SeriesJSON struct {
	Width  float64   `json:"bucket_seconds"`
	Values []float64 `json:"values"`
}

func seriesJSON(s *flow.Series, scale float64) SeriesJSON {
	j := SeriesJSON{Width: s.Width.Seconds(), Values: make([]float64, len(s.V))}
	for i, v := range s.V {
		j.Values[i] = v * scale
	}
	return j
}

// PFCJSON is the capture's PFC.
type PFCJSON struct {
	StormAfter    float64               `json:"storm_threshold"`
	Storms        uint64                `json:"pfc_storm"`
	PausedTraffic uint64                `json:"pfc_paused_traffic"`
	UnusedPrio    uint64                `json:"pfc_unused_priority"`
	Ports         []PFCPortJSON         `json:"ports"`
	PauseSeries   map[string]SeriesJSON `json:"paused_seconds_over_time"` // by priority
}

// PFCPortJSON is one port's pause frames.
type PFCPortJSON struct {
	Port      string              `json:"port"`
	Speed     uint64              `json:"link_speed"`
	SpeedFrom string              `json:"link_speed_from"`
	Pauses    uint64              `json:"pause_frames"`
	Prio      map[string]PrioJSON `json:"priorities"`
}

// PrioJSON is one priority of a port; times in seconds.
type PrioJSON struct {
	XOFF    uint64  `json:"xoff"`
	XON     uint64  `json:"xon"`
	Asked   float64 `json:"asked"`
	Paused  float64 `json:"paused"`
	Longest float64 `json:"longest"`
	Storms  uint64  `json:"storms"`
}

// ToFabricJSON converts the fabric health; nil when there is none.
func ToFabricJSON(fs *flow.FabricStats) *FabricJSON {
	if fs == nil || fs.Empty() {
		return nil
	}
	j := &FabricJSON{}
	if fs.CE+fs.CNPs > 0 {
		j.CC = &CCJSON{CNPTimeout: fs.CNPTimeout.Seconds(), RateWindow: fs.RateWindow.Seconds(), CE: fs.CE, CNPs: fs.CNPs, CNPDelay: latencyJSON(&fs.CNPDelay),
			CEWithoutCNP: fs.CEWithoutCNP, CNPWithoutCE: fs.CNPWithoutCE, CNPUnknownQP: fs.CNPUnknownQP, Reactions: fs.Reactions, RateCut: fs.RateCut,
			NoRateReduction: fs.NoRateReduction, CESeries: seriesJSON(&fs.CESeries, 1), CNPSeries: seriesJSON(&fs.CNPSeries, 1)}
	}
	if len(fs.Ports) > 0 {
		p := &PFCJSON{StormAfter: fs.StormAfter.Seconds(), Storms: fs.Storms, PausedTraffic: fs.PausedTraffic, UnusedPrio: fs.UnusedPrio,
			Ports: []PFCPortJSON{}, PauseSeries: map[string]SeriesJSON{}}
		for _, port := range fs.Ports {
			pj := PFCPortJSON{Port: port.Name(), Speed: port.Speed, SpeedFrom: port.SpeedFrom, Pauses: port.Pauses, Prio: map[string]PrioJSON{}}
			for i := range port.Prio {
				pr := &port.Prio[i]
				if pr.XOFF+pr.XON == 0 && pr.Total == 0 {
					continue
				}
				pj.Prio[strconv.Itoa(i)] = PrioJSON{XOFF: pr.XOFF, XON: pr.XON, Asked: pr.Asked.Seconds(), Paused: pr.Total.Seconds(), Longest: pr.Longest.Seconds(), Storms: pr.Storms}
			}
			p.Ports = append(p.Ports, pj)
		}
		for i := range fs.PauseSeries {
			if s := &fs.PauseSeries[i]; !s.Empty() {
				p.PauseSeries[strconv.Itoa(i)] = seriesJSON(s, 1/float64(time.Second))
			}
		}
		j.PFC = p
	}
	return j
}
