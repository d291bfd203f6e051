// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the confined reference system process.
 *
 * Real guests under `nvxtool uvm run` (nvxtool from PATH, test.img and
 * cat.img from beside this program), or in VMMs of the test served by
 * one `nvxtool uvm serve`, each test with a tenant tree of its own
 * under /tmp: a root (data/hello.txt, sub/, a symbolic link "out" to
 * /etc and one "in" to data/hello.txt) and, outside it, a "secret".
 * Paths resolve beneath the root only (EXDEV, ELOOP for magic links),
 * nothing is created outside it, fds are the VM's own (also against
 * another VM of the same system process), a call the tenant may not
 * make is EPERM, two tenants see only their
 * own files; `nvxtool uvm serve` dies of SIGSYS at a forbidden system
 * call; a bad policy file is a usage error; with --uintr the event loop
 * serves the same calls by user interrupt. test.img prints "err E"
 * (E the positive errno) for a call that failed
 * (Documentation/nvx/uvm-sys.rst has the calls and their errnos).
 */
#include "uvm_fixture.h"
#include "run_util.h"

#include <ftw.h>
#include <sys/mount.h>
#include <sys/resource.h>

#define HELLO_T		"hello from the tenant\n"
#define WAIT_MS		30000	/* for a line of a background nvxtool */
#define HOLD_MS		"3000"	/* foreign_vm_fds: VM A keeps its fd */
#define TREE_LEN	64	/* "/tmp/nvx-sys_confine.XXXXXX" */
#define TPATH_LEN	128	/* a path in the tree (TPATH()) */

#define CALL(t)		(1ULL << NVX_UVM_MSG_##t)
/* the calls of a --root tenant */
#define ROOT_CALLS	(CALL(IPC) | CALL(WRITE) | CALL(READ) | CALL(EXIT) | \
			 CALL(CLOCK) | CALL(READY) | CALL(GETRANDOM) |	\
			 CALL(OPENAT) | CALL(CLOSE) | CALL(PREAD) |	\
			 CALL(LSEEK) | CALL(FSTAT) | CALL(GETDENTS))

static struct run run;
static char test_img[PATH_MAX + 16], cat_img[PATH_MAX + 16];

/*
 * nvxtool uvm run WHO... IMAGE -- ARGS... (@who and ARGS NULL-terminated;
 * @who names the tenant), as run_argv().
 */
static int uvm_run(struct run *r, const char *const *who, const char *image,
		   ...)
{
	char *argv[RUN_ARGS + 1] = { (char *)"nvxtool", (char *)"uvm",
				     (char *)"run" };
	int n = 3;
	va_list ap;

	while (n < RUN_ARGS - 2 && *who)
		argv[n++] = (char *)*who++;
	argv[n++] = (char *)image;
	argv[n++] = (char *)"--";
	va_start(ap, image);
	while (n < RUN_ARGS && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return run_argv(r, argv);
}

/* @r exited with @code, having printed exactly @want (NULL: anything). */
static void expect_run(struct __test_metadata *_metadata, const struct run *r,
		       int code, const char *want)
{
	EXPECT_TRUE(WIFEXITED(r->status) && WEXITSTATUS(r->status) == code)
		TH_LOG("%s: status %#x%s, want exit %d; stdout: '%s'; stderr: '%s'",
		       r->cmd, r->status, r->timed_out ? " (timed out)" : "",
		       code, r->out, r->err);
	if (want)
		EXPECT_STREQ(want, r->out)
			TH_LOG("%s; stderr: '%s'", r->cmd, r->err);
}

/* The guest IMAGE with ARGS, for tenant @who, exits @code printing @want. */
#define GUEST(who, code, want, image, ...) do {				\
	uvm_run(&run, who, image, __VA_ARGS__, NULL);			\
	expect_run(_metadata, &run, code, want);			\
} while (0)

/* test.img MODE ARGS... for tenant @who exits 0 printing @want. */
#define TEST_SAYS(who, want, ...)	GUEST(who, 0, want, test_img, __VA_ARGS__)

/*
 * nvxtool on PATH (else skip) and the images found, as every uvm test's;
 * nvxtool is given their full paths (and $NVX_GUEST_DIR for the rest).
 */
static bool prepare(struct __test_metadata *_metadata, struct env *e)
{
	int ret;

	if (system("command -v nvxtool >/dev/null 2>&1"))
		SKIP(return false, "nvxtool not on PATH");
	snprintf(test_img, sizeof(test_img), "%s/test.img", e->dir);
	snprintf(cat_img, sizeof(cat_img), "%s/cat.img", e->dir);
	ret = access(cat_img, R_OK) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("%s: %s", cat_img, strerror(-ret));
	setenv("NVX_GUEST_DIR", e->dir, 1);
	return !ret;
}

