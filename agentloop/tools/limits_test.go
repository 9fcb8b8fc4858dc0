package tools

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// Unset limits get the documented defaults; set ones are kept, except
// that a command's default timeout is at most its maximum.
func TestLimitsDefaults(t *testing.T) {
	want := Limits{ResultBytes: 8 << 10, ResultLines: 200, HeadLines: 20, TailLines: 20, ReadLines: 2000, ReadBytes: 64 << 10,
		ReadFileBytes: 16 << 20, LineBytes: 2000, BashTimeout: 2 * time.Minute, BashMaxTimeout: 10 * time.Minute,
		BashOutputBytes: 1 << 20, ArtifactBytes: 256 << 20, GrepResults: 250, GrepMaxResults: 5000, GlobResults: 1000}
	if got := (Limits{}).withDefaults(); got != want {
		t.Errorf("defaults = %+v\nwant %+v", got, want)
	}
	set := Limits{ResultBytes: 1, ResultLines: 2, HeadLines: 3, TailLines: 4, ReadLines: 5, ReadBytes: 6, ReadFileBytes: 7,
		LineBytes: 8, BashTimeout: 9 * time.Second, BashMaxTimeout: 10 * time.Second, BashOutputBytes: 11, ArtifactBytes: 15,
		GrepResults: 12, GrepMaxResults: 13, GlobResults: 14}
	if got := set.withDefaults(); got != set {
		t.Errorf("set limits = %+v\nwant %+v", got, set)
	}
	capped := Limits{BashTimeout: time.Hour, BashMaxTimeout: time.Minute}.withDefaults()
	if capped.BashTimeout != time.Minute {
		t.Errorf("a default timeout over the maximum = %v, want the maximum", capped.BashTimeout)
	}
}

// A call made with a cancelled context reports the cancellation, even
// from a tool that does not look at its context.
func TestCallCancelled(t *testing.T) {
	f := newFixture(t)
	if err := f.reg.Register(heedless{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.reg.Call(ctx, "heedless", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a cancelled context: %v, want context.Canceled", err)
	}
	if res, err := f.reg.Call(context.Background(), "heedless", []byte(`{}`)); err != nil || res.Content != "done" {
		t.Errorf("Call = %+v, %v; want done", res, err)
	}
}

// heedless is a tool that finishes whatever its context says.
type heedless struct{}

func (heedless) Definition() openai.Tool {
	return schemaTool("heedless", "finishes", object(map[string]jsonschema.Definition{}))
}

func (heedless) Run(context.Context, json.RawMessage) (Result, error) {
	return Result{Content: "done"}, nil
}

// The notice for an unconfined bash names what is missing here.
func TestUnconfinedNotice(t *testing.T) {
	want := "Landlock is a Linux feature"
	if runtime.GOOS == "linux" {
		want = "this kernel has no Landlock"
	}
	if got := unconfinedNotice(); !strings.Contains(got, want) {
		t.Errorf("notice = %q, want it to say %q", got, want)
	}
}
