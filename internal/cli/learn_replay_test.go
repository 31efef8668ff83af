package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/internal/testcap"
	"github.com/rocetap/rocetap/mpt"
)

// sharedCaptures is ../shared/captures beside the repository (or the
// directory ROCETAP_SHARED_CAPTURES names): the project's real captures
// (testdata/rxe holds copies of the Soft-RoCE ones) and, in ulp/, NVMe-oF
// and NFS over RDMA. A clone may not have it.
func sharedCaptures() string {
	if d := os.Getenv("ROCETAP_SHARED_CAPTURES"); d != "" {
		return d
	}
	return "../../../shared/captures"
}

// notReplayable names every capture whose learned MPT file cannot replay
// it clean, and why. An entry with learnErr is one learn refuses (its
// stderr says learnErr); the others learn, and their replay diverges. A
// capture on this list that learns or replays clean fails the test: the
// list must say what is true.
var notReplayable = map[string]struct{ learnErr, why string }{
	"rxe/cm_reject":    {"no node answered a request", "a CM REQ and its REJ on QP1, nothing else: no request an MPT file can describe"},
	"shared/cm_reject": {"no node answered a request", "a CM REQ and its REJ on QP1, nothing else: no request an MPT file can describe"},
	"synth/pfc":        {"the capture has no RDMA request", "PFC and PAUSE frames only"},
	// Synthetic decoder coverage (testdata/README.md), not one
	// responder's traffic:
	"synth/sll_sll2_raw":     {"", "one connection whose packets go to an IPv4 and an IPv6 address in turn: an MPT file names its responder by one address, so the model misses the others' requests"},
	"synth/vlan_qinq_ipv6":   {"", "one connection whose packets go to an IPv4 and an IPv6 address in turn (as sll_sll2_raw)"},
	"synth/bad_icrc":         {"", "every RoCE frame has a bad ICRC, the responder's ACK too: learn and the model drop what an HCA drops, so the ACK answers nothing the model executed"},
	"synth/rc_all_opcodes":   {"", "every RC opcode in a row: the responder answers on after class A NAKs (a QP in the error state answers nothing), with every NAK code, and answers FLUSH and ATOMIC WRITE, which the model does not carry out"},
	"synth/uc_ud_rd_xrc_cnp": {"", "RD traffic (an MPT file has no RD QP), an XRC request with AckReq the file never answers, and a READ answered with bytes of its own: decoder coverage, not one responder's traffic"},
	// Management datagrams only (issue 19):
	"synth/ib_smp":          {"no node answered a request", "subnet management MADs on QP0 only: no request an MPT file can describe"},
	"synth/ib_smp_dr_traps": {"no node answered a request", "traps and directed-route SMPs on QP0 only"},
	"synth/erf_ib_mad":      {"no node answered a request", "PMA and other-class MADs on QP1 and two SMPs only"},
	// Subnet administration and CM MADs on QP1 only (issue 19).
	"synth/ib_sa":     {"no node answered a request", "SA queries and answers on QP1 only: no request an MPT file can describe"},
	"synth/ib_sa2":    {"no node answered a request", "SA queries and answers on QP1 only (as ib_sa)"},
	"synth/roce_sa":   {"no node answered a request", "CM and SA MADs on QP1 only (as ib_sa)"},
	"synth/ipoib_ib0": {"the capture has no RDMA request", "a Linux ib0 capture: the IP, ARP and ICMP that IPoIB carried, no InfiniBand transport"},
	// PortInfo extended speeds and traps 259, 144 (issue 19).
	"synth/ib_smp_ext": {"no node answered a request", "subnet management MADs on QP0 only (as ib_smp)"},
}

