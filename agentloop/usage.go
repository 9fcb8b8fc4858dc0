package agentloop

import (
	"fmt"

	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/llm"
)

// Prices are a model's prices in US dollars per million tokens. The zero
// value means the prices are unknown, and no cost is reported.
type Prices struct {
	// Input is the price of prompt tokens that miss the provider's cache.
	Input float64 `json:"input"`
	// CachedInput is the price of prompt tokens served from the cache;
	// when 0 while Input is set, cached tokens cost Input.
	CachedInput float64 `json:"cached_input"`
	// Output is the price of completion tokens, thinking included.
	Output float64 `json:"output"`
}

// Known reports whether any price is set.
func (p Prices) Known() bool { return p.Input > 0 || p.CachedInput > 0 || p.Output > 0 }

// Cost returns what u cost at these prices, in US dollars.
func (p Prices) Cost(u Usage) float64 {
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	miss := max(0, u.PromptTokens-u.CachedTokens)
	return (float64(miss)*p.Input + float64(u.CachedTokens)*cachedPrice + float64(u.CompletionTokens)*p.Output) / 1e6
}

// Usage counts requests and tokens, as the server reported them.
type Usage struct {
	Requests         int `json:"requests"`
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	// Cost is the price of the tokens in US dollars, when prices are
	// known.
	Cost *float64 `json:"cost_usd,omitempty"`
}

// usageOf converts the usage of one reply.
func usageOf(u llm.Usage) Usage {
	return Usage{
		Requests: u.Requests, PromptTokens: u.PromptTokens, CachedTokens: u.CachedTokens,
		CompletionTokens: u.CompletionTokens, ReasoningTokens: u.ReasoningTokens,
	}
}

// add adds v to u; costs add up when both are known.
func (u *Usage) add(v Usage) {
	u.Requests += v.Requests
	u.PromptTokens += v.PromptTokens
	u.CachedTokens += v.CachedTokens
	u.CompletionTokens += v.CompletionTokens
	u.ReasoningTokens += v.ReasoningTokens
	if v.Cost != nil {
		c := *v.Cost
		if u.Cost != nil {
			c += *u.Cost
		}
		u.Cost = &c
	}
}

// CacheHitRate is the part of the prompt tokens that were served from the
// provider's cache, from 0 to 1 (0 without prompt tokens).
func (u Usage) CacheHitRate() float64 {
	if u.PromptTokens == 0 {
		return 0
	}
	return float64(u.CachedTokens) / float64(u.PromptTokens)
}

// String is a one-line account such as
// "3 requests · 12,400 in (9,800 cached, 79%) · 640 out · $0.0021".
func (u Usage) String() string {
	s := fmt.Sprintf("%d %s · %s in (%s cached, %.0f%%) · %s out",
		u.Requests, plural(u.Requests, "request", "requests"), text.Thousands(u.PromptTokens), text.Thousands(u.CachedTokens),
		100*u.CacheHitRate(), text.Thousands(u.CompletionTokens))
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" (%s thinking)", text.Thousands(u.ReasoningTokens))
	}
	if u.Cost != nil {
		s += fmt.Sprintf(" · $%.4f", *u.Cost)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
