// SPDX-License-Identifier: GPL-2.0
/*
 * The mlx5 backend without a NIC: nvx_mlx5 loads against mlx5_core on a
 * machine without any ConnectX device, registers its auxiliary driver and
 * binds nothing (no device, no nvxmlx netdev), and unloads; its KUnit
 * suites (nvx_mlx5_test: command inputs read back with MLX5_GET, CQEs in
 * mainline's layout, capability checks, ring arithmetic) all pass.
 *
 * The modules are found under $NVX_KB (the kernel build directory, set
 * by the test VM's init); skipped when they were not built.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nvx_fixture.h"

#define DIMLIB_KO	"lib/dim/dimlib.ko"	/* mlx5_core needs it */
#define MLX5_CORE_KO	"drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko"
#define NVX_MLX5_KO	"drivers/net/mlx5-shared-rq/nvx_mlx5.ko"
#define NVX_MLX5_TEST_KO "drivers/net/mlx5-shared-rq/nvx_mlx5_test.ko"
#define AUX_DRIVER	"/sys/bus/auxiliary/drivers/nvx_mlx5.srq"
#define KUNIT_DIR	"/sys/kernel/debug/kunit"

/* The suites and the cases each must have run (mlx5_test.c). */
static const struct {
	const char *name;
	int cases;
} suites[] = {
	{ "nvx_mlx5_geom", 12 },
	{ "nvx_mlx5_cmd", 17 },
	{ "nvx_mlx5_rx", 17 },
};

static void ko_path(char *buf, size_t len, const char *ko)
{
	snprintf(buf, len, "%s/%s", getenv("NVX_KB") ?: ".", ko);
}

static int is_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) == 0;
}

/* The modules this program loaded: the teardown unloads only those. */
static const char *loaded_here[8];
static unsigned int nr_loaded_here;

/* 0 or -errno; loading a loaded module is 0 */
static int ko_load(const char *name, const char *ko)
{
	char path[512];
	int fd, ret;

	if (is_loaded(name))
		return 0;
	ko_path(path, sizeof(path), ko);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	if (!ret && nr_loaded_here < ARRAY_SIZE(loaded_here))
		loaded_here[nr_loaded_here++] = name;
	return ret;
}

static int ko_unload(const char *name)
{
	if (!is_loaded(name))
		return 0;
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* Entries of @dir that are devices bound to the driver (symlinks). */
static int bound_devices(const char *dir)
{
	struct dirent *d;
	int n = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return -errno;
	while ((d = readdir(dp)))
		if (d->d_type == DT_LNK && strcmp(d->d_name, "module"))
			n++;
	closedir(dp);
	return n;
}

static int nvxmlx_netdevs(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dp;

	dp = opendir("/sys/class/net");
	if (!dp)
		return -errno;
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, "nvxmlx", 6))
			n++;
	closedir(dp);
	return n;
}

FIXTURE(mlx5) {
	int unused;
};

FIXTURE_SETUP(mlx5)
{
	nr_loaded_here = 0;
	static const char * const kos[] = {
		DIMLIB_KO, MLX5_CORE_KO, NVX_MLX5_KO, NVX_MLX5_TEST_KO,
	};
	char path[512];
	unsigned int i;

	if (!is_loaded("nvx_srq"))
		SKIP(return, "nvx_srq not loaded");
	for (i = 0; i < ARRAY_SIZE(kos); i++) {
		ko_path(path, sizeof(path), kos[i]);
		if (access(path, R_OK))
			SKIP(return, "%s not built ($NVX_KB)", path);
	}
}

FIXTURE_TEARDOWN(mlx5)
{
	/* in reverse order, only what this test loaded */
	while (nr_loaded_here)
		ko_unload(loaded_here[--nr_loaded_here]);
}

/*
 * Loads, registers its driver, binds nothing, unloads. On a machine with
 * a ConnectX (mlx5_core already loaded, a device present) it skips: it
 * would not unload mlx5_core there.
 */
