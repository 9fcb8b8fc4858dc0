// Package agent is mira-agent's terminal front end: its grammar, the
// interactive session (line editing, approvals, Ctrl-C), the slash
// commands, the printing of the agent's events as text or JSONL, and the
// adapter that gives package agentloop the memory through package mira.
// The conversation engine itself is package agentloop; flags, streams,
// configuration and exit codes come from package cli like every command's.
package agent
