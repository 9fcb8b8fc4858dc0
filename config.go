package mira

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/internal/rawfile"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	"go.yaml.in/yaml/v3"
)

// Config is the YAML configuration file ($MIRA_CONFIG, else
// $XDG_CONFIG_HOME/mira/config.yaml). Its values are defaults: the
// environment and the caller's options beat them.
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
		// The ranking's settings (see Query); nil keeps the built-in
		// default.
		RecencyWeight *float64 `yaml:"recency_weight"`
		RecencyDays   *float64 `yaml:"recency_days"`
		MMRLambda     *float64 `yaml:"mmr_lambda"`
		MinScore      *float64 `yaml:"min_score"`
		// Serve lets a recall that no server answers start one (nil:
		// true); $MIRA_SERVE beats it. ServeIdle is how long such a
		// server waits for the next recall before it stops (a duration;
		// empty: DefaultServeIdle).
		Serve     *bool  `yaml:"serve"`
		ServeIdle string `yaml:"serve_idle"`
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
		// CodeBounds bound the code a context takes in each mode
		// (context.code); zero keeps the built-in default (see
		// ctx.Mode.Defaults).
		CodeBounds struct {
			Cards ModeInts `yaml:"cards"` // code cards at most
			Lines ModeInts `yaml:"lines"` // lines of excerpt a card shows
			Map   ModeInts `yaml:"map"`   // tokens of the code map at most
		} `yaml:"code"`
	} `yaml:"context"`
	Summarize struct {
		MaxEntries int `yaml:"max_entries"`
	} `yaml:"summarize"`
	Remember struct {
		// MaxBytes is the largest text of one memory (DefaultMaxBytes).
		MaxBytes int `yaml:"max_bytes"`
	} `yaml:"remember"`
	// Sync is what mira-sync exchanges with which remote.
	Sync struct {
		Remote string `yaml:"remote"` // default origin
		Branch string `yaml:"branch"` // default main
		// Scopes are glob patterns of the scopes shared; none means
		// every scope.
		Scopes []string `yaml:"scopes"`
		// Turns shares conversation turns, their summaries and tool
		// artifacts too; by default they stay on this machine.
		Turns bool `yaml:"turns"`
	} `yaml:"sync"`
	Agent struct {
		Conversation  string   `yaml:"conversation"`
		MaxSteps      int      `yaml:"max_steps"`
		BufferTokens  int      `yaml:"buffer_tokens"`
		ContextBudget int      `yaml:"context_budget"`
		RecallK       int      `yaml:"recall_k"`
		Effort        string   `yaml:"effort"`
		Summarizer    string   `yaml:"summarizer"`
		Allow         []string `yaml:"allow"`
		// AllowGitConfig lets the agent's tools change the project's
		// git configuration and hooks (--allow-git-config).
		AllowGitConfig bool `yaml:"allow_git_config"`
		// Extract has facts extracted after each message (nil: true;
		// --no-extract).
		Extract *bool `yaml:"extract"`
		// PlanLog records what the model was shown for each call under
		// plans/calls/ (nil: true; --no-plan-log), keeping the newest
		// PlanLogMiB of each conversation (DefaultPlanLogMiB when 0).
		PlanLog    *bool `yaml:"plan_log"`
		PlanLogMiB int   `yaml:"plan_log_mib"`
	} `yaml:"agent"`
	// Prices are in US dollars per million tokens, by model name, for the
	// agent's /status.
	Prices map[string]Price `yaml:"prices"`

	// Path is the file the configuration was read from ("" for none).
	Path string `yaml:"-"`
	// Lines is the line of each key the file sets, by its dotted path
	// ("recall.k"), for telling where a value came from.
	Lines map[string]int `yaml:"-"`
}

// ConfigKeys lists every key the configuration file may set, as dotted
// paths ("recall.k"), in the order of Config. The keys of a map are the
// user's (prices names models): the map is one key.
func ConfigKeys() []string { return appendYAMLKeys(nil, reflect.TypeFor[Config](), "") }

func appendYAMLKeys(keys []string, t reflect.Type, path string) []string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue // not a key: the file cannot set it (yamlField)
		}
		key, ft := join(path, name), f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			keys = appendYAMLKeys(keys, ft, key)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

// MaxTextBytes is the largest text remember.max_bytes may allow: an
// entry file holds the text and at most mem.MaxMetaBytes of front matter
// within mem.MaxFileBytes.
const MaxTextBytes = mem.MaxFileBytes - mem.MaxMetaBytes - 64

// ModeInts is a number for the light and the heavy context mode.
type ModeInts struct {
	Light int `yaml:"light"`
	Heavy int `yaml:"heavy"`
}

// Price is what a model's tokens cost, in US dollars per million.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	Output      float64 `yaml:"output"`
}

