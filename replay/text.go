package replay

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/text"
)

// Verdict is the report's last line: "replay: N requests, M responses
// compared, K divergences", and ", L notes" when there are notes.
func (r *Report) Verdict() string {
	s := "replay: " + text.Plural(r.Requests, "request") + ", " + text.Plural(r.Compared, "response") + " compared, " +
		text.Plural(r.DivergenceCount, "divergence")
	if r.NoteCount > 0 {
		s += ", " + text.Plural(r.NoteCount, "note")
	}
	return s
}

// AppendText appends the report for humans: inputs, per-session counts,
// the completions the model predicts, the divergences grouped by session,
// and the verdict line.
func (r *Report) AppendText(b []byte) []byte {
	// File names come from the user: escaped like packet data.
	b = append(b, "Replay of "+decode.Sanitize(nonEmpty(r.Capture, "the capture"))+" into the model of "+decode.Sanitize(nonEmpty(r.MPT, "the MPT"))+"\n"...)
	b = append(b, "Responder: "+r.Responder.String()+", profile "+decode.Sanitize(nonEmpty(r.Profile, "?"))+"\n"...)
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
	if r.NoteCount > 0 {
		b = append(b, "\nNotes: "+strconv.Itoa(r.NoteCount)+" ("+strings.Join(r.noteKindCounts(), ", ")+
			"): the responder chose differently within the rules; not divergences\n"...)
		for _, s := range r.Sessions {
			first := true
			for i := range r.NoteList {
				n := &r.NoteList[i]
				if n.Session != s.ID {
					continue
				}
				if first {
					b = append(b, "  "+s.Name+"\n"...)
					first = false
				}
				b = append(b, "    "+n.Message+"\n"...)
			}
		}
		if r.NotesOmitted > 0 {
			b = append(b, "  ... and "+strconv.Itoa(r.NotesOmitted)+" more, not listed (raise --max-divergences to see them)\n"...)
		}
	}
	b = r.appendUC(b)
	for _, note := range r.Notes() {
		b = append(b, "\nNote: "+note+"\n"...)
	}
	b = append(b, '\n')
	b = append(b, r.Verdict()+"\n"...)
	return b
}

// ucSessions returns the UC sessions that had requests: the replay had
// nothing of theirs to compare.
func (r *Report) ucSessions() []*Session {
	var out []*Session
	for _, s := range r.Sessions {
		if s.NothingToCompare() && s.Requests > 0 {
			out = append(out, s)
		}
	}
	return out
}

// ucCheck is the command that checks UC accesses, for the report.
func (r *Report) ucCheck() string {
	return "rocetap expert -r " + nonEmpty(r.Capture, "CAPTURE") + " --mpt " + nonEmpty(r.MPT, "MPT")
}

// appendUC appends what the replay can say of UC sessions: nothing was
// compared, and the requests the model dropped, with their reasons.
func (r *Report) appendUC(b []byte) []byte {
	uc := r.ucSessions()
	if len(uc) == 0 {
		return b
	}
	b = append(b, "\nUC sessions: nothing to compare (UC sends no responses); what the model dropped is listed, and\n"+
		"  "+r.ucCheck()+" checks their remote accesses against the MPT\n"...)
	for _, s := range uc {
		dropped := 0
		for _, n := range s.Dropped {
			dropped += n
		}
		b = append(b, "  "+s.Name+": "+text.Plural(s.Requests, "request")+", "+strconv.Itoa(s.Executed)+" executed, "+
			strconv.Itoa(dropped)+" dropped by the model\n"...)
		for i := range s.DropList {
			b = append(b, "    "+s.DropList[i].String()+"\n"...)
		}
		if s.DropListOmitted > 0 {
			b = append(b, "    ... and "+strconv.Itoa(s.DropListOmitted)+" more\n"...)
		}
	}
	return b
}

// Notes say what may be wrong with the inputs (a replay against the wrong
// responder address or the wrong MPT file, or a one-sided capture), what
// the replay could not compare (UC sessions), and sum up the legal
// behaviours it noted (NoteList).
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
	if uc := r.ucSessions(); len(uc) > 0 {
		names, dropped := make([]string, len(uc)), 0
		for i, s := range uc {
			names[i] = "QP " + hex24(s.QPN)
			for _, k := range s.Dropped {
				dropped += k
			}
		}
		out = append(out, text.Plural(len(uc), "UC session")+" ("+strings.Join(names, ", ")+") gave the replay nothing to compare: UC sends no responses; the model dropped "+
			text.Plural(dropped, "request")+" of them (listed with their reasons); "+r.ucCheck()+" checks UC accesses against the MPT")
	}
	for _, k := range NoteKinds() {
		if n := r.NotesByKind[k]; n > 0 {
			out = append(out, text.Plural(n, k.String()+" note")+": "+noteSummary[k])
		}
	}
	return out
}

// noteSummary says in a few words why each kind of note is no divergence.
var noteSummary = [numNoteKinds]string{
	NoteUnsolicitedACK: "the responder acknowledged requests that did not ask (no AckReq); a responder may acknowledge any request it executed",
	NoteCoalescedACK:   "one acknowledgement of the responder covered several the model sends; a responder may coalesce ACKs",
	NoteMSNInMessage:   "an ACK inside a message not yet complete carried another MSN; the MSN is checked once the message is complete",
	NoteMemoryChanged:  "data differed from what an earlier response showed of the same memory; the responder's CPU may change its buffer between two remote accesses (bytes the capture wrote stay a hard check)",
}

func (r *Report) noteKindCounts() []string {
	var out []string
	for _, k := range NoteKinds() {
		if n := r.NotesByKind[k]; n > 0 {
			out = append(out, k.String()+" "+strconv.Itoa(n))
		}
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
		if s.Unsolicited > 0 {
			notes = append(notes, text.Plural(s.Unsolicited, "unsolicited ACK")+" (no AckReq)")
		}
		if len(notes) > 0 {
			b = append(b, "      "+strings.Join(notes, "; ")+"\n"...)
		}
	}
	return b
}
