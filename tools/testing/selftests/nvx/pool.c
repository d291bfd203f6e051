// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": the memory pool and grants.
 *
 * Every test runs on a pool grown by POOL_CHUNKS chunks for it, and the
 * fixture checks on the way out that the pool's accounting is back where
 * it started: nothing lost, nothing leaked, nothing left dirty.
 */
#include <grp.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/pool.h>

#include "../kselftest_harness.h"
#include "../../../../mm/gup_test.h"
#include "nvx_pool_test.h"

#define CHUNK		(1ULL << NVX_POOL_CHUNK_SHIFT)
#define POOL_CHUNKS	16
#define PAGE		4096UL
#define PARAMS		"/sys/module/nvx/parameters/"
#define GUP_TEST	"/sys/kernel/debug/gup_test"
#define TRACEFS		"/sys/kernel/tracing/"

/* A grant fd, or -errno. */
static int grant(int fd, uint64_t bytes, uint32_t flags, uint64_t *granted)
{
	struct nvx_grant_create g = {
		.flags = flags | NVX_GRANT_CLOEXEC,
		.node = NVX_NODE_ANY,
		.bytes = bytes,
	};
	int ret = nvx_ioctl(fd, NVX_IOC_GRANT, &g);

	if (ret)
		return ret;
	if (granted)
		*granted = g.granted;
	return g.fd;
}

static void *map_grant(int gfd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, gfd, 0);
}

static int write_param(const char *name, const char *val)
{
	char path[128];
	int fd, n;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Is every byte of [p, p + len) equal to @c? */
static bool all_bytes(const unsigned char *p, size_t len, unsigned char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return false;
	return true;
}

/*
 * A field of /proc/self/smaps, in kB, for the VMA that starts at @start;
 * -1 when there is no such VMA or field.
 */
static long smaps_kb(const void *start, const char *field)
{
	unsigned long lo, hi, want = (unsigned long)start;
	char line[256], perms[8];
	bool in = false;
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* "lo-hi perms ..." starts a VMA; "Field:  N kB" follows */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			in = lo == want;
			continue;
		}
		if (in && !strncmp(line, field, strlen(field))) {
			kb = strtol(line + strlen(field), NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* Write the page number into the first word of every page. */
static void tag_pages(unsigned char *p, size_t len, unsigned long first)
{
	size_t i;

	for (i = 0; i < len / PAGE; i++)
		*(unsigned long *)(p + i * PAGE) = first + i;
}

/* Does every page hold its number? */
static bool pages_tagged(const unsigned char *p, size_t len,
			 unsigned long first)
{
	size_t i;

	for (i = 0; i < len / PAGE; i++)
		if (*(const unsigned long *)(p + i * PAGE) != first + i)
			return false;
	return true;
}

/*
 * Emulated machines with KASAN are slow: a KVM guest's first entry or
 * zeroing the whole test pool can take far longer than the harness's
 * default 30 seconds.
 */
#define POOL_TEST(name) TEST_F_TIMEOUT(pool, name, 180)

FIXTURE(pool) {
	int fd;
	struct nvx_pool_stats start;
	uint64_t grown;
	uint64_t refill;	/* a test emptied the pool: refill it to this */
};

FIXTURE_SETUP(pool)
{
	self->fd = nvx_open();
	ASSERT_LE(0, self->fd) TH_LOG("open " NVX_DEV ": %s",
				      strerror(-self->fd));
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &self->start));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW,
				 POOL_CHUNKS * CHUNK, NVX_NODE_ANY,
				 &self->grown));
	ASSERT_EQ(POOL_CHUNKS * CHUNK, self->grown);
}

/* Nothing lost, nothing leaked: the pool is back where it started. */
FIXTURE_TEARDOWN(pool)
{
	struct nvx_pool_stats s;
	uint64_t done;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	if (s.total_bytes < self->refill) {
		/* a test that emptied the pool failed before refilling it */
		ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW,
					 self->refill - s.total_bytes,
					 NVX_NODE_ANY, &done));
		ASSERT_EQ(0, pool_stats(self->fd, &s));
	}
	EXPECT_EQ(self->start.grants_live, s.grants_live);
	EXPECT_EQ(self->start.granted_bytes, s.granted_bytes);
	EXPECT_EQ(self->start.total_bytes + self->grown, s.total_bytes);
	EXPECT_EQ(s.total_bytes, s.clean_bytes + s.granted_bytes);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(self->start.total_bytes, s.total_bytes);
	EXPECT_EQ(self->start.clean_bytes, s.clean_bytes);
	close(self->fd);
}

static void kick_vcpu(int sig)
{
	/* KVM_RUN returns -EINTR */
}

/*
 * Run a real-mode guest whose RAM is @mem until it has made both of its
 * port writes: 0, or -ETIMEDOUT if it did not get there within 30 s,
 * or -errno when KVM refused. On a timeout, it logs where the guest was.
 */
