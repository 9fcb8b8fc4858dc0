package cli

import (
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/summarize"
)

// Config is the configuration file's contents (see mira.Config).
type Config = mira.Config

func loadConfig(getenv func(string) string) (*Config, error) { return mira.LoadConfig(getenv) }

// KongVars are the kong defaults of the configuration c (see configVars),
// for grammars defined in other packages.
func KongVars(c *Config, getenv func(string) string) kong.Vars { return configVars(c, getenv) }

// configVars turns the configuration into kong defaults, falling back to the
// built-in ones.
func configVars(c *Config, getenv func(string) string) kong.Vars {
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
		"home":         defaultHome(c, getenv),
		"output":       or(c.Output, "auto"),
		"lock_timeout": or(c.LockTimeout, "10s"),
		"recall_k":     k,
		"recall_mode":  or(c.Recall.Mode, "hybrid"),
		"serve_idle":   or(c.Recall.ServeIdle, mira.DefaultServeIdle.String()),

		"recall_recency_weight": orFloat(c.Recall.RecencyWeight, index.DefaultRanking.Recency),
		"recall_mmr_lambda":     orFloat(c.Recall.MMRLambda, index.DefaultRanking.MMRLambda),
		"recall_min_score":      orFloat(c.Recall.MinScore, index.DefaultRanking.MinScore),
		"embed":                 or(c.Embed.Name, mira.BuiltinEmbedder),
		"context_mode":          or(c.Context.Mode, "light"),
		"encoding":              or(c.Context.Encoding, plan.DefaultEncoding),
		"context_log":           strconv.FormatBool(c.Context.Log),

		"agent_conversation":     or(c.Agent.Conversation, agentloop.DefaultConversation),
		"agent_max_steps":        strconv.Itoa(cmpOrInt(c.Agent.MaxSteps, agentloop.DefaultMaxSteps)),
		"agent_buffer_tokens":    strconv.Itoa(cmpOrInt(c.Agent.BufferTokens, agentloop.DefaultBufferTokens)),
		"agent_context_budget":   strconv.Itoa(cmpOrInt(c.Agent.ContextBudget, agentloop.DefaultContextBudget)),
		"agent_recall_k":         strconv.Itoa(cmpOrInt(c.Agent.RecallK, agentloop.DefaultRecallK)),
		"agent_effort":           or(c.Agent.Effort, "auto"),
		"agent_summarizer":       or(c.Agent.Summarizer, "model"),
		"agent_extract":          strconv.FormatBool(c.Agent.Extract == nil || *c.Agent.Extract),
		"agent_allow":            strings.Join(c.Agent.Allow, ","),
		"agent_allow_git_config": strconv.FormatBool(c.Agent.AllowGitConfig),
		"agent_plan_log":         strconv.FormatBool(c.Agent.PlanLog == nil || *c.Agent.PlanLog),
		"max_entries":            strconv.Itoa(cmpOrInt(c.Summarize.MaxEntries, summarize.DefaultMaxEntries)),
	}
}

// orFloat formats *v, or def when v is nil.
func orFloat(v *float64, def float64) string {
	if v != nil {
		def = *v
	}
	return formatFloat(def)
}

// cmpOrInt returns v, or def when v is not positive.
func cmpOrInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// defaultHome is --home's default: the store paths.Home names when neither
// the flag nor $MIRA_HOME is given (kong reads those two itself).
func defaultHome(c *Config, getenv func(string) string) string {
	withoutEnv := func(k string) string {
		if k == "MIRA_HOME" {
			return ""
		}
		return getenv(k)
	}
	h, _ := paths.Home("", withoutEnv, func() (string, error) { return c.Home, nil })
	return h
}
