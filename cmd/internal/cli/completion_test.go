package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every command's completion script, in every shell, offers each of its
// flags and subcommands, and the bash one is valid bash.
func TestCompletionOffersEveryFlag(t *testing.T) {
	for name, grammar := range manCommands() {
		for _, shell := range Shells {
			t.Run(name+"/"+shell, func(t *testing.T) {
				var out, errb bytes.Buffer
				o := &IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
				if code := Main(name, "", grammar, []string{"--completion=" + shell}, o); code != 0 {
					t.Fatalf("%s --completion=%s: exit %d: %s", name, shell, code, errb.String())
				}
				script := out.String()
				p, err := newParser(name, "", grammar, configVars(&Config{}, o.Getenv), o)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range flagsOf(p.k.Model.Node) {
					for _, n := range f.names {
						want := n
						if shell == "fish" {
							want = "-l " + strings.TrimPrefix(n, "--")
							if !strings.HasPrefix(n, "--") {
								want = "-s " + strings.TrimPrefix(n, "-")
							}
						}
						if !strings.Contains(script, want) {
							t.Errorf("%s completion of %s lacks %s", shell, name, want)
						}
					}
				}
				for _, c := range subcommands(p.k.Model.Node) {
					if !strings.Contains(script, c.Name) {
						t.Errorf("%s completion of %s lacks the subcommand %s", shell, name, c.Name)
					}
				}
				if _, err := exec.LookPath(shell); err == nil {
					f := filepath.Join(t.TempDir(), "script")
					if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
						t.Fatal(err)
					}
					if out, err := exec.Command(shell, "-n", f).CombinedOutput(); err != nil {
						t.Errorf("%s -n: %v\n%s", shell, err, out)
					}
				}
			})
		}
	}
}

func TestCompletionUnknownShell(t *testing.T) {
	var out, errb bytes.Buffer
	o := &IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	if code := Main("mira-forget", "", &ForgetCmd{}, []string{"--completion=tcsh"}, o); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(errb.String(), `"tcsh" is not one of bash, zsh, fish`) {
		t.Errorf("stderr = %q", errb.String())
	}
}
