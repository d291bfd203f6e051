// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "core": /dev/nvx, the version and feature ioctls,
 * the extensible-struct rules every nvx ioctl follows, and bad input.
 */
#include <cpuid.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "nvx_test.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	/* These tests run on nvx kernels: no device is a failure, not a skip. */
	self->fd = nvx_open();
	ASSERT_LE(0, self->fd) TH_LOG("open " NVX_DEV ": %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, is_char_device_mode_0660)
{
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0660u, st.st_mode & 07777);
	EXPECT_EQ(0u, st.st_uid);
	EXPECT_EQ(0u, st.st_gid);
}

TEST_F(dev, version)
{
	struct nvx_version v = { 0 };
	struct utsname u;
	unsigned int maj, min, sub;
	int n;

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_VERSION, &v));
	EXPECT_EQ(NVX_ABI_MAJOR, v.abi_major);
	EXPECT_LE(NVX_ABI_MINOR, v.abi_minor);
	EXPECT_EQ(0u, v.reserved);
	EXPECT_EQ(0u, v.reserved2);

	ASSERT_EQ(0, uname(&u));
	n = sscanf(u.release, "%u.%u.%u", &maj, &min, &sub);
	ASSERT_EQ(3, n);
	EXPECT_EQ(maj, v.kernel_version >> 16);
	EXPECT_EQ(min, (v.kernel_version >> 8) & 0xff);
	EXPECT_EQ(sub > 255 ? 255 : sub, v.kernel_version & 0xff);
}

/* Does /proc/cpuinfo list @flag for the first CPU? */
static int cpuinfo_has(const char *flag)
{
	char line[8192], *p, *tok;
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		p = strchr(line, ':');
		for (tok = strtok(p ? p + 1 : line, "\n "); tok;
		     tok = strtok(NULL, "\n "))
			if (!strcmp(tok, flag))
				found = 1;
		break;
	}
	fclose(f);
	return found;
}

TEST_F(dev, features)
{
	struct nvx_features f = { 0 };
	unsigned int eax, ebx, ecx, edx;
	int uintr = 0;

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_FEATURES, &f));
	EXPECT_TRUE(f.features & NVX_FEAT_CORE);

	/* The hardware facts agree with what userspace can read itself. */
	if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
		uintr = !!(edx & (1u << 5));
	EXPECT_EQ(uintr, !!(f.hw & NVX_HW_UINTR));
	EXPECT_EQ(cpuinfo_has("vmx"), !!(f.hw & NVX_HW_VMX));
	EXPECT_EQ(cpuinfo_has("svm"), !!(f.hw & NVX_HW_SVM));
	EXPECT_EQ(cpuinfo_has("hypervisor"), !!(f.hw & NVX_HW_HYPERVISOR));
	TH_LOG("features %#llx hw %#llx", (unsigned long long)f.features,
	       (unsigned long long)f.hw);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	char buf[64] = { 0 };

	/* unused numbers in nvx's range, in every direction */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, _IO(NVX_IOC_MAGIC, 0x0f), buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0xff, buf),
				     buf));
	/* a known number with the wrong direction is another ioctl */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd,
				     _IOR(NVX_IOC_MAGIC, 0x00, struct nvx_version),
				     buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, _IO(NVX_IOC_MAGIC, 0x00), buf));
	/* another subsystem's magic */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, _IOWR('T', 0x01, int), buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, TCGETS, buf));
}

TEST_F(dev, unknown_flags_are_einval)
{
	struct nvx_version v;
	struct nvx_features f;
	int bit;

	for (bit = 0; bit < 32; bit++) {
		memset(&v, 0, sizeof(v));
		v.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_VERSION, &v));
		memset(&f, 0, sizeof(f));
		f.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_FEATURES, &f));
	}
}

TEST_F(dev, nonzero_reserved_is_einval)
{
	struct nvx_version v = { .reserved2 = 1 };
	struct nvx_features f = { .reserved = 0x80000000u };

	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_VERSION, &v));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_FEATURES, &f));
}

TEST_F(dev, struct_smaller_than_v0_is_einval)
{
	char buf[sizeof(struct nvx_features)] = { 0 };
	size_t sz;

	for (sz = 0; sz < sizeof(struct nvx_version); sz++)
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_VERSION, sz), buf));
	for (sz = 0; sz < sizeof(struct nvx_features); sz++)
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_FEATURES, sz), buf));
}

/*
 * A caller built against a newer header passes a bigger struct: accepted
 * when the bytes the kernel does not know are zero, and those bytes are
 * left alone; -E2BIG when any of them is set.
 */
TEST_F(dev, struct_larger_than_known)
{
	struct {
		struct nvx_features f;
		uint64_t future[4];
	} big;
	unsigned long cmd = nvx_ioc_resize(NVX_IOC_FEATURES, sizeof(big));

	memset(&big, 0, sizeof(big));
	ASSERT_EQ(0, nvx_ioctl(self->fd, cmd, &big));
	EXPECT_TRUE(big.f.features & NVX_FEAT_CORE);
	EXPECT_EQ(0, big.future[0] | big.future[1] | big.future[2] |
		     big.future[3]);

	memset(&big, 0, sizeof(big));
	big.future[3] = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd, cmd, &big));
}

