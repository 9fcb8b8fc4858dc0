package mira

import (
	"path/filepath"
	"strings"
	"testing"

	plan "github.com/miramem/mira/ctx"
)

// indexedShop is the shop project with a code index built.
func indexedShop(t *testing.T, m *Memory) *Code {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, shop)
	c := openCode(t, root, CodeOptions{Memory: m})
	if c.Indexed() {
		t.Fatal("an index never built is Indexed")
	}
	if _, err := c.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !c.Indexed() {
		t.Fatal("a built index is not Indexed")
	}
	return c
}

// Memory.Context takes the code map and the query's touchpoints from the
// project's index as the mode says, with the configuration's limits.
func TestContextCode(t *testing.T) {
	m := openHome(t, filepath.Join(t.TempDir(), "home"), &Config{}, false)
	c := indexedShop(t, m)
	ctx := t.Context()
	entries := func(p *plan.Plan, sec plan.Section) (in, out []plan.Entry) {
		for _, e := range p.Included {
			if e.Section == sec {
				in = append(in, e)
			}
		}
		for _, e := range p.Excluded {
			if e.Section == sec {
				out = append(out, e)
			}
		}
		return in, out
	}
	for _, mode := range []string{"off", "light", "heavy"} {
		p, err := m.Context(ctx, ContextRequest{Mode: mode, Query: "total of the cart prices", Code: c})
		if err != nil {
			t.Fatal(err)
		}
		maps, _ := entries(p, plan.SectionCodeMap)
		cards, _ := entries(p, plan.SectionCode)
		if mode == "off" {
			if len(maps)+len(cards) > 0 || strings.Contains(p.Prompt(), "## Code") {
				t.Errorf("off: code in the context:\n%s", p.Prompt())
			}
			continue
		}
		if len(maps) != 1 || len(cards) == 0 || cards[0].Path != "cart/cart.go" {
			t.Fatalf("%s: map %v, cards %+v\n%s", mode, maps, cards, p.Prompt())
		}
		want := map[string]string{"light": plan.FormThin, "heavy": plan.FormExcerpt}[mode]
		if cards[0].Form != want {
			t.Errorf("%s: the first card is %q, want %q", mode, cards[0].Form, want)
		}
	}
	// Heavy mode adds exemplars: the callers of the best touchpoints.
	tps := []CodeTouchpoint{{Card: CodeCard{Kind: "method", Name: "Cents", Parent: "Price", Path: "price/price.go", Line: 7}, Score: 1}}
	ex, err := c.exemplars(ctx, tps)
	if err != nil || len(ex) != 1 || ex[0].Code.Name != "Total" || !strings.HasPrefix(ex[0].Code.Why[0], "exemplar: calls Cents at cart/cart.go:") ||
		*ex[0].Record.Score != 0.5 || !ex[0].Auto {
		t.Errorf("exemplars of Price.Cents: %v %+v", err, ex)
	}
	// Without a query, the map alone; the configuration bounds the cards.
	p, err := m.Context(ctx, ContextRequest{Code: c})
	if err != nil {
		t.Fatal(err)
	}
	if maps, _ := entries(p, plan.SectionCodeMap); len(maps) != 1 || strings.Contains(p.Prompt(), "## Code for") {
		t.Errorf("no query: %s", p.Prompt())
	}
	m.cfg.Context.CodeBounds.Cards.Light = 1
	m.cfg.Context.CodeBounds.Map.Light = 1
	p, err = m.Context(ctx, ContextRequest{Query: "total of the cart prices", Code: c})
	if err != nil {
		t.Fatal(err)
	}
	in, out := entries(p, plan.SectionCode)
	if len(in) != 1 || len(out) == 0 || out[0].Reason != plan.ReasonMaxCode || p.Limits.CodeCards != 1 {
		t.Errorf("context.code.cards.light 1: in %+v, out %+v", in, out)
	}
	if maps, _ := entries(p, plan.SectionCodeMap); len(maps) != 0 {
		t.Errorf("context.code.map.light 1 token: the map is in: %+v", maps)
	}
}

// CodeIndexed tells a project with an index from one without, without
// making the index's directory.
func TestCodeIndexed(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	cache := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}
		return ""
	}
	if CodeIndexed(root, "", getenv) {
		t.Fatal("a project never indexed is indexed")
	}
	if matches, _ := filepath.Glob(filepath.Join(cache, "mira", "code", "*")); len(matches) != 0 {
		t.Fatalf("CodeIndexed made %v", matches)
	}
	c, err := OpenCode(t.Context(), CodeOptions{Root: root, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if CodeIndexed(root, "", getenv) {
		t.Fatal("an index opened but never built is indexed")
	}
	if _, err := c.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !CodeIndexed(root, "", getenv) || !CodeIndexed(root+"/.", "", getenv) {
		t.Error("a built index is not found")
	}
}

func TestConfigContextCode(t *testing.T) {
	cfg, err := ParseConfig([]byte("context:\n  code:\n    cards: {light: 3, heavy: 20}\n    lines: {heavy: 50}\n"))
	if err != nil || cfg.Context.CodeBounds.Cards.Light != 3 || cfg.Context.CodeBounds.Cards.Heavy != 20 || cfg.Context.CodeBounds.Lines.Heavy != 50 {
		t.Fatalf("ParseConfig = %+v, %v", cfg.Context.CodeBounds, err)
	}
	m := &Memory{cfg: cfg}
	if l := m.ContextLimits(plan.ModeHeavy); l.CodeCards != 20 || l.ExcerptLines != 50 || l.MapTokens != plan.ModeHeavy.Defaults().MapTokens {
		t.Errorf("heavy limits %+v", l)
	}
	_, err = ParseConfig([]byte("context:\n  code:\n    map:\n      light: -5\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "context.code.map.light") {
		t.Errorf("a negative map limit: %v", err)
	}
}
