// Package codefmt writes the code index's answers as plain text for a
// model to read: compact, one result per block, every place as path:line
// so that it can be asked about again (the agent's code tool, mira-mcp's
// code tools).
package codefmt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/miramem/mira"
)

// Qualified is a card's name with its parent: "Command.Execute".
func Qualified(c mira.CodeCard) string {
	switch {
	case c.Name == "":
		return c.Path
	case c.Parent != "":
		return c.Parent + "." + c.Name
	}
	return c.Name
}

// Place is path:line, or path:line-end for a span.
func Place(path string, line, end int) string {
	switch {
	case line <= 0:
		return path
	case end > line:
		return path + ":" + strconv.Itoa(line) + "-" + strconv.Itoa(end)
	}
	return path + ":" + strconv.Itoa(line)
}

func stale(s bool) string {
	if s {
		return " (changed on disk since indexed)"
	}
	return ""
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

// Card writes one definition: its kind, name and place, signature, doc,
// and snippet or body.
func Card(c mira.CodeCard) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at %s%s\n", c.Kind, Qualified(c), Place(c.Path, c.Line, c.EndLine), stale(c.Stale))
	if c.Module != "" || c.Lang != "" {
		fmt.Fprintf(&b, "module %s, %s\n", c.Module, c.Lang)
	}
	if c.Signature != "" {
		b.WriteString(c.Signature + "\n")
	}
	b.WriteString(indent(c.Doc, "// "))
	if c.Snippet != "" {
		b.WriteString("```\n" + strings.TrimRight(c.Snippet, "\n") + "\n```\n")
	}
	if len(c.Memories) > 0 {
		fmt.Fprintf(&b, "memories about it: %s\n", strings.Join(c.Memories, "; "))
	}
	return b.String()
}

// Symbols writes search hits, one a line.
func Symbols(hits []mira.CodeSymbolHit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s  %s %s%s\n", Place(h.Path, h.Line, 0), h.Kind, Qualified(h.Card), stale(h.Stale))
		if h.Signature != "" {
			fmt.Fprintf(&b, "    %s\n", h.Signature)
		}
	}
	return b.String()
}

// Edges writes call sites, indented by depth: "path:line  From -> To".
func Edges(edges []mira.CodeEdge) string {
	var b strings.Builder
	for _, e := range edges {
		fmt.Fprintf(&b, "%s%s  %s -> %s%s\n", strings.Repeat("  ", max(e.Depth-1, 0)), Place(e.Path, e.Line, 0),
			Qualified(e.From), Qualified(e.To), stale(e.From.Stale))
	}
	return b.String()
}

// Touchpoints writes ranked definitions with their signature, the first
// line of their doc, why each was chosen and, with excerpts, the code
// around them.
func Touchpoints(tps []mira.CodeTouchpoint, excerpts bool) string {
	var b strings.Builder
	for i, t := range tps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s %s at %s (score %.3f)%s\n", t.Kind, Qualified(t.Card), Place(t.Path, t.Line, t.EndLine), t.Score, stale(t.Stale))
		if t.Signature != "" {
			b.WriteString(t.Signature + "\n")
		}
		if doc, _, _ := strings.Cut(strings.TrimSpace(t.Doc), "\n"); doc != "" {
			b.WriteString("// " + doc + "\n")
		}
		if len(t.Why) > 0 {
			fmt.Fprintf(&b, "why: %s\n", strings.Join(t.Why, "; "))
		}
		if excerpts && t.Excerpt != "" {
			b.WriteString("```\n" + strings.TrimRight(t.Excerpt, "\n") + "\n```\n")
		}
	}
	return b.String()
}

// Files writes ranked files, one a line, with why.
func Files(hits []mira.CodeFileHit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s (score %.3f)%s", h.Path, h.Score, stale(h.Stale))
		if len(h.Why) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(h.Why, "; "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Cochange writes the files that changed together with one.
func Cochange(cs []mira.CodeCochange) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s  %d commits together, weight %.2f", c.Path, c.Count, c.Weight)
		if !c.Last.IsZero() {
			fmt.Fprintf(&b, ", last %s", c.Last.UTC().Format("2006-01-02"))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