TEST_F(dev, bad_pointers_are_efault)
{
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_VERSION, NULL));
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_FEATURES, NULL));
	/* a kernel address */
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_FEATURES,
				     (void *)0xffffffff81000000ul));
	/* non-canonical */
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_FEATURES,
				     (void *)0x8000000000000000ul));
}

/* The argument ends one byte into an unmapped page: -EFAULT, no oops. */
TEST_F(dev, struct_crossing_into_unmapped_page)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + pg, pg));
	memset(p, 0, pg);
	EXPECT_EQ(-EFAULT,
		  nvx_ioctl(self->fd, NVX_IOC_FEATURES,
			    p + pg - sizeof(struct nvx_features) + 1));
	/* entirely inside the mapped page: fine */
	EXPECT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_FEATURES,
			       p + pg - sizeof(struct nvx_features)));
	munmap(p, pg);
}

TEST_F(dev, read_write_mmap_seek_rejected)
{
	char buf[16];
	void *m;

	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

TEST(unprivileged_open_is_eacces)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to drop to an unprivileged user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		_exit(nvx_open() == -EACCES ? 0 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

struct hammer {
	atomic_int fd;
	atomic_int stop;
	atomic_long ok, ebadf, other;
};

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	struct nvx_features f;

	while (!atomic_load(&h->stop)) {
		memset(&f, 0, sizeof(f));
		if (ioctl(atomic_load(&h->fd), NVX_IOC_FEATURES, &f) == 0)
			atomic_fetch_add(&h->ok, 1);
		else if (errno == EBADF)
			atomic_fetch_add(&h->ebadf, 1);
		else
			atomic_fetch_add(&h->other, 1);
	}
	return NULL;
}

/* ioctls racing with close and reopen: only success or EBADF. */
TEST(racing_close)
{
	struct hammer h = { 0 };
	pthread_t t[4];
	time_t t0;
	int i, fd;

	fd = nvx_open();
	ASSERT_LE(0, fd);
	atomic_store(&h.fd, fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, hammer_thread, &h));
	/* 500 rounds, or 5 seconds on a slow (emulated, KASAN) machine */
	for (i = 0, t0 = time(NULL); i < 500 && time(NULL) - t0 < 5; i++) {
		close(atomic_load(&h.fd));
		fd = nvx_open();
		ASSERT_LE(0, fd);
		atomic_store(&h.fd, fd);
	}
	atomic_store(&h.stop, 1);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	close(atomic_load(&h.fd));
	TH_LOG("ok %ld ebadf %ld other %ld", atomic_load(&h.ok),
	       atomic_load(&h.ebadf), atomic_load(&h.other));
	EXPECT_LT(0, atomic_load(&h.ok));
	EXPECT_EQ(0, atomic_load(&h.other));
}

/* A descriptor passed to another process works there (SCM_RIGHTS-like). */
TEST(fd_inherited_by_child)
{
	int fd = nvx_open(), status;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_SETFD, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct nvx_version v = { 0 };

		_exit(nvx_ioctl(fd, NVX_IOC_VERSION, &v) == 0 &&
		      v.abi_major == NVX_ABI_MAJOR ? 0 : 1);
	}
	close(fd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Run nvxtool (from PATH) and capture its stdout; return its status. */
static int run_nvxtool(const char *args, char *out, size_t len)
{
	char cmd[256];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nvxtool %s 2>/dev/null", args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < len && !feof(p))
		n += fread(out + n, 1, len - 1 - n, p);
	out[n] = '\0';
	return pclose(p);
}

TEST(nvxtool_features_json_matches_ioctl)
{
	struct nvx_features f = { 0 };
	char out[4096], want[64];
	int fd, st;

	if (system("command -v nvxtool >/dev/null 2>&1"))
		SKIP(return, "nvxtool not on PATH");
	fd = nvx_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_FEATURES, &f));
	close(fd);

	st = run_nvxtool("features --json", out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	snprintf(want, sizeof(want), "\"features\":\"0x%llx\"",
		 (unsigned long long)f.features);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("output: %s", out);
	snprintf(want, sizeof(want), "\"hw\":\"0x%llx\"",
		 (unsigned long long)f.hw);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("output: %s", out);
	EXPECT_NE(NULL, strstr(out, "\"core\":true")) TH_LOG("output: %s", out);
}

TEST(nvxtool_missing_device_exit_code)
{
	char out[256];
	int st;

	if (system("command -v nvxtool >/dev/null 2>&1"))
		SKIP(return, "nvxtool not on PATH");
	st = run_nvxtool("--device /nonexistent/nvx version", out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(3, WEXITSTATUS(st));
	st = run_nvxtool("no-such-command", out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(2, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
