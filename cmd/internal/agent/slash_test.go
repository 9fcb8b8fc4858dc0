package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/mem"
)

// rememberAll stores each /remember line with mira-agent -p, without a
// model, and returns the ids in order: the memories a session test starts
// from.
func (x *agentEnv) rememberAll(lines ...string) []string {
	x.t.Helper()
	model, had := x.env["MIRA_MODEL"]
	delete(x.env, "MIRA_MODEL")
	defer func() {
		if had {
			x.env["MIRA_MODEL"] = model
		}
	}()
	var ids []string
	for _, line := range lines {
		var rec mem.Record
		if err := json.Unmarshal([]byte(x.ok("", "-p", line, "--output", "jsonl")), &rec); err != nil {
			x.t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	return ids
}

// wantUsageErrors runs each slash command of cases in the session and
// wants a *cli.UsageError whose text holds the case's value.
func wantUsageErrors(t *testing.T, s *agentSession, cases map[string]string) {
	t.Helper()
	for arg, want := range cases {
		_, err := s.slash(t.Context(), arg)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error with %q", arg, err, want)
		}
	}
}
