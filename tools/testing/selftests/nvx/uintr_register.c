// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": registration and bad input.
 *
 * Registering a handler and its page, every bad argument and struct
 * size, and what is per thread.
 */
#include "uintr_fixture.h"

/*
 * The library registers, maps the page and unmasks; the page starts
 * clear and maps no other way; receiver and vector fds are
 * close-on-exec; a second registration is -EBUSY; after unregistering,
 * a new one works.
 */
TEST_F(uintr, register_maps_page)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_uintr_page *p;
	int rfd, vfd, i;

	rfd = do_register(self->fd, NULL, 0, 0);
	ASSERT_LE(0, rfd) TH_LOG("register: %s", strerror(-rfd));
	p = nvx_uintr_page();
	ASSERT_NE(NULL, p);
	EXPECT_EQ(1u, p->enabled);
	EXPECT_EQ(0ULL, p->pending);
	EXPECT_EQ(0ULL, p->delivered);
	EXPECT_EQ(0u, p->pad0);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0ULL, p->pad1[i]);
	EXPECT_EQ(FD_CLOEXEC, fcntl(rfd, F_GETFD) & FD_CLOEXEC);

	/* the page maps only as one shared page at offset 0 */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rfd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rfd, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, rfd, 0));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-EBUSY, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	EXPECT_EQ(-EBUSY, nvx_uintr_register_handler(self->fd, on_uintr, NULL,
						     0, 0));
	EXPECT_EQ(p, nvx_uintr_page());

	vfd = nvx_uintr_vector_fd(self->fd, 0);
	ASSERT_LE(0, vfd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(vfd, F_GETFD) & FD_CLOEXEC);
	close(vfd);
	vfd = nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS - 1);
	ASSERT_LE(0, vfd);
	close(vfd);

	EXPECT_EQ(0, do_unregister(self->fd));
	EXPECT_EQ(-ENOENT, do_unregister_raw(self->fd));
	rfd = do_register(self->fd, NULL, 0, 0);
	EXPECT_LE(0, rfd) TH_LOG("register again: %s", strerror(-rfd));
	EXPECT_EQ(0ULL, handled());
}

/*
 * The kernel's own view: the page starts masked, so a send only sets a
 * pending bit (were it delivered, trap_entry would kill the test), and a
 * pending vector ends NVX_IOC_UINTR_WAIT at once.
 */
TEST_F(uintr, raw_register_starts_masked)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_uintr_page *p;
	int vfd, idx;
	uint64_t t0;

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	ASSERT_LE(0, r.fd);
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0u, p->enabled);
	EXPECT_EQ(0ULL, p->pending);
	EXPECT_EQ(0ULL, p->delivered);

	vfd = nvx_uintr_vector_fd(self->fd, 30);
	ASSERT_LE(0, vfd);
	idx = nvx_uintr_add_sender(self->fd, vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL << 30, p->pending);
	EXPECT_EQ(0ULL, p->delivered);

	t0 = now_ns();
	EXPECT_EQ(0, do_wait(self->fd, WAIT_LONG));
	EXPECT_GT(WAIT_LONG / 2, now_ns() - t0);
	EXPECT_EQ(1ULL << 30, p->pending);

	EXPECT_EQ(0, do_unregister_raw(self->fd));
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	munmap(p, pg);
	close(r.fd);
}

TEST_F(uintr, register_bad_args)
{
	size_t size = 65536;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t h = (uintptr_t)trap_entry, s = (uintptr_t)stack;
	const struct {
		uint64_t handler, stack, size;
		int err;
	} bad[] = {
		{ 0, 0, 0, -EINVAL },				/* no handler */
		{ 0xffff800000000000ULL, 0, 0, -EFAULT },	/* kernel */
		{ 0xffffffff81000000ULL, 0, 0, -EFAULT },
		{ h, s, 0, -EINVAL },				/* no size */
		{ h, 0, 4096, -EINVAL },			/* no stack */
		{ h, s, 255, -EINVAL },				/* too small */
		{ h, 0xffff800000000000ULL, 4096, -EFAULT },
		{ h, s, UINT64_MAX, -EFAULT },			/* too far */
	};
	struct nvx_uintr_register r;
	unsigned int i;

	ASSERT_NE(MAP_FAILED, stack);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&r, 0, sizeof(r));
		r.handler = bad[i].handler;
		r.stack = bad[i].stack;
		r.stack_size = bad[i].size;
		EXPECT_EQ(bad[i].err,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r))
			TH_LOG("case %u", i);
	}
	/* none of them registered anything */
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));

	/* the smallest alternate stack is fine */
	memset(&r, 0, sizeof(r));
	r.handler = h;
	r.stack = s + size - 256;
	r.stack_size = 256;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	EXPECT_EQ(0, do_unregister_raw(self->fd));
	close(r.fd);
	munmap(stack, size);
}

