package mem

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// plainCases are front matters as Mira writes them, which plainMeta must
// read itself, and near misses, which it must leave to the parser.
var plainCases = []struct {
	yml   string
	plain bool
}{
	{"id: 01KDVDNA00NFRJBHA1T8EQY3E8\nkind: fact\nscope: global\ncreated_at: 2026-01-01T00:00:00Z\nproject: bench\nsource: cli\ntags: [gen, t0]\n", true},
	{"id: 01KK65QNX804E454Z5G9QFS6AF\nkind: turn\nscope: conv/load-3\ncreated_at: 2026-11-25T16:03:18.123456789Z\nsource: mira-proxy\nrole: user\n", true},
	{"id: 01JFUZZ\nkind: note\ntags: []\n", true},
	{"id: 01JFUZZ\nkind: task\nstatus: open\npriority: high\npin: always\npin_until: 2027-01-01T00:00:00Z\n", true},
	{"id: 01JFUZZ\nkind: summary\nlevel: conversation\nreplaced_by: 01JFUZY\n", true},
	{"id: 01JFUZZ\ntags: [a-b, c.d, e/f, G_h]\n", true},
	{"pin: yes\nstatus: on\nlevel: n\nid: 1h\nx: 9Z\nz: 1_2g\n", true},
	// Left to the parser.
	{"id: 0B1010\n", false},
	{"id: 0o17\n", false},
	{"id: 1.5e3\n", false},
	{"id: 01JFUZZ\ncreated_at: 2026-13-45T99:99:99Z\n", false},
	{"id: .inf\n", false},
	{"id: 01JFUZZ\nkind: fact # a comment\n", false},
	{"id: \"01JFUZZ\"\n", false},
	{"id: 01JFUZZ\n\nkind: fact\n", false},
	{"id: 01JFUZZ\r\nkind: fact\r\n", false},
	{"id: 01JFUZZ\nkind: fact\nkind: note\n", false},
	{"id: 1234\n", false},
	{"id: 0x1F\n", false},
	{"id: 1e10\n", false},
	{"id: 12_000\n", false},
	{"id: 01JFUZZ\ncreated_at: 2026-01-01\n", false},
	{"id: 01JFUZZ\ncreated_at: 2026-01-01T00:00:00+02:00\n", false},
	{"id: 01JFUZZ\npin: true\n", false},
	{"id: 01JFUZZ\npin: Null\n", false},
	{"id: 01JFUZZ\nproject: my project\n", false},
	{"id: 01JFUZZ\ntags: [a,b]\n", false},
	{"id: 01JFUZZ\ntags: [a, 1]\n", false},
	{"id: 01JFUZZ\ntags:\n  - a\n", false},
	{"id: 01JFUZZ\nkind:  fact\n", true},
	{"id: 01JFUZZ\nkind:\n", false},
	{"Id: 01JFUZZ\n", false},
	{"", false},
}

// TestPlainMeta: what plainMeta reads is what yaml.v3 reads, node for
// node, and it reads every front matter Mira writes.
func TestPlainMeta(t *testing.T) {
	for _, c := range plainCases {
		got, ok := plainMeta([]byte(c.yml))
		if ok != c.plain {
			t.Errorf("plainMeta(%q): read it %v, want %v", c.yml, ok, c.plain)
		}
		if ok {
			samePlainMeta(t, c.yml, got)
		}
	}
}

// TestPlainMetaOfWrittenEntries: entries as Marshal writes them are read
// by plainMeta, so that reading a store does not go through the parser.
func TestPlainMetaOfWrittenEntries(t *testing.T) {
	at := time.Date(2026, 11, 25, 16, 3, 18, 123000000, time.UTC)
	for _, e := range []*Entry{
		{ID: "01KDVDNA00NFRJBHA1T8EQY3E8", Kind: KindFact, Scope: "global", CreatedAt: at, Project: "bench", Source: "cli", Tags: []string{"gen", "t0"}, Body: "x"},
		{ID: "01KK65QNX804E454Z5G9QFS6AF", Kind: KindTurn, Scope: "conv/load-3", CreatedAt: at, Source: "mira-proxy", Role: "user", Body: "hello"},
		{ID: "01KK65QNX804E454Z5G9QFS6AG", Kind: KindTask, Scope: "global", CreatedAt: at, UpdatedAt: at.Add(time.Hour), Status: "open", Priority: "high", Body: "do it"},
	} {
		out, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		yml, _, err := splitFrontMatter(out)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := plainMeta(yml)
		if !ok {
			t.Errorf("plainMeta does not read what Marshal wrote:\n%s", yml)
			continue
		}
		samePlainMeta(t, string(yml), got)
	}
}

func FuzzPlainMeta(f *testing.F) {
	for _, c := range plainCases {
		f.Add([]byte(c.yml))
	}
	f.Fuzz(func(t *testing.T, yml []byte) {
		if got, ok := plainMeta(yml); ok {
			samePlainMeta(t, string(yml), got)
		}
	})
}

// samePlainMeta fails unless got is the node yaml.v3 makes of yml.
func samePlainMeta(t *testing.T, yml string, got *yaml.Node) {
	t.Helper()
	want, err := yamlMeta([]byte(yml))
	if err != nil {
		t.Fatalf("plainMeta read %q, which the parser rejects: %v", yml, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plainMeta(%q):\n got %s\nwant %s", yml, dumpNode(got), dumpNode(want))
	}
}

func dumpNode(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%s %q kind %d style %d line %d col %d\n", strings.Repeat("  ", depth), n.Tag, n.Value, n.Kind, n.Style, n.Line, n.Column)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// BenchmarkParseMeta: a memory's front matter as Mira writes it, read by
// plainMeta and by the YAML parser.
func BenchmarkParseMeta(b *testing.B) {
	yml := []byte(plainCases[0].yml)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := plainMeta(yml); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("yaml", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := yamlMeta(yml); err != nil {
				b.Fatal(err)
			}
		}
	})
}
