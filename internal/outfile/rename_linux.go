//go:build linux

package outfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames tmp to path unless path exists, in one step
// (renameat2 with RENAME_NOREPLACE, Linux 3.15; file systems without it
// refuse with EINVAL, old kernels with ENOSYS).
func renameNoReplace(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return errors.ErrUnsupported
	}
	return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
}