/* Every flag bit a struct does not define is -EINVAL, and does nothing. */
TEST_F(uintr, unknown_flags_are_einval)
{
	int vfd = -1, idx, bit;
	uint32_t flag;

	for (bit = 0; bit < 32; bit++) {
		struct nvx_uintr_register r = {
			.flags = 1u << bit,
			.handler = (uintptr_t)trap_entry,
		};

		if (r.flags & NVX_UINTR_REGISTER_FLAGS)
			continue;
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r))
			TH_LOG("flag %#x", r.flags);
	}
	idx = register_vector(_metadata, self->fd, 1, &vfd);

	for (bit = 0; bit < 32; bit++) {
		uint32_t one = idx;
		struct nvx_uintr_vector_fd v = { .vector = 1,
						 .flags = 1u << bit };
		struct nvx_uintr_sender add = { .vector_fd = vfd,
						.flags = 1u << bit };
		struct nvx_uintr_sender del = { .index = idx,
						.flags = 1u << bit };
		struct nvx_uintr_send s = { .index = idx, .flags = 1u << bit };
		struct nvx_uintr_send_many m = {
			.count = 1,
			.indices = (uintptr_t)&one,
			.flags = 1u << bit,
		};
		struct nvx_uintr_wait w = { .flags = 1u << bit };
		struct nvx_uintr_timer t = {
			.vector = 1,
			.first_ns = NVX_UINTR_MAX_NS,
			.flags = 1u << bit,
		};
		struct nvx_uintr_signal sig = { .signo = SIGUSR1,
						.flags = 1u << bit };
		struct nvx_uintr_unregister u = { .flags = 1u << bit };
		const struct {
			unsigned long cmd;
			void *arg;
			const char *name;
		} calls[] = {
			{ NVX_IOC_UINTR_VECTOR_FD, &v, "VECTOR_FD" },
			{ NVX_IOC_UINTR_ADD_SENDER, &add, "ADD_SENDER" },
			{ NVX_IOC_UINTR_DEL_SENDER, &del, "DEL_SENDER" },
			{ NVX_IOC_UINTR_SEND, &s, "SEND" },
			{ NVX_IOC_UINTR_SEND_MANY, &m, "SEND_MANY" },
			{ NVX_IOC_UINTR_WAIT, &w, "WAIT" },
			{ NVX_IOC_UINTR_TIMER, &t, "TIMER" },
			{ NVX_IOC_UINTR_SIGNAL, &sig, "SIGNAL" },
			{ NVX_IOC_UINTR_UNREGISTER, &u, "UNREGISTER" },
		};
		unsigned int i;

		flag = 1u << bit;
		for (i = 0; i < ARRAY_SIZE(calls); i++) {
			const char *name = calls[i].name;

			EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, calls[i].cmd,
						     calls[i].arg))
				TH_LOG("%s flag %#x", name, flag);
		}
	}
	/* nothing was sent, the entry and the registration are still there */
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(1));
}

/* A nonzero reserved field is -EINVAL (Documentation/nvx/uintr.rst). */
TEST_F(uintr, nonzero_reserved_is_einval)
{
	struct nvx_uintr_unregister u = { .reserved = 1 };
	struct nvx_uintr_vector_fd v = { .vector = 1, .reserved = 1 };
	struct nvx_uintr_sender add = { .reserved = 1 };
	struct nvx_uintr_sender del = { .reserved = 1 };
	struct nvx_uintr_send_many m = { .count = 1, .reserved = 1 };
	struct nvx_uintr_wait w = { .reserved = 1 };
	struct nvx_uintr_signal sig = { .signo = SIGUSR1, .reserved = 1 };
	uint32_t one;
	int idx, vfd = -1;

	idx = register_vector(_metadata, self->fd, 1, &vfd);
	one = idx;
	add.vector_fd = vfd;
	del.index = idx;
	m.indices = (uintptr_t)&one;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_VECTOR_FD, &v));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_ADD_SENDER, &add));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_DEL_SENDER, &del));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_SEND_MANY, &m));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_WAIT, &w));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_SIGNAL, &sig));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_UNREGISTER, &u));
	/* nothing was sent, the entry and the registration are still there */
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(1));
}

