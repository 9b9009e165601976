# numa-replica: page-cache replication for NUMA, built into a Debian
# linux-source-6.12 kernel and tested in a QEMU NUMA guest.
#
#   make check        build everything, boot the guest, run the selftests
#   make soak         the randomized selftests, run far longer
#   make run          boot the guest and show replication at work
#   make guest RUN='cmd' [POLICY=name] [ADD=dir] [NODES= CPUS_PER_NODE=
#                     MEM_PER_NODE= APPEND=]   run your own workload
#                     (boot/guest takes the same and exits with RUN's status)
#   make bench        the benchmarks under the NUMA model: out/bench/report.md
#   make model        build the NUMA model plugin (bench/numa-model); make
#                     check validates it in a guest before the selftests
#   make series       the upstream patch series and its cover letter:
#                     out/series/ (quotes the latest make bench and check)
#   make kernel | selftests | image | lint | clean | distclean

CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/numa-replica
OUT := $(CURDIR)/out
TREE := $(CACHE)/linux-source-6.12
FLAVOUR ?= debug
BUILD := $(CACHE)/build/$(FLAVOUR)
SELFTESTS_SRC := $(TREE)/tools/testing/selftests/replica

NODES ?= 2
CPUS_PER_NODE ?= 2
MEM_PER_NODE ?= 512M
export NODES CPUS_PER_NODE MEM_PER_NODE POLICY APPEND ADD RUN TIMEOUT QEMU_OPTS MODEL \
	TEST_TIMEOUT

# Each step runs its own parallel build; the steps themselves are ordered.
.NOTPARALLEL:
.PHONY: all deps tree kernel selftests mm-selftests initramfs image check \
	model bench soak run guest \
	lint series clean distclean

all: check

deps:
	@boot/deps.sh

tree: deps
	@mkdir -p $(OUT)
	@boot/tree.sh $(CACHE) $(CURDIR) | tee $(OUT)/tree.log

kernel: tree
	@boot/kernel.sh $(CACHE) $(CURDIR) $(FLAVOUR) $(OUT)/build-$(FLAVOUR).log

selftests: kernel
	@mkdir -p $(OUT)/selftests
	@$(MAKE) -s -C $(SELFTESTS_SRC) OUTPUT=$(OUT)/selftests \
		KHDR_INCLUDES="-isystem $(BUILD)/usr/include"

# The kernel's own mm selftests, for upstream_mm.  Three of them do not
# build here (see selftests/upstream_mm.c): build what builds; upstream_mm
# fails on any test of its list that is missing.
MM_SELFTESTS_SRC := $(TREE)/tools/testing/selftests/mm
mm-selftests: kernel
	@mkdir -p $(OUT)/mm-selftests
	@$(MAKE) -s -k -C $(MM_SELFTESTS_SRC) OUTPUT=$(OUT)/mm-selftests \
		KHDR_INCLUDES="-isystem $(BUILD)/usr/include" \
		EXTRA_CFLAGS=-static >$(OUT)/mm-selftests.log 2>&1 || \
		echo "mm-selftests: some did not build, see $(OUT)/mm-selftests.log"

initramfs: tree
	@boot/mkinitramfs.sh $(TREE) $(CURDIR) $(OUT)/initramfs.cpio

$(OUT)/tools/pagenodes: boot/tools/pagenodes.c
	@mkdir -p $(@D)
	gcc -static -O2 -Wall -Werror -o $@ $<

image: selftests mm-selftests initramfs $(OUT)/tools/pagenodes
	@MM_SELFTESTS=$(OUT)/mm-selftests \
		boot/mkdisk.sh stage $(OUT)/disk $(OUT)/selftests $(OUT)/tools \
		$$($(MAKE) -s -C $(SELFTESTS_SRC) --eval \
		'print-tests: ; @echo $$(notdir $$(TEST_GEN_PROGS))' print-tests)

