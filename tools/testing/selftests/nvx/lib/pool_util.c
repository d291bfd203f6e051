// SPDX-License-Identifier: GPL-2.0
/*
 * Pool and grant helpers of the nvx selftests: see include/pool_util.h.
 */
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include "pool_util.h"

/**
 * pool_stats() - The pool's stats summed over all nodes: 0 or -errno
 * @fd: an open /dev/nvx
 * @s: where the stats go
 */
int pool_stats(int fd, struct nvx_pool_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->node = NVX_NODE_ANY;
	return nvx_ioctl(fd, NVX_IOC_POOL_STATS, s);
}

/**
 * pool_resize() - NVX_IOC_POOL_GROW or _SHRINK (@cmd)
 * @fd: an open /dev/nvx
 * @cmd: NVX_IOC_POOL_GROW or NVX_IOC_POOL_SHRINK
 * @bytes: how much
 * @node: a node, or NVX_NODE_ANY
 * @done: where the bytes done go, if not NULL
 *
 * Return: 0 or -errno; @done if not NULL.
 */
int pool_resize(int fd, unsigned long cmd, uint64_t bytes,
		uint32_t node, uint64_t *done)
{
	struct nvx_pool_resize r = { .node = node, .bytes = bytes };
	int ret = nvx_ioctl(fd, cmd, &r);

	if (done)
		*done = r.done;
	return ret;
}

/* For wait_until(): the scrubber has nothing left. */
static int scrubbed(int fd, const void *unused)
{
	struct nvx_pool_stats s;

	return pool_stats(fd, &s) ? -EIO : !s.dirty_bytes;
}

/**
 * wait_scrubbed() - Wait until the scrubber has nothing left: 0, or -ETIMEDOUT
 * @fd: an open /dev/nvx
 */
int wait_scrubbed(int fd)
{
	return wait_until(scrubbed, fd, NULL, 120000, 10000);
}

/* The live grants are those of @arg, the stats taken at the start. */
static int granted_as(int fd, const void *arg)
{
	const struct nvx_pool_stats *start = arg;
	struct nvx_pool_stats s;

	if (pool_stats(fd, &s))
		return -EIO;
	return s.granted_bytes == start->granted_bytes &&
	       s.grants_live == start->grants_live;
}

/**
 * wait_granted() - Wait until the live grants are those of @start
 * @fd: an open /dev/nvx
 * @start: the stats taken at the start
 *
 * Return: 0, or -ETIMEDOUT.
 */
int wait_granted(int fd, const struct nvx_pool_stats *start)
{
	return wait_until(granted_as, fd, start, 10000, 10000);
}

/**
 * grant() - A grant fd, or -errno
 * @fd: an open /dev/nvx
 * @bytes: the size wanted
 * @flags: NVX_GRANT_* flags
 * @granted: where the bytes granted go, if not NULL
 */
int grant(int fd, uint64_t bytes, uint32_t flags, uint64_t *granted)
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

/**
 * map_grant() - mmap() a grant fd shared, read and write
 * @gfd: a grant fd
 * @len: the length to map
 */
void *map_grant(int gfd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, gfd, 0);
}

/**
 * write_param() - set a parameter of the nvx module
 * @name: the parameter's name
 * @val: its new value
 */
int write_param(const char *name, const char *val)
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

/**
 * read_param() - read a parameter of the nvx module, without its newline
 * @name: the parameter's name
 * @buf: receives its value
 * @size: of @buf
 *
 * Return: 0, or -errno.
 */
int read_param(const char *name, char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/**
 * all_bytes() - Is every byte of [p, p + len) equal to @c?
 * @p: the memory
 * @len: its length
 * @c: the byte value
 */
bool all_bytes(const unsigned char *p, size_t len, unsigned char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return false;
	return true;
}

/**
 * smaps_kb() - a field of /proc/self/smaps for one VMA, in kB
 * @start: where the VMA starts
 * @field: the field's name, with its colon
 *
 * A field of /proc/self/smaps, in kB, for the VMA that starts at @start; -1
 * when there is no such VMA or field.
 */
long smaps_kb(const void *start, const char *field)
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

/**
 * tag_pages() - Write the page number into the first word of every page
 * @p: the memory
 * @len: its length
 * @first: the number for the first page
 */
void tag_pages(unsigned char *p, size_t len, unsigned long first)
{
	size_t i;

	for (i = 0; i < len / PAGE; i++)
		*(unsigned long *)(p + i * PAGE) = first + i;
}

/**
 * pages_tagged() - Does every page hold its number?
 * @p: the memory
 * @len: its length
 * @first: the number the first page should carry
 */
bool pages_tagged(const unsigned char *p, size_t len,
		  unsigned long first)
{
	size_t i;

	for (i = 0; i < len / PAGE; i++)
		if (*(const unsigned long *)(p + i * PAGE) != first + i)
			return false;
	return true;
}

/**
 * racer_thread() - Grant, fill and check chunks against other racers
 * @arg: its struct racer
 *
 * Each thread fills its grants with its own tag and checks the tag is
 * still intact before letting go: memory handed out twice would show
 * another thread's tag.
 *
 * Return: NULL.
 */
void *racer_thread(void *arg)
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
