package agentloop

import (
	"fmt"

	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// fieldUsage is the front matter field of a reply's turn that records
// what the reply cost in tokens, so that the conversation's cost outlives
// the session that paid it.
const fieldUsage = "usage"

// usageField is the front matter value recording u.
func usageField(u llm.Usage) map[string]any {
	m := map[string]any{"requests": u.Requests, "prompt_tokens": u.PromptTokens, "cached_tokens": u.CachedTokens, "completion_tokens": u.CompletionTokens}
	if u.ReasoningTokens > 0 {
		m["reasoning_tokens"] = u.ReasoningTokens
	}
	return m
}

// recordedUsage reads the usage a reply's turn records; ok is false for a
// turn that records none (written before usage was recorded, or by a
// server that reported none).
func recordedUsage(e *mem.Entry) (u Usage, ok bool) {
	m, isMap := e.Fields()[fieldUsage].(map[string]any)
	if !isMap {
		return u, false
	}
	n := func(k string) int {
		switch v := m[k].(type) {
		case int:
			return max(v, 0)
		case int64:
			return int(max(v, 0))
		case uint64:
			return int(min(v, 1<<40))
		case float64:
			return int(max(v, 0))
		}
		return 0
	}
	u = Usage{Requests: n("requests"), PromptTokens: n("prompt_tokens"), CachedTokens: n("cached_tokens"),
		CompletionTokens: n("completion_tokens"), ReasoningTokens: n("reasoning_tokens")}
	return u, u.Requests > 0
}

// ConversationUsage is the usage recorded in a conversation's replies,
// across every session that added to it.
type ConversationUsage struct {
	Usage
	// Replies counts the replies whose turns record their usage;
	// Unrecorded those that record none.
	Replies    int `json:"replies"`
	Unrecorded int `json:"unrecorded,omitempty"`
}

// conversationUsage sums the usage recorded in the front matter of the
// conversation's replies, priced at the configured prices.
func (a *Agent) conversationUsage() (ConversationUsage, error) {
	var cu ConversationUsage
	paths, err := a.cfg.Store.TurnPaths(a.cfg.Conversation)
	if err != nil {
		return cu, fmt.Errorf("list the turns of conversation %s: %w", a.cfg.Conversation, err)
	}
	for _, p := range paths {
		ep, err := mem.ParsePath(p)
		if err != nil || ep.Role != roleAssistant {
			continue
		}
		e, err := a.cfg.Store.ReadPath(p)
		if err != nil {
			continue
		}
		u, ok := recordedUsage(e)
		if !ok {
			cu.Unrecorded++
			continue
		}
		cu.Replies++
		cu.Usage.add(u)
	}
	if a.cfg.Prices.Known() {
		c := a.cfg.Prices.Cost(cu.Usage)
		cu.Cost = &c
	}
	return cu, nil
}
