# Mira's build. The vector index needs the Go 1.27 toolchain; GOTOOLCHAIN
# makes the go command fetch it from the module proxy on a fresh machine.
export GOTOOLCHAIN := go1.27.4
export CGO_ENABLED ?= 0

GO      ?= go
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(DESTDIR)$(PREFIX)/bin
MANDIR  := $(DESTDIR)$(PREFIX)/share/man
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR  := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

CMDS    := mira mira-remember mira-recall mira-forget mira-index mira-code mira-summarize mira-context mira-agent mira-mcp mira-proxy mira-sync
BINS    := $(addprefix bin/,$(CMDS))
MANSRC  := $(wildcard man/*.[157].md)
MANS    := $(MANSRC:.md=)
FUZZTIME ?= 1m

.PHONY: all build test cross race lint fuzz mutate bench interop man completions install clean demo

all: build

build:
	$(GO) build -trimpath -buildvcs=auto -o bin/ ./cmd/...

# The test command CI runs. The end-to-end scripts of cmd/internal/cli take
# about four minutes on two idle cores and over eight on a loaded machine:
# go test's ten-minute default would fail a slow machine, not a slow test.
test: cross
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

# Mira builds for macOS and Windows too: the code for other systems is
# compiled here, where its tests cannot run.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

race:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Each fuzz target for FUZZTIME (their seed corpora also run in `make test`).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Mutation testing of the packages that keep the store's promises: each
# small change the tool makes to their code must make a test fail.
MUTATE_PKGS ?= ./mem ./internal/atomicfile ./internal/gitrepo ./internal/gittree ./internal/secret ./agentloop/tools ./ctx
GREMLINS    := github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
mutate:
	@set -e; for p in $(MUTATE_PKGS); do echo "== $$p"; \
	  $(GO) run $(GREMLINS) unleash --workers 1 --timeout-coefficient 4 $$p | tail -4; done

bench: build
	scripts/bench.sh

# Interoperability with the official TypeScript MCP SDK as the client, over
# stdio and Streamable HTTP (needs node and npm; skipped without them).
interop: build
	scripts/interop.sh

man: $(MANS)

man/%: man/%.md
	$(GO) tool go-md2man -in $< -out $@

# Completion scripts for bash, zsh and fish, made by each command from its
# own grammar (--completion=SHELL).
completions: build
	@mkdir -p bin/completions/bash bin/completions/zsh bin/completions/fish
	@set -e; for c in $(CMDS); do \
	  MIRA_SERVE=0 bin/$$c --completion=bash >bin/completions/bash/$$c; \
	  MIRA_SERVE=0 bin/$$c --completion=zsh >bin/completions/zsh/_$$c; \
	  MIRA_SERVE=0 bin/$$c --completion=fish >bin/completions/fish/$$c.fish; \
	done

install: build man completions
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -m 0755 $(BINS) $(BINDIR)/
	install -m 0644 $(filter %.1,$(MANS)) $(MANDIR)/man1/
	install -m 0644 $(filter %.5,$(MANS)) $(MANDIR)/man5/
	install -m 0644 $(filter %.7,$(MANS)) $(MANDIR)/man7/
	install -m 0644 bin/completions/bash/* $(BASHDIR)/
	install -m 0644 bin/completions/zsh/* $(ZSHDIR)/
	install -m 0644 bin/completions/fish/* $(FISHDIR)/

# Set up and run the main job on the built-in offline defaults: a fresh store
# in a temporary MIRA_HOME, a small sample remembered, then recalled.
demo: build
	scripts/demo.sh

clean:
	rm -rf bin $(MANS)
