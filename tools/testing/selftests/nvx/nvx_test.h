/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the nvx selftest groups.
 */
#ifndef NVX_TEST_H
#define NVX_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nvx/nvx.h>

#define NVX_DEV "/dev/nvx"

/* The ioctl number @cmd with its size bits replaced by @size. */
static inline unsigned long nvx_ioc_resize(unsigned long cmd, size_t size)
{
	return (cmd & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
	       ((unsigned long)size << _IOC_SIZESHIFT);
}

/* ioctl() that returns -errno on failure, so ASSERT_EQ shows the errno. */
static inline int nvx_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* Open /dev/nvx, or return -errno. */
static inline int nvx_open(void)
{
	int fd = open(NVX_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

#endif /* NVX_TEST_H */