# The NUMA model (bench/numa-model): a QEMU TCG plugin, and the guest
# program that validates it.
MODEL_SRC := bench/numa-model
MODEL_SO := $(OUT)/bench/numa-model.so
MODEL_GUEST := $(OUT)/bench/guest
$(MODEL_SO): $(MODEL_SRC)/numa-model.c $(MODEL_SRC)/plugin-api.h \
		$(MODEL_SRC)/marker.h
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
		-fvisibility=hidden -o $@ $< -lpthread
$(MODEL_GUEST)/%: bench/guest/%.c bench/guest/node.h $(MODEL_SRC)/marker.h \
		selftests/replica_util.c selftests/replica_util.h
	@mkdir -p $(@D)
	gcc -static -O2 -Wall -Werror -D_GNU_SOURCE -Iselftests -o $@ $< \
		selftests/replica_util.c
BENCH_GUEST_PROGS := stream faults mark collapse reclaim filenodes spanmm
model: deps $(MODEL_SO) $(addprefix $(MODEL_GUEST)/,$(BENCH_GUEST_PROGS))

# The model is checked first so that the selftests' totals end the output.
check: kernel image model
	@rc=0; \
	$(MODEL_SRC)/validate.sh $(BUILD) $(OUT)/initramfs.cpio $(OUT)/disk \
		$(OUT)/model-check $(MODEL_SO) $(MODEL_GUEST) || rc=1; \
	boot/check.sh $(BUILD) $(OUT)/initramfs.cpio $(OUT)/disk \
		$(OUT)/check || rc=1; \
	exit $$rc

# The benchmarks of bench/ under the NUMA model, on kernels without
# debugging: ours and vanilla 6.12.  The report goes to out/bench/.
bench: image model
	@$(MAKE) -s FLAVOUR=bench kernel
	@$(MAKE) -s FLAVOUR=vanilla kernel
	@bench/run.sh $(CACHE) $(OUT)/initramfs.cpio $(OUT)/disk $(OUT)/bench \
		$(MODEL_SO) $(MODEL_GUEST)

# The randomized tests, far longer than make check runs them.
soak: kernel image
	@TEST_TIMEOUT=$${TEST_TIMEOUT:-7200} TIMEOUT=$${TIMEOUT:-8000} \
		boot/check.sh $(BUILD) $(OUT)/initramfs.cpio $(OUT)/disk \
		$(OUT)/soak boot/soak-boots

# make run shows replication: the policy is text unless POLICY says.
run: kernel image
	@POLICY=$${POLICY:-text} boot/qemu.sh run $(BUILD) \
		$(OUT)/initramfs.cpio $(OUT)/disk $(OUT)/run boot/demo.sh

# RUN is written as given, $ and all: $(file) runs while make expands the
# recipe, before any of its lines, so the directory is made the same way.
guest: kernel image
	@if [ -z "$$RUN" ]; then echo "make guest: say what to run: RUN='command'" >&2; exit 2; fi
	$(shell mkdir -p $(OUT)/guest)$(file >$(OUT)/guest/cmd.sh,$(value RUN))
	@boot/qemu.sh run $(BUILD) $(OUT)/initramfs.cpio $(OUT)/disk \
		$(OUT)/guest $(OUT)/guest/cmd.sh; st=$$?; \
	echo $$st > $(OUT)/guest/status; \
	[ $$st -eq 0 ] || echo "make guest: RUN exited with status $$st" \
		"(make itself can only exit 2; boot/guest exits $$st)" >&2; \
	exit $$st

lint: tree
	@boot/lint.sh $(CACHE) $(CURDIR)

# The upstream series (steps in mm-replica/steps), checked: git am onto
# pristine, checkpatch --strict, and a kernel build after every patch.
series: tree
	@boot/series.py $(CACHE) $(CURDIR) $(OUT)/series $(SERIES_FLAGS)

clean:
	rm -rf $(OUT) $(CACHE)/build

distclean: clean
	rm -rf $(CACHE)
