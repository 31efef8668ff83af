package cli

import (
	"runtime"
	"testing"
)

// TestFieldsOneGoroutineAsPipeline: -T fields without the tracker prints
// the same on one goroutine, where each line is rendered straight onto
// the output after the header (stream.ParallelOptions.EmitInline), as
// through the reader/worker pipeline, where lines are rendered apart and
// copied (Emit). Both paths run whatever the machine's cores.
func TestFieldsOneGoroutineAsPipeline(t *testing.T) {
	t.Setenv("ROCETAP_WORKERS", "")
	args := []string{"decode", "-r", td + "rxe/read_atomic.pcap", "-T", "fields", "-E", "header=y", "-E", "separator=,", "-E", "quote=d",
		"-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn", "-e", "infiniband.reth.r_key"}
	out := map[int]string{}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		stdout, stderr, code := run(t, nil, args...)
		runtime.GOMAXPROCS(prev)
		if code != 0 || stderr != "" {
			t.Fatalf("GOMAXPROCS=%d: exit %d, %s", procs, code, stderr)
		}
		out[procs] = stdout
	}
	if out[1] != out[4] {
		t.Errorf("one goroutine printed\n%s\nthe pipeline\n%s", out[1], out[4])
	}
	if len(out[1]) < 200 || out[1][:len(`frame.number,`)] != `frame.number,` {
		t.Errorf("output too short or without its header:\n%s", out[1])
	}
}
