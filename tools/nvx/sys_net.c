// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the system process's socket calls (stub, being written).
 */
#include <errno.h>
#include <poll.h>

#include "nvxtool.h"
#include "sys_int.h"

int nvx_sys_socket(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_bind(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_listen(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_accept(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_connect(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_send(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_sockrecv(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_shutdown(struct nvx_sys_call *c) { return -EOPNOTSUPP; }
int nvx_sys_poll(struct nvx_sys_call *c) { return -EOPNOTSUPP; }

int nvx_sys_sock_wait(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		if (poll(&p, 1, -1) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int nvx_sys_net_enter(const struct nvx_sys_tenant *t) { return 0; }
int nvx_sys_net_seccomp(void *f, int *n) { return 0; }
