package cli

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
)

// topCapture builds a capture of 25 RC connections between two hosts,
// one after another; connection k does 1 + k mod 4 WRITE Only + ACK
// exchanges, so several connections tie at each count.
func topCapture(t *testing.T) []byte {
	t.Helper()
	f := synth.File{Name: "top.pcap", Format: synth.PcapMicro, LinkType: decode.LinkTypeEthernet}
	at := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	for k := range 25 {
		qpA, qpB := uint32(0x100+2*k), uint32(0x101+2*k)
		for x := range 1 + k%4 {
			psn := decode.PSN(x)
			write := synth.RoCEv2{T: synth.Transport{
				BTH:     decode.BTH{Opcode: decode.OpWriteOnly, PKey: 0xffff, DestQP: qpB, PSN: psn, AckReq: true},
				RETH:    decode.RETH{VA: 0x1000, RKey: 0x42, DMALen: 64},
				Payload: make([]byte, 64),
			}}
			ack := synth.RoCEv2{Reverse: true, T: synth.Transport{
				BTH:  decode.BTH{Opcode: decode.OpAcknowledge, PKey: 0xffff, DestQP: qpA, PSN: psn},
				AETH: decode.AETH{Syndrome: 0x1f, MSN: uint32(x + 1)},
			}}
			for _, fr := range []synth.RoCEv2{write, ack} {
				data, _, _, err := fr.Build()
				if err != nil {
					t.Fatal(err)
				}
				f.Records = append(f.Records, synth.Record{Time: at, Data: data, Len: len(data)})
				at = at.Add(10 * time.Microsecond)
			}
		}
	}
	data, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// detailedIDs returns the IDs of the sessions a stats text report
// details, in its order.
func detailedIDs(out string) []uint32 {
	var ids []uint32
	for _, m := range regexp.MustCompile(`(?m)^#(\d+) `).FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseUint(m[1], 10, 32)
		ids = append(ids, uint32(id))
	}
	return ids
}

// TestStatsTop: text stats details the --top N sessions with the most
// packets (ties: the lower ID), in ID order, and says how many it left
// out; -T json keeps every session; a negative --top is a usage error.
func TestStatsTop(t *testing.T) {
	capture := topCapture(t)

	// The reference: every session's ID and packets from rocetap
	// sessions, ranked by a plain sort.
	out, errOut, code := run(t, capture, "sessions", "-r", "-", "-T", "json")
	if code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, errOut)
	}
	type sent struct {
		Packets uint64 `json:"packets"`
	}
	type session struct {
		ID      uint32 `json:"id"`
		A       sent   `json:"sent_by_a"`
		B       sent   `json:"sent_by_b"`
		Packets uint64
	}
	var ranked []session
	if err := json.Unmarshal([]byte(out), &ranked); err != nil || len(ranked) != 25 {
		t.Fatalf("sessions -T json: %v, %d sessions, want 25", err, len(ranked))
	}
	for i := range ranked {
		ranked[i].Packets = ranked[i].A.Packets + ranked[i].B.Packets
	}
	slices.SortFunc(ranked, func(x, y session) int {
		return cmp.Or(cmp.Compare(y.Packets, x.Packets), cmp.Compare(x.ID, y.ID))
	})
	busiest := func(n int) []uint32 { // in ID order
		var ids []uint32
		for _, s := range ranked[:n] {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		return ids
	}
	// Ties across the cuts, or the tie rule would go unchecked.
	for _, n := range []int{3, 20} {
		if ranked[n-1].Packets != ranked[n].Packets {
			t.Fatalf("the %dth and %dth busiest sessions do not tie: %+v", n, n+1, ranked)
		}
	}
	allIDs := busiest(25)

	for _, tc := range []struct {
		name    string
		args    []string
		want    []uint32
		summary string // the last line about the sessions left out ("": none)
	}{
		{"default", nil, busiest(20), "5 more sessions not detailed (above: the 20 with the most packets); rocetap sessions lists every session, --top 0 details them all"},
		{"--top 3", []string{"--top", "3"}, busiest(3), "22 more sessions not detailed (above: the 3 with the most packets); rocetap sessions lists every session, --top 0 details them all"},
		{"--top 24", []string{"--top", "24"}, busiest(24), "1 more session not detailed (above: the 24 with the most packets); rocetap sessions lists every session, --top 0 details them all"},
		{"--top 25", []string{"--top", "25"}, allIDs, ""},
		{"--top 0", []string{"--top", "0"}, allIDs, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, capture, append([]string{"stats", "-r", "-"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := detailedIDs(out); !slices.Equal(got, tc.want) {
				t.Errorf("detailed sessions %v, want %v", got, tc.want)
			}
			if !strings.Contains(out, "\nSessions: 25\n") {
				t.Errorf("the session count is not every session's:\n%s", out)
			}
			has := strings.Contains(out, "not detailed")
			if tc.summary == "" && has || tc.summary != "" && !strings.HasSuffix(out, "\n\n"+tc.summary+"\n") {
				t.Errorf("output does not end with %q:\n%s", tc.summary, out)
			}
		})
	}

	// every session's detail is today's: --top 0 prints what --top 25
	// prints, and the top 3's blocks are theirs in the full report
	full, _, _ := run(t, capture, "stats", "-r", "-", "--top", "0")
	if same, _, _ := run(t, capture, "stats", "-r", "-", "--top", "25"); same != full {
		t.Errorf("--top 25 of 25 sessions differs from --top 0")
	}
	top3, _, _ := run(t, capture, "stats", "-r", "-", "--top", "3")
	checkGolden(t, "top25.stats-top3", top3) // the whole report, its last line included
	for _, block := range strings.Split(top3, "\n\n#")[1:] {
		block, _, _ = strings.Cut(block, "\n\n")
		if !strings.Contains(full, "\n\n#"+block+"\n") {
			t.Errorf("--top 3 details a session as --top 0 does not:\n#%s", block)
		}
	}

	// -T json: every session, whatever --top says
	for _, args := range [][]string{nil, {"--top", "3"}} {
		out, _, code := run(t, capture, append([]string{"stats", "-r", "-", "-T", "json"}, args...)...)
		var doc struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Sessions) != 25 {
			t.Errorf("stats -T json %v: exit %d, %v, %d sessions, want 25", args, code, err, len(doc.Sessions))
		}
	}

	// a negative --top: exit 1, nothing on stdout, an error that says what to give
	out, errOut, code = run(t, capture, "stats", "-r", "-", "--top", "-1")
	if code != 1 || out != "" || !strings.Contains(errOut, "--top -1: want how many sessions to detail, or 0 for all of them") {
		t.Errorf("--top -1: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestStatsTopTwoPoints: with -r A -r B, each point's report details the
// sessions stats -r FILE --top N details.
func TestStatsTopTwoPoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "top.pcap")
	if err := os.WriteFile(path, topCapture(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, top := range []string{"3", "20", "0"} {
		alone, _, _ := run(t, nil, "stats", "-r", path, "--top", top)
		two, errOut, code := run(t, nil, "stats", "-r", path, "-r", path, "--top", top)
		if code != 0 {
			t.Fatalf("--top %s: exit %d: %s", top, code, errOut)
		}
		for _, p := range []string{"A", "B"} {
			if !strings.Contains(two, "Point "+p+": "+path+"\n\n"+alone) {
				t.Errorf("--top %s: point %s's report is not stats -r FILE --top %s", top, p, top)
			}
		}
	}
}
