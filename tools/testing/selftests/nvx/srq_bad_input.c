// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": bad input.
 *
 * Every bad parameter of every SRQ ioctl and of the set's mmap().
 */
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "srq_fixture.h"

/* Try a create; close what it made. 0 or -errno. */
static int try_create(int dev, struct nvx_srq_create *c)
{
	int ret = nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, c);

	if (!ret) {
		close(c->fd);
		ret = wait_detached(dev, c->ifindex);
		if (ret)
			return -EEXIST;		/* did not go away */
	}
	return ret;
}

#define BAD(err, field, val) do {					\
	struct nvx_srq_create c_ = base;				\
	long long v_ = (val);						\
	c_.field = v_;							\
	EXPECT_EQ(err, try_create(self->fd, &c_))			\
		TH_LOG(#field " = %lld", v_);				\
} while (0)

/* Every bad create parameter, with its errno; good neighbours work. */
SRQ_TEST(bad_create)
{
	struct nvx_srq_create base = {
		.ifindex = self->nic.ifindex,
		.params = { .nr_queues = 1, .nr_bufs = 4 },
	};
	struct {
		struct nvx_srq_create c;
		uint64_t more;
	} big;
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_grant_clone clone = { .flags = NVX_CLONE_CLOEXEC };
	struct nvx_grant_seal seal = {};
	struct nvx_srq_create c;
	int g, gb, nul, closed, lo = if_nametoindex("lo");

	g = srq_grant(self->fd, 2 * CHUNK);
	ASSERT_LE(0, g);
	base.grant_fd = g;
	ASSERT_NE(0, lo);

	/* the base works (and goes again); base keeps its zero defaults */
	c = base;
	EXPECT_EQ(0, try_create(self->fd, &c));

	/* the first flag nvx does not know (2 is RINGS_IN_GRANT: srq_ingrant) */
	BAD(-EINVAL, flags, NVX_SRQ_CREATE_FLAGS + 1);
	BAD(-EINVAL, flags, 1U << 31);
	BAD(-EINVAL, params.flags, 4);
	BAD(-EINVAL, params.flags, 1U << 31);
	BAD(-ENODEV, ifindex, unused_ifindex());
	BAD(-EOPNOTSUPP, ifindex, lo);
	BAD(-EINVAL, params.nr_queues, 0);
	BAD(-EINVAL, params.nr_queues, NVX_SRQ_MAX_QUEUES + 1);
	BAD(-EINVAL, params.stride_size, 96);
	BAD(-EINVAL, params.stride_size, 32);
	BAD(-EINVAL, params.stride_size, 2 * NVX_SRQ_DEF_BUF_SIZE);
	BAD(-EINVAL, params.buf_size, 3000);
	BAD(-EINVAL, params.buf_size, 1024);
	BAD(-EINVAL, params.nr_bufs, NVX_SRQ_MAX_BUFS + 1);
	BAD(-EINVAL, params.cq_entries, 3000);
	BAD(-EINVAL, params.cq_entries, 2 * NVX_SRQ_MAX_ENTRIES);
	BAD(-EINVAL, params.rel_entries, 3000);
	BAD(-EINVAL, params.rel_entries, 2 * NVX_SRQ_MAX_ENTRIES);
	BAD(-EINVAL, params.nr_rel_rings, NVX_SRQ_MAX_QUEUES + 1);
	BAD(-EINVAL, params.low_water, 4 * 64 + 1);
	BAD(-EINVAL, params.reserved, 1);
	BAD(-EINVAL, grant_offset, 100);
	BAD(-EINVAL, grant_offset, NVX_SRQ_DEF_BUF_SIZE / 2);
	BAD(-ENOSPC, params.nr_bufs, 2 * CHUNK / NVX_SRQ_DEF_BUF_SIZE + 1);
	BAD(-ENOSPC, grant_offset, 2 * CHUNK - NVX_SRQ_DEF_BUF_SIZE);
	BAD(-ENOSPC, grant_offset, 2 * CHUNK);
	BAD(-ENOSPC, grant_offset, ~0ULL - NVX_SRQ_DEF_BUF_SIZE + 1);
	BAD(-EBADF, grant_fd, -1);
	closed = dup(g);
	ASSERT_LE(0, closed);
	close(closed);
	BAD(-EBADF, grant_fd, closed);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nul);
	BAD(-EINVAL, grant_fd, nul);
	BAD(-EINVAL, grant_fd, self->fd);
	close(nul);

	/* a buffer above the maximum (alone, it would fit in the grant) */
	c = base;
	c.params.nr_bufs = 1;
	c.params.buf_size = 2 * NVX_SRQ_MAX_BUF_SIZE;
	c.params.stride_size = NVX_SRQ_MAX_BUF_SIZE;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	/* more than 1024 strides per buffer; 1024 is fine */
	c = base;
	c.params.buf_size = 128 * 1024;
	c.params.stride_size = 64;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	c.params.buf_size = 64 * 1024;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* the largest buffer, one of it */
	c = base;
	c.params.nr_bufs = 1;
	c.params.buf_size = NVX_SRQ_MAX_BUF_SIZE;
	c.params.stride_size = NVX_SRQ_MAX_BUF_SIZE / NVX_SRQ_MAX_STRIDES;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* stride == buffer: striding off */
	c = base;
	c.params.buf_size = 2048;
	c.params.stride_size = 2048;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* per queue: nr_bufs a multiple of nr_queues */
	c = base;
	c.params.flags = NVX_SRQ_PER_QUEUE;
	c.params.nr_queues = 4;
	c.params.nr_bufs = 6;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	c.params.nr_bufs = 8;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* the most queues, with small rings */
	c = base;
	c.params.nr_queues = NVX_SRQ_MAX_QUEUES;
	c.params.cq_entries = 64;
	c.params.rel_entries = 64;
	EXPECT_EQ(0, try_create(self->fd, &c));
	EXPECT_EQ(NVX_SRQ_MAX_QUEUES, c.params.nr_rel_rings);
	/* the low-water mark may be the whole pool */
	c = base;
	c.params.low_water = 4 * 64;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* buffers at an offset that fits */
	c = base;
	c.params.nr_bufs = 2 * CHUNK / NVX_SRQ_DEF_BUF_SIZE - 1;
	c.grant_offset = NVX_SRQ_DEF_BUF_SIZE;
	EXPECT_EQ(0, try_create(self->fd, &c));

	/*
	 * A grant of a piece and blocks: 16 KiB buffers fit in the blocks
	 * too, 128 KiB ones only in the piece (a buffer is contiguous).
	 */
	gb = grant(self->fd, CHUNK + 4 * BLOCK, NVX_GRANT_BLOCKS, NULL);
	ASSERT_LE(0, gb);
	c = base;
	c.grant_fd = gb;
	c.params.nr_bufs = (CHUNK + 4 * BLOCK) / NVX_SRQ_DEF_BUF_SIZE;
	EXPECT_EQ(0, try_create(self->fd, &c));
	c = base;
	c.grant_fd = gb;
	c.params.buf_size = 2 * BLOCK;
	c.params.stride_size = 2048;
	c.params.nr_bufs = CHUNK / (2 * BLOCK);
	EXPECT_EQ(0, try_create(self->fd, &c));
	c.params.nr_bufs++;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	c.params.nr_bufs = 1;
	c.grant_offset = CHUNK;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	close(gb);

	/*
	 * A template is read-only: no set writes into it, and a grant a set
	 * holds cannot be sealed; a clone is not taken either.
	 */
	gb = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, gb);
	c = base;
	c.grant_fd = gb;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_CREATE, &c));
	EXPECT_EQ(-EBUSY, nvx_ioctl(gb, NVX_GRANT_IOC_SEAL, &seal));
	close(c.fd);
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	EXPECT_EQ(0, nvx_ioctl(gb, NVX_GRANT_IOC_SEAL, &seal));
	c = base;
	c.grant_fd = gb;
	EXPECT_EQ(-EPERM, try_create(self->fd, &c));
	ASSERT_EQ(0, nvx_ioctl(gb, NVX_GRANT_IOC_CLONE, &clone));
	c.grant_fd = clone.fd;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	close(clone.fd);
	close(gb);

	/* a struct smaller than the first version */
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd,
				     nvx_ioc_resize(NVX_IOC_SRQ_CREATE, 8),
				     &base));
	/* a larger one: zeroes beyond are fine, anything else is not */
	big.c = base;
	big.more = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_SRQ_CREATE,
						   sizeof(big)), &big));
	/* nothing was left attached by any of these */
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	/* one set per NIC */
	c = base;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_CREATE, &c));
	big.c = base;
	EXPECT_EQ(-EBUSY, try_create(self->fd, &big.c));
	close(c.fd);
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	close(g);
}