/* ------------------------------------------------------ the trees --- */

/* One test's files: mkdtemp()'s directory, its roots and what is outside. */
struct tree {
	char dir[TREE_LEN];
	char proc[TPATH_LEN + 8];	/* a procfs is mounted here; "" for none */
};

/* @dir/@name, @len bytes at @buf. */
static char *tpath(char *buf, size_t len, const struct tree *t,
		   const char *name)
{
	snprintf(buf, len, "%s/%s", t->dir, name);
	return buf;
}

#define TPATH(buf, t, name)	tpath(buf, sizeof(buf), t, name)

/* @text into file @name beneath @dirfd, mode 0644: 0 or -errno. */
static int put_file(int dirfd, const char *name, const char *text)
{
	size_t len = strlen(text);
	int fd, ret = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fchmod(fd, 0644))
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

/*
 * A tenant root @dir/@name: data/hello.txt (HELLO_T, 0644), sub/ (0755),
 * out -> /etc, in -> data/hello.txt. 0 or -errno.
 */
static int make_root(const struct tree *t, const char *name)
{
	char root[TPATH_LEN];
	int fd, ret = 0;

	if (mkdir(TPATH(root, t, name), 0755) || chmod(root, 0755))
		return -errno;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (mkdirat(fd, "data", 0755) || mkdirat(fd, "sub", 0755) ||
	    fchmodat(fd, "sub", 0755, 0) || symlinkat("/etc", fd, "out") ||
	    symlinkat("data/hello.txt", fd, "in"))
		ret = -errno;
	if (!ret)
		ret = put_file(fd, "data/hello.txt", HELLO_T);
	close(fd);
	return ret;
}

/* The tree: its directory under /tmp and the "secret" outside the roots. */
static int make_tree(struct tree *t)
{
	int fd, ret;

	t->proc[0] = 0;
	snprintf(t->dir, sizeof(t->dir), "/tmp/nvx-sys_confine.XXXXXX");
	if (!mkdtemp(t->dir)) {
		t->dir[0] = 0;
		return -errno;
	}
	fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = put_file(fd, "secret", "the tenant must not read this\n");
	close(fd);
	return ret;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Unmount the procfs, remove the tree (never crossing a mount). */
static void free_tree(struct tree *t)
{
	if (t->proc[0])
		umount2(t->proc, MNT_DETACH);
	t->proc[0] = 0;
	if (t->dir[0])
		nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	t->dir[0] = 0;
}

/*
 * The tree with the roots @names (NULL-terminated). The tests below
 * check with EXPECT only until free_tree(), so that the tree goes
 * whatever fails.
 */
#define TREE(t, ...) do {						\
	static const char *const __names[] = { __VA_ARGS__, NULL };	\
	int __i, __ret = make_tree(t);					\
									\
	for (__i = 0; !__ret && __names[__i]; __i++)			\
		__ret = make_root(t, __names[__i]);			\
	if (__ret)							\
		free_tree(t);						\
	ASSERT_EQ(0, __ret) TH_LOG("making the tree: %s",		\
				   strerror(-__ret));			\
} while (0)

