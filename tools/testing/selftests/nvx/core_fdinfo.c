// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/fdinfo/N of every kind of nvx fd says what the object is and
 * its state: a grant, an endpoint, a channel, a user-interrupt receiver
 * and vector, a shared-RX-queue set. Each test makes one object of a
 * kind, reads its fdinfo and checks the lines against what it knows of
 * the object. A kind whose capability this kernel lacks is skipped.
 */
#define _GNU_SOURCE
#include <linux/kvm.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nvx/nvx.h>
#include <nvx/pool.h>
#include <nvx/srq.h>
#include <nvx/uintr.h>
#include <nvx/uvm.h>

#include "nvx_fixture.h"

#define PIECE	(1ULL << NVX_POOL_PIECE_SHIFT)

static int fdinfo_is(int fd, const char *object)
{
	char v[128];

	return !fdinfo_get(fd, "nvx-object", v, sizeof(v)) && !strcmp(v, object);
}

FIXTURE(fdinfo) {
	int fd;
	__u64 grown;
};

FIXTURE_SETUP(fdinfo)
{
	self->grown = 0;
	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_POOL))
		SKIP(return, "no NVX_FEAT_POOL: not in this kernel");
}

FIXTURE_TEARDOWN(fdinfo)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY };

	if (self->grown) {
		r.bytes = self->grown;
		nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r);
	}
	close(self->fd);
}

/*
 * A grant of @bytes, the pool grown by as much first (added to *@grown);
 * its fd or -errno.
 */
static int grant(int fd, __u64 *grown, __u64 bytes)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY, .bytes = bytes };
	struct nvx_grant_create g = { .node = NVX_NODE_ANY, .bytes = bytes };
	int ret;

	ret = nvx_ioctl(fd, NVX_IOC_POOL_GROW, &r);
	*grown += r.done;
	if (ret)
		return ret;
	ret = nvx_ioctl(fd, NVX_IOC_GRANT, &g);
	return ret ? ret : g.fd;
}

TEST_F(fdinfo, grant)
{
	int g = grant(self->fd, &self->grown, 2 * PIECE);

	ASSERT_LE(0, g);
	EXPECT_TRUE(fdinfo_is(g, "grant"));
	EXPECT_EQ(2 * PIECE, fdinfo_num(g, "bytes"));
	EXPECT_EQ(2, fdinfo_num(g, "pieces"));
	EXPECT_EQ(PIECE, fdinfo_num(g, "piece_bytes"));
	EXPECT_LE(0, fdinfo_num(g, "node"));
	/* /dev/nvx itself is not an nvx object */
	EXPECT_FALSE(fdinfo_is(self->fd, "grant"));
	close(g);
}

TEST_F(fdinfo, endpoint_and_channel)
{
	struct nvx_uvm_endpoint e = { .max_vms = 3 };
	struct nvx_uvm_attach a = {
		.irq_fd = -1, .ctrl_gpa = 0, .sq_gpa = 0x1000, .cq_gpa = 0x2000,
	};
	int kvm, vm, g;

	if (!nvx_has_feature(self->fd, NVX_FEAT_UVM))
		SKIP(return, "no NVX_FEAT_UVM: nvx_uvm not loaded");
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UVM_ENDPOINT, &e));
	EXPECT_TRUE(fdinfo_is(e.fd, "uvm-endpoint"));
	EXPECT_EQ(e.ep_id, fdinfo_num(e.fd, "ep_id"));
	EXPECT_EQ(3, fdinfo_num(e.fd, "max_vms"));
	EXPECT_EQ(0, fdinfo_num(e.fd, "vms"));
	EXPECT_EQ(0, fdinfo_num(e.fd, "msgs_in"));

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		close(e.fd);
		SKIP(return, "no /dev/kvm");
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	ASSERT_LE(0, vm);
	g = grant(self->fd, &self->grown, PIECE);
	ASSERT_LE(0, g);
	a.vm_fd = vm;
	a.grant_fd = g;
	a.ep_fd = e.fd;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UVM_ATTACH, &a));
	EXPECT_TRUE(fdinfo_is(a.fd, "uvm-channel"));
	EXPECT_EQ(a.vm_id, fdinfo_num(a.fd, "vm_id"));
	EXPECT_EQ(e.ep_id, fdinfo_num(a.fd, "endpoint"));
	EXPECT_EQ(PIECE, fdinfo_num(a.fd, "mem_size"));
	EXPECT_EQ(1, fdinfo_num(a.fd, "fast_path"));
	EXPECT_EQ(0, fdinfo_num(a.fd, "reason"));
	EXPECT_EQ(0, fdinfo_num(a.fd, "doorbells"));
	/* the endpoint counts it */
	EXPECT_EQ(1, fdinfo_num(e.fd, "vms"));
	EXPECT_EQ(1, fdinfo_num(e.fd, "attached"));
	close(a.fd);
	EXPECT_EQ(0, fdinfo_num(e.fd, "vms"));
	close(g);
	close(vm);
	close(kvm);
	close(e.fd);
}

