package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// randomish returns n characters from alphabet, the same for the same seed,
// so tests can build secret-looking strings without holding any.
func randomish(alphabet string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64         = alnum + "+/"
)

// fakeAWSKey returns a string shaped like an AWS access key id.
func fakeAWSKey(seed uint64) string { return "AKIA" + randomish(upperDigits, 16, seed) }

// fakePEM returns a private key block with the given number of body lines.
func fakePEM(lines int, seed uint64) string {
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for i := range lines {
		b.WriteString(randomish(b64, 64, seed+uint64(i)) + "\n")
	}
	b.WriteString("-----END RSA PRIVATE KEY-----\n")
	return b.String()
}

// fixture is a project root, a store and a registry over them.
type fixture struct {
	root, store string
	policy      *Policy
	reg         *Registry
	ids         int
}

type fixtureOpt func(*Config)

func newFixture(t testing.TB, opts ...fixtureOpt) *fixture {
	t.Helper()
	f := &fixture{root: t.TempDir(), store: t.TempDir(), policy: &Policy{Yes: true}}
	cfg := Config{
		Root:   f.root,
		Policy: f.policy,
		Artifacts: &Artifacts{Store: f.store, Scope: "conv1", NewID: func() string {
			f.ids++
			return fmt.Sprintf("01TEST%04d", f.ids)
		}},
		Limits: Limits{BashTimeout: 20 * time.Second},
	}
	for _, o := range opts {
		o(&cfg)
	}
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	return f
}

// write creates a file under the root.
func (f *fixture) write(t testing.TB, rel, content string) string {
	t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// read returns a file under the root.
func (f *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call runs a tool with arguments given as a Go value.
func (f *fixture) call(t *testing.T, name string, args any) Result {
	t.Helper()
	return f.callCtx(t, context.Background(), name, args)
}

func (f *fixture) callCtx(t *testing.T, ctx context.Context, name string, args any) Result {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	res, err := f.reg.Call(ctx, name, json.RawMessage(raw))
	if err != nil && ctx.Err() == nil {
		t.Fatalf("Call(%s, %s) error = %v with a live context", name, raw, err)
	}
	return res
}

// obj is shorthand for tool arguments.
type obj = map[string]any

// approverFunc answers approval requests with a function and records them.
type approverFunc struct {
	mu    sync.Mutex
	asked []string
	fn    func(tool, summary string) (Decision, error)
}

func (a *approverFunc) Approve(ctx context.Context, tool, summary string) (Decision, error) {
	a.mu.Lock()
	a.asked = append(a.asked, tool+": "+summary)
	a.mu.Unlock()
	return a.fn(tool, summary)
}

// wantContains fails unless every part occurs in got.
func wantContains(t *testing.T, what, got string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("%s = %q, want it to contain %q", what, got, p)
		}
	}
}
