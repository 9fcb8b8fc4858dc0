package agent

import (
	"strings"
	"testing"

	"github.com/miramem/mira/llm/llmtest"
)

// /context stats gives the conversation's cost, not the session's alone:
// two earlier sessions' replies are summed from the usage their turns
// record, and the output says so.
func TestAgentContextStatsConversationCost(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Text("one").WithUsage(1000, 100, 400),
		llmtest.Text("two").WithUsage(3000, 300, 2000),
	)
	prices := []string{"--price-input", "2", "--price-cached", "1", "--price-output", "10"}
	x.ok("", append([]string{"-p", "first question"}, prices...)...)
	x.ok("", append([]string{"-p", "second question"}, prices...)...)
	rows := jsonLines(t, x.ok("", append(prices, "--output", "jsonl", "context", "stats")...))
	cu, _ := rows[0]["conversation_usage"].(map[string]any)
	// (600+1000)*2 + (400+2000)*1 + (100+300)*10 = 3200+2400+4000 per million.
	if cu["replies"] != 2.0 || cu["prompt_tokens"] != 4000.0 || cu["cached_tokens"] != 2400.0 || cu["completion_tokens"] != 400.0 || cu["cost_usd"] != 0.0096 {
		t.Errorf("conversation_usage = %v", cu)
	}
	out := x.ok("", append(prices, "--output", "text", "context", "stats")...)
	if !strings.Contains(out, "cost          $0.0096 this conversation (summed from the usage of its turns: 2 replies), $0.0000 this session\n") ||
		!strings.Contains(out, "cache hits    60% of prompt tokens this conversation, 0% this session\n") {
		t.Errorf("context stats =\n%s", out)
	}
}