/* The policy file @dir/policy: @text. */
static void write_policy(struct __test_metadata *_metadata,
			 const struct tree *t, char *path, size_t len,
			 const char *text)
{
	int fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	tpath(path, len, t, "policy");
	EXPECT_EQ(0, fd < 0 ? -errno : put_file(fd, "policy", text));
	if (fd >= 0)
		close(fd);
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* File @path holds exactly @want. */
static bool holds(const char *path, const char *want)
{
	char buf[256];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = 0;
	return !strcmp(buf, want);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* How many lines of @s are @name. */
static int count_line(const char *s, const char *name)
{
	size_t len = strlen(name);
	int n = 0;

	for (; *s; s = strchr(s, '\n') + 1) {
		n += !strncmp(s, name, len) && s[len] == '\n';
		if (!strchr(s, '\n'))
			break;
	}
	return n;
}

/* @s has the line @name. */
static bool has_line(const char *s, const char *name)
{
	return count_line(s, name) > 0;
}

/* Where the last line @name of @s starts; NULL if none. */
static const char *last_line(const char *s, const char *name)
{
	size_t len = strlen(name);
	const char *last = NULL;

	for (; *s; s = strchr(s, '\n') + 1) {
		if (!strncmp(s, name, len) && s[len] == '\n')
			last = s;
		if (!strchr(s, '\n'))
			break;
	}
	return last;
}

/*
 * Wait up to @ms for the child @pid of @e->kids (add_kid()) to end,
 * SIGKILL it after that; forget it. Its wait status; -1 if it was
 * killed here.
 */
static int wait_kid(struct env *e, pid_t pid, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	int status = -1, i;
	pid_t got;

	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		usleep(10000);
	if (got != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		status = -1;
	}
	for (i = 0; i < MAX_KIDS; i++)
		if (e->kids[i] == pid)
			e->kids[i] = 0;
	return status;
}

/* ------------------------------------------------------ the tests --- */

/* cat.img reads a file of its root; one it cannot open is ENOENT, exit 1. */
UVM_TEST(cat_reads_file)
{
	char root[TPATH_LEN];
	const char *const who[] = { "--root", root, NULL };
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	GUEST(who, 0, HELLO_T, cat_img, "/data/hello.txt");
	EXPECT_STREQ("", run.err);
	/* a symbolic link inside the root is followed */
	GUEST(who, 0, HELLO_T, cat_img, "/in");
	GUEST(who, 1, "", cat_img, "/nope");
	EXPECT_STREQ("cat: /nope: ENOENT\n", run.err);
	/* "out" leads to /etc: EXDEV (cat names no 18) */
	GUEST(who, 1, "", cat_img, "/out/passwd");
	EXPECT_STREQ("cat: /out/passwd: 18\n", run.err);
	GUEST(who, 1, HELLO_T, cat_img, "/nope", "/data/hello.txt");
	free_tree(&t);
}

/*
 * openat() beneath the root only: an absolute path, ".." above it, a
 * symbolic link out of it are EXDEV; a magic link of a procfs mounted
 * in the root is ELOOP (RESOLVE_NO_MAGICLINKS); path lengths.
 */
UVM_TEST(paths_confined)
{
	char root[TPATH_LEN];
	const char *const who[] = { "--root", root, NULL };
	struct tree t;
	int ret;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	TEST_SAYS(who, "err 18\n", "openat", "-100", "../secret");
	TEST_SAYS(who, "err 18\n", "openat", "-100", "sub/../../secret");
	TEST_SAYS(who, "err 18\n", "openat", "-100", "/etc/passwd");
	TEST_SAYS(who, "err 18\n", "openat", "-100", "out/passwd");
	TEST_SAYS(who, "err 18\n", "openat", "-100", "out");
	TEST_SAYS(who, "fd 3\n", "openat", "-100", "in");
	TEST_SAYS(who, "fd 3\n", "openat", "-100", "sub/../data/hello.txt");
	TEST_SAYS(who, "fd 3\n", "openat", "-100", ".");
	/* O_NOFOLLOW (0x20000) on a symbolic link */
	TEST_SAYS(who, "err 40\n", "openat", "-100", "in", "0x20000");
	TEST_SAYS(who, "err 2\n", "openat", "-100", "nope");

	/* magic links: ELOOP, even where they would stay inside */
	snprintf(t.proc, sizeof(t.proc), "%s/proc", root);
	ret = mkdir(t.proc, 0555) ? -errno : 0;
	if (!ret && mount("proc", t.proc, "proc",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		ret = -errno;
	if (ret)
		t.proc[0] = 0;
	EXPECT_EQ(0, ret) TH_LOG("mounting a procfs in the root: %s",
				 strerror(-ret));
	if (!ret) {
		TEST_SAYS(who, "err 40\n", "openat", "-100",
			  "proc/self/root/etc/passwd");
		TEST_SAYS(who, "err 40\n", "openat", "-100", "proc/self/fd/1");
		TEST_SAYS(who, "err 40\n", "openat", "-100", "proc/self/cwd");
		/* /proc/self is a plain symbolic link: followed */
		TEST_SAYS(who, "fd 3\n", "openat", "-100", "proc/self/status");
	}

	/* 4096 bytes with the NUL pass to the kernel: 4095 > NAME_MAX */
	TEST_SAYS(who, "err 36\n", "openlong", "4097");
	TEST_SAYS(who, "err 36\n", "openlong", "4096");
	TEST_SAYS(who, "err 2\n", "openlong", "256");
	TEST_SAYS(who, "err 22\n", "opennonul");
	free_tree(&t);
}

/*
 * With the create grant, O_CREAT beneath the root works and nothing is
 * created outside it; without the grant O_CREAT is EPERM.
 */
UVM_TEST(create_outside_root)
{
	char root[TPATH_LEN], pol[TPATH_LEN], text[1024];
	const char *const rw[] = { "--policy", pol, "--tenant", "rw", NULL };
	const char *const ro[] = { "--policy", pol, "--tenant", "ro", NULL };
	char created[TPATH_LEN], path[PATH_MAX];
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");
	TPATH(created, &t, "created");
	snprintf(text, sizeof(text),
		 "[tenant rw]\nroot = %s\ncalls = write read exit clock openat close\nopen = read write create\n\n"
		 "[tenant ro]\nroot = %s\ncalls = write read exit clock openat close\nopen = read write\n",
		 root, root);
	write_policy(_metadata, &t, pol, sizeof(pol), text);
	snprintf(path, sizeof(path), "%s/dangle", root);
	EXPECT_EQ(0, symlink(created, path));
	snprintf(path, sizeof(path), "%s/dangle-rel", root);
	EXPECT_EQ(0, symlink("../created", path));

	/* O_WRONLY | O_CREAT (0x41) */
	TEST_SAYS(rw, "err 18\n", "openat", "-100", "../created", "0x41");
	TEST_SAYS(rw, "err 18\n", "openat", "-100", created, "0x41");
	TEST_SAYS(rw, "err 18\n", "openat", "-100", "dangle", "0x41");
	TEST_SAYS(rw, "err 18\n", "openat", "-100", "dangle-rel", "0x41");
	EXPECT_FALSE(exists(created));

	TEST_SAYS(rw, "ok\n", "write", "/new.txt", "hi");
	snprintf(path, sizeof(path), "%s/new.txt", root);
	EXPECT_TRUE(holds(path, "hi"));
	TEST_SAYS(rw, "ok\n", "write", "/sub/new.txt", "there");
	snprintf(path, sizeof(path), "%s/sub/new.txt", root);
	EXPECT_TRUE(holds(path, "there"));

	/* no create grant: O_CREAT is EPERM, before the path is looked at */
	TEST_SAYS(ro, "err 1\n", "write", "/new2.txt", "hi");
	snprintf(path, sizeof(path), "%s/new2.txt", root);
	EXPECT_FALSE(exists(path));
	TEST_SAYS(ro, "err 1\n", "openat", "-100", "../created", "0x41");
	EXPECT_FALSE(exists(created));
	/* also for a file that exists ("write" opens with O_CREAT) */
	TEST_SAYS(ro, "err 1\n", "write", "/new.txt", "ho");
	snprintf(path, sizeof(path), "%s/new.txt", root);
	EXPECT_TRUE(holds(path, "hi"));
	/* O_WRONLY (1) without O_CREAT is granted */
	TEST_SAYS(ro, "fd 3\n", "openat", "-100", "new.txt", "1");
	free_tree(&t);
}

/*
 * Only fds this VM opened are files: never-opened ones (fdops, sysfuzz:
 * every call EBADF), and stdio or unopened fds as a directory.
 */
UVM_TEST(fds_checked)
{
	static const char *const dirfds[] = { "0", "1", "2", "3", "63",
					      "64", "-1" };
	char root[TPATH_LEN], want[37 * 6 + 1];
	const char *const who[] = { "--root", root, NULL };
	struct tree t;
	unsigned int i;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	/* read(7), close(7), pread(100), fstat(63), close(1000), close(-5) */
	TEST_SAYS(who, "err 9\nerr 9\nerr 9\nerr 9\nerr 9\nerr 9\n", "fdops");
	/* close, read and fstat of 12 fds: -1, 0x7fffffff, 64, 65, 3..10 */
	want[0] = 0;
	for (i = 0; i < 36; i++)
		strcat(want, "err 9\n");
	TEST_SAYS(who, want, "sysfuzz");
	for (i = 0; i < ARRAY_SIZE(dirfds); i++)
		TEST_SAYS(who, "err 9\n", "openat", dirfds[i],
			  "data/hello.txt");
	free_tree(&t);
}

/*
 * One `nvxtool uvm serve` for two VMs of its endpoint: fd tables are per
 * VM. VM A opens a file and holds it (HOLD_MS); VM B, with A's fd
 * number, gets EBADF for read, pread, fstat and close; A's fd is still
 * good after that (A reads 5 bytes once B is done); the file is
 * unchanged. The serve process exits 0 once both VMs are gone.
 */
UVM_TEST(foreign_vm_fds)
{
	struct nvx_uvm_endpoint ep = { .max_vms = 2 };	/* no CLOEXEC */
	char root[TPATH_LEN], path[PATH_MAX], epfd[16];
	char *const argv[] = { (char *)"nvxtool", (char *)"uvm",
			       (char *)"serve", (char *)"--ep-fd", epfd,
			       (char *)"--root", root, NULL };
	struct env *e = &self->e;
	struct vmm *a = NULL, *b = NULL;
	const char *err9, *read5;
	struct nvx_uvm_policy p;
	uint64_t end;
	int ret, status;
	struct tree t;
	pid_t pid = -1;
	bool ok;

	if (!prepare(_metadata, e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");
	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret)
		free_tree(&t);
	ASSERT_EQ(0, ret) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
	snprintf(epfd, sizeof(epfd), "%d", ep.fd);

	/* the serve process: stdout (the guests' too) and stderr to run */
	pid = spawn(&run, argv);
	EXPECT_LT(0, pid) TH_LOG("%s: no pipe or fork", run.cmd);
	if (pid < 0)
		goto out;
	ret = add_kid(e, pid);
	EXPECT_EQ(0, ret);
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
		goto out;
	}
	/* it is up once it set the --root policy on the endpoint */
	end = now_ms() + WAIT_MS;
	do {
		memset(&p, 0, sizeof(p));
		ret = nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_GET_POLICY, &p);
		if (ret || p.allow == ROOT_CALLS)
			break;
		usleep(10000);
	} while (now_ms() < end);
	EXPECT_EQ(0, ret) TH_LOG("NVX_UVM_EP_IOC_GET_POLICY: %s",
				 strerror(-ret));
	EXPECT_EQ(ROOT_CALLS, p.allow);
	if (ret || p.allow != ROOT_CALLS) {
		pump(&run, now_ms() + 100, NULL);
		TH_LOG("%s did not set its policy; stderr: '%s'", run.cmd,
		       run.err);
		goto out;
	}

	a = vmm_new(e);
	b = vmm_new(e);
	EXPECT_TRUE(a && b);
	if (!a || !b)
		goto out;
	ret = vmm_launch(e, a, ep.fd, 0, "test", "hold", "/data/hello.txt",
			 HOLD_MS, NULL);
	EXPECT_EQ(0, ret) TH_LOG("VM A: %s", vmm_why(a));
	if (ret)
		goto out;
	ok = pump(&run, now_ms() + WAIT_MS, "fd 3\n");
	EXPECT_TRUE(ok) TH_LOG("VM A did not open: stdout '%s'; stderr '%s'",
			       run.out, run.err);
	if (!ok)
		goto out;
	ret = vmm_launch(e, b, ep.fd, 0, "test", "usefd", "3", NULL);
	EXPECT_EQ(0, ret) TH_LOG("VM B: %s", vmm_why(b));
	if (ret)
		goto out;
	/* both attached: the serve process holds the endpoint now */
	close(ep.fd);
	ep.fd = -1;

	EXPECT_EQ(0, vmm_wait(b, DEADLINE_MS));
	EXPECT_EQ(0, vmm_wait(a, DEADLINE_MS));
	EXPECT_EQ(0, b->ret) TH_LOG("VM B: %s", vmm_why(b));
	EXPECT_EQ(0U, b->vm.exit_status);
	EXPECT_EQ(0, a->ret) TH_LOG("VM A: %s", vmm_why(a));
	EXPECT_EQ(0U, a->vm.exit_status);
	/* VM_GONE of both: the serve process ends */
	EXPECT_EQ(0, vmm_free(e, a));
	EXPECT_EQ(0, vmm_free(e, b));
	a = NULL;
	b = NULL;
	ok = pump(&run, now_ms() + WAIT_MS, NULL);
	EXPECT_TRUE(ok) TH_LOG("%s did not end", run.cmd);
	pump_end(&run);
	status = wait_kid(e, pid, ok ? SHORT_MS : 0);
	pid = -1;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("%s: status %#x; stderr: '%s'", run.cmd, status,
		       run.err);

	/* A: "fd 3", "read 5"; B: four "err 9"; nothing else */
	EXPECT_EQ(1, count_line(run.out, "fd 3")) TH_LOG("'%s'", run.out);
	EXPECT_EQ(1, count_line(run.out, "read 5")) TH_LOG("'%s'", run.out);
	EXPECT_EQ(4, count_line(run.out, "err 9")) TH_LOG("'%s'", run.out);
	EXPECT_EQ(6, lines(run.out)) TH_LOG("'%s'", run.out);
	/* A read after B's close(3): B closed nothing of A's */
	err9 = last_line(run.out, "err 9");
	read5 = last_line(run.out, "read 5");
	EXPECT_TRUE(err9 && read5 && err9 < read5)
		TH_LOG("VM B was not done before VM A read (after %s ms): '%s'",
		       HOLD_MS, run.out);
	EXPECT_STREQ("", run.err);
out:
	if (ep.fd >= 0)
		close(ep.fd);
	if (a)
		vmm_free(e, a);
	if (b)
		vmm_free(e, b);
	if (pid > 0)
		wait_kid(e, pid, 0);
	pump_end(&run);
	snprintf(path, sizeof(path), "%s/data/hello.txt", root);
	EXPECT_TRUE(holds(path, HELLO_T));
	free_tree(&t);
}

/*
 * What a tenant may not do is EPERM, from the system process (an open
 * mode not granted) or the kernel (a type not allowed); nothing changes.
 */
UVM_TEST(calls_not_granted)
{
	static const char *const none[] = { NULL };
	char root[TPATH_LEN], path[PATH_MAX];
	const char *const who[] = { "--root", root, NULL };
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	/* --root: read-only files */
	TEST_SAYS(who, "err 1\n", "write", "/x.txt", "hi");
	TEST_SAYS(who, "err 1\n", "pwrite", "/data/hello.txt", "0", "X");
	TEST_SAYS(who, "err 1\n", "trunc", "/data/hello.txt", "0");
	TEST_SAYS(who, "err 1\n", "mkdir", "/d");
	TEST_SAYS(who, "err 1\n", "rm", "/data/hello.txt");
	TEST_SAYS(who, "err 1\n", "rmdir", "/sub");
	TEST_SAYS(who, "err 1\n", "mv", "/data/hello.txt", "/moved.txt");
	/* opened read-only (granted), then FSYNC (not) */
	TEST_SAYS(who, "err 1\n", "fsync", "/data/hello.txt");
	snprintf(path, sizeof(path), "%s/data/hello.txt", root);
	EXPECT_TRUE(holds(path, HELLO_T));
	snprintf(path, sizeof(path), "%s/x.txt", root);
	EXPECT_FALSE(exists(path));
	snprintf(path, sizeof(path), "%s/d", root);
	EXPECT_FALSE(exists(path));
	snprintf(path, sizeof(path), "%s/moved.txt", root);
	EXPECT_FALSE(exists(path));
	snprintf(path, sizeof(path), "%s/sub", root);
	EXPECT_TRUE(exists(path));

	/* the default tenant: stdio, exit, clock, ipc; no file call */
	TEST_SAYS(none, "err 1\n", "open", "/data/hello.txt");
	TEST_SAYS(none, "err 1\n", "random", "16");
	TEST_SAYS(none, "err 1\n", "mkdir", "/d");
	GUEST(none, 1, "", cat_img, "/data/hello.txt");
	EXPECT_STREQ("cat: /data/hello.txt: EPERM\n", run.err);
	free_tree(&t);
}

/* Two tenants of one policy file: each reads its own root only. */
UVM_TEST(two_tenants)
{
	char ra[TPATH_LEN], rb[TPATH_LEN], pol[TPATH_LEN], text[1024];
	const char *const a[] = { "--policy", pol, "--tenant", "a", NULL };
	const char *const b[] = { "--policy", pol, "--tenant", "b", NULL };
	int fd, ret = 0;
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "a", "b");
	TPATH(ra, &t, "a");
	TPATH(rb, &t, "b");
	fd = open(ra, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = fd < 0 ? -errno : put_file(fd, "a-only.txt", "alpha\n");
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(0, ret);
	fd = open(rb, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = fd < 0 ? -errno : put_file(fd, "b-only.txt", "beta\n");
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(0, ret);
	snprintf(text, sizeof(text),
		 "# two tenants, both may read\n"
		 "[tenant a]\nroot = %s\ncalls = write read exit clock openat close pread fstat\n\n"
		 "[tenant b]\nroot = %s\ncalls = write read exit clock openat close pread fstat\n",
		 ra, rb);
	write_policy(_metadata, &t, pol, sizeof(pol), text);

	GUEST(a, 0, "alpha\n", cat_img, "/a-only.txt");
	GUEST(b, 0, "beta\n", cat_img, "/b-only.txt");
	GUEST(a, 1, "", cat_img, "/b-only.txt");
	EXPECT_STREQ("cat: /b-only.txt: ENOENT\n", run.err);
	GUEST(b, 1, "", cat_img, "/a-only.txt");
	EXPECT_STREQ("cat: /a-only.txt: ENOENT\n", run.err);
	TEST_SAYS(a, "err 18\n", "openat", "-100", "../b/b-only.txt");
	TEST_SAYS(b, "err 18\n", "openat", "-100", "../a/a-only.txt");
	TEST_SAYS(a, "err 18\n", "openat", "-100", "/../b/b-only.txt");
	free_tree(&t);
}

/*
 * `nvxtool uvm serve --debug-forbidden-syscall` calls socket() once
 * confined: the seccomp filter kills it with SIGSYS. --verbose says who
 * it serves, the policy it set on the endpoint and the filter. Also as
 * another uid (a policy file tenant with uid and gid).
 */
UVM_TEST(seccomp_kills)
{
	struct nvx_uvm_endpoint ep = { .max_vms = 1 };	/* no CLOEXEC */
	char root[TPATH_LEN], pol[TPATH_LEN], text[512];
	char fd[16], want[512];
	struct nvx_uvm_policy p;
	struct tree t;
	int ret;

	if (!prepare(_metadata, &self->e))
		return;
	ret = nvx_ioctl(self->e.fd, NVX_IOC_UVM_ENDPOINT, &ep);
	ASSERT_EQ(0, ret) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
	snprintf(fd, sizeof(fd), "%d", ep.fd);
	TREE(&t, "root");
	TPATH(root, &t, "root");

	nvxtool(&run, "uvm", "serve", "--ep-fd", fd, "--root", root,
		"--verbose", "--debug-forbidden-syscall", NULL);
	EXPECT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGSYS)
		TH_LOG("%s: status %#x; stderr: '%s'", run.cmd, run.status,
		       run.err);
	snprintf(want, sizeof(want),
		 "nvxtool: sys: tenant -: root %s, uid -1, gid -1\n", root);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);
	snprintf(want, sizeof(want),
		 "nvxtool: sys: policy: allow %#llx, flags 0, max_bulk 0, max_in_flight 0, rate 0, burst 0\n",
		 (unsigned long long)ROOT_CALLS);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);
	EXPECT_NE(NULL, strstr(run.err,
			       "nvxtool: sys: seccomp filter: 36 rules, installed in "))
		TH_LOG("stderr: '%s'", run.err);
	EXPECT_EQ(NULL, strstr(run.err, "was allowed"));
	memset(&p, 0, sizeof(p));
	EXPECT_EQ(0, nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_GET_POLICY, &p));
	EXPECT_EQ(ROOT_CALLS, p.allow);
	EXPECT_EQ(0U, p.flags);

	/* as uid and gid 65534: the ids are set before the filter */
	snprintf(text, sizeof(text),
		 "[tenant nobody]\nroot = %s\nuid = 65534\ngid = 65534\ncalls = write exit\n",
		 root);
	write_policy(_metadata, &t, pol, sizeof(pol), text);
	nvxtool(&run, "uvm", "serve", "--ep-fd", fd, "--policy", pol,
		"--tenant", "nobody", "--verbose", "--debug-forbidden-syscall",
		NULL);
	EXPECT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGSYS)
		TH_LOG("%s: status %#x; stderr: '%s'", run.cmd, run.status,
		       run.err);
	snprintf(want, sizeof(want),
		 "nvxtool: sys: tenant nobody: root %s, uid 65534, gid 65534\n",
		 root);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);
	memset(&p, 0, sizeof(p));
	EXPECT_EQ(0, nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_GET_POLICY, &p));
	EXPECT_EQ(CALL(WRITE) | CALL(EXIT), p.allow);

	/* the event loop: its fds kept, one more rule (UINTR_WAIT) */
	if (nvx_has_feature(self->e.fd, NVX_FEAT_UINTR) != 1) {
		close(ep.fd);
		free_tree(&t);
		SKIP(return, "no user interrupts (NVX_FEAT_UINTR)");
	}
	nvxtool(&run, "uvm", "serve", "--ep-fd", fd, "--root", root,
		"--verbose", "--uintr", "--debug-forbidden-syscall", NULL);
	EXPECT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGSYS)
		TH_LOG("%s: status %#x; stderr: '%s'", run.cmd, run.status,
		       run.err);
	EXPECT_NE(NULL, strstr(run.err,
			       "nvxtool: sys: event loop: the endpoint posts vector 0\n"))
		TH_LOG("stderr: '%s'", run.err);
	EXPECT_NE(NULL, strstr(run.err,
			       "nvxtool: sys: seccomp filter: 37 rules, installed in "))
		TH_LOG("stderr: '%s'", run.err);
	EXPECT_EQ(NULL, strstr(run.err, "was allowed"));
	close(ep.fd);
	free_tree(&t);
}

