package mira

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/mem"
)

// shop is a small project: a price type, its use, and a README.
var shop = map[string]string{
	"go.mod": "module example.com/shop\n\ngo 1.22\n",
	"price/price.go": `package price

// Price is an amount of money.
type Price struct{ cents int64 }

// Cents returns the amount in cents.
func (p Price) Cents() int64 { return p.cents }

// FromCents makes a price.
func FromCents(c int64) Price { return Price{cents: c} }
`,
	"cart/cart.go": `package cart

import "example.com/shop/price"

// Total adds the prices of a cart.
func Total(ps []price.Price) int64 {
	var t int64
	for _, p := range ps {
		t += p.Cents()
	}
	return t
}

func parse_line(s string) string { return s }
`,
	"README.md": "A shop.\n",
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func openCode(t *testing.T, root string, opt CodeOptions) *Code {
	t.Helper()
	opt.Root = root
	opt.Dir = filepath.Join(t.TempDir(), "codeindex")
	opt.Getenv = func(string) string { return "" }
	if opt.Warn == nil {
		opt.Warn = func(p string, err error) { t.Logf("warning: %s: %v", p, err) }
	}
	c, err := OpenCode(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCodeFreshBeforeEachRead: with or without a watcher, a read sees a
// definition added a moment before, and one removed is gone.
func TestCodeFreshBeforeEachRead(t *testing.T) {
	for _, watch := range []bool{false, true} {
		t.Run(map[bool]string{false: "stat", true: "watch"}[watch], func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, shop)
			c := openCode(t, root, CodeOptions{Watch: watch})
			if watch && c.watch == nil {
				t.Fatal("no watcher")
			}
			ctx := t.Context()
			if _, err := c.Card(ctx, "FromCents", false); err != nil {
				t.Fatalf("Card(FromCents): %v", err)
			}
			if _, err := c.Card(ctx, "Discount", false); err == nil {
				t.Fatal("Card(Discount) found a definition not written yet")
			}
			writeTree(t, root, map[string]string{"price/discount.go": "package price\n\n// Discount lowers a price.\nfunc Discount(p Price, pct int64) Price { return Price{p.cents * (100 - pct) / 100} }\n"})
			card, err := c.Card(ctx, "Discount", false)
			if err != nil {
				t.Fatalf("Card(Discount) after it was written: %v", err)
			}
			if card.Path != "price/discount.go" || card.Line != 4 {
				t.Errorf("Card(Discount) = %s:%d, want price/discount.go:4", card.Path, card.Line)
			}
			if err := os.Remove(filepath.Join(root, "price", "discount.go")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Card(ctx, "Discount", false); err == nil {
				t.Error("Card(Discount) still finds a definition whose file was removed")
			}
		})
	}
}

// TestCodeRefusesBadCounts: a count that asks for nothing is refused
// before the index is read, as an *InvalidError naming its field, and
// the index is not updated for it.
func TestCodeRefusesBadCounts(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := openCode(t, root, CodeOptions{})
	ctx := t.Context()
	for _, tc := range []struct {
		field string
		call  func() error
	}{
		{"k", func() error { _, err := c.Symbols(ctx, "price", 0); return err }},
		{"depth", func() error { _, err := c.Callers(ctx, "Cents", 0); return err }},
		{"depth", func() error { _, err := c.Callees(ctx, "Total", -1); return err }},
		{"budget", func() error { _, err := c.Map(ctx, 0); return err }},
		{"k", func() error { _, err := c.Touchpoints(ctx, CodeQuery{Text: "prices", K: -1}); return err }},
		{"budget", func() error { _, err := c.Touchpoints(ctx, CodeQuery{Text: "prices", Budget: -1}); return err }},
		{"text", func() error { _, err := c.Files(ctx, CodeQuery{Text: " \n"}); return err }},
		{"k", func() error { _, err := c.Cochange(ctx, "price/price.go", 0); return err }},
		{"k", func() error { _, err := c.Log(ctx, "price/price.go", 0); return err }},
	} {
		var inv *InvalidError
		if err := tc.call(); !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("error %v, want an *InvalidError about %s", err, tc.field)
		}
	}
	if n := c.updates.Load(); n != 0 {
		t.Errorf("%d updates for refused calls, want 0", n)
	}
	if _, err := c.Touchpoints(ctx, CodeQuery{Text: "prices"}); err != nil {
		t.Errorf("Touchpoints with K 0 (the default): %v", err)
	}
}

// TestCodeWatchSkipsIdleUpdates: with a watcher, reads that find nothing
// changed do not update the index; a change makes exactly the next read
// update it.
func TestCodeWatchSkipsIdleUpdates(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := openCode(t, root, CodeOptions{Watch: true})
	ctx := t.Context()
	read := func() {
		t.Helper()
		if _, err := c.Card(ctx, "Total", false); err != nil {
			t.Fatal(err)
		}
	}
	read()
	n := c.updates.Load()
	if n != 1 {
		t.Fatalf("%d updates for the first read, want 1", n)
	}
	for range 3 {
		read()
	}
	if got := c.updates.Load(); got != n {
		t.Errorf("%d updates after reads with nothing changed, want %d", got, n)
	}
	writeTree(t, root, map[string]string{"README.md": "A shop, changed.\n"})
	read()
	read()
	if got := c.updates.Load(); got != n+1 {
		t.Errorf("%d updates after a change and two reads, want %d", got, n+1)
	}
	// Without a watcher every read looks.
	s := openCode(t, root, CodeOptions{})
	for range 3 {
		if _, err := s.Card(ctx, "Total", false); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.updates.Load(); got != 3 {
		t.Errorf("%d updates for 3 reads without a watcher, want 3", got)
	}
}

// TestCodeWatchTakesChangedPaths: with a watcher, a read after a file
// was written, added or removed looks at those files alone; a new
// directory, a moved one, or a .gitignore that changed makes it look at
// every file, and a directory the .gitignore un-ignores is watched after.
func TestCodeWatchTakesChangedPaths(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	writeTree(t, root, map[string]string{".gitignore": "build/\n", "build/gen.go": "package build\n\nfunc Generated() {}\n"})
	c := openCode(t, root, CodeOptions{Watch: true})
	ctx := t.Context()
	card := func(name string) error {
		t.Helper()
		_, err := c.Card(ctx, name, false)
		return err
	}
	if err := card("Total"); err != nil {
		t.Fatal(err)
	}
	if got := c.fullUpdates.Load(); got != 1 {
		t.Fatalf("%d full updates for the first read, want 1", got)
	}
	steps := []struct {
		name string
		do   func()
		full bool
		find string // a definition the read must see
		gone string // one it must not
	}{
		{"edit a file", func() {
			writeTree(t, root, map[string]string{"price/price.go": shop["price/price.go"] + "\n// Zero is no money.\nfunc Zero() Price { return Price{} }\n"})
		}, false, "Zero", ""},
		{"add a file", func() {
			writeTree(t, root, map[string]string{"cart/tax.go": "package cart\n\n// Tax of a total.\nfunc Tax(t int64) int64 { return t / 5 }\n"})
		}, false, "Tax", ""},
		{"remove a file", func() { os.Remove(filepath.Join(root, "cart", "tax.go")) }, false, "Total", "Tax"},
		{"file in an ignored directory", func() {
			writeTree(t, root, map[string]string{"build/more.go": "package build\n\nfunc MoreGenerated() {}\n"})
		}, false, "Total", "MoreGenerated"},
		{"new directory", func() {
			writeTree(t, root, map[string]string{"ship/ship.go": "package ship\n\n// Ship a cart.\nfunc Ship() {}\n"})
		}, true, "Ship", ""},
		{"file in the new directory", func() {
			writeTree(t, root, map[string]string{"ship/ship.go": "package ship\n\n// Deliver a cart.\nfunc Deliver() {}\n"})
		}, false, "Deliver", "Ship"},
		{"moved directory", func() {
			if err := os.Rename(filepath.Join(root, "ship"), filepath.Join(root, "send")); err != nil {
				t.Fatal(err)
			}
		}, true, "Deliver", ""},
		{"file in the moved directory", func() {
			writeTree(t, root, map[string]string{"send/ship.go": "package ship\n\n// Post a cart.\nfunc Post() {}\n"})
		}, false, "Post", "Deliver"},
		{".gitignore changed", func() { writeTree(t, root, map[string]string{".gitignore": "dist/\n"}) }, true, "MoreGenerated", ""},
		{"file in the directory no longer ignored", func() {
			writeTree(t, root, map[string]string{"build/more.go": "package build\n\nfunc Regenerated() {}\n"})
		}, false, "Regenerated", "MoreGenerated"},
	}
	for _, s := range steps {
		before := c.fullUpdates.Load()
		s.do()
		if err := card(s.find); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
		if s.gone != "" && card(s.gone) == nil {
			t.Errorf("%s: %s still found", s.name, s.gone)
		}
		if full := c.fullUpdates.Load() > before; full != s.full {
			t.Errorf("%s: full update = %v, want %v", s.name, full, s.full)
		}
	}
}

// TestDistinctive: the words that may stand for a definition outside
// backticks.
func TestDistinctive(t *testing.T) {
	for w, want := range map[string]bool{
		"DetectProject": true, "parse_line": true, "Store.Head": true, "http::Client": true, "mem.DetectProject": true,
		"Price": false, "price": false, "the": false, "_private": false, "HTTP": false, "JSONDecoder": true,
	} {
		if got := distinctive(w); got != want {
			t.Errorf("distinctive(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestFindTargets: what the words of a memory point at in the shop.
func TestFindTargets(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	c := openCode(t, root, CodeOptions{})
	if _, err := c.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.go")
	writeTree(t, filepath.Dir(outside), map[string]string{"secret.go": "package x\n"})
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"prices are integers in cents", nil}, // plain words name nothing
		{"Total must never overflow: see cart/cart.go", []string{"cart/cart.go"}},
		{"the bug is at cart/cart.go:9, in the loop", []string{"cart/cart.go", "cart/cart.go#Total"}},
		{"FromCents() is the only way to make a Price.", []string{"price/price.go#FromCents"}},
		{"use `Total` for sums", []string{"cart/cart.go#Total"}},
		{"Price.Cents is in cents; so is price.FromCents", []string{"price/price.go#Cents", "price/price.go#FromCents"}},
		{"parse_line keeps spaces", []string{"cart/cart.go#parse_line"}},
		{"NoSuchThing and `nothing`", nil},
		{"see " + filepath.Join(root, "price", "price.go") + " and ../x/cart/cart.go and " + outside, []string{"price/price.go"}},
		{"see price/price.go#FromCents", []string{"price/price.go", "price/price.go#FromCents"}},
	} {
		got := c.links.findTargets(tc.text)
		slices.Sort(got)
		slices.Sort(tc.want)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("findTargets(%q): diff (-want +got)\n%s", tc.text, diff)
		}
	}
}

// TestCodeMemories: a memory that names code is listed on its card and
// raises it among the touchpoints, saying so; one that names nothing is
// not; a memory remembered after the first read is seen by the next.
func TestCodeMemories(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{
		{Kind: mem.KindDecision, Body: "Prices are integers in cents: `FromCents` is the only constructor"},
		{Kind: mem.KindFact, Body: "The shop has no database yet"},
	}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dec, fact := res.Items[0].Entry, res.Items[1].Entry
	c := openCode(t, root, CodeOptions{Memory: m})
	card, err := c.Card(ctx, "FromCents", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{dec.ID + ": decision: Prices are integers in cents: `FromCents` is the only constructor"}
	if diff := cmp.Diff(want, card.Memories); diff != "" {
		t.Errorf("Card(FromCents).Memories: diff (-want +got)\n%s", diff)
	}
	if card, err := c.Card(ctx, "Total", false); err != nil || len(card.Memories) != 0 {
		t.Errorf("Card(Total).Memories = %q, %v; want none", card.Memories, err)
	}
	for _, id := range []string{fact.ID} {
		if strings.Contains(strings.Join(card.Memories, "\n"), id) {
			t.Errorf("the fact naming no code is linked: %q", card.Memories)
		}
	}

	tps, err := c.Touchpoints(ctx, CodeQuery{Text: "make a price from cents", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tp := range tps {
		if tp.Name != "FromCents" {
			continue
		}
		found = true
		if !slices.Contains(tp.Why, "memory "+want[0]) {
			t.Errorf("touchpoint FromCents: Why = %q, want it to name the memory", tp.Why)
		}
	}
	if !found {
		t.Errorf("no touchpoint FromCents among %v", names(tps))
	}

	// Remembered after the first read: the scan is read again once the
	// store's head moves.
	res, err = m.Remember(ctx, []*mem.Entry{{Kind: mem.KindNote, Body: "`Total` is called on every page view"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	card, err = c.Card(ctx, "Total", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Memories) != 1 || !strings.HasPrefix(card.Memories[0], res.Items[0].Entry.ID+": note: ") {
		t.Errorf("Card(Total).Memories = %q after a note naming it", card.Memories)
	}
}

func names(tps []CodeTouchpoint) []string {
	var out []string
	for _, tp := range tps {
		out = append(out, tp.Path+"#"+tp.Name)
	}
	return out
}

// TestProjectRoot: a directory deep in a git repository belongs to the
// repository's root; MIRA_PROJECT does not move it.
func TestProjectRoot(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "a/b/c.go": "package b\n"})
	t.Setenv("MIRA_PROJECT", "elsewhere")
	if got := ProjectRoot(filepath.Join(root, "a", "b")); got != root {
		t.Errorf("ProjectRoot(a/b) = %s, want %s", got, root)
	}
}

// TestCodeMemoryBoostBounded: however many memories point at one
// definition, its boost stays at most that of one recalled memory, and
// its reasons name a few of them and count the rest.
func TestCodeMemoryBoostBounded(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, shop)
	m := open(t, false)
	ctx := t.Context()
	var es []*mem.Entry
	for i := range 30 {
		es = append(es, &mem.Entry{Kind: mem.KindNote, Body: fmt.Sprintf("note %d: `FromCents` makes prices", i)})
	}
	if _, err := m.Remember(ctx, es, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	c := openCode(t, root, CodeOptions{Memory: m})
	if err := c.fresh(ctx); err != nil {
		t.Fatal(err)
	}
	ls := c.links.find(ctx, "prices")
	for target, w := range ls.boost {
		if w > 1 {
			t.Errorf("boost of %s = %v, want at most 1", target, w)
		}
	}
	tps, err := c.Touchpoints(ctx, CodeQuery{Text: "make prices from cents", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range tps {
		if tp.Name != "FromCents" {
			continue
		}
		n := 0
		for _, w := range tp.Why {
			if strings.HasPrefix(w, "memory ") {
				n++
			}
		}
		if n > maxWhyMemories+1 {
			t.Errorf("touchpoint FromCents has %d memory reasons, want at most %d:\n%s", n, maxWhyMemories+1, strings.Join(tp.Why, "\n"))
		}
		if len(tp.Memories) != 30 {
			t.Errorf("touchpoint FromCents lists %d memories, want 30", len(tp.Memories))
		}
	}
}
