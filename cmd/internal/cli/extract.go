package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/miramem/mira"
	"github.com/miramem/mira/extract"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// runExtract is mira-remember --extract: facts from turns, reconciled with
// the memories they touch, in one commit (see mira.Memory.Extract).
func (c *RememberCmd) runExtract(ctx context.Context, o *IO) error {
	if err := c.checkExtractFlags(); err != nil {
		return err
	}
	scope := cmp.Or(c.Scope, mem.DefaultScope)
	req := mira.ExtractRequest{
		Scope: scope, MaxTurns: c.MaxTurns, Kind: c.Kind, Tags: c.Tag,
		AllowSecret: c.AllowSecret, DryRun: c.DryRun,
	}
	if c.MaxTurns == 0 {
		req.MaxTurns = -1 // for the library 0 is the default; --max-turns 0 reads nothing
	}
	proj := project(o, "")
	// Refused input must not wait for a model or create the store.
	if err := req.Check(proj); err != nil {
		return extractError(err)
	}
	model, err := c.chatModel(o)
	if err != nil {
		return err
	}
	if req.Turns, req.Source, err = c.extractInput(o); err != nil {
		return err
	}
	req.Chat = model
	m, err := c.open(ctx, o, "mira-remember", proj)
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.Extract(ctx, req)
	if err != nil {
		return extractError(err)
	}
	if req.Turns == nil {
		if res.TurnsRead == 0 {
			if o.ErrTTY {
				o.Warnf("nothing to extract: no user turns in scope %s that were not read before", scope)
			}
			return nil
		}
		if res.Left > 0 && o.ErrTTY {
			o.Warnf("reading the oldest %d of %d new user turns; run again for the rest", res.TurnsRead, res.TurnsRead+res.Left)
		}
	}
	if c.DryRun {
		return writeOps(o, res.Ops)
	}
	if o.ErrTTY {
		n := res.Counts
		o.Warnf("%d facts: %d added, %d updated, %d deleted, %d already known", res.Facts, n["add"], n["update"], n["delete"], n["none"])
	}
	return writeEntries(o, c.Output, res.Added)
}

// extractError words a refused secret as mira-remember does without
// --extract.
func extractError(err error) error {
	var se *mira.SecretError
	if errors.As(err, &se) {
		return usagef("%s", se.Explain("use --allow-secret if you are sure"))
	}
	return asFlag(err, map[string]string{"scope": "--scope", "kind": "--kind", "max_turns": "--max-turns"})
}

// checkExtractFlags refuses the options that make no sense with --extract.
func (c *RememberCmd) checkExtractFlags() error {
	for _, f := range []struct {
		set  bool
		name string
	}{{c.Lines, "--lines"}, {c.Replace != "", "--replace"}, {c.Pin != "", "--pin"}, {c.Until != "", "--until"}, {c.Role != "", "--role"}} {
		if f.set {
			return usagef("%s cannot be used with --extract", f.name)
		}
	}
	return nil
}

// chatModel returns the configured chat model (see chatClient); --extract
// cannot work without one.
func (c *RememberCmd) chatModel(o *IO) (*llm.Client, error) {
	client, err := mira.NewChatModel(c.Model, o.config(), o.Getenv)
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, usagef("--extract needs a chat model and none is configured: set MIRA_MODEL (or pass --model, or llm.model in the config), and OPENAI_BASE_URL for a server other than OpenAI (e.g. http://localhost:11434/v1 for Ollama)")
	}
	return client, nil
}

// extractInput reads the turns to extract from: the arguments as one user
// message, else stdin as JSONL records (with --jsonl, or when its first
// line is a JSON object) or as one plain-text user message. It returns nil
// turns when there is no input, which means the store's turns. src names
// the input for the commit's Mira-Source trailer.
func (c *RememberCmd) extractInput(o *IO) (turns []extract.Turn, src string, err error) {
	if len(c.Text) > 0 {
		if c.JSONL {
			return nil, "", usagef("give the text as arguments or on stdin with --jsonl, not both")
		}
		return []extract.Turn{{Role: "user", Text: strings.Join(c.Text, " ")}}, "arguments", nil
	}
	if o.InTTY {
		if c.JSONL {
			return nil, "", usagef("--jsonl reads stdin, which is a terminal")
		}
		return nil, "", nil
	}
	data, err := io.ReadAll(o.In)
	if err != nil {
		return nil, "", fmt.Errorf("read stdin: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if c.JSONL {
			return nil, "", usagef("nothing to extract: no records on stdin")
		}
		return nil, "", nil
	}
	if !c.JSONL && !firstLineIsObject(data) {
		return []extract.Turn{{Role: "user", Text: string(data)}}, "stdin", nil
	}
	users := 0
	bad := readRecords(bytes.NewReader(data), "<stdin>", true, func(_ int, r mem.Record) error {
		if strings.TrimSpace(r.Text) == "" {
			return errors.New(`field "text" is missing or empty`)
		}
		t := extract.Turn{Role: strings.ToLower(strings.TrimSpace(r.Role)), Text: r.Text}
		if r.CreatedAt != nil {
			t.Time = *r.CreatedAt
		}
		if t.User() {
			users++
		}
		turns = append(turns, t)
		return nil
	})
	if len(bad) > 0 {
		return nil, "", bad[0]
	}
	if users == 0 {
		return nil, "", usagef("nothing to extract: no user messages on stdin (records with role user, or no role)")
	}
	return turns, "stdin", nil
}

// firstLineIsObject reports whether the first non-blank line of data is a
// JSON object: then stdin is read as JSONL, and a bad later line is an
// error rather than plain text.
func firstLineIsObject(data []byte) bool {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		return line[0] == '{' && json.Unmarshal(line, &obj) == nil
	}
	return false
}
