// Package outfile writes the files rocetap's commands produce (decode -w,
// edit -w, mpt learn/import -o) without ever losing a user's file: the
// data goes to a temporary file beside the destination, which is renamed
// into place only when everything was written; a failure removes the
// temporary file and nothing else; an existing file is replaced only when
// the user said so (--force), and an input of the same command never.
// Without --force, a file that appears at the destination while the
// output is written is not replaced either: the temporary file is kept,
// and the error names it.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Options say what Create may do.
type Options struct {
	// Force allows replacing an existing file (the command's --force).
	Force bool
	// Inputs are files the command reads: the output may not be one of
	// them, even with Force.
	Inputs []string
	// Flag names the option that gave the path, for messages ("-w"); ""
	// leaves it out.
	Flag string
	// Program and ForceFlag name, for messages, the program that writes
	// and its option that allows replacing: "" is rocetap's ("rocetap",
	// "--force"); a tool of the project's own names its own ("gencap",
	// "-force").
	Program, ForceFlag string
}

// File is an output being written. Write to it, then Commit (or Abort).
type File struct {
	*os.File
	path  string
	flag  string // "-w " or ""
	force bool
	done  bool
	// who is the program and its option to replace, for messages
	who who
}

// who names a program and its option to replace a file.
type who struct{ program, force string }

func whoOf(o *Options) who {
	w := who{o.Program, o.ForceFlag}
	if w.program == "" {
		w.program = "rocetap"
	}
	if w.force == "" {
		w.force = "--force"
	}
	return w
}

// refusal is what Create says of an existing file without Force.
func (w who) refusal() string {
	return w.program + " does not replace a file unless told to: choose another name, remove it, or add " + w.force
}

// ErrExists is wrapped by Create's error for an existing destination.
var ErrExists = errors.New("file exists")

// Create starts writing path.
func Create(path string, o Options) (*File, error) {
	// Messages start "-w PATH: ", or "PATH: " without a flag.
	flag := o.Flag
	if flag == "" {
		if path == "" {
			return nil, errors.New("no file name given")
		}
	} else {
		flag += " "
	}
	if path == "" {
		return nil, fmt.Errorf("%s: no file name given", o.Flag)
	}
	w := whoOf(&o)
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("%s%s: it is a directory: give a file name", flag, path)
	case err == nil:
		for _, in := range o.Inputs {
			if ist, ierr := os.Stat(in); ierr == nil && os.SameFile(st, ist) {
				return nil, fmt.Errorf("%s%s is the input file: write to another file", flag, path)
			}
		}
		if !o.Force {
			return nil, fmt.Errorf("%s%s: %w; %s", flag, path, ErrExists, w.refusal())
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s%s: not a regular file (a device or pipe): write to a file", flag, path)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s%s: %w", flag, path, err)
	case !o.Force:
		// a symbolic link to nothing is there all the same: Commit would
		// not replace it, so say so now, not after the writing
		if _, lerr := os.Lstat(path); lerr == nil {
			return nil, fmt.Errorf("%s%s: %w (a symbolic link to nothing); %s", flag, path, ErrExists, w.refusal())
		}
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s%s: the directory %s does not exist: create it or write elsewhere", flag, path, dir)
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%s%s: no permission to create files in %s: write elsewhere", flag, path, dir)
		}
		return nil, fmt.Errorf("%s%s: cannot create a file in %s: %w", flag, path, dir, err)
	}
	return &File{File: f, path: path, flag: flag, force: o.Force, who: w}, nil
}

// Path is the destination.
func (f *File) Path() string { return f.path }

// WriteError is a failed write of the output (a full disk, the file-size
// limit): what Write returns, and what Commit returns when the data could
// not be made durable or put in place. The command stopped with its output
// incomplete, which the CLI's exit status says (4).
type WriteError struct {
	Path string // the destination
	Err  error
}

func (e *WriteError) Error() string { return "writing " + e.Path + ": " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// WriteString is Write of s (not *os.File's, which would not wrap its
// error).
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// Write writes to the temporary file; its errors are *WriteError.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		return n, &WriteError{f.path, err}
	}
	return n, nil
}

// Commit closes the temporary file and renames it to the destination.
// Without Force, a file that appeared at the destination since Create is
// left as it is: Commit's error wraps ErrExists and names the temporary
// file, which it keeps.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	tmp := f.Name()
	failed := func(err error) error { // (the temporary file is rocetap's own)
		os.Remove(tmp)
		return &WriteError{f.path, err}
	}
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		return failed(err)
	}
	if err := f.File.Close(); err != nil {
		return failed(err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return failed(err)
	}
	if err := f.place(tmp); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s%s: %w: a file of that name appeared while %s was writing it, and %[4]s does not replace a file unless told to; what it wrote is kept in %[5]s: rename it, or run again with another name or %[6]s", f.flag, f.path, ErrExists, f.who.program, tmp, f.who.force)
	} else if err != nil {
		return failed(err)
	}
	return nil
}

// place puts the finished temporary file at the destination. Without
// Force it must not replace a file that appeared since Create, and must
// not leave a moment where one could appear between a check and the move:
// it renames with RENAME_NOREPLACE (Linux renameat2, one atomic step that
// fails on an existing destination); where the file system or the system
// has no such rename, it links the file there (a link, unlike a rename,
// fails on an existing file) and removes the temporary name; only on a
// file system with neither does it check again, then rename.
func (f *File) place(tmp string) error {
	if f.force {
		return os.Rename(tmp, f.path)
	}
	for _, p := range placers {
		if err := p(tmp, f.path); !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return errors.ErrUnsupported
}

// placers are the ways place tries, in turn, to move tmp to path without
// replacing a file there; each returns errors.ErrUnsupported to pass on
// to the next, and fs.ErrExist (wrapped) when a file is there. A test
// swaps them to run each one.
var placers = []func(tmp, path string) error{renameNoReplace, linkInPlace, checkThenRename}

// linkInPlace links tmp at path, then removes tmp.
func linkInPlace(tmp, path string) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	return errors.ErrUnsupported
}

// checkThenRename is the last resort: a file that appears between the
// check and the rename is replaced.
func checkThenRename(tmp, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fs.ErrExist
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, path)
}

// Abort closes and removes the temporary file; the destination is left
// as it was. After Commit it does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}
