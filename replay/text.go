package replay

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/text"
)

// Verdict is the report's last line: "replay: N requests, M responses
// compared, K divergences".
func (r *Report) Verdict() string {
	return "replay: " + text.Plural(r.Requests, "request") + ", " + text.Plural(r.Compared, "response") + " compared, " +
		text.Plural(r.DivergenceCount, "divergence")
}

// AppendText appends the report for humans: inputs, per-session counts,
// the completions the model predicts, the divergences grouped by session,
// and the verdict line.
func (r *Report) AppendText(b []byte) []byte {
	b = append(b, "Replay of "+nonEmpty(r.Capture, "the capture")+" into the model of "+nonEmpty(r.MPT, "the MPT")+"\n"...)
	b = append(b, "Responder: "+r.Responder.String()+", profile "+nonEmpty(r.Profile, "?")+"\n"...)
	b = append(b, "Packets: "+strconv.Itoa(r.Packets)+": "+text.Plural(r.Requests, "request")+" to the responder, "+
		text.Plural(r.CapturedResponses, "response")+" from it, "+strconv.Itoa(r.Ignored.Total())+" ignored"...)
	if parts := r.Ignored.parts(); len(parts) > 0 {
		b = append(b, " ("+strings.Join(parts, ", ")+")"...)
	}
	b = append(b, '\n')

	b = append(b, "\nSessions (responder QP ← requester):\n"...)
	b = r.appendSessionTable(b)

	b = append(b, "\nCompletions the model predicts (what the applications would see):\n"...)
	b = append(b, "  requester: "+statusCounts(&r.Completions.Requester)+"\n"...)
	b = append(b, "  responder: "+statusCounts(&r.Completions.Responder)+"\n"...)
	if r.Cache != nil {
		b = r.Cache.appendText(b)
	}

	if r.DivergenceCount > 0 {
		b = append(b, "\nDivergences: "+strconv.Itoa(r.DivergenceCount)+" ("+strings.Join(r.kindCounts(), ", ")+")\n"...)
		for _, s := range r.Sessions {
			first := true
			for i := range r.Divergences {
				d := &r.Divergences[i]
				if d.Session != s.ID {
					continue
				}
				if first {
					b = append(b, "  "+s.Name+"\n"...)
					first = false
				}
				b = append(b, "    "+d.Message+"\n"...)
			}
		}
		if r.DivergencesOmitted > 0 {
			b = append(b, "  ... and "+strconv.Itoa(r.DivergencesOmitted)+" more, not listed (raise --max-divergences to see them)\n"...)
		}
	}
	for _, note := range r.Notes() {
		b = append(b, "\nNote: "+note+"\n"...)
	}
	b = append(b, '\n')
	b = append(b, r.Verdict()+"\n"...)
	return b
}

// Notes say what may be wrong with the inputs: a replay against the wrong
// responder address or the wrong MPT file, or a one-sided capture.
func (r *Report) Notes() []string {
	var out []string
	switch {
	case r.Requests == 0 && len(r.RequestHosts) > 0:
		hosts := make([]string, len(r.RequestHosts))
		for i, a := range r.RequestHosts {
			hosts[i] = a.String()
		}
		out = append(out, "no request in the capture goes to "+r.Responder.String()+"; its RDMA requests go to "+strings.Join(hosts, ", ")+
			": pass --responder with the address of the node the MPT file describes")
	case r.Requests == 0:
		out = append(out, "no request in the capture goes to "+r.Responder.String())
	case r.ModelResponses > 0 && r.CapturedResponses == 0 && r.Ignored.Reverse == 0:
		out = append(out, "the capture holds no response from "+r.Responder.String()+": was it taken in one direction only, or filtered?")
	}
	if r.CutShort {
		out = append(out, "the capture ends early (it is corrupt after frame "+strconv.Itoa(r.Packets)+"): "+
			text.Plural(r.NotCompared, "model response")+" had no captured counterpart yet and were not compared")
	}
	var unknown []string
	n := 0
	for _, s := range r.Sessions {
		if s.HasQPN && !s.InMPT && s.Requests > 0 {
			n += s.Requests
			if len(unknown) < 4 {
				unknown = append(unknown, "QP "+hex24(s.QPN))
			}
		}
	}
	if n > 0 {
		out = append(out, text.Plural(n, "request")+" went to QPs the MPT file does not describe ("+strings.Join(unknown, ", ")+
			"): the model drops them; is the MPT file the one of this capture?")
	}
	return out
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (g *Ignored) parts() []string {
	var out []string
	add := func(n int, what string) {
		if n > 0 {
			out = append(out, strconv.Itoa(n)+" "+what)
		}
	}
	add(g.Management, "management MADs on QP0/QP1")
	add(g.CNP, "CNPs")
	add(g.NotRDMA, "not RDMA")
	add(g.Reverse, "with the responder as requester")
	add(g.OtherHosts, "between other hosts")
	add(g.NoAddress, "without an address (no IP header, GRH or LRH)")
	add(g.Filtered, "left out by the display filter")
	return out
}

func (r *Report) kindCounts() []string {
	var out []string
	for _, k := range Kinds() {
		if n := r.ByKind[k]; n > 0 {
			out = append(out, k.String()+" "+strconv.Itoa(n))
		}
	}
	return out
}

// statusCounts is "3 success, 1 remote access error (IBV_WC_REM_ACCESS_ERR)".
func statusCounts(c *[256]int) string {
	var out []string
	for st, n := range c {
		if n == 0 {
			continue
		}
		s := strconv.Itoa(n) + " " + hca.WCStatus(st).String()
		if st != int(hca.WCSuccess) {
			s += " (" + hca.WCStatus(st).Name() + ")"
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

var sessionCols = []string{"session", "type", "requests", "executed", "dropped", "model", "captured", "compared", "divergences"}

func (r *Report) appendSessionTable(b []byte) []byte {
	rows := [][]string{sessionCols}
	for _, s := range r.Sessions {
		dropped := 0
		for _, n := range s.Dropped {
			dropped += n
		}
		rows = append(rows, []string{s.Name, s.typeName(), strconv.Itoa(s.Requests), strconv.Itoa(s.Executed),
			strconv.Itoa(dropped), strconv.Itoa(s.ModelResponses), strconv.Itoa(s.CapturedResponses),
			strconv.Itoa(s.Compared), strconv.Itoa(s.Divergences)})
	}
	width := make([]int, len(sessionCols))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for ri, row := range rows {
		line := "  "
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < 2 {
				line += c + pad
			} else {
				line += pad + c
			}
			if i < len(row)-1 {
				line += "  "
			}
		}
		b = append(b, strings.TrimRight(line, " ")+"\n"...)
		if ri == 0 {
			continue
		}
		s := r.Sessions[ri-1]
		var notes []string
		for _, dc := range s.Drops() {
			notes = append(notes, strconv.Itoa(dc.Count)+" dropped: "+dc.Reason.String())
		}
		if s.Coalesced > 0 {
			notes = append(notes, text.Plural(s.Coalesced, "ACK")+" coalesced into later ones by the responder")
		}
		if len(notes) > 0 {
			b = append(b, "      "+strings.Join(notes, "; ")+"\n"...)
		}
	}
	return b
}
