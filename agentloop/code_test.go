package agentloop

import (
	"slices"
	"testing"
)

// TestPathWords: words with a slash or a file extension are paths, with
// their :line and trailing punctuation cut; URLs, versions-like words
// without an extension, and plain words are not.
func TestPathWords(t *testing.T) {
	got := pathWords(`see cmd/shop/main.go:5, then "billing/export.go". Also README.md and go.mod; https://example.com/x isn't; nor plain words, nor v1.`)
	want := []string{"cmd/shop/main.go", "billing/export.go", "README.md", "go.mod"}
	if !slices.Equal(got, want) {
		t.Errorf("pathWords = %q, want %q", got, want)
	}
}
