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
	f, err := loadMPTFile(path)
	if err != nil {
		return nil, err
	}
	return f.NewModel(path, opt, false)
}

// loadMPTFile reads an MPT file as every command does (mpt check, --mpt,
// replay): the same checks, the same messages. The model is then built
// with File.NewModel, which mpt check runs too.
func loadMPTFile(path string) (*mpt.File, error) {
	f, err := mpt.Load(path)
	if err != nil {
		var me *mpt.Error
		if errors.As(err, &me) {
			return nil, fmt.Errorf("%w (rocetap help mpt-format describes the format)", err)
		}
		return nil, fmt.Errorf("--mpt: cannot read the MPT file: %w (give the path of the responder's MPT file)", err)
	}
	return f, nil
}
