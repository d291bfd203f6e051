// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the reference system process of light user VMs.
 *
 * One process per tenant holds the tenant's endpoint (endpoint = tenant).
 * The kernel checks every message against the endpoint's policy first;
 * what reaches this process is served by one worker thread per guest
 * thread, against one fd table per VM. The process confines itself
 * before it serves anything: the tenant's root is the only directory it
 * resolves paths in, it runs as the tenant's uid, and a seccomp filter
 * allows only the system calls listed below.
 *
 * Documentation/nvx/uvm-sys.rst describes the calls, their checks and
 * errnos, the confinement and the policy file.
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nvxtool.h"
#include "nvx_uvm.h"
#include "sys.h"
#include "sys_int.h"

/* The O_* flags a guest may pass to OPENAT; O_CLOEXEC is always added. */
#define NVX_SYS_O_FLAGS		(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | \
				 O_APPEND | O_DIRECTORY | O_NOFOLLOW)

/* Every path is resolved beneath its directory, and so beneath the root. */
#define NVX_SYS_RESOLVE		(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

void __printf(1, 2) nvx_sys_info(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", nvx_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------ fd tables --- */

/* Guest fds 0, 1, 2 of every VM; never closed (CLOSE unlinks them). */
struct nvx_sys_file nvx_sys_stdio[3] = {
	{ .fd = 0, .kind = NVX_SYS_F_IN },
	{ .fd = 1, .kind = NVX_SYS_F_OUT },
	{ .fd = 2, .kind = NVX_SYS_F_OUT },
};

/* malloc arenas of the system process's threads (M_ARENA_MAX) */
#define NVX_SYS_ARENAS	8

/* A slot an OPENAT has taken and not filled yet: not an open fd. */
struct nvx_sys_file nvx_sys_reserved;

struct nvx_sys_file *nvx_sys_fget(struct nvx_sys_vm *vm, int fd,
				  unsigned int kinds)
{
	struct nvx_sys_file *f;

	if (fd < 0 || fd >= NVX_SYS_MAX_FDS)
		return NULL;
	pthread_mutex_lock(&vm->mu);
	f = vm->gone ? NULL : vm->files[fd];
	if (f == &nvx_sys_reserved || (f && !(f->kind & kinds)))
		f = NULL;
	if (f && (f->kind & NVX_SYS_F_OWNED))
		f->refs++;
	pthread_mutex_unlock(&vm->mu);
	return f;
}

void nvx_sys_fput(struct nvx_sys_vm *vm, struct nvx_sys_file *f)
{
	bool last;

	if (!f || !(f->kind & NVX_SYS_F_OWNED))
		return;
	pthread_mutex_lock(&vm->mu);
	last = !--f->refs;
	pthread_mutex_unlock(&vm->mu);
	if (last) {
		close(f->fd);
		free(f);
	}
}

int nvx_sys_fd_reserve(struct nvx_sys_vm *vm)
{
	int fd;

	pthread_mutex_lock(&vm->mu);
	for (fd = 3; fd < NVX_SYS_MAX_FDS; fd++) {
		if (!vm->files[fd]) {
			vm->files[fd] = &nvx_sys_reserved;
			break;
		}
	}
	pthread_mutex_unlock(&vm->mu);
	return fd < NVX_SYS_MAX_FDS ? fd : -EMFILE;
}

void nvx_sys_fd_install(struct nvx_sys_vm *vm, int fd,
			struct nvx_sys_file *f)
{
	pthread_mutex_lock(&vm->mu);
	vm->files[fd] = f;
	/* no call of a VM that went may block on a socket */
	if (f && vm->gone && (f->kind & NVX_SYS_F_SOCK))
		shutdown(f->fd, SHUT_RDWR);
	pthread_mutex_unlock(&vm->mu);
}

static struct nvx_sys_vm *nvx_sys_vm_new(uint32_t id)
{
	struct nvx_sys_vm *vm = calloc(1, sizeof(*vm));
	unsigned int i;

	if (!vm)
		return NULL;
	vm->id = id;
	vm->refs = 1;
	pthread_mutex_init(&vm->mu, NULL);
	for (i = 0; i < 3; i++)
		vm->files[i] = &nvx_sys_stdio[i];
	return vm;
}

/* The last reference closes every file the VM left open. */
static void nvx_sys_vm_put(struct nvx_sys_vm *vm)
{
	unsigned int i;

	if (__atomic_sub_fetch(&vm->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < NVX_SYS_MAX_FDS; i++)
		nvx_sys_fput(vm, vm->files[i]);
	pthread_mutex_destroy(&vm->mu);
	free(vm);
}

/* -------------------------------------------------- the process --- */

static int nvx_sys_openat2(int dirfd, const char *path, uint64_t flags,
			   uint64_t mode)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.mode = mode,
		.resolve = NVX_SYS_RESOLVE,
	};
	int fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/*
 * Write all of @len bytes, at @off (pwrite) or, when it is -1, at the
 * end; with @wait (a guest's non-blocking socket), waiting while the
 * socket is full.
 */
static int nvx_sys_write_all(struct nvx_sys_vm *vm, int fd, const char *buf,
			     size_t len, off_t off, bool wait)
{
	int hup = 0, ret;
	ssize_t n;

	while (len) {
		n = off < 0 ? write(fd, buf, len) : pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && wait) {
			/* shut down and still full: it will never drain */
			if (hup)
				return -EPIPE;
			ret = nvx_sys_sock_wait(vm, fd, POLLOUT);
			if (ret < 0)
				return ret;
			hup = ret;
			continue;
		}
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

/* @c's PUSH data as a path: at most NVX_UVM_PATH_MAX bytes, with a NUL. */
static int nvx_sys_path(struct nvx_sys_call *c, char **path)
{
	if (c->push_len > NVX_UVM_PATH_MAX)
		return -ENAMETOOLONG;
	if (!memchr(c->buf, 0, c->in_len))
		return -EINVAL;
	*path = c->buf;
	return 0;
}

/*
 * The host directory a path call resolves in: the root for
 * NVX_UVM_FD_ROOT, else guest fd @fd of this VM (*@f holds it; put it
 * with nvx_sys_fput()). Whether it is a directory, openat2() says.
 */
static int nvx_sys_dir(struct nvx_sys_call *c, int fd, struct nvx_sys_file **f)
{
	*f = NULL;
	if (fd == NVX_UVM_FD_ROOT)
		return c->sys->root_fd >= 0 ? c->sys->root_fd : -EPERM;
	*f = nvx_sys_fget(c->vm, fd, NVX_SYS_F_FILE);
	return *f ? (*f)->fd : -EBADF;
}

/*
 * For MKDIR, UNLINK and RENAME, which have no openat2() form: open the
 * parent of @path beneath guest directory @dfd (O_PATH) and point *@last
 * at the last component, which must be a plain name. Trailing slashes
 * are dropped. Return: the parent's fd (close it) or -errno.
 */
static int nvx_sys_parent(struct nvx_sys_call *c, int dfd, char *path,
			  const char **last)
{
	struct nvx_sys_file *f;
	size_t n = strlen(path);
	const char *dir = ".";
	char *slash;
	int dirfd, fd;

	while (n > 1 && path[n - 1] == '/')
		path[--n] = 0;
	slash = strrchr(path, '/');
	*last = path;
	if (slash) {
		*slash = 0;
		dir = slash == path ? "/" : path;
		*last = slash + 1;
	}
	dirfd = nvx_sys_dir(c, dfd, &f);
	if (dirfd < 0)
		return dirfd;
	fd = nvx_sys_openat2(dirfd, dir, O_PATH | O_DIRECTORY, 0);
	nvx_sys_fput(c->vm, f);
	if (fd < 0)
		return fd;
	if (!**last || !strcmp(*last, ".") || !strcmp(*last, "..")) {
		close(fd);
		return **last ? -EINVAL : -ENOENT;
	}
	return fd;
}

static int nvx_sys_ipc(struct nvx_sys_call *c)
{
	uint64_t v;

	/* a ping service: the request's payload[0..7] plus one */
	memcpy(&v, c->payload, sizeof(v));
	v++;
	memcpy(c->payload, &v, sizeof(v));
	memset(c->payload + sizeof(v), 0, sizeof(c->payload) - sizeof(v));
	return 0;
}

static int nvx_sys_write(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_OUT | NVX_SYS_F_OWNED);
	if (!f)
		return -EBADF;
	ret = nvx_sys_write_all(c->vm, f->fd, c->buf, c->in_len, -1,
				nvx_sys_f_waits(f));
	nvx_sys_fput(c->vm, f);
	return ret;
}

static int nvx_sys_read(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret, hup = 0;
	ssize_t n;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_IN | NVX_SYS_F_OWNED);
	if (!f)
		return -EBADF;
	for (;;) {
		n = read(f->fd, c->buf, c->room);
		ret = n < 0 ? -errno : 0;
		/* a guest's socket is non-blocking; the guest thread waits */
		if (n >= 0 || (ret != -EAGAIN && ret != -EINTR) ||
		    !nvx_sys_f_waits(f))
			break;
		if (ret == -EINTR)
			continue;
		if (hup) {
			/* shut down (a UDP socket stays "readable"): the end */
			n = 0;
			ret = 0;
			break;
		}
		hup = nvx_sys_sock_wait(c->vm, f->fd, POLLIN);
		if (hup < 0) {
			ret = hup;
			break;
		}
	}
	nvx_sys_fput(c->vm, f);
	if (n < 0)
		return ret;
	c->out_len = n;
	return 0;
}