static int run_guest_in(struct __test_metadata *_metadata, int kvm,
			unsigned char *mem, size_t len)
{
	/* no hlt: its intercept is not reliable under nested SVM on TCG */
	static const unsigned char code[] = {
		0xc6, 0x06, 0x00, 0x20, 0x99,	/* movb $0x99, (0x2000) */
		0xb0, 0x42,			/* mov  $0x42, %al */
		0xe6, 0x10,			/* out  %al, $0x10 */
		0xe6, 0x11,			/* out  %al, $0x11 */
		0xeb, 0xfe,			/* jmp  . */
	};
	struct kvm_userspace_memory_region mr = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs = { 0 };
	struct kvm_run *run = MAP_FAILED;
	int vm, vcpu = -1, runsz = 0, ret = -EIO, i;

	memset(mem, 0, 0x3000);
	memcpy(mem + 0x1000, code, sizeof(code));
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -errno;
	mr.slot = 0;
	mr.guest_phys_addr = 0;
	mr.memory_size = len;
	mr.userspace_addr = (uintptr_t)mem;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &mr)) {
		ret = -errno;
		TH_LOG("KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
		goto out;
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	runsz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu < 0 || runsz <= 0)
		goto out;
	run = mmap(NULL, runsz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs))
		goto out;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	sregs.ds.base = 0;
	sregs.ds.selector = 0;
	regs.rip = 0x1000;
	regs.rflags = 2;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) ||
	    ioctl(vcpu, KVM_SET_REGS, &regs))
		goto out;

	/* a guest that never exits is a failure, not a hang */
	alarm(30);
	for (i = 0; i < 2; i++) {
		if (ioctl(vcpu, KVM_RUN, 0)) {
			ret = -errno;
			memset(&regs, 0, sizeof(regs));
			ioctl(vcpu, KVM_GET_REGS, &regs);
			TH_LOG("KVM_RUN %d: %s; guest rip %#llx, byte at 0x2000 %#x",
			       i, strerror(errno), regs.rip, mem[0x2000]);
			if (ret == -EINTR)
				ret = -ETIMEDOUT;
			break;
		}
		if (run->exit_reason != KVM_EXIT_IO ||
		    run->io.direction != KVM_EXIT_IO_OUT ||
		    run->io.port != 0x10 + i ||
		    *((unsigned char *)run + run->io.data_offset) != 0x42) {
			TH_LOG("exit %u: reason %u port %#x", i,
			       run->exit_reason, run->io.port);
			ret = -EPROTO;
			break;
		}
		ret = 0;
	}
	alarm(0);
out:
	if (run != MAP_FAILED)
		munmap(run, runsz);
	if (vcpu >= 0)
		close(vcpu);
	close(vm);
	return ret;
}

/*
 * A grant backs a KVM memslot, and a guest runs in it and writes into it.
 *
 * Nested KVM makes no progress when the kernel failed to calibrate its
 * TSC (KVM's clock update then fails on every entry; the test harness
 * boots with tsc_early_khz= for that, see Documentation/nvx/testing.rst).
 * A guest in grant memory that does not run is therefore compared with a
 * control guest in anonymous memory: if the control does not run either,
 * the machine is at fault and the test skips, saying so; if the control
 * runs, the grant is at fault and the test fails.
 */
POOL_TEST(kvm_memslot_runs_guest)
{
	struct sigaction sa = { .sa_handler = kick_vcpu };
	unsigned char *mem, *anon;
	int kvm, g, ret = -ETIMEDOUT, ctl, attempt;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		SKIP(return, "/dev/kvm missing: no hardware virtualisation");
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	mem = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));

	for (attempt = 1; attempt <= 2 && ret == -ETIMEDOUT; attempt++) {
		ret = run_guest_in(_metadata, kvm, mem, CHUNK);
		if (ret == -ETIMEDOUT)
			TH_LOG("attempt %d: the guest did not exit in 30 s",
			       attempt);
	}
	if (ret == -ETIMEDOUT) {
		anon = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, anon);
		ctl = run_guest_in(_metadata, kvm, anon, CHUNK);
		munmap(anon, CHUNK);
		if (ctl == -ETIMEDOUT) {
			munmap(mem, CHUNK);
			close(g);
			close(kvm);
			SKIP(return,
			     "nested KVM makes no progress here: a control guest in anonymous memory did not run either");
		}
		TH_LOG("the control guest in anonymous memory ran: %s",
		       strerror(-ctl));
	}
	ASSERT_EQ(0, ret) TH_LOG("guest run: %s", strerror(-ret));
	/* the guest wrote into grant memory */
	EXPECT_EQ(0x99, mem[0x2000]);

	munmap(mem, CHUNK);
	close(g);
	close(kvm);
}

POOL_TEST(grow_shrink_show)
{
	struct nvx_pool_stats s, after;
	uint64_t done;

	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.chunk_bytes);
	EXPECT_LE(1, s.nr_nodes);
	EXPECT_LE(POOL_CHUNKS * CHUNK, s.clean_bytes);

	/* an unaligned size is rounded up to whole chunks */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK + 1,
				 NVX_NODE_ANY, &done));
	EXPECT_EQ(2 * CHUNK, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes + 2 * CHUNK, after.total_bytes);
	EXPECT_EQ(s.clean_bytes + 2 * CHUNK, after.clean_bytes);

	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, 2 * CHUNK, 0,
				 &done));
	EXPECT_EQ(2 * CHUNK, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes, after.total_bytes);

	/* per node: node 0 holds at least what we grew on "any" node */
	memset(&after, 0, sizeof(after));
	after.node = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_POOL_STATS, &after));
	EXPECT_LE(0, (long long)after.total_bytes);
	after.node = after.nr_nodes;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_STATS, &after));
}

