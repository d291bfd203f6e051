// SPDX-License-Identifier: GPL-2.0
/*
 * nvx as modules: nvx (core, pool), nvx_uvm, nvx_srq and nvxsim each
 * load and unload on their own, in dependency order; a module whose
 * objects are open cannot be unloaded (its files hold it: -EWOULDBLOCK,
 * as for any module in use), and unloads once they are closed; a
 * capability's feature bit comes and goes with its module. Skipped when
 * nvx is built into the kernel. Every test puts all modules back.
 *
 * The modules are found under $NVX_KB (the kernel build directory, set
 * by the test VM's init).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvx/nvx.h>
#include <nvx/pool.h>
#include <nvx/srq.h>
#include <nvx/uvm.h>

#include "nvx_fixture.h"

struct nvx_mod {
	const char *name;
	const char *path;	/* under $NVX_KB */
	__u64 feature;
};

/* In load order. */
static const struct nvx_mod mods[] = {
	{ "nvx", "kernel/nvx/nvx.ko", NVX_FEAT_POOL },
	{ "nvx_uvm", "kernel/nvx/uvm/nvx_uvm.ko", NVX_FEAT_UVM },
	{ "nvx_srq", "drivers/net/mlx5-shared-rq/nvx_srq.ko", NVX_FEAT_SRQ },
	{ "nvxsim", "drivers/net/mlx5-shared-rq/nvxsim.ko", 0 },
};

static int loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) == 0;
}

/* 0 or -errno */
static int mod_load(const struct nvx_mod *m)
{
	const char *kb = getenv("NVX_KB");
	char path[512];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", kb ? kb : ".", m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int mod_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* Load every module that is not loaded, in order. */
static void load_all(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mods); i++)
		if (!loaded(mods[i].name))
			mod_load(&mods[i]);
}

static __u64 features(void)
{
	struct nvx_features f = { 0 };
	int fd = nvx_open();

	if (fd < 0)
		return 0;
	nvx_ioctl(fd, NVX_IOC_FEATURES, &f);
	close(fd);
	return f.features;
}

FIXTURE(modules) {
	int unused;
};

FIXTURE_SETUP(modules)
{
	unsigned int i;

	if (!loaded("nvx"))
		SKIP(return, "nvx is built in (or not loaded): nothing to unload");
	for (i = 0; i < ARRAY_SIZE(mods); i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s",
			 getenv("NVX_KB") ?: ".", mods[i].path);
		if (access(path, R_OK))
			SKIP(return, "%s not found ($NVX_KB)", path);
	}
}

FIXTURE_TEARDOWN(modules)
{
	load_all();
}

/* Unload all in reverse order, load all in order; features follow. */
TEST_F(modules, unload_and_load_in_order)
{
	int i;

	load_all();
	for (i = ARRAY_SIZE(mods) - 1; i >= 0; i--) {
		ASSERT_EQ(0, mod_unload(mods[i].name))
			TH_LOG("rmmod %s", mods[i].name);
		EXPECT_FALSE(loaded(mods[i].name));
		if (i > 0 && mods[i].feature)
			EXPECT_EQ(0, features() & mods[i].feature);
	}
	EXPECT_NE(0, access(NVX_DEV, F_OK));
	for (i = 0; i < (int)ARRAY_SIZE(mods); i++) {
		ASSERT_EQ(0, mod_load(&mods[i])) TH_LOG("insmod %s",
							mods[i].name);
		if (mods[i].feature)
			EXPECT_EQ(mods[i].feature,
				  features() & mods[i].feature);
	}
	EXPECT_EQ(0, access(NVX_DEV, F_OK));
}

/* A module others use cannot go; one that needs another cannot come. */
TEST_F(modules, dependencies)
{
	load_all();
	EXPECT_EQ(-EWOULDBLOCK, mod_unload("nvx"));
	EXPECT_EQ(-EWOULDBLOCK, mod_unload("nvx_srq"));
	ASSERT_EQ(0, mod_unload("nvxsim"));
	ASSERT_EQ(0, mod_unload("nvx_srq"));
	ASSERT_EQ(0, mod_unload("nvx_uvm"));
	ASSERT_EQ(0, mod_unload("nvx"));
	/* nvx_uvm and nvx_srq need nvx's symbols */
	EXPECT_EQ(-ENOENT, mod_load(&mods[1]));
	EXPECT_EQ(-ENOENT, mod_load(&mods[2]));
	EXPECT_FALSE(loaded("nvx_uvm"));
}

/* Open objects hold their modules; closed, the modules go. */
TEST_F(modules, open_objects_hold_their_module)
{
	struct nvx_uvm_endpoint e = { 0 };
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY, .bytes = 2 << 20 };
	struct nvx_grant_create g = { .node = NVX_NODE_ANY, .bytes = 2 << 20 };
	struct nvx_srq_create c = { 0 };
	int fd;

	load_all();
	fd = nvx_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_UVM_ENDPOINT, &e));
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_POOL_GROW, &r));
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_GRANT, &g));
	system("ip link del nvxmod0 2>/dev/null");
	ASSERT_EQ(0, system("ip link add nvxmod0 type nvxsim"));
	c.ifindex = if_nametoindex("nvxmod0");
	c.grant_fd = g.fd;
	c.params.nr_queues = 1;
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_SRQ_CREATE, &c));
	close(fd);

	/* the endpoint holds nvx_uvm, the set nvx_srq and nvxsim */
	EXPECT_EQ(-EWOULDBLOCK, mod_unload("nvx_uvm"));
	EXPECT_EQ(-EWOULDBLOCK, mod_unload("nvxsim"));
	EXPECT_TRUE(loaded("nvx_uvm"));
	EXPECT_TRUE(loaded("nvxsim"));
	/* the objects still work */
	fd = nvx_open();
	ASSERT_LE(0, fd);
	EXPECT_NE(0, nvx_has_feature(fd, NVX_FEAT_UVM));
	close(fd);

	close(e.fd);
	EXPECT_EQ(0, mod_unload("nvx_uvm"));
	close(c.fd);
	/* the set's release detached it: nvxsim goes, and its NIC with it */
	EXPECT_EQ(0, mod_unload("nvxsim"));
	EXPECT_EQ(0u, if_nametoindex("nvxmod0"));
	/* the grant holds the core */
	EXPECT_EQ(0, mod_unload("nvx_srq"));
	EXPECT_EQ(-EWOULDBLOCK, mod_unload("nvx"));
	close(g.fd);
	EXPECT_EQ(0, mod_unload("nvx"));
}

TEST_HARNESS_MAIN
