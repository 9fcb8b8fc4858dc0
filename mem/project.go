package mem

import (
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/miramem/mira/internal/rawfile"
)

// Project is a detected project: its name and the directory that decided it.
type Project struct {
	Name string
	Root string
	By   string // "env", ".mira/project.yaml", "git", "go.mod", ..., or "cwd"
}

var projectMarkers = []string{"go.mod", "Cargo.toml", "package.json", "pyproject.toml"}

// DetectProject finds the project the working directory dir belongs to:
// a .mira/project.yaml in dir or an ancestor (its name field, else its
// directory's name), else the root of the enclosing git repository, else the
// nearest directory holding go.mod, Cargo.toml, package.json or
// pyproject.toml, else dir itself. env is the value of MIRA_PROJECT, which
// wins when set.
func DetectProject(dir, env string) Project {
	if env != "" {
		return Project{Name: env, Root: dir, By: "env"}
	}
	dir, _ = filepath.Abs(dir)
	if p, ok := findUp(dir, func(d string) (Project, bool) {
		f := filepath.Join(d, ".mira", "project.yaml")
		data, err := rawfile.Read(f)
		if err != nil {
			return Project{}, false
		}
		var v struct {
			Name string `yaml:"name"`
		}
		_ = yaml.Unmarshal(data, &v) // a broken file still marks the root
		name := strings.TrimSpace(v.Name)
		if name == "" {
			name = filepath.Base(d)
		}
		return Project{Name: name, Root: d, By: ".mira/project.yaml"}, true
	}); ok {
		return p
	}
	if p, ok := findUp(dir, func(d string) (Project, bool) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return Project{Name: filepath.Base(d), Root: d, By: "git"}, true
		}
		return Project{}, false
	}); ok {
		return p
	}
	if p, ok := findUp(dir, func(d string) (Project, bool) {
		for _, m := range projectMarkers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return Project{Name: filepath.Base(d), Root: d, By: m}, true
			}
		}
		return Project{}, false
	}); ok {
		return p
	}
	return Project{Name: filepath.Base(dir), Root: dir, By: "cwd"}
}

func findUp(dir string, try func(string) (Project, bool)) (Project, bool) {
	for d := dir; ; {
		if p, ok := try(d); ok {
			return p, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Project{}, false
		}
		d = parent
	}
}
