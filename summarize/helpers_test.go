package summarize

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// wordCount counts tokens as words, so tests can hit thresholds exactly.
func wordCount(s string) int { return len(strings.Fields(s)) }

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// testStore opens a new store whose clock the test moves.
func testStore(t testing.TB) (*mem.Store, *time.Time) {
	t.Helper()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	st, err := mem.Open(context.Background(), filepath.Join(t.TempDir(), "home"), "mira-summarize-test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	clock := t0
	st.Now = func() time.Time { return clock }
	return st, &clock
}

// add stores entries in one commit.
func add(t testing.TB, st *mem.Store, es ...*mem.Entry) []*mem.Entry {
	t.Helper()
	l, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	tx := st.Begin(false)
	for _, e := range es {
		if err := tx.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Commit("test: add"); err != nil {
		t.Fatal(err)
	}
	return es
}

// turn makes a turn of the scope at time at.
func turn(scope, role, text string, at time.Time) *mem.Entry {
	return &mem.Entry{Kind: mem.KindTurn, Role: role, Scope: scope, Body: text, CreatedAt: at, Source: "test"}
}

var vocab = strings.Fields(`database migration postgres index query schema latency cache redis deploy
kubernetes cluster config token budget parser lexer summary context window agent tool shell test failure
retry timeout lock commit branch review release version module import export file path directory
error warning log metric alert user customer invoice payment order cart checkout search ranking vector`)

// sentences returns text of exactly n words, in sentences of up to ten.
func sentences(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := vocab[rng.IntN(len(vocab))]
		if i%10 == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		if i%10 == 9 || i == n-1 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// conversation returns turns of the scope whose material costs exactly
// tokens under wordCount (each turn costs its words plus one for its
// label), one second apart from start.
func conversation(rng *rand.Rand, scope string, tokens int, start time.Time) []*mem.Entry {
	var out []*mem.Entry
	roles := []string{"user", "assistant"}
	for i := 0; tokens > 0; i++ {
		n := min(tokens, 20+rng.IntN(40))
		if tokens-n < 3 && tokens-n > 0 {
			n = tokens // never leave a turn with no words
		}
		out = append(out, turn(scope, roles[i%2], sentences(rng, n-1), start.Add(time.Duration(i)*time.Second)))
		tokens -= n
	}
	return out
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func head(t *testing.T, st *mem.Store) string {
	t.Helper()
	h, err := st.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// byLevel groups live summaries of a scope by level.
func byLevel(t *testing.T, st *mem.Store, scope string) map[string][]*mem.Entry {
	t.Helper()
	d, err := loadScope(st, scope, DefaultKinds, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*mem.Entry{}
	for _, s := range d.summaries {
		out[s.Level] = append(out[s.Level], s)
	}
	return out
}

func levelsString(m map[string][]*mem.Entry) string {
	return fmt.Sprintf("L1=%d L2=%d L3=%d", len(m["L1"]), len(m["L2"]), len(m["L3"]))
}