// LoadConfig reads the configuration file that getenv names ($MIRA_CONFIG,
// else the XDG default). A missing default file is an empty
// configuration; a missing file named by $MIRA_CONFIG, an unknown key or a
// bad value is an error, with an empty configuration beside it.
func LoadConfig(getenv func(string) string) (*Config, error) {
	cfg := &Config{}
	p, explicit := paths.ConfigFile(getenv)
	if p == "" {
		return cfg, nil
	}
	cfg.Path = p
	data, err := rawfile.Read(p)
	if err != nil {
		if os.IsNotExist(err) && !explicit {
			return cfg, nil
		}
		return cfg, &InvalidError{Err: fmt.Errorf("cannot read config: %w", err)}
	}
	c, err := ParseConfig(data)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Path = p
			return &Config{Path: p}, &InvalidError{Err: ce}
		}
		return &Config{Path: p}, &InvalidError{Err: &ConfigError{Path: p, Err: err}}
	}
	c.Path = p
	return c, nil
}

// DefaultServeIdle is how long a server started by a recall waits for the
// next one before it stops, when recall.serve_idle does not say.
const DefaultServeIdle = 10 * time.Minute

// ServeIdle is the configuration's recall.serve_idle, else
// DefaultServeIdle.
func ServeIdle(cfg *Config) (time.Duration, error) {
	if cfg == nil || cfg.Recall.ServeIdle == "" {
		return DefaultServeIdle, nil
	}
	d, err := time.ParseDuration(cfg.Recall.ServeIdle)
	if err != nil || d <= 0 {
		return 0, invalidf("config recall.serve_idle: %q is no positive duration (such as 10m)", cfg.Recall.ServeIdle)
	}
	return d, nil
}

// ParseConfig reads a configuration from YAML. An unknown key is an
// error, since a misspelt one would otherwise be ignored without a word,
// and so is a value the command would refuse as a flag; either is a
// *ConfigError naming the line and the key.
func ParseConfig(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return &Config{}, yamlSyntaxError(err)
	}
	lines := map[string]int{}
	if err := checkYAML(&doc, reflect.TypeFor[Config](), checkConfigValue, lines); err != nil {
		return &Config{}, err
	}
	cfg := &Config{}
	if len(doc.Content) > 0 {
		if err := doc.Decode(cfg); err != nil {
			// checkYAML lets through only what decodes; this is a
			// case it does not foresee.
			return &Config{}, err
		}
	}
	cfg.Lines = lines
	return cfg, nil
}

// configChecks are the values the file may hold beyond their type's: the
// same as the commands accept for the flags they are the defaults of.
var configChecks = map[string]func(string) error{
	"output":            oneOf("auto", "jsonl", "text"),
	"lock_timeout":      positiveDuration,
	"recall.mode":       oneOf("lexical", "vector", "hybrid"),
	"recall.serve_idle": positiveDuration,
	"llm.timeout":       positiveDuration,
	"context.mode":      oneOf("off", "light", "heavy"),
	"agent.effort":      oneOf("auto", "none", "low", "medium", "high"),
	"agent.summarizer":  oneOf("model", "extractive"),
	"embed.name": func(v string) error {
		if m, ok := strings.CutPrefix(v, "openai:"); v == BuiltinEmbedder || ok && m != "" {
			return nil
		}
		return fmt.Errorf("%q is neither %s nor openai:<model>", v, BuiltinEmbedder)
	},
	"embed.base_url":           baseURL,
	"rerank.base_url":          baseURL,
	"llm.base_url":             baseURL,
	"agent.plan_log_mib":       nonNegative,
	"context.code.cards.light": nonNegative,
	"context.code.cards.heavy": nonNegative,
	"context.code.lines.light": nonNegative,
	"context.code.lines.heavy": nonNegative,
	"context.code.map.light":   nonNegative,
	"context.code.map.heavy":   nonNegative,
	"remember.max_bytes": func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxTextBytes {
			return fmt.Errorf("%s is not between 0 (the default) and %d (%s: an entry file holds at most %s)", v, MaxTextBytes, mem.ByteSize(MaxTextBytes), mem.ByteSize(mem.MaxFileBytes))
		}
		return nil
	},
}

// checkConfigValue refuses a value of key that its type allows but the
// key does not, in a message that names the key: the ranking's settings
// of the recall section by CheckRecallSetting, the others by
// configChecks.
func checkConfigValue(key string, n *yaml.Node) error {
	if name, ok := strings.CutPrefix(key, "recall."); ok && slices.Contains(recallSettings, name) {
		var v float64
		_ = n.Decode(&v) // the walk has refused a value that does not decode
		if err := CheckRecallSetting(name, v); err != nil {
			return fmt.Errorf("recall.%w", err)
		}
		return nil
	}
	if refuse := configChecks[key]; refuse != nil {
		if err := refuse(n.Value); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// ConfigValue returns the value the configuration file gives key (a
// dotted path such as "recall.k"), formatted as the file would write it,
// and whether the file sets it at all.
func ConfigValue(c *Config, key string) (string, bool) {
	if c == nil || c.Lines == nil {
		return "", false
	}
	if _, set := c.Lines[key]; !set {
		return "", false
	}
	return yamlValue(reflect.ValueOf(c).Elem(), key)
}

// yamlSyntaxError turns the YAML parser's "yaml: line N: msg" into a
// *ConfigError at line N.
func yamlSyntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return &ConfigError{Line: line, Err: fmt.Errorf("%s", after)}
			}
		}
	}
	return &ConfigError{Err: fmt.Errorf("%s", msg)}
}

