// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uintr, (d): what one delivery costs, in one thread, against
 * a signal's.
 *
 * The thread makes N calls of each kind, timed together, in rounds that
 * take the kinds in turn. nvx: it registers the counting handler and a
 * sender entry for its own vector 0, and sends with NVX_IOC_UINTR_SEND:
 *
 *   nvx_rejected      through an empty entry (ENOENT): the system call,
 *                     its dispatch and the table lookup
 *   nvx_masked        through its own entry with delivery masked: the
 *                     vector is posted (merged after the first) and the
 *                     thread kicked; on the way out nothing is entered
 *   nvx_delivered     the same unmasked: every send is delivered on the
 *                     way out of the ioctl, and the handler runs and
 *                     returns without a system call
 *
 * The signal, with a sigaction() handler that counts, by tgkill() to
 * itself:
 *
 *   signal_probe      signal 0: the system call and its checks
 *   signal_blocked    the signal blocked: queued once, then merged
 *   signal_delivered  every tgkill() delivers it on the way out: the
 *                     signal frame (with the FPU state), the handler and
 *                     rt_sigreturn
 *
 * A delivery's cost is delivered - rejected (nvx) and delivered - probe
 * (signal): the kernel's and the handler's work per delivery, without the
 * call that caused it, which is the part a timer tick's delivery shares.
 * Each kind's cost is the lowest mean of its rounds (the least
 * disturbed).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvx/uintr.h>

#include "nvx_uintr.h"
#include "uintr.h"

const char * const nvx_ud_names[NVX_UD_COUNT] = {
	[NVX_UD_REJECTED]	= "nvx_rejected",
	[NVX_UD_MASKED]		= "nvx_masked",
	[NVX_UD_DELIVERED]	= "nvx_delivered",
	[NVX_UD_SIG_PROBE]	= "signal_probe",
	[NVX_UD_SIG_BLOCKED]	= "signal_blocked",
	[NVX_UD_SIG_DELIVERED]	= "signal_delivered",
};

#if NVX_HAVE_UINTR_LIB

#define NVX_UD_SIG	SIGUSR1

static uint64_t nvx_ud_sig_hits;

static void nvx_ud_on_sig(int sig)
{
	__atomic_add_fetch(&nvx_ud_sig_hits, 1, __ATOMIC_RELAXED);
}

/* The state of one run of (d). */
struct nvx_ud {
	struct nvx_ub *ub;
	struct nvx_uintr_rx rx;
	uint32_t idx[2];	/* an empty sender entry, ours */
	pid_t pid, tid;
};

/* Handler runs so far: ours for the nvx kinds, the signal's for others. */
static uint64_t nvx_ud_hits(const struct nvx_ud *d, int kind)
{
	return kind < NVX_UD_SIG_PROBE ?
	       __atomic_load_n(&d->rx.hits, __ATOMIC_SEQ_CST) :
	       __atomic_load_n(&nvx_ud_sig_hits, __ATOMIC_SEQ_CST);
}

/* One call of @kind: 0, or what failed as -errno. */
static int nvx_ud_call(const struct nvx_ud *d, int kind)
{
	int ret;

	switch (kind) {
	case NVX_UD_REJECTED:
		ret = nvx_uintr_send(d->ub->ctx->fd, d->idx[0]);
		return ret == -ENOENT ? 0 : ret ? ret : -EEXIST;
	case NVX_UD_MASKED:
	case NVX_UD_DELIVERED:
		return nvx_uintr_send(d->ub->ctx->fd, d->idx[1]);
	default:
		ret = syscall(SYS_tgkill, d->pid, d->tid,
			      kind == NVX_UD_SIG_PROBE ? 0 : NVX_UD_SIG);
		return ret ? -errno : 0;
	}
}

/* One round of @kind: n calls timed into *@ns; 0 or -errno. */
static int nvx_ud_round(struct nvx_ud *d, int kind, uint64_t *ns)
{
	uint64_t t0, hits0 = nvx_ud_hits(d, kind), want;
	uint32_t i, n = d->ub->deliver_sends;
	sigset_t set, old;
	int ret = 0;

	/* the signal unblocked, except while blocked is timed */
	sigemptyset(&set);
	sigaddset(&set, NVX_UD_SIG);
	pthread_sigmask(kind == NVX_UD_SIG_BLOCKED ? SIG_BLOCK : SIG_UNBLOCK,
			&set, &old);
	if (kind == NVX_UD_MASKED)
		nvx_uintr_clui();
	t0 = nvx_now_ns();
	for (i = 0; i < n && !ret; i++)
		ret = nvx_ud_call(d, kind);
	*ns = nvx_now_ns() - t0;
	if (kind == NVX_UD_MASKED)
		nvx_uintr_stui();
	/* a blocked signal is delivered here, once */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	/* the handler ran once per call, once for the merged ones, never */
	if (kind == NVX_UD_DELIVERED || kind == NVX_UD_SIG_DELIVERED)
		want = n;
	else
		want = kind == NVX_UD_MASKED || kind == NVX_UD_SIG_BLOCKED;
	return nvx_ud_hits(d, kind) - hits0 == want ? 0 : -EPROTO;
}

