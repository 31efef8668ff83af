# rocetap — two commands do everything on a fresh machine:
#   make run    decode a bundled capture, list its sessions, replay it into the model
#   make test   install what the tests need, lint (gofmt, vet, staticcheck), then run every test
# Optional: make build-libpcap (bin/rocetap-libpcap, with the libpcap capture
# backend: pcap filter expressions, RDMA sniffer devices such as mlx5_0) and
# make test-libpcap (its tests; those that capture need root).
SHELL     := /bin/bash
GO        ?= go
BIN       := bin/rocetap
CAPTURE   ?= testdata/rxe/read_atomic.pcap
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PKGS  := tshark python3-scapy libibmad5
export ROCETAP_REQUIRE_ORACLES ?= 1

.PHONY: all build man install run test deps test-deps lint fuzz bench bench-ab clean libpcap-deps build-libpcap test-libpcap

all: build

# --version: the git revision when there is one (the build info's VCS
# stamp is off where GOFLAGS says -buildvcs=false).
VERSION   := $(shell git describe --always --dirty --tags 2>/dev/null)
LDFLAGS   := $(if $(VERSION),-ldflags "-X github.com/rocetap/rocetap/internal/cli.Version=$(VERSION)")

build:
	$(GO) build $(LDFLAGS) -o $(BIN) ./cmd/rocetap

# man pages (one per command, from --help) and installation.
PREFIX    ?= /usr/local
MANDIR    ?= $(PREFIX)/share/man/man1

man: build
	./$(BIN) man -o bin/man

install: build man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/rocetap
	install -m 0644 bin/man/*.1 $(DESTDIR)$(MANDIR)/

run: build
	./$(BIN) decode -r $(CAPTURE)
	./$(BIN) sessions -r $(CAPTURE)
	./$(BIN) replay -r $(CAPTURE) --mpt $(CAPTURE:.pcap=.mpt.json)

# Oracles: tshark (field conformance), scapy (ICRC) and libibmad
# (PortInfo and Notice, decode/libibmad_test.go). Installed with
# apt-get when missing; set ROCETAP_REQUIRE_ORACLES=0 to let the tests skip
# them instead.
test-deps:
	@missing=""; \
	command -v tshark >/dev/null 2>&1 || missing="$$missing tshark"; \
	/usr/bin/python3 -c 'import scapy.contrib.roce' >/dev/null 2>&1 || missing="$$missing python3-scapy"; \
	/usr/bin/python3 -c "import ctypes; ctypes.CDLL('libibmad.so.5')" >/dev/null 2>&1 || missing="$$missing libibmad5"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

test: test-deps lint
	$(GO) test -race -count=1 ./...

# The libpcap capture backend is built with cgo against the system's
# libpcap; its headers are installed with apt-get when missing.
libpcap-deps:
	@if [ ! -e /usr/include/pcap/pcap.h ]; then \
		echo "installing: libpcap-dev"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpcap-dev >/dev/null; \
	fi

build-libpcap: libpcap-deps
	CGO_ENABLED=1 $(GO) build -tags libpcap -o bin/rocetap-libpcap ./cmd/rocetap

test-libpcap: libpcap-deps
	CGO_ENABLED=1 $(GO) test -race -count=1 -tags libpcap ./capture

# gofmt, go vet and staticcheck (pinned: the same checks on every machine);
# make test runs it first.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "$$out"; echo "gofmt: run gofmt -w on the files above"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Run every fuzz target for FUZZTIME each (corpus in */testdata/fuzz).
FUZZTIME ?= 30s
fuzz:
	@for pkg in ./decode ./decode/filter ./capture ./stream ./flow ./hca ./mpt ./replay ./pathcmp; do \
		for t in $$($(GO) test -list 'Fuzz.*' $$pkg | grep ^Fuzz); do \
			echo "== $$pkg $$t"; $(GO) test -run XXX -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# Speed against tshark and limitprobe (the floor), on gencap's and scapy's
# captures, and with 8 to 1M QP pairs, every comparison interleaved, in CPU
# seconds (bench/run.sh, bench/README.md); writes bench/RESULTS.md.
bench: build test-deps
	@mkdir -p bench/out
	set -o pipefail; $(GO) test -run XXX -bench . -benchmem ./decode ./decode/filter ./capture ./internal/printer | tee bench/out/gotest.txt
	bash bench/run.sh

# Before and after: the same commands on the same files with two builds,
# interleaved, median and min–max (bench/ab.sh); BASE is the "before"
# commit (default HEAD~1). Writes bench/AB.md.
BASE ?= HEAD~1
bench-ab:
	BASE=$(BASE) bash bench/ab.sh

clean:
	rm -rf bin bench/out
