package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRedact measures redaction of 1 MiB of ordinary command output
// with one secret in it, the cost added to a large bash result.
func BenchmarkRedact(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "ok  \tgithub.com/example/pkg%d\t0.%03ds\tcoverage: %d.%d%% of statements\n", i, i%1000, i%100, i%10)
		if i == 5000 {
			sb.WriteString("AWS_ACCESS_KEY_ID=" + fakeAWSKey(1) + "\n")
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Redact(text)
	}
}

// BenchmarkGrep measures a content search over 2000 generated Go files.
func BenchmarkGrep(b *testing.B) {
	f := newFixture(b)
	for i := range 2000 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\n", i%40)
		for j := range 40 {
			fmt.Fprintf(&sb, "func F%d_%d(x int) int {\n\treturn x * %d\n}\n\n", i, j, j)
		}
		f.write(b, fmt.Sprintf("pkg%d/file%d.go", i%40, i), sb.String())
	}
	args, _ := json.Marshal(obj{"pattern": `func F1\d\d_3\(`, "output_mode": "content", "limit": 5000})
	b.ResetTimer()
	for b.Loop() {
		res, _ := f.reg.Call(context.Background(), "grep", args)
		if res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkLongOutputArtifact runs a command printing 1,000,000 lines
// (6.9 MB) into an artifact: B/op shows that the output is streamed, not
// held whole.
func BenchmarkLongOutputArtifact(b *testing.B) {
	f := newFixture(b, func(c *Config) {
		c.Artifacts.NewID = nil
	})
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.reg.Call(b.Context(), "bash", json.RawMessage(`{"command": "seq 1 1000000"}`))
		if err != nil || len(res.Artifacts) != 2 {
			b.Fatalf("%v %v", err, res.Artifacts)
		}
	}
}
