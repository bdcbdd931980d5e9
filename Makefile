# tpusim - a cycle-level simulator of TPU-style systolic-array accelerators.
#
#   make            build/tpusim, and build/libtpusim.so with the header sim/tpusim.h
#   make run        build, then simulate ResNet-50 on the TPU v1 preset
#   make test       build and run every test (SAN=1: under ASan + UBSan), and a short fuzz run
#   make check      only the C suites (build/test_tpusim)
#   make includes   no include cycle in sim/ and models/, no stage including one above it (part of make test)
#   make fuzz       the libFuzzer harnesses (clang), in build/fuzz/
#   make fuzz-short each harness for FUZZ_SHORT seconds, and every regression input (part of make test)
#   make fuzz-long  each harness for FUZZ_TIME seconds (the long campaign), with a table of results
#   make bench      speed of the cycle engine on real networks
#   make validate   every published figure beside tpusim's, one table; fails when a verified one leaves its band
#   make plots      the README's pictures, from the shipped configs and workloads
#   make install    PREFIX=/usr/local (and DESTDIR): bin/tpusim and the importers, lib/libtpusim.so,
#                   include/tpusim.h, the Python module tpusim.py, the presets and workloads in
#                   share/tpusim/configs (found by name: -c tpu_v1 -w resnet50)
#
# The Debian packages a target needs (DEB_<group> below) are installed on first use when missing.

# ---- configuration ----
PREFIX    ?= /usr/local
SAN       ?= 0
RUN_CONFIG   ?= configs/tpu_v1.yaml
RUN_WORKLOAD ?= configs/workloads/resnet50.yaml
RUN_OUT      ?= out

# Fuzzing: seconds per harness in make test, and in the long campaign (FUZZ_JOBS harnesses at once).
FUZZ_SHORT   ?= 12
FUZZ_TIME    ?= 3600
FUZZ_JOBS    ?= 1

# Debian packages by what needs them; each group is installed once, when missing, by
# the first target that needs it (the README's Quick start lists the same groups, a
# test compares them). make: compiling and linking tpusim.
DEB_build := g++ libsystemc-dev libyaml-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler
# make check: Check, and what the C suites run (gnuplot draws the charts they read,
# localedef makes their decimal-comma locale from locales' sources).
DEB_check := check pkg-config gnuplot-nox locales
# make fuzz: the harnesses are built with clang; the libFuzzer runtime is only recommended by it.
DEB_fuzz  := clang libclang-rt-14-dev
# make test, besides the groups above: the Python suites (.npy files, the lab page in
# a browser, VCDs read back by gtkwave's converters, sweeps run by GNU parallel and
# Slurm, ONNX import).
DEB_test  := python3-numpy chromium gtkwave parallel slurm-wlm munge python3-onnx
# make plots: gnuplot draws the README's pictures.
DEB_plots := gnuplot-nox