/* "N WHAT" on a line of @s that starts with @line: N, or -1. */
static long long count_of(const char *s, const char *line, const char *what)
{
	const char *l;
	char pat[64];
	char *end;
	long long n;

	snprintf(pat, sizeof(pat), " %s", what);
	for (l = s; l && (l = strstr(l, line)); l++) {
		for (s = l + strlen(line); *s && *s != '\n'; s++) {
			if (*s < '0' || *s > '9')
				continue;
			n = strtoll(s, &end, 10);
			if (!strncmp(end, pat, strlen(pat)))
				return n;
			s = end - 1;
		}
	}
	return -1;
}

/*
 * --uintr: the system process's event loop (the endpoint's user
 * interrupt, nonblocking RECVs, NVX_IOC_UINTR_WAIT) serves a guest's
 * calls as the blocking loop does; its --verbose report shows it waited
 * and took user interrupts. Skipped without user interrupts.
 */
UVM_TEST(uintr_event_loop)
{
	char root[TPATH_LEN];
	const char *const who[] = { "--root", root, "--uintr", "--verbose",
				    NULL };
	const char *const plain[] = { "--root", root, NULL };
	long long msgs, hits, waits;
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	if (nvx_has_feature(self->e.fd, NVX_FEAT_UINTR) != 1)
		SKIP(return, "no user interrupts (NVX_FEAT_UINTR)");
	TREE(&t, "root");
	TPATH(root, &t, "root");

	GUEST(who, 0, HELLO_T HELLO_T HELLO_T, cat_img, "/data/hello.txt",
	      "/in", "/data/hello.txt");
	msgs = count_of(run.err, "sys: event loop: ", "messages");
	hits = count_of(run.err, "sys: event loop: ", "user interrupts");
	waits = count_of(run.err, "sys: event loop: ", "waits");
	/* 3 files: open, reads, close each, then the exit and VM_GONE */
	EXPECT_LE(12, msgs) TH_LOG("stderr: '%s'", run.err);
	EXPECT_LE(1, hits) TH_LOG("stderr: '%s'", run.err);
	EXPECT_LE(1, waits) TH_LOG("stderr: '%s'", run.err);
	/* the same guest, errors included, as without --uintr */
	GUEST(who, 1, HELLO_T, cat_img, "/nope", "/data/hello.txt");
	EXPECT_NE(NULL, strstr(run.err, "cat: /nope: ENOENT\n"));
	GUEST(plain, 1, HELLO_T, cat_img, "/nope", "/data/hello.txt");
	EXPECT_STREQ("cat: /nope: ENOENT\n", run.err);
	TEST_SAYS(who, "err 18\n", "openat", "-100", "../secret");
	free_tree(&t);
}

