package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/stream"
)

// Exit statuses: one table for every command, printed by --help
// (exitTable) and in the README's "Exit status" section.
const (
	// ExitOK: the command did what was asked. Warnings (a link type
	// rocetap does not decode, a note from replay) go to stderr.
	ExitOK = 0
	// ExitInput: a usage or input error found before anything was
	// processed: a bad flag, filter or MPT file, a file that cannot be
	// read or is not a capture (one cut inside its file header too).
	// Nothing is printed on stdout.
	ExitInput = 1
	// ExitDamaged: the capture is damaged part-way. Every packet before
	// the damage was processed and printed (and a report covers them);
	// the error names the packet and its byte offset.
	ExitDamaged = 2
	// ExitDivergence: replay ran to the end and the responder in the
	// capture did not answer as the reference model does.
	ExitDivergence = 3
	// ExitOutput: stopped with the output incomplete: standard output or
	// a file given with -w or -o could not be written (a full disk, the
	// file-size limit), whatever else happened; a capture whose output did not
	// take what was left (a reader that stopped reading, a stalled file
	// system) within half a second of the stop, which rocetap left saying
	// how many packets reached it; or decode -w interrupted before its
	// file was complete (none is left).
	ExitOutput = 4
)

// exitTable is the table --help prints under every command.
const exitTable = `Exit status:
  0  success (warnings go to stderr)
  1  usage or input error, found before anything was processed: a bad flag,
     filter or MPT file, a file that cannot be read or is not a capture;
     nothing is printed on stdout
  2  the capture is damaged part-way: every packet before the damage was
     processed and printed; the error names the packet and byte offset
  3  replay: the responder did not answer as the reference model does
  4  stopped with the output incomplete: standard output or a -w/-o file
     could not be written (a full disk); capture's output did not take
     the last packets within half a second of the stop (a reader that
     stopped reading, a stalled file system); decode -w interrupted (no
     file left)`

// exitError carries an exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitStatus is err's exit status: ExitOutput when the output (standard
// output, a -w or -o file, a capture file) could not be written, whatever
// else happened, then the status it carries, ExitDamaged for a capture
// damaged part-way, else ExitInput.
func exitStatus(err error) int {
	var oe *outputError
	var fe *outfile.WriteError
	var ce *capture.WriteError
	if errors.As(err, &oe) || errors.As(err, &fe) || errors.As(err, &ce) {
		return ExitOutput
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isDamaged(err) {
		return ExitDamaged
	}
	return ExitInput
}

// isDamaged says err is a capture damaged part-way (a
// *stream.CorruptError): the packets before it were processed.
func isDamaged(err error) bool {
	var ce *stream.CorruptError
	return errors.As(err, &ce)
}

// outputError is a failed write to standard output, as outWatch returns
// it: whatever a command does with it, it exits with ExitOutput.
type outputError struct{ err error }

func (e *outputError) Error() string { return e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// message is what Main prints for err, a line for each error joined in
// it: an output error alone says what failed, which an error that wraps
// one (capture's) says already.
func message(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			parts = append(parts, message(e))
		}
		return strings.Join(parts, "\n")
	}
	var oe *outputError
	if errors.As(err, &oe) && err.Error() == oe.Error() {
		return "writing the output: " + err.Error() + " (what was written is incomplete)"
	}
	return err.Error()
}

// outWatch is standard output as the commands see it: it marks write
// errors as outputErrors and keeps the first, so that Main reports one a
// command did not return.
type outWatch struct {
	w   io.Writer
	err error
}

func (o *outWatch) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		e := &outputError{err}
		if o.err == nil {
			o.err = e
		}
		return n, e
	}
	return n, nil
}
