package text

import "testing"

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"},  // é is two bytes: not split
		{"aé", 3, "aé"}, // fits
		{"日本", 5, "日"},
		{"日本", 2, ""},
	} {
		if got := Cut(tt.s, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"},
		{"日本", 1, "…"},
	} {
		if got := Shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"stats", "stats", 0},
		{"stat", "stats", 1}, {"mesages", "messages", 1}, {"kitten", "sitting", 3},
		{"flaw", "lawn", 2}, {"max_bytes", "max_byte", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1<<20 - 1: "1024.0 KiB", 1 << 20: "1.0 MiB", 3 << 20: "3.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
