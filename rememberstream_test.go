package mira

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// streamInput is the entries of a load in three parts: new notes and facts,
// one text already in the store, one given twice (in two parts).
func streamInput() [][]*mem.Entry {
	parts := make([][]*mem.Entry, 3)
	for p := range parts {
		for i := range 20 {
			e := &mem.Entry{Body: fmt.Sprintf("streamed note %d of part %d", i, p)}
			if i%4 == 0 {
				e.Kind = mem.KindFact
			}
			parts[p] = append(parts[p], e)
		}
	}
	parts[1] = append(parts[1], &mem.Entry{Body: "the build uses make"})
	parts[2] = append(parts[2], &mem.Entry{Body: "streamed note 3 of part 0"})
	return parts
}

// feed returns a next function handing out parts one by one.
func feed(parts [][]*mem.Entry) func() ([]*mem.Entry, error) {
	return func() ([]*mem.Entry, error) {
		if len(parts) == 0 {
			return nil, nil
		}
		p := parts[0]
		parts = parts[1:]
		return p, nil
	}
}

// TestRememberStream: a load in parts stores what Remember stores of the
// same entries, in one commit with the same subject, and reports the same
// items in the same order.
func TestRememberStream(t *testing.T) {
	ctx := t.Context()
	a, b := open(t, false), open(t, false)
	for _, m := range []*Memory{a, b} {
		if _, err := m.Remember(ctx, []*mem.Entry{{Body: "the build uses make"}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var want []*mem.Entry
	for _, p := range streamInput() {
		want = append(want, p...)
	}
	res, err := a.Remember(ctx, want, RememberOptions{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var got []Remembered
	commit, err := b.RememberStream(ctx, feed(streamInput()), RememberOptions{Source: "test"}, func(r Remembered) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if commit == "" || strings.TrimSpace(gitOut(t, b.Root(), "rev-parse", "HEAD")) != commit {
		t.Fatalf("commit %q is not the head", commit)
	}
	say := func(items []Remembered) []string {
		var out []string
		for _, it := range items {
			out = append(out, fmt.Sprintf("%s %s %v %s", it.Entry.Kind, it.Entry.Body, it.Duplicate, it.Entry.Source))
			if it.Entry.ID == "" || it.Entry.Path == "" {
				t.Errorf("%q has no id or path", it.Entry.Body)
			}
		}
		return out
	}
	if g, w := say(got), say(res.Items); !slices.Equal(g, w) {
		t.Errorf("items:\n got %q\nwant %q", g, w)
	}
	subject := func(m *Memory) string { return gitOut(t, m.Root(), "log", "-1", "--format=%s%n%b") }
	if g, w := subject(b), subject(a); g != w {
		t.Errorf("commit message %q, Remember's %q", g, w)
	}
	files := func(m *Memory) int {
		return strings.Count(gitOut(t, m.Root(), "ls-tree", "-r", "--name-only", "HEAD", "entries"), "\n")
	}
	if g, w := files(b), files(a); g != w || g != 61 {
		t.Errorf("%d files committed, Remember's %d, want 61", g, w)
	}
	if out := gitOut(t, b.Root(), "status", "--porcelain"); out != "" {
		t.Errorf("git status:\n%s", out)
	}
	hits, err := b.Recall(ctx, Query{Text: "streamed note 7 of part 2", K: 1})
	if err != nil || len(hits) == 0 || hits[0].Text != "streamed note 7 of part 2" {
		t.Errorf("recall after the load: %v, %v", hits, err)
	}
}

// TestRememberStreamAllOrNothing: a refused entry in a later part, an
// error from next, or a reporter's error leave the store as it was, the
// earlier parts' files gone.
func TestRememberStreamAllOrNothing(t *testing.T) {
	ctx := t.Context()
	m := open(t, false)
	if _, err := m.Remember(ctx, []*mem.Entry{{Body: "the build uses make"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, m.Root(), "rev-parse", "HEAD")
	files := gitOut(t, m.Root(), "ls-files", "--others", "--cached")
	boom := errors.New("boom")
	for _, c := range []struct {
		name   string
		parts  func() [][]*mem.Entry
		next   error
		stored error
		want   func(error) bool
	}{
		{name: "a secret in the third part", parts: func() [][]*mem.Entry {
			p := streamInput()
			p[2][5].Body = "the key is " + stripeKey
			return p
		}, want: func(err error) bool { return secretErr(err) != nil }},
		{name: "an error reading the third part", parts: streamInput, next: boom, want: func(err error) bool { return errors.Is(err, boom) }},
		{name: "an error reporting", parts: streamInput, stored: boom, want: func(err error) bool { return errors.Is(err, boom) }},
	} {
		parts := c.parts()
		next := feed(parts)
		calls := 0
		if c.next != nil {
			next = func() ([]*mem.Entry, error) {
				if calls++; calls == 3 {
					return nil, c.next
				}
				return feed(parts[calls-1:])()
			}
		}
		reported := 0
		_, err := m.RememberStream(ctx, next, RememberOptions{}, func(Remembered) error {
			if reported++; reported == 30 && c.stored != nil {
				return c.stored
			}
			return nil
		})
		if !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
		if got := gitOut(t, m.Root(), "rev-parse", "HEAD"); got != head {
			t.Errorf("%s: committed", c.name)
		}
		if got := gitOut(t, m.Root(), "ls-files", "--others", "--cached"); got != files {
			t.Errorf("%s: files left:\n%s", c.name, got)
		}
	}
	if _, err := m.RememberStream(ctx, feed(nil), RememberOptions{}, func(Remembered) error { return nil }); err == nil {
		t.Error("an empty stream was stored")
	}
}
