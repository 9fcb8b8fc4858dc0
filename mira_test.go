package mira

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

func open(t *testing.T, warm bool) *Memory {
	t.Helper()
	m, err := Open(t.Context(), Options{Home: filepath.Join(t.TempDir(), "home"), Config: &Config{}, Index: index.ReaderOptions{Warm: warm},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestConcurrent: many goroutines of one warm Memory recall while others
// remember; every recall is answered, every memory committed once.
func TestConcurrent(t *testing.T) {
	m := open(t, true)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 30 {
		wg.Go(func() {
			if _, err := m.Recall(ctx, Query{Text: fmt.Sprintf("memory %d", i%5)}); err != nil {
				errs <- fmt.Errorf("recall %d: %w", i, err)
			}
		})
	}
	for i := range 8 {
		wg.Go(func() {
			_, err := m.Remember(ctx, []*mem.Entry{{Body: fmt.Sprintf("concurrent memory %d about caches", i)}}, RememberOptions{})
			if err != nil {
				errs <- fmt.Errorf("remember %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs, err := m.Recall(ctx, Query{Text: "concurrent memory caches", K: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Errorf("recall finds %d of the 8 memories", len(recs))
	}
	if log := gitOut(t, m.Root(), "log", "--oneline"); strings.Count(log, "concurrent memory") != 8 {
		t.Errorf("want 8 commits:\n%s", log)
	}
	gitOut(t, m.Root(), "fsck", "--strict")
	if st := gitOut(t, m.Root(), "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// TestWarmSeesHandEdit: a warm Memory answers with a file saved a moment
// ago, and drops a file removed by hand.
func TestWarmSeesHandEdit(t *testing.T) {
	m := open(t, true)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{{Body: "the cache is Redis"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Items[0].Entry
	if recs, err := m.Recall(ctx, Query{Text: "Redis"}); err != nil || len(recs) != 1 {
		t.Fatalf("recall = %v, %v", recs, err)
	}
	file := filepath.Join(m.Root(), e.Path)
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), "Redis", "Memcached", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := m.Recall(ctx, Query{Text: "Memcached"})
	if err != nil || len(recs) != 1 || recs[0].ID != e.ID {
		t.Fatalf("recall after the edit = %v, %v", recs, err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if recs, err := m.Recall(ctx, Query{Text: "Memcached"}); err != nil || len(recs) != 0 {
		t.Errorf("recall after the removal = %v, %v", recs, err)
	}
}

// TestRememberChecks: bad input is an InvalidError, refused before any
// write, and a dry run writes nothing.
func TestRememberChecks(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	for _, es := range [][]*mem.Entry{
		{{Body: ""}},
		{{Body: "x", Kind: "banana"}},
		{{Body: "x", Scope: "../etc"}},
		{{Body: "fine"}, {Body: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
	} {
		_, err := m.Remember(ctx, es, RememberOptions{})
		var inv *InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("Remember(%v) = %v, want an InvalidError", es[len(es)-1].Body, err)
		}
	}
	res, err := m.Remember(ctx, []*mem.Entry{{Body: "dry"}}, RememberOptions{DryRun: true})
	if err != nil || len(res.Ops) != 1 || res.Ops[0].Op != "add" || res.Commit != "" {
		t.Errorf("dry run = %+v, %v", res, err)
	}
	if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Errorf("refused and dry-run remembers made commits")
	}
}

// TestChecksNameTheField: a value outside its list is refused naming the
// field, so that a front end can name its own option for it.
func TestChecksNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		field string
	}{
		{"kind", Check([]*mem.Entry{{Body: "x", Kind: "banana"}}, RememberOptions{}), "kind"},
		{"role", Check([]*mem.Entry{{Body: "x", Kind: mem.KindTurn, Role: "robot"}}, RememberOptions{}), "role"},
		{"role of a note", Check([]*mem.Entry{{Body: "x", Role: "robot"}}, RememberOptions{}), "role"},
		{"pin", Check([]*mem.Entry{{Body: "x", Pin: "forever"}}, RememberOptions{}), "pin"},
		{"summarize scope", SummarizeOptions{Scopes: []string{"../etc"}}.Check(), "scope"},
		{"summarize max entries", SummarizeOptions{MaxEntries: -1}.Check(), "max_entries"},
		{"extract scope", ExtractRequest{Scope: "../etc"}.Check(""), "scope"},
		{"extract kind", ExtractRequest{Kind: mem.KindNote}.Check(""), "kind"},
	} {
		var inv *InvalidError
		if !errors.As(tc.err, &inv) || inv.Field != tc.field {
			t.Errorf("%s: error %v, want an InvalidError about %s", tc.name, tc.err, tc.field)
		}
	}
}

// TestReplacePinTurns covers replace, pin and the conversation's turns.
func TestReplacePinTurns(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindDecision, Body: "use MySQL"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := res.Items[0].Entry
	res, err = m.Remember(ctx, []*mem.Entry{{Body: "use PostgreSQL"}}, RememberOptions{Replace: old.ID})
	if err != nil {
		t.Fatal(err)
	}
	nw := res.Items[0].Entry
	if nw.Kind != mem.KindDecision || res.Replaced == nil || res.Replaced.ID != old.ID {
		t.Errorf("replace: new %+v, replaced %+v", nw, res.Replaced)
	}
	if _, err := m.Get(ctx, old.ID); err == nil {
		t.Errorf("Get of the replaced memory succeeded")
	}
	p, err := m.Pin(ctx, nw.ID, mem.PinSticky, zeroTime)
	if err != nil || p.Pin != mem.PinSticky {
		t.Fatalf("Pin = %+v, %v", p, err)
	}
	got, err := m.Get(ctx, nw.ID)
	if err != nil || got.Pin != mem.PinSticky || got.Body != "use PostgreSQL" {
		t.Errorf("Get after Pin = %+v, %v", got, err)
	}
	turns := []*mem.Entry{
		{Kind: mem.KindTurn, Role: "user", Scope: "chat", Body: "hello"},
		{Kind: mem.KindTurn, Role: "assistant", Scope: "chat", Body: "hi there"},
		{Kind: mem.KindTurn, Role: "user", Scope: "chat", Body: "bye"},
	}
	for _, tu := range turns {
		if _, err := m.Remember(ctx, []*mem.Entry{tu}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := m.Turns(ctx, "chat", 2)
	if err != nil || len(ts) != 2 || ts[0].Body != "hi there" || ts[1].Body != "bye" {
		t.Errorf("Turns(chat, 2) = %v, %v", ts, err)
	}
}

var zeroTime time.Time

// TestPrepare: a warm Memory's Prepare leaves the vectors read and kept
// for the first read; an unknown token encoding is an error that names it.
func TestPrepare(t *testing.T) {
	m := open(t, true)
	ctx := t.Context()
	if _, err := m.Remember(ctx, []*mem.Entry{{Body: "We chose PostgreSQL for JSONB"}, {Body: "The queue retries payments"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if m.ix.Keep().Loaded() {
		t.Fatal("vectors loaded before anything read them")
	}
	if err := m.Prepare(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if !m.ix.Keep().Loaded() {
		t.Error("Prepare left no vectors loaded")
	}
	if recs, err := m.Recall(ctx, Query{Text: "PostgreSQL"}); err != nil || len(recs) == 0 {
		t.Errorf("recall after Prepare: %v, %v", recs, err)
	}
	if err := m.Prepare(ctx, "no_such_encoding"); err == nil || !strings.Contains(err.Error(), "no_such_encoding") {
		t.Errorf("Prepare with an unknown encoding: %v", err)
	}
}