POOL_TEST(bad_resize)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY, .bytes = CHUNK };

	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, 0,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, ~0ULL,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, 0,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK,
				       4096, NULL));
	r.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
	r.flags = 0;
	/* chunk sizes: 2 MiB to 1 GiB on grow, none on shrink */
	r.chunk_shift = NVX_POOL_CHUNK_SHIFT - 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	r.chunk_shift = NVX_POOL_CHUNK_SHIFT_MAX + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	r.chunk_shift = NVX_POOL_CHUNK_SHIFT;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
	r.chunk_shift = 0;
	r.pad = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
}

/* The first version of struct nvx_pool_resize, before chunk_shift. */
struct nvx_pool_resize_v0 {
	__u32 flags;
	__u32 node;
	__u64 bytes;
	__u64 done;
};

/* The first version of struct nvx_pool_stats, before chunks. */
struct nvx_pool_stats_v0 {
	__u32 flags, node, nr_nodes, pad;
	__u64 chunk_bytes, total_bytes, clean_bytes, dirty_bytes;
	__u64 granted_bytes, grants, grants_live, grant_failures;
	__u64 scrubbed_bytes, scrub_ns, sync_zeroed_bytes;
};

/* Binaries built against the first versions of the structs still work. */
POOL_TEST(old_struct_sizes)
{
	struct nvx_pool_resize_v0 r = { .node = NVX_NODE_ANY, .bytes = CHUNK };
	struct nvx_pool_stats_v0 s0 = { .node = NVX_NODE_ANY };
	struct nvx_pool_stats s;
	uint8_t small[8] = {};

	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x10,
					       struct nvx_pool_resize_v0), &r));
	EXPECT_EQ(CHUNK, r.done);
	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x12,
					       struct nvx_pool_stats_v0), &s0));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s.total_bytes, s0.total_bytes);
	r.done = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x11,
					       struct nvx_pool_resize_v0), &r));
	EXPECT_EQ(CHUNK, r.done);
	/* smaller than the first version: EINVAL */
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x10,
						     uint8_t[8]), small));
}

static int grant_ranges(int g, struct nvx_grant_range *rg, uint32_t room)
{
	struct nvx_grant_ranges r = { .count = room, .ranges = (uintptr_t)rg };
	int ret = nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r);

	return ret ? ret : (int)r.count;
}

/*
 * Chunks larger than 2 MiB: a 64 MiB chunk is one physically contiguous,
 * aligned run; a grant of part of it splits it; its pieces are mapped
 * with PMDs, zeroed between owners, and accounted like any others. The
 * test empties the pool first (so that it knows which chunks are there)
 * and refills it to the size it found.
 */
