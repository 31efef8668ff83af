//go:build !linux

package outfile

import "errors"

// renameNoReplace has no atomic form here: place links instead.
func renameNoReplace(tmp, path string) error { return errors.ErrUnsupported }
