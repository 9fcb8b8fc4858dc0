package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPathConfinement(t *testing.T) {
	outside := t.TempDir()
	secretFile := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secretFile, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	allowedDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(allowedDir, "notes.txt"), []byte("allowed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.AllowPaths = []string{allowedDir} })
	f.write(t, "src/main.go", "package main\n")
	for name, target := range map[string]string{
		"link-out":      secretFile,
		"dirlink-out":   outside,
		"src/link-in":   filepath.Join(f.root, "src/main.go"),
		"dangling-out":  filepath.Join(outside, "nothing-yet"),
		"src/up-and-in": "../src",
	} {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name   string
		tool   string
		args   obj
		denied bool
	}{
		{"relative inside", "read_file", obj{"path": "src/main.go"}, false},
		{"absolute inside", "read_file", obj{"path": filepath.Join(f.root, "src/main.go")}, false},
		{"dot dot staying inside", "read_file", obj{"path": "src/../src/main.go"}, false},
		{"dot dot out", "read_file", obj{"path": "../x"}, true},
		{"dot dot out to a real file", "read_file", obj{"path": "../" + filepath.Base(outside) + "/secret.txt"}, true},
		{"absolute outside", "read_file", obj{"path": secretFile}, true},
		{"etc passwd", "read_file", obj{"path": "/etc/passwd"}, true},
		{"symlink to a file outside", "read_file", obj{"path": "link-out"}, true},
		{"through a directory symlink", "read_file", obj{"path": "dirlink-out/secret.txt"}, true},
		{"symlink inside", "read_file", obj{"path": "src/link-in"}, false},
		{"relative symlink inside", "read_file", obj{"path": "src/up-and-in/main.go"}, false},
		{"allowed path", "read_file", obj{"path": filepath.Join(allowedDir, "notes.txt")}, false},
		{"write outside", "write_file", obj{"path": "../evil.txt", "content": "x"}, true},
		{"write through a directory symlink", "write_file", obj{"path": "dirlink-out/new.txt", "content": "x"}, true},
		{"write absolute outside", "write_file", obj{"path": filepath.Join(outside, "new.txt"), "content": "x"}, true},
		{"edit through a symlink", "edit_file", obj{"path": "link-out", "old_string": "outside", "new_string": "changed"}, true},
		{"grep outside", "grep", obj{"pattern": "outside", "path": outside}, true},
		{"grep through a directory symlink", "grep", obj{"pattern": "outside", "path": "dirlink-out"}, true},
		{"glob outside", "glob", obj{"pattern": "../*/*.txt"}, true},
		{"glob absolute outside", "glob", obj{"pattern": outside + "/*.txt"}, true},
		{"glob path outside", "glob", obj{"pattern": "*.txt", "path": outside}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, tt.tool, tt.args)
			gotDenied := res.IsError && strings.Contains(res.Content, "outside the project root")
			if gotDenied != tt.denied {
				t.Errorf("%s(%v) = %+v, denied = %v, want %v", tt.tool, tt.args, res, gotDenied, tt.denied)
			}
			if !tt.denied && res.IsError {
				t.Errorf("%s(%v) failed: %s", tt.tool, tt.args, res.Content)
			}
		})
	}
	if b, _ := os.ReadFile(secretFile); string(b) != "outside\n" {
		t.Errorf("the file outside was changed to %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a file was created outside the root")
	}

	// A dangling link is replaced, not followed: writing it cannot
	// create the file outside.
	res := f.call(t, "write_file", obj{"path": "dangling-out", "content": "inside now\n"})
	if res.IsError {
		t.Fatalf("write over a dangling link: %s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(outside, "nothing-yet")); err == nil {
		t.Error("writing a dangling link created its target outside the root")
	}

	// grep over the whole root does not follow links out of it.
	res = f.call(t, "grep", obj{"pattern": "outside", "output_mode": "content"})
	if strings.Contains(res.Content, "outside\n") || strings.Contains(res.Content, "link-out:") {
		t.Errorf("grep of the root followed a link out of it: %s", res.Content)
	}
	// It follows a link to a file inside (not links to directories,
	// which could make loops).
	res = f.call(t, "grep", obj{"pattern": "package main"})
	for _, want := range []string{"src/main.go", "src/link-in"} {
		if !slices.Contains(strings.Split(res.Content, "\n"), want) {
			t.Errorf("grep of the root did not list %s: %s", want, res.Content)
		}
	}
}