static int nobody_creates(int dev, struct nvx_srq_create *c)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 100;
	return nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, c) == -EPERM ? 0 : 1;
}

/* Creating a set needs CAP_NET_ADMIN, even with root's fds in hand. */
SRQ_TEST(create_needs_net_admin)
{
	struct nvx_srq_create c = {
		.ifindex = self->nic.ifindex,
		.params = { .nr_queues = 1 },
	};
	int status;
	pid_t pid;

	c.grant_fd = srq_grant(self->fd, CHUNK);
	ASSERT_LE(0, c.grant_fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nobody_creates(self->fd, &c));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	close(c.grant_fd);
}

/* Set CAP_NET_ADMIN in the effective set (it must be permitted) or clear it. */
static int net_admin_effective(bool on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[CAP_NET_ADMIN / 32].effective |= 1U << (CAP_NET_ADMIN % 32);
	else
		d[CAP_NET_ADMIN / 32].effective &= ~(1U << (CAP_NET_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

enum observer { NOBODY, OWNER_NO_CAP, OTHER_WITH_CAP };

/*
 * In a child, as @who (root's /dev/nvx fd in hand): INFO always works;
 * QUERY and INFO's owner only for the owner's user or CAP_NET_ADMIN.
 * 0 when all is as it should be, else the step that was not.
 */
static int observe_as(int dev, int ifindex, pid_t owner, enum observer who)
{
	struct nvx_srq_info info = { .ifindex = ifindex };
	struct nvx_srq_query q = { .ifindex = ifindex };
	bool may = who != NOBODY;
	int ret;

	if (who == OWNER_NO_CAP && net_admin_effective(false))
		return 100;
	if (who == OTHER_WITH_CAP && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return 101;
	if (who != OWNER_NO_CAP &&
	    (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	     setresuid(65534, 65534, 65534)))
		return 102;
	if (who == OTHER_WITH_CAP && net_admin_effective(true))
		return 103;
	if (nvx_ioctl(dev, NVX_IOC_SRQ_INFO, &info))
		return 1;			/* presence, shape: the NIC's */
	if (info.params.nr_queues != 1)
		return 2;
	if (info.owner != (may ? (uint32_t)owner : 0))
		return 3;			/* who owns it: observers only */
	q.stats.queue = NVX_SRQ_ALL_QUEUES;
	ret = nvx_ioctl(dev, NVX_IOC_SRQ_QUERY, &q);
	if (ret != (may ? 0 : -EPERM))
		return 4;
	if (may && !q.stats.rx_packets)
		return 5;
	if (!may && (q.stats.nr_queues || q.stats.rx_packets))
		return 6;			/* nothing written out */
	return 0;
}

/*
 * QUERY and INFO's owner are for the set's owner (the creator's euid) or
 * CAP_NET_ADMIN; INFO's shape for any opener. Before, any opener got the
 * owner's pid and all its counters.
 */
SRQ_TEST(observe_needs_owner_or_net_admin)
{
	static const char *const what[] = {
		"nobody", "the owner without CAP_NET_ADMIN",
		"another user with CAP_NET_ADMIN",
	};
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_stats st;
	int status, who, i;
	pid_t pid;

	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 64, 1000, 0));
	for (i = 0; i < 10000; i++) {	/* a counter for the observers */
		ASSERT_EQ(0, srq_query(self->fd, self->nic.ifindex, &st));
		if (st.rx_packets)
			break;
		usleep(1000);
	}
	ASSERT_EQ(1U, st.rx_packets);
	for (who = NOBODY; who <= OTHER_WITH_CAP; who++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(observe_as(self->fd, self->nic.ifindex,
					 getppid(), who));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("as %s", what[who]);
	}
}

/* Bad arguments to every ioctl of /dev/nvx's SRQ part and of a set. */
SRQ_TEST(bad_ioctls)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_release rel = { 0 };
	struct nvx_srq_query q;
	struct nvx_srq_stats st;
	struct {
		struct nvx_srq_stats st;
		uint64_t more;
	} big;
	unsigned char f[64] = { 0 };
	struct nvx_srq_tx tx = { .len = sizeof(f), .addr = (uintptr_t)f };
	uint16_t table[NVX_SRQ_RSS_ENTRIES] = { 0 };
	struct nvx_srq_steer steer = {
		.flags = 1, .nr_entries = NVX_SRQ_RSS_ENTRIES,
		.table = (uintptr_t)table,
	};
	struct srq *s = &self->s;
	int lo = if_nametoindex("lo"), none = unused_ifindex();

	/* no set yet; not an nvxsim NIC; no NIC */
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(-EOPNOTSUPP, srq_query(self->fd, lo, &st));
	EXPECT_EQ(-ENODEV, srq_query(self->fd, none, &st));
	info.ifindex = lo;
	EXPECT_EQ(-EOPNOTSUPP, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	info.ifindex = none;
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));

	/* QUERY's flags and stats.flags; INFO's flags and reserved */
	memset(&q, 0, sizeof(q));
	q.ifindex = self->nic.ifindex;
	q.stats.queue = NVX_SRQ_ALL_QUEUES;
	EXPECT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &q));
	EXPECT_EQ((uint32_t)self->nic.ifindex, q.stats.ifindex);
	EXPECT_EQ(1u, q.stats.nr_queues);
	q.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &q));
	q.flags = 0;
	q.stats.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &q));
	memset(&info, 0, sizeof(info));
	info.ifindex = self->nic.ifindex;
	EXPECT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	info.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	info.flags = 0;
	info.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	/* STATS */
	memset(&st, 0, sizeof(st));
	st.flags = 1;
	st.queue = NVX_SRQ_ALL_QUEUES;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STATS, &st));
	EXPECT_EQ(-EINVAL, srq_stats(s, 1, &st));
	EXPECT_EQ(0, srq_stats(s, 0, &st));
	expect_srq_stats(&st, SRQ_STAT(ifindex, (uint32_t)self->nic.ifindex),
			 SRQ_STAT(nr_queues, 1u));
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd,
				     nvx_ioc_resize(NVX_SRQ_IOC_STATS, 8),
				     &st));
	memset(&big, 0, sizeof(big));
	big.st.queue = NVX_SRQ_ALL_QUEUES;
	EXPECT_EQ(0, nvx_ioctl(s->fd, nvx_ioc_resize(NVX_SRQ_IOC_STATS,
						     sizeof(big)), &big));
	EXPECT_EQ(1u, big.st.nr_queues);
	big.more = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(s->fd,
				    nvx_ioc_resize(NVX_SRQ_IOC_STATS,
						   sizeof(big)), &big));

	/* RELEASE */
	rel.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));
	rel.flags = 0;
	rel.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));
	rel.reserved = 0;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd,
				     nvx_ioc_resize(NVX_SRQ_IOC_RELEASE, 4),
				     &rel));
	EXPECT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));

	/* TX and STEER flags */
	tx.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &steer));
	steer.flags = 0;
	EXPECT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &steer));

	/* ioctls that are not the set's, and the other way round */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, _IOWR(NVX_IOC_MAGIC, 0x7f,
						  struct nvx_srq_stats), &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, _IO(NVX_IOC_MAGIC, 0x8f), NULL));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, NVX_IOC_SRQ_CREATE, &s->c));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, NVX_IOC_POOL_STATS, &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_RELEASE, &rel));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_STATS, &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_TX, &tx));
}

