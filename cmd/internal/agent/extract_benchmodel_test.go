package agent

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/miramem/mira"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
)

// extractBench is the setting of the extraction benchmarks: a store in a
// new home, opened with a warm index as the agent opens it, and a fake
// chat model that proposes what propose finds in a message, adds every
// fact reconciliation asks about, and counts the calls and the o200k
// tokens sent and received. While fail is set it answers every request
// with an error.
type extractBench struct {
	home string
	m    *mira.Memory
	chat *llm.Client

	tok     *plan.Encoding
	propose func(prompt string) []map[string]string

	mu                     sync.Mutex
	fail                   bool
	calls, promptT, replyT int
}

// newExtractBench opens the store and serves the model; propose is called
// with the extraction prompt's user message, under the model's lock. The
// caller closes x.m.
func newExtractBench(b *testing.B, propose func(prompt string) []map[string]string) *extractBench {
	b.Helper()
	tok, err := plan.NewTokenizer("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	if err := tok.Load(); err != nil {
		b.Fatal(err)
	}
	x := &extractBench{home: filepath.Join(b.TempDir(), "home"), tok: tok, propose: propose}
	srv := llmtest.New(b)
	srv.Default(llmtest.Func(x.answer))
	x.m, err = mira.Open(b.Context(), mira.Options{Home: x.home, Config: &mira.Config{}, Index: index.ReaderOptions{Warm: true}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	x.chat, err = llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model", APIKey: "test", MaxRetries: -1})
	if err != nil {
		x.m.Close()
		b.Fatal(err)
	}
	return x
}

func (x *extractBench) answer(req llmtest.Request) llmtest.Reply {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fail {
		return llmtest.Error(500, "model down")
	}
	r, ok := addEveryFact(req)
	if !ok {
		r = llmtest.JSON(map[string]any{"facts": x.propose(req.LastUser())})
	}
	x.calls++
	x.promptT += x.tok.Count(req.System()) + x.tok.Count(req.LastUser())
	x.replyT += x.tok.Count(r.Content)
	return r
}

// setFail makes the model fail, or answer again.
func (x *extractBench) setFail(fail bool) {
	x.mu.Lock()
	x.fail = fail
	x.mu.Unlock()
}

// resetCounts forgets the calls and tokens counted so far.
func (x *extractBench) resetCounts() {
	x.mu.Lock()
	x.calls, x.promptT, x.replyT = 0, 0, 0
	x.mu.Unlock()
}

// reportPerMessage reports the model calls and the tokens sent and
// received, each per message of msgs.
func (x *extractBench) reportPerMessage(b *testing.B, msgs float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	b.ReportMetric(float64(x.calls)/msgs, "calls/msg")
	b.ReportMetric(float64(x.promptT)/msgs, "prompt-tok/msg")
	b.ReportMetric(float64(x.replyT)/msgs, "reply-tok/msg")
}
