// Package llm is Mira's client for chat models behind any OpenAI-compatible
// API (OpenAI, DeepSeek, Ollama, llama.cpp, vLLM), shared by
// mira-summarize, mira-remember --extract and mira-agent. It wraps
// github.com/sashabaranov/go-openai with what those commands need and the
// library leaves to its callers:
//
//   - retries with exponential backoff and jitter on 429, 5xx, timeouts
//     and connection errors, honouring Retry-After, never on other 4xx,
//     with a per-attempt timeout and the caller's context respected at
//     every wait;
//   - usage totals per client, including cached prompt tokens;
//   - Complete for plain text, and CompleteJSON for structured output that
//     survives local models: JSON mode where the server has it, tolerant
//     extraction (ExtractJSON), validation by the caller and one repair
//     round;
//   - Stream for the agent: text, reasoning and tool-call deltas
//     assembled into a Reply while an event callback shows progress, with
//     prompt cancellation.
//
// Configuration (base URL, key, model) is resolved by the commands:
// ConfigFromEnv reads the environment variables of SPEC §4, and a Config
// without a model means no LLM is configured. Package llmtest is a fake
// server speaking the same wire format, for tests.
package llm
