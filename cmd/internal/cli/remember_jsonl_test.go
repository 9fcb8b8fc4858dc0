package cli

import (
	"os"
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
