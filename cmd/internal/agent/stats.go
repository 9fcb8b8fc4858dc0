package agent

import (
	"fmt"
	"io"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/internal/text"
)

// agentStatsCost prints the cost and cache lines of /context stats: the
// conversation's, summed from the usage its replies record in their turns
// over every session, and this session's share.
func agentStatsCost(w io.Writer, st *agentloop.Stats) {
	cu := st.ConversationUsage
	from := fmt.Sprintf("%d %s", cu.Replies, agentPlural(cu.Replies, "reply", "replies"))
	if cu.Unrecorded > 0 {
		from += fmt.Sprintf("; %d older %s recorded none", cu.Unrecorded, agentPlural(cu.Unrecorded, "reply", "replies"))
	}
	switch {
	case cu.Cost != nil:
		session := 0.0
		if st.Usage.Cost != nil {
			session = *st.Usage.Cost
		}
		fmt.Fprintf(w, "cost          $%.4f this conversation (summed from the usage of its turns: %s), $%.4f this session\n", *cu.Cost, from, session)
	default:
		fmt.Fprintf(w, "cost          unknown (set --price-input, --price-cached and --price-output); %s prompt + %s completion tokens this conversation (%s)\n",
			text.Thousands(cu.PromptTokens), text.Thousands(cu.CompletionTokens), from)
	}
	fmt.Fprintf(w, "cache hits    %.0f%% of prompt tokens this conversation, %.0f%% this session\n", 100*cu.CacheHitRate(), 100*st.CacheHitRate)
}
