// Package layering holds the test that pins rocetap's import rules: which
// of rocetap's own packages each package may import. It has no code of its
// own.
package layering