/* A struct smaller than its first version is -EINVAL, for every ioctl. */
TEST_F(uintr, undersized_structs_are_einval)
{
	union {
		struct nvx_uintr_register reg;
		struct nvx_uintr_unregister unreg;
		struct nvx_uintr_vector_fd vec;
		struct nvx_uintr_sender sender;
		struct nvx_uintr_send send;
		struct nvx_uintr_send_many many;
		struct nvx_uintr_wait wait;
		struct nvx_uintr_timer timer;
		struct nvx_uintr_signal sig;
		uint64_t raw[8];
	} u;
	const struct {
		unsigned long cmd;
		size_t size;
		const char *name;
	} ioc[] = {
		{ NVX_IOC_UINTR_UNREGISTER, sizeof(u.unreg), "UNREGISTER" },
		{ NVX_IOC_UINTR_VECTOR_FD, sizeof(u.vec), "VECTOR_FD" },
		{ NVX_IOC_UINTR_ADD_SENDER, sizeof(u.sender), "ADD_SENDER" },
		{ NVX_IOC_UINTR_DEL_SENDER, sizeof(u.sender), "DEL_SENDER" },
		{ NVX_IOC_UINTR_SEND, sizeof(u.send), "SEND" },
		{ NVX_IOC_UINTR_SEND_MANY, sizeof(u.many), "SEND_MANY" },
		{ NVX_IOC_UINTR_WAIT, sizeof(u.wait), "WAIT" },
		{ NVX_IOC_UINTR_TIMER, sizeof(u.timer), "TIMER" },
		{ NVX_IOC_UINTR_SIGNAL, sizeof(u.sig), "SIGNAL" },
	};
	uint32_t one;
	unsigned int i;
	size_t sz;
	int idx, vfd = -1;

	/*
	 * Each buffer holds a valid struct, so only its size is wrong.
	 * REGISTER first, while the thread has no handler (not -EBUSY).
	 */
	for (sz = 0; sz < sizeof(u.reg); sz++) {
		memset(&u, 0, sizeof(u));
		u.reg.handler = (uintptr_t)trap_entry;
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_UINTR_REGISTER, sz),
				    &u))
			TH_LOG("REGISTER size %zu", sz);
	}
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));

	idx = register_vector(_metadata, self->fd, 2, &vfd);
	one = idx;
	for (i = 0; i < ARRAY_SIZE(ioc); i++) {
		for (sz = 0; sz < ioc[i].size; sz++) {
			memset(&u, 0, sizeof(u));
			switch (_IOC_NR(ioc[i].cmd)) {
			case _IOC_NR(NVX_IOC_UINTR_ADD_SENDER):
				u.sender.vector_fd = vfd;
				break;
			case _IOC_NR(NVX_IOC_UINTR_DEL_SENDER):
				u.sender.index = idx;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SEND):
				u.send.index = idx;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SEND_MANY):
				u.many.count = 1;
				u.many.indices = (uintptr_t)&one;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SIGNAL):
				u.sig.signo = SIGUSR1;
				break;
			}
			EXPECT_EQ(-EINVAL,
				  nvx_ioctl(self->fd,
					    nvx_ioc_resize(ioc[i].cmd, sz), &u))
				TH_LOG("%s size %zu", ioc[i].name, sz);
		}
	}
	/* still registered, the entry still there */
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(2));
}

/*
 * A struct larger than the kernel knows is fine when the extra bytes are
 * zero, and -E2BIG when they are not (nvx.h's ABI rules).
 */
