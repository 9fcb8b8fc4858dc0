package summarize

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/mem"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		tokens int
		want   Detail
	}{
		{0, DetailNone}, {99, DetailNone},
		{100, DetailBrief}, {499, DetailBrief},
		{500, DetailStandard}, {2999, DetailStandard},
		{3000, DetailDetailed}, {15000, DetailDetailed},
		{15001, DetailHierarchical}, {1_000_000, DetailHierarchical},
	} {
		if got := Choose(tc.tokens); got != tc.want {
			t.Errorf("Choose(%d) = %v, want %v", tc.tokens, got, tc.want)
		}
	}
}

// TestLevels: the material's size decides the detail and the files
// written, and every summary's front matter says what it covers.
func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		tokens     int
		detail     Detail
		l1, l2, l3 int
	}{
		{99, DetailNone, 0, 0, 0},
		{100, DetailBrief, 1, 0, 0},
		{499, DetailBrief, 1, 0, 0},
		{500, DetailStandard, 1, 0, 0},
		{2999, DetailStandard, 1, 0, 0},
		{3000, DetailDetailed, 1, 0, 0},
		{9000, DetailDetailed, 3, 0, 1},
		{15000, DetailDetailed, 5, 0, 1},
		{15001, DetailHierarchical, 6, 2, 1},
		{31000, DetailHierarchical, 11, 3, 1},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.detail, tc.tokens), func(t *testing.T) {
			st, _ := testStore(t)
			rng := rand.New(rand.NewPCG(uint64(tc.tokens), 7))
			turns := add(t, st, conversation(rng, "conv", tc.tokens, t0.Add(-time.Hour))...)
			before := head(t, st)
			res, err := Run(context.Background(), st, []string{"conv"}, Options{Count: wordCount})
			if err != nil {
				t.Fatal(err)
			}
			got := byLevel(t, st, "conv")
			if g, w := [3]int{len(got["L1"]), len(got["L2"]), len(got["L3"])}, [3]int{tc.l1, tc.l2, tc.l3}; g != w {
				t.Fatalf("%d tokens: summaries %v, want %v", tc.tokens, g, w)
			}
			if tc.l1 == 0 {
				if res.Commit != "" || head(t, st) != before {
					t.Errorf("no summary, but a commit was made")
				}
				return
			}
			if len(res.Scopes) != 1 || res.Scopes[0].Detail != tc.detail || res.Scopes[0].InputTokens != tc.tokens {
				t.Errorf("result scopes = %+v, want detail %v, %d input tokens", res.Scopes, tc.detail, tc.tokens)
			}
			// L1 summaries cover every turn once, in order.
			var covered []string
			for _, s := range got["L1"] {
				covered = append(covered, covers(s)...)
			}
			var ids []string
			for _, e := range turns {
				ids = append(ids, e.ID)
			}
			if diff := cmp.Diff(ids, covered); diff != "" {
				t.Errorf("L1 covers (-want +got):\n%s", diff)
			}
			for lvl, ss := range got {
				for _, s := range ss {
					checkSummary(t, st, s, lvl, tc.detail)
				}
			}
			for _, s := range got["L2"] {
				for _, id := range covers(s) {
					if !slices.ContainsFunc(got["L1"], func(e *mem.Entry) bool { return e.ID == id }) {
						t.Errorf("L2 %s covers %s, not an L1", s.ID, id)
					}
				}
			}
			if tc.l3 == 1 {
				l3 := got["L3"][0]
				top := got["L1"]
				if tc.l2 > 0 {
					top = got["L2"]
				}
				var want []string
				for _, s := range top {
					want = append(want, s.ID)
				}
				if diff := cmp.Diff(want, covers(l3)); diff != "" {
					t.Errorf("L3 covers (-want +got):\n%s", diff)
				}
				if n := wordCount(l3.Body); n > DefaultRollingTokens {
					t.Errorf("L3 has %d tokens, over the %d cap", n, DefaultRollingTokens)
				}
			}
			if !coversUntil(got["L1"][len(got["L1"])-1]).Equal(turns[len(turns)-1].CreatedAt) {
				t.Errorf("last L1 covers_until = %v, want %v", coversUntil(got["L1"][len(got["L1"])-1]), turns[len(turns)-1].CreatedAt)
			}
			if msg := gitOut(t, st.Root, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Model: extractive") || !strings.HasPrefix(msg, "summarize: conv: ") {
				t.Errorf("commit message:\n%s", msg)
			}
			if out := gitOut(t, st.Root, "status", "--porcelain"); out != "" {
				t.Errorf("git status:\n%s", out)
			}
		})
	}
}

