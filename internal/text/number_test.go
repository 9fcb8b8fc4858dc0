package text

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1,000"},
		{12400, "12,400"},
		{123456, "123,456"},
		{1234567, "1,234,567"},
		{-1, "-1"},
		{-999, "-999"},
		{-1000, "-1,000"},
		{-123456, "-123,456"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Thousands(tt.n); got != tt.want {
			t.Errorf("Thousands(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// Every number reads back as itself without its commas, and its groups
// after the first are of three digits.
func TestThousandsGroups(t *testing.T) {
	for n := -20000; n <= 20000; n += 7 {
		got := Thousands(n)
		if plain := strings.ReplaceAll(got, ",", ""); plain != strconv.Itoa(n) {
			t.Fatalf("Thousands(%d) = %q: without commas %q", n, got, plain)
		}
		groups := strings.Split(strings.TrimPrefix(got, "-"), ",")
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			t.Fatalf("Thousands(%d) = %q: first group %q", n, got, groups[0])
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				t.Fatalf("Thousands(%d) = %q: group %q", n, got, g)
			}
		}
	}
}
