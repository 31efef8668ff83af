package stream

import "errors"

// CorruptError says a capture could not be read to its end: a record that
// cannot be framed or a file cut short (a *capture.FormatError, which it
// wraps), or a read error. Every packet before it was handed on.
type CorruptError struct {
	Packets int   // good packets read before it
	Err     error // what the reader said
}

func (e *CorruptError) Error() string { return e.Err.Error() }
func (e *CorruptError) Unwrap() error { return e.Err }

// ErrStop, returned by a Read callback, ends the reading early without an
// error: Read returns nil.
var ErrStop = errors.New("stream: stop")
