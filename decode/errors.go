package decode

import (
	"errors"
	"fmt"
)

// ErrTruncated is wrapped by every error about a header cut short by the end
// of the captured data. Test with errors.Is.
var ErrTruncated = errors.New("truncated")

// ErrMalformed is wrapped by errors about a header whose content is invalid.
var ErrMalformed = errors.New("malformed")

func truncated(hdr string, need, have int) error {
	return fmt.Errorf("%s: need %d bytes, have %d: %w", hdr, need, have, ErrTruncated)
}

// nilFeedback is the DecodeFeedback the fast path passes to DecodeFromBytes.
type nilFeedback struct{}

func (nilFeedback) SetTruncated() {}

var noFeedback nilFeedback