// TestLearnReplayEveryCapture: the README's promise, "a learned MPT
// replays its own capture without a divergence", on every capture in
// testdata/ and ../shared/captures (with ulp/): `rocetap mpt learn -r CAP
// -o L.json` then `rocetap replay -r CAP --mpt L.json` both exit 0, but
// for the captures notReplayable names. And every capture with a recorded
// MPT file (made from the kernel's registrations) replays clean with
// --profile rxe. ../shared/captures is required with
// ROCETAP_REQUIRE_ORACLES=1; without it, its part is skipped, saying so.
func TestLearnReplayEveryCapture(t *testing.T) {
	type capture struct{ key, path string }
	var caps []capture
	add := func(prefix, dir string) int {
		var n int
		for _, pat := range []string{"*.pcap", "*.pcapng"} {
			files, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, f := range files {
				name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".pcapng"), ".pcap")
				caps = append(caps, capture{prefix + "/" + name, f})
				n++
			}
		}
		return n
	}
	if n := add("rxe", td+"rxe") + add("synth", td+"synth"); n < 42 {
		t.Fatalf("found %d captures in testdata/rxe and testdata/synth, want at least 42", n)
	}
	shared := sharedCaptures()
	if _, err := os.Stat(shared); err != nil {
		testcap.OraclePartMissing(t, fmt.Sprintf("the shared captures are not beside the repository (%v)", err),
			"put them in "+shared+" or name their directory with ROCETAP_SHARED_CAPTURES; meanwhile only testdata's captures are replayed")
	} else if n := add("shared", shared) + add("ulp", filepath.Join(shared, "ulp")); n < 33 {
		t.Fatalf("found %d captures in %s and its ulp/, want at least 33", n, shared)
	}

	dir := t.TempDir()
	clean, refused, diverged, recorded := 0, 0, 0, 0
	for _, c := range caps {
		t.Run(c.key, func(t *testing.T) {
			learned := filepath.Join(dir, strings.ReplaceAll(c.key, "/", "_")+".mpt.json")
			exc, listed := notReplayable[c.key]
			_, errOut, code := run(t, nil, "mpt", "learn", "-r", c.path, "-o", learned)
			switch {
			case listed && exc.learnErr != "":
				if code == 0 {
					t.Fatalf("learn succeeds now: take %s off notReplayable (%s)", c.key, exc.why)
				}
				if code != 1 || !strings.Contains(errOut, exc.learnErr) {
					t.Fatalf("learn: exit %d, want 1 and %q: %s", code, exc.learnErr, errOut)
				}
				refused++
				t.Logf("learn refuses, as expected: %s", exc.why)
				return
			case code != 0:
				t.Fatalf("learn: exit %d\n%s", code, errOut)
			}
			if _, err := mpt.Load(learned); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := run(t, nil, "replay", "-r", c.path, "--mpt", learned)
			switch {
			case listed:
				if code == 0 {
					t.Fatalf("replays clean now: take %s off notReplayable (%s)", c.key, exc.why)
				}
				if code != ExitDivergence {
					t.Fatalf("replay: exit %d, want 3 (divergences)\n%s%s", code, out, errOut)
				}
				diverged++
				t.Logf("replay diverges, as expected: %s", exc.why)
			case code != 0:
				t.Errorf("replay against the learned file: exit %d\n%s%s", code, out, errOut)
			default:
				clean++
			}
			base := strings.TrimSuffix(strings.TrimSuffix(c.path, ".pcapng"), ".pcap")
			if _, err := os.Stat(base + ".mpt.json"); err == nil {
				recorded++
				out, errOut, code := run(t, nil, "replay", "-r", c.path, "--mpt", base+".mpt.json", "--profile", "rxe")
				if code != 0 {
					t.Errorf("replay --profile rxe against the recorded MPT file: exit %d\n%s%s", code, out, errOut)
				}
			}
		})
	}
	var keys []string
	for k := range notReplayable {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, c := range caps {
			found = found || c.key == k
		}
		if !found && !strings.HasPrefix(k, "shared/") {
			t.Errorf("notReplayable names %s, which is not in testdata", k)
		}
	}
	t.Logf("%d captures: %d learned and replayed clean, %d learned and diverged as listed, %d refused by learn as listed; %d recorded MPT files replayed with --profile rxe",
		len(caps), clean, diverged, refused, recorded)
}
