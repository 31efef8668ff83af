package pathcmp

import "github.com/rocetap/rocetap/decode"

// Session is what the comparison found for one session (a QP pair, or a
// UD flow), as rocetap sessions numbers them in capture Point: A's when A
// saw it, else B's.
type Session struct {
	Session uint32
	Point   uint8
	// AToB and BToA sum its flows that went each way; their Delay
	// summarizes every packet of the session matched that way.
	AToB, BToA Flow
	// OffPath sums its flows never seen at both points: Upstream counts
	// their frames in A, Downstream those in B.
	OffPath Flow
}

// OnlyOnePoint is how many of its packets only one point saw: those
// the upstream point lacks, those sent while the other capture was not
// running, and those of its flows seen at one point only (its lost
// packets are counted apart).
func (s *Session) OnlyOnePoint() int {
	return s.AToB.OnlyDownstream + s.AToB.Outside + s.BToA.OnlyDownstream + s.BToA.Outside + s.OffPath.Upstream + s.OffPath.Downstream
}

// Sessions groups the flows by session, in the order of r.Flows (A's
// sessions first, by number).
func Sessions(r *Result) []*Session {
	type id struct {
		point uint8
		n     uint32
	}
	var out []*Session
	by := map[id]*Session{}
	var delays [2]map[*Session][]int64
	delays[0], delays[1] = map[*Session][]int64{}, map[*Session][]int64{}
	for _, f := range r.Flows {
		k := id{f.SessionPoint, f.Session}
		s := by[k]
		if s == nil {
			s = &Session{Session: f.Session, Point: f.SessionPoint}
			s.AToB.Dir, s.BToA.Dir = decode.PathAToB, decode.PathBToA
			by[k] = s
			out = append(out, s)
		}
		switch f.Dir {
		case decode.PathAToB:
			s.AToB.add(f)
			delays[0][s] = append(delays[0][s], f.delays...)
		case decode.PathBToA:
			s.BToA.add(f)
			delays[1][s] = append(delays[1][s], f.delays...)
		default:
			s.OffPath.add(f)
		}
	}
	for _, s := range out {
		for i, t := range []*Flow{&s.AToB, &s.BToA} {
			if d := delays[i][s]; len(d) > 0 {
				t.Delay = delayStats(d)
			}
		}
	}
	return out
}
