# bloomidx: PGXS build.  `make`, `make install`, `make installcheck`
# (pg_regress against a running server), `make unittest` (the C++ core on
# its own, no PostgreSQL needed), `make dist` (the archive PGXN takes).
# test/run-tests.sh runs every suite.

EXTENSION = bloomidx
MODULE_big = bloomidx
DATA = sql/bloomidx--1.0.sql sql/bloomidx--1.0--1.1.sql sql/bloomidx--1.1--1.2.sql
PGFILEDESC = "bloomidx - Bloom signature index access method"

CORE_OBJS = src/core/hash.o src/core/positions.o src/core/sizing.o src/core/page_layout.o src/core/in_list.o \
	src/core/tid_codec.o src/core/slices.o src/core/segment_pages.o src/core/page_delta.o src/core/segment_filter.o src/core/filter_pages.o src/core/advise.o \
	src/core/fill.o src/core/query.o
# The access method's callbacks (src/), the storage under them
# (src/storage/), what both use (src/support/) and the SQL-callable
# functions (src/functions/).
AM_OBJS = src/handler.o src/options.o src/build.o src/build_part.o src/parallel_build.o src/insert.o src/seal_worker.o src/scan.o \
	src/vacuum.o src/cost.o src/validate.o
STORAGE_OBJS = src/storage/block_write.o src/storage/segment_write.o src/storage/recycle.o src/storage/directory.o \
	src/storage/directory_pages.o src/storage/header_cache.o src/storage/pending_list.o src/storage/pending_filters.o \
	src/storage/filter_write.o \
	src/storage/filter_merge.o src/storage/filter_gather.o src/storage/seal.o \
	src/storage/merge.o src/storage/heap_keys.o src/storage/sweep.o src/storage/truncate.o \
	src/storage/tid_sink.o src/storage/segment_scan.o src/storage/filter_scan.o
SUPPORT_OBJS = src/support/page.o src/support/value_hash.o src/support/wal.o src/support/debug.o \
	src/support/scratch.o
FUNCTION_OBJS = src/functions/relation.o src/functions/verify.o src/functions/verify_pages.o \
	src/functions/verify_filters.o src/functions/stats.o src/functions/page_items.o \
	src/functions/index_info.o src/functions/false_positive_rate.o src/functions/advise.o \
	src/functions/seal.o src/functions/ddl_check.o
GLUE_OBJS = $(AM_OBJS) $(STORAGE_OBJS) $(SUPPORT_OBJS) $(FUNCTION_OBJS)
OBJS = $(CORE_OBJS) $(GLUE_OBJS)
# No C++ runtime is linked: the glue and the core use no exceptions (built
# with -fno-exceptions), no RTTI (-fno-rtti) and no operator new but
# placement new.

# pg_regress: inputs in sql/, expected outputs in expected/.
REGRESS = helpers search_path basics nulls search in_lists maintenance unlogged options sizing false_positives validate types bool_columns equality_traps hash_families index_bytes memory verify planner stats randomized randomized_types parallel_build segments directory_pages header_cache seal background_seal churn shrink segment_limit segment_filters key_pages heap_keys pending_filters partitions advise inspect progress properties package
REGRESS_OPTS = --load-extension=bloomidx
ISOLATION = cic_inserts cic_seal vacuum_scan insert_vacuum alter_invalid seal_concurrency directory_copy vacuum_truncate vacuum_tail \
	filter_gather broken_hot_chain pending_groups_scan pending_header_kept
ISOLATION_OPTS = --load-extension=bloomidx
# Inserts seal in the statement, not in background workers, so that what
# the files show does not hang on when a worker ran (background_seal.sql
# turns workers on): for `make installcheck` against any server.
installcheck: export PGOPTIONS += -c bloomidx.background_seal=off

# (Before PGXS, whose clean rule takes it only if set by then.)
EXTRA_CLEAN = test/unit/core_tests test/unit/core_tests_sanitized $(UNIT_OBJS) test/unit/core test/bench/fpr_formula test/bench/sizing_table test/bench/slices_bench test/bench/filter_bench test/bench/filter_scaling results regression.diffs regression.out
# make dist's archives, of this version or an older one.
EXTRA_CLEAN += $(EXTENSION)-[0-9]*.zip

PG_CONFIG ?= pg_config
PG_CXXFLAGS = -std=c++17 -fvisibility=hidden -Wno-register -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -fno-exceptions -fno-rtti
PG_CPPFLAGS = -I$(srcdir)/src
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
COMPILE.cxx.bc += $(PG_CXXFLAGS)

