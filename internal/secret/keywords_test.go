package secret

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type occurrence struct {
	kw  string
	pos int
}

// naiveFind is the reference for keywordSet.find: every keyword searched
// for separately.
func naiveFind(kws []keyword, text string) map[occurrence]bool {
	got := map[occurrence]bool{}
	hay := strings.ToLower(text) // ASCII only, so offsets are kept
	for _, kw := range kws {
		for off := 0; ; {
			var i int
			if kw.fold {
				i = strings.Index(hay[off:], strings.ToLower(kw.text))
			} else {
				i = strings.Index(text[off:], kw.text)
			}
			if i < 0 {
				break
			}
			got[occurrence{kw.text, off + i}] = true
			off += i + 1
		}
	}
	return got
}

func TestKeywordSet(t *testing.T) {
	kws := []keyword{
		{text: "he", fold: true}, {text: "she", fold: true}, {text: "his", fold: true},
		{text: "hers", fold: true}, {text: "SK", fold: false}, {text: "sk-", fold: false},
		{text: "aaa", fold: true}, {text: "://", fold: false},
	}
	ks := newKeywordSet(kws)
	texts := []string{
		"", "ushers", "USHERS and his SHE", "task-SK sk- Sk-", "aaaaaa", "https://x://", "hehehe",
	}
	for seed := uint64(0); seed < 200; seed++ {
		texts = append(texts, fake("hersHERSaSk-:/ ", 64, seed))
	}
	for _, text := range texts {
		got := map[occurrence]bool{}
		last := -1
		ks.find(text, func(kw *keyword, pos int) {
			if end := pos + len(kw.text); end < last {
				t.Errorf("find(%q): %q at %d reported after an occurrence ending at %d", text, kw.text, pos, last)
			} else {
				last = end
			}
			got[occurrence{kw.text, pos}] = true
		})
		want := naiveFind(kws, text)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(occurrence{})); diff != "" {
			t.Errorf("find(%q) diff (-want +got):\n%s", text, diff)
		}
	}
}
