package mira

import (
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// A commit made with a chat model's help records the tokens it used in a
// Mira-Usage trailer: summaries and extraction both write one.

// usageSince records the tokens a model used since its usage was before.
func usageSince(c *llm.Client, before llm.Usage) []mem.Trailer {
	u := c.Usage()
	d := llm.Usage{
		Requests: u.Requests - before.Requests, PromptTokens: u.PromptTokens - before.PromptTokens,
		CompletionTokens: u.CompletionTokens - before.CompletionTokens, CachedTokens: u.CachedTokens - before.CachedTokens,
		ReasoningTokens: u.ReasoningTokens - before.ReasoningTokens,
	}
	if d.Requests == 0 {
		return nil
	}
	return []mem.Trailer{{Key: "Mira-Usage", Value: d.String()}}
}

// UsageTrailers records a model's token usage in the commit it led to.
func UsageTrailers(c *llm.Client) []mem.Trailer {
	u := c.Usage()
	if u.Requests == 0 {
		return nil
	}
	return []mem.Trailer{{Key: "Mira-Usage", Value: u.String()}}
}
