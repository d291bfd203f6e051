// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: a shared RX queue set, made and mapped (nvx_srq.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "nvx_pool.h"
#include "nvx_srq.h"
#include "nvx_util.h"

/**
 * nvx_srq_buf_bytes() - the bytes of buffers parameters ask for
 * @p: the parameters; defaults are filled in for zero fields.
 *
 * Return: the bytes.
 */
uint64_t nvx_srq_buf_bytes(const struct nvx_srq_params *p)
{
	return (uint64_t)(p->nr_bufs ? p->nr_bufs : NVX_SRQ_DEF_NR_BUFS) *
	       (p->buf_size ? p->buf_size : NVX_SRQ_DEF_BUF_SIZE);
}

/* Does the layout the kernel wrote back hold what the parameters say? */
static bool nvx_srq_layout_ok(const struct nvx_srq_set *s)
{
	const struct nvx_srq_layout *l = &s->l;
	const struct nvx_srq_params *p = &s->p;
	uint64_t cq = sizeof(struct nvx_srq_ring) +
		      (uint64_t)p->cq_entries * sizeof(struct nvx_srq_cqe);
	uint64_t rel = sizeof(struct nvx_srq_ring) +
		       (uint64_t)p->rel_entries * sizeof(struct nvx_srq_rel);

	return p->nr_queues && p->nr_rel_rings && p->stride_size &&
	       nvx_pow2(p->cq_entries) && nvx_pow2(p->rel_entries) &&
	       p->buf_size >= p->stride_size &&
	       l->cq_bytes >= cq && l->rel_bytes >= rel &&
	       l->cq_offset + p->nr_queues * l->cq_bytes <= l->ring_bytes &&
	       l->rel_offset + p->nr_rel_rings * l->rel_bytes <= l->ring_bytes &&
	       l->buf_bytes >= (uint64_t)p->nr_bufs * p->buf_size;
}

/**
 * nvx_srq_close() - unmap and close a set of nvx_srq_open()
 * @s: the set.
 */
void nvx_srq_close(struct nvx_srq_set *s)
{
	if (s->bufs)
		munmap((void *)s->bufs, s->l.buf_bytes);
	if (s->ring)
		munmap(s->ring, s->l.ring_bytes);
	if (s->fd >= 0)
		close(s->fd);
	s->bufs = NULL;
	s->ring = NULL;
	s->fd = -1;
}

/**
 * nvx_srq_open() - make a set and map it
 * @nvx_fd: the nvx device.
 * @s: the set.
 * @ifindex: the NIC.
 * @node: the NUMA node of the buffers' grant, or NVX_NODE_ANY.
 * @p: the set's shape.
 * @map: map the ring area and the buffers.
 * @step: what failed.
 *
 * A grant of the buffers, NVX_IOC_SRQ_CREATE, and with @map the ring area
 * and the buffers mapped. The grant fd is closed once the set holds its
 * own reference.
 *
 * Return: 0, or -errno with *@step telling what failed (-EPROTO: the
 * layout the kernel wrote back does not add up).
 */
int nvx_srq_open(int nvx_fd, struct nvx_srq_set *s, uint32_t ifindex,
		 uint32_t node, const struct nvx_srq_params *p, bool map,
		 enum nvx_srq_step *step)
{
	return nvx_srq_open_rule(nvx_fd, s, ifindex, node, p, NULL, map, step);
}

/**
 * nvx_srq_open_rule() - nvx_srq_open() for a set with a steering rule
 * @nvx_fd: /dev/nvx.
 * @s: the set to fill.
 * @ifindex: the NIC.
 * @node: the NUMA node of the buffers' grant, or NVX_NODE_ANY.
 * @p: the set's shape.
 * @rule: which frames of the NIC it takes; NULL: every frame no other
 *	set's rule takes.
 * @map: map the ring area and the buffers.
 * @step: what failed.
 *
 * Return: as nvx_srq_open().
 */
int nvx_srq_open_rule(int nvx_fd, struct nvx_srq_set *s, uint32_t ifindex,
		      uint32_t node, const struct nvx_srq_params *p,
		      const struct nvx_srq_rule *rule, bool map,
		      enum nvx_srq_step *step)
{
	struct nvx_srq_create c = {
		.flags = NVX_SRQ_CLOEXEC,
		.ifindex = ifindex,
		.params = *p,
	};
	uint64_t piece = NVX_PIECE_BYTES;
	struct nvx_grant_info gi;
	void *m;
	int err, gfd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->ifindex = ifindex;
	s->grant_bytes = nvx_srq_buf_bytes(p);