POOL_TEST(large_chunks)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY };
	const uint64_t big = 64ULL << 20;
	struct nvx_grant_range rg[4];
	struct nvx_pool_stats s0, s;
	struct pin_longterm_test pt = { 0 };
	uint64_t done, sum;
	unsigned char *p, *q;
	int g, g2, n, i, gfd;

	ASSERT_EQ(0, pool_stats(self->fd, &s0));
	ASSERT_EQ(0, s0.granted_bytes);
	self->refill = s0.total_bytes;
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK,
				 s0.total_bytes, NVX_NODE_ANY, &done));
	ASSERT_EQ(s0.total_bytes, done);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	ASSERT_EQ(0, s.total_bytes);
	ASSERT_EQ(0, s.chunks);

	/* one chunk of 64 MiB */
	r.bytes = big;
	r.chunk_shift = 26;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(big, r.done);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big, s.clean_bytes);
	EXPECT_EQ(1, s.chunks) TH_LOG("the allocator did not deliver 64 MiB in one piece");

	/* 2 MiB of it: the chunk splits, the front goes to the grant */
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(2, s.chunks);
	ASSERT_EQ(1, grant_ranges(g, rg, 4));
	EXPECT_EQ(0, rg[0].phys % big);
	EXPECT_EQ(CHUNK, rg[0].bytes);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xa5, CHUNK);
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));

	/* the rest: contiguous with the first part */
	g2 = grant(self->fd, big - CHUNK, 0, NULL);
	ASSERT_LE(0, g2);
	ASSERT_EQ(1, grant_ranges(g2, &rg[1], 3));
	EXPECT_EQ(rg[0].phys + CHUNK, rg[1].phys);
	EXPECT_EQ(big - CHUNK, rg[1].bytes);
	q = map_grant(g2, big - CHUNK);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_TRUE(all_bytes(q, big - CHUNK, 0));
	EXPECT_EQ((long)((big - CHUNK) >> 10), smaps_kb(q, "FilePmdMapped:"));
	EXPECT_EQ(-ENOSPC, grant(self->fd, CHUNK, 0, NULL));
	munmap(q, big - CHUNK);
	close(g2);
	munmap(p, CHUNK);
	close(g);

	/*
	 * Back and scrubbed: two chunks (pieces are not merged back), in
	 * whatever order they came back in, so one or two ranges inside
	 * the first chunk's 64 MiB; and it reads zero.
	 */
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big, s.clean_bytes);
	EXPECT_EQ(2, s.chunks);
	g = grant(self->fd, big, 0, NULL);
	ASSERT_LE(0, g);
	n = grant_ranges(g, &rg[2], 2);
	EXPECT_TRUE(n == 1 || n == 2);
	for (i = 0, sum = 0; i < n && i < 2; i++) {
		EXPECT_LE(rg[0].phys, rg[2 + i].phys);
		EXPECT_GE(rg[0].phys + big, rg[2 + i].phys + rg[2 + i].bytes);
		sum += rg[2 + i].bytes;
	}
	EXPECT_EQ(big, sum);
	p = map_grant(g, big);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, big, 0));

	/*
	 * A page pinned in the middle of the 62 MiB chunk when the grant
	 * goes: the scrubber splits that chunk into pieces and holds back
	 * only the pinned piece.
	 */
	gfd = open(GUP_TEST, O_RDWR);
	if (gfd >= 0) {
		pt.addr = (uintptr_t)p + big / 2;
		pt.size = PAGE;
		pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt));
	} else {
		TH_LOG(GUP_TEST " missing (CONFIG_GUP_TEST): no pinned chunk");
	}
	munmap(p, big);
	close(g);
	if (gfd >= 0) {
		uint64_t end = now_ms() + 60000;

		do {
			usleep(100000);
			ASSERT_EQ(0, pool_stats(self->fd, &s));
		} while (s.clean_bytes < big - CHUNK && now_ms() < end);
		EXPECT_EQ(big - CHUNK, s.clean_bytes);
		EXPECT_EQ(CHUNK, s.dirty_bytes);
		EXPECT_EQ(32, s.chunks);
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
		close(gfd);
	}

	/* shrinking part of a chunk splits it too */
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(big, r.done);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big / 2,
				 NVX_NODE_ANY, &done));
	EXPECT_EQ(big / 2, done);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big / 2, s.total_bytes);
	EXPECT_EQ(1, s.chunks);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big / 2,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(0, s.total_bytes);
	EXPECT_EQ(0, s.chunks);

	/* refill to where the test started */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, s0.total_bytes,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(s0.total_bytes, done);
}

/* Growing beyond what memory holds: -ENOMEM, and what was added is kept. */
POOL_TEST(grow_beyond_memory)
{
	struct nvx_pool_stats before, after;
	uint64_t done = 0;

	ASSERT_EQ(0, pool_stats(self->fd, &before));
	EXPECT_EQ(-ENOMEM, pool_resize(self->fd, NVX_IOC_POOL_GROW,
				       1ULL << 40, NVX_NODE_ANY, &done));
	EXPECT_LT(0, done);
	EXPECT_GT(1ULL << 40, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(before.total_bytes + done, after.total_bytes);
	TH_LOG("grew %llu MiB before memory ran out",
	       (unsigned long long)(done >> 20));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, done,
				 NVX_NODE_ANY, NULL));
}

POOL_TEST(grant_one_and_many_chunks)
{
	struct nvx_grant_info info = { 0 };
	struct nvx_pool_stats s;
	uint64_t got;
	unsigned char *p;
	int g1, g2;

	g1 = grant(self->fd, CHUNK, 0, &got);
	ASSERT_LE(0, g1);
	EXPECT_EQ(CHUNK, got);
	ASSERT_EQ(0, nvx_ioctl(g1, NVX_IOC_GRANT_INFO, &info));
	EXPECT_EQ(CHUNK, info.bytes);
	EXPECT_EQ(1, info.nr_chunks);
	EXPECT_EQ(CHUNK, info.chunk_bytes);

	g2 = grant(self->fd, 8 * CHUNK, 0, &got);
	ASSERT_LE(0, g2);
	EXPECT_EQ(8 * CHUNK, got);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(self->start.granted_bytes + 9 * CHUNK, s.granted_bytes);
	EXPECT_EQ(self->start.grants_live + 2, s.grants_live);

	p = map_grant(g2, 8 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, 8 * CHUNK, 0));
	memset(p, 0x5a, 8 * CHUNK);
	EXPECT_EQ(0, munmap(p, 8 * CHUNK));
	close(g1);
	close(g2);
}

POOL_TEST(unaligned_sizes_round_up)
{
	uint64_t got;
	unsigned char *p;
	int g;

	g = grant(self->fd, 1, 0, &got);
	ASSERT_LE(0, g);
	EXPECT_EQ(CHUNK, got);
	close(g);
	g = grant(self->fd, CHUNK + 1, 0, &got);
	ASSERT_LE(0, g);
	EXPECT_EQ(2 * CHUNK, got);
	/* the whole rounded size is there */
	p = map_grant(g, 2 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	p[2 * CHUNK - 1] = 1;
	munmap(p, 2 * CHUNK);
	close(g);
}

POOL_TEST(bad_grants)
{
	struct nvx_grant_create g = { .node = NVX_NODE_ANY, .bytes = CHUNK };
	struct nvx_pool_stats s;
	int bit;

	EXPECT_EQ(-EINVAL, grant(self->fd, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, grant(self->fd, ~0ULL, 0, NULL));
	for (bit = 3; bit < 32; bit++) {
		g.flags = 1U << bit;
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g));
	}
	g.flags = NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g));
	g.flags = 0;
	g.pad = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g));
	g.pad = 0;
	g.node = 4096;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g));

	/* more than the pool holds */
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(-ENOSPC, grant(self->fd, s.total_bytes + CHUNK, 0, NULL));
}