static int nvx_sys_exit(struct nvx_sys_call *c)
{
	memset(c->payload, 0, sizeof(c->payload));
	return 0;
}

static int nvx_sys_clock(struct nvx_sys_call *c)
{
	struct timespec ts;
	uint64_t v;

	clock_gettime(CLOCK_REALTIME, &ts);
	v = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	memset(c->payload, 0, sizeof(c->payload));
	memcpy(c->payload, &v, sizeof(v));
	return 0;
}

static int nvx_sys_open(struct nvx_sys_call *c)
{
	uint32_t fl = c->fc.flags, acc = fl & O_ACCMODE;
	unsigned int may = c->sys->open;
	struct nvx_sys_file *f, *dir;
	int dirfd, gfd, fd, ret;
	char *path;

	if ((fl & ~NVX_SYS_O_FLAGS) || acc == O_ACCMODE)
		return -EINVAL;
	if ((acc != O_WRONLY && !(may & NVX_SYS_OPEN_READ)) ||
	    ((acc != O_RDONLY || (fl & (O_TRUNC | O_APPEND))) &&
	     !(may & NVX_SYS_OPEN_WRITE)) ||
	    ((fl & O_CREAT) && !(may & NVX_SYS_OPEN_CREATE)))
		return -EPERM;
	ret = nvx_sys_path(c, &path);
	if (ret)
		return ret;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	gfd = nvx_sys_fd_reserve(c->vm);
	if (gfd < 0) {
		free(f);
		return gfd;
	}
	dirfd = nvx_sys_dir(c, c->fc.fd, &dir);
	fd = dirfd;
	if (dirfd >= 0)
		fd = nvx_sys_openat2(dirfd, path, fl,
				     fl & O_CREAT ? c->fc.arg & 0777 : 0);
	nvx_sys_fput(c->vm, dir);
	if (fd < 0) {
		nvx_sys_fd_install(c->vm, gfd, NULL);
		free(f);
		return fd;
	}
	f->fd = fd;
	f->kind = NVX_SYS_F_FILE;
	f->refs = 1;
	nvx_sys_fd_install(c->vm, gfd, f);
	c->fc.ret = gfd;
	return 0;
}