/* The set's mmap(): the ring area shared only, buffers read-only. */
SRQ_TEST(bad_mmap)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	const struct nvx_srq_layout *l;
	struct srq *s = &self->s;
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	l = &s->c.layout;

	m = mmap(NULL, l->ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 s->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, l->buf_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, l->buf_offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	/* read-only stays read-only */
	m = mmap(NULL, l->buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 l->buf_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_NE(0, mprotect(m, pg, PROT_READ | PROT_WRITE));
	munmap(m, l->buf_bytes);
	/* offsets that name nothing */
	m = mmap(NULL, pg, PROT_READ, MAP_SHARED, s->fd,
		 l->buf_offset + l->buf_bytes);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	if (l->ring_bytes < l->buf_offset) {
		m = mmap(NULL, pg, PROT_READ, MAP_SHARED, s->fd,
			 l->ring_bytes);
		EXPECT_EQ(MAP_FAILED, m);
		EXPECT_EQ(EINVAL, errno);
	}
	/* a second mapping of the ring area sees the same rings */
	m = mmap(NULL, l->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	cq_set_cons(s, 1, 5);
	EXPECT_EQ(5u, ((struct nvx_srq_ring *)((unsigned char *)m +
					       l->cq_offset +
					       l->cq_bytes))->cons);
	cq_set_cons(s, 1, 0);
	munmap(m, l->ring_bytes);
}

TEST_HARNESS_MAIN
