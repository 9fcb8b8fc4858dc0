package mira

import (
	"slices"
	"testing"
)

func TestNewestPerDir(t *testing.T) {
	paths := []string{
		"entries/global/goals/1__a.md",
		"entries/global/tasks/1__b.md", "entries/global/tasks/2__c.md", "entries/global/tasks/3__d.md",
		"entries/shop/tasks/1__e.md", "entries/shop/tasks/2__f.md",
	}
	got := newestPerDir(paths, 2)
	want := []string{
		"entries/global/goals/1__a.md",
		"entries/global/tasks/2__c.md", "entries/global/tasks/3__d.md",
		"entries/shop/tasks/1__e.md", "entries/shop/tasks/2__f.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("newestPerDir = %v, want %v", got, want)
	}
	if got := newestPerDir(nil, 2); len(got) != 0 {
		t.Errorf("newestPerDir(nil) = %v", got)
	}
}