POOL_TEST(bad_mmap)
{
	void *p;
	int g = grant(self->fd, 2 * CHUNK, 0, NULL);

	ASSERT_LE(0, g);
	/* private mappings would write elsewhere */
	p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE, g, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* beyond the end, or crossing it */
	p = mmap(NULL, CHUNK, PROT_READ, MAP_SHARED, g, 2 * CHUNK);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, 2 * CHUNK, PROT_READ, MAP_SHARED, g, CHUNK);
	EXPECT_EQ(MAP_FAILED, p);
	/* a window in the middle is fine, and sees the same memory */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	((char *)p)[0] = 7;
	{
		char *all = map_grant(g, 2 * CHUNK);

		ASSERT_NE(MAP_FAILED, all);
		EXPECT_EQ(7, all[CHUNK]);
		munmap(all, 2 * CHUNK);
	}
	/* mremap cannot grow it */
	EXPECT_EQ(MAP_FAILED, mremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE));
	munmap(p, PAGE);
	close(g);
}

/*
 * The security property: the previous owner's data is never seen by the
 * next one, whether the memory was zeroed by the scrubber or on the
 * grant's own path.
 */
static void reuse_reads_zero(struct __test_metadata *_metadata, int fd,
			     uint32_t flags, bool let_scrubber_finish)
{
	struct nvx_pool_stats s;
	unsigned char *p;
	uint64_t len;
	int g;

	ASSERT_EQ(0, pool_stats(fd, &s));
	len = s.clean_bytes;
	g = grant(fd, len, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xa5, len);
	munmap(p, len);
	close(g);
	if (let_scrubber_finish)
		ASSERT_EQ(0, wait_scrubbed(fd));

	g = grant(fd, len, flags, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, len, 0));
	munmap(p, len);
	close(g);
}

POOL_TEST(reuse_reads_zero_sync)
{
	struct nvx_pool_stats a, b;

	/* a slow scrubber leaves the zeroing to the grant */
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "1"));
	ASSERT_EQ(0, pool_stats(self->fd, &a));
	reuse_reads_zero(_metadata, self->fd, 0, false);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	ASSERT_EQ(0, pool_stats(self->fd, &b));
	EXPECT_LT(a.sync_zeroed_bytes, b.sync_zeroed_bytes);
}

POOL_TEST(reuse_reads_zero_wait)
{
	reuse_reads_zero(_metadata, self->fd, NVX_GRANT_WAIT, false);
}

POOL_TEST(reuse_reads_zero_scrubbed)
{
	struct nvx_pool_stats a, b;

	/* after the scrubber ran, everything is clean again */
	ASSERT_EQ(0, pool_stats(self->fd, &a));
	reuse_reads_zero(_metadata, self->fd, NVX_GRANT_CLEAN_ONLY, true);
	ASSERT_EQ(0, pool_stats(self->fd, &b));
	EXPECT_LE(a.scrubbed_bytes + a.clean_bytes, b.scrubbed_bytes);
	EXPECT_EQ(a.sync_zeroed_bytes, b.sync_zeroed_bytes);
}

POOL_TEST(clean_only_fails_while_dirty)
{
	struct nvx_pool_stats s;
	int g;

	ASSERT_EQ(0, write_param("scrub_rate_mbps", "1"));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes, 0, NULL);
	ASSERT_LE(0, g);
	close(g);
	/* at 1 MiB/s the scrubber needs seconds per chunk */
	EXPECT_EQ(-EAGAIN, grant(self->fd, s.clean_bytes,
				 NVX_GRANT_CLEAN_ONLY, NULL));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_LT(0, s.grant_failures);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	g = grant(self->fd, s.total_bytes - s.granted_bytes, NVX_GRANT_WAIT,
		  NULL);
	EXPECT_LE(0, g);
	close(g);
}

POOL_TEST(exhaustion_and_recovery)
{
	struct nvx_pool_stats s;
	int g[POOL_CHUNKS * 2], n = 0, i;

	/* take chunks one by one until the pool is empty */
	while (n < (int)ARRAY_SIZE(g)) {
		int r = grant(self->fd, CHUNK, 0, NULL);

		if (r < 0) {
			EXPECT_EQ(-ENOSPC, r);
			break;
		}
		g[n++] = r;
	}
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s.total_bytes, s.granted_bytes);
	EXPECT_LE(POOL_CHUNKS, n);
	EXPECT_EQ(-ENOSPC, grant(self->fd, CHUNK, 0, NULL));
	for (i = 0; i < n; i++)
		close(g[i]);
	/* recovery: all of it can be granted again at once */
	i = grant(self->fd, (uint64_t)n * CHUNK, 0, NULL);
	EXPECT_LE(0, i);
	close(i);
}

