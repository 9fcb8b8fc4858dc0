package parse

import (
	"strconv"
	"strings"
	"testing"
)

// TestRubyBlocks: modifiers (x if y), loops with do, endless methods and
// blocks keep definitions' ends right; heredocs, %-literals and regular
// expressions are not read as code.
func TestRubyBlocks(t *testing.T) {
	src := `class A
  def a
    return 1 if x
    y unless z
    while go do step end
    until done
      step
    end
    v = if q then 1 else 2 end
    list.map { |e| e.end }
  end

  def b = 2

  def c
    s = <<-TXT
      def fake
    TXT
    r = %r{end}
    q = x / 2 / 3
    m = /def/
  end
end
def top; end
`
	f, err := Parse("x.rb", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Symbols {
		got = append(got, s.Parent+"."+s.Name+" "+strconv.Itoa(s.Line)+"-"+strconv.Itoa(s.EndLine))
	}
	want := []string{".A 1-23", "A.a 2-11", "A.b 13-13", "A.c 15-22", ".top 24-24"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
}

// TestRubyVisibility: methods after a bare private, or marked private def,
// are not exported; class << self methods belong to the class.
func TestRubyVisibility(t *testing.T) {
	src := "class A\n  def pub; end\n  private def hid; end\n  class << self\n    def build; end\n  end\n  private\n  def inner; end\nend\n"
	f, _ := Parse("x.rb", []byte(src))
	want := map[string]bool{"pub": true, "hid": false, "build": true, "inner": false}
	for _, s := range f.Symbols {
		if e, ok := want[s.Name]; ok {
			if s.Exported != e || s.Parent != "A" || s.Kind != KindMethod {
				t.Errorf("%+v: want method of A, exported %v", s, e)
			}
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
}

func FuzzRuby(f *testing.F) {
	fuzzParse(f, "ruby", "x.rb", "def f(", "class A < B\n", "x = <<~E\n", "%w[", "\"#{\"", "=begin\n", "a ? b : c", "def ==(o) = 1", ":\"x", "x /y/")
}

// TestRubyOperatorMethods: an operator after def is the method's name, not
// a regular expression or %-literal.
func TestRubyOperatorMethods(t *testing.T) {
	src := "class D\n  def /(other)\n    1\n  end\n  def %(o) = 2\n  def -@\n    3\n  end\n  def <=>(o) = 0\n  def [](i) = i\n  def self.+(x) = x\nend\n"
	f, _ := Parse("x.rb", []byte(src))
	var got []string
	for _, s := range f.Symbols {
		got = append(got, s.Name+" "+strconv.Itoa(s.Line)+"-"+strconv.Itoa(s.EndLine))
	}
	want := []string{"D 1-12", "/ 2-4", "% 5-5", "-@ 6-8", "<=> 9-9", "[] 10-10", "+ 11-11"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
}
