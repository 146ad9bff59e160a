# magnet: top-level build.
#
#   make                  module (for KDIR) and user-space tools
#   make check            module and filter modules at W=1 with -Werror and
#                         sparse (C=2) against each supported kernel series
#                         (Debian's 6.1 and 6.12 headers; only KDIR if
#                         given), checkpatch --strict: any finding fails; and
#                         check-host: magnet-read on made-up trace files
#                         (its timeline in Chromium: scripts/install-deps),
#                         magnetd's parts (its Prometheus endpoint scraped
#                         by Prometheus, over TLS with basic auth too),
#                         libmagnet, magnet-supermon, the
#                         module's filter gate against its full rules; the
#                         host tests again under ASan and UBSan, and each
#                         fuzz target for FUZZ_SECS (5) seconds (clang)
#   make fuzz             the libFuzzer targets (tests/fuzz/) in build/fuzz/
#   make fuzz-soak FUZZ_SECS=3600
#                         each fuzz target for an hour, what it finds kept
#                         in build/fuzz/corpus/ (FUZZ_TARGETS="trace expr"
#                         picks some: trace expr config request reply
#                         webconfig pcapvm)
#   make demo             the demonstration, in the VM
#   make test             the VM test suites (tests/run does the same after
#                         installing what they need)
#   make test-cluster     Ganglia across two VM nodes, gmond and gmetad
#   make bench            benchmarks against the reference tools, in the VM;
#                         writes bench/results/, bench/RESULTS.md and
#                         bench/plots/ (BENCHMARKS="cost" runs some)
#   make install          honours DESTDIR and PREFIX; DKMS source included
#
# KDIR: kernel build directory (default: scripts/kdir, which picks by the
# series in KVER, 6.1 or 6.12, and FLAVOUR, standard or rt). Objects for each
# kernel release go to build/<release>/, so several kernels can be built
# side by side (e.g. Debian's and a debug kernel).

VERSION   := 0.2.0
PREFIX    ?= /usr/local
DESTDIR   ?=
KDIR      ?= $(shell scripts/kdir)
KREL      := $(shell scripts/krelease $(KDIR))
KOUT      := $(CURDIR)/build/$(KREL)
CC        ?= cc
CFLAGS    ?= -O2 -g
USER_CFLAGS := $(CFLAGS) -Wall -Wextra -Werror=implicit-function-declaration \
	       -I$(CURDIR)/include/uapi
CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-*/scripts/checkpatch.pl \
		$(CURDIR)/build/kernel-scripts/scripts/checkpatch.pl))