func TestPolicyMatrix(t *testing.T) {
	yes := func(string, string) (Decision, error) { return AllowOnce, nil }
	no := func(string, string) (Decision, error) { return Deny, nil }
	always := func(string, string) (Decision, error) { return AllowAlways, nil }
	broken := func(string, string) (Decision, error) { return Deny, errors.New("terminal closed") }
	tests := []struct {
		name   string
		policy *Policy
		answer func(string, string) (Decision, error)
		// want is whether each of two calls of bash and then one of
		// write_file runs; asks is how often the user is asked.
		want []bool
		asks int
		msg  string // part of the first denial
	}{
		{"no policy", nil, nil, []bool{false, false, false}, 0, "no permission policy"},
		{"non-interactive", &Policy{}, nil, []bool{false, false, false}, 0, "--allow bash or --yes"},
		{"non-interactive with approver", &Policy{}, yes, []bool{false, false, false}, 0, "not interactive"},
		{"interactive without approver", &Policy{Interactive: true}, nil, []bool{false, false, false}, 0, "not interactive"},
		{"--yes", &Policy{Yes: true}, nil, []bool{true, true, true}, 0, ""},
		{"--allow bash", &Policy{Allow: map[string]bool{"bash": true}}, nil, []bool{true, true, false}, 0, "--allow write_file"},
		{"--allow bash, interactive", &Policy{Allow: map[string]bool{"bash": true}, Interactive: true}, yes, []bool{true, true, true}, 1, ""},
		{"interactive yes", &Policy{Interactive: true}, yes, []bool{true, true, true}, 3, ""},
		{"interactive no", &Policy{Interactive: true}, no, []bool{false, false, false}, 3, "the user declined this bash call"},
		{"interactive always", &Policy{Interactive: true}, always, []bool{true, true, true}, 2, ""},
		{"approver fails", &Policy{Interactive: true}, broken, []bool{false, false, false}, 3, "terminal closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ap *approverFunc
			if tt.answer != nil && tt.policy != nil {
				ap = &approverFunc{fn: tt.answer}
				tt.policy.Approver = ap
			}
			f := newFixture(t, func(c *Config) { c.Policy = tt.policy })
			calls := []struct {
				tool string
				args obj
			}{
				{"bash", obj{"command": "echo ran >> log.txt", "description": "append to the log"}},
				{"bash", obj{"command": "echo ran >> log.txt"}},
				{"write_file", obj{"path": "out.txt", "content": "written\n"}},
			}
			var firstDenial string
			for i, c := range calls {
				res := f.call(t, c.tool, c.args)
				ran := !res.Denied
				if ran != tt.want[i] {
					t.Errorf("call %d (%s): ran = %v, want %v; result %+v", i, c.tool, ran, tt.want[i], res)
				}
				if res.Denied {
					if !res.IsError {
						t.Errorf("call %d: a denied result must be an error", i)
					}
					if firstDenial == "" {
						firstDenial = res.Content
					}
				}
			}
			if tt.msg != "" {
				wantContains(t, "denial", firstDenial, tt.msg)
			}
			asks := 0
			if ap != nil {
				asks = len(ap.asked)
			}
			if asks != tt.asks {
				t.Errorf("the user was asked %d times, want %d", asks, tt.asks)
			}
			// The side effects match the decisions.
			bashRuns := 0
			if tt.want[0] {
				bashRuns++
			}
			if tt.want[1] {
				bashRuns++
			}
			log, _ := os.ReadFile(filepath.Join(f.root, "log.txt"))
			if got := strings.Count(string(log), "ran"); got != bashRuns {
				t.Errorf("bash ran %d times, want %d", got, bashRuns)
			}
			_, err := os.Stat(filepath.Join(f.root, "out.txt"))
			if written := err == nil; written != tt.want[2] {
				t.Errorf("out.txt written = %v, want %v", written, tt.want[2])
			}
			if ap != nil && len(ap.asked) > 0 && strings.HasPrefix(ap.asked[0], "bash") {
				wantContains(t, "approval summary", ap.asked[0], "bash: echo ran >> log.txt", "# append to the log")
			}
		})
	}
}

func TestReadsNeedNoApproval(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Policy = &Policy{} })
	f.write(t, "a.txt", "hello\n")
	for _, c := range []struct {
		tool string
		args obj
	}{
		{"read_file", obj{"path": "a.txt"}},
		{"glob", obj{"pattern": "*.txt"}},
		{"grep", obj{"pattern": "hello"}},
	} {
		if res := f.call(t, c.tool, c.args); res.IsError || res.Denied {
			t.Errorf("%s under a deny-all policy = %+v, want it to run", c.tool, res)
		}
	}
}

func TestApprovalCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ap := &approverFunc{fn: func(string, string) (Decision, error) {
		cancel()
		return Deny, context.Canceled
	}}
	f := newFixture(t, func(c *Config) { c.Policy = &Policy{Interactive: true, Approver: ap} })
	res, err := f.reg.Call(ctx, "bash", []byte(`{"command":"echo hi > x"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call error = %v, want context.Canceled", err)
	}
	if !res.IsError || res.Denied {
		t.Errorf("result = %+v, want an interrupted error that is not a denial", res)
	}
	if _, err := os.Stat(filepath.Join(f.root, "x")); err == nil {
		t.Error("the command ran")
	}
}

func TestNewRefusesBadRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", file, filepath.Join(t.TempDir(), "missing")} {
		if _, err := New(Config{Root: root}); err == nil {
			t.Errorf("New with root %q succeeded", root)
		}
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[Decision]string{Deny: "deny", AllowOnce: "allow once", AllowAlways: "allow always", 7: "Decision(7)"} {
		if got := d.String(); got != want {
			t.Errorf("Decision(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}