/* A --root tenant's getrandom, fstat, lseek and getdents. */
UVM_TEST(getrandom_and_stat)
{
	char root[TPATH_LEN];
	const char *const who[] = { "--root", root, NULL };
	struct tree t;
	size_t len;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	TEST_SAYS(who, "ok 64\n", "random", "64");
	/* more than one message moves (NVX_UVM_MAX_BULK each) */
	TEST_SAYS(who, "ok 300000\n", "random", "300000");
	TEST_SAYS(who, "type reg size 22 mode 644 nlink 1\n", "stat",
		  "/data/hello.txt");
	TEST_SAYS(who, "type reg size 22 mode 644 nlink 1\n", "stat", "/in");
	TEST_SAYS(who, NULL, "stat", "/sub");
	EXPECT_EQ(0, strncmp(run.out, "type dir size ", 14)) TH_LOG("%s", run.out);
	len = strlen(run.out);
	EXPECT_TRUE(len > 18 && !strcmp(run.out + len - 18, " mode 755 nlink 2\n"))
		TH_LOG("%s", run.out);
	TEST_SAYS(who, "size 22\n", "lseek", "/data/hello.txt");
	TEST_SAYS(who, "", "ls", "/sub");
	TEST_SAYS(who, "hello.txt\n", "ls", "/data");
	/* in the order of the directory */
	TEST_SAYS(who, NULL, "ls", "/");
	EXPECT_EQ(4, lines(run.out)) TH_LOG("%s", run.out);
	EXPECT_TRUE(has_line(run.out, "data")) TH_LOG("%s", run.out);
	EXPECT_TRUE(has_line(run.out, "sub")) TH_LOG("%s", run.out);
	EXPECT_TRUE(has_line(run.out, "out")) TH_LOG("%s", run.out);
	EXPECT_TRUE(has_line(run.out, "in")) TH_LOG("%s", run.out);
	free_tree(&t);
}

