# The common commands, with the build tag SQLite's full-text search needs
# (sqlite_fts5) so that nobody has to remember it, and nolibjpeg on a machine
# without libjpeg-turbo's header (scripts/tags.sh says which):
#
#   make            build ./bin/shelfmark
#   make serve      build, then run it with zero configuration (data in ./shelfmark-data)
#   make test       the whole test suite, as CI runs it (ARGS="-run X" passes go test flags)
#   make install    put shelfmark on your PATH (go install)
#   make lab        build ./bin/shelfmark-bench, the benchmark lab (and ./bin/shelfmark)
#   make bench      make lab, then run the lab at full size, SQLite then PostgreSQL (OUT=dir)

GO      ?= go
TAGS    := $(shell scripts/tags.sh)
BIN     := bin/shelfmark
LAB     := bin/shelfmark-bench
OUT     ?= bench-out
ARGS    ?=
SERVE   ?=

.PHONY: build lab serve test install bench clean

build:
	@test -x $(BIN) || echo "building $(BIN): the first build compiles SQLite and takes a few minutes on 2 cores" >&2
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/shelfmark

# the lab runs the shelfmark beside it as its servers: both are built
lab: build
	$(GO) build -tags $(TAGS) -o $(LAB) ./cmd/shelfmark-bench

serve: build
	./$(BIN) serve $(SERVE)

test:
	scripts/test.sh $(ARGS)

install:
	$(GO) install -tags $(TAGS) ./cmd/shelfmark

bench: lab
	LAB=$(LAB) scripts/bench.sh $(OUT)

clean:
	rm -rf bin