static int nvx_sys_close(struct nvx_sys_call *c)
{
	struct nvx_sys_vm *vm = c->vm;
	struct nvx_sys_file *f = NULL;
	int fd = c->fc.fd;

	if (fd < 0 || fd >= NVX_SYS_MAX_FDS)
		return -EBADF;
	pthread_mutex_lock(&vm->mu);
	if (vm->files[fd] != &nvx_sys_reserved) {
		f = vm->files[fd];
		vm->files[fd] = NULL;
	}
	pthread_mutex_unlock(&vm->mu);
	if (!f)
		return -EBADF;
	/* the host's stdio stays open; a file closes with its last user */
	nvx_sys_fput(vm, f);
	return 0;
}

static int nvx_sys_pread(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	ssize_t n;

	if ((int64_t)c->fc.arg < 0)
		return -EINVAL;
	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	n = pread(f->fd, c->buf, c->room, c->fc.arg);
	nvx_sys_fput(c->vm, f);
	if (n < 0)
		return -errno;
	c->out_len = n;
	return 0;
}

static int nvx_sys_pwrite(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret;

	if ((int64_t)c->fc.arg < 0)
		return -EINVAL;
	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	ret = nvx_sys_write_all(c->vm, f->fd, c->buf, c->in_len, c->fc.arg,
				false);
	nvx_sys_fput(c->vm, f);
	return ret;
}

static int nvx_sys_lseek(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	off_t off;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	off = lseek(f->fd, (off_t)c->fc.arg, (int)c->fc.flags);
	nvx_sys_fput(c->vm, f);
	if (off < 0)
		return -errno;
	c->fc.ret = off;
	return 0;
}

static int nvx_sys_fstat(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	struct stat st;
	int ret;

	if (c->room < sizeof(c->st))
		return -EINVAL;
	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	ret = fstat(f->fd, &st) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	if (ret)
		return ret;
	c->st.ino = st.st_ino;
	c->st.size = st.st_size;
	c->st.blocks = st.st_blocks;
	c->st.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
			 st.st_mtim.tv_nsec;
	c->st.mode = st.st_mode;
	c->st.nlink = st.st_nlink;
	c->out = &c->st;
	c->out_len = sizeof(c->st);
	return 0;
}

static int nvx_sys_getdents(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	ssize_t n;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	n = getdents64(f->fd, c->buf, c->room);
	nvx_sys_fput(c->vm, f);
	if (n < 0)
		return -errno;
	c->out_len = n;
	return 0;
}

static int nvx_sys_mkdir(struct nvx_sys_call *c)
{
	const char *last;
	char *path;
	int ret, fd;

	ret = nvx_sys_path(c, &path);
	if (ret)
		return ret;
	fd = nvx_sys_parent(c, c->fc.fd, path, &last);
	if (fd < 0)
		return fd;
	ret = mkdirat(fd, last, c->fc.arg & 0777) ? -errno : 0;
	close(fd);
	return ret;
}

static int nvx_sys_unlink(struct nvx_sys_call *c)
{
	const char *last;
	char *path;
	int ret, fd;

	if (c->fc.flags & ~AT_REMOVEDIR)
		return -EINVAL;
	ret = nvx_sys_path(c, &path);
	if (ret)
		return ret;
	fd = nvx_sys_parent(c, c->fc.fd, path, &last);
	if (fd < 0)
		return fd;
	ret = unlinkat(fd, last, c->fc.flags) ? -errno : 0;
	close(fd);
	return ret;
}

static int nvx_sys_rename(struct nvx_sys_call *c)
{
	const char *olast, *nlast;
	char *old = c->buf, *new;
	int ofd, nfd, ret;
	size_t olen;

	/* exactly "old\0new\0", each a path */
	if (c->push_len > 2 * NVX_UVM_PATH_MAX)
		return -ENAMETOOLONG;
	if (!c->in_len || c->buf[c->in_len - 1] ||
	    !memchr(c->buf, 0, c->in_len - 1))
		return -EINVAL;
	olen = strlen(old) + 1;
	new = old + olen;
	if (strlen(new) + 1 != c->in_len - olen)
		return -EINVAL;
	if (olen > NVX_UVM_PATH_MAX || c->in_len - olen > NVX_UVM_PATH_MAX)
		return -ENAMETOOLONG;
	ofd = nvx_sys_parent(c, c->fc.fd, old, &olast);
	if (ofd < 0)
		return ofd;
	nfd = nvx_sys_parent(c, (int32_t)c->fc.flags, new, &nlast);
	if (nfd < 0) {
		close(ofd);
		return nfd;
	}
	/* glibc's renameat2() with flags 0 is renameat(): one call less */
	ret = syscall(SYS_renameat2, ofd, olast, nfd, nlast, 0) ? -errno : 0;
	close(nfd);
	close(ofd);
	return ret;
}

static int nvx_sys_ftruncate(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	ret = ftruncate(f->fd, (off_t)c->fc.arg) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	return ret;
}

static int nvx_sys_fsync(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_FILE);
	if (!f)
		return -EBADF;
	ret = fsync(f->fd) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	return ret;
}

