package conformance

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/internal/cli"
	"github.com/rocetap/rocetap/internal/testcap"
)

// nfsOpsCapture holds a COMPOUND for each NFSv4 op the kernel's mount
// lacks (testdata/README.md).
const nfsOpsCapture = "../../testdata/synth/nfs4_ops.pcap"

// tsharkNFSOpsWrong are the frames of nfsOpsCapture whose ops tshark 4.0
// gets wrong, with the opcodes and statuses rocetap shows (README: where
// rocetap and tshark differ): the COMPOUND of the ops tshark cannot step
// over. tshark leaves out the bool of an OPEN_DELEGATE_NONE_EXT with
// WND4_CONTENTION (the OPEN reply), has no decoder for the arguments and
// results of GET_DIR_DELEGATION (46), SET_SSV (54) and WANT_DELEGATION
// (56), and reads WRITE_SAME's app_data_block4 (70) in a draft's layout,
// so it loses the ops after them.
var tsharkNFSOpsWrong = map[int][2]string{
	10: {"53,22,18,46,54,56,70,10", ""},
	11: {"53,22,18,46,54,56,70,10", "0,0,0,0,0,0,0,0,0"},
}

// fieldsOf runs a tool that prints fields (tshark, rocetap decode) and
// returns its lines by frame number (the first field).
func fieldsOf(t *testing.T, run func(args []string) ([]byte, error), file string, fields []string) map[int][]string {
	t.Helper()
	args := []string{"-r", file, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "frame.number"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := run(args)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int][]string{}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		c := strings.Split(l, "\t")
		n, _ := strconv.Atoi(c[0])
		lines[n] = c[1:]
	}
	return lines
}

// rocetapDecode runs rocetap decode ARGS in-process, for fieldsOf.
func rocetapDecode(t *testing.T) func(args []string) ([]byte, error) {
	return func(args []string) ([]byte, error) {
		var out, errOut bytes.Buffer
		if code := cli.Main(append([]string{"decode"}, args...), cli.IO{Out: &out, ErrOut: &errOut}); code != 0 {
			t.Fatalf("rocetap: exit %d: %s", code, errOut.String())
		}
		return out.Bytes(), nil
	}
}

// tsharkRun runs tshark ARGS, for fieldsOf; its error carries tshark's
// stderr.
func tsharkRun(t *testing.T, ts string) func(args []string) ([]byte, error) {
	return func(args []string) ([]byte, error) {
		var stderr bytes.Buffer
		cmd := exec.Command(ts, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = fmt.Errorf("tshark: %w\n%s", err, stderr.String())
		}
		return out, err
	}
}

// TestNFSOpsMatchTshark compares, frame by frame, rocetap's nfs.opcode
// and nfs.status (and the RPC it decodes them from) with tshark's on
// COMPOUNDs of every op the kernel's mount lacks, ending with a GETFH
// that a wrong step over an op's arguments or results would lose;
// where tshark 4.0 is wrong (tsharkNFSOpsWrong), rocetap must show the
// whole COMPOUND.
func TestNFSOpsMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	fields := []string{"rpcordma.xid", "rpc.xid", "rpc.msgtyp", "rpc.procedure", "nfs.minorversion", "nfs.opcode", "nfs.status"}
	want := fieldsOf(t, tsharkRun(t, ts), nfsOpsCapture, fields)
	got := fieldsOf(t, rocetapDecode(t), nfsOpsCapture, fields)
	if len(got) != len(want) || len(want) != 15 {
		t.Fatalf("rocetap %d frames, tshark %d", len(got), len(want))
	}
	ops := map[string]bool{}
	for n, w := range want {
		g := got[n]
		for i, f := range fields {
			exp := w[i]
			if wrong, ok := tsharkNFSOpsWrong[n]; ok && (f == "nfs.opcode" || f == "nfs.status") {
				exp = wrong[i-5]
				if !strings.HasPrefix(exp, w[i]) && f == "nfs.opcode" {
					t.Errorf("frame %d: tshark's ops %q are no longer a prefix of rocetap's %q", n, w[i], exp)
				}
			}
			if g[i] != exp {
				t.Errorf("frame %d %s: rocetap %q, want %q (tshark %q)", n, f, g[i], exp, w[i])
			}
		}
		for _, o := range strings.Split(g[5], ",") {
			ops[o] = true
		}
	}
	// every op of NFSv4.0 and 4.1 the kernel's mount lacks, and 4.2's
	for _, o := range []int{5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 23, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
		39, 40, 41, 45, 46, 47, 48, 49, 50, 51, 54, 55, 56, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75} {
		if !ops[strconv.Itoa(o)] {
			t.Errorf("op %d is in no frame", o)
		}
	}
}

// TestNFSLongCallMatchesTshark: on the synthetic long call (an RDMA_NOMSG
// whose RPC call the server pulls from the position-zero read chunk with
// an RDMA READ), rocetap's rpcordma.*, rpc.* and nfs.* fields agree with
// tshark's on every frame, the call decoded on the READ response that
// completes the chunk (frame 8) by both.
func TestNFSLongCallMatchesTshark(t *testing.T) {
	const file = "../../testdata/synth/nfs_rdma_nomsg.pcap"
	ts := testcap.Tshark(t)
	want := fieldsOf(t, tsharkRun(t, ts), file, nfsDecoderFields)
	got := fieldsOf(t, rocetapDecode(t), file, nfsDecoderFields)
	if len(got) != 10 || len(want) != 10 {
		t.Fatalf("rocetap %d frames, tshark %d", len(got), len(want))
	}
	for n, w := range want {
		for i, f := range nfsDecoderFields {
			if got[n][i] != w[i] {
				t.Errorf("frame %d %s: rocetap %q, tshark %q", n, f, got[n][i], w[i])
			}
		}
	}
	if ops := got[8][slices.Index(nfsDecoderFields, "nfs.opcode")]; ops != "53,22,73,9" {
		t.Errorf("the long call's ops: %q", ops)
	}
}