// checkSummary checks a summary's place and front matter on disk.
func checkSummary(t *testing.T, st *mem.Store, s *mem.Entry, level string, detail Detail) {
	t.Helper()
	if dir := filepath.Dir(s.Path); dir != "entries/conv/summaries/"+level {
		t.Errorf("%s is in %s", s.ID, dir)
	}
	data, err := os.ReadFile(filepath.Join(st.Root, s.Path))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"kind: summary", "level: " + level, "source: summarize", "model: extractive", "detail: " + detail.String(), "covers:", "covers_from: ", "covers_until: ", "input_tokens: ", "output_tokens: "} {
		if !strings.Contains(text, want) {
			t.Errorf("%s front matter lacks %q:\n%s", s.Path, want, text)
		}
	}
	f := s.Fields()
	in, _ := f[fieldInputTokens].(int)
	out, _ := f[fieldOutputTokens].(int)
	if out != wordCount(s.Body) || in <= 0 {
		t.Errorf("%s: input_tokens %v, output_tokens %v (body has %d)", s.ID, f[fieldInputTokens], f[fieldOutputTokens], wordCount(s.Body))
	}
	if out > in && level != "L3" {
		t.Errorf("%s: summary (%d tokens) longer than its input (%d)", s.ID, out, in)
	}
}

// TestNoGap: over many runs with random batches of new turns (some
// arriving with old timestamps, some forgotten, some runs too small to
// summarize, eviction on), every live turn is covered by exactly one live
// L1 or is in the buffer, the L3 folds every L1, and State shows it all.
func TestNoGap(t *testing.T) {
	st, clock := testStore(t)
	rng := rand.New(rand.NewPCG(42, 1))
	opt := Options{Count: wordCount, ChunkTokens: 300, RollingTokens: 200, MaxEntries: 150}
	scope := "agent"
	var all []*mem.Entry
	seen := map[string]int{}
	runs := 60
	if testing.Short() {
		runs = 20
	}
	for run := range runs {
		// A batch of new turns: from none to several chunks' worth.
		size := []int{0, 40, 90, 150, 400, 900, 2000}[rng.IntN(7)]
		if rng.IntN(12) == 0 {
			size = []int{5000, 16000}[rng.IntN(2)]
		}
		*clock = clock.Add(time.Duration(1+rng.IntN(3)) * time.Minute)
		if size > 0 {
			batch := conversation(rng, scope, size, *clock)
			if rng.IntN(5) == 0 {
				// an import: an old turn, below the watermark
				batch = append(batch, turn(scope, "user", "Imported note about the legacy billing system. "+sentences(rng, 12), t0.Add(-48*time.Hour)))
			}
			all = append(all, add(t, st, batch...)...)
			*clock = clock.Add(time.Duration(len(batch)) * time.Second)
		}
		if rng.IntN(8) == 0 && len(all) > 0 {
			forgetOne(t, st, scope, rng)
		}
		res, err := Run(context.Background(), st, nil, opt)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for _, r := range res.Scopes {
			seen[r.Detail.String()]++
			seen["evicted"] += len(r.Evicted)
			for _, s := range r.Summaries {
				seen[s.Level]++
			}
		}
		checkNoGap(t, st, scope, opt)
		if t.Failed() {
			t.Fatalf("after run %d", run)
		}
	}
	for _, k := range []string{"brief", "standard", "L1", "L3", "evicted"} {
		if seen[k] == 0 {
			t.Errorf("no run exercised %s: %v", k, seen)
		}
	}
	if !testing.Short() && (seen["L2"] == 0 || seen["detailed"] == 0) {
		t.Errorf("no run exercised L2 or detailed: %v", seen)
	}
	if out := gitOut(t, st.Root, "status", "--porcelain"); out != "" {
		t.Errorf("git status:\n%s", out)
	}
	gitOut(t, st.Root, "fsck", "--full", "--strict")
}