KMOD_SRC  := $(wildcard kmod/magnet/*.c kmod/magnet/*.h) kmod/magnet/Kbuild
KBUILD_COMMON := kmod/kernels.mk
SAMPLE_SRC := kmod/sample/magnet_sample.c kmod/sample/Kbuild
FILTER_SRC := $(wildcard filters/*.c filters/*.h) filters/Kbuild
# The packet filter's programs: check, run, copies and analyses (filters/pcap_vm.h),
# also built into a test module, a host test and a fuzz target.
PCAP_VM_SRC := $(addprefix filters/,pcap_vm.c pcap_check.c pcap_template.c pcap_ihl5.c pcap_bounds.c)
TKMOD_SRC := $(wildcard tests/kmod/*.c) tests/kmod/Kbuild tests/bin/stress_format.h
BKMOD_SRC := bench/kmod/magnet_bench.c bench/kmod/Kbuild
HEADERS   := include/uapi/linux/magnet.h include/linux/magnet.h

TOOLS     := build/bin/magnet-read build/bin/magnetctl build/bin/magnetd \
	     build/lib/libmagnet.so build/lib/libmagnet.a build/lib/libmagnet.pc \
	     build/bin/magnet-adaptive build/bin/magnet-cputop build/bin/magnet-callcost build/bin/magnet-spans build/lib/modmagnet.so \
	     build/bin/magnet-supermon
STATIC    := build/static/magnet-test build/static/magnet-test-stripped build/test-bin/magnet-nltest \
	     build/test-bin/magnetd-client build/test-bin/pcap-diff \
	     build/test-bin/acct-test build/test-bin/magnet-acct-shim.so

all: modules tools

# --- kernel modules ----------------------------------------------------------

$(KOUT)/.tree: $(KMOD_SRC) $(KBUILD_COMMON) $(SAMPLE_SRC) $(FILTER_SRC) $(TKMOD_SRC) $(BKMOD_SRC) $(HEADERS)
	@test -n "$(KREL)" || { echo "no kernel build tree at KDIR=$(KDIR)"; exit 1; }
	rm -rf $(KOUT)/kmod $(KOUT)/filters $(KOUT)/tests $(KOUT)/bench $(KOUT)/include
	mkdir -p $(KOUT)/kmod/magnet $(KOUT)/kmod/sample $(KOUT)/filters \
		$(KOUT)/tests/kmod $(KOUT)/tests/bin $(KOUT)/bench/kmod
	ln -s $(CURDIR)/include $(KOUT)/include
	ln -s $(CURDIR)/kmod/kernels.mk $(KOUT)/kmod/
	ln -s $(addprefix $(CURDIR)/,$(KMOD_SRC)) $(KOUT)/kmod/magnet/
	ln -s $(addprefix $(CURDIR)/,$(SAMPLE_SRC)) $(KOUT)/kmod/sample/
	ln -s $(addprefix $(CURDIR)/,$(FILTER_SRC)) $(KOUT)/filters/
	ln -s $(CURDIR)/tests/kmod/*.c $(CURDIR)/tests/kmod/Kbuild $(KOUT)/tests/kmod/
	ln -s $(addprefix $(CURDIR)/,$(PCAP_VM_SRC)) $(addprefix $(CURDIR)/filters/,pcap_vm.h pcap_native.c pcap_native.h) \
		$(KOUT)/tests/kmod/
	ln -s $(CURDIR)/tests/bin/stress_format.h $(KOUT)/tests/bin/
	ln -s $(addprefix $(CURDIR)/,$(BKMOD_SRC)) $(KOUT)/bench/kmod/
	touch $@

modules: $(KOUT)/.tree
	$(MAKE) -C $(KDIR) M=$(KOUT)/kmod/magnet W=1 modules
	$(MAKE) -C $(KDIR) M=$(KOUT)/kmod/sample W=1 \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/kmod/magnet/Module.symvers modules
	$(MAKE) -C $(KDIR) M=$(KOUT)/filters W=1 \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/kmod/magnet/Module.symvers modules
	$(MAKE) -C $(KDIR) M=$(KOUT)/tests/kmod W=1 \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/kmod/magnet/Module.symvers modules
	$(MAKE) -C $(KDIR) M=$(KOUT)/bench/kmod W=1 \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/kmod/magnet/Module.symvers modules

# --- user space ----------------------------------------------------------------

tools: $(TOOLS)
test-programs: $(STATIC)

# lib/: what every program that speaks to the module shares (netlink,
# probe sets, the debugfs control files, the mapped reader), one static
# library linked into each; not installed.
LIB_SRC   := $(addprefix lib/,nl.c probeset.c control.c mapped.c json.c merge.c \
	     print.c words.c filter.c f_packet.c f_header.c f_correlate.c \
	     names.c pcapfilter.c ledger.c acctwatch.c otel.c symbols.c steal.c)
LIB_HDR   := $(wildcard lib/*.h) include/uapi/linux/magnet.h
LIB_A     := build/lib/libmagnet-tools.a
TOOL_CFLAGS := $(USER_CFLAGS) -Ilib

build/obj/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -c -o $@ $<

$(LIB_A): $(patsubst %.c,build/obj/%.o,$(LIB_SRC))
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# its command line (main and its loop, options, -P's probes, -i's devices),
# then its parts
MR_MAIN         := $(addprefix tools/magnet-read/,magnet-read.c options.c probes.c devices.c)
MAGNET_READ_SRC := $(MR_MAIN) $(addprefix tools/magnet-read/,input.c journey.c \
		   blockio.c expr.c cooked.c output.c pcapng.c perfetto.c spans.c nodes.c \
		   profile.c) libmagnet/span.c

build/bin/magnet-read: $(MAGNET_READ_SRC) tools/magnet-read/magnet-read.h libmagnet/libmagnet.h \
		$(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -Ilibmagnet -DMAGNET_VERSION='"$(VERSION)"' -o $@ $(MAGNET_READ_SRC) $(LIB_A) -lmnl -lpcap -ldw -lelf

MAGNETCTL_SRC := $(addprefix tools/magnetctl/,magnetctl.c buffer.c probe.c filter.c stats.c \
		 monitor.c daemon.c session.c account.c acct.c)

build/bin/magnetctl: $(MAGNETCTL_SRC) $(wildcard tools/magnetctl/*.h) $(LIB_A) $(LIB_HDR) \
		build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -Ilibmagnet -o $@ $(MAGNETCTL_SRC) $(LIB_A) build/lib/libmagnet.a -lmnl -lpcap -lseccomp

# magnetd: the daemon (libev, libmnl, libconfuse, libmicrohttpd; its web
# configuration: libyaml, GnuTLS, libcrypt's bcrypt)
MAGNETD_SRC := $(addprefix magnetd/,magnetd.c config.c metrics.c kernel.c \
	       reader.c server.c nofile.c http.c exposition.c webconfig.c webauth.c export.c \
	       account.c acct.c sampler.c)
WEB_LIBS  := -lmicrohttpd -lgnutls -lyaml -lcrypt
MAGNETD_CFLAGS := $(TOOL_CFLAGS) -Imagnetd -Ilibmagnet

build/bin/magnetd: $(MAGNETD_SRC) $(wildcard magnetd/*.h) libmagnet/libmagnet.h $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(MAGNETD_CFLAGS) -o $@ $(MAGNETD_SRC) $(LIB_A) -lev -lmnl -lpcap -lseccomp -lconfuse $(WEB_LIBS) -lcurl -lm

# libmagnet: the client library, its pkg-config file and the example
LIBMAGNET_SOVER := 1
# (the client of magnetd; per-call accounting, straight to the module)
LIBMAGNET_SRC := libmagnet/libmagnet.c libmagnet/acct.c libmagnet/span.c
build/lib/libmagnet.so: $(LIBMAGNET_SRC) libmagnet/libmagnet.h include/uapi/linux/magnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -shared -Wl,-soname,libmagnet.so.$(LIBMAGNET_SOVER) \
		-o $@.$(LIBMAGNET_SOVER) $(LIBMAGNET_SRC) -pthread
	ln -sf libmagnet.so.$(LIBMAGNET_SOVER) $@

build/lib/libmagnet.a: $(LIBMAGNET_SRC) libmagnet/libmagnet.h include/uapi/linux/magnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c -o build/lib/libmagnet.o libmagnet/libmagnet.c
	$(CC) $(USER_CFLAGS) -c -o build/lib/libmagnet-acct.o libmagnet/acct.c
	$(CC) $(USER_CFLAGS) -c -o build/lib/libmagnet-span.o libmagnet/span.c
	rm -f $@
	ar rcs $@ build/lib/libmagnet.o build/lib/libmagnet-acct.o build/lib/libmagnet-span.o

build/lib/libmagnet.pc: libmagnet/libmagnet.pc.in Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

build/bin/magnet-adaptive: libmagnet/examples/adaptive-sender.c build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -o $@ $< build/lib/libmagnet.a -lm

build/bin/magnet-callcost: libmagnet/examples/callcost.c build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -o $@ $< build/lib/libmagnet.a

build/bin/magnet-spans: libmagnet/examples/spans.c build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -o $@ $< build/lib/libmagnet.a

build/bin/magnet-cputop: libmagnet/examples/cputop.c build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -o $@ $< build/lib/libmagnet.a

# gmond-plugin: modmagnet.so for Ganglia's gmond (libganglia1-dev,
# libapr1-dev, libtirpc-dev). libmagnet is compiled in (libmagnet.a is
# not position-independent).
build/lib/modmagnet.so: gmond-plugin/mod_magnet.c gmond-plugin/modmagnet.map \
		libmagnet/libmagnet.c libmagnet/libmagnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -shared $$(pkg-config --cflags libtirpc apr-1) -Ilibmagnet \
		-o $@ gmond-plugin/mod_magnet.c libmagnet/libmagnet.c \
		-Wl,--version-script=gmond-plugin/modmagnet.map \
		-Wl,-z,defs -lganglia -lapr-1 -lpthread
gmond-plugin: build/lib/modmagnet.so

# supermon-plugin: magnet-supermon, a Supermon data source (libev).
SUPERMON_SRC := supermon-plugin/magnet-supermon.c supermon-plugin/view.c libmagnet/libmagnet.c
build/bin/magnet-supermon: $(SUPERMON_SRC) supermon-plugin/view.h libmagnet/libmagnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -DMAGNET_VERSION='"$(VERSION)"' -o $@ \
		$(SUPERMON_SRC) -lev -lpthread -lm
GANGLIA_MODDIR ?= $(PREFIX)/lib/ganglia
# Where libmagnet goes (Debian's packages: /usr/lib/<multiarch>), where
# systemd units go, and where the drop-in that orders gmond after magnetd
# goes (the administrator's /etc for a source install; a package's, /lib).
LIBDIR    ?= $(PREFIX)/lib
UNITDIR   ?= /lib/systemd/system
DROPINDIR ?= /etc/systemd/system
# Wireshark loads Lua plugins from its own global folder (tshark -G
# folders: "Global Lua Plugins"; Debian's), whatever PREFIX is.
WIRESHARK_LUADIR ?= /usr/lib/$(shell $(CC) -print-multiarch)/wireshark/plugins

# Host unit tests of magnetd's parts (check-host runs them). SRCDIR: the
# tree, where they find its files (conf/, tests/host/data/).
UNIT_CFLAGS := -Itests -DSRCDIR='"$(CURDIR)"'
build/test-bin/metrics-unit: tests/host/metrics-unit.c tests/harness.h magnetd/metrics.c magnetd/metrics.h
	@mkdir -p $(@D)
	$(CC) $(MAGNETD_CFLAGS) $(UNIT_CFLAGS) -o $@ tests/host/metrics-unit.c magnetd/metrics.c -lm

build/test-bin/config-unit: tests/host/config-unit.c tests/harness.h magnetd/config.c magnetd/config.h $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(MAGNETD_CFLAGS) $(UNIT_CFLAGS) -o $@ tests/host/config-unit.c magnetd/config.c $(LIB_A) \
		-lconfuse -lmnl -lpcap

build/test-bin/libmagnet-unit: tests/host/libmagnet-unit.c tests/harness.h libmagnet/libmagnet.c libmagnet/span.c libmagnet/libmagnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ilibmagnet -Itests -o $@ tests/host/libmagnet-unit.c libmagnet/libmagnet.c libmagnet/span.c -lpthread

# The packet filter's interpreter, built from its own source in user
# space, against libpcap's.
build/test-bin/pcap-vm-unit: tests/host/pcap-vm-unit.c tests/host/pcap-host.h tests/harness.h $(PCAP_VM_SRC) filters/pcap_vm.h \
		lib/pcapfilter.c lib/pcapfilter.h $(wildcard tests/host/kshim/linux/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wall -Wextra -Itests -Itests/host/kshim -Iinclude -Iinclude/uapi -Ifilters -Ilib \
		-o $@ tests/host/pcap-vm-unit.c $(PCAP_VM_SRC) lib/pcapfilter.c -lpcap

# The module's filter gate, built from its own source in user space.
build/test-bin/rules-unit: tests/host/rules-unit.c tests/harness.h kmod/magnet/rules.c kmod/magnet/rules.h \
		$(wildcard tests/host/kshim/linux/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wall -Wextra -Itests -Itests/host/kshim -Iinclude -Iinclude/uapi -Ikmod/magnet \
		-o $@ tests/host/rules-unit.c kmod/magnet/rules.c

build/test-bin/lib-unit: tests/host/lib-unit.c tests/harness.h $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -Itests -o $@ tests/host/lib-unit.c $(LIB_A) -lmnl -lpcap

build/test-bin/nl-attrs: tests/host/nl-attrs.c $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -o $@ tests/host/nl-attrs.c $(LIB_A) -lmnl -lpcap

build/test-bin/magnetd-client: tests/bin/magnetd-client.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $<

# The packet filter's every way of running a program against libpcap, in
# the VM (with the test module magnet_pcapdiff).
build/test-bin/pcap-diff: tests/bin/pcap-diff.c tests/host/pcap-gen.h lib/pcapfilter.c lib/pcapfilter.h
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -Itests/host -o $@ tests/bin/pcap-diff.c lib/pcapfilter.c -lpcap

build/test-bin/acct-test: tests/bin/acct-test.c tests/harness.h build/lib/libmagnet.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itests -Ilibmagnet -o $@ $< build/lib/libmagnet.a -pthread

# Resourceful's experiment's shim (bench/run acct-cost), libmagnet's
# accounting compiled in, position-independent.
build/test-bin/magnet-acct-shim.so: bench/acct-shim.c libmagnet/acct.c libmagnet/libmagnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -shared -Ilibmagnet -o $@ bench/acct-shim.c libmagnet/acct.c -ldl -pthread

build/test-bin/magnet-nltest: tests/bin/magnet-nltest.c tests/harness.h include/uapi/linux/magnet.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itests -o $@ $< -lmnl

build/static/magnet-test: tests/bin/magnet-test.c tests/harness.h tests/bin/stress_format.h include/uapi/linux/magnet.h \
		lib/mapped.c lib/mapped.h libmagnet/span.c libmagnet/libmagnet.h
	@mkdir -p $(@D)
	$(CC) $(TOOL_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls \
		-Itests -Ilibmagnet -static -o $@ $< lib/mapped.c libmagnet/span.c -luring -lpthread

# (the sampler's profile of code without symbols: its mapping's range)
build/static/magnet-test-stripped: build/static/magnet-test
	strip -o $@ $<

# --- checks ------------------------------------------------------------------

# The C host test programs, tests/host/NAME-unit.c, each a set of TEST()s.
# make check-host T=NAME runs just their tests whose names contain NAME,
# in every program that has one (tests/host/units.sh), and nothing else.
HOST_UNITS := $(addprefix build/test-bin/,metrics-unit config-unit libmagnet-unit rules-unit \
		pcap-vm-unit lib-unit server-unit)

ifneq ($(T),)
check-host: $(HOST_UNITS)
	tests/host/units.sh '$(T)' $(HOST_UNITS)
else
check-host: build/bin/magnet-read build/bin/magnet-supermon build/bin/magnetd build/bin/magnetctl \
		build/test-bin/nl-attrs $(filter-out %/server-unit,$(HOST_UNITS))
	tests/host/magnet-read.sh
	tests/host/timeline-view.sh
	tests/host/kernels.sh
	build/test-bin/metrics-unit
	build/test-bin/config-unit
	build/test-bin/libmagnet-unit
	build/test-bin/rules-unit
	build/test-bin/pcap-vm-unit
	build/test-bin/lib-unit
	/usr/bin/python3 tests/host/nl-attrs.py $(CURDIR) build/test-bin/nl-attrs
	/usr/bin/python3 tests/host/supermon-test.py $(CURDIR)
endif

# --- magnetd's socket, sanitizers, fuzzing (check-host runs them) ----------------
#
# build/fuzz/ is built with clang: the host tests again under AddressSanitizer
# and UndefinedBehaviorSanitizer, where any finding fails, and a libFuzzer
# target for each parser of outside input (tests/fuzz/TARGET.c): trace
# files as magnet-read -r reads them, its filter expression, magnetd.conf,
# magnetd's request lines, libmagnet's side of the protocol, magnetd's web
# configuration. check-host runs
# each from its seed corpus (tests/fuzz/corpus/TARGET/, made by
# tests/fuzz/make-corpus.py) with a fixed seed for FUZZ_SECS seconds; any
# crash, leak, sanitizer finding or hang fails it, leaving the input in
# build/fuzz/TARGET-crash-* (-leak-, -timeout-); build/fuzz/fuzz-TARGET FILE
# replays it. make fuzz-soak FUZZ_SECS=3600 runs them long, keeping what
# they find in build/fuzz/corpus/TARGET/ (FUZZ_TARGETS= picks some).

FUZZ_CC      ?= clang
FUZZ_SECS    ?= 5
FUZZ_ALL     := trace expr config request reply webconfig pcapvm
FUZZ_TARGETS ?= $(FUZZ_ALL)
SAN_CFLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -Wall -Wextra -Werror=implicit-function-declaration \
		-Wno-gnu-variable-sized-type-not-at-end -I$(CURDIR)/include/uapi
SAN_ENV      := ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
FUZZ_FLAGS    = -seed=1 -max_total_time=$(FUZZ_SECS) -timeout=10 -rss_limit_mb=2048 \
		-close_fd_mask=3 -print_final_stats=1 -artifact_prefix=build/fuzz/$*-

# magnet-read's parts without its command line (and so without the live
# capture's -P)
MR_PARTS     := $(filter-out $(MR_MAIN),$(MAGNET_READ_SRC))
MR_HEADERS   := tools/magnet-read/magnet-read.h $(LIB_HDR)
FUZZ_trace   := tests/fuzz/trace.c $(MR_PARTS) $(LIB_SRC)
FUZZ_expr    := tests/fuzz/expr.c $(MR_PARTS) $(LIB_SRC)
FUZZ_config  := tests/fuzz/config.c magnetd/config.c $(LIB_SRC)
FUZZ_request := tests/fuzz/request.c tests/host/daemon-stubs.c magnetd/server.c magnetd/metrics.c \
		$(LIB_SRC)
# (reply.c includes libmagnet.c, to make a client on a socket pair)
FUZZ_reply   := tests/fuzz/reply.c
FUZZ_webconfig := tests/fuzz/webconfig.c magnetd/webconfig.c
# (the packet filter's kernel code, built with the kernel's headers stood in for)
FUZZ_pcapvm  := tests/fuzz/pcapvm.c $(PCAP_VM_SRC)
FUZZ_INC_pcapvm   := -Itests/host/kshim -Iinclude -Ifilters -Itests/host
FUZZ_LIBS_pcapvm  := -lpcap
FUZZ_LIBS_trace   := -lmnl -lpcap -lseccomp -ldw -lelf
FUZZ_LIBS_expr    := -lmnl -lpcap -lseccomp -ldw -lelf
FUZZ_LIBS_config  := -lconfuse -lmnl -lpcap -lseccomp -ldw -lelf
FUZZ_LIBS_request := -lev -lm -lmnl -lpcap -lseccomp -ldw -lelf
FUZZ_LIBS_webconfig := -lgnutls -lyaml
FUZZ_HDRS    := $(MR_HEADERS) $(wildcard magnetd/*.h) libmagnet/libmagnet.h \
		include/uapi/linux/magnet.h

# magnetd's socket on the host, its daemon stubbed (tests/host/server-unit.c).
build/test-bin/server-unit: tests/host/server-unit.c tests/host/daemon-stubs.c tests/harness.h \
		magnetd/server.c magnetd/metrics.c \
		$(wildcard magnetd/*.h) libmagnet/libmagnet.h $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(MAGNETD_CFLAGS) -Itests -o $@ tests/host/server-unit.c tests/host/daemon-stubs.c magnetd/server.c \
		magnetd/metrics.c $(LIB_A) -lev -lmnl -lpcap -lseccomp -lm

check-server-unit: build/test-bin/server-unit
	build/test-bin/server-unit

# magnetd's HTTP endpoint on the host, scraped by Prometheus
# (tests/host/prometheus-test.py, tests/host/http-host.c).
HTTP_HOST_SRC := tests/host/http-host.c tests/host/daemon-stubs.c \
		 $(addprefix magnetd/,server.c metrics.c config.c nofile.c http.c exposition.c \
		 webconfig.c webauth.c sampler.c)
build/test-bin/http-host: $(HTTP_HOST_SRC) $(wildcard magnetd/*.h) libmagnet/libmagnet.h $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(MAGNETD_CFLAGS) -Itests -o $@ $(HTTP_HOST_SRC) $(LIB_A) -lev -lconfuse -lmnl -lpcap -lseccomp \
		$(WEB_LIBS) -lm

check-prometheus: build/test-bin/http-host
	/usr/bin/python3 tests/host/prometheus-test.py $(CURDIR)

# Its TLS and basic authentication (magnetd/webconfig.c, webauth.c): bad web
# configurations by magnetd -n, the endpoint by clients and by Prometheus
# (tests/host/webconfig-test.py; certificates made by openssl at test time).
check-webconfig: build/test-bin/http-host build/bin/magnetd
	/usr/bin/python3 tests/host/webconfig-test.py $(CURDIR)

# clang, with libFuzzer: said plainly when it is not there
build/fuzz/.clang:
	@mkdir -p $(@D)
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' | \
		$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c -o $@.bin - 2>/dev/null || \
		{ echo "check-host: the sanitizer builds and fuzz targets need $(FUZZ_CC) with libFuzzer" \
		       "(Debian: apt-get install clang; scripts/install-deps installs it)"; exit 1; }
	@rm -f $@.bin
	@touch $@

SAN_UNITS := config-unit metrics-unit libmagnet-unit server-unit
build/fuzz/san/config-unit: tests/host/config-unit.c magnetd/config.c $(LIB_SRC)
build/fuzz/san/config-unit: SAN_LIBS := -lconfuse -lmnl -lpcap -lseccomp -ldw -lelf
build/fuzz/san/metrics-unit: tests/host/metrics-unit.c magnetd/metrics.c
build/fuzz/san/metrics-unit: SAN_LIBS := -lm
build/fuzz/san/libmagnet-unit: tests/host/libmagnet-unit.c libmagnet/libmagnet.c libmagnet/span.c
build/fuzz/san/libmagnet-unit: SAN_LIBS := -lpthread
build/fuzz/san/server-unit: tests/host/server-unit.c tests/host/daemon-stubs.c magnetd/server.c magnetd/metrics.c \
		$(LIB_SRC)
build/fuzz/san/server-unit: SAN_LIBS := -lev -lm -lmnl -lpcap -lseccomp -ldw -lelf
$(addprefix build/fuzz/san/,$(SAN_UNITS)): $(FUZZ_HDRS) | build/fuzz/.clang
	@mkdir -p $(@D)
	$(FUZZ_CC) $(SAN_CFLAGS) -Imagnetd -Ilibmagnet -Ilib $(UNIT_CFLAGS) -o $@ \
		$(filter %.c,$^) $(SAN_LIBS)

build/fuzz/san/magnet-read: $(MAGNET_READ_SRC) $(LIB_SRC) $(FUZZ_HDRS) | build/fuzz/.clang
	@mkdir -p $(@D)
	$(FUZZ_CC) $(SAN_CFLAGS) -Ilib -Ilibmagnet -DMAGNET_VERSION='"$(VERSION)"' -o $@ $(MAGNET_READ_SRC) $(LIB_SRC) -lmnl -lpcap -lseccomp -ldw -lelf

# The host tests under the sanitizers (magnet-read exits without freeing
# what it keeps until then: no leak check there).
check-sanitize: $(addprefix build/fuzz/san/,$(SAN_UNITS) magnet-read)
	$(SAN_ENV) build/fuzz/san/config-unit
	$(SAN_ENV) build/fuzz/san/metrics-unit
	$(SAN_ENV) build/fuzz/san/libmagnet-unit
	$(SAN_ENV) build/fuzz/san/server-unit
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/host/magnet-read.sh build/fuzz/san/magnet-read

build/fuzz/fuzz-trace: $(FUZZ_trace)
build/fuzz/fuzz-expr: $(FUZZ_expr)
build/fuzz/fuzz-config: $(FUZZ_config)
build/fuzz/fuzz-request: $(FUZZ_request)
build/fuzz/fuzz-reply: $(FUZZ_reply) libmagnet/libmagnet.c
build/fuzz/fuzz-webconfig: $(FUZZ_webconfig)
build/fuzz/fuzz-pcapvm: $(FUZZ_pcapvm) filters/pcap_vm.h tests/host/pcap-gen.h tests/host/pcap-host.h \
		$(wildcard tests/host/kshim/linux/*.h)
$(addprefix build/fuzz/fuzz-,$(FUZZ_ALL)): $(FUZZ_HDRS) | build/fuzz/.clang
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_INC_$(@F:fuzz-%=%)) $(SAN_CFLAGS) -fsanitize=fuzzer \
		-Itools/magnet-read -Imagnetd -Ilibmagnet \
		-Ilib -Itests -o $@ $(FUZZ_$(@F:fuzz-%=%)) $(FUZZ_LIBS_$(@F:fuzz-%=%))

fuzz: $(addprefix build/fuzz/fuzz-,$(FUZZ_TARGETS))

# Each target from its seed corpus, the inputs it finds kept apart from it:
# check-host's short run starts afresh each time, from the same seeds.
fuzz-run-%: build/fuzz/fuzz-%
	@rm -rf build/fuzz/run/$*
	@mkdir -p build/fuzz/run/$*
	$(SAN_ENV) $< $(FUZZ_FLAGS) $(addprefix -dict=,$(wildcard tests/fuzz/$*.dict)) \
		build/fuzz/run/$* tests/fuzz/corpus/$*

fuzz-soak-%: build/fuzz/fuzz-%
	@mkdir -p build/fuzz/corpus/$*
	$(SAN_ENV) $< $(FUZZ_FLAGS) $(addprefix -dict=,$(wildcard tests/fuzz/$*.dict)) \
		build/fuzz/corpus/$* tests/fuzz/corpus/$*

check-fuzz: $(addprefix fuzz-run-,$(FUZZ_TARGETS))
fuzz-soak: $(addprefix fuzz-soak-,$(FUZZ_TARGETS))

ifeq ($(T),)
check-host: check-server-unit check-prometheus check-webconfig check-sanitize check-fuzz
endif
.PHONY: check-server-unit check-prometheus check-webconfig check-sanitize check-fuzz fuzz fuzz-soak

# The kernel checks run against each series magnet supports (Debian's
# 6.1 and 6.12 headers), or only against KDIR when it is given.
CHECK_KVERS ?= 6.1 6.12
ifeq ($(origin KDIR),command line)
CHECK_KDIRS := $(KDIR)
else
CHECK_KDIRS = $(foreach v,$(CHECK_KVERS),$(shell KVER=$(v) scripts/kdir || echo missing-$(v)))
endif

check: check-host check-style
	@for k in $(CHECK_KDIRS); do \
		$(MAKE) --no-print-directory check-kmod KDIR=$$k || exit 1; \
	done
	@echo "check: W=1, sparse and checkpatch --strict are clean ($(CHECK_KDIRS))"

# One kernel: the module and the filter modules at W=1 with -Werror and
# sparse; any finding fails.
check-kmod: $(KOUT)/.tree
	@echo "check-kmod: $(KDIR) ($(KREL))"
	$(MAKE) -C $(KDIR) M=$(KOUT)/kmod/magnet clean >/dev/null
	$(MAKE) -C $(KDIR) M=$(KOUT)/kmod/magnet W=1 C=2 KCFLAGS=-Werror modules \
		2>&1 | tee $(KOUT)/check.log
	$(MAKE) -C $(KDIR) M=$(KOUT)/filters clean >/dev/null
	$(MAKE) -C $(KDIR) M=$(KOUT)/filters W=1 C=2 KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS=$(KOUT)/kmod/magnet/Module.symvers modules \
		2>&1 | tee -a $(KOUT)/check.log
	@! grep -E 'warning:|error:|Error [0-9]' $(KOUT)/check.log || \
		{ echo "check: compiler or sparse findings above ($(KREL))"; exit 1; }

check-style:
	@test -n "$(CHECKPATCH)" || scripts/get-checkpatch
	$(firstword $(CHECKPATCH) build/kernel-scripts/scripts/checkpatch.pl) \
		--no-tree --strict --quiet -f \
		$(filter-out kmod/magnet/compat.h,$(wildcard kmod/magnet/*.c kmod/magnet/*.h)) \
		$(HEADERS) kmod/sample/*.c filters/*.c filters/*.h tests/kmod/*.c tests/bin/stress_format.h \
		bench/kmod/*.c
	@# compat.h is where kernel versions are compared, the one place
	@# checkpatch's advice against LINUX_VERSION_CODE cannot apply to.
	$(firstword $(CHECKPATCH) build/kernel-scripts/scripts/checkpatch.pl) \
		--no-tree --strict --quiet --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		-f kmod/magnet/compat.h

test:
	tests/rig/vm-run

# Benchmarks against ftrace, bpftrace (and LTTng where it loads) in one VM
# boot: bench/results/*.json, then bench/RESULTS.md and bench/plots/ from
# them. BENCHMARKS="cost pfilter" runs some. Not part of check.
bench: modules tools test-programs
	bench/run $(BENCHMARKS)

# Ganglia across a cluster: two VM nodes, a collector gmond and gmetad.
test-cluster:
	tests/rig/cluster

# The demonstration in the VM: events from every context, losses, probes,
# then live packet journeys of small transfers.
demo:
	tests/rig/vm-run demo

# --- install -----------------------------------------------------------------

MODDIR := $(DESTDIR)/lib/modules/$(KREL)/extra
DKMSDIR := $(DESTDIR)/usr/src/magnet-$(VERSION)

# install: the modules built for this kernel (KDIR), user space, and the
# modules' source for DKMS. Packagers use the parts: install-user (PREFIX,
# DESTDIR, GANGLIA_MODDIR), install-dkms (DESTDIR); debian/rules does.
install: install-modules install-user install-dkms

install-modules: modules
	install -D -m 644 $(KOUT)/kmod/magnet/magnet.ko $(MODDIR)/magnet.ko
	install -D -m 644 -t $(MODDIR) $(KOUT)/filters/magnet_header.ko \
		$(KOUT)/filters/magnet_correlate.ko $(KOUT)/filters/magnet_packet.ko
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KREL); fi

install-user: tools
	install -D -m 755 build/bin/magnet-read $(DESTDIR)$(PREFIX)/bin/magnet-read
	install -D -m 644 tools/magnet-read/magnet-read.1 $(DESTDIR)$(PREFIX)/share/man/man1/magnet-read.1
	$(MAKE) install-wireshark
	install -D -m 755 build/bin/magnetctl $(DESTDIR)$(PREFIX)/sbin/magnetctl
	install -D -m 644 tools/magnetctl/magnetctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/magnetctl.8
	install -D -m 644 include/uapi/linux/magnet.h $(DESTDIR)$(PREFIX)/include/linux/magnet.h
	install -D -m 755 build/bin/magnetd $(DESTDIR)$(PREFIX)/sbin/magnetd
	install -D -m 644 magnetd/magnetd.8 $(DESTDIR)$(PREFIX)/share/man/man8/magnetd.8
	install -D -m 644 magnetd/magnetd.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/magnetd.conf.5
	@if [ ! -e $(DESTDIR)/etc/magnet/magnetd.conf ]; then \
		install -D -m 644 conf/magnetd.conf $(DESTDIR)/etc/magnet/magnetd.conf; fi
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' conf/magnetd.service > \
		$(DESTDIR)$(UNITDIR)/magnetd.service
	install -D -m 644 build/lib/libmagnet.so.$(LIBMAGNET_SOVER) \
		$(DESTDIR)$(LIBDIR)/libmagnet.so.$(LIBMAGNET_SOVER)
	ln -sf libmagnet.so.$(LIBMAGNET_SOVER) $(DESTDIR)$(LIBDIR)/libmagnet.so
	install -D -m 644 build/lib/libmagnet.a $(DESTDIR)$(LIBDIR)/libmagnet.a
	install -D -m 644 build/lib/libmagnet.pc $(DESTDIR)$(LIBDIR)/pkgconfig/libmagnet.pc
	install -D -m 644 libmagnet/libmagnet.h $(DESTDIR)$(PREFIX)/include/libmagnet.h
	install -D -m 644 libmagnet/libmagnet.3 $(DESTDIR)$(PREFIX)/share/man/man3/libmagnet.3
	install -D -m 755 build/bin/magnet-adaptive $(DESTDIR)$(PREFIX)/bin/magnet-adaptive
	install -D -m 755 build/bin/magnet-cputop $(DESTDIR)$(PREFIX)/bin/magnet-cputop
	install -D -m 755 build/bin/magnet-callcost $(DESTDIR)$(PREFIX)/bin/magnet-callcost
	install -D -m 755 build/bin/magnet-spans $(DESTDIR)$(PREFIX)/bin/magnet-spans
	install -D -m 644 build/lib/modmagnet.so $(DESTDIR)$(GANGLIA_MODDIR)/modmagnet.so
	install -D -m 644 gmond-plugin/modmagnet.7 $(DESTDIR)$(PREFIX)/share/man/man7/modmagnet.7
	@if [ ! -e $(DESTDIR)/etc/ganglia/conf.d/magnet.conf ]; then \
		install -d $(DESTDIR)/etc/ganglia/conf.d; \
		sed 's|@GANGLIA_MODDIR@|$(GANGLIA_MODDIR)|g' conf/ganglia/magnet.conf > \
			$(DESTDIR)/etc/ganglia/conf.d/magnet.conf; fi
	install -D -m 755 build/bin/magnet-supermon $(DESTDIR)$(PREFIX)/sbin/magnet-supermon
	install -D -m 644 supermon-plugin/magnet-supermon.8 $(DESTDIR)$(PREFIX)/share/man/man8/magnet-supermon.8
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' conf/magnet-supermon.service > \
		$(DESTDIR)$(UNITDIR)/magnet-supermon.service
	install -D -m 644 conf/ganglia/ganglia-monitor.service.d-magnet.conf \
		$(DESTDIR)$(DROPINDIR)/ganglia-monitor.service.d/magnet.conf
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi

install-dkms:
	install -D -m 644 include/linux/magnet.h $(DKMSDIR)/include/linux/magnet.h
	install -D -m 644 include/uapi/linux/magnet.h $(DKMSDIR)/include/uapi/linux/magnet.h
	install -D -m 644 -t $(DKMSDIR)/kmod/magnet $(KMOD_SRC) kmod/magnet/Makefile
	install -D -m 644 -t $(DKMSDIR)/kmod $(KBUILD_COMMON)
	install -D -m 644 -t $(DKMSDIR)/filters $(FILTER_SRC) filters/Makefile
	sed 's/@VERSION@/$(VERSION)/' dkms.conf.in > $(DKMSDIR)/dkms.conf

# Debian packages (debian/), built from a copy of the tree in build/deb/
# (dpkg-buildpackage cleans its tree), then checked with lintian. The
# .deb files land in build/deb/.
deb:
	rm -rf build/deb
	mkdir -p build/deb/magnet-$(VERSION)
	tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C build/deb/magnet-$(VERSION)
	cd build/deb/magnet-$(VERSION) && dpkg-buildpackage -us -uc -b
	lintian --fail-on warning,error --suppress-tags-from-file debian/lintian-suppressed \
		build/deb/magnet_$(VERSION)_*.changes

# The Grafana dashboard of magnetd's Prometheus metrics and its provisioning.
GRAFANA_DIR ?= /var/lib/grafana/dashboards/magnet
install-grafana:
	install -D -m 644 conf/grafana/magnet.json $(DESTDIR)$(GRAFANA_DIR)/magnet.json
	install -d $(DESTDIR)/etc/grafana/provisioning/dashboards
	sed 's|/var/lib/grafana/dashboards/magnet|$(GRAFANA_DIR)|' conf/grafana/provisioning.yaml > \
		$(DESTDIR)/etc/grafana/provisioning/dashboards/magnet.yaml

# The Wireshark dissector of magnet-read's pcapng files, alone.
install-wireshark:
	install -D -m 644 wireshark/magnet.lua $(DESTDIR)$(WIRESHARK_LUADIR)/magnet.lua

uninstall:
	rm -f $(MODDIR)/magnet.ko $(MODDIR)/magnet_header.ko \
	      $(MODDIR)/magnet_correlate.ko $(MODDIR)/magnet_packet.ko $(DESTDIR)$(PREFIX)/bin/magnet-read \
	      $(DESTDIR)$(WIRESHARK_LUADIR)/magnet.lua \
	      $(DESTDIR)$(PREFIX)/include/linux/magnet.h \
	      $(DESTDIR)$(PREFIX)/sbin/magnetctl \
	      $(DESTDIR)$(PREFIX)/share/man/man8/magnetctl.8 \
	      $(DESTDIR)$(PREFIX)/share/man/man1/magnet-read.1 \
	      $(DESTDIR)$(PREFIX)/sbin/magnetd \
	      $(DESTDIR)$(PREFIX)/share/man/man8/magnetd.8 \
	      $(DESTDIR)$(PREFIX)/share/man/man5/magnetd.conf.5 \
	      $(DESTDIR)$(UNITDIR)/magnetd.service \
	      $(DESTDIR)$(LIBDIR)/libmagnet.so* $(DESTDIR)$(LIBDIR)/libmagnet.a \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/libmagnet.pc \
	      $(DESTDIR)$(PREFIX)/include/libmagnet.h $(DESTDIR)$(PREFIX)/bin/magnet-adaptive \
	      $(DESTDIR)$(PREFIX)/bin/magnet-cputop $(DESTDIR)$(PREFIX)/bin/magnet-callcost \
	      $(DESTDIR)$(PREFIX)/bin/magnet-spans \
	      $(DESTDIR)$(PREFIX)/share/man/man3/libmagnet.3 \
	      $(DESTDIR)$(GANGLIA_MODDIR)/modmagnet.so \
	      $(DESTDIR)$(PREFIX)/share/man/man7/modmagnet.7 \
	      $(DESTDIR)$(PREFIX)/sbin/magnet-supermon \
	      $(DESTDIR)$(PREFIX)/share/man/man8/magnet-supermon.8 \
	      $(DESTDIR)$(UNITDIR)/magnet-supermon.service \
	      $(DESTDIR)$(DROPINDIR)/ganglia-monitor.service.d/magnet.conf \
	      $(DESTDIR)$(GRAFANA_DIR)/magnet.json \
	      $(DESTDIR)/etc/grafana/provisioning/dashboards/magnet.yaml
	rm -rf $(DKMSDIR)

clean:
	rm -rf build

.PHONY: all modules tools gmond-plugin test-programs check check-host check-kmod check-style test test-cluster bench demo install install-modules install-user install-dkms install-wireshark install-grafana deb uninstall clean
