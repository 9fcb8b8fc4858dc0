// Package agentloop is mira-agent's engine: one never-ending conversation
// with a chat model that calls tools, kept in the Mira store.
//
// # The loop
//
// Agent.Send takes one user message and runs the tool loop: it streams a
// chat completion (text and tool-call deltas arrive through the Model),
// stores the assistant message, runs the tool calls it asked for through
// the Toolbox one after the other, stores each result, and asks again,
// until the model answers without calling a tool or Config.MaxSteps
// requests have been made. Cancelling the context stops the request or
// the tool that is running; what had arrived is still stored (marked
// interrupted), every tool call is answered, and the next message carries
// on from there.
//
// # The conversation in the store
//
// Every message is a turn entry in the conversation's scope
// (Config.Conversation, "chat" by default), one git commit each:
//
//	entries/<scope>/turns/user/…        the user's messages
//	entries/<scope>/turns/assistant/…   the model's, with tool_calls
//	entries/<scope>/turns/tool/…        tool results, with tool_call_id
//
// Besides the usual front matter (kind turn, role, source agent, project),
// an assistant turn that called tools lists them in tool_calls (id, name,
// arguments as JSON text); its body is the text the model wrote, or, when
// it wrote none, a line per call with no_text: true. The model's reasoning
// for those calls, when the server sent it, is kept in reasoning and sent
// back with them, as thinking models that call tools require. A tool turn
// has tool_call_id and tool_name, and is_error, denied and artifacts when
// they apply. Text, tool call ids and names included, is passed through
// tools.Redact before it is stored, so a secret is stored masked rather
// than refused. Turns are committed through Config.Store's AppendTurns
// (mira.Memory's), the one writer of turns in the store, with the
// artifacts of a tool's result in the same commit. A restarted agent
// rebuilds the exact messages from these files, so the conversation goes
// on where it stopped.
//
// # What the model is sent
//
// Each request is laid out so that a provider's prompt cache keeps
// matching its beginning:
//
//  1. a system message with the instructions and tool guidance, the same
//     bytes in every request;
//  2. a system message with the standing context, planned by package ctx:
//     the project, pins, open corrections, goals and tasks, and the
//     conversation's rolling summary. It changes only when one of them
//     does;
//  3. the buffer: every turn the summaries do not cover, as real chat
//     messages, oldest first (summarize.Load: summary plus buffer is the
//     whole conversation, with no gap), after the newest few turns the
//     summary covers (the tail), so that the exchange a summary was made
//     in the middle of is still there word for word;
//  4. the current user message, preceded by the memories recalled for it
//     (also planned by ctx), which change from message to message;
//  5. the messages of the current exchange: tool calls and results.
//
// When the buffer grows past Config.BufferTokens, its older part is
// handed to the Summarizer between two exchanges and leaves the buffer
// (it summarizes through the cut, so the newest exchanges
// stay in the buffer; /summarize takes all of it, and the tail keeps the
// newest turns);
// the summary then appears in the standing context. Pins and corrections
// are standing material, never conversation, so a summary never swallows
// them.
//
// # Models
//
// The reasoning effort of a message is chosen by ClassifyEffort (or fixed
// by Config.Effort) and sent only to models that take it
// (llm.AcceptsEffort). Usage is counted per request, with the cached part
// of the prompt, and priced with Config.Prices.
package agentloop
