/* SPDX-License-Identifier: MIT */
/*
 * libpfm4 bridge: names libpfm4 knows ("INST_RETIRED:ANY_P", "perf::cycles",
 * "perf::PERF_COUNT_SW_CPU_CLOCK:u") encoded into our attr, and enumeration of the events of
 * the PMUs libpfm4 detects on this machine.
 */
#include <pthread.h>
#include <stdlib.h>
#include "internal.h"
#include <perfkit/pmu.h>
/* after linux/perf_event.h (via pmu.h): libpfm4's own copy of the ABI then stays out */
#include <perfmon/pfmlib_perf_event.h>

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_ret = PFM_ERR_NOINIT;

static void pfm_init(void)
{
	pfm_init_ret = pfm_initialize();
	if (pfm_init_ret != PFM_SUCCESS)
		pk_warn("libpfm4 initialisation failed: %s", pfm_strerror(pfm_init_ret));
}

static int pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init);
	return pfm_init_ret == PFM_SUCCESS ? 0 : -ENODEV;
}

static int pfm_errno(int r)
{
	switch (r) {
	case PFM_ERR_NOTFOUND:
	case PFM_ERR_NOTSUPP:
		return -ENOENT;
	case PFM_ERR_NOMEM:
		return -ENOMEM;
	case PFM_ERR_TOOSMALL:
	case PFM_ERR_TOOMANY:
		return -E2BIG;
	case PFM_ERR_ATTR:
	case PFM_ERR_ATTR_VAL:
	case PFM_ERR_ATTR_SET:
	case PFM_ERR_FEATCOMB:
	case PFM_ERR_UMASK:
	case PFM_ERR_INVAL:
		return -PK_ERR_PARSE;
	default:
		return -EINVAL;
	}
}

PK_API int pk_pfm__encode(const char *name, struct pk_attr *attr)
{
	pfm_perf_encode_arg_t arg;
	struct pk_attr tmp;
	int r;

	if (!name || !*name || !attr)
		return pk_err(-EINVAL);
	if ((r = pfm_ready()) < 0)
		return pk_err(r);

	/* libpfm4 writes its own idea of the struct, which may be shorter or longer than the
	 * uapi header's; give it a zeroed pk_attr (256 bytes) and copy the fields we want. */
	memset(&tmp, 0, sizeof(tmp));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &tmp.attr;
	arg.size = sizeof(arg);
	/* default privilege level: user and kernel, like perf without modifiers */
	r = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r == PFM_ERR_NOTSUPP) {
		/* a PMU model without the extended (modifier) encoding */
		memset(&tmp, 0, sizeof(tmp));
		r = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT,
					      &arg);
	}
	if (r != PFM_SUCCESS) {
		pk_debug("libpfm4 cannot encode '%s': %s", name, pfm_strerror(r));
		return pk_err(pfm_errno(r));
	}
	attr->attr.type = tmp.attr.type;
	attr->attr.config = tmp.attr.config;
	attr->attr.config1 = tmp.attr.config1;
	attr->attr.config2 = tmp.attr.config2;
	/* modifiers the event string may carry (":u", ":k", ":precise=2", ...) */
	attr->attr.exclude_user = tmp.attr.exclude_user;
	attr->attr.exclude_kernel = tmp.attr.exclude_kernel;
	attr->attr.exclude_hv = tmp.attr.exclude_hv;
	attr->attr.exclude_idle = tmp.attr.exclude_idle;
	attr->attr.exclude_host = tmp.attr.exclude_host;
	attr->attr.exclude_guest = tmp.attr.exclude_guest;
	attr->attr.precise_ip = tmp.attr.precise_ip;
	if (tmp.attr.sample_period) {
		attr->attr.sample_period = tmp.attr.sample_period;
		attr->attr.freq = tmp.attr.freq;
	}
	return 0;
}

PK_API int pk_pfm__foreach(pk_pfm_cb cb, void *ctx)
{
	int r, pmu;

	if (!cb)
		return pk_err(-EINVAL);
	if ((r = pfm_ready()) < 0)
		return pk_err(r);
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present ||
		    !pinfo.name)
			continue;
		for (int ev = pinfo.first_event; ev != -1; ev = pfm_get_event_next(ev)) {
			pfm_event_info_t einfo;

			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(ev, PFM_OS_NONE, &einfo) != PFM_SUCCESS ||
			    !einfo.name)
				continue;
			r = cb(pinfo.name, einfo.name, einfo.desc ? einfo.desc : "", ctx);
			if (r)
				return r;
		}
	}
	return 0;
}
