# SPDX-License-Identifier: GPL-2.0
# The kernels magnet builds on: Linux 6.1 to 6.12 (tested: Debian's 6.1
# and 6.12, stock and PREEMPT_RT, and debug builds of both). Included by
# every Kbuild file of magnet's modules, so another kernel is refused with
# one clear message before anything is compiled. The interfaces that
# differ inside that range are in kmod/magnet/compat.h.
magnet_kernel := $(VERSION).$(PATCHLEVEL)
ifeq ($(filter 6.1 6.2 6.3 6.4 6.5 6.6 6.7 6.8 6.9 6.10 6.11 6.12,$(magnet_kernel)),)
$(error magnet builds on Linux 6.1 to 6.12; $(KERNELRELEASE) is $(magnet_kernel). Build against one of those (on Debian 12: linux-headers-amd64, 6.1, or linux-headers-6.12-amd64))
endif
