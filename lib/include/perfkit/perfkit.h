/* SPDX-License-Identifier: MIT */
/* perfkit/perfkit.h - include everything. */
#ifndef PERFKIT_PERFKIT_H
#define PERFKIT_PERFKIT_H
#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/pmu.h>
#include <perfkit/event.h>
#include <perfkit/probe.h>
#include <perfkit/readfmt.h>
#include <perfkit/count.h>
#include <perfkit/record.h>
#include <perfkit/ring.h>
#include <perfkit/data.h>
#include <perfkit/symbol.h>
#include <perfkit/report.h>
#include <perfkit/session.h>
#include <perfkit/mmap.h>
#include <perfkit/synth.h>
#include <perfkit/recorder.h>
#include <perfkit/export.h>
#include <perfkit/annotate.h>
#include <perfkit/self.h>
#include <perfkit/trace.h>
#include <perfkit/sched.h>
#endif
