# crashlab - plain GNU make. `make` builds ./crashlab and the guest agent,
# `make check` runs the tests, `make deps` installs what Debian lacks.
# Quiet unless V=1; -Werror switchable with WERROR=. SANITIZE=LIST (e.g.
# address,undefined) builds the host tool, its library and the unit tests
# with -fsanitize=LIST; the static guest agent is never sanitized.

CC ?= cc
CFLAGS ?= -O2 -g
WERROR ?= -Werror
VERSION := 0.1

# ncursesw: the browser (crashlab browse); libedit: the lab's prompt (crashlab lab).
PKGS := sqlite3 libarchive libelf libcrypto jansson ncursesw libedit
# libvirt: guests as libvirt domains (--backend libvirt, engine/vm-libvirt.c).
PKGS += libvirt
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -pthread

WARN := -Wall -Wextra $(WERROR) -Wno-unused-parameter
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. -DCRASHLAB_VERSION='"$(VERSION)"' $(PKG_CFLAGS)

# Sanitizers: undefined behaviour fails at once instead of printing and going
# on. build/sanitize.stamp holds the SANITIZE the objects in build/ were made
# with and is rewritten only when it changes, so switching rebuilds them all
# and a sanitized and a plain object never end up in one binary.
SANITIZE ?=
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
SAN_STAMP := build/sanitize.stamp
ifneq ($(shell cat $(SAN_STAMP) 2>/dev/null),$(SANITIZE)x)
$(shell mkdir -p build && echo '$(SANITIZE)x' >$(SAN_STAMP))
endif

ifeq ($(V),1)
Q :=
qecho := @true
else
Q := @
qecho := @echo
endif

CMD_SRCS := $(wildcard cmd/*.c)
LIB_SRCS := $(wildcard core/*.c) $(wildcard judge/*.c) $(wildcard engine/*.c) $(wildcard host/*.c) $(wildcard kbuild/*.c) $(wildcard crashdb/*.c) $(filter-out images/agent/%,$(wildcard images/*.c))
# The agent links the libc-only engine pieces it shares with the host.
AGENT_SHARED := $(wildcard core/*.c)
AGENT_SRCS = $(wildcard images/agent/*.c) $(wildcard $(AGENT_SHARED))
UNIT_SRCS := $(wildcard tests/unit/test-*.c)

LIB_OBJS := $(patsubst %.c,build/%.o,$(LIB_SRCS))
CMD_OBJS := $(patsubst %.c,build/%.o,$(CMD_SRCS))
UNIT_BINS := $(patsubst tests/unit/%.c,build/tests/%,$(UNIT_SRCS))
AGENT := images/agent/crashlab-agent

all: crashlab $(AGENT)

crashlab: $(CMD_OBJS) build/libcrashlab.a
	$(qecho) "  LINK    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CMD_OBJS) build/libcrashlab.a $(PKG_LIBS)

build/libcrashlab.a: $(LIB_OBJS)
	$(qecho) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

build/%.o: %.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	$(qecho) "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The in-guest agent is PID 1 of the guest: static, no dependencies beyond libc.
$(AGENT): $(AGENT_SRCS) $(wildcard images/agent/*.h) $(wildcard $(AGENT_SHARED:.c=.h))
	$(qecho) "  AGENT   $@"
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -I. -static -o $@ $(AGENT_SRCS)

# Unit tests link every command but main.c, so command-level code is testable too.
TEST_CMD_OBJS = $(filter-out build/cmd/main.o,$(CMD_OBJS))
build/tests/%: tests/unit/%.c build/libcrashlab.a $(TEST_CMD_OBJS) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(qecho) "  TEST    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(TEST_CMD_OBJS) build/libcrashlab.a $(PKG_LIBS)

# The judge's properties over generated workloads (tests/props/props.c).
build/tests/props: tests/props/props.c build/libcrashlab.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(qecho) "  TEST    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< build/libcrashlab.a $(PKG_LIBS)

# A stand-in for QEMU that plays a broken or hostile guest (tests/host/).
build/tests/fake-qemu: tests/host/fake-qemu.c build/libcrashlab.a
	@mkdir -p $(dir $@)
	$(qecho) "  TEST    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< build/libcrashlab.a $(PKG_LIBS)

unit: $(UNIT_BINS) build/tests/props build/tests/fake-qemu

check-props: build/tests/props
	@build/tests/props --count 10000

# Fuzz targets (tests/fuzz/): clang's libFuzzer with AddressSanitizer and
# UndefinedBehaviorSanitizer over the libc-only core (parsers, write-log
# reader, guest protocol). `make fuzz FUZZ_S=N` runs each for N seconds.
FUZZ_CC ?= clang
FUZZ_S ?= 30
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -I. $(FUZZ_SAN)
FUZZ_CORE_OBJS := $(patsubst %.c,build/fuzz/%.o,$(wildcard core/*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz-*.c))

build/fuzz/core/%.o: core/%.c
	@mkdir -p $(dir $@)
	$(qecho) "  FUZZCC  $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build/fuzz/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz.h $(FUZZ_CORE_OBJS)
	$(qecho) "  FUZZ    $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_CORE_OBJS) -lm

fuzz-build: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_CORE_OBJS)

fuzz: fuzz-build
	@tests/fuzz/run $(FUZZ_S)

# Host-only tests first, then guest tests; ends with "N passed, N failed, N skipped".
check: all unit fuzz-build
	@./crashlab kernel build >/dev/null && ./crashlab image build >/dev/null
	@nice -n 10 ./crashlab kernel build --source 6.1 >/dev/null
	@tests/run

# Only the host-only tests: no kernel build, no guest (about a minute).
check-host: all unit fuzz-build
	@tests/run --host

# The default example: the seed workload on all four file systems.
example: all
	./crashlab run tutorials/seed/seed.wl

# Every Debian package crashlab needs. Idempotent, quiet when nothing is missing.
DEB_PKGS := build-essential pkg-config patch qemu-system-x86 qemu-utils linux-source-6.12 bc \
	flex bison libelf-dev libssl-dev ccache libsqlite3-dev libarchive-dev libncurses-dev libjansson-dev libedit-dev \
	xfsprogs btrfs-progs f2fs-tools e2fsprogs busybox-static dmsetup cpio tmux sqlite3 python3 \
	libvirt-dev libvirt-daemon-system \
	chromium clang libclang-rt-14-dev parallel
DEB_PKGS += linux-source-6.1
# crashlab kernel tree|export|check: git, checkpatch's SPDX check (python3-ply), docutils for the .rst check
DEB_PKGS += git python3-ply python3-docutils

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		case "$$(dpkg-query -W -f='$${db:Status-Abbrev}' $$p 2>/dev/null)" in ii*) ;; *) missing="$$missing $$p";; esac; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "crashlab: error: missing Debian packages:$$missing" >&2; \
		echo "run 'make deps' as root (or: sudo apt-get install$$missing)" >&2; exit 2; \
	fi; \
	echo "crashlab: installing:$$missing"; \
	DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null && \
	echo "crashlab: packages installed"

clean:
	rm -rf build crashlab $(AGENT)

.PHONY: all unit check check-host check-props example deps clean fuzz fuzz-build
-include $(patsubst %.o,%.d,$(LIB_OBJS) $(CMD_OBJS) $(FUZZ_CORE_OBJS))