static int nvx_sys_getrandom(struct nvx_sys_call *c)
{
	uint32_t done = 0;
	ssize_t n;

	while (done < c->room) {
		n = getrandom(c->buf + done, c->room - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += n;
	}
	c->out_len = done;
	return 0;
}

/* ------------------------------------- the function server's side --- */

/*
 * READY: without a function server, at once (the guest's stdio is the
 * process's). With one, when the server has passed a connection for
 * this VM (nvx_sys_ctl_main()): it becomes the VM's fd 0 and 1. A VM
 * that goes first, or is released without one, gets -ECONNRESET.
 */
static int nvx_sys_ready(struct nvx_sys_call *c)
{
	struct nvx_sys *sys = c->sys;
	struct nvx_sys_vm *vm = c->vm;
	struct nvx_sys_conn **pp, *conn = NULL;
	struct nvx_sys_file *f, *old[2];
	int i;

	memset(c->payload, 0, sizeof(c->payload));
	if (sys->ctl_fd < 0)
		return 0;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&sys->conn_mu);
	for (;;) {
		for (pp = &sys->conns; *pp; pp = &(*pp)->next) {
			if ((*pp)->vm_id == vm->id) {
				conn = *pp;
				*pp = conn->next;
				break;
			}
		}
		/*
		 * The server sends a VM's RELEASE only after it destroyed
		 * the VM, whose VM_GONE notice then sets @gone
		 * (nvx_sys_vm_sweep() wakes this wait).
		 */
		if (conn || __atomic_load_n(&vm->gone, __ATOMIC_ACQUIRE))
			break;
		pthread_cond_wait(&sys->conn_cv, &sys->conn_mu);
	}
	pthread_mutex_unlock(&sys->conn_mu);
	if (!conn) {
		free(f);
		return -ECONNRESET;
	}
	if (conn->fd < 0) {	/* lost on the way (nvx_sys_ctl_recv()) */
		free(conn);
		free(f);
		return -ECONNRESET;
	}
	f->fd = conn->fd;
	f->kind = NVX_SYS_F_SOCK | NVX_SYS_F_CONN | NVX_SYS_F_IN |
		  NVX_SYS_F_OUT;
	f->refs = 2;
	free(conn);
	pthread_mutex_lock(&vm->mu);
	if (vm->gone) {
		pthread_mutex_unlock(&vm->mu);
		close(f->fd);
		free(f);
		return -ECONNRESET;
	}
	for (i = 0; i < 2; i++) {
		old[i] = vm->files[i] == &nvx_sys_reserved ? NULL :
							      vm->files[i];
		vm->files[i] = f;
	}
	pthread_mutex_unlock(&vm->mu);
	for (i = 0; i < 2; i++)
		nvx_sys_fput(vm, old[i]);
	return 0;
}

/* Receive one control packet, and its fd: the op, 0 at the end, or -errno. */
static int nvx_sys_ctl_recv(int ctl, struct nvx_sys_ctl *m, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8)));
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	bool conn;
	ssize_t n;

	*fd = -1;
	do {
		n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	conn = m->op == NVX_SYS_CTL_CONN;
	/*
	 * A CONN whose fd the kernel dropped (MSG_CTRUNC: this process is
	 * out of fds) is a connection lost, not the end: its VM's READY
	 * fails, the client sees EOF (nobody holds its socket any more).
	 */
	if (conn && *fd < 0 && n == sizeof(*m) && (mh.msg_flags & MSG_CTRUNC))
		return m->op;
	if (n != sizeof(*m) || conn != (*fd >= 0)) {
		if (*fd >= 0)
			close(*fd);
		return -EPROTO;
	}
	return m->op;
}

/*
 * The function server's control socket: connections for VMs, and VMs
 * released. When the server closes it, the process ends: the server
 * destroyed its VMs before.
 */
static void *nvx_sys_ctl_main(void *arg)
{
	struct nvx_sys *sys = arg;
	struct nvx_sys_conn *conn, **pp;
	struct nvx_sys_ctl m;
	int op, fd;

	for (;;) {
		op = nvx_sys_ctl_recv(sys->ctl_fd, &m, &fd);
		if (op <= 0)
			break;
		pthread_mutex_lock(&sys->conn_mu);
		if (op == NVX_SYS_CTL_CONN) {
			conn = malloc(sizeof(*conn));
			if (conn) {
				conn->vm_id = m.vm_id;
				conn->fd = fd;
				conn->next = sys->conns;
				sys->conns = conn;
			} else if (fd >= 0) {
				close(fd);	/* the client sees EOF */
			}
		} else if (op == NVX_SYS_CTL_RELEASE) {
			for (pp = &sys->conns; *pp; ) {
				conn = *pp;
				if (conn->vm_id != m.vm_id) {
					pp = &conn->next;
					continue;
				}
				*pp = conn->next;
				if (conn->fd >= 0)
					close(conn->fd);
				free(conn);
			}
		}
		pthread_cond_broadcast(&sys->conn_cv);
		pthread_mutex_unlock(&sys->conn_mu);
	}
	if (op < 0)
		nvx_err("sys: control socket: %s", strerror(-op));
	/* the server is gone: so are its VMs */
	exit(op < 0 ? NVX_EXIT_FAIL : NVX_EXIT_OK);
	return NULL;
}

/**
 * struct nvx_sys_op - a message type of the system process
 * @name: its name in the policy file's ``calls``.
 * @fn: serves it: 0 or a negative errno, the completion's status; NULL
 *	for a type the kernel serves (RECV).
 * @fcall: its payload is a struct nvx_uvm_fcall.
 */
struct nvx_sys_op {
	const char *name;
	int (*fn)(struct nvx_sys_call *c);
	bool fcall;
};

static const struct nvx_sys_op nvx_sys_ops[] = {
	[NVX_UVM_MSG_IPC]	= { "ipc", nvx_sys_ipc, false },
	[NVX_UVM_MSG_WRITE]	= { "write", nvx_sys_write, true },
	[NVX_UVM_MSG_READ]	= { "read", nvx_sys_read, true },
	[NVX_UVM_MSG_EXIT]	= { "exit", nvx_sys_exit, false },
	[NVX_UVM_MSG_CLOCK]	= { "clock", nvx_sys_clock, false },
	[NVX_UVM_MSG_RECV]	= { "recv", NULL, false },
	[NVX_UVM_MSG_OPENAT]	= { "openat", nvx_sys_open, true },
	[NVX_UVM_MSG_CLOSE]	= { "close", nvx_sys_close, true },
	[NVX_UVM_MSG_PREAD]	= { "pread", nvx_sys_pread, true },
	[NVX_UVM_MSG_PWRITE]	= { "pwrite", nvx_sys_pwrite, true },
	[NVX_UVM_MSG_LSEEK]	= { "lseek", nvx_sys_lseek, true },
	[NVX_UVM_MSG_FSTAT]	= { "fstat", nvx_sys_fstat, true },
	[NVX_UVM_MSG_GETDENTS]	= { "getdents", nvx_sys_getdents, true },
	[NVX_UVM_MSG_MKDIR]	= { "mkdir", nvx_sys_mkdir, true },
	[NVX_UVM_MSG_UNLINK]	= { "unlink", nvx_sys_unlink, true },
	[NVX_UVM_MSG_RENAME]	= { "rename", nvx_sys_rename, true },
	[NVX_UVM_MSG_FTRUNCATE]	= { "ftruncate", nvx_sys_ftruncate, true },
	[NVX_UVM_MSG_FSYNC]	= { "fsync", nvx_sys_fsync, true },
	[NVX_UVM_MSG_GETRANDOM]	= { "getrandom", nvx_sys_getrandom, true },
	[NVX_UVM_MSG_READY]	= { "ready", nvx_sys_ready, false },
	[NVX_UVM_MSG_SOCKET]	= { "socket", nvx_sys_socket, true },
	[NVX_UVM_MSG_BIND]	= { "bind", nvx_sys_bind, true },
	[NVX_UVM_MSG_LISTEN]	= { "listen", nvx_sys_listen, true },
	[NVX_UVM_MSG_ACCEPT]	= { "accept", nvx_sys_accept, true },
	[NVX_UVM_MSG_CONNECT]	= { "connect", nvx_sys_connect, true },
	[NVX_UVM_MSG_SEND]	= { "send", nvx_sys_send, true },
	[NVX_UVM_MSG_SOCKRECV]	= { "sockrecv", nvx_sys_sockrecv, true },
	[NVX_UVM_MSG_SHUTDOWN]	= { "shutdown", nvx_sys_shutdown, true },
	[NVX_UVM_MSG_POLL]	= { "poll", nvx_sys_poll, false },
};

