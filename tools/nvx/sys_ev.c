// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the system process's event loop (uvm run|serve --uintr).
 *
 * The serving thread learns of arrivals from the endpoint's user
 * interrupt (NVX_UVM_EP_IOC_NOTIFY, one per arrival batch) instead of
 * blocking in RECV. The handler only notes the arrival; the loop takes
 * requests with nonblocking RECVs and, when there are none, waits in
 * NVX_IOC_UINTR_WAIT with delivery masked, so that an arrival after its
 * last RECV ends the wait at once (the vector stays pending).
 * Documentation/nvx/uvm-sys.rst, "The event loop", describes it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "nvxtool.h"
#include "nvx_uintr.h"
#include "nvx_uvm.h"
#include "sys.h"
#include "sys_int.h"

#if NVX_HAVE_UINTR_LIB

static uint64_t nvx_sys_ev_hits;	/* the handler's deliveries */
static uint32_t nvx_sys_ev_note;	/* 1: an arrival since the last RECV */

#define NVX_SYS_EV_VECTOR	0

static NVX_UINTR_HANDLER void nvx_sys_ev_handler(struct nvx_uintr_frame *f,
						 uint64_t vector)
{
	__atomic_add_fetch(&nvx_sys_ev_hits, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&nvx_sys_ev_note, 1, __ATOMIC_RELEASE);
}

/**
 * nvx_sys_ev_setup() - the event loop's handler, vector fd and NOTIFY
 * @sys: the process; its nvx_fd, ev_rfd and ev_vfd are set.
 * @o: its options (@o->nvx_fd, @o->verbose).
 *
 * Return: NVX_EXIT_OK, or NVX_EXIT_FAIL (said on stderr).
 */
int nvx_sys_ev_setup(struct nvx_sys *sys, const struct nvx_sys_opts *o)
{
	struct nvx_uvm_notify n = { 0, -1, 0 };
	unsigned long req = NVX_IOC_UINTR_REGISTER;
	const char *what = "NVX_IOC_UINTR_REGISTER";
	int fd;

	/* as for the endpoint: guest fds 0-2 are ours */
	if (o->nvx_fd < 3) {
		nvx_err("sys: --uintr: the nvx device is fd %d, a guest's stdio",
			o->nvx_fd);
		return NVX_EXIT_FAIL;
	}
	sys->nvx_fd = o->nvx_fd;
	fd = nvx_uintr_register_handler(sys->nvx_fd, nvx_sys_ev_handler, NULL,
					0, 0);
	if (fd < 0)
		goto fail;
	sys->ev_rfd = fd;
	req = NVX_IOC_UINTR_VECTOR_FD;
	what = "NVX_IOC_UINTR_VECTOR_FD";
	fd = nvx_uintr_vector_fd(sys->nvx_fd, NVX_SYS_EV_VECTOR);
	if (fd < 0)
		goto fail;
	sys->ev_vfd = fd;
	req = NVX_UVM_EP_IOC_NOTIFY;
	what = "NVX_UVM_EP_IOC_NOTIFY";
	n.vector_fd = fd;
	if (ioctl(sys->ep_fd, NVX_UVM_EP_IOC_NOTIFY, &n)) {
		fd = -errno;
		goto fail;
	}
	if (o->verbose)
		nvx_sys_info("sys: event loop: the endpoint posts vector %d",
			     NVX_SYS_EV_VECTOR);
	return NVX_EXIT_OK;
fail:
	nvx_err("sys: --uintr: %s: %s", what, nvx_uintr_strerror(req, -fd));
	return NVX_EXIT_FAIL;
}

/**
 * nvx_sys_ev_recv() - the next request or notice, as a blocking RECV
 * @sys: the process.
 * @r: RECV's argument.
 *
 * Return: 0, RECV's errno, or -1 when the wait failed (said on stderr).
 */
int nvx_sys_ev_recv(struct nvx_sys *sys, struct nvx_uvm_recv *r)
{
	struct nvx_uintr_wait w = { .timeout_ns = NVX_UINTR_MAX_NS };
	int ret = 0;

	r->flags |= NVX_UVM_RECV_NONBLOCK;
	for (;;) {
		__atomic_store_n(&nvx_sys_ev_note, 0, __ATOMIC_RELAXED);
		if (!ioctl(sys->ep_fd, NVX_UVM_EP_IOC_RECV, r)) {
			sys->ev_msgs++;
			return 0;
		}
		if (errno != EAGAIN)
			return errno;
		sys->ev_empty++;
		nvx_uintr_clui();
		if (!__atomic_load_n(&nvx_sys_ev_note, __ATOMIC_ACQUIRE)) {
			sys->ev_waits++;
			if (ioctl(sys->nvx_fd, NVX_IOC_UINTR_WAIT, &w) &&
			    errno != ETIMEDOUT && errno != EINTR) {
				nvx_err("sys: NVX_IOC_UINTR_WAIT: %s",
					nvx_uintr_strerror(NVX_IOC_UINTR_WAIT,
							   errno));
				ret = -1;
			}
		}
		/* the handler runs here for a vector the wait saw */
		nvx_uintr_stui();
		if (ret)
			return ret;
	}
}

/**
 * nvx_sys_ev_report() - what the event loop did, at the end (--verbose)
 * @sys: the process.
 */
void nvx_sys_ev_report(const struct nvx_sys *sys)
{
	const struct nvx_uintr_page *p = nvx_uintr_page();

	nvx_sys_info("sys: event loop: %llu messages, %llu user interrupts (%llu entered by the kernel), %llu waits, %llu empty RECVs",
		     (unsigned long long)sys->ev_msgs,
		     (unsigned long long)__atomic_load_n(&nvx_sys_ev_hits,
							 __ATOMIC_RELAXED),
		     (unsigned long long)(p ? p->delivered : 0),
		     (unsigned long long)sys->ev_waits,
		     (unsigned long long)sys->ev_empty);
}

#else /* !NVX_HAVE_UINTR_LIB */

int nvx_sys_ev_setup(struct nvx_sys *sys, const struct nvx_sys_opts *o)
{
	nvx_err("sys: --uintr: NVX_IOC_UINTR_REGISTER: %s",
		nvx_uintr_strerror(NVX_IOC_UINTR_REGISTER, EOPNOTSUPP));
	return NVX_EXIT_FAIL;
}

int nvx_sys_ev_recv(struct nvx_sys *sys, struct nvx_uvm_recv *r)
{
	return -1;
}

void nvx_sys_ev_report(const struct nvx_sys *sys)
{
}

#endif /* NVX_HAVE_UINTR_LIB */