# src/ comes before PostgreSQL's headers on the include path: a header of
# ours at the path of one of theirs (src/fmgr.h, src/storage/lock.h, under
# src/storage/, which has the name of one of their folders) would replace
# it inside PostgreSQL's own headers.  Refuse to build such a tree.
OUR_HEADERS = $(patsubst $(srcdir)/src/%,%,$(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h $(srcdir)/src/*/*/*.h))
SHADOWED_HEADERS = $(strip $(foreach h,$(OUR_HEADERS),$(if $(wildcard $(includedir_server)/$(h)),src/$(h))))
ifneq ($(SHADOWED_HEADERS),)
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
$(error $(SHADOWED_HEADERS): PostgreSQL has a header at the same path under $(includedir_server), which this one would hide; rename it)
endif
endif

# Headers, for the objects and for the LLVM bitcode installed beside them.
$(GLUE_OBJS) $(GLUE_OBJS:.o=.bc): src/support/support.h src/support/pg.h src/support/compat.h src/core/page_layout.hpp src/core/signature.hpp
$(AM_OBJS) $(FUNCTION_OBJS) $(STORAGE_OBJS) $(AM_OBJS:.o=.bc) $(FUNCTION_OBJS:.o=.bc) $(STORAGE_OBJS:.o=.bc): src/storage/storage.h
$(AM_OBJS) $(FUNCTION_OBJS) $(AM_OBJS:.o=.bc) $(FUNCTION_OBJS:.o=.bc): src/bloomidx.h
$(FUNCTION_OBJS) $(FUNCTION_OBJS:.o=.bc): src/functions/functions.h
$(CORE_OBJS) $(GLUE_OBJS) $(OBJS:.o=.bc): $(wildcard src/core/*.hpp)

# C++ unit tests of the core (GoogleTest, linked against the libgtest.a
# that Debian's libgtest-dev ships).  One object per file, so that `make
# -j2 unittest` compiles two at a time and a change recompiles only its
# file.  The core is compiled as the extension's is (-O2); the test files,
# whose GoogleTest macros take most of the compile time, at -O1 (a third
# less to compile, and they run as fast).
UNIT_SRCS = $(wildcard test/unit/*.cpp)
UNIT_OBJS = $(UNIT_SRCS:.cpp=.o)
CORE_SRCS = $(CORE_OBJS:.o=.cpp)
CORE_UNIT_OBJS = $(patsubst src/core/%.cpp,test/unit/core/%.o,$(CORE_SRCS))
UNIT_CXX = $(CXX) -std=c++17 -Wall -Wextra -Isrc
$(UNIT_OBJS) $(CORE_UNIT_OBJS): $(wildcard src/core/*.hpp test/unit/*.hpp)
test/unit/%.o: test/unit/%.cpp
	$(UNIT_CXX) -O1 -c -o $@ $<
test/unit/core/%.o: src/core/%.cpp
	@mkdir -p test/unit/core
	$(UNIT_CXX) -O2 -c -o $@ $<
test/unit/core_tests: $(UNIT_OBJS) $(CORE_UNIT_OBJS)
	$(CXX) -o $@ $^ -lgtest -lgtest_main -pthread

.PHONY: unittest
unittest: test/unit/core_tests
	test/unit/core_tests

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer, any
# finding fatal: one binary of its own (about 4 minutes to build here, so
# not in the test suites; run it after changing the core).
test/unit/core_tests_sanitized: $(UNIT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.hpp test/unit/*.hpp)
	$(CXX) -std=c++17 -Wall -Wextra -Isrc -O1 -g -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all \
		-o $@ $(UNIT_SRCS) $(CORE_SRCS) -lgtest -lgtest_main -pthread

.PHONY: unittest-sanitized
unittest-sanitized: test/unit/core_tests_sanitized
	test/unit/core_tests_sanitized


# Benchmark helper: the predicted false-positive rate, from the core.
test/bench/fpr_formula: test/bench/fpr_formula.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Isrc -o $@ test/bench/fpr_formula.cpp $(CORE_SRCS)

# Benchmark helper: a query on one segment, bit slices against row-wise.
test/bench/slices_bench: test/bench/slices_bench.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Isrc -o $@ test/bench/slices_bench.cpp $(CORE_SRCS)

test/bench/filter_bench: test/bench/filter_bench.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Isrc -o $@ test/bench/filter_bench.cpp $(CORE_SRCS)

# The model behind how segment filters scale (src/storage/README.md,
# "Filters at scale"): arithmetic over the page format, no core code.
test/bench/filter_scaling: test/bench/filter_scaling.cpp
	$(CXX) -std=c++17 -O2 -Wall -Wextra -o $@ test/bench/filter_scaling.cpp

# The README's sizing table, from the core.
test/bench/sizing_table: test/bench/sizing_table.cpp $(CORE_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Isrc -o $@ test/bench/sizing_table.cpp $(CORE_SRCS)

# The scale-out demo: a coordinator, two postgres_fdw shards, a standby
# (doc/scaling-out.md; as root on Debian it installs what it needs).
.PHONY: demo-shards
demo-shards:
	bash test/demo_shards.sh

# The benchmark suite (test/bench/run.sh; never part of a test run):
# `make bench` (SCALE=1, about 47 minutes on 2 cores), `make bench SCALE=0.02` (a few minutes).
SCALE ?= 1
.PHONY: bench
bench:
	SCALE=$(SCALE) bash test/bench/run.sh
	BLOOMIDX_BENCH_NO_BUILD=1 bash test/bench/scaling.sh
	BLOOMIDX_BENCH_NO_BUILD=1 bash test/bench/steady_state.sh
	BLOOMIDX_BENCH_NO_BUILD=1 bash test/bench/cold.sh

# Only the cold section (test/bench/cold.sh: the first query after a restart with the OS page
# cache dropped, 10 M rows; as root).
.PHONY: bench-cold
bench-cold:
	bash test/bench/cold.sh

# Only the scaling section (test/bench/scaling.sh: 2 M and 32 M rows).
.PHONY: bench-scaling
bench-scaling:
	bash test/bench/scaling.sh

# Only the steady-state section (test/bench/steady_state.sh: 2 M rows under churn, and lookups
# beside a writer; STEADY_SECONDS=0 leaves the writer out).
.PHONY: bench-steady
bench-steady:
	bash test/bench/steady_state.sh

# The pg_regress input that runs every SQL example of README.md and of
# doc/*.md (README.md first, then doc/ in name order); the
# regress suite checks that it is up to date (test/readme/readme_sql.pl)
# and runs it (`make installcheck-readme`) before the others: its examples
# create and drop databases, which take checkpoints, and the suite's WAL
# check replays everything the other tests wrote from one checkpoint.  In
# a database of its own, which the others' run need not drop (a DROP
# DATABASE checkpoints too).
README_DOCS = README.md $(sort $(wildcard doc/*.md))

sql/readme.sql: $(README_DOCS) test/readme/readme_sql.pl
	perl test/readme/readme_sql.pl $(README_DOCS) > $@

.PHONY: installcheck-readme
installcheck-readme:
	$(MAKE) installcheck REGRESS=readme ISOLATION= CONTRIB_TESTDB=contrib_regression_readme

# The archive PGXN takes (`make dist`): NAME-VERSION.zip, with NAME and
# VERSION those of META.json (bloomidx-1.2.0.zip), every file under
# NAME-VERSION/ and META.json at its top.  git archive makes it from the
# committed tree (HEAD), as PGXN's own tools do: untracked files (build
# products) stay out, and so does what .gitattributes marks export-ignore;
# so do uncommitted changes (a warning says so).  META.json is checked
# first (test/package/meta_check.pl), as committed, on the tree the archive
# holds (HEAD's, exported): no archive goes out with metadata PGXN would
# refuse or that disagrees with the files; and the committed META.json
# names it, so that an uncommitted version cannot name an archive of
# another.
DIST_NAME = $(shell git show HEAD:META.json 2>/dev/null | perl -MJSON::PP -e 'local $$/; my $$m = decode_json(<STDIN>); print "$$m->{name}-$$m->{version}"')
.PHONY: dist
dist:
	@test "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$$(pwd -P)" && git rev-parse -q --verify HEAD >/dev/null || \
		{ echo "make dist: the archive is made from the committed tree: run it at the top of a git checkout" >&2; exit 1; }
	@git diff --quiet HEAD -- || \
		echo "make dist: WARNING: uncommitted changes are not in the archive, which is made from HEAD" >&2
	@tree="$$(mktemp -d)" && git archive HEAD | tar -x -C "$$tree" && \
		perl test/package/meta_check.pl "$$tree"; status=$$?; rm -rf "$$tree"; exit $$status
	git archive --format=zip --prefix=$(DIST_NAME)/ -o $(DIST_NAME).zip HEAD
