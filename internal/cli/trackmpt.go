package cli

import (
	"errors"
	"fmt"

	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// mptFlagUsage is the help of --mpt, shared by decode, sessions, stats and
// expert.
const mptFlagUsage = "check every remote access (RETH, AtomicETH, IETH) sent to the responder against this MPT file (rocetap help mpt-format)"

// trackMPT loads the MPT file of --mpt and builds the responder model the
// tracker checks accesses against; path "" gives nil (no checks). A
// problem in the file is mpt's *Error (file:line:col: $.path: what).
func trackMPT(path string, mf *modelFlags) (*hca.Model, error) {
	if path == "" {
		return nil, nil
	}
	opt, err := mf.options(hca.ProfileIBTA)
	if err != nil {
		return nil, err
	}
	f, err := mpt.Load(path)
	if err != nil {
		var me *mpt.Error
		if errors.As(err, &me) {
			return nil, err
		}
		return nil, fmt.Errorf("--mpt: %w", err)
	}
	// The profile changes how a responder answers, not what the MPT
	// allows; an unknown one is the replay's concern.
	opt.Profile, _ = hca.ProfileByName(f.Profile)
	m, err := hca.NewModel(&f.Config, opt)
	if err != nil {
		return nil, fmt.Errorf("--mpt %s: %w", path, err)
	}
	return m, nil
}
