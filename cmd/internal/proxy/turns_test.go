package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"

	"github.com/miramem/mira/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

// TestRecallsEarlierTurns: a client that sends only its new message (a
// new chat, a stateless script) gets what the user said earlier in the
// conversation, with no fact extracted from it; a client that sends the
// whole conversation does not get its own messages a second time.
func TestRecallsEarlierTurns(t *testing.T) {
	up := llmtest.New(t)
	up.Default(llmtest.Func(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Noted.") }))
	f := newFixture(t, nil, up.URL, nil, nil) // no model: nothing is extracted
	ctx := context.Background()
	c := f.client(HeaderConversation, "bob")
	said := "The spare key of the boathouse hangs behind the blue shutter."
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: said}}}); err != nil {
		t.Fatal(err)
	}
	f.idle()
	// A stored turn reaches the index a moment after its commit (the
	// proxy's reads do not wait for it): the next chat comes later.
	waitIndexed(t, f, "bob", said)
	ask := "Where does the spare key of the boathouse hang?"
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: ask}}}); err != nil {
		t.Fatal(err)
	}
	reqs := chatRequests(up)
	if sys := reqs[len(reqs)-1].System(); !strings.Contains(sys, said) {
		t.Errorf("a new chat did not get the earlier turn; its system block:\n%s", sys)
	}
	f.idle()
	// The whole conversation: the turns it holds are not added again.
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: said}, {Role: "assistant", Content: "Noted."},
			{Role: "user", Content: ask}, {Role: "assistant", Content: "Noted."}, {Role: "user", Content: "And the boathouse's spare key, once more?"}}}); err != nil {
		t.Fatal(err)
	}
	reqs = chatRequests(up)
	if sys := reqs[len(reqs)-1].System(); strings.Contains(sys, said) || strings.Contains(sys, ask) {
		t.Errorf("turns the client sent were added again:\n%s", sys)
	}
	// Another conversation does not get bob's turns.
	if _, err := f.client(HeaderConversation, "carol").CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: ask}}}); err != nil {
		t.Fatal(err)
	}
	reqs = chatRequests(up)
	if sys := reqs[len(reqs)-1].System(); strings.Contains(sys, said) {
		t.Errorf("another conversation got bob's turn:\n%s", sys)
	}
}

// waitIndexed waits until the turn text of conv can be recalled.
func waitIndexed(t *testing.T, f *fixture, conv, text string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		recs, err := f.m.Recall(context.Background(), mira.Query{Text: text, Kinds: []string{mem.KindTurn}, Scope: conv, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Text == text {
				return
			}
		}
	}
	t.Fatalf("the turn %q never reached the index", text)
}