TEST_F(uintr, larger_structs)
{
	struct {
		struct nvx_uintr_register r;
		uint64_t future[2];
	} reg;
	struct {
		struct nvx_uintr_vector_fd v;
		uint64_t future[2];
	} vec;
	unsigned long reg_cmd = nvx_ioc_resize(NVX_IOC_UINTR_REGISTER,
					       sizeof(reg));
	unsigned long vec_cmd = nvx_ioc_resize(NVX_IOC_UINTR_VECTOR_FD,
					       sizeof(vec));

	memset(&reg, 0, sizeof(reg));
	reg.r.handler = (uintptr_t)trap_entry;
	reg.future[1] = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd, reg_cmd, &reg));
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));
	reg.future[1] = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, reg_cmd, &reg));
	EXPECT_LE(0, reg.r.fd);
	EXPECT_EQ(0ULL, reg.future[0] | reg.future[1]);

	memset(&vec, 0, sizeof(vec));
	vec.v.vector = 1;
	ASSERT_EQ(0, nvx_ioctl(self->fd, vec_cmd, &vec));
	EXPECT_LE(0, vec.v.fd);
	EXPECT_EQ(0ULL, vec.future[0] | vec.future[1]);
	close(vec.v.fd);
	memset(&vec, 0, sizeof(vec));
	vec.v.vector = 1;
	vec.future[0] = 1ULL << 63;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd, vec_cmd, &vec));

	EXPECT_EQ(0, do_unregister_raw(self->fd));
	close(reg.r.fd);
}

TEST_F(uintr, vector_out_of_range_is_einval)
{
	int vfd;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS));
	EXPECT_EQ(-EINVAL, nvx_uintr_vector_fd(self->fd, UINT32_MAX));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, NVX_UINTR_VECTORS, MS, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, UINT32_MAX, MS, 0));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGUSR1, NVX_UINTR_VECTORS));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGUSR1, UINT32_MAX));
	vfd = nvx_uintr_vector_fd(self->fd, 0);
	EXPECT_LE(0, vfd);
	close(vfd);
	vfd = nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS - 1);
	EXPECT_LE(0, vfd);
	close(vfd);
	EXPECT_EQ(0ULL, handled());
}

static void expect_unregistered(struct __test_metadata *_metadata, int fd)
{
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(fd, 0));
	EXPECT_EQ(-ENOENT, do_wait(fd, 0));
	EXPECT_EQ(-ENOENT, do_timer(fd, 0, MS, 0));
	EXPECT_EQ(-ENOENT, do_signal(fd, SIGUSR1, 0));
	EXPECT_EQ(-ENOENT, do_unregister_raw(fd));
}

/* Per-thread ioctls need a handler: before registering and after. */
TEST_F(uintr, unregistered_is_enoent)
{
	expect_unregistered(_metadata, self->fd);
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_unregister(self->fd));
	expect_unregistered(_metadata, self->fd);
}

/*
 * Registration belongs to the thread: another thread of the process
 * starts without one, can register its own, and its vectors reach it.
 */
TEST_F(uintr, registration_is_per_thread)
{
	struct waiter w = { .fd = self->fd, .cpu = -1, .vector = 4, .want = 1 };
	int idx;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	waiter_send_join(_metadata, self->fd, &w);
	EXPECT_EQ(-ENOENT, w.unregistered_err);
	EXPECT_LE(0, w.rfd);
	EXPECT_EQ(1ULL, handled_vec(4));
	EXPECT_EQ(w.tid, rec.tid);

	/* and this thread's registration was not touched */
	idx = do_vector(self->fd, 4, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(2ULL, handled_vec(4));
	EXPECT_EQ(my_tid, rec.tid);
}

/* Out of fds: -EMFILE, and nothing left behind. */
TEST_F(uintr, out_of_fds_is_emfile)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	struct rlimit old, low;
	int lowest;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	lowest = fcntl(self->fd, F_DUPFD, 0);
	ASSERT_LE(0, lowest);
	close(lowest);
	low = old;
	low.rlim_cur = lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	lowest = fcntl(self->fd, F_DUPFD, 0);
	ASSERT_LE(0, lowest);
	close(lowest);
	low.rlim_cur = lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, nvx_uintr_vector_fd(self->fd, 0));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	EXPECT_LE(0, nvx_uintr_vector_fd(self->fd, 0));
}

/*
 * REGISTER with its argument struct in a read-only page: -EFAULT, and
 * the thread is not registered, so the next REGISTER with a writable
 * struct succeeds. Before the dispatcher checked that the struct takes
 * the result, the thread stayed registered without a receiver fd and
 * that REGISTER got -EBUSY.
 */
TEST_F(uintr, readonly_arg_registers_nothing)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_uintr_register *ro, r;

	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->handler = (uintptr_t)trap_entry;
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, ro));
	expect_unregistered(_metadata, self->fd);

	memset(&r, 0, sizeof(r));
	r.handler = (uintptr_t)trap_entry;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	EXPECT_LE(0, r.fd);
	EXPECT_EQ(0, do_unregister_raw(self->fd));
	close(r.fd);
	munmap(ro, pg);
}

TEST_HARNESS_MAIN
