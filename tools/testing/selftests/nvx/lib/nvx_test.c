// SPDX-License-Identifier: GPL-2.0
/*
 * What every nvx selftest program uses: see include/nvx_test.h.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

#include "nvx_test.h"

/**
 * nvx_ioctl() - ioctl() that returns -errno on failure
 * @fd: the file
 * @cmd: the ioctl number
 * @arg: its argument
 *
 * So that ASSERT_EQ() shows the errno.
 *
 * Return: 0, or -errno.
 */
int nvx_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/**
 * nvx_open() - open /dev/nvx
 *
 * Return: the fd (close-on-exec), or -errno.
 */
int nvx_open(void)
{
	int fd = open(NVX_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/**
 * nvx_has_feature() - whether /dev/nvx offers a capability
 * @fd: an open /dev/nvx
 * @feature: an NVX_FEAT_* bit
 *
 * Return: 1 if NVX_IOC_FEATURES reports @feature, 0 if not, -errno if the
 * ioctl failed.
 */
int nvx_has_feature(int fd, uint64_t feature)
{
	struct nvx_features f = { 0 };
	int ret = nvx_ioctl(fd, NVX_IOC_FEATURES, &f);

	if (ret)
		return ret;
	return !!(f.features & feature);
}

/**
 * now_ms() - CLOCK_MONOTONIC in milliseconds
 *
 * Return: the time.
 */
uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/**
 * wait_until() - Check @fd every @us microseconds until @done says so
 * @done: 1 when done, 0 when not yet, < 0 when it could not tell
 * @fd: @done's fd
 * @arg: @done's argument
 * @ms: how long, in milliseconds
 * @us: how long between checks, in microseconds
 *
 * Return: 0, -EIO when @done could not tell, or -ETIMEDOUT.
 */
int wait_until(int (*done)(int fd, const void *arg), int fd,
	       const void *arg, uint64_t ms, unsigned int us)
{
	uint64_t end = now_ms() + ms;
	int ret;

	while (now_ms() < end) {
		ret = done(fd, arg);
		if (ret < 0)
			return -EIO;
		if (ret)
			return 0;
		usleep(us);
	}
	return -ETIMEDOUT;
}

/**
 * sys_gettid() - the caller's thread id
 *
 * Return: the tid.
 */
pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

/**
 * write_str() - write a string to a file, as "echo -n" would
 * @path: the file (sysfs, tracefs, a module parameter)
 * @val: the string
 *
 * Return: 0, or -errno.
 */
int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* A one-byte message with room for one fd in its control data. */
struct fd_msg {
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char c;
	struct iovec iov;
	struct msghdr msg;
};

static struct cmsghdr *fd_msg_init(struct fd_msg *m, char c)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->iov.iov_base = &m->c;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
	return CMSG_FIRSTHDR(&m->msg);
}

/**
 * send_fd() - pass an fd over a unix socket (SCM_RIGHTS)
 * @sock: a unix socket
 * @fd: the fd to pass
 *
 * Return: 0, or -EIO.
 */
int send_fd(int sock, int fd)
{
	struct fd_msg m;
	struct cmsghdr *cm = fd_msg_init(&m, 'F');

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m.msg, MSG_NOSIGNAL) == 1 ? 0 : -EIO;
}

/**
 * recv_fd() - receive an fd passed with send_fd()
 * @sock: a unix socket
 *
 * Return: the fd (close-on-exec), or -EIO or -EPROTO.
 */
int recv_fd(int sock)
{
	struct fd_msg m;
	struct cmsghdr *cm;
	int fd;

	fd_msg_init(&m, 0);
	if (recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	cm = CMSG_FIRSTHDR(&m.msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/**
 * fdinfo_get() - a line of /proc/self/fdinfo/@fd
 * @fd: the fd
 * @key: the line's key, as in "@key:\tvalue"
 * @val: where the value goes (without the tab and the newline)
 * @len: the size of @val
 *
 * Return: 0, or -1 when the fd or the key is not there.
 */
int fdinfo_get(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(val, len, "%s",
			 line + klen + 1 + (line[klen + 1] == '\t'));
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

/**
 * fdinfo_num() - the number in a line of /proc/self/fdinfo/@fd
 * @fd: the fd
 * @key: the line's key
 *
 * Return: the number (decimal, or hexadecimal with 0x), or -1 when the
 * fd or the key is not there.
 */
long long fdinfo_num(int fd, const char *key)
{
	char v[128];

	if (fdinfo_get(fd, key, v, sizeof(v)))
		return -1;
	return strtoll(v, NULL, 0);
}

/**
 * count_str() - how many times a string occurs in a text
 * @text: the text (a trace, a /proc file), NUL-terminated
 * @what: the string, not empty
 *
 * Return: the number of occurrences that do not overlap.
 */
unsigned int count_str(const char *text, const char *what)
{
	unsigned int n = 0;

	for (; (text = strstr(text, what)); text += strlen(what))
		n++;
	return n;
}

/**
 * read_file() - the contents of a file, NUL-terminated
 * @path: the file (tracefs' trace, a /proc file)
 * @max: read at most this many bytes
 *
 * Return: the contents (free() them), or NULL.
 */
char *read_file(const char *path, size_t max)
{
	char *buf = malloc(max + 1);
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (len < max && (n = read(fd, buf + len, max - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/**
 * trace_events_enable() - write @val to the enable file of nvx events
 * @dir: the tracefs directory, from tracefs_with()
 * @events: the events' names, as in events/nvx/NAME
 * @n: how many
 * @val: "1" to enable, "0" to disable
 *
 * Return: 0, or the first -errno (the other events are still written).
 */
int trace_events_enable(const char *dir, const char *const *events,
			unsigned int n, const char *val)
{
	char path[160];
	unsigned int i;
	int ret, first = 0;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%sevents/nvx/%s/enable", dir,
			 events[i]);
		ret = write_str(path, val);
		if (ret && !first)
			first = ret;
	}
	return first;
}

/**
 * tracefs_with() - the tracefs directory that has an nvx event
 * @event: the event's name, as in events/nvx/@event
 *
 * Return: the directory, with its '/' ("/sys/kernel/tracing/" or the
 * debugfs one), or NULL when neither has the event.
 */
const char *tracefs_with(const char *event)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing/", "/sys/kernel/debug/tracing/",
	};
	char path[160];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%sevents/nvx/%s/enable", dirs[i],
			 event);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

/**
 * packet_socket() - an AF_PACKET socket bound to one interface
 * @ifindex: the interface.
 * @type_flags: SOCK_NONBLOCK or 0 (SOCK_CLOEXEC is always set).
 *
 * Return: the socket, seeing every frame the interface sends and
 * receives, or -errno.
 */
int packet_socket(int ifindex, int type_flags)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | type_flags,
			htons(ETH_P_ALL));

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -errno;
	}
	return fd;
}
