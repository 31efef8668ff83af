package decode

import "time"

// Path is what a comparison of two captures of the same traffic (package
// pathcmp, rocetap path) found about one frame of either capture: the
// fields under rocetap.path.*. Decode never sets it; they exist only on
// frames that comparison looked at (Compared).
type Path struct {
	Compared bool
	Point    uint8   // the capture the frame is in: 0 A (first -r), 1 B (second -r)
	Dir      PathDir // which way it went between the points
	Status   PathStatus
	// PeerFrame is the frame number of the same packet in the other
	// capture (matched), or of the copy it duplicates (duplicate); 0 none.
	PeerFrame int
	// Delay is the one-way delay from the upstream point to the
	// downstream one, on the upstream point's clock (the estimated clock
	// offset and drift taken out); set on both frames of a match.
	Delay     time.Duration
	HasDelay  bool
	Reordered bool // overtaken between the points by a packet of its flow sent after it
	Spike     bool // path_delay_spike: see package pathcmp
	NAKed     bool // a request the responder NAKed (PSN sequence error or another NAK), seen downstream
}

// PathDir is the direction of a packet between the two capture points.
type PathDir uint8

// Directions.
const (
	PathDirUnknown PathDir = iota // a flow never seen at both points
	PathAToB
	PathBToA
)

var pathDirNames = [...]string{"", "A->B", "B->A"}

func (d PathDir) String() string {
	if int(d) < len(pathDirNames) {
		return pathDirNames[d]
	}
	return ""
}

// PathStatus is what became of a packet between the two points.
type PathStatus uint8

// Statuses. Lost and Duplicate are on the frame where the finding shows:
// a lost packet on its frame upstream, a duplicate on the extra copy
// downstream.
const (
	PathNone      PathStatus = iota
	PathMatched              // seen at both points
	PathLost                 // left the upstream point, never reached the downstream one (path_loss)
	PathDuplicate            // an extra copy of a matched packet, made between the points
	PathOnlyHere             // seen only downstream: the upstream capture missed it, or it was made between the points
	PathOutside              // the other capture was not running when it would have been seen there
	PathOffPath              // its flow was never seen at the other point: not on the path between them
)

var pathStatusNames = [...]string{"", "matched", "lost", "duplicate", "only_here", "outside", "off_path"}

func (s PathStatus) String() string {
	if int(s) < len(pathStatusNames) {
		return pathStatusNames[s]
	}
	return ""
}

// Names of the two-point expert events (rocetap.path.expert).
const (
	PathEventLoss       = "path_loss"
	PathEventDelaySpike = "path_delay_spike"
)

// registerPathFields registers rocetap.path.* under rt.
func registerPathFields(rt *Field) {
	on := func(p *Packet) bool { return p.Path.Compared }
	s := func(abbrev, name string, get func(*Path) string) {
		stringField(rt, abbrev, name, 0, func(p *Packet) string {
			if !on(p) {
				return ""
			}
			return get(&p.Path)
		})
	}
	u := func(abbrev, name string, t FieldType, base Base, ok func(*Path) bool, get func(*Path) uint64) {
		condUint(rt, abbrev, name, t, base, 0, -1, 0, func(p *Packet) bool { return on(p) && ok(&p.Path) }, func(p *Packet) uint64 { return get(&p.Path) })
	}
	one := func(*Path) uint64 { return 1 }
	s("rocetap.path.point", "Capture point", func(x *Path) string { return [2]string{"A", "B"}[x.Point&1] })
	s("rocetap.path.direction", "Direction between the points", func(x *Path) string { return x.Dir.String() })
	s("rocetap.path.status", "Between the points", func(x *Path) string { return x.Status.String() })
	u("rocetap.path.peer_frame", "Same packet in the other capture's frame", FTUint32, BaseDec, func(x *Path) bool { return x.PeerFrame > 0 }, func(x *Path) uint64 { return uint64(x.PeerFrame) })
	u("rocetap.path.delay", "One-way delay between the points", FTRelTime, BaseNone, func(x *Path) bool { return x.HasDelay }, func(x *Path) uint64 { return uint64(x.Delay) })
	u("rocetap.path.lost", "Lost between the points", FTBoolean, BaseNone, func(x *Path) bool { return x.Status == PathLost }, one)
	u("rocetap.path.duplicate", "Duplicated between the points", FTBoolean, BaseNone, func(x *Path) bool { return x.Status == PathDuplicate }, one)
	u("rocetap.path.reordered", "Reordered between the points", FTBoolean, BaseNone, func(x *Path) bool { return x.Reordered }, one)
	u("rocetap.path.naked", "NAKed by the responder", FTBoolean, BaseNone, func(x *Path) bool { return x.NAKed }, one)
	multiField(rt, "rocetap.path.expert", "Two-point expert event", FTString, BaseNone, 0, func(p *Packet, out []Value) []Value {
		if !on(p) {
			return out
		}
		if p.Path.Status == PathLost {
			out = append(out, Value{S: PathEventLoss})
		}
		if p.Path.Spike {
			out = append(out, Value{S: PathEventDelaySpike})
		}
		return out
	})
}