static void handler(void)
{
}

TEST_F(fdinfo, uintr_receiver_and_vector)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)handler };
	struct nvx_uintr_vector_fd v = { .vector = 5 };
	struct nvx_uintr_unregister u = { 0 };

	if (!nvx_has_feature(self->fd, NVX_FEAT_UINTR))
		SKIP(return, "no NVX_FEAT_UINTR");
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_VECTOR_FD, &v));
	EXPECT_TRUE(fdinfo_is(r.fd, "uintr-receiver"));
	EXPECT_EQ(sys_gettid(), fdinfo_num(r.fd, "tid"));
	EXPECT_EQ(1, fdinfo_num(r.fd, "registered"));
	EXPECT_EQ(0, fdinfo_num(r.fd, "delivered"));
	EXPECT_TRUE(fdinfo_is(v.fd, "uintr-vector"));
	EXPECT_EQ(5, fdinfo_num(v.fd, "vector"));
	EXPECT_EQ(sys_gettid(), fdinfo_num(v.fd, "receiver_tid"));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_UNREGISTER, &u));
	/* the fds outlive the registration and say so */
	EXPECT_EQ(0, fdinfo_num(r.fd, "registered"));
	EXPECT_EQ(0, fdinfo_num(v.fd, "receiver_registered"));
	close(v.fd);
	close(r.fd);
}

TEST_F(fdinfo, srq_set)
{
	struct nvx_srq_create c = { 0 };
	unsigned int ifindex;

	if (!nvx_has_feature(self->fd, NVX_FEAT_SRQ))
		SKIP(return, "no NVX_FEAT_SRQ: nvx_srq not loaded");
	system("ip link del nvxfdi0 2>/dev/null");
	if (system("ip link add nvxfdi0 type nvxsim 2>/dev/null"))
		SKIP(return, "no nvxsim link type: nvxsim not loaded");
	ifindex = if_nametoindex("nvxfdi0");
	ASSERT_NE(0, ifindex);
	c.grant_fd = grant(self->fd, &self->grown, PIECE);
	ASSERT_LE(0, c.grant_fd);
	c.ifindex = ifindex;
	c.params.nr_queues = 2;
	c.params.nr_bufs = 64;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_CREATE, &c));
	EXPECT_TRUE(fdinfo_is(c.fd, "srq-set"));
	EXPECT_EQ(ifindex, fdinfo_num(c.fd, "ifindex"));
	EXPECT_EQ(2, fdinfo_num(c.fd, "queues"));
	EXPECT_EQ(64, fdinfo_num(c.fd, "bufs"));
	EXPECT_EQ(c.params.buf_size, fdinfo_num(c.fd, "buf_size"));
	EXPECT_EQ(0, fdinfo_num(c.fd, "rx_packets"));
	EXPECT_EQ(64, fdinfo_num(c.fd, "bufs_posted"));
	close(c.fd);
	close(c.grant_fd);
	system("ip link del nvxfdi0");
}

/* The first line of @path that starts with @prefix, into @line: 0 or -1. */
static int file_line(const char *path, const char *prefix, char *line,
		     size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, len, f)) {
		if (!strncmp(line, prefix, strlen(prefix))) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Each capability has its debugfs directory below nvx/. */
TEST_F(fdinfo, debugfs_directories)
{
	const char *dbg = "/sys/kernel/debug/nvx";
	char path[128], line[256];

	if (access(dbg, R_OK))
		SKIP(return, "no debugfs at /sys/kernel/debug");
	snprintf(path, sizeof(path), "%s/pool/stats", dbg);
	EXPECT_EQ(0, file_line(path, "piece_bytes ", line, sizeof(line)));
	EXPECT_EQ(PIECE, strtoull(line + strlen("piece_bytes "), NULL, 0));
	if (nvx_has_feature(self->fd, NVX_FEAT_UINTR)) {
		snprintf(path, sizeof(path), "%s/uintr/stats", dbg);
		EXPECT_EQ(0, file_line(path, "receivers ", line, sizeof(line)));
	}
	if (nvx_has_feature(self->fd, NVX_FEAT_UVM)) {
		snprintf(path, sizeof(path), "%s/uvm/stats", dbg);
		EXPECT_EQ(0, file_line(path, "channels ", line, sizeof(line)));
	}
	if (nvx_has_feature(self->fd, NVX_FEAT_SRQ) &&
	    !access("/sys/module/nvxsim", F_OK)) {
		snprintf(path, sizeof(path), "%s/srq/backends", dbg);
		EXPECT_EQ(0, file_line(path, "nvxsim", line, sizeof(line)));
	}
}

TEST_HARNESS_MAIN
