// Package text holds the small helpers rocetap's reports share for
// writing English.
package text

import (
	"strconv"
	"strings"
)

// Plural returns n and word, with word in the plural unless n is 1:
// "1 request", "3 requests", "0 misses" (a word ending in s takes "es").
func Plural(n int, word string) string {
	switch {
	case n == 1:
		return "1 " + word
	case strings.HasSuffix(word, "s"):
		return strconv.Itoa(n) + " " + word + "es"
	}
	return strconv.Itoa(n) + " " + word + "s"
}
