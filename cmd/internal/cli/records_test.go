package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestReadRecordsEach: records parsed on several goroutines come back in
// the order of their lines, across batches; blank lines are skipped and
// counted; the error is that of the first bad line, however the batches
// were shared out, and a line too long is named.
func TestReadRecordsEach(t *testing.T) {
	var in strings.Builder
	const n = 10000
	for i := range n {
		fmt.Fprintf(&in, `{"text":"record %d"}`+"\n", i)
		if i%1000 == 0 {
			in.WriteString("\n  \n")
		}
	}
	work := func() func(int, mem.Record) (string, error) {
		return func(line int, r mem.Record) (string, error) { return r.Text, nil }
	}
	got, err := readRecordsEach(strings.NewReader(in.String()), "<stdin>", 1<<20, work)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	for i, s := range got {
		if s != fmt.Sprintf("record %d", i) {
			t.Fatalf("record %d is %q", i, s)
		}
	}

	lines := strings.Split(strings.TrimSuffix(in.String(), "\n"), "\n")
	lines[7000] = `{"text": 5}`    // a bad record late
	lines[3000] = `{"text":"bad"}` // refused by the work, earlier
	lines[9000] = `not json`
	refuse := func() func(int, mem.Record) (string, error) {
		return func(line int, r mem.Record) (string, error) {
			if r.Text == "bad" {
				return "", errors.New("refused")
			}
			return r.Text, nil
		}
	}
	_, err = readRecordsEach(strings.NewReader(strings.Join(lines, "\n")), "<stdin>", 1<<20, refuse)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 3001 || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error %v, want line 3001 refused", err)
	}
	lines[3000] = `{"text":"fine"}`
	_, err = readRecordsEach(strings.NewReader(strings.Join(lines, "\n")), "<stdin>", 1<<20, refuse)
	if !errors.As(err, &ie) || ie.Line != 7001 || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("error %v, want line 7001 invalid JSON", err)
	}

	long := `{"text":"x"}` + "\n" + `{"text":"` + strings.Repeat("y", 200) + `"}` + "\n"
	_, err = readRecordsEach(strings.NewReader(long), "<stdin>", 100, work)
	if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("error %v, want line 2 too long", err)
	}
}
