package secret

import (
	"strings"
	"testing"

	"github.com/miramem/mira/internal/secret/secrettest"
)

// FuzzScan checks that Scan never panics, that findings are ordered, do not
// overlap and point inside the text at the secret they describe, and that a
// redaction never reveals a whole secret of eight bytes or more.
func FuzzScan(f *testing.F) {
	for _, tc := range secretCases() {
		f.Add(tc.text)
	}
	for _, text := range ordinaryTexts {
		f.Add(text)
	}
	for _, s := range secrettest.Secrets() {
		f.Add(s.Text)
	}
	for _, text := range secrettest.Ordinary() {
		f.Add(text)
	}
	for _, text := range []string{
		"", "\n", "password=", "password:\"", "token = '", "://@", "x://:@y", "a://b:c@",
		"-----BEGIN PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\n", "Private-Lines: 1\n",
		"Authorization: Basic ", "Authorization: Basic Og==", "password: ********",
		"token=" + strings.Repeat("*", 40), "the password is", "pw for", "pw for a b c d e f g h is x",
		"machine\npassword", "password x", "12345:A", ":A", "MTzz.abcdef.", "key-", "secret=\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0",
		strings.Repeat("key", 200), strings.Repeat("password=", 50),
	} {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		hits := scan(text)
		for i, h := range hits {
			if h.lo < 0 || h.hi > len(text) || h.lo >= h.hi {
				t.Fatalf("hit %d span [%d,%d) outside text of %d bytes", i, h.lo, h.hi, len(text))
			}
			if i > 0 && h.lo < hits[i-1].hi {
				t.Errorf("hits %d and %d overlap or are out of order: [%d,%d) [%d,%d)",
					i-1, i, hits[i-1].lo, hits[i-1].hi, h.lo, h.hi)
			}
			if s := text[h.lo:h.hi]; len(s) >= 8 && strings.Contains(h.redacted, s) {
				t.Errorf("redacted %q contains the secret %q", h.redacted, s)
			}
			if h.redacted == "" {
				t.Errorf("hit %d has an empty redaction", i)
			}
		}
		findings := Scan(text)
		if len(findings) != len(hits) {
			t.Fatalf("Scan returned %d findings, scan %d hits", len(findings), len(hits))
		}
		for i, f := range findings {
			off, ok := offset(text, f.Line, f.Column)
			if !ok {
				t.Fatalf("finding %v points outside the text", f)
			}
			if off != hits[i].lo {
				t.Errorf("finding %v is at byte %d, its secret at %d", f, off, hits[i].lo)
			}
		}
	})
}

// offset converts a 1-based line and byte column to a byte offset, and
// reports whether it lies inside the text and inside that line.
func offset(text string, line, col int) (int, bool) {
	if line < 1 || col < 1 {
		return 0, false
	}
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return 0, false
		}
		start += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		end = start + i
	}
	off := start + col - 1
	return off, off < end
}
