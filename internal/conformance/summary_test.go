package conformance

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/internal/testcap"
)

// summarised are the Protocol columns of packets rocetap summarises
// without analysing them (internal/printer/netsummary.go).
var summarised = map[string]bool{"ARP": true, "ICMP": true, "ICMPv6": true, "TCP": true, "UDP": true, "LLDP": true}

// tsharkAnalysis matches what tshark adds to the Info column from state
// across packets, which rocetap does not keep for these protocols
// (README: "Where rocetap and tshark differ"): request/response matching
// of ICMP and ICMPv6, TCP analysis flags; and the TCP window, which
// tshark scales by the handshake's factor (tsharkWindow).
var tsharkWindow = regexp.MustCompile(` Win=\d+ `)

var tsharkAnalysis = regexp.MustCompile(` \((request|reply) in \d+\)| \(no response found!\)|^\[TCP [^\]]*\] `)

// TestSummaryMatchesTshark compares rocetap's Protocol and Info columns
// with tshark's on every frame rocetap summarises (ARP, ICMP, ICMPv6,
// TCP, UDP, LLDP, on Ethernet, Linux cooked captures, DLT_IPOIB and inside
// IPoIB SENDs), with tshark's TCP sequence numbers absolute as rocetap's.
func TestSummaryMatchesTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	compared := 0
	for _, file := range captures(t) {
		if conv := ibInERF(t, file); conv != "" {
			file = conv
		}
		args := append([]string{"-r", file, "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields",
			"-e", "frame.number", "-e", "_ws.col.Protocol", "-e", "tcp.window_size_value", "-e", "_ws.col.Info"}, tsharkArgs...)
		args = append(args, perFile[filepath.Base(file)]...)
		var stderr bytes.Buffer
		cmd := exec.Command(ts, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark %s: %v\n%s", file, err, stderr.String())
		}
		want := lines(out)
		frames := testcap.ReadFile(t, file)
		if len(want) != len(frames) {
			t.Fatalf("%s: tshark printed %d frames, the file has %d", file, len(want), len(frames))
		}
		var p decode.Packet
		for i, fr := range frames {
			p.Frame = decode.Frame{Number: fr.Number, Len: fr.Len}
			decode.Decode(&p, fr.Data, fr.LinkType)
			proto := printer.Protocol(&p)
			if !summarised[proto] {
				continue
			}
			c := strings.SplitN(want[i], "\t", 4)
			if len(c) != 4 {
				t.Fatalf("%s frame %d: tshark printed %q", file, i+1, want[i])
			}
			wantInfo := strings.TrimRight(tsharkAnalysis.ReplaceAllString(c[3], ""), " ")
			if c[2] != "" {
				// tshark scales the window by the factor the handshake
				// announced; rocetap shows the field as sent.
				wantInfo = tsharkWindow.ReplaceAllString(wantInfo, " Win="+c[2]+" ")
			}
			gotInfo := string(printer.AppendInfo(nil, &p))
			if c[1] != proto || wantInfo != gotInfo {
				t.Errorf("%s frame %d:\n tshark  %s | %s\n rocetap %s | %s", filepath.Base(file), i+1, c[1], wantInfo, proto, gotInfo)
			}
			compared++
		}
	}
	if compared < 40 {
		t.Errorf("compared %d frames; the synthetic captures hold more than 40 such frames", compared)
	}
	t.Logf("compared Protocol and Info of %d frames with tshark", compared)
}
