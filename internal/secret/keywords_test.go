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
	testKeywordSet(t, []keyword{
		{text: "he", fold: true}, {text: "she", fold: true}, {text: "his", fold: true},
		{text: "hers", fold: true}, {text: "SK", fold: false}, {text: "sk-", fold: false},
		{text: "aaa", fold: true}, {text: "://", fold: false},
		// The ends of the alphabet, and capitals whose lower case no other
		// keyword holds.
		{text: "zA", fold: true}, {text: "Zq", fold: false},
	}, "", "ushers", "USHERS and his SHE", "task-SK sk- Sk-", "aaaaaa", "https://x://", "hehehe")
	// Keywords in capitals only: their lower case comes from folding.
	testKeywordSet(t, []keyword{{text: "QZ", fold: true}, {text: "AX", fold: true}, {text: "B9", fold: false}},
		"qz QZ qZ ax AX", "b9 B9")
}

func testKeywordSet(t *testing.T, kws []keyword, texts ...string) {
	t.Helper()
	var letters strings.Builder
	for _, kw := range kws {
		letters.WriteString(strings.ToLower(kw.text) + strings.ToUpper(kw.text))
	}
	ks := newKeywordSet(kws)
	for seed := uint64(0); seed < 200; seed++ {
		texts = append(texts, fake(letters.String()+"-:/ ?!", 64, seed))
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
			o := occurrence{kw.text, pos}
			if got[o] {
				t.Errorf("find(%q): %q at %d reported twice", text, kw.text, pos)
			}
			got[o] = true
		})
		want := naiveFind(kws, text)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(occurrence{})); diff != "" {
			t.Errorf("find(%q) diff (-want +got):\n%s", text, diff)
		}
	}
}

// A keyword set may have as many states as an entry of its table can
// name, 2^15-1.
func TestKeywordSetLargest(t *testing.T) {
	kw := strings.Repeat("ab", stateMask/2)
	ks := newKeywordSet([]keyword{{text: kw, fold: true}})
	n := 0
	ks.find("x"+strings.ToUpper(kw)+"x", func(k *keyword, pos int) {
		if pos != 1 {
			t.Errorf("found at %d, want 1", pos)
		}
		n++
	})
	if n != 1 || len(ks.out) != stateMask {
		t.Errorf("found %d times in a set of %d states, want once in %d", n, len(ks.out), stateMask)
	}
}
