/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvxtool: the system process's insides, shared by the files that serve
 * forwarded calls (sys.c: files and the loop; sys_net.c: sockets). Not
 * an interface: sys.h is the one the rest of nvxtool uses.
 */
#ifndef _NVX_SYS_INT_H
#define _NVX_SYS_INT_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvx/uvm.h>

#include "sys.h"

#define NVX_SYS_MAX_WORKERS	256	/* worker threads alive at once */
#define NVX_SYS_VM_WORKERS	16	/* guest threads served per VM */

enum {
	NVX_SYS_F_IN	= 0x1,	/* the process's stdin: READ */
	NVX_SYS_F_OUT	= 0x2,	/* its stdout or stderr: WRITE */
	NVX_SYS_F_FILE	= 0x4,	/* a file or directory the guest opened */
	NVX_SYS_F_SOCK	= 0x8,	/* a socket: the guest's or its connection */
	NVX_SYS_F_CONN	= 0x10,	/* with SOCK: the client's connection */
	NVX_SYS_F_ANY	= 0x1f,
	/* kinds whose files are counted and closed with their last user */
	NVX_SYS_F_OWNED	= NVX_SYS_F_FILE | NVX_SYS_F_SOCK,
};

/**
 * struct nvx_sys_file - what a guest fd stands for
 * @fd: the host fd.
 * @kind: NVX_SYS_F_*.
 * @refs: NVX_SYS_F_FILE only: one for the table, one per call using it,
 *	under the VM's mutex; the last one closes @fd. A CLOSE takes the
 *	file out of the table at once, a call still using it finishes.
 */
struct nvx_sys_file {
	int fd;
	unsigned int kind;
	unsigned int refs;
};

/**
 * struct nvx_sys_vm - one VM's fd table
 * @next: the dispatcher's list of VMs (only it walks the list).
 * @id: the VM's id in the endpoint.
 * @refs: one while the VM lives (dropped at its VM_GONE notice), one per
 *	request queued or being served (atomic).
 * @mu: guards @files and the files' @refs: the VM's guest threads are
 *	served by several workers at once.
 * @gone: its VM_GONE notice came (under @mu): its sockets were shut
 *	down, nvx_sys_fget() finds nothing, a socket installed now is shut
 *	down at once (nvx_sys_fd_install()).
 * @files: guest fd -> file; NULL when not open.
 */
struct nvx_sys_vm {
	struct nvx_sys_vm *next;
	uint32_t id;
	unsigned int refs;
	pthread_mutex_t mu;
	bool gone;
	struct nvx_sys_file *files[NVX_SYS_MAX_FDS];
};

/*
 * A guest's own sockets are non-blocking: the worker waits for them
 * (nvx_sys_sock_wait()). A connection is blocking, with the server's
 * timeouts (SO_RCVTIMEO, SO_SNDTIMEO): -EAGAIN when one expires.
 */
static inline bool nvx_sys_f_waits(const struct nvx_sys_file *f)
{
	return (f->kind & (NVX_SYS_F_SOCK | NVX_SYS_F_CONN)) == NVX_SYS_F_SOCK;
}

/* Guest fds 0, 1, 2 of a VM without a connection; never closed. */
extern struct nvx_sys_file nvx_sys_stdio[3];
/* A slot an OPENAT or SOCKET has taken and not filled yet. */
extern struct nvx_sys_file nvx_sys_reserved;

/* The file of guest fd @fd if it is one of @kinds, with a reference. */
struct nvx_sys_file *nvx_sys_fget(struct nvx_sys_vm *vm, int fd,
				  unsigned int kinds);
/* Drop a reference nvx_sys_fget() took (NULL: nothing). */
void nvx_sys_fput(struct nvx_sys_vm *vm, struct nvx_sys_file *f);
/* Take the lowest free guest fd from 3: the fd, or -EMFILE. */
int nvx_sys_fd_reserve(struct nvx_sys_vm *vm);
/* Fill a reserved guest fd with @f, or give it back (@f NULL). */
void nvx_sys_fd_install(struct nvx_sys_vm *vm, int fd, struct nvx_sys_file *f);

struct nvx_sys_item {
	struct nvx_sys_item *next;
	struct nvx_uvm_recv r;
	struct nvx_sys_vm *vm;
	char *buf;		/* NVX_UVM_MAX_BULK bytes */
};

struct nvx_sys_worker {
	uint64_t key;		/* vm id << 32 | guest thread */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct nvx_sys_item *head, *tail;
	bool retire;		/* its VM is gone: end when the queue is empty */
	struct nvx_sys *sys;
};

/* A client's connection the function server passed for a VM. */
struct nvx_sys_conn {
	struct nvx_sys_conn *next;
	uint32_t vm_id;
	int fd;
};