	*step = NVX_SRQ_STEP_GRANT;
	err = nvx_grant_new(nvx_fd, node, s->grant_bytes, NVX_GRANT_CLOEXEC,
			    &gfd);
	if (err)
		return err;
	if (!nvx_grant_info_get(gfd, &gi) && gi.bytes)
		s->granted = gi.bytes;
	else
		s->granted = (s->grant_bytes + piece - 1) / piece * piece;
	*step = NVX_SRQ_STEP_CREATE;
	c.grant_fd = gfd;
	if (rule) {
		c.match = rule->match;
		c.ip4 = rule->ip4;
		memcpy(c.mac, rule->mac, sizeof(c.mac));
	}
	err = ioctl(nvx_fd, NVX_IOC_SRQ_CREATE, &c) ? -errno : 0;
	close(gfd);
	if (err)
		return err;
	s->fd = c.fd;
	s->p = c.params;
	s->l = c.layout;
	s->spb = s->p.stride_size ? s->p.buf_size / s->p.stride_size : 0;

	*step = NVX_SRQ_STEP_MAP;
	if (!nvx_srq_layout_ok(s)) {
		nvx_srq_close(s);
		return -EPROTO;
	}
	if (!map)
		return 0;
	m = mmap(NULL, s->l.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	s->ring = m;
	m = mmap(NULL, s->l.buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 s->l.buf_offset);
	if (m == MAP_FAILED)
		goto fail;
	s->bufs = m;
	return 0;
fail:
	err = -errno;
	nvx_srq_close(s);
	return err;
}

/**
 * nvx_srq_stats_get() - NVX_SRQ_IOC_STATS
 * @s: the set.
 * @queue: a queue, or NVX_SRQ_ALL_QUEUES.
 * @st: filled in.
 *
 * Return: 0 or -errno.
 */
int nvx_srq_stats_get(const struct nvx_srq_set *s, uint32_t queue,
		      struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = queue;
	return ioctl(s->fd, NVX_SRQ_IOC_STATS, st) ? -errno : 0;
}

/**
 * nvx_srq_release_now() - NVX_SRQ_IOC_RELEASE
 * @s: the set.
 * @garbage: if not NULL, grows by the entries the kernel ignored.
 *
 * Return: 0 or -errno.
 */
int nvx_srq_release_now(const struct nvx_srq_set *s, uint64_t *garbage)
{
	struct nvx_srq_release r = { 0 };

	if (ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &r))
		return -errno;
	if (garbage)
		*garbage += r.garbage;
	return 0;
}

/* Where nvx says more than strerror(): per request (0: any) and errno. */
static const struct nvx_errno_why nvx_srq_why[] = {
	{ 0, ENOTTY,
	  "the running kernel has no shared RX queues (CONFIG_NVX_SRQ), or an older nvx ABI",
	},
	{ NVX_IOC_SRQ_CREATE, EPERM,
	  "needs CAP_NET_ADMIN in the NIC's network namespace" },
	{ NVX_IOC_SRQ_CREATE, EBUSY,
	  "a set with the same rule (without --match-*: another set without a rule) is attached to this NIC already",
	},
	{ NVX_IOC_SRQ_CREATE, ENOSPC, "the buffers do not fit in the grant" },
	{ NVX_IOC_SRQ_CREATE, EOPNOTSUPP,
	  "no shared-RX backend drives this NIC (ip link add NAME type nvxsim makes one), or it steers by no rule (--match-*: nvxsim only)",
	},
	{ NVX_IOC_SRQ_CREATE, EINVAL,
	  "a parameter is out of range (nvxtool srq create --help lists the limits)",
	},
	{ 0, EOPNOTSUPP,
	  "no shared-RX backend drives this NIC (ip link add NAME type nvxsim makes one)" },
	{ 0, ENODEV, "no such network device" },
	{ 0, ENOENT, "no set is attached to this NIC" },
};

/**
 * nvx_srq_explain() - what nvx means by an errno of an srq ioctl
 * @req: the ioctl request.
 * @err: the positive errno.
 *
 * Return: the explanation, or NULL where strerror() says it all.
 */
const char *nvx_srq_explain(unsigned long req, int err)
{
	return nvx_errno_why_find(nvx_srq_why, NVX_ARRAY_SIZE(nvx_srq_why),
				  req, err);
}