/**
 * nvx_ub_deliver() - (d): the cost of one delivery
 * @ub: the benchmark; the results go to @ub->deliver.
 *
 * Return: NVX_EXIT_OK or NVX_EXIT_FAIL (said on stderr).
 */
int nvx_ub_deliver(struct nvx_ub *ub)
{
	struct sigaction sa = { .sa_handler = nvx_ud_on_sig }, old;
	struct nvx_ud d = { .ub = ub, .rx = { .reply = -1 } };
	int fd = ub->ctx->fd, vec[2], ret, kind, failed = -1;
	unsigned long req = 0;
	unsigned int r;
	uint64_t ns;

	for (kind = 0; kind < NVX_UD_COUNT; kind++)
		ub->deliver[kind] = 0;
	d.pid = getpid();
	d.tid = nvx_ub_gettid();
	ret = nvx_uintr_rx_setup(fd, &d.rx, vec, &req);
	if (ret) {
		nvx_err("%s: delivery: %s", ub->ctx->path,
			nvx_uintr_strerror(req, -ret));
		return NVX_EXIT_FAIL;
	}
	ret = nvx_uintr_add_sender(fd, vec[0]);
	if (ret < 0) {
		req = NVX_IOC_UINTR_ADD_SENDER;
		goto out;
	}
	d.idx[1] = ret;
	/* an entry nobody added: the last one, unless it is ours */
	d.idx[0] = d.idx[1] == NVX_UINTR_SENDERS - 1 ? 0 :
		   NVX_UINTR_SENDERS - 1;
	sigemptyset(&sa.sa_mask);
	sigaction(NVX_UD_SIG, &sa, &old);
	req = NVX_IOC_UINTR_SEND;
	for (r = 0; r < ub->rounds && !ret; r++) {
		for (kind = 0; kind < NVX_UD_COUNT && !ret; kind++) {
			ret = nvx_ud_round(&d, kind, &ns);
			if (ret)
				failed = kind;
			else if (!ub->deliver[kind] || ns < ub->deliver[kind])
				ub->deliver[kind] = ns;
		}
	}
	if (failed >= NVX_UD_SIG_PROBE)
		req = 0;	/* tgkill() */
	sigaction(NVX_UD_SIG, &old, NULL);
	nvx_uintr_del_sender(fd, d.idx[1]);
out:
	nvx_uintr_rx_unregister(fd);
	close(vec[0]);
	close(vec[1]);
	if (!ret)
		return NVX_EXIT_OK;
	if (ret == -EPROTO || ret == -EEXIST)
		nvx_err("%s: delivery: %s", ub->ctx->path, ret == -EPROTO ?
			"a handler did not run once per delivering call" :
			"a send through an empty sender entry succeeded");
	else if (!req)
		nvx_err("%s: delivery: tgkill: %s", ub->ctx->path,
			strerror(-ret));
	else
		nvx_err("%s: delivery: %s", ub->ctx->path,
			nvx_uintr_strerror(req, -ret));
	return NVX_EXIT_FAIL;
}

#else /* !NVX_HAVE_UINTR_LIB */

int nvx_ub_deliver(struct nvx_ub *ub)
{
	nvx_err("%s: delivery: %s", ub->ctx->path, strerror(EOPNOTSUPP));
	return NVX_EXIT_FAIL;
}

#endif /* NVX_HAVE_UINTR_LIB */

/**
 * nvx_ub_deliver_ns() - what one call of @kind cost
 * @ub: the benchmark, after nvx_ub_deliver().
 * @kind: NVX_UD_*.
 *
 * Return: nanoseconds per call (its least disturbed round).
 */
double nvx_ub_deliver_ns(const struct nvx_ub *ub, int kind)
{
	return ub->deliver_sends ?
	       (double)ub->deliver[kind] / ub->deliver_sends : 0;
}

/**
 * nvx_ub_delivery_ns() - what one delivery cost, without its call
 * @ub: the benchmark, after nvx_ub_deliver().
 * @signal: the signal's, else nvx's.
 *
 * Return: delivered - rejected (nvx) or delivered - probe (signal), ns.
 */
double nvx_ub_delivery_ns(const struct nvx_ub *ub, bool signal)
{
	return signal ? nvx_ub_deliver_ns(ub, NVX_UD_SIG_DELIVERED) -
			nvx_ub_deliver_ns(ub, NVX_UD_SIG_PROBE) :
			nvx_ub_deliver_ns(ub, NVX_UD_DELIVERED) -
			nvx_ub_deliver_ns(ub, NVX_UD_REJECTED);
}
