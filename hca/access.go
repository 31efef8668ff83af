package hca

import "strings"

// Access is a set of verbs access flags (IBV_ACCESS_*), on an MR, an MW or
// a QP.
type Access uint32

// Access flags, with the verbs values.
const (
	LocalWrite   Access = 1 << 0
	RemoteWrite  Access = 1 << 1
	RemoteRead   Access = 1 << 2
	RemoteAtomic Access = 1 << 3
	MWBind       Access = 1 << 4
	ZeroBased    Access = 1 << 5
	OnDemand     Access = 1 << 6
)

var accessNames = []struct {
	a    Access
	name string
}{
	{LocalWrite, "LOCAL_WRITE"}, {RemoteWrite, "REMOTE_WRITE"}, {RemoteRead, "REMOTE_READ"},
	{RemoteAtomic, "REMOTE_ATOMIC"}, {MWBind, "MW_BIND"}, {ZeroBased, "ZERO_BASED"}, {OnDemand, "ON_DEMAND"},
}

// AccessFlags lists every access flag, in the order of the verbs values;
// each one's String is its name in MPT files.
func AccessFlags() []Access {
	out := make([]Access, len(accessNames))
	for i, n := range accessNames {
		out[i] = n.a
	}
	return out
}

// AccessByName returns the flag named as in MPT files ("REMOTE_WRITE"),
// and false for an unknown name.
func AccessByName(name string) (Access, bool) {
	for _, n := range accessNames {
		if n.name == name {
			return n.a, true
		}
	}
	return 0, false
}

// String returns the names joined by "|", e.g. "LOCAL_WRITE|REMOTE_READ".
func (a Access) String() string {
	var s []string
	for _, n := range accessNames {
		if a&n.a != 0 {
			s = append(s, n.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}
