package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/embed"
)

// builtinEmbed names the built-in offline embedder.
const builtinEmbed = "builtin"

// embedder returns the embedder MIRA_EMBED (or --embed, or the config)
// names: nil for the built-in one, which the index fits from the store, or
// a client for any OpenAI-compatible /v1/embeddings endpoint given as
// openai:<model>[/<dim>]. Embeddings may come from another server than the
// chat model: MIRA_EMBED_BASE_URL and MIRA_EMBED_API_KEY come first, then
// the config, then OPENAI_BASE_URL and OPENAI_API_KEY.
func (c *Common) embedder(getenv func(string) string) (embed.Embedder, error) {
	name := strings.TrimSpace(c.Embed)
	if name == "" || name == builtinEmbed {
		return nil, nil
	}
	model, ok := strings.CutPrefix(name, "openai:")
	if !ok || model == "" {
		return nil, usagef("unknown embedder %q: use %s or openai:<model>", name, builtinEmbed)
	}
	dim := 0
	if i := strings.LastIndexByte(model, '/'); i > 0 {
		if n, err := strconv.Atoi(model[i+1:]); err == nil && n > 0 {
			model, dim = model[:i], n
		}
	}
	cfg, _ := loadConfig(getenv)
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	e, err := embed.NewOpenAI(embed.OpenAIConfig{
		BaseURL: first(getenv("MIRA_EMBED_BASE_URL"), cfg.Embed.BaseURL, getenv("OPENAI_BASE_URL"), embed.DefaultOpenAIBaseURL),
		APIKey:  first(getenv("MIRA_EMBED_API_KEY"), cfg.Embed.APIKey, getenv("OPENAI_API_KEY")),
		Model:   model,
		Dim:     dim,
		Timeout: 2 * time.Minute,
	})
	if err != nil {
		return nil, usagef("embedder %s: %v", name, err)
	}
	return e, nil
}

// reranker returns the configured rerank endpoint, or nil.
func reranker(getenv func(string) string) (*embed.Reranker, error) {
	cfg, _ := loadConfig(getenv)
	base := getenv("MIRA_RERANK_BASE_URL")
	if base == "" {
		base = cfg.Rerank.BaseURL
	}
	if base == "" {
		return nil, nil
	}
	model := getenv("MIRA_RERANK_MODEL")
	if model == "" {
		model = cfg.Rerank.Model
	}
	key := getenv("MIRA_RERANK_API_KEY")
	if key == "" {
		key = cfg.Rerank.APIKey
	}
	if model == "" {
		return nil, fmt.Errorf("rerank endpoint %s configured without a model (MIRA_RERANK_MODEL)", base)
	}
	return embed.NewReranker(embed.RerankConfig{BaseURL: base, APIKey: key, Model: model, Timeout: time.Minute}), nil
}
