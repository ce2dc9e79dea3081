#!/usr/bin/env bash
# Make tracepoints usable for the tests: mount tracefs when we are root and it is not
# mounted yet (the kernel has it, but minimal VMs do not mount it). Never fails: tests
# that need tracefs skip with a reason when it is absent.
if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && echo "tracefs: mounted at /sys/kernel/tracing"
fi
exit 0
