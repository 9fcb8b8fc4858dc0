package relay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestAppendRequest: the hand-written encoder writes what encoding/json
// writes, byte for byte, for the strings an environment can hold.
func TestAppendRequest(t *testing.T) {
	odd := []string{"", "plain", `quo"te`, `back\slash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
		"ünïcödé ✓ 🙂", "bad \xff\xfe utf-8", "cut \xe2\x82", "<html>&amp;", "\u2028\u2029"}
	for _, r := range []Request{
		{Command: "mira-recall"},
		{Command: "mira-recall", Args: []string{"-k", "3", "auth"}, Dir: "/home/u/src", Env: []string{"A=1", "B="}, OutTTY: true},
		{Command: "mira-recall", Args: odd, Dir: odd[7], Env: odd, ErrTTY: true},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got := appendRequest(nil, r)
		if string(got) != string(want) {
			// encoding/json escapes <, >, & and U+2028/9 for HTML; both
			// decode to the same request, which is what matters.
			var back Request
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("%s does not decode: %v", got, err)
			}
			var wantBack Request
			json.Unmarshal(want, &wantBack)
			if d := cmp.Diff(wantBack, back); d != "" {
				t.Errorf("decoded request differs (-json +ours):\n%s", d)
			}
		}
	}
}

// TestConfigHome compares the client's reading of home: with a YAML
// parser's wherever the client says it is sure.
func TestConfigHome(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"", "", true},
		{"output: text\n", "", true},
		{"home: /srv/mira\n", "/srv/mira", true},
		{"home: /srv/mira # the team's\n", "/srv/mira", true},
		{"home:   ~/notes/mira  \n", "~/notes/mira", true},
		{"home: \"/with space/m\"\n", "/with space/m", true},
		{"home: '/single/q' # c\n", "/single/q", true},
		{"home: /a#b\n", "/a#b", true},
		{"\ufeffhome: /bom\n", "/bom", true},
		{"home: /crlf\r\noutput: text\r\n", "/crlf", true},
		{"recall:\n  k: 5\nhome: /after/block\n", "/after/block", true},
		{"recall:\n  home: /nested\n", "", true},
		{"home:\n", "", false},
		{"home: # none\n", "", false},
		{"home: \"esc\\t\"\n", "", false},
		{"home: 'it''s'\n", "", false},
		{"home: [a]\n", "", false},
		{"home: &x /anchor\n", "", false},
		{"home: !!str /tag\n", "", false},
		{"home: |\n  /block\n", "", false},
		{"home: /a\nhome: /b\n", "", false},
		{"home:/glued\n", "", false},
		{"home: \"unterminated\n", "", false},
		{"---\nhome: /doc\n", "", false},
		{"home: a: b\n", "", false},
		{"home: 'q' junk\n", "", false},
	}
	for _, c := range cases {
		got, ok := configHome([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("configHome(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
		if !ok {
			continue
		}
		var y struct {
			Home string `yaml:"home"`
		}
		if err := yaml.Unmarshal([]byte(c.in), &y); err != nil {
			t.Errorf("configHome(%q) is sure of %q, but YAML says: %v", c.in, got, err)
		} else if y.Home != got {
			t.Errorf("configHome(%q) = %q, YAML reads %q", c.in, got, y.Home)
		}
	}
}

// TestConfigServe compares the client's reading of recall.serve with a
// YAML parser's wherever the client says it is sure.
func TestConfigServe(t *testing.T) {
	cases := []struct {
		in     string
		on, ok bool
	}{
		{"", true, true},
		{"home: /x\n", true, true},
		{"recall:\n  k: 5\n", true, true},
		{"recall:\n  serve: false\n", false, true},
		{"recall:\n  serve: true\n", true, true},
		{"recall:\n  k: 5\n  serve: false # not here\nhome: /x\n", false, true},
		{"recall:\r\n    serve: false\r\n", false, true},
		{"recall: # the search\n  serve: false\n", false, true},
		{"serve: false\nrecall:\n  k: 5\n", true, true},
		{"agent:\n  serve: false\n", true, true},
		{"recall:\n  k: 5\nagent:\n  serve: false\n", true, true},
		{"recall:\n  mode: hybrid\n  k:\n    serve: false\n", true, true},
		{"recall: {serve: false}\n", true, false},
		{"recall:\n  serve: no\n", true, false},
		{"recall:\n  serve:\n", true, false},
		{"recall:\n  serve:false\n", true, false},
		{"recall:\n  serve: false\n  serve: true\n", true, false},
		{"---\nrecall:\n  serve: false\n", true, false},
		{"recall:\n\tserve: false\n", true, false},
	}
	for _, c := range cases {
		on, ok := configServe([]byte(c.in))
		if on != c.on || ok != c.ok {
			t.Errorf("configServe(%q) = %v, %v; want %v, %v", c.in, on, ok, c.on, c.ok)
		}
		if !ok {
			continue
		}
		var y struct {
			Recall struct {
				Serve *bool `yaml:"serve"`
			} `yaml:"recall"`
		}
		if err := yaml.Unmarshal([]byte(c.in), &y); err != nil {
			continue // a configuration the command refuses: nothing to compare
		}
		if want := y.Recall.Serve == nil || *y.Recall.Serve; want != on {
			t.Errorf("configServe(%q) = %v, YAML reads %v", c.in, on, want)
		}
	}
}