static_assert(NVX_ARRAY_SIZE(nvx_sys_ops) == NVX_SYS_NR_CALLS,
	      "a call without a name, or a name past NVX_SYS_NR_CALLS");

const char *nvx_sys_call_name(unsigned int type)
{
	return type < NVX_SYS_NR_CALLS ? nvx_sys_ops[type].name : NULL;
}

/* Serve one request and reply to it. */
static void nvx_sys_serve_one(struct nvx_sys *sys, struct nvx_sys_item *it)
{
	const struct nvx_uvm_msg *m = &it->r.msg;
	const struct nvx_sys_op *op = NULL;
	struct nvx_sys_call c = {
		.sys = sys, .vm = it->vm, .type = m->type, .buf = it->buf,
		.out = it->buf,
	};
	struct nvx_uvm_reply rep = { .cookie = it->r.cookie };
	int ret;

	if (m->flags & NVX_UVM_MSGF_PUSH) {
		c.push_len = it->r.data_len;
		c.in_len = it->r.data_len < it->r.buf_len ? it->r.data_len :
							      it->r.buf_len;
	}
	if (m->flags & NVX_UVM_MSGF_PULL)
		c.room = it->r.data_len < NVX_UVM_MAX_BULK ? it->r.data_len :
							     NVX_UVM_MAX_BULK;
	memcpy(&c.fc, m->payload, sizeof(c.fc));
	c.fc.ret = 0;
	memcpy(c.payload, m->payload, sizeof(c.payload));
	if (c.type < NVX_ARRAY_SIZE(nvx_sys_ops))
		op = &nvx_sys_ops[c.type];

	/* the kernel checked the policy already; check it again */
	if (c.type > NVX_UVM_MSG_GUEST_MAX ||
	    !(sys->calls & NVX_SYS_CALL(c.type)))
		ret = -EPERM;
	else if (!op || !op->fn)
		ret = -EOPNOTSUPP;
	else
		ret = op->fn(&c);

	rep.msg.type = c.type;
	rep.msg.status = ret;
	if (op && op->fn && op->fcall)
		memcpy(rep.msg.payload, &c.fc, sizeof(c.fc));
	else if (ret >= 0)	/* POLL: the count, with the revents */
		memcpy(rep.msg.payload, c.payload, sizeof(c.payload));
	if (!ret && c.out_len) {
		rep.buf = (uintptr_t)c.out;
		rep.buf_len = c.out_len;
	}
	/* -ESRCH: the VM went away meanwhile; its notice follows */
	if (ioctl(sys->ep_fd, NVX_UVM_EP_IOC_REPLY, &rep) < 0 &&
	    errno != ESRCH)
		nvx_warn("sys: reply to vm %u: %s", m->src_vm, strerror(errno));
}

/* ------------------------------------------------------- workers --- */

static struct nvx_sys_item *nvx_sys_item_get(struct nvx_sys *sys)
{
	struct nvx_sys_item *it;

	pthread_mutex_lock(&sys->buf_mu);
	it = sys->free;
	if (it)
		sys->free = it->next;
	pthread_mutex_unlock(&sys->buf_mu);
	if (it)
		return it;
	it = calloc(1, sizeof(*it));
	if (it)
		it->buf = malloc(NVX_UVM_MAX_BULK);
	if (it && !it->buf) {
		free(it);
		it = NULL;
	}
	return it;
}

static void nvx_sys_item_put(struct nvx_sys *sys, struct nvx_sys_item *it)
{
	pthread_mutex_lock(&sys->buf_mu);
	it->next = sys->free;
	sys->free = it;
	pthread_mutex_unlock(&sys->buf_mu);
}

/*
 * One worker per guest thread: its requests are served in order, and a
 * guest thread blocked in a call (a read of stdin) holds up no other.
 */
static void *nvx_sys_worker_main(void *arg)
{
	struct nvx_sys_worker *w = arg;
	struct nvx_sys *sys = w->sys;
	struct nvx_sys_item *it;

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head && !w->retire)
			pthread_cond_wait(&w->cv, &w->mu);
		it = w->head;
		if (it) {
			w->head = it->next;
			if (!w->head)
				w->tail = NULL;
		}
		pthread_mutex_unlock(&w->mu);
		if (!it)
			break;
		nvx_sys_serve_one(sys, it);
		nvx_sys_vm_put(it->vm);
		nvx_sys_item_put(sys, it);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	/* a retired worker counts until its thread is done */
	__atomic_fetch_sub(&sys->live, 1, __ATOMIC_RELAXED);
	return NULL;
}