struct nvx_sys {
	int ep_fd;
	int ctl_fd;			/* the function server's; -1: none */
	pthread_mutex_t conn_mu;
	pthread_cond_t conn_cv;
	struct nvx_sys_conn *conns;	/* passed, not taken by a READY */
	int root_fd;			/* O_PATH; -1: no root */
	uint64_t calls;			/* the tenant's */
	unsigned int open;
	struct nvx_sys_vm *vms;		/* the dispatcher's */
	struct nvx_sys_worker *workers[NVX_SYS_MAX_WORKERS];
	unsigned int nr_workers;	/* in the table */
	unsigned int live;		/* threads, retired ones too; atomic */
	pthread_mutex_t buf_mu;
	struct nvx_sys_item *free;	/* items with their buffers */
	/* the event loop (--uintr); -1 without */
	int nvx_fd;			/* the nvx device: UINTR_WAIT */
	int ev_rfd;			/* the main thread's receiver fd */
	int ev_vfd;			/* its vector fd, the endpoint's NOTIFY */
	uint64_t ev_msgs;		/* requests and notices taken */
	uint64_t ev_waits;		/* UINTR_WAITs made */
	uint64_t ev_empty;		/* nonblocking RECVs that found none */
};

/* --------------------------------------------- the forwarded calls --- */

/**
 * struct nvx_sys_call - one request being served
 * @sys: the process.
 * @vm: the VM's fd table.
 * @type: the message type.
 * @fc: the payload as a file call; @fc.ret is the completion's.
 * @payload: the completion's payload, for calls that are not file calls.
 * @buf: the PUSH data (the path of a path call; may be changed), then
 *	the PULL data.
 * @push_len: bytes the guest pushed (RECV's data_len); 0 without PUSH.
 * @in_len: of those, the bytes at @buf.
 * @room: bytes the guest's PULL segments hold; 0 without PULL.
 * @out: the reply's data (@buf unless a call points it elsewhere).
 * @out_len: its bytes, at most @room.
 * @st: FSTAT's reply.
 */
struct nvx_sys_call {
	struct nvx_sys *sys;
	struct nvx_sys_vm *vm;
	unsigned int type;
	struct nvx_uvm_fcall fc;
	uint8_t payload[NVX_UVM_PAYLOAD];
	char *buf;
	uint32_t push_len;
	uint32_t in_len;
	uint32_t room;
	void *out;
	uint32_t out_len;
	struct nvx_uvm_stat st;
};

static_assert(sizeof(struct nvx_uvm_fcall) <= NVX_UVM_PAYLOAD,
	      "a file call fits the payload");

/* ------------------------------------ the event loop (sys_ev.c) --- */

/* --uintr: handler, vector fd, the endpoint's NOTIFY: NVX_EXIT_*. */
int nvx_sys_ev_setup(struct nvx_sys *sys, const struct nvx_sys_opts *o);
/* The next request or notice: 0, RECV's errno, or -1 (said on stderr). */
int nvx_sys_ev_recv(struct nvx_sys *sys, struct nvx_uvm_recv *r);
/* What the event loop did (--verbose, at the end). */
void nvx_sys_ev_report(const struct nvx_sys *sys);

/* ----------------------------------------- sockets (sys_net.c) --- */

int nvx_sys_socket(struct nvx_sys_call *c);
int nvx_sys_bind(struct nvx_sys_call *c);
int nvx_sys_listen(struct nvx_sys_call *c);
int nvx_sys_accept(struct nvx_sys_call *c);
int nvx_sys_connect(struct nvx_sys_call *c);
int nvx_sys_send(struct nvx_sys_call *c);
int nvx_sys_sockrecv(struct nvx_sys_call *c);
int nvx_sys_shutdown(struct nvx_sys_call *c);
int nvx_sys_poll(struct nvx_sys_call *c);

/*
 * Wait until host socket @fd has one of @events (POLLIN, POLLOUT), in
 * slices that look whether @vm went: 0 (try again), 1 (shut down or in
 * error: if the call would block again, it always will), -ECONNRESET
 * (the VM went) or -errno (sys_net.c).
 */
int nvx_sys_sock_wait(struct nvx_sys_vm *vm, int fd, short events);

/* Enter @t's network namespace, if it names one: 0 or NVX_EXIT_FAIL. */
int nvx_sys_net_enter(const struct nvx_sys_tenant *t);

/*
 * Add the system calls the socket calls need to filter @f (a
 * scmp_filter_ctx), counting the rules in *@n: 0 or -errno. Called only
 * for a tenant that may make socket calls.
 */
int nvx_sys_net_seccomp(void *f, int *n);

#endif /* _NVX_SYS_INT_H */
