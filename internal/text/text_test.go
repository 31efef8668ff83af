package text

import "testing"

func TestPlural(t *testing.T) {
	cases := []struct {
		n    int
		word string
		want string
	}{
		{0, "request", "0 requests"},
		{1, "request", "1 request"},
		{2, "request", "2 requests"},
		{1, "miss", "1 miss"},
		{3, "miss", "3 misses"},
		{0, "QP", "0 QPs"},
		{-1, "packet", "-1 packets"},
		{2, "request message", "2 request messages"},
	}
	for _, c := range cases {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