static struct nvx_sys_worker *nvx_sys_worker_for(struct nvx_sys *sys,
						 uint64_t key)
{
	struct nvx_sys_worker *w;
	unsigned int i, of_vm = 0;

	for (i = 0; i < sys->nr_workers; i++) {
		if (sys->workers[i]->key == key)
			return sys->workers[i];
		of_vm += sys->workers[i]->key >> 32 == key >> 32;
	}
	/* one VM cannot take the others' workers with made-up thread ids */
	if (sys->nr_workers == NVX_SYS_MAX_WORKERS ||
	    of_vm >= NVX_SYS_VM_WORKERS ||
	    __atomic_load_n(&sys->live, __ATOMIC_RELAXED) >=
	    NVX_SYS_MAX_WORKERS)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->key = key;
	w->sys = sys;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	__atomic_fetch_add(&sys->live, 1, __ATOMIC_RELAXED);
	if (pthread_create(&w->th, NULL, nvx_sys_worker_main, w)) {
		__atomic_fetch_sub(&sys->live, 1, __ATOMIC_RELAXED);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	pthread_detach(w->th);
	sys->workers[sys->nr_workers++] = w;
	return w;
}

/* The fd table of VM @id, made at its first request; with a reference. */
static struct nvx_sys_vm *nvx_sys_vm_get(struct nvx_sys *sys, uint32_t id)
{
	struct nvx_sys_vm *vm;

	for (vm = sys->vms; vm; vm = vm->next)
		if (vm->id == id)
			break;
	if (!vm) {
		vm = nvx_sys_vm_new(id);
		if (!vm)
			return NULL;
		vm->next = sys->vms;
		sys->vms = vm;
	}
	__atomic_add_fetch(&vm->refs, 1, __ATOMIC_RELAXED);
	return vm;
}

/*
 * A VM went: no call of it may block any more. Its sockets (its
 * connection too: the client sees EOF) are shut down, which wakes a
 * worker waiting on one; a READY waiting for a connection is woken.
 */
static void nvx_sys_vm_sweep(struct nvx_sys *sys, struct nvx_sys_vm *vm)
{
	unsigned int i;

	pthread_mutex_lock(&vm->mu);
	__atomic_store_n(&vm->gone, true, __ATOMIC_RELEASE);
	for (i = 0; i < NVX_SYS_MAX_FDS; i++) {
		struct nvx_sys_file *f = vm->files[i];

		if (f && f != &nvx_sys_reserved && (f->kind & NVX_SYS_F_SOCK))
			shutdown(f->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&vm->mu);
	if (sys->ctl_fd >= 0) {
		pthread_mutex_lock(&sys->conn_mu);
		pthread_cond_broadcast(&sys->conn_cv);
		pthread_mutex_unlock(&sys->conn_mu);
	}
}

/* VM @id is gone: drop its table (its last request closes the files). */
static void nvx_sys_vm_gone(struct nvx_sys *sys, uint32_t id)
{
	struct nvx_sys_vm **pp, *vm;
	struct nvx_sys_worker *w;
	unsigned int i;

	for (pp = &sys->vms; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			vm = *pp;
			*pp = vm->next;
			nvx_sys_vm_sweep(sys, vm);
			nvx_sys_vm_put(vm);
			break;
		}
	}
	for (i = 0; i < sys->nr_workers; ) {
		w = sys->workers[i];
		if (w->key >> 32 != id) {
			i++;
			continue;
		}
		sys->workers[i] = sys->workers[--sys->nr_workers];
		pthread_mutex_lock(&w->mu);
		w->retire = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

/* Hand a request to the worker of its guest thread. */
static void nvx_sys_dispatch(struct nvx_sys *sys, struct nvx_sys_item *it)
{
	const struct nvx_uvm_msg *m = &it->r.msg;
	struct nvx_sys_worker *w;

	w = nvx_sys_worker_for(sys, (uint64_t)m->src_vm << 32 | m->src_tid);
	it->vm = w ? nvx_sys_vm_get(sys, m->src_vm) : NULL;
	if (!it->vm) {
		struct nvx_uvm_reply rep = { .cookie = it->r.cookie };

		rep.msg.type = m->type;
		rep.msg.status = w ? -ENOMEM : -EAGAIN;
		ioctl(sys->ep_fd, NVX_UVM_EP_IOC_REPLY, &rep);
		nvx_sys_item_put(sys, it);
		return;
	}
	it->next = NULL;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* --------------------------------------------------- confinement --- */

/* Close every fd but 0, 1, 2 and the @n fds of @keep (-1: none). */
static void nvx_sys_close_others(int *keep, unsigned int n)
{
	unsigned int from = 3, i, j;
	int t;

	for (i = 0; i < n; i++)		/* sort: n is tiny */
		for (j = i + 1; j < n; j++)
			if (keep[j] < keep[i]) {
				t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

/*
 * A tenant without a uid, run by root: uid 0 stays, every capability
 * goes (bounding, ambient, effective, permitted, inheritable). Such a
 * process can still reach what uid 0 owns: name a uid for a real
 * separation (Documentation/nvx/uvm-sys.rst).
 */
static int nvx_sys_drop_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { };
	int cap;

	for (cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			goto fail;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) ||
	    syscall(SYS_capset, &h, d))
		goto fail;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) || d[0].effective || d[0].permitted ||
	    d[1].effective || d[1].permitted)
		goto fail;
	return NVX_EXIT_OK;
fail:
	nvx_err("sys: drop the capabilities: %s", strerror(errno));
	return NVX_EXIT_FAIL;
}

/* Fds 0, 1, 2 open (on /dev/null when they were not). */
static int nvx_sys_open_stdio(void)
{
	int fd;

	for (;;) {
		fd = open("/dev/null", O_RDWR);
		if (fd < 0) {
			nvx_err("sys: /dev/null: %s", strerror(errno));
			return NVX_EXIT_FAIL;
		}
		if (fd > 2) {
			close(fd);
			return NVX_EXIT_OK;
		}
	}
}

/* Become the tenant's uid and gid, for good. */
static int nvx_sys_set_ids(const struct nvx_sys_tenant *t)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (t->uid < 0)
		return geteuid() ? NVX_EXIT_OK : nvx_sys_drop_caps();
	if (!geteuid() &&
	    (setgroups(0, NULL) || setgid(t->gid) || setuid(t->uid))) {
		nvx_err("sys: become uid %lld, gid %lld: %s",
			(long long)t->uid, (long long)t->gid, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	/* not root: the tenant's ids must be ours already */
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg) ||
	    ru != t->uid || eu != t->uid || su != t->uid ||
	    rg != t->gid || eg != t->gid || sg != t->gid ||
	    (t->uid && !setuid(0))) {
		nvx_err("sys: cannot run as uid %lld, gid %lld%s",
			(long long)t->uid, (long long)t->gid,
			geteuid() ? " (not root)" : "");
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/*
 * What the system process may call once it serves, and why
 * (Documentation/nvx/uvm-sys.rst has the list with the reasons).
 */
static const int nvx_sys_syscalls[] = {
	/* the forwarded calls */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64),
	SCMP_SYS(pwrite64), SCMP_SYS(openat2), SCMP_SYS(close),
	SCMP_SYS(lseek), SCMP_SYS(getdents64), SCMP_SYS(mkdirat),
	SCMP_SYS(unlinkat), SCMP_SYS(renameat2), SCMP_SYS(ftruncate),
	SCMP_SYS(fsync), SCMP_SYS(getrandom),
	/* FSTAT: glibc 2.33+ makes fstat() newfstatat(fd, "", AT_EMPTY_PATH) */
	SCMP_SYS(fstat), SCMP_SYS(newfstatat),
	/* CLOCK, when the vDSO falls back to the system call */
	SCMP_SYS(clock_gettime),
	/* malloc() */
	SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect),
	SCMP_SYS(madvise),
	/* threads: start (clone below), locks, exit; malloc's arenas */
	SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(sched_getaffinity), SCMP_SYS(exit),
	/* a call interrupted by SIGSTOP/SIGCONT; the end */
	SCMP_SYS(restart_syscall), SCMP_SYS(exit_group),
	/* a gone VM's sockets and connection (not a socket: ENOTSOCK) */
	SCMP_SYS(shutdown),
};

/* The endpoint ioctls the system process makes while it serves. */
static const unsigned int nvx_sys_ioctls[] = {
	NVX_UVM_EP_IOC_RECV, NVX_UVM_EP_IOC_REPLY, NVX_UVM_EP_IOC_STATS,
};

/* clone() may make a thread of this process, nothing else. */
#define NVX_SYS_CLONE_THREAD	(CLONE_VM | CLONE_FS | CLONE_FILES | \
				 CLONE_SIGHAND | CLONE_THREAD)

