/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every nvx selftest program uses (lib/nvx_test.c): /dev/nvx, its
 * ioctls with errors as -errno, the feature check every group's
 * fixture makes, and a few small system helpers.
 */
#ifndef NVX_TEST_H
#define NVX_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <nvx/nvx.h>

#define NVX_DEV "/dev/nvx"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif

/* The ioctl number @cmd with its size bits replaced by @size. */
static inline unsigned long nvx_ioc_resize(unsigned long cmd, size_t size)
{
	return (cmd & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
	       ((unsigned long)size << _IOC_SIZESHIFT);
}

int nvx_ioctl(int fd, unsigned long cmd, void *arg);
int nvx_open(void);
int nvx_has_feature(int fd, uint64_t feature);
uint64_t now_ms(void);
int wait_until(int (*done)(int fd, const void *arg), int fd,
	       const void *arg, uint64_t ms, unsigned int us);
pid_t sys_gettid(void);
int write_str(const char *path, const char *val);
int send_fd(int sock, int fd);
int recv_fd(int sock);
int fdinfo_get(int fd, const char *key, char *val, size_t len);
long long fdinfo_num(int fd, const char *key);
int packet_socket(int ifindex, int type_flags);
char *read_file(const char *path, size_t max);
unsigned int count_str(const char *text, const char *what);
const char *tracefs_with(const char *event);
int trace_events_enable(const char *dir, const char *const *events,
			unsigned int n, const char *val);

#endif /* NVX_TEST_H */