/* A malformed policy file or a bad tenant choice: exit 2, naming the line. */
UVM_TEST(policy_file_usage_errors)
{
	char root[TPATH_LEN], pol[TPATH_LEN], want[PATH_MAX + 64];
	const char *const who[] = { "--policy", pol, "--tenant", "t", NULL };
	const char *const zz[] = { "--policy", pol, "--tenant", "zz", NULL };
	struct tree t;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t, "root");
	TPATH(root, &t, "root");

	write_policy(_metadata, &t, pol, sizeof(pol),
		     "# a typo\n[tenant t]\nrot = /x\n");
	GUEST(who, 2, "", test_img, "args");
	snprintf(want, sizeof(want), "nvxtool: %s:3: unknown key 'rot'\n", pol);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);

	write_policy(_metadata, &t, pol, sizeof(pol),
		     "[tenant t]\ncalls = write exit openat\n");
	GUEST(who, 2, "", test_img, "args");
	snprintf(want, sizeof(want),
		 "nvxtool: %s:1: tenant t: openat, mkdir, unlink and rename need a root\n",
		 pol);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);

	write_policy(_metadata, &t, pol, sizeof(pol),
		     "[tenant t]\ncalls = write exit\n");
	GUEST(zz, 2, "", test_img, "args");
	snprintf(want, sizeof(want), "nvxtool: %s: no tenant 'zz'\n", pol);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);
	/* the good tenant runs (test.img's argv[0] is the image as given) */
	snprintf(want, sizeof(want), "%s\nargs\n", test_img);
	GUEST(who, 0, want, test_img, "args");

	nvxtool(&run, "uvm", "run", "--root", root, "--policy", pol,
		"--tenant", "t", test_img, NULL);
	expect_run(_metadata, &run, 2, "");
	free_tree(&t);
}

TEST_HARNESS_MAIN
