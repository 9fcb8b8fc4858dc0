package ctx

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Prompt returns the context block to put in a prompt: Markdown, within the
// budget, empty when nothing was included. It ends with a blank line.
func (p *Plan) Prompt() string { return p.prompt }

// JSON returns the plan as one line of JSON, fields in a fixed order,
// without HTML escaping.
func (p *Plan) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode plan %s: %w", p.ID, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Meter returns the budget meter, a one-line summary such as
// "ctx light · 1,840/4,000 tok · 12 in (3 pinned) · 7 out".
func (p *Plan) Meter() string {
	pinned := 0
	for _, e := range p.Included {
		if e.Reason == ReasonPinned {
			pinned++
		}
	}
	return fmt.Sprintf("ctx %s · %s/%s tok · %d in (%d pinned) · %d out",
		p.Mode, thousands(p.Used), thousands(p.Budget), len(p.Included), pinned, len(p.Excluded))
}
