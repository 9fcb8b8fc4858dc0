package cli

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/miramem/mira/cmd/internal/paths"
	"go.yaml.in/yaml/v3"
)

// Config is the YAML configuration file ($MIRA_CONFIG, else
// $XDG_CONFIG_HOME/mira/config.yaml). Its values are defaults: environment
// variables and flags beat them.
type Config struct {
	Home        string `yaml:"home"`
	Output      string `yaml:"output"`
	LockTimeout string `yaml:"lock_timeout"`
	Embed       struct {
		Name    string `yaml:"name"` // builtin or openai:<model>[/<dim>]
		BaseURL string `yaml:"base_url"`
		APIKey  string `yaml:"api_key"`
	} `yaml:"embed"`
	Rerank struct {
		BaseURL string `yaml:"base_url"`
		Model   string `yaml:"model"`
		APIKey  string `yaml:"api_key"`
	} `yaml:"rerank"`
	Recall struct {
		K    int    `yaml:"k"`
		Mode string `yaml:"mode"`
	} `yaml:"recall"`
	// LLM is the chat model of the write path and the agent; the
	// environment's MIRA_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY beat it.
	LLM struct {
		Model   string `yaml:"model"`
		BaseURL string `yaml:"base_url"`
		APIKey  string `yaml:"api_key"`
		Timeout string `yaml:"timeout"`
	} `yaml:"llm"`
	Context struct {
		Mode     string `yaml:"mode"`
		Encoding string `yaml:"encoding"`
		Log      bool   `yaml:"log"`
		// Per-mode budgets in tokens; zero keeps the built-in default.
		Budget struct {
			Off   int `yaml:"off"`
			Light int `yaml:"light"`
			Heavy int `yaml:"heavy"`
		} `yaml:"budget"`
	} `yaml:"context"`
	Summarize struct {
		MaxEntries int `yaml:"max_entries"`
	} `yaml:"summarize"`
	Agent struct {
		Conversation  string   `yaml:"conversation"`
		MaxSteps      int      `yaml:"max_steps"`
		BufferTokens  int      `yaml:"buffer_tokens"`
		ContextBudget int      `yaml:"context_budget"`
		RecallK       int      `yaml:"recall_k"`
		Effort        string   `yaml:"effort"`
		Summarizer    string   `yaml:"summarizer"`
		Allow         []string `yaml:"allow"`
	} `yaml:"agent"`
	// Prices are in US dollars per million tokens, by model name, for the
	// agent's /status.
	Prices map[string]Price `yaml:"prices"`

	path string
}

// Price is what a model's tokens cost, in US dollars per million.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	Output      float64 `yaml:"output"`
}

func loadConfig(getenv func(string) string) (*Config, error) {
	cfg := &Config{}
	p, explicit := paths.ConfigFile(getenv)
	if p == "" {
		return cfg, nil
	}
	cfg.path = p
	data, err := os.ReadFile(p)
	if err != nil {
		if os.IsNotExist(err) && !explicit {
			return cfg, nil
		}
		return cfg, fmt.Errorf("cannot read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && err.Error() != "EOF" {
		return &Config{}, fmt.Errorf("config %s: %v", p, err)
	}
	return cfg, nil
}

// vars turns the configuration into kong defaults, falling back to the
// built-in ones.
func (c *Config) vars(getenv func(string) string) kong.Vars {
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	k := "10"
	if c.Recall.K > 0 {
		k = strconv.Itoa(c.Recall.K)
	}
	return kong.Vars{
		"home":         or(c.Home, paths.DefaultHome(getenv)),
		"output":       or(c.Output, "auto"),
		"lock_timeout": or(c.LockTimeout, "10s"),
		"recall_k":     k,
		"recall_mode":  or(c.Recall.Mode, "hybrid"),
		"embed":        or(c.Embed.Name, builtinEmbed),
		"context_mode": or(c.Context.Mode, "light"),
		"encoding":     or(c.Context.Encoding, "o200k_base"),
		"context_log":  strconv.FormatBool(c.Context.Log),

		"agent_conversation":   or(c.Agent.Conversation, "chat"),
		"agent_max_steps":      strconv.Itoa(cmpOrInt(c.Agent.MaxSteps, 25)),
		"agent_buffer_tokens":  strconv.Itoa(cmpOrInt(c.Agent.BufferTokens, 24000)),
		"agent_context_budget": strconv.Itoa(cmpOrInt(c.Agent.ContextBudget, 6000)),
		"agent_recall_k":       strconv.Itoa(cmpOrInt(c.Agent.RecallK, 5)),
		"agent_effort":         or(c.Agent.Effort, "auto"),
		"agent_summarizer":     or(c.Agent.Summarizer, "model"),
		"agent_allow":          strings.Join(c.Agent.Allow, ","),
		"max_entries":          strconv.Itoa(cmpOrInt(c.Summarize.MaxEntries, 500)),
	}
}

// cmpOrInt returns v, or def when v is not positive.
func cmpOrInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