PYTHON  := /usr/bin/python3
CC      ?= cc
CXX     ?= c++
CXXFLAGS_STRICT := -std=c++17 -Wall -Wextra -Wshadow -Werror
CFLAGS_STRICT := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-format-truncation -Werror
# Sources made from other files (the same for every build: SAN, fuzz).
GEN     := build/gen
# sim/ is one folder per stage (README: Layout); headers are found by name in any of them.
SIM_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard sim/*/*.c sim/*/*.h sim/*/*.cpp))))
CPPFLAGS := -D_GNU_SOURCE -Isim $(addprefix -I,$(SIM_DIRS)) -Imodels -I$(GEN) -MMD -MP
OPT     := -O2 -g
# Position-independent, so that the same objects make the CLI and the library;
# only the names tpusim.h marks are exported from the library.
PIC     := -fPIC -fvisibility=hidden

ifeq ($(SAN),1)
BUILD   := build/san
# Python loads the instrumented library: the sanitizer runtimes must come first.
PY_ENV  := LD_PRELOAD=$(shell $(CC) -print-file-name=libasan.so):$(shell $(CC) -print-file-name=libubsan.so) \
	   ASAN_OPTIONS=detect_leaks=0
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
else
BUILD   := build
endif

CFLAGS  += $(CFLAGS_STRICT) $(OPT) $(PIC)
CXXFLAGS += $(CXXFLAGS_STRICT) $(OPT) $(PIC)
LDFLAGS += $(OPT)
LIBS    := -lsystemc -lyaml -lz -lprotobuf-c -lm -lpthread
TEST_LIBS = $(shell pkg-config --libs check) $(LIBS)

SIM_SRC    := $(filter-out sim/cli/main.c,$(wildcard sim/*/*.c)) $(wildcard models/*.c)
SIM_OBJ    := $(SIM_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/sim/exec/scw.o $(BUILD)/obj/gen/chakra.pb-c.o
MAIN_OBJ   := $(BUILD)/obj/sim/cli/main.o
TEST_SRC   := $(wildcard tests/*.c)
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/failmem.o
# The allocation hook of the C suites (tests/failmem.cpp): these calls in the
# test binary's own objects go through it; it replaces C++ new for the process.
TEST_WRAP  := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,--wrap=open_memstream,--wrap=newlocale
BIN        := $(BUILD)/tpusim
LIB        := $(BUILD)/libtpusim.so
BENCH_LIB  := $(BUILD)/bench_lib
TEST_BIN   := $(BUILD)/test_tpusim
DEPS = build/.deps-$(1)

.PHONY: all run test check includes bench plots validate deps install clean fuzz fuzz-short fuzz-long
all: $(BIN) $(LIB)

# ---- Debian packages, installed once per group when missing ----
# make deps installs every group.
deps: $(foreach g,build check fuzz test plots,$(call DEPS,$(g)))
build/.deps-%: Makefile
	@missing=""; for p in $(DEB_$*); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages ($*):$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	  || { echo "could not install:$$missing" >&2; exit 1; }; \
	fi
	@mkdir -p $(@D) && touch $@

# ---- build ----
$(BUILD)/obj/%.o: %.c Makefile | $(call DEPS,build)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/sim/exec/scw.o: sim/exec/scw.cpp Makefile | $(call DEPS,build)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(BIN): $(SIM_OBJ) $(MAIN_OBJ)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LIBS)

$(LIB): $(SIM_OBJ)
	$(CXX) $(LDFLAGS) -shared -Wl,-soname,libtpusim.so -o $@ $^ $(LIBS)

# Times ResNet-50 through the library, in one process.
$(BENCH_LIB): scripts/bench_lib.c sim/tpusim.h $(LIB)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ scripts/bench_lib.c -L$(BUILD) -ltpusim -Wl,-rpath,$(abspath $(BUILD))

$(TEST_OBJ): | $(call DEPS,check)

$(BUILD)/obj/tests/failmem.o: tests/failmem.cpp Makefile | $(call DEPS,build)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

$(TEST_BIN): $(SIM_OBJ) $(TEST_OBJ) | $(call DEPS,check)
	$(CXX) $(LDFLAGS) $(TEST_WRAP) -o $@ $^ $(TEST_LIBS)

# ---- the two commands ----
# Every published figure beside tpusim's, in one table; fails when a verified one leaves its band.
validate: $(BIN)
	$(PYTHON) scripts/validate.py --tpusim ./$(BIN)

run: $(BIN)
	./$(BIN) run -c $(RUN_CONFIG) -w $(RUN_WORKLOAD) -o $(RUN_OUT)

# The C suites only.
# No include cycle among the modules of sim/ and models/, and no stage that includes one above it.
includes:
	$(PYTHON) scripts/check_includes.py

check: $(BIN) $(TEST_BIN)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp TPUSIM=./$(BIN) ./$(TEST_BIN)

test: $(BIN) $(LIB) $(TEST_BIN) fuzz | $(call DEPS,test)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp TPUSIM=./$(BIN) ./$(TEST_BIN)
	TPUSIM=./$(BIN) $(PYTHON) tests/test_readme_deps.py
	$(PYTHON) scripts/check_includes.py
	$(PY_ENV) TPUSIM=./$(BIN) TPUSIM_LIB=./$(LIB) $(PYTHON) tests/test_python.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_labs.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_onnx.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_hlo.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_chakra.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_vcd_gtkwave.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_lab_page.py
	TPUSIM=./$(BIN) $(PYTHON) tests/test_cluster.py parallel
	TPUSIM=./$(BIN) $(PYTHON) tests/test_cluster.py slurm
	$(FUZZ_RUN) --time $(FUZZ_SHORT) --short $(FUZZ_TARGETS)

bench: $(BIN) $(BENCH_LIB)
	scripts/bench.sh ./$(BIN) ./$(BENCH_LIB)

# The pictures in the README, drawn from the shipped files.
plots: $(BIN) | $(call DEPS,plots)
	@mkdir -p docs
	./$(BIN) roofline -c configs/tpu_v1.yaml -w configs/workloads/resnet50.yaml -o docs/roofline_resnet50_tpu_v1.png
	./$(BIN) compare -c configs/tpu_v1.yaml -w configs/workloads/resnet50.yaml -o docs/compare_resnet50_tpu_v1.png > /dev/null
	./$(BIN) compare -c configs/tpu_v4_mxu.yaml -w configs/workloads/bert_base.yaml -o docs/compare_bert_base_tpu_v4_mxu.png > /dev/null
	./$(BIN) run -c configs/tpu_v1.yaml -w configs/workloads/resnet50.yaml --plot docs/resnet50_tpu_v1 > /dev/null
	rm -rf build/sweep_budget
	./$(BIN) sweep docs/sweep/budget.yaml -o build/sweep_budget -j 2 --plot > /dev/null
	cp build/sweep_budget/plots/pareto_resnet50.png build/sweep_budget/plots/pareto_bert_base.png docs/sweep/

# ---- fuzzing ----
# One libFuzzer harness per input reader (tests/fuzz/fuzz_<target>.c), built
# by clang under ASan and UBSan whatever SAN says. The seeds are in
# tests/fuzz/corpus/<target>/ (read only); what fuzz-long adds goes to
# build/fuzz/corpus/<target>/ (fuzz-short starts from the seeds each time),
# crashes to build/fuzz/artifacts/<target>/.
# Every crash found becomes an input in tests/fuzz/regress/<target>/, run by
# fuzz-short (tests/fuzz/FINDINGS.md).
FUZZ_TARGETS := config workload csv request npy
FUZZ_BUILD   := build/fuzz
FUZZ_CC      := clang
FUZZ_CXX     := clang++
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# clang's own warnings in the simulator's files are shown, not fatal: gcc's build is the strict one.
FUZZ_CFLAGS  := $(filter-out -Werror -Wno-format-truncation,$(CFLAGS_STRICT)) $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SIM_OBJ := $(SIM_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/sim/exec/scw.o $(FUZZ_BUILD)/obj/gen/chakra.pb-c.o
FUZZ_LIB_OBJ := $(FUZZ_BUILD)/obj/tests/fuzz/fuzz.o $(FUZZ_BUILD)/obj/tests/fuzz/lowered.o
FUZZ_MAIN_OBJ := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_RUN     := $(PYTHON) tests/fuzz/run.py --build $(FUZZ_BUILD)
.SECONDARY: $(FUZZ_MAIN_OBJ) $(FUZZ_LIB_OBJ) $(FUZZ_SIM_OBJ)

fuzz: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c Makefile | $(call DEPS,build) $(call DEPS,fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -Itests/fuzz $(FUZZ_CFLAGS) -Werror -c $< -o $@

$(FUZZ_BUILD)/obj/%.o: %.c Makefile | $(call DEPS,build) $(call DEPS,fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/sim/exec/scw.o: sim/exec/scw.cpp Makefile | $(call DEPS,build) $(call DEPS,fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(CPPFLAGS) -std=c++17 $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ) $(FUZZ_SIM_OBJ)
	$(FUZZ_CXX) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz-short: fuzz
	$(FUZZ_RUN) --time $(FUZZ_SHORT) --short $(FUZZ_TARGETS)

fuzz-long: fuzz
	$(FUZZ_RUN) --time $(FUZZ_TIME) --jobs $(FUZZ_JOBS) $(FUZZ_TARGETS)

# ---- files embedded at build time ----
# The lab's page, written as HTML (sim/tools/lab_page.html), is in lab.c as a C
# array: its bytes in hex, 16 a line, and a NUL (od and awk, nothing else).
$(GEN)/lab_page.inc: sim/tools/lab_page.html
	@mkdir -p $(@D)
	od -An -v -tx1 $< | awk 'BEGIN { print "/* made from sim/tools/lab_page.html by the Makefile */" } \
	  { s = ""; for (i = 1; i <= NF; i++) s = s "0x" $$i ","; print s } END { print "0x00" }' > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/sim/tools/lab.o $(FUZZ_BUILD)/obj/sim/tools/lab.o: $(GEN)/lab_page.inc

# Chakra's execution-trace messages (sim/input/chakra.proto) as C, by protoc-c.
$(GEN)/chakra.pb-c.c $(GEN)/chakra.pb-c.h &: sim/input/chakra.proto | $(call DEPS,build)
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -Isim/input $<
$(BUILD)/obj/gen/chakra.pb-c.o: $(GEN)/chakra.pb-c.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c11 -w $(OPT) $(PIC) -c $< -o $@
$(FUZZ_BUILD)/obj/gen/chakra.pb-c.o: $(GEN)/chakra.pb-c.c Makefile | $(call DEPS,fuzz)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -w $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@
$(SIM_SRC:%.c=$(BUILD)/obj/%.o) $(SIM_SRC:%.c=$(FUZZ_BUILD)/obj/%.o): $(GEN)/chakra.pb-c.h

# Where make install puts each part, under DESTDIR (a staging root) and PREFIX. The
# presets and the workloads go to share/tpusim/configs, where the installed tpusim
# finds them by name (-c tpu_v1, -w resnet50) from its own path,
# PREFIX/bin/../share/tpusim/configs (sim/input/preset.h); tpusim.py goes where
# Debian's Python looks for modules of PREFIX=/usr/local (PYDIR), and finds the
# library from its own path, PYDIR/../../libtpusim.so; the importers go to bin, and
# the modules they import to share/tpusim/python, where an importer looks from its own
# path (PREFIX/bin/../share/tpusim/python) when they are not beside it, as in scripts/.
# Every path is quoted: DESTDIR and PREFIX may hold spaces.
PYVER      = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PYDIR      = $(PREFIX)/lib/python$(PYVER)/dist-packages
IMPORTERS  := scripts/onnx2workload.py scripts/hlo2workload.py
IMPORTER_MODULES := scripts/onnx_lower.py scripts/hlo_lower.py scripts/hlo_parse.py scripts/workload_out.py
install: $(BIN) $(LIB)
	install -d '$(DESTDIR)$(PREFIX)/bin' '$(DESTDIR)$(PREFIX)/lib' '$(DESTDIR)$(PREFIX)/include' '$(DESTDIR)$(PYDIR)' \
	  '$(DESTDIR)$(PREFIX)/share/tpusim/python'
	install -m 755 '$(BIN)' '$(DESTDIR)$(PREFIX)/bin/tpusim'
	install -m 755 $(IMPORTERS) '$(DESTDIR)$(PREFIX)/bin/'
	install -m 644 $(IMPORTER_MODULES) '$(DESTDIR)$(PREFIX)/share/tpusim/python/'
	install -m 755 '$(LIB)' '$(DESTDIR)$(PREFIX)/lib/libtpusim.so'
	install -m 644 sim/tpusim.h '$(DESTDIR)$(PREFIX)/include/tpusim.h'
	install -m 644 scripts/tpusim.py '$(DESTDIR)$(PYDIR)/tpusim.py'
	for f in $$(find configs -name '*.yaml' | sort); do \
	  install -D -m 644 $$f '$(DESTDIR)$(PREFIX)/share/tpusim/'$$f || exit 1; \
	done

clean:
	rm -rf build/obj build/san build/fuzz build/gen build/tpusim build/test_tpusim build/libtpusim.so build/bench_lib $(RUN_OUT)

-include $(SIM_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(FUZZ_SIM_OBJ:.o=.d) $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_MAIN_OBJ:.o=.d)
