// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uintr, (d): what one delivery costs, in one thread.
 *
 * The thread registers the counting handler and a sender entry for its
 * own vector 0, then makes N sends of each kind, timed together, in
 * rounds that take the kinds in turn:
 *
 *   rejected   NVX_IOC_UINTR_SEND through an empty entry (ENOENT): the
 *              system call, its dispatch and the table lookup
 *   masked     through its own entry with delivery masked: the vector is
 *              posted (merged after the first) and the thread kicked; on
 *              the way out nothing is entered
 *   delivered  the same unmasked: every send is delivered on the way out
 *              of the ioctl, and the handler runs and returns
 *
 * masked - rejected is the post and the kick; delivered - masked is the
 * entry: the frame, the registers, the handler and its return without a
 * system call. A timer tick's delivery is the same post, kick and entry,
 * from the hrtimer instead of a system call. Each kind's cost is the
 * lowest mean of its rounds (the least disturbed).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <nvx/uintr.h>

#include "nvx_uintr.h"
#include "uintr.h"

const char * const nvx_ud_names[NVX_UD_COUNT] = {
	[NVX_UD_REJECTED]	= "rejected",
	[NVX_UD_MASKED]		= "masked",
	[NVX_UD_DELIVERED]	= "delivered",
};

#if NVX_HAVE_UINTR_LIB

/* One round of @kind: n sends timed into *@ns; 0 or -errno. */
static int nvx_ud_round(struct nvx_ub *ub, struct nvx_uintr_rx *rx,
			const uint32_t idx[2], int kind, uint64_t *ns)
{
	uint64_t t0, hits0 = __atomic_load_n(&rx->hits, __ATOMIC_SEQ_CST);
	uint32_t i, n = ub->deliver_sends, want;
	int fd = ub->ctx->fd, ret = 0;

	if (kind == NVX_UD_MASKED)
		nvx_uintr_clui();
	t0 = nvx_now_ns();
	for (i = 0; i < n; i++) {
		ret = nvx_uintr_send(fd, idx[kind != NVX_UD_REJECTED]);
		if (kind == NVX_UD_REJECTED ? ret != -ENOENT : ret != 0)
			break;
	}
	*ns = nvx_now_ns() - t0;
	if (kind == NVX_UD_MASKED)
		nvx_uintr_stui();
	if (i < n)
		return kind == NVX_UD_REJECTED && !ret ? -EEXIST : ret;
	/* the handler ran once per send, once for the merged ones, never */
	want = kind == NVX_UD_DELIVERED ? n : kind == NVX_UD_MASKED;
	if (__atomic_load_n(&rx->hits, __ATOMIC_SEQ_CST) - hits0 != want)
		return -EPROTO;
	return 0;
}

/**
 * nvx_ub_deliver() - (d): the cost of one delivery
 * @ub: the benchmark; the results go to @ub->deliver.
 *
 * Return: NVX_EXIT_OK or NVX_EXIT_FAIL (said on stderr).
 */
int nvx_ub_deliver(struct nvx_ub *ub)
{
	struct nvx_uintr_rx rx = { .reply = -1 };
	int fd = ub->ctx->fd, vec[2], ret, kind;
	unsigned long req = 0;
	uint32_t idx[2];
	unsigned int r;
	uint64_t ns;

	for (kind = 0; kind < NVX_UD_COUNT; kind++)
		ub->deliver[kind] = 0;
	ret = nvx_uintr_rx_setup(fd, &rx, vec, &req);
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
	idx[1] = ret;
	/* an entry nobody added: the last one, unless it is ours */
	idx[0] = idx[1] == NVX_UINTR_SENDERS - 1 ? 0 : NVX_UINTR_SENDERS - 1;
	req = NVX_IOC_UINTR_SEND;
	for (r = 0; r < ub->rounds; r++) {
		for (kind = 0; kind < NVX_UD_COUNT; kind++) {
			ret = nvx_ud_round(ub, &rx, idx, kind, &ns);
			if (ret)
				goto del;
			if (!ub->deliver[kind] || ns < ub->deliver[kind])
				ub->deliver[kind] = ns;
		}
	}
del:
	nvx_uintr_del_sender(fd, idx[1]);
out:
	nvx_uintr_rx_unregister(fd);
	close(vec[0]);
	close(vec[1]);
	if (!ret)
		return NVX_EXIT_OK;
	if (ret == -EPROTO || ret == -EEXIST)
		nvx_err("%s: delivery: %s", ub->ctx->path, ret == -EPROTO ?
			"the handler did not run once per delivered send" :
			"a send through an empty sender entry succeeded");
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
 * nvx_ub_deliver_ns() - what one send of @kind cost, per send
 * @ub: the benchmark, after nvx_ub_deliver().
 * @kind: NVX_UD_*.
 *
 * Return: nanoseconds per send (its least disturbed round).
 */
double nvx_ub_deliver_ns(const struct nvx_ub *ub, int kind)
{
	return ub->deliver_sends ?
	       (double)ub->deliver[kind] / ub->deliver_sends : 0;
}
