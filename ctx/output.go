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
// "ctx light · 1,840/4,000 tok · 12 in (3 pinned: 2 sticky, 1 leased) · 7
// out". It counts the included pins of each kind; an item included only
// because it shares an atom with a pin is no pin.
func (p *Plan) Meter() string {
	n := p.PinCounts()
	pinned, kinds := 0, ""
	for _, k := range PinKinds {
		if n[k] > 0 {
			pinned += n[k]
			kinds += fmt.Sprintf(", %d %s", n[k], k)
		}
	}
	if kinds != "" {
		kinds = ":" + kinds[1:]
	}
	return fmt.Sprintf("ctx %s · %s/%s tok · %d in (%d pinned%s) · %d out",
		p.Mode, thousands(p.Used), thousands(p.Budget), len(p.Included), pinned, kinds, len(p.Excluded))
}
