package cli

import (
	"strings"
	"testing"
)

// The fabric-health reports (DCQCN and PFC) on the synthetic captures
// made for them: the expert events, the stats sections and the fields,
// against goldens (go test ./internal/cli -update rewrites them).
func TestFabricGolden(t *testing.T) {
	cc, pfc := td+"synth/cc_dcqcn.pcap", td+"synth/pfc_pauses.pcapng"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"cc_dcqcn.expert", []string{"expert", "-r", cc}},
		{"cc_dcqcn.stats", []string{"stats", "-r", cc}},
		{"cc_dcqcn.stats-json", []string{"stats", "-r", cc, "-T", "json"}},
		{"cc_dcqcn.sessions-json", []string{"sessions", "-r", cc, "-T", "json", "-Y", "rocetap.session.id == 1"}},
		{"cc_dcqcn.cc-fields", []string{"decode", "-r", cc, "-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "rocetap.cc.ce",
			"-e", "rocetap.cc.ce_frame", "-e", "rocetap.cc.cnp_delay", "-e", "rocetap.cc.cnp_interval", "-e", "rocetap.cc.rate_before",
			"-e", "rocetap.cc.rate_after", "-e", "rocetap.cc.cnp_frame", "-e", "rocetap.expert.kind"}},
		{"cc_dcqcn.events-text", []string{"decode", "-r", cc, "-Y", "rocetap.cc.ce_without_cnp or rocetap.cc.cnp_without_ce or rocetap.cc.no_rate_reduction or rocetap.cc.cnp_unknown_qp"}},
		{"pfc_pauses.expert", []string{"expert", "-r", pfc}},
		{"pfc_pauses.stats", []string{"stats", "-r", pfc}},
		{"pfc_pauses.stats-json", []string{"stats", "-r", pfc, "-T", "json"}},
		{"pfc_pauses.pfc-fields", []string{"decode", "-r", pfc, "-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "rocetap.pfc.link_speed",
			"-e", "rocetap.pfc.priority", "-e", "rocetap.pfc.pause_time", "-e", "rocetap.pfc.xon", "-e", "rocetap.pfc.prio",
			"-e", "rocetap.pfc.pause_frame", "-e", "rocetap.pfc.storm_duration", "-e", "rocetap.expert.kind", "-Y", "pfc or rocetap.pfc.prio"}},
		// --link-speed overrides if_speed: at 100G the refreshes come after
		// each 0xFFFF-quanta pause ran out, so there is no storm; a 200 ms
		// threshold makes 120 ms none either; DSCP 26 mapped to priority 5
		// leaves priority 3 without RoCE
		{"pfc_pauses.link-speed", []string{"expert", "-r", pfc, "--link-speed", "100G"}},
		{"pfc_pauses.storm-threshold", []string{"expert", "-r", pfc, "--storm-threshold", "200ms"}},
		{"pfc_pauses.prio-map", []string{"expert", "-r", pfc, "--prio-map", "26=5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkGolden(t, c.name, out)
		})
	}
}

func TestFabricFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--link-speed", "fast"}, "--link-speed"},
		{[]string{"--link-speed", "0"}, "--link-speed"},
		{[]string{"--prio-map", "64=3"}, "--prio-map"},
		{[]string{"--prio-map", "26=8"}, "--prio-map"},
		{[]string{"--cnp-timeout", "-1ms"}, "--cnp-timeout"},
		{[]string{"--storm-threshold", "-1s"}, "--storm-threshold"},
	} {
		args := append([]string{"stats", "-r", td + "synth/pfc_pauses.pcapng"}, c.args...)
		out, errOut, code := run(t, nil, args...)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 naming %s", c.args, code, out, errOut, c.want)
		}
	}
	if v, err := parseBitRate("25G"); err != nil || v != 25e9 {
		t.Errorf("25G: %d, %v", v, err)
	}
	if v, err := parseBitRate("400000000000"); err != nil || v != 4e11 {
		t.Errorf("400000000000: %d, %v", v, err)
	}
}