POOL_TEST(shrink_while_granted)
{
	struct nvx_pool_stats s;
	uint64_t done;
	int g;

	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes - 2 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	/* only the two free chunks can go; the call does not wait */
	EXPECT_EQ(-EBUSY, pool_resize(self->fd, NVX_IOC_POOL_SHRINK,
				      4 * CHUNK, NVX_NODE_ANY, &done));
	EXPECT_EQ(2 * CHUNK, done);
	close(g);
	/* give back what the fixture will shrink */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, 2 * CHUNK,
				 NVX_NODE_ANY, NULL));
}

/* Every order of munmap and close returns the memory exactly once. */
POOL_TEST(munmap_close_orders)
{
	struct nvx_pool_stats s;
	int order, g, g2;
	char *p, *p2;

	for (order = 0; order < 5; order++) {
		g = grant(self->fd, 2 * CHUNK, 0, NULL);
		ASSERT_LE(0, g);
		p = map_grant(g, 2 * CHUNK);
		ASSERT_NE(MAP_FAILED, p);
		p[0] = 1;
		switch (order) {
		case 0:		/* munmap, then close */
			munmap(p, 2 * CHUNK);
			close(g);
			break;
		case 1:		/* close, then munmap: the mapping holds it */
			close(g);
			ASSERT_EQ(0, pool_stats(self->fd, &s));
			EXPECT_EQ(self->start.grants_live + 1, s.grants_live);
			p[1] = 2;
			munmap(p, 2 * CHUNK);
			break;
		case 2:		/* two mappings, a dup, mixed order */
			g2 = dup(g);
			p2 = map_grant(g2, CHUNK);
			ASSERT_NE(MAP_FAILED, p2);
			close(g);
			munmap(p, 2 * CHUNK);
			close(g2);
			EXPECT_EQ(1, p2[0]);
			munmap(p2, CHUNK);
			break;
		case 3:		/* partial munmaps */
			munmap(p + CHUNK, CHUNK);
			close(g);
			munmap(p, CHUNK);
			break;
		case 4:		/* exit with it mapped (a child does it) */
			if (fork() == 0) {
				p[2] = 3;
				_exit(0);
			}
			wait(NULL);
			munmap(p, 2 * CHUNK);
			close(g);
			break;
		}
		ASSERT_EQ(0, pool_stats(self->fd, &s));
		EXPECT_EQ(self->start.grants_live, s.grants_live)
			TH_LOG("order %d", order);
		EXPECT_EQ(self->start.granted_bytes, s.granted_bytes)
			TH_LOG("order %d", order);
	}
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'g';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* A grant passed over SCM_RIGHTS is the same memory in the receiver. */
POOL_TEST(fd_passed_over_unix_socket)
{
	int sv[2], g, status;
	char *p;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int rg = recv_fd(sv[1]);
		char *q;

		if (rg < 0)
			_exit(10);
		q = map_grant(rg, CHUNK);
		if (q == MAP_FAILED)
			_exit(11);
		if (q[100] != 42)
			_exit(12);
		q[200] = 43;
		_exit(0);
	}
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	p[100] = 42;
	ASSERT_EQ(0, send_fd(sv[0], g));
	close(g);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(43, p[200]);
	munmap(p, CHUNK);
	close(sv[0]);
	close(sv[1]);
}

struct racer {
	int fd;
	int id;
	int rounds;
	int errors;
	int enospc;
};

/*
 * Each thread fills its grants with its own tag and checks the tag is
 * still intact before letting go: memory handed out twice would show
 * another thread's tag.
 */
static void *racer_thread(void *arg)
{
	struct racer *r = arg;
	uint32_t tag;
	int i, k;

	for (i = 0; i < r->rounds; i++) {
		int g[2];
		uint32_t *p[2];

		for (k = 0; k < 2; k++) {
			g[k] = grant(r->fd, CHUNK, 0, NULL);
			p[k] = MAP_FAILED;
			if (g[k] == -ENOSPC) {
				r->enospc++;
				continue;
			}
			if (g[k] < 0) {
				r->errors++;
				continue;
			}
			p[k] = map_grant(g[k], CHUNK);
			if (p[k] == MAP_FAILED) {
				r->errors++;
				continue;
			}
			if (p[k][0] != 0 || p[k][CHUNK / 4 - 1] != 0)
				r->errors++;	/* not zeroed */
			tag = (r->id << 16) | (i << 1) | k;
			for (size_t w = 0; w < CHUNK / 4; w += 1024)
				p[k][w] = tag;
		}
		sched_yield();
		for (k = 0; k < 2; k++) {
			if (p[k] == MAP_FAILED)
				goto close;
			tag = (r->id << 16) | (i << 1) | k;
			for (size_t w = 0; w < CHUNK / 4; w += 1024)
				if (p[k][w] != tag) {
					r->errors++;
					break;
				}
			munmap(p[k], CHUNK);
close:
			if (g[k] >= 0)
				close(g[k]);
		}
	}
	return NULL;
}

