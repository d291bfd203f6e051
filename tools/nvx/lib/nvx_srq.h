/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_srq.h - a shared RX queue set for programs: part of libnvx
 * (lib/srq.c). nvx_srq_open() makes and maps a set; the inline helpers
 * below pop completions and push releases, once per frame, so they stay
 * inline.
 */
#ifndef NVX_SRQ_LIB_H
#define NVX_SRQ_LIB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <nvx/srq.h>

/**
 * struct nvx_srq_set - a set made by nvx_srq_open()
 * @fd: the set's fd, or -1.
 * @ifindex: the NIC.
 * @grant_bytes: the bytes of buffers asked for the grant.
 * @granted: the size of the grant (whole pieces).
 * @p: the parameters in use.
 * @l: the mmap() layout.
 * @ring: the ring area, or NULL when not mapped.
 * @bufs: the buffers, read-only, or NULL when not mapped.
 * @spb: strides per buffer.
 */
struct nvx_srq_set {
	int fd;
	uint32_t ifindex;
	uint64_t grant_bytes;
	uint64_t granted;
	struct nvx_srq_params p;
	struct nvx_srq_layout l;
	uint8_t *ring;
	const uint8_t *bufs;
	uint32_t spb;
};

/* What nvx_srq_open() failed at. */
enum nvx_srq_step {
	NVX_SRQ_STEP_GRANT,
	NVX_SRQ_STEP_CREATE,
	NVX_SRQ_STEP_MAP,
};

uint64_t nvx_srq_buf_bytes(const struct nvx_srq_params *p);
/*
 * Which of the NIC's frames a set takes (struct nvx_srq_create): match
 * NVX_SRQ_MATCH_*, 0 for every frame no other set's rule takes.
 */
struct nvx_srq_rule {
	uint32_t match;
	uint32_t ip4;		/* network byte order */
	uint8_t mac[6];
};

int nvx_srq_open(int nvx_fd, struct nvx_srq_set *s, uint32_t ifindex,
		 uint32_t node, const struct nvx_srq_params *p, bool map,
		 enum nvx_srq_step *step);
int nvx_srq_open_rule(int nvx_fd, struct nvx_srq_set *s, uint32_t ifindex,
		      uint32_t node, const struct nvx_srq_params *p,
		      const struct nvx_srq_rule *rule, bool map,
		      enum nvx_srq_step *step);
void nvx_srq_close(struct nvx_srq_set *s);
int nvx_srq_stats_get(const struct nvx_srq_set *s, uint32_t queue,
		      struct nvx_srq_stats *st);
int nvx_srq_release_now(const struct nvx_srq_set *s, uint64_t *garbage);
const char *nvx_srq_explain(unsigned long req, int err);

static inline struct nvx_srq_ring *nvx_srq_cq(const struct nvx_srq_set *s,
					      uint32_t q)
{
	return (struct nvx_srq_ring *)(s->ring + s->l.cq_offset +
				       q * s->l.cq_bytes);
}

static inline struct nvx_srq_ring *nvx_srq_rel_ring(const struct nvx_srq_set *s,
						    uint32_t r)
{
	return (struct nvx_srq_ring *)(s->ring + s->l.rel_offset +
				       r * s->l.rel_bytes);
}

/*
 * The completions of queue @q not consumed yet: from *@cons, the return
 * value of them. UINT32_MAX when the kernel's index is not sane.
 */
static inline uint32_t nvx_srq_cq_ready(const struct nvx_srq_set *s, uint32_t q,
					uint32_t *cons)
{
	struct nvx_srq_ring *r = nvx_srq_cq(s, q);
	uint32_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);

	*cons = r->cons;	/* ours */
	if (prod - *cons > s->p.cq_entries)
		return UINT32_MAX;
	return prod - *cons;
}

static inline const struct nvx_srq_cqe *nvx_srq_cqe(const struct nvx_srq_set *s,
						    uint32_t q, uint32_t idx)
{
	const struct nvx_srq_cqe *e =
		(const struct nvx_srq_cqe *)(nvx_srq_cq(s, q) + 1);

	return &e[idx & (s->p.cq_entries - 1)];
}

/* The completions of queue @q up to @cons are read: the kernel may reuse them. */
static inline void nvx_srq_cq_done(const struct nvx_srq_set *s, uint32_t q,
				   uint32_t cons)
{
	__atomic_store_n(&nvx_srq_cq(s, q)->cons, cons, __ATOMIC_RELEASE);
}

/* Is @c a completion the set could have written? */
static inline bool nvx_srq_cqe_ok(const struct nvx_srq_set *s,
				  const struct nvx_srq_cqe *c)
{
	uint64_t room;

	if (c->buf >= s->p.nr_bufs || !c->strides ||
	    (uint32_t)c->stride + c->strides > s->spb)
		return false;
	if (c->flags & NVX_SRQ_CQE_FILLER)
		return !c->len;
	room = (uint64_t)(s->spb - c->stride) * s->p.stride_size;
	return c->len && c->len <= room;
}

/*
 * Give @strides of @buf back through release ring @r. When the ring is
 * full, NVX_SRQ_IOC_RELEASE has the kernel take its entries first.
 * Return: 0 or -errno (-ENOSPC: still full).
 */
static inline int nvx_srq_release(const struct nvx_srq_set *s, uint32_t r,
				  uint32_t buf, uint32_t strides, uint64_t *garbage)
{
	struct nvx_srq_ring *h = nvx_srq_rel_ring(s, r);
	struct nvx_srq_rel *e = (struct nvx_srq_rel *)(h + 1);
	uint32_t prod = h->prod;	/* ours */
	int err;

	if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
	    s->p.rel_entries) {
		err = nvx_srq_release_now(s, garbage);
		if (err)
			return err;
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    s->p.rel_entries)
			return -ENOSPC;
	}
	e[prod & (s->p.rel_entries - 1)] = (struct nvx_srq_rel) {
		.buf = buf,
		.strides = strides,
	};
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

#endif /* NVX_SRQ_LIB_H */
