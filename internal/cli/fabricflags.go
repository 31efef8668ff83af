package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/flow"
	"github.com/spf13/pflag"
)

// fabricFlags are the options of the fabric-health analysis (DCQCN and
// PFC, flow/cc.go and flow/pfc.go), part of trackFlags.
type fabricFlags struct {
	CNPTimeout time.Duration // --cnp-timeout
	RateWindow time.Duration // --rate-window
	StormAfter time.Duration // --storm-threshold
	LinkSpeed  string        // --link-speed
	PrioMap    string        // --prio-map

	speed uint64
	prio  *flow.PrioMap
}

func (ff *fabricFlags) register(f *pflag.FlagSet) {
	f.DurationVar(&ff.CNPTimeout, "cnp-timeout", flow.DefaultCNPTimeout, "a CE mark with no CNP to its sender's QP within this time is ce_without_cnp")
	f.DurationVar(&ff.RateWindow, "rate-window", flow.DefaultRateWindow, "window of the sender-rate estimate before and after each CNP (no_rate_reduction)")
	f.DurationVar(&ff.StormAfter, "storm-threshold", flow.DefaultStormAfter, "a priority paused continuously for longer is a pfc_storm")
	f.StringVar(&ff.LinkSpeed, "link-speed", "", "link speed for PFC pause times, bits/s with an optional k, M, G or T (25G, 100G); default: the capture interface's if_speed (pcapng), else 100G")
	f.StringVar(&ff.PrioMap, "prio-map", "", "priority of a RoCE packet: auto (VLAN PCP when tagged, else DSCP>>3), pcp, dscp, or DSCP=PRIO pairs (26=3,48=6)")
}

// check validates the flags.
func (ff *fabricFlags) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--cnp-timeout", ff.CNPTimeout}, {"--rate-window", ff.RateWindow}, {"--storm-threshold", ff.StormAfter}} {
		if d.v < 0 {
			return fmt.Errorf("%s %s: want a positive duration (0: the default)", d.name, d.v)
		}
	}
	if ff.LinkSpeed != "" {
		v, err := parseBitRate(ff.LinkSpeed)
		if err != nil {
			return err
		}
		ff.speed = v
	}
	m, err := flow.ParsePrioMap(ff.PrioMap)
	if err != nil {
		return err
	}
	ff.prio = m
	return nil
}

// parseBitRate parses "25G", "100g", "400000000000" (bits/s).
func parseBitRate(s string) (uint64, error) {
	num, mul := strings.TrimSpace(s), uint64(1)
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'k', 'K':
			mul = 1e3
		case 'm', 'M':
			mul = 1e6
		case 'g', 'G':
			mul = 1e9
		case 't', 'T':
			mul = 1e12
		}
		if mul > 1 {
			num = num[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*float64(mul) > 1e15 {
		return 0, fmt.Errorf("--link-speed %q: want bits/s such as 25G, 100G or 400000000000", s)
	}
	return uint64(v * float64(mul)), nil
}

// options sets the fabric options of o.
func (ff *fabricFlags) options(o *flow.Options) {
	o.CNPTimeout, o.RateWindow, o.StormAfter = ff.CNPTimeout, ff.RateWindow, ff.StormAfter
	o.LinkSpeed, o.PrioMap = ff.speed, ff.prio
}
