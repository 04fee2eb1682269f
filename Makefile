# lowerscope — plain GNU Makefile.
#   make            build build/lowerscope and build/liblowerscope.a
#   make run        install missing packages, build, open lowerscope on the default sample
#   make check      install missing packages, build, run every test (plain and ASan+UBSan)
#   make bench      build optimised, print the benchmark figures
# V=1 shows the commands.

CC       ?= cc
PKGS     := ncursesw libcjson libxxhash check libzip zlib
# Debian packages that provide the above, plus what the tests and samples use.
DEB_PKGS := build-essential pkg-config libncurses-dev libcjson-dev libxxhash-dev check \
            libzip-dev zlib1g-dev python3 python3-numpy flatbuffers-compiler graphviz \
            clang libfuzzer-14-dev valgrind
SAMPLE   ?= samples/shared_constant.pt2
SHARED   ?= $(abspath ../shared)

Q := $(if $(V),,@)

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs ncursesw libcjson libxxhash libzip zlib 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude $(WARN) $(CFLAGS) $(PKG_CFLAGS)
LDLIBS   := $(PKG_LIBS) -lm -lpthread

ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
BENCH_FLAGS := -O3 -march=native -g -DNDEBUG

# Sources are found by folder: every .c under src/ is the core (liblowerscope.a) but src/cli/,
# the command-line front end; views/ is the terminal UI.
CORE_SRC := $(sort $(shell find src -name '*.c' -not -path 'src/cli/*'))
CLI_SRC  := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c))
VIEW_SRC := $(wildcard views/*.c)
TEST_SRC := $(wildcard tests/check_*.c)
# The shipped backend profiles, compiled into the library (profiles/embed.sh).
PROFILES := $(sort $(wildcard profiles/*.json))
GEN_SRC  := build/gen/profiles_embedded.c
BENCH_SRC := $(filter-out tests/bench/benchutil.c,$(wildcard tests/bench/*.c))

# $(call objs,DIR,SOURCES)
objs = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps run check test test-asan bench samples corpus clean tags FORCE
# plain `make` is `make all`, whatever target comes first in the file
.DEFAULT_GOAL := all
FORCE:
all: build/lowerscope

# ---- the flavours share one set of rules: build/ (default), build/asan/, build/bench/, and
# build/fuzz/ (clang, tests/fuzz/fuzz.mk); $(3) is the compiler when it is not $(CC)
define flavour
$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(if $$(Q),@echo "  CC $$@")
	$(Q)$$(or $(3),$$(CC)) $$(ALL_CFLAGS) $(2) -MMD -MP -c $$< -o $$@

$(1)/liblowerscope.a: $$(call objs,$(1),$$(CORE_SRC) $$(GEN_SRC))
	$$(if $$(Q),@echo "  AR $$@")
	$(Q)rm -f $$@ && ar rcs $$@ $$^

$(1)/lowerscope: $$(call objs,$(1),src/cli/main.c $$(CLI_SRC) $$(VIEW_SRC)) $(1)/liblowerscope.a
	$$(if $$(Q),@echo "  LD $$@")
	$(Q)$$(or $(3),$$(CC)) $(2) -o $$@ $$^ $$(LDLIBS)

# made on every run (a removed tests/check_*.c leaves no newer prerequisite behind), replaced
# only when the list changed, so check_main.o is rebuilt only then
$(1)/suites.inc: FORCE
	@mkdir -p $(1)
	$(Q)grep -ho '^Suite \*[a-z0-9_]*_suite(void)' $$(TEST_SRC) /dev/null | sed 's/^Suite \*\(.*\)_suite(void)/LS_SUITE(\1)/' | sort > $$@.tmp; \
	  if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv $$@.tmp $$@; fi

$(1)/tests/check_main.o: $(1)/suites.inc
$(1)/check_all: $$(call objs,$(1),$$(TEST_SRC) tests/check_main.c tests/testutil.c tests/progfixtures.c $$(CLI_SRC) $$(VIEW_SRC)) $(1)/liblowerscope.a
	$$(if $$(Q),@echo "  LD $$@")
	$(Q)$$(CC) $(2) -o $$@ $$^ $$(CHECK_LIBS) $$(LDLIBS)
endef

build/gen/profiles_embedded.c: $(PROFILES) profiles/embed.sh
	@mkdir -p $(dir $@)
	$(Q)sh profiles/embed.sh $(PROFILES) > $@.tmp && mv $@.tmp $@

$(eval $(call flavour,build,))
$(eval $(call flavour,build/asan,$(ASAN_FLAGS)))
$(eval $(call flavour,build/bench,$(BENCH_FLAGS)))

build/tests/check_main.o build/asan/tests/check_main.o: ALL_CFLAGS += -I$(dir $@)..
# Check suites are found by name, not declared in headers.
build/tests/%.o build/asan/tests/%.o build/bench/tests/%.o: ALL_CFLAGS += -Wno-missing-prototypes

# ---- set-up: install what a fresh Debian machine lacks (sudo when not root)
deps:
	$(Q)missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

run: deps
	$(Q)$(MAKE) --no-print-directory build/lowerscope
	./build/lowerscope $(SAMPLE)

# Tests run twice: as built, then under AddressSanitizer + UndefinedBehaviorSanitizer; then the
# fuzz harnesses replay tests/corpus and the fuzzers' crash folders (tests/fuzz/fuzz.mk).
check: deps
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory replay

test: build/check_all build/lowerscope
	@echo "== tests"
	$(Q)LS_BIN=$(abspath build/lowerscope) LS_SHARED=$(SHARED) LS_ROOT=$(CURDIR) ./build/check_all

test-asan: build/asan/check_all build/asan/lowerscope
	@echo "== tests under ASan+UBSan"
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  CK_TIMEOUT_MULTIPLIER=10 LS_BIN=$(abspath build/asan/lowerscope) LS_SHARED=$(SHARED) LS_ROOT=$(CURDIR) \
	  ./build/asan/check_all

# LS_PLAIN_BIN: the plain build, which valgrind can run (the bench build may use AVX-512)
bench: deps build/bench/lowerscope build/lowerscope $(patsubst tests/bench/%.c,build/bench/bench_%,$(BENCH_SRC))
	$(Q)for b in $(patsubst tests/bench/%.c,build/bench/bench_%,$(BENCH_SRC)); do \
	  LS_BIN=$(abspath build/bench/lowerscope) LS_PLAIN_BIN=$(abspath build/lowerscope) LS_ROOT=$(CURDIR) $$b || exit 1; done

# every benchmark links the helpers they share (tests/bench/benchutil.c)
build/bench/bench_%: build/bench/tests/bench/%.o build/bench/tests/bench/benchutil.o build/bench/liblowerscope.a
	$(Q)$(CC) $(BENCH_FLAGS) -o $@ $^ $(LDLIBS)

samples:
	python3 samples/gen_samples.py samples

# tests/corpus: the JSON, archive and .npy files from gen_corpus.py; the .pte ones are a real
# export with one field changed (gen_corpus_pte.c)
corpus: build/lowerscope build/gen_corpus_pte
	python3 tests/corpus/gen_corpus.py
	$(Q)tmp=$$(mktemp -d) && ./build/lowerscope export samples/shared_constant.pt2 -o $$tmp/sample.pte >/dev/null && \
	  ./build/gen_corpus_pte $$tmp/sample.pte tests/corpus; rc=$$?; rm -rf $$tmp; exit $$rc

build/gen_corpus_pte: build/tests/corpus/gen_corpus_pte.o build/liblowerscope.a
	$(Q)$(CC) -o $@ $^ $(LDLIBS)

include tests/fuzz/fuzz.mk

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