POOL_TEST(concurrent_grants_never_shared)
{
	struct racer r[6];
	pthread_t t[6];
	int i, errors = 0, enospc = 0;

	for (i = 0; i < 6; i++) {
		r[i] = (struct racer){ .fd = self->fd, .id = i, .rounds = 40 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, racer_thread, &r[i]));
	}
	for (i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		errors += r[i].errors;
		enospc += r[i].enospc;
	}
	TH_LOG("%d grants refused for want of memory", enospc);
	EXPECT_EQ(0, errors);
}

static int run_as_nobody(int (*fn)(int fd), int fd)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn(fd));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int nobody_manages_pool(int fd)
{
	struct nvx_pool_stats s;
	uint64_t done;

	/* the fd was opened by root; management still checks the caller */
	if (pool_resize(fd, NVX_IOC_POOL_GROW, CHUNK, NVX_NODE_ANY, &done) !=
	    -EPERM)
		return 1;
	if (pool_resize(fd, NVX_IOC_POOL_SHRINK, CHUNK, NVX_NODE_ANY,
			&done) != -EPERM)
		return 2;
	if (pool_stats(fd, &s))
		return 3;	/* stats are for anyone with the device */
	return 0;
}

POOL_TEST(management_needs_cap_sys_admin)
{
	EXPECT_EQ(0, run_as_nobody(nobody_manages_pool, self->fd));
}

static int nobody_ranges_and_memlock(int fd)
{
	struct nvx_grant_range rg[4];
	struct nvx_grant_ranges r = { .count = 4 };
	struct rlimit rl = { 4 * CHUNK, 4 * CHUNK };
	int g, g2;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	g = grant(fd, 4 * CHUNK, 0, NULL);
	if (g < 0)
		return 2;
	r.ranges = (uintptr_t)rg;
	if (nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r) != -EPERM)
		return 3;
	/* RLIMIT_MEMLOCK is used up: the next grant is over quota */
	g2 = grant(fd, CHUNK, 0, NULL);
	if (g2 != -EDQUOT)
		return 4;
	close(g);
	/* and the charge went away with the grant */
	g2 = grant(fd, 4 * CHUNK, 0, NULL);
	if (g2 < 0)
		return 5;
	close(g2);
	return 0;
}

POOL_TEST(unprivileged_ranges_and_memlock)
{
	EXPECT_EQ(0, run_as_nobody(nobody_ranges_and_memlock, self->fd));
}

POOL_TEST(ranges_and_max_grant)
{
	struct nvx_grant_range rg[POOL_CHUNKS];
	struct nvx_grant_ranges r = { 0 };
	uint64_t sum = 0;
	uint32_t i;
	int g;

	g = grant(self->fd, 4 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	r.count = 0;
	r.ranges = (uintptr_t)rg;
	EXPECT_EQ(-EOVERFLOW, nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r));
	EXPECT_LE(1, r.count);
	r.count = POOL_CHUNKS;
	ASSERT_EQ(0, nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r));
	for (i = 0; i < r.count; i++) {
		EXPECT_EQ(0, rg[i].phys % CHUNK);
		sum += rg[i].bytes;
	}
	EXPECT_EQ(4 * CHUNK, sum);
	r.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r));
	r.flags = 0;
	r.ranges = 0xffffffffff000000ULL;
	EXPECT_EQ(-EFAULT, nvx_ioctl(g, NVX_IOC_GRANT_RANGES, &r));
	/* grant ioctls on /dev/nvx and the other way round */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_IOC_GRANT_RANGES, &r));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(g, NVX_IOC_POOL_STATS, &r));
	close(g);

	ASSERT_EQ(0, write_param("grant_max_bytes", "4194304"));
	EXPECT_EQ(-EFBIG, grant(self->fd, 3 * CHUNK, 0, NULL));
	g = grant(self->fd, 2 * CHUNK, 0, NULL);
	EXPECT_LE(0, g);
	close(g);
	ASSERT_EQ(0, write_param("grant_max_bytes", "0"));
}

/* Grant memory works as an I/O buffer: read() into it, write() from it. */
POOL_TEST(io_buffer)
{
	unsigned char *p, buf[4096];
	int g, pfd[2], fd;

	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	fd = open("/dev/urandom", O_RDONLY);
	ASSERT_LE(0, fd);
	/* across the page boundary in the middle of the chunk */
	ASSERT_EQ(8192, read(fd, p + CHUNK / 2 - 4096, 8192));
	close(fd);
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(4096, write(pfd[1], p + CHUNK / 2 - 2048, 4096));
	ASSERT_EQ(4096, read(pfd[0], buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, p + CHUNK / 2 - 2048, 4096));
	close(pfd[0]);
	close(pfd[1]);
	munmap(p, CHUNK);
	close(g);
}

/*
 * A mapping at a chunk-aligned offset gets a chunk-aligned address and
 * one PMD per chunk; an unaligned offset gets PTEs; splitting a PMD
 * (partial munmap, mprotect) and fork keep the data; the accounting in
 * the teardown proves every reference the mappings took went back.
 */
