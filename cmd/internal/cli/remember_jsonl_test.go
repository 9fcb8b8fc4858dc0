package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestJSONLSecretNamesItsRecord: a record of a --jsonl load refused for a
// credential in its text is named by its line of the input, as any other
// bad record is, and nothing is stored: with a million records, "line 1,
// column 40" of a text alone leaves the user nothing to look for.
func TestJSONLSecretNamesItsRecord(t *testing.T) {
	x := newSumEnv(t)
	in := `{"text": "the cache warms at start"}
{"text": "the deploy runs on fridays"}
{"text": "the token is ghp_R8x2Lq7Vt4Nw9Zp3Ks6Hd1Fj5Gm0Bc8Ya2Ue, do not share it"}
`
	code, _, errs := x.run(Remember, in, "--jsonl")
	if code == 0 {
		t.Fatalf("a record with a password was stored")
	}
	if !strings.Contains(errs, "<stdin>:3") || strings.Contains(errs, "ghp_R8x2Lq7Vt4Nw9Zp3Ks6Hd1Fj5Gm0Bc8Ya2Ue") {
		t.Errorf("the error does not name the record at <stdin>:3, or shows the secret:\n%s", errs)
	}
	if !strings.Contains(errs, "--allow-secret") {
		t.Errorf("the error does not say how to store it anyway:\n%s", errs)
	}
	if _, err := os.Stat(x.home); err == nil {
		t.Errorf("the refused load created the store")
	}
	if code, _, errs := x.run(Remember, in, "--jsonl", "--allow-secret"); code != 0 {
		t.Errorf("--allow-secret: exit %d\n%s", code, errs)
	}
}

// TestJSONLInParts: a --jsonl load stored a part at a time prints what it
// stored, in the order of the input, once committed in one commit; a text
// given twice (in two parts) is stored once, one already in the store not
// at all (and said so); a bad record in the last part is named by its
// line, blank lines counted, and nothing is stored.
func TestJSONLInParts(t *testing.T) {
	defer func(n int) { streamPart = n }(streamPart)
	streamPart = 4
	x := newSumEnv(t)
	x.ok(Remember, "", "--kind", "fact", "the build uses make")
	var in strings.Builder
	var want []string
	for i := range 13 {
		fmt.Fprintf(&in, "{\"text\": \"loaded note %d\"}\n", i)
		want = append(want, fmt.Sprintf("loaded note %d", i))
		if i == 5 {
			in.WriteString("\n{\"text\": \"the build uses make\", \"kind\": \"fact\"}\n")
			want = append(want, "the build uses make")
		}
	}
	in.WriteString("{\"text\": \"loaded note 2\"}\n")
	code, out, errs := x.run(Remember, in.String(), "--jsonl", "--output", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ ID, Text, Path string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		if _, err := os.Stat(filepath.Join(x.home, filepath.FromSlash(r.Path))); err != nil {
			t.Errorf("%s: %v", r.Text, err)
		}
		got = append(got, r.Text)
	}
	if !slices.Equal(got, want) {
		t.Errorf("printed:\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(errs, "already remembered as") {
		t.Errorf("the duplicate of a stored memory was not said:\n%s", errs)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", x.home}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if log := git("log", "--format=%s"); strings.Count(log, "\n") != 3 || !strings.HasPrefix(log, "remember: 13 memories (13 note)\n") {
		t.Errorf("commits:\n%s", log)
	}
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	head := git("rev-parse", "HEAD")

	bad := in.String() + "\n{\"text\": \"\"}\n"
	code, out, errs = x.run(Remember, strings.ReplaceAll(bad, "loaded", "other"), "--jsonl")
	if code != 2 || out != "" || !strings.Contains(errs, "<stdin>:18:") {
		t.Errorf("a bad last record: exit %d, output %q\n%s", code, out, errs)
	}
	if git("rev-parse", "HEAD") != head || git("status", "--porcelain") != "" {
		t.Error("a refused load changed the store")
	}
}