/*
 * clone3() passes its flags in memory, where a filter cannot look: it
 * fails as a call the kernel does not have (errno 38, ENOSYS of
 * asm-generic/errno.h: x86-64, arm64, riscv), and glibc falls back to
 * clone(), whose flags the filter checks.
 */
#define NVX_SYS_NO_SUCH_CALL	38

/* Build and load the filter. Return: the number of rules, or -errno. */
static int nvx_sys_seccomp(const struct nvx_sys *sys)
{
	int ep_fd = sys->ep_fd;
	scmp_filter_ctx f;
	unsigned int i;
	int ret, n = 0;

	f = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!f)
		return -ENOMEM;
	ret = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH,
			       SCMP_ACT_KILL_PROCESS);
	for (i = 0; !ret && i < NVX_ARRAY_SIZE(nvx_sys_syscalls); i++, n++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, nvx_sys_syscalls[i],
				       0);
	for (i = 0; !ret && i < NVX_ARRAY_SIZE(nvx_sys_ioctls); i++, n++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 2,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff,
					       ep_fd),
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff,
					       nvx_sys_ioctls[i]));
	if (!ret) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				       SCMP_A0(SCMP_CMP_MASKED_EQ,
					       NVX_SYS_CLONE_THREAD,
					       NVX_SYS_CLONE_THREAD));
		n++;
	}
	if (!ret) {
		ret = seccomp_rule_add(f, SCMP_ACT_ERRNO(NVX_SYS_NO_SUCH_CALL),
				       SCMP_SYS(clone3), 0);
		n++;
	}
	/* the event loop waits for its user interrupt */
	if (!ret && sys->nvx_fd >= 0) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 2,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff,
					       sys->nvx_fd),
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff,
					       NVX_IOC_UINTR_WAIT));
		n++;
	}
	/* the function server's connections come on its socket only */
	if (!ret && sys->ctl_fd >= 0) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1,
				       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff,
					       sys->ctl_fd));
		n++;
	}
	if (!ret && (sys->calls & NVX_SYS_CALLS_NET))
		ret = nvx_sys_net_seccomp(f, &n);
	if (!ret)
		ret = seccomp_load(f);
	seccomp_release(f);
	return ret ? ret : n;
}

static void *nvx_sys_nop(void *arg)
{
	return arg;
}

/*
 * glibc sets threads up at the first pthread_create() (it installs its
 * setxid signal handler): have that done before the filter, which does
 * not allow rt_sigaction().
 */
static int nvx_sys_threads_init(void)
{
	pthread_t th;
	int ret;

	ret = pthread_create(&th, NULL, nvx_sys_nop, NULL);
	if (!ret)
		ret = pthread_join(th, NULL);
	return -ret;
}