// BuiltinEmbedder names the built-in offline embedder.
const BuiltinEmbedder = "builtin"

// NewEmbedder returns the embedder name calls for: nil for the built-in
// one, which the index fits from the store, or a client for any
// OpenAI-compatible /v1/embeddings endpoint given as openai:<model>[/<dim>].
// Embeddings may come from another server than the chat model:
// MIRA_EMBED_BASE_URL and MIRA_EMBED_API_KEY come first, then the
// configuration, then OPENAI_BASE_URL and OPENAI_API_KEY.
func NewEmbedder(name string, cfg *Config, getenv func(string) string) (embed.Embedder, error) {
	name = strings.TrimSpace(name)
	if name == "" || name == BuiltinEmbedder {
		return nil, nil
	}
	model, ok := strings.CutPrefix(name, "openai:")
	if !ok || model == "" {
		return nil, invalidf("unknown embedder %q: use %s or openai:<model>", name, BuiltinEmbedder)
	}
	dim := 0
	if i := strings.LastIndexByte(model, '/'); i > 0 {
		if n, err := strconv.Atoi(model[i+1:]); err == nil && n > 0 {
			model, dim = model[:i], n
		}
	}
	if cfg == nil {
		cfg = &Config{}
	}
	e, err := embed.NewOpenAI(embed.OpenAIConfig{
		BaseURL: first(getenv("MIRA_EMBED_BASE_URL"), cfg.Embed.BaseURL, getenv("OPENAI_BASE_URL"), embed.DefaultOpenAIBaseURL),
		APIKey:  first(getenv("MIRA_EMBED_API_KEY"), cfg.Embed.APIKey, getenv("OPENAI_API_KEY")),
		Model:   model,
		Dim:     dim,
		Timeout: 2 * time.Minute,
	})
	if err != nil {
		return nil, invalidf("embedder %s: %v", name, err)
	}
	return e, nil
}

// NewReranker returns the configured rerank endpoint
// (MIRA_RERANK_BASE_URL, MIRA_RERANK_MODEL, MIRA_RERANK_API_KEY, else the
// configuration's rerank section), or nil when there is none.
func NewReranker(cfg *Config, getenv func(string) string) (*embed.Reranker, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	base := first(getenv("MIRA_RERANK_BASE_URL"), cfg.Rerank.BaseURL)
	if base == "" {
		return nil, nil
	}
	model := first(getenv("MIRA_RERANK_MODEL"), cfg.Rerank.Model)
	key := first(getenv("MIRA_RERANK_API_KEY"), cfg.Rerank.APIKey)
	if model == "" {
		return nil, invalidf("rerank endpoint %s configured without a model (MIRA_RERANK_MODEL)", base)
	}
	return embed.NewReranker(embed.RerankConfig{BaseURL: base, APIKey: key, Model: model, Timeout: time.Minute}), nil
}

// NewChatModel returns the configured chat model, or nil when there is
// none: model if given, else MIRA_MODEL, else the configuration's
// llm.model, at OPENAI_BASE_URL (else llm.base_url) with OPENAI_API_KEY
// (else llm.api_key) and llm.timeout.
func NewChatModel(model string, cfg *Config, getenv func(string) string) (*llm.Client, error) {
	c, err := ChatConfig(model, cfg, getenv)
	if err != nil {
		return nil, err
	}
	if !c.Configured() {
		return nil, nil
	}
	client, err := llm.New(c)
	if err != nil {
		return nil, invalidf("chat model: %v", err)
	}
	return client, nil
}

// ChatConfig returns the settings of the configured chat server and model,
// merged as NewChatModel merges them; Model is empty when none is named.
// A front end that talks to the same server itself (mira-proxy) takes the
// base URL and key from here.
func ChatConfig(model string, cfg *Config, getenv func(string) string) (llm.Config, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	c := llm.ConfigFromEnv(getenv)
	if m := strings.TrimSpace(model); m != "" {
		c.Model = m
	}
	c.Model = first(c.Model, strings.TrimSpace(cfg.LLM.Model))
	c.BaseURL = first(c.BaseURL, strings.TrimSpace(cfg.LLM.BaseURL))
	c.APIKey = first(c.APIKey, strings.TrimSpace(cfg.LLM.APIKey))
	if cfg.LLM.Timeout != "" {
		d, err := time.ParseDuration(cfg.LLM.Timeout)
		if err != nil {
			return llm.Config{}, invalidf("config llm.timeout: %v", err)
		}
		c.Timeout = d
	}
	return c, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
