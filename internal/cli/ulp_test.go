package cli

import (
	"os"
	"strings"
	"testing"
)

// TestULPGolden pins what the commands print about NVMe-oF: the Info
// column, -V of a command (with its links, from the first pass), stats'
// NVMe section, sessions' ULP note, and the expert findings of the
// synthetic scenarios with -d.
func TestULPGolden(t *testing.T) {
	u := td + "ulp/"
	da := "infiniband.bth.destqp==0x13,nvme-rdma"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"ulp_nvmeof_io.text", []string{"decode", "-r", u + "nvmeof_io.pcap", "-c", "150"}},
		{"ulp_nvmeof_io_139.verbose", []string{"decode", "-r", u + "nvmeof_io.pcap", "-V", "-Y", "frame.number == 139 || frame.number == 146"}},
		{"ulp_inline_and_queues.stats", []string{"stats", "-r", u + "nvmeof_inline_and_queues.pcap"}},
		{"ulp_inline_and_queues.sessions", []string{"sessions", "-r", u + "nvmeof_inline_and_queues.pcap"}},
		{"ulp_synth.expert", []string{"expert", "-r", u + "synth/nvme_length_mismatch.pcap", "-d", da}},
		{"ulp_midstream.text", []string{"decode", "-r", u + "synth/nvme_midstream.pcap", "-d", da}},
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

// TestULPLatencyFilter: -Y on rocetap.nvme.latency selects every packet of
// the slow commands when the capture is a file (two passes), only their
// completions from a pipe (one pass: the latency is known from the
// completion on).
func TestULPLatencyFilter(t *testing.T) {
	f := td + "ulp/nvmeof_io.pcap"
	y := "rocetap.nvme.latency > 0.005"
	out, _, code := run(t, nil, "decode", "-r", f, "-Y", y, "-T", "fields", "-e", "frame.number", "-e", "rocetap.nvme.kind", "-e", "rocetap.nvme.cmd_frame")
	if code != 0 {
		t.Fatal(code)
	}
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		c := strings.Split(l, "\t")
		kinds[c[1]]++
	}
	if kinds["command"] == 0 || kinds["data"] == 0 || kinds["completion"] == 0 || kinds["command"] != kinds["completion"] {
		t.Errorf("from a file: %v\n%s", kinds, out)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	piped, _, code := run(t, b, "decode", "-r", "-", "-Y", y, "-T", "fields", "-e", "rocetap.nvme.kind")
	if code != 0 {
		t.Fatal(code)
	}
	if got := strings.Count(piped, "completion"); got != kinds["completion"] || strings.Count(piped, "\n") != got {
		t.Errorf("from a pipe: %q, want %d completions", piped, kinds["completion"])
	}
}

// TestULPDecodeAsFlag: a bad ULP -d fails before reading; a good one is
// taken by every command that tracks.
func TestULPDecodeAsFlag(t *testing.T) {
	_, errOut, code := run(t, nil, "stats", "-r", td+"ulp/nvmeof_io.pcap", "-d", "infiniband.bth.destqp==0x12,nvmx")
	if code == 0 || !strings.Contains(errOut, "nvme-rdma, rpcordma, iser, smb_direct") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	for _, cmd := range []string{"decode", "sessions", "stats", "expert"} {
		out, errOut, code := run(t, nil, cmd, "-r", td+"ulp/synth/nvme_midstream.pcap", "-d", "infiniband.bth.destqp==0x13,nvme-rdma")
		if code != 0 || !strings.Contains(out, "NVMe") && !strings.Contains(out, "nvme") {
			t.Errorf("%s: exit %d %s\n%s", cmd, code, errOut, out)
		}
	}
}