// forgetOne tombstones a random live turn, as mira-forget would.
func forgetOne(t *testing.T, st *mem.Store, scope string, rng *rand.Rand) {
	t.Helper()
	d, err := loadScope(st, scope, DefaultKinds, nil)
	if err != nil || len(d.material) == 0 {
		return
	}
	l, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	tx := st.Begin(false)
	if err := tx.Tombstone(d.material[rng.IntN(len(d.material))], "forgotten", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("forget: test"); err != nil {
		t.Fatal(err)
	}
}

func checkNoGap(t *testing.T, st *mem.Store, scope string, opt Options) {
	t.Helper()
	d, err := loadScope(st, scope, DefaultKinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	state, err := Load(st, scope, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The cheap reader of the summaries directory agrees with Load.
	top, err := Summaries(st, scope, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(top, state.Summaries, func(a, b *mem.Entry) bool { return a.ID == b.ID }) {
		t.Errorf("Summaries = %v, Load's = %v", ids(top), ids(state.Summaries))
	}
	// Each live turn: in exactly one L1 or in the buffer, never both.
	inL1 := map[string]int{}
	for _, s := range d.summaries {
		if s.Level == "L1" {
			for _, id := range covers(s) {
				inL1[id]++
			}
		}
	}
	inBuf := map[string]bool{}
	for _, b := range state.Buffer {
		inBuf[b.ID] = true
	}
	for _, m := range d.material {
		switch {
		case inL1[m.ID] > 1:
			t.Errorf("turn %s is covered by %d L1 summaries", m.ID, inL1[m.ID])
		case inL1[m.ID] == 1 && inBuf[m.ID]:
			t.Errorf("turn %s is both covered and in the buffer", m.ID)
		case inL1[m.ID] == 0 && !inBuf[m.ID]:
			t.Errorf("turn %s is neither covered nor in the buffer (gap)", m.ID)
		}
	}
	// Apart from imports with old times, the buffer is newer than the
	// watermark.
	for _, b := range state.Buffer {
		if !strings.HasPrefix(b.Body, "Imported") && !b.CreatedAt.After(state.Watermark) {
			t.Errorf("buffer turn %s (%v) is not newer than the watermark %v", b.ID, b.CreatedAt, state.Watermark)
		}
	}
	// The run summarized everything it could: what is left is too small.
	tokens := 0
	for _, b := range state.Buffer {
		tokens += wordCount(labelOf(b) + ": " + b.Body)
	}
	if Choose(tokens) != DetailNone {
		t.Errorf("buffer of %d tokens left after a run", tokens)
	}
	// One live L3 at most, and it is what State shows.
	l3s := 0
	for _, s := range d.summaries {
		if s.Level == "L3" {
			l3s++
		}
	}
	if l3s > 1 {
		t.Errorf("%d live L3 summaries", l3s)
	}
	if len(state.Summaries) > 1 {
		t.Errorf("State has %d top-level summaries, want 1", len(state.Summaries))
	}
	if l3s == 1 && (state.Latest == nil || state.Latest.Level != "L3") {
		t.Errorf("State.Latest = %v, want the L3", state.Latest)
	}
	// The L3, through the L3s it replaced, folds every live L1 (directly or
	// through an L2).
	if l3 := d.latestL3(); l3 != nil {
		reach := reachable(t, st, scope, l3)
		for _, s := range d.summaries {
			if s.Level == "L1" && !reach[s.ID] {
				t.Errorf("L1 %s is not folded into the L3", s.ID)
			}
		}
	} else {
		n := 0
		for _, s := range d.summaries {
			if s.Level == "L1" {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d L1 summaries and no L3", n)
		}
	}
	// Eviction keeps the scope within its limit when it can.
	if d.live > opt.MaxEntries {
		for _, m := range d.material {
			if inL1[m.ID] == 1 && m.Pin == "" {
				t.Errorf("scope has %d entries (limit %d) but covered turn %s was not evicted", d.live, opt.MaxEntries, m.ID)
				break
			}
		}
	}
}

// reachable returns the ids a summary covers, transitively, following
// covers into replaced (tombstoned) summaries.
func reachable(t *testing.T, st *mem.Store, scope string, from *mem.Entry) map[string]bool {
	t.Helper()
	byID := map[string]*mem.Entry{}
	for _, dir := range []string{"summaries", "deleted/summaries"} {
		for _, lvl := range mem.Levels {
			files, _ := filepath.Glob(filepath.Join(st.Root, "entries", scope, dir, lvl, "*.md"))
			for _, f := range files {
				rel, _ := filepath.Rel(st.Root, f)
				e, err := st.Read(filepath.ToSlash(rel))
				if err != nil {
					t.Fatal(err)
				}
				byID[e.ID] = e
			}
		}
	}
	seen := map[string]bool{}
	var walk func(e *mem.Entry)
	walk = func(e *mem.Entry) {
		for _, id := range covers(e) {
			if seen[id] {
				continue
			}
			seen[id] = true
			if c := byID[id]; c != nil {
				walk(c)
			}
		}
	}
	walk(from)
	return seen
}

// TestIdempotent: a second run with nothing new changes nothing and makes
// no commit; new material afterwards is summarized on its own.
func TestIdempotent(t *testing.T) {
	st, clock := testStore(t)
	rng := rand.New(rand.NewPCG(3, 3))
	add(t, st, conversation(rng, "global", 700, t0)...)
	if _, err := Run(context.Background(), st, nil, Options{Count: wordCount}); err != nil {
		t.Fatal(err)
	}
	h := head(t, st)
	for range 2 {
		res, err := Run(context.Background(), st, nil, Options{Count: wordCount})
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit != "" || len(res.Ops) != 0 || len(res.Scopes) != 0 || head(t, st) != h {
			t.Fatalf("second run did something: %+v", res)
		}
	}
	*clock = clock.Add(time.Hour)
	newer := add(t, st, conversation(rng, "global", 200, *clock)...)
	res, err := Run(context.Background(), st, nil, Options{Count: wordCount})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scopes) != 1 || res.Scopes[0].InputTokens != 200 || res.Scopes[0].Detail != DetailBrief {
		t.Fatalf("third run: %+v", res.Scopes)
	}
	lv := byLevel(t, st, "global")
	if levelsString(lv) != "L1=2 L2=0 L3=1" {
		t.Fatalf("summaries: %s", levelsString(lv))
	}
	if got := covers(lv["L1"][1]); len(got) != len(newer) {
		t.Errorf("second L1 covers %d turns, want the %d new ones", len(got), len(newer))
	}
	if n := strings.Count(gitOut(t, st.Root, "log", "--format=%s"), "summarize:"); n != 2 {
		t.Errorf("%d summarize commits, want 2", n)
	}
}

// TestRollingReplacesL3: each run's L3 replaces the previous one, which
// moves to deleted/ with replaced_by, and covers it.
func TestRollingReplacesL3(t *testing.T) {
	st, clock := testStore(t)
	rng := rand.New(rand.NewPCG(5, 5))
	var l3s []string
	for i := range 4 {
		*clock = clock.Add(time.Hour)
		add(t, st, conversation(rng, "global", 300, *clock)...)
		res, err := Run(context.Background(), st, nil, Options{Count: wordCount})
		if err != nil {
			t.Fatal(err)
		}
		lv := byLevel(t, st, "global")
		if i == 0 {
			if len(lv["L3"]) != 0 {
				t.Fatalf("first run wrote an L3 over a single L1")
			}
			continue
		}
		if len(lv["L3"]) != 1 {
			t.Fatalf("run %d: %d live L3", i, len(lv["L3"]))
		}
		l3 := lv["L3"][0]
		cov := covers(l3)
		if i == 1 {
			if len(cov) != 2 || cov[0] != lv["L1"][0].ID || cov[1] != lv["L1"][1].ID {
				t.Errorf("first L3 covers %v, want both L1s", cov)
			}
		} else {
			if cov[0] != l3s[len(l3s)-1] {
				t.Errorf("L3 covers %v, want the previous L3 %s first", cov, l3s[len(l3s)-1])
			}
			if res.Scopes[0].Replaced == nil || res.Scopes[0].Replaced.ID != l3s[len(l3s)-1] {
				t.Errorf("Replaced = %v", res.Scopes[0].Replaced)
			}
			old, err := filepath.Glob(filepath.Join(st.Root, "entries/global/deleted/summaries/L3/*__"+l3s[len(l3s)-1]+".md"))
			if err != nil || len(old) != 1 {
				t.Fatalf("old L3 not under deleted/: %v", old)
			}
			data, _ := os.ReadFile(old[0])
			if !strings.Contains(string(data), "replaced_by: "+l3.ID) {
				t.Errorf("old L3 lacks replaced_by:\n%s", data)
			}
		}
		l3s = append(l3s, l3.ID)
		// Summaries are created in order: the L3 is the newest.
		for _, s := range append(lv["L1"], lv["L2"]...) {
			if byKey(s, l3) >= 0 {
				t.Errorf("summary %s is not older than the L3 %s", s.ID, l3.ID)
			}
		}
	}
}

// TestExtractiveDeterministic: two stores with the same material get
// byte-identical summary bodies, offline.
func TestExtractiveDeterministic(t *testing.T) {
	var bodies [2][]string
	for i := range 2 {
		st, _ := testStore(t)
		rng := rand.New(rand.NewPCG(9, 9))
		add(t, st, conversation(rng, "global", 8000, t0)...)
		res, err := Run(context.Background(), st, nil, Options{Count: wordCount})
		if err != nil {
			t.Fatal(err)
		}
		if res.Model != Extractive {
			t.Errorf("Model = %q, want %q", res.Model, Extractive)
		}
		for _, s := range res.Scopes[0].Summaries {
			bodies[i] = append(bodies[i], s.Level+"\n"+s.Body)
		}
	}
	if diff := cmp.Diff(bodies[0], bodies[1]); diff != "" {
		t.Errorf("summaries differ between identical runs (-first +second):\n%s", diff)
	}
}

// TestEviction: a scope over its limit ends at the limit; only the oldest
// covered, unpinned turns and facts go, to deleted/ with reason evicted;
// summaries, pins and other kinds stay; history keeps the evicted text.
func TestEviction(t *testing.T) {
	st, clock := testStore(t)
	rng := rand.New(rand.NewPCG(11, 11))
	var es []*mem.Entry
	fact := &mem.Entry{Kind: mem.KindFact, Scope: "proj", Body: "The staging database is called zebrafish.", CreatedAt: t0.Add(-time.Hour)}
	pinned := &mem.Entry{Kind: mem.KindFact, Scope: "proj", Body: "Always run the linter before pushing.", Pin: mem.PinSticky, CreatedAt: t0.Add(-time.Hour + time.Second)}
	decision := &mem.Entry{Kind: mem.KindDecision, Scope: "proj", Body: "We chose PostgreSQL.", CreatedAt: t0.Add(-2 * time.Hour)}
	es = append(es, fact, pinned, decision)
	es = append(es, conversation(rng, "proj", 2000, t0)...)
	add(t, st, es...)
	total := len(es)
	const limit = 30
	*clock = clock.Add(time.Hour)
	res, err := Run(context.Background(), st, nil, Options{Count: wordCount, MaxEntries: limit})
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadScope(st, "proj", DefaultKinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.live != limit {
		t.Errorf("%d live entries after eviction, want %d", d.live, limit)
	}
	summaries := len(res.Scopes[0].Summaries)
	if got, want := len(res.Scopes[0].Evicted), total+summaries-limit; got != want {
		t.Errorf("evicted %d, want %d", got, want)
	}
	if res.Scopes[0].Evicted[0].ID != fact.ID {
		t.Errorf("first evicted = %s, want the oldest fact", res.Scopes[0].Evicted[0].ID)
	}
	for _, e := range res.Scopes[0].Evicted {
		if e.ID == pinned.ID || e.ID == decision.ID || e.Kind == mem.KindSummary {
			t.Errorf("evicted %s (%s)", e.ID, e.Kind)
		}
		data, err := os.ReadFile(filepath.Join(st.Root, e.Path))
		if err != nil || !strings.Contains(e.Path, "/deleted/") || !strings.Contains(string(data), "deleted_reason: evicted") {
			t.Errorf("evicted %s: %s %v", e.ID, e.Path, err)
		}
	}
	if got := len(byLevel(t, st, "proj")["L1"]); got != summaries {
		t.Errorf("%d L1 summaries after eviction, want %d", got, summaries)
	}
	if log := gitOut(t, st.Root, "log", "--format=%s", "-S", "zebrafish", "--", "entries/proj"); !strings.Contains(log, "test: add") {
		t.Errorf("git log -S zebrafish:\n%s", log)
	}
	// Uncovered turns are never evicted: a new batch over the limit stays.
	*clock = clock.Add(time.Hour)
	add(t, st, conversation(rng, "proj", 60, *clock)...)
	res, err = Run(context.Background(), st, nil, Options{Count: wordCount, MaxEntries: limit})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Scopes {
		for _, e := range r.Evicted {
			if e.CreatedAt.After(t0.Add(time.Hour)) {
				t.Errorf("evicted an uncovered turn %s", e.ID)
			}
		}
	}
}

// fakeModel answers every request and records the prompts.
type fakeModel struct {
	name  string
	calls []string
	reply func(system, user string) (string, error)
}

func (f *fakeModel) Model() string { return f.name }

func (f *fakeModel) Complete(_ context.Context, system, user string) (string, error) {
	f.calls = append(f.calls, system+"\n"+user)
	return f.reply(system, user)
}

// TestModel: with a model, its replies are the summaries, its name is
// recorded, and the prompts carry the material and the previous summary.
func TestModel(t *testing.T) {
	st, clock := testStore(t)
	n := 0
	m := &fakeModel{name: "gpt-test", reply: func(system, user string) (string, error) {
		n++
		return "```\nSummary: reply " + string(rune('A'+n-1)) + "\n```", nil
	}}
	add(t, st, turn("global", "user", "We should move the cache to Redis because memcached lacks persistence and we restart often.", t0),
		turn("global", "assistant", "Agreed; I will write the migration plan for Redis with persistence enabled and AOF on.", t0.Add(time.Second)))
	count := func(s string) int { return 4 * wordCount(s) }
	res, err := Run(context.Background(), st, nil, Options{Model: m, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 1 || !strings.Contains(m.calls[0], "user: We should move the cache to Redis") || !strings.Contains(m.calls[0], "[2026-11-21 10:00] ") {
		t.Fatalf("calls = %q", m.calls)
	}
	s := res.Scopes[0].Summaries[0]
	if s.Body != "reply A" {
		t.Errorf("L1 body = %q, want the model's reply without fence and heading", s.Body)
	}
	if s.Extra[fieldModel] != "gpt-test" || res.Model != "gpt-test" {
		t.Errorf("model = %v / %v", s.Extra[fieldModel], res.Model)
	}
	if msg := gitOut(t, st.Root, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mira-Model: gpt-test") {
		t.Errorf("commit message:\n%s", msg)
	}
	*clock = clock.Add(time.Hour)
	add(t, st, turn("global", "user", "Also the Redis instance must live in eu-west-1 for the data residency rules we agreed with legal.", *clock),
		turn("global", "assistant", "Noted, eu-west-1 it is; I updated the Terraform module and the runbook accordingly today.", clock.Add(time.Second)))
	if _, err := Run(context.Background(), st, nil, Options{Model: m, Count: count}); err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 3 {
		t.Fatalf("%d calls, want L1 then L3", len(m.calls))
	}
	if !strings.Contains(m.calls[2], "running summary") || !strings.Contains(m.calls[2], "reply A") || !strings.Contains(m.calls[2], "reply B") {
		t.Errorf("L3 prompt:\n%s", m.calls[2])
	}
	st2, err := Load(st, "global", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Latest == nil || st2.Latest.Body != "reply C" || len(st2.Buffer) != 0 || !st2.Watermark.Equal(clock.Add(time.Second)) {
		t.Errorf("State = latest %v, buffer %d, watermark %v", st2.Latest, len(st2.Buffer), st2.Watermark)
	}
}

// TestModelFailure: a scope whose model call fails is skipped and named in
// the error; other scopes are still committed.
func TestModelFailure(t *testing.T) {
	st, _ := testStore(t)
	boom := errors.New("HTTP 500")
	m := &fakeModel{name: "m", reply: func(system, user string) (string, error) {
		if strings.Contains(user, "bad scope") {
			return "", boom
		}
		return "fine", nil
	}}
	rng := rand.New(rand.NewPCG(1, 1))
	add(t, st, turn("aaa", "user", "bad scope "+sentences(rng, 150), t0), turn("bbb", "user", "good "+sentences(rng, 150), t0))
	res, err := Run(context.Background(), st, nil, Options{Model: m})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "scope aaa") {
		t.Fatalf("err = %v, want scope aaa's failure", err)
	}
	if res == nil || res.Commit == "" {
		t.Fatalf("the good scope was not committed: %+v", res)
	}
	if lv := byLevel(t, st, "bbb"); len(lv["L1"]) != 1 {
		t.Errorf("bbb: %s", levelsString(lv))
	}
	if lv := byLevel(t, st, "aaa"); len(lv) != 0 {
		t.Errorf("aaa: %s", levelsString(lv))
	}
}

// TestChangedWhileSummarizing: material forgotten while the model works
// is not committed in a summary (the scope is redone without it); material
// added meanwhile does not spoil the run and stays in the buffer.
func TestChangedWhileSummarizing(t *testing.T) {
	t.Run("forgotten", func(t *testing.T) {
		st, _ := testStore(t)
		rng := rand.New(rand.NewPCG(2, 2))
		secret := turn("global", "user", "The launch code word is pelican "+sentences(rng, 40), t0)
		add(t, st, append([]*mem.Entry{secret}, conversation(rng, "global", 300, t0.Add(time.Second))...)...)
		calls := 0
		m := &fakeModel{name: "m", reply: func(system, user string) (string, error) {
			calls++
			if calls == 1 {
				forget(t, st, secret) // another writer, while we do not hold the lock
			}
			if strings.Contains(user, "pelican") {
				return "summary mentioning pelican", nil
			}
			return "clean summary", nil
		}}
		res, err := Run(context.Background(), st, nil, Options{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 {
			t.Errorf("%d model calls, want the scope redone once", calls)
		}
		for _, s := range res.Scopes[0].Summaries {
			if strings.Contains(s.Body, "pelican") || slices.Contains(covers(s), secret.ID) {
				t.Errorf("summary %s covers the forgotten turn", s.ID)
			}
		}
	})
	t.Run("added", func(t *testing.T) {
		st, clock := testStore(t)
		rng := rand.New(rand.NewPCG(2, 2))
		add(t, st, conversation(rng, "global", 300, t0)...)
		var late *mem.Entry
		m := &fakeModel{name: "m", reply: func(system, user string) (string, error) {
			if late == nil {
				*clock = clock.Add(time.Minute)
				late = add(t, st, turn("global", "user", "A late turn about kubernetes.", t0))[0]
			}
			return "summary", nil
		}}
		res, err := Run(context.Background(), st, nil, Options{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.calls) != 1 || res.Commit == "" {
			t.Fatalf("%d calls, commit %q: want one call and a commit", len(m.calls), res.Commit)
		}
		state, err := Load(st, "global", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(state.Buffer) != 1 || state.Buffer[0].ID != late.ID {
			t.Errorf("buffer = %v, want just the late turn", state.Buffer)
		}
	})
}

func forget(t *testing.T, st *mem.Store, e *mem.Entry) {
	t.Helper()
	l, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	cur, err := st.Read(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	tx := st.Begin(false)
	if err := tx.Tombstone(cur, "forgotten", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("forget: test"); err != nil {
		t.Fatal(err)
	}
}

// TestDryRun: a dry run prints the operations and writes nothing.
func TestDryRun(t *testing.T) {
	st, _ := testStore(t)
	rng := rand.New(rand.NewPCG(4, 4))
	add(t, st, conversation(rng, "global", 6000, t0)...)
	h := head(t, st)
	res, err := Run(context.Background(), st, []string{"global"}, Options{Count: wordCount, DryRun: true, MaxEntries: 20})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, o := range res.Ops {
		ops = append(ops, o.Op)
	}
	if !slices.Contains(ops, "add") || !slices.Contains(ops, "delete") {
		t.Errorf("ops = %v, want adds and evictions", ops)
	}
	if head(t, st) != h || res.Commit != "" {
		t.Errorf("dry run committed")
	}
	if lv := byLevel(t, st, "global"); len(lv) != 0 {
		t.Errorf("dry run wrote %s", levelsString(lv))
	}
}

// TestLocked: a held lock makes Run fail with mem.ErrLocked after the
// timeout, writing nothing.
func TestLocked(t *testing.T) {
	st, _ := testStore(t)
	rng := rand.New(rand.NewPCG(6, 6))
	add(t, st, conversation(rng, "global", 300, t0)...)
	l, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = Run(context.Background(), st, nil, Options{Count: wordCount, LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, mem.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
}

func ids(es []*mem.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// A conversation's small talk shares its most common words with everything;
// the extractive summary must still keep what is specific.
func TestExtractiveKeepsSpecifics(t *testing.T) {
	var units []unit
	chatter := []string{"Wow, great, Mel!", "That's great, Caroline!", "Awesome, Mel!", "Wow, Caroline, great!", "Great to hear, Mel!"}
	for i := 0; i < 30; i++ {
		units = append(units, unit{label: "user", text: chatter[i%len(chatter)]})
		if i%10 == 3 {
			units = append(units, unit{label: "user", text: "Caroline is researching adoption agencies because she wants to give kids a loving home."})
		}
		if i%10 == 7 {
			units = append(units, unit{label: "user", text: "Melanie ran a charity race for mental health last Saturday, great fun."})
		}
	}
	out := extract(units, 60, ApproxTokens)
	for _, want := range []string{"adoption agencies", "charity race"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") > 4 {
		t.Errorf("summary is longer than its target:\n%s", out)
	}
}

// Through bounds a run: turns after it stay in the buffer, and nothing
// falls between the summary and the buffer.
func TestThrough(t *testing.T) {
	st, clock := testStore(t)
	rng := rand.New(rand.NewPCG(7, 1))
	scope := "chat"
	turns := add(t, st, conversation(rng, scope, 900, *clock)...)
	if len(turns) < 4 {
		t.Fatalf("only %d turns", len(turns))
	}
	cut := len(turns) * 2 / 3
	opt := Options{Count: wordCount, ChunkTokens: 300, RollingTokens: 200, Through: turns[cut].ID}
	if _, err := Run(context.Background(), st, []string{scope}, opt); err != nil {
		t.Fatal(err)
	}
	state, err := Load(st, scope, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(state.Buffer), ids(turns[cut+1:]); !slices.Equal(got, want) {
		t.Errorf("buffer = %v, want the turns after the cut %v", got, want)
	}
	d, err := loadScope(st, scope, DefaultKinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range turns {
		_, covered := d.coveredBy[tr.ID]
		if covered != (i <= cut) {
			t.Errorf("turn %d covered = %v, want %v", i, covered, i <= cut)
		}
	}
	// An id that is no longer in the buffer summarizes nothing new.
	*clock = clock.Add(time.Minute)
	before := head(t, st)
	if _, err := Run(context.Background(), st, []string{scope}, opt); err != nil {
		t.Fatal(err)
	}
	if head(t, st) != before {
		t.Error("a run through an already covered turn committed")
	}
}

// TestModelSecret: a model summary holding a credential that none of its
// inputs holds is not written; the extractive summary takes its place and
// the run says why. A secret the material itself holds (kept with
// --allow-secret) may be carried on.
func TestModelSecret(t *testing.T) {
	const token = "ghp_R7uKq2ZxT9vLm4NcW8aYp3BdHs6FjE1oQi5G"
	for _, tc := range []struct {
		name, material string
		kept           bool
	}{
		{"made up", "The deploy job publishes the image to the registry after the tests pass on main.", false},
		{"carried on", "The deploy job uses the token " + token + " to publish the image to the registry after the tests pass on main.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := testStore(t)
			m := &fakeModel{name: "m", reply: func(system, user string) (string, error) {
				return "The user set up deploys with " + token + " as the token.", nil
			}}
			add(t, st, turn("global", "user", tc.material, t0),
				turn("global", "assistant", "Understood, the pipeline publishes after a green build on main.", t0.Add(time.Second)))
			var warned []error
			res, err := Run(context.Background(), st, nil, Options{Model: m, Count: func(s string) int { return 4 * wordCount(s) }, Bad: func(err error) { warned = append(warned, err) }})
			if err != nil {
				t.Fatal(err)
			}
			body := res.Scopes[0].Summaries[0].Body
			if got := strings.Contains(body, token); got != tc.kept {
				t.Fatalf("summary holds the token: %v, want %v; body %q", got, tc.kept, body)
			}
			if !tc.kept {
				if len(warned) != 1 || !strings.Contains(warned[0].Error(), "github-token") {
					t.Errorf("warnings = %v, want one naming the rule", warned)
				}
				if !strings.Contains(body, "The deploy job") {
					t.Errorf("body %q, want the extractive summary", body)
				}
				if log := gitOut(t, st.Root, "log", "-p"); strings.Contains(log, token) {
					t.Error("the token reached git history")
				}
			}
		})
	}
}