POOL_TEST(pmd_mappings)
{
	const size_t len = 4 * CHUNK;
	unsigned char *p, *q;
	int g, status;
	pid_t pid;

	g = grant(self->fd, len, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, (uintptr_t)p % CHUNK);
	tag_pages(p, len, 0);
	EXPECT_EQ((long)(len >> 10), smaps_kb(p, "FilePmdMapped:"));
	EXPECT_EQ((long)(len >> 10), smaps_kb(p, "Rss:"));

	/* a second mapping, one page into the grant: PTEs, same memory */
	q = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, g, PAGE);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_TRUE(pages_tagged(q, CHUNK, 1));
	EXPECT_EQ(0, smaps_kb(q, "FilePmdMapped:"));
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(q, "Rss:"));
	*(unsigned long *)(q + CHUNK - PAGE + 8) = 0xfeed;
	EXPECT_EQ(0xfeed, *(unsigned long *)(p + CHUNK + 8));
	ASSERT_EQ(0, munmap(q, CHUNK));

	/* a child sees and writes the same memory */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!pages_tagged(p, len, 0))
			_exit(1);
		p[len - 1] = 0x5a;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0x5a, p[len - 1]);

	/* split chunk 1's PMD by unmapping one page in it */
	ASSERT_EQ(0, munmap(p + CHUNK + PAGE, PAGE));
	/* and chunk 3's by making one page read-only */
	ASSERT_EQ(0, mprotect(p + 3 * CHUNK, PAGE, PROT_READ));
	EXPECT_TRUE(pages_tagged(p, CHUNK + PAGE, 0));
	EXPECT_TRUE(pages_tagged(p + CHUNK + 2 * PAGE, 3 * CHUNK - 2 * PAGE,
				 CHUNK / PAGE + 2));
	/* chunk 0 kept its PMD; chunk 1 is PTEs now */
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));
	ASSERT_EQ(0, munmap(p, len));
	close(g);
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The pool's tracepoints fire: grow, grant, release, scrub, shrink. */
POOL_TEST(tracepoints)
{
	static const char * const events[] = {
		"nvx_pool_grow:", "nvx_grant:", "nvx_grant_release:",
		"nvx_scrub:", "nvx_pool_shrink:",
	};
	char *trace;
	size_t len = 0, i;
	ssize_t n;
	int fd, g;

	if (access(TRACEFS "events/nvx/enable", W_OK))
		SKIP(return, "no tracefs at " TRACEFS);
	ASSERT_EQ(0, write_str(TRACEFS "trace", ""));
	ASSERT_EQ(0, write_str(TRACEFS "events/nvx/enable", "1"));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK,
				 NVX_NODE_ANY, NULL));
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	close(g);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, CHUNK,
				 NVX_NODE_ANY, NULL));
	ASSERT_EQ(0, write_str(TRACEFS "events/nvx/enable", "0"));

	trace = malloc(1 << 20);
	ASSERT_NE(NULL, trace);
	fd = open(TRACEFS "trace", O_RDONLY);
	ASSERT_LE(0, fd);
	while (len < (1 << 20) - 1 &&
	       (n = read(fd, trace + len, (1 << 20) - 1 - len)) > 0)
		len += n;
	trace[len] = '\0';
	close(fd);
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		if (!strstr(trace, events[i]))
			TH_LOG("no %s event in the trace", events[i]);
		EXPECT_NE(NULL, strstr(trace, events[i]));
	}
	free(trace);
}

/* A FOLL_LONGTERM pin of grant memory succeeds (no migration needed). */
POOL_TEST(longterm_pin)
{
	struct gup_test gt = { 0 };
	int gfd, g;
	char *p;

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd < 0)
		SKIP(return, GUP_TEST " missing (CONFIG_GUP_TEST)");
	g = grant(self->fd, 2 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, 2 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	gt.addr = (uintptr_t)p;
	gt.size = 2 * CHUNK;
	gt.nr_pages_per_call = 512;
	gt.gup_flags = 1;	/* FOLL_WRITE */
	EXPECT_EQ(0, ioctl(gfd, PIN_LONGTERM_BENCHMARK, &gt))
		TH_LOG("PIN_LONGTERM_BENCHMARK: %s", strerror(errno));
	munmap(p, 2 * CHUNK);
	close(g);
	close(gfd);
}

/*
 * Memory still pinned when its grant goes is neither scrubbed nor handed
 * out again until the pin is released.
 */
POOL_TEST(pinned_memory_is_not_reused)
{
	struct pin_longterm_test pt = { 0 };
	struct nvx_pool_stats s;
	int gfd, g;
	char *p;

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd < 0)
		SKIP(return, GUP_TEST " missing (CONFIG_GUP_TEST)");
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, s.clean_bytes);
	ASSERT_NE(MAP_FAILED, p);
	pt.addr = (uintptr_t)p;
	pt.size = PAGE;
	pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt))
		TH_LOG("PIN_LONGTERM_TEST_START: %s", strerror(errno));
	munmap(p, s.clean_bytes);
	close(g);

	/* give the scrubber time: the pinned chunk must stay dirty */
	sleep(2);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.dirty_bytes);
	EXPECT_EQ(-ENOSPC, grant(self->fd, s.total_bytes - s.granted_bytes,
				 0, NULL));

	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
	close(gfd);
	EXPECT_EQ(0, wait_scrubbed(self->fd));
}

TEST_HARNESS_MAIN