TEST_F(mlx5, loads_without_a_nic_and_binds_nothing)
{
	if (is_loaded("mlx5_core"))
		SKIP(return, "mlx5_core is loaded: a machine with an mlx5 NIC");
	ASSERT_EQ(0, ko_load("dimlib", DIMLIB_KO));
	ASSERT_EQ(0, ko_load("mlx5_core", MLX5_CORE_KO));
	ASSERT_EQ(0, ko_load("nvx_mlx5", NVX_MLX5_KO));
	ASSERT_EQ(0, access(AUX_DRIVER, F_OK))
		TH_LOG("%s: %s", AUX_DRIVER, strerror(errno));
	EXPECT_EQ(0, bound_devices(AUX_DRIVER));
	EXPECT_EQ(0, nvxmlx_netdevs());
	/* nvx_srq is held by the backend while it is loaded */
	EXPECT_EQ(-EWOULDBLOCK, ko_unload("nvx_srq"));
	EXPECT_EQ(0, ko_unload("nvx_mlx5"));
	EXPECT_NE(0, access(AUX_DRIVER, F_OK));
	EXPECT_EQ(0, ko_unload("mlx5_core"));
	EXPECT_FALSE(is_loaded("mlx5_core"));
	EXPECT_TRUE(is_loaded("nvx_srq"));
}

/*
 * Reads one suite's KTAP results: every case line counted, "not ok"
 * lines printed. Returns the cases that passed; *failed gets the rest.
 */
static int suite_results(struct __test_metadata *_metadata,
			 const char *suite, int *failed)
{
	char path[256], line[512];
	int ok = 0;
	FILE *f;

	*failed = 0;
	snprintf(path, sizeof(path), KUNIT_DIR "/%s/results", suite);
	f = fopen(path, "r");
	if (!f) {
		TH_LOG("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");

		line[strcspn(line, "\n")] = 0;

		/* case lines are indented; the suite's own line is not */
		if (p == line)
			continue;
		if (!strncmp(p, "ok ", 3)) {
			if (strstr(p, "# SKIP")) {
				TH_LOG("%s: skipped: %s", suite, p);
				(*failed)++;
			} else {
				ok++;
			}
		} else if (!strncmp(p, "not ok ", 7)) {
			TH_LOG("%s: %s", suite, p);
			(*failed)++;
		} else if (strstr(p, "Expected") || strstr(p, "ASSERT") ||
			   strstr(p, "EXPECT")) {
			TH_LOG("%s: %s", suite, p);
		}
	}
	fclose(f);
	return ok;
}

/*
 * The KUnit suites run at load and all pass: 46 cases. (Loading a KUnit
 * module taints the kernel with TAINT_TEST.)
 */
TEST_F(mlx5, kunit_suites_pass)
{
	int total = 0, ok, failed;
	unsigned int i;

	ASSERT_EQ(0, ko_load("dimlib", DIMLIB_KO));
	ASSERT_EQ(0, ko_load("mlx5_core", MLX5_CORE_KO));
	ASSERT_EQ(0, ko_load("nvx_mlx5", NVX_MLX5_KO));
	ASSERT_EQ(0, ko_load("nvx_mlx5_test", NVX_MLX5_TEST_KO));
	for (i = 0; i < ARRAY_SIZE(suites); i++) {
		ok = suite_results(_metadata, suites[i].name, &failed);
		EXPECT_EQ(suites[i].cases, ok) TH_LOG("suite %s", suites[i].name);
		EXPECT_EQ(0, failed) TH_LOG("suite %s", suites[i].name);
		total += ok;
	}
	TH_LOG("%d KUnit cases passed", total);
	EXPECT_GE(total, 30);
	EXPECT_EQ(0, ko_unload("nvx_mlx5_test"));
	/* the results go with the module */
	EXPECT_NE(0, access(KUNIT_DIR "/nvx_mlx5_geom", F_OK));
}

TEST_HARNESS_MAIN
