package index

import (
	"strings"
	"testing"
)

// TestFilterDropsNoKind: a filter of kinds leaves out a document without
// a kind, even when it names every kind the others have.
func TestFilterDropsNoKind(t *testing.T) {
	f := newFake(t)
	generate(t, f, 300)
	f.writeFile(t, "entries/global/notes/20261001T000000Z__NOKIND.md", "id: NOKIND\nscope: global\n---\n"+vocabulary[3]+"\n", oldTime)
	ix := mustOpen(t, f, opts(nil))
	vq, err := ix.vectorQuery("anything")
	if err != nil {
		t.Fatal(err)
	}
	defer vq.release()
	q := Query{Text: vocabulary[3], Kinds: []string{"fact", "decision", "note", "preference", "turn"}}
	res, err := ix.lexical(q, 400, vq.side.vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res {
		if strings.Contains(h.Path, "NOKIND") {
			t.Errorf("the document of no kind passed a filter of kinds")
		}
	}
}
