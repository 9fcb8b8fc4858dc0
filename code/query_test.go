package code

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSymbols(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	hits := ix.Symbols("Greet", 5)
	if len(hits) == 0 || hits[0].Name != "Greet" || hits[0].Path != "util/util.go" || !strings.HasPrefix(hits[0].Snippet, "func Greet") {
		t.Fatalf("Symbols(Greet) = %+v", hits)
	}
	if hits := ix.Symbols("helper", 5); len(hits) < 2 {
		t.Errorf("Symbols(helper) = %+v, want the Go and the Python one", hits)
	}
	if hits := ix.Symbols("Vendored", 5); len(hits) != 0 {
		t.Errorf("vendored code found: %+v", hits)
	}
}

func TestFilesAndTouchpoints(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)

	fh := ix.Files(Query{Text: "plain notes about greeting", Explain: true})
	if len(fh) == 0 || !slices.ContainsFunc(fh, func(h FileHit) bool { return h.Path == "notes.txt" }) {
		t.Errorf("Files found no notes.txt: %+v", fh)
	}
	for _, h := range fh {
		if len(h.Why) == 0 || h.Stale {
			t.Errorf("file hit %+v: want a reason, not stale", h)
		}
	}

	tps := ix.Touchpoints(Query{Text: "greet a name loudly", K: 6, Explain: true})
	if len(tps) == 0 || len(tps) > 6 {
		t.Fatalf("%d touchpoints, want 1 to 6", len(tps))
	}
	var greet *Touchpoint
	for i := range tps {
		if tps[i].Name == "Greet" {
			greet = &tps[i]
		}
		if len(tps[i].Why) == 0 {
			t.Errorf("touchpoint %s has no reason", tps[i].Name)
		}
		if n := strings.Count(tps[i].Excerpt, "\n") + 1; n > excerptLines {
			t.Errorf("excerpt of %s has %d lines", tps[i].Name, n)
		}
	}
	if greet == nil {
		t.Fatalf("Greet not among %+v", tps)
	}
	if !strings.Contains(greet.Excerpt, "// Greet says hello to name.") || !strings.Contains(greet.Excerpt, "return strings.ToUpper(name)") {
		t.Errorf("excerpt of Greet: %q", greet.Excerpt)
	}
	if greet.Signature == "" || greet.Doc == "" || greet.Module != "example.com/demo/util" {
		t.Errorf("card of Greet: %+v", greet.Card)
	}

	// A budget bounds what the cards cost.
	count := func(s string) int { return len(strings.Fields(s)) }
	small := ix.Touchpoints(Query{Text: "greet a name loudly", Budget: 30, Count: count})
	used := 0
	for _, tp := range small {
		used += count(touchText(tp))
	}
	if len(small) == 0 || used > 30 {
		t.Errorf("under a budget of 30: %d touchpoints costing %d", len(small), used)
	}

	// A memory pointing at a definition lifts it.
	plain := ix.Touchpoints(Query{Text: "run the application", K: 12})
	boosted := ix.Touchpoints(Query{Text: "run the application", K: 12, Boost: map[string]float64{"web/app.js#render": 1}, Explain: true})
	pos := func(tps []Touchpoint) int {
		return slices.IndexFunc(tps, func(tp Touchpoint) bool { return tp.Path == "web/app.js" })
	}
	if pb, pp := pos(boosted), pos(plain); pb < 0 || (pp >= 0 && pb > pp) {
		t.Errorf("boost did not lift web/app.js: at %d boosted, %d plain", pb, pp)
	}
}

func TestTouchpointsFromCochange(t *testing.T) {
	root := project(t)
	git(t, root, nil, "init", "-q", "-b", "main")
	commitAs(t, root, "Ann", "2026-01-01T10:00:00Z", "first", nil)
	for i, day := range []string{"02", "03", "04"} {
		commitAs(t, root, "Ann", "2026-01-"+day+"T10:00:00Z", "pair", map[string]string{
			"notes.txt": "plain notes about greeting " + strings.Repeat("x", i+1) + "\n",
			"py/app.py": "class App:\n    \"\"\"An application.\"\"\"\n\n    def run(self):\n        helper()\n\n\ndef helper():\n    \"\"\"Help.\"\"\"\n    return " + string(rune('1'+i)) + "\n",
		})
	}
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	fh := ix.Files(Query{Text: "zzzz unrelated words", Files: []string{"notes.txt"}, Explain: true})
	i := slices.IndexFunc(fh, func(h FileHit) bool { return h.Path == "py/app.py" })
	if i < 0 {
		t.Fatalf("co-change partner of notes.txt not found: %+v", fh)
	}
	if !slices.ContainsFunc(fh[i].Why, func(s string) bool { return strings.Contains(s, "changed with notes.txt") }) {
		t.Errorf("why: %q", fh[i].Why)
	}
}

func TestStaleFileHit(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	p := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(p, []byte("plain notes about greeting, edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	fh := ix.Files(Query{Text: "plain notes about greeting"})
	i := slices.IndexFunc(fh, func(h FileHit) bool { return h.Path == "notes.txt" })
	if i < 0 || !fh[i].Stale {
		t.Errorf("edited file not reported stale: %+v", fh)
	}
}