/* Confine the process: Documentation/nvx/uvm-sys.rst, "Confinement". */
static int nvx_sys_confine(struct nvx_sys *sys, const struct nvx_sys_tenant *t,
			   const struct nvx_sys_opts *o)
{
	struct timespec t0, t1;
	int ret, keep[6];

	/* guest fds 0-2 are ours, never the endpoint, the root or a file */
	if (sys->ep_fd < 3) {
		nvx_err("sys: the endpoint is fd %d, a guest's stdio",
			sys->ep_fd);
		return NVX_EXIT_FAIL;
	}
	ret = nvx_sys_open_stdio();
	if (ret)
		return ret;
	/* 2. the root, while the process may still reach it */
	if (t->root[0]) {
		sys->root_fd = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (sys->root_fd < 0) {
			nvx_err("sys: root %s: %s", t->root, strerror(errno));
			return NVX_EXIT_FAIL;
		}
	}
	/* the tenant's network namespace, while the process may enter it */
	ret = nvx_sys_net_enter(t);
	if (ret)
		return ret;
	/* the event loop's user interrupt, while the device is open */
	if (o->uintr) {
		ret = nvx_sys_ev_setup(sys, o);
		if (ret)
			return ret;
	}
	/*
	 * 3. no fd but stdio, the endpoint, the root, the server's and the
	 * event loop's
	 */
	keep[0] = sys->ep_fd;
	keep[1] = sys->root_fd;
	keep[2] = sys->ctl_fd;
	keep[3] = sys->nvx_fd;
	keep[4] = sys->ev_rfd;
	keep[5] = sys->ev_vfd;
	nvx_sys_close_others(keep, NVX_ARRAY_SIZE(keep));
	/*
	 * A file a guest grows past RLIMIT_FSIZE, or stdout whose reader
	 * went, must fail that call, not kill the process. Files are made
	 * 0644 at most. No core dump, no ptrace by the same uid.
	 */
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* 4. the tenant's ids */
	ret = nvx_sys_set_ids(t);
	if (ret)
		return ret;
	/*
	 * 5. glibc's threads set up. Without an arena limit, malloc() in
	 * a new thread beyond 8 per CPU reads /sys/devices/system/cpu/online
	 * (openat, which the filter kills): a fixed limit never looks.
	 */
	mallopt(M_ARENA_MAX, NVX_SYS_ARENAS);
	ret = nvx_sys_threads_init();
	if (ret) {
		nvx_err("sys: pthread_create: %s", strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	/* 6. no privilege from exec (and seccomp without CAP_SYS_ADMIN) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		nvx_err("sys: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	/* 7. the system call filter */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = nvx_sys_seccomp(sys);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret < 0) {
		nvx_err("sys: seccomp filter: %s", strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	if (o->verbose)
		nvx_sys_info("sys: seccomp filter: %d rules, installed in %lld us",
			     ret, ((t1.tv_sec - t0.tv_sec) * 1000000000LL +
				   t1.tv_nsec - t0.tv_nsec) / 1000);
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------ the loop --- */

int nvx_sys_serve(int ep_fd, const struct nvx_sys_tenant *t,
		  const struct nvx_sys_opts *o)
{
	static struct nvx_sys sys;	/* workers may run on while it exits */
	struct nvx_uvm_ep_stats st;
	struct nvx_sys_item *it;
	uint64_t gone = 0;
	int ret;

	sys.ep_fd = ep_fd;
	sys.ctl_fd = o->ctl_fd > 0 ? o->ctl_fd : -1;
	pthread_mutex_init(&sys.conn_mu, NULL);
	pthread_cond_init(&sys.conn_cv, NULL);
	sys.root_fd = -1;
	sys.nvx_fd = -1;
	sys.ev_rfd = -1;
	sys.ev_vfd = -1;
	sys.calls = t->calls;
	sys.open = t->open;
	pthread_mutex_init(&sys.buf_mu, NULL);

	if (o->verbose)
		nvx_sys_info("sys: tenant %s: root %s, uid %lld, gid %lld",
			     t->name[0] ? t->name : "-",
			     t->root[0] ? t->root : "-", (long long)t->uid,
			     (long long)t->gid);
	/* 1. the kernel policy, before anything is served */
	if (!o->policy_set) {
		ret = nvx_sys_apply_policy(ep_fd, t, o->verbose);
		if (ret)
			return ret;
	}
	ret = nvx_sys_confine(&sys, t, o);
	if (ret)
		return ret;
	if (o->debug_forbidden) {
		/* the filter kills the process here, with SIGSYS */
		syscall(SYS_getppid);
		nvx_err("sys: getppid() was allowed: the filter is not in place");
		return NVX_EXIT_FAIL;
	}
	if (sys.ctl_fd >= 0) {
		pthread_t th;

		ret = pthread_create(&th, NULL, nvx_sys_ctl_main, &sys);
		if (ret) {
			nvx_err("sys: pthread_create: %s", strerror(ret));
			return NVX_EXIT_FAIL;
		}
		pthread_detach(th);
	}

	for (;;) {
		it = nvx_sys_item_get(&sys);
		if (!it) {
			nvx_err("sys: out of memory");
			return NVX_EXIT_FAIL;
		}
		memset(&it->r, 0, sizeof(it->r));
		it->r.buf = (uintptr_t)it->buf;
		it->r.buf_len = NVX_UVM_MAX_BULK;
		if (sys.nvx_fd >= 0)
			ret = nvx_sys_ev_recv(&sys, &it->r);
		else
			ret = ioctl(ep_fd, NVX_UVM_EP_IOC_RECV, &it->r) ?
			      errno : 0;
		if (ret) {
			nvx_sys_item_put(&sys, it);
			if (ret == EINTR)
				continue;
			if (ret > 0)
				nvx_err("sys: NVX_UVM_EP_IOC_RECV: %s",
					strerror(ret));
			return NVX_EXIT_FAIL;
		}
		if (it->r.msg.type != NVX_UVM_MSG_VM_GONE) {
			nvx_sys_dispatch(&sys, it);
			continue;
		}
		nvx_sys_vm_gone(&sys, it->r.msg.src_vm);
		nvx_sys_item_put(&sys, it);
		gone++;
		memset(&st, 0, sizeof(st));
		if (ioctl(ep_fd, NVX_UVM_EP_IOC_STATS, &st) < 0) {
			nvx_err("sys: NVX_UVM_EP_IOC_STATS: %s", strerror(errno));
			return NVX_EXIT_FAIL;
		}
		/* every VM that attached is gone (a server's come and go) */
		if (sys.ctl_fd < 0 && !st.nr_vms && !st.gone &&
		    gone >= st.attached && gone >= o->vms) {
			if (o->verbose && sys.nvx_fd >= 0)
				nvx_sys_ev_report(&sys);
			return NVX_EXIT_OK;
		}
	}
}
