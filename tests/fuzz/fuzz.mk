# Fuzzing (included by the Makefile; docs/design.md, "Fuzzing"). One libFuzzer harness per
# reader: tests/fuzz/fuzz_NAME.c, found by name.
#   make fuzz                     build every harness with clang, seed it, run each in turn
#   make fuzz FUZZ_SECONDS=600    how long each runs (default 60)
#   make fuzz FUZZ_RUNS=1000000   or how many inputs each runs
#   make fuzz FUZZ=pte            only these harnesses
# New inputs go to build/fuzz/corpus/NAME/, what crashes to tests/fuzz/crashes/NAME/ (commit
# it with a fix and a test: make check replays every file there, and every file of
# tests/corpus, through every harness under ASan+UBSan, built with gcc by tests/fuzz/replay.c).

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_HARNESSES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ         ?= $(FUZZ_HARNESSES)
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SEEDS   := build/fuzz/seeds

# the core built with clang and libFuzzer's coverage; each harness linked with libFuzzer's main
# (one tensor allocation is capped at 256 MiB: common.c, LS_ALLOC_LIMIT)
$(eval $(call flavour,build/fuzz,$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -DLS_ALLOC_LIMIT='((size_t)256 << 20)',$(FUZZ_CC)))
build/fuzz/tests/%.o build/asan/tests/fuzz/%.o build/tests/fuzz/%.o: ALL_CFLAGS += -Wno-missing-prototypes
build/fuzz/fuzz_%: build/fuzz/tests/fuzz/fuzz_%.o build/fuzz/tests/fuzz/common.o build/fuzz/liblowerscope.a
	$(if $(Q),@echo "  LD $@")
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
# the same harnesses over files, with gcc and without libFuzzer (make check)
build/asan/replay_%: build/asan/tests/fuzz/fuzz_%.o build/asan/tests/fuzz/common.o build/asan/tests/fuzz/replay.o build/asan/liblowerscope.a
	$(if $(Q),@echo "  LD $@")
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS)
build/fuzz_seeds: build/tests/fuzz/seeds.o build/tests/fuzz/common.o build/liblowerscope.a
	$(Q)$(CC) -o $@ $^ $(LDLIBS)

.PHONY: fuzz fuzz-build fuzz-seeds replay
fuzz-build: $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_HARNESSES))

# seeds from samples/, tests/ and ../shared/data (when present), by the reader they are for;
# fuzz_seeds makes the rest (seeds.c): the samples' .pte, delegate blobs, ETRecords, ETDumps, .bpte
fuzz-seeds: build/fuzz_seeds
	$(Q)rm -rf $(FUZZ_SEEDS) && for h in $(FUZZ_HARNESSES); do mkdir -p $(FUZZ_SEEDS)/$$h; done
	$(Q)cp samples/*.pt2 tests/programs/*.pt2 tests/corpus/*.pt2 $(FUZZ_SEEDS)/pt2/
	$(Q)cp tests/programs/*.json tests/corpus/*.json $(FUZZ_SEEDS)/json/
	$(Q)python3 -c 'import sys, zipfile, os; [open(os.path.join(sys.argv[1], os.path.basename(f) + "." + os.path.basename(n)), "wb").write(zipfile.ZipFile(f).read(n)) for f in sys.argv[2:] for n in zipfile.ZipFile(f).namelist() if "/models/" in n and n.endswith(".json")]' \
	  $(FUZZ_SEEDS)/json samples/*.pt2 tests/programs/*.pt2
	$(Q)cp tests/corpus/*.pte $(FUZZ_SEEDS)/pte/ && cp tests/corpus/*.npy $(FUZZ_SEEDS)/npy/
	$(Q)for f in $$(find tests/golden -name '*.npy' | head -200); do cp $$f $(FUZZ_SEEDS)/npy/$$(echo $$f | tr / _); done
	$(Q)cp samples/backends/*.json profiles/*.json $(FUZZ_SEEDS)/profile/
	$(Q)if [ -d $(SHARED)/data ]; then \
	  cp $(SHARED)/data/pt2/*.pt2 $(FUZZ_SEEDS)/pt2/; cp $(SHARED)/data/pt2/*.json $(SHARED)/data/pt2/linear_3/models/*.json $(FUZZ_SEEDS)/json/; \
	  cp $(SHARED)/data/pte/*.pte $(FUZZ_SEEDS)/pte/; cp $(SHARED)/data/pte/*.ptd $(FUZZ_SEEDS)/ptd/; \
	  else echo "fuzz: $(SHARED)/data is absent: seeding from the repository only"; fi
	$(Q)./build/fuzz_seeds $(FUZZ_SEEDS) samples/*.pt2 $(FUZZ_SEEDS)/pte/*.pte

fuzz: deps fuzz-build fuzz-seeds
	$(Q)for h in $(FUZZ); do \
	  mkdir -p build/fuzz/corpus/$$h tests/fuzz/crashes/$$h; \
	  echo "== fuzz $$h ($(if $(FUZZ_RUNS),$(FUZZ_RUNS) runs,$(FUZZ_SECONDS) s))"; \
	  ASAN_OPTIONS=allocator_may_return_null=1 nice -n 10 ./build/fuzz/fuzz_$$h $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS)) \
	    -timeout=20 -rss_limit_mb=3072 -max_len=262144 -print_final_stats=1 \
	    -artifact_prefix=tests/fuzz/crashes/$$h/ build/fuzz/corpus/$$h $(FUZZ_SEEDS)/$$h || exit 1; \
	done

# every file of tests/corpus and of the crash folders through every harness, under ASan+UBSan
replay: $(patsubst %,build/asan/replay_%,$(FUZZ_HARNESSES))
	@echo "== fuzz harnesses over tests/corpus and tests/fuzz/crashes (ASan+UBSan)"
	$(Q)for h in $(FUZZ_HARNESSES); do \
	  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ./build/asan/replay_$$h tests/corpus $$(find tests/fuzz/crashes -mindepth 1 -maxdepth 1 -type d 2>/dev/null) \
	    || { echo "replay: harness $$h failed"; exit 1; }; \
	done

# the harnesses' objects are kept (make would remove them as intermediate files)
.SECONDARY: $(foreach d,build/asan build/fuzz build,$(call objs,$(d),$(wildcard tests/fuzz/*.c)))
