// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": a grant as a KVM memslot.
 */
#include "pool_fixture.h"

static void kick_vcpu(int sig)
{
	/* KVM_RUN returns -EINTR */
}

static const unsigned char guest_code[] = {
	0xc6, 0x06, 0x00, 0x20, 0x99,	/* movb $0x99, (0x2000) */
	0xb0, 0x42,			/* mov  $0x42, %al */
	0xe6, 0x10,			/* out  %al, $0x10 */
	0xe6, 0x11,			/* out  %al, $0x11 */
	0xeb, 0xfe,			/* jmp  . */
};

/* The guest's code at 0x1000, and 0 where it writes. */
static void prepare_guest(unsigned char *mem)
{
	memset(mem, 0, 0x3000);
	memcpy(mem + 0x1000, guest_code, sizeof(guest_code));
}

/*
 * Run a real-mode guest whose RAM is @mem (prepare_guest(); no hlt: its
 * intercept is not reliable under nested SVM on TCG) until it has made
 * both of its port writes: 0, or -ETIMEDOUT if it did not get there
 * within 30 s, or -errno when KVM refused. On a timeout, it logs where
 * the guest was.
 */
static int run_guest_in(struct __test_metadata *_metadata, int kvm,
			unsigned char *mem, size_t len)
{
	struct kvm_userspace_memory_region mr = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs = { 0 };
	struct kvm_run *run = MAP_FAILED;
	int vm, vcpu = -1, runsz = 0, ret = -EIO, i;

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
static void guest_in_grant(struct __test_metadata *_metadata, int fd,
			   size_t len, uint32_t flags, bool clone)
{
	struct sigaction sa = { .sa_handler = kick_vcpu };
	struct nvx_grant_clone cl = { .flags = NVX_CLONE_CLOEXEC };
	struct nvx_grant_seal seal = {};
	unsigned char *mem, *anon, *tmem = NULL;
	int kvm, g, t = -1, ret = -ETIMEDOUT, ctl, attempt;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		SKIP(return, "/dev/kvm missing: no hardware virtualisation");
	g = grant(fd, len, flags, NULL);
	ASSERT_LE(0, g);
	mem = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, mem);
	prepare_guest(mem);
	if (clone) {
		/* the guest runs in a clone: its writes are copies */
		mem[0x2000] = 0xab;
		munmap(mem, len);
		ASSERT_EQ(0, nvx_ioctl(g, NVX_GRANT_IOC_SEAL, &seal));
		ASSERT_EQ(0, nvx_ioctl(g, NVX_GRANT_IOC_CLONE, &cl));
		t = g;
		g = cl.fd;
		tmem = mmap(NULL, len, PROT_READ, MAP_SHARED, t, 0);
		ASSERT_NE(MAP_FAILED, tmem);
		mem = map_grant(g, len);
		ASSERT_NE(MAP_FAILED, mem);
	}
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));

	for (attempt = 1; attempt <= 2 && ret == -ETIMEDOUT; attempt++) {
		ret = run_guest_in(_metadata, kvm, mem, len);
		if (ret == -ETIMEDOUT)
			TH_LOG("attempt %d: the guest did not exit in 30 s",
			       attempt);
		if (ret == -ETIMEDOUT && !clone)
			prepare_guest(mem);
	}
	if (ret == -ETIMEDOUT) {
		anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, anon);
		prepare_guest(anon);
		ctl = run_guest_in(_metadata, kvm, anon, len);
		munmap(anon, len);
		if (ctl == -ETIMEDOUT) {
			munmap(mem, len);
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
	if (clone) {
		/* through KVM's write fault: a copy, the template unchanged */
		EXPECT_EQ(0xab, tmem[0x2000]);
		EXPECT_EQ(1, fdinfo_num(g, "copied_pages"));
		munmap(tmem, len);
		close(t);
	}

	munmap(mem, len);
	close(g);
	close(kvm);
}

POOL_TEST(kvm_memslot_runs_guest)
{
	guest_in_grant(_metadata, self->fd, CHUNK, 0, false);
}

/* The same in a grant of four 64 KiB blocks, mapped page by page. */
POOL_TEST(kvm_memslot_in_blocks)
{
	guest_in_grant(_metadata, self->fd, 4 * BLOCK, NVX_GRANT_BLOCKS, false);
}

/*
 * A clone of a template holding the guest backs the memslot: the guest's
 * write goes through KVM's write fault into a copy of the page; the
 * template is unchanged.
 */
POOL_TEST(kvm_memslot_in_clone)
{
	guest_in_grant(_metadata, self->fd, CHUNK, 0, true);
}

TEST_HARNESS_MAIN
