/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the nvx selftest group "uvm" (lib/uvm_util.c): VMMs that run
 * real guests (hello.img, echo.img, test.img) in threads of their own
 * with tools/nvx/lib/nvx_uvm.h, bare KVM VMs (no vCPU) attached with
 * NVX_UVM_ATTACH_SLOW whose rings a test writes itself, the system
 * process side that serves an endpoint, and the environment each test
 * gets (the images, a pool with POOL_CLEAN clean bytes, an endpoint).
 *
 * Nested KVM makes no progress at all in a kernel that failed to
 * calibrate its TSC (the harness boots with tsc_early_khz= for that): the
 * first "uvm" test of a program boots hello.img as a probe and, when it
 * does not finish within PROBE_MS, every "uvm" test of that program
 * skips, saying so.
 */
#ifndef NVX_UVM_UTIL_H
#define NVX_UVM_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "nvx_uvm.h"
#include "pool_util.h"

#define MIB		(1ULL << 20)
#define POOL_CLEAN	(64 * MIB)	/* clean pool memory a test may use */
#define VM_MEM		(4 * MIB)
#define EP_MAX_VMS	8U
#define MAX_VMMS	8
#define MAX_BARES	8
#define MAX_KIDS	4
#define DEADLINE_MS	120000		/* the longest wait on a guest */
#define PROBE_MS	60000
#define SHORT_MS	5000		/* for what should happen at once */
#define DEF_VMS		16U		/* max_vms 0 means this many */
#define KICK_SIG	SIGUSR2		/* makes KVM_RUN or RECV return EINTR */
#define HELLO		"hello from an nvx user VM\n"
#define BAD_PORT	0x80U

/* A user VM and its VMM thread. */
struct vmm {
	struct nvx_uvm_vm vm;
	struct nvx_uvm_opts o;
	char image[PATH_MAX];
	char *argv[16];
	pthread_t thread;
	bool created;		/* nvx_uvm_create() ran: destroy */
	bool started;		/* the thread runs nvx_uvm_run() */
	bool joined;
	int ret;		/* what nvx_uvm_run() returned */
	int done;		/* the thread finished (atomic) */
	int wake_fd;		/* eventfd written when it finishes */
	const char *where;	/* nvx_uvm_create()'s failed step */
};

/*
 * A KVM VM without a vCPU whose RAM is a grant mapped here: the test
 * plays the guest, writing the rings and ringing with KICK (slow
 * channel).
 */
struct bare {
	int kvm_fd, vm_fd, grant_fd, chan_fd;
	unsigned char *mem;
	uint64_t mem_size;
	struct nvx_uvm_ctrl *ctrl;
	struct nvx_uvm_msg *sq, *cq;
	uint32_t vm_id, sq_n, cq_n;
	uint32_t sq_prod, cq_cons;	/* the "guest's" */
};

/* What both fixtures hold. */
struct env {
	int fd;			/* /dev/nvx */
	int ep;			/* the endpoint, EP_MAX_VMS */
	uint32_t ep_id;
	int wake;		/* eventfd: a VMM thread finished */
	uint64_t grown;		/* what the pool was grown by */
	bool have_start;
	struct nvx_pool_stats start;
	char dir[PATH_MAX];	/* where the guest images are */
	struct vmm *vmms[MAX_VMMS];
	struct bare *bares[MAX_BARES];
	pid_t kids[MAX_KIDS];	/* SIGKILLed on the way out */
};

/* The system side of a test: serves an endpoint in the test thread. */
struct server {
	int ep;
	int wake;
	struct nvx_uvm_serve s;	/* out_fd, err_fd: memfds or /dev/null */
	/* NULL: the default service; else returns 0 or -errno */
	int (*handle)(struct server *sv, struct nvx_uvm_recv *r);
	void *priv;
	uint32_t tolerate_vm;	/* REPLY -ESRCH from this VM is expected */
	bool stop;		/* a handler asks serve_*() to return */
	uint64_t msgs;
	uint64_t gone;
	uint64_t esrch;
	struct nvx_uvm_recv last_gone;
	int err;		/* the first unexpected error */
	char why[256];
};

/*
 * Hold the message: the first of @type (with at least @min_len bytes of
 * data) after @after such ones were served. The rest gets the default
 * service.
 */
struct hold {
	uint16_t type;
	uint32_t min_len;
	uint32_t after;
	uint32_t seen;
	bool held;
	struct nvx_uvm_recv r;
};

enum { PROBE_UNKNOWN, PROBE_OK, PROBE_STUCK };

int catch_kick_sig(void);
char thread_state(pid_t tid);
uint32_t get_u32(const uint8_t *p);
uint64_t get_u64(const uint8_t *p);
void msg_init(struct nvx_uvm_msg *m, uint16_t type, uint32_t tag);
void bulk_pattern(unsigned char *p, uint32_t size);
void fill_bytes(unsigned char *p, size_t len, unsigned int seed);
uint64_t granted_now(int fd);
int ep_stats(int ep, struct nvx_uvm_ep_stats *st);
int wait_no_vms(int ep);
bool vmm_done(struct vmm *v);
struct vmm *vmm_new(struct env *e);
int __attribute__((sentinel)) vmm_launch(struct env *e, struct vmm *v,
					 int ep, int slow,
					 const char *name, ...);
int vmm_wait(struct vmm *v, uint64_t ms);
int vmm_stop(struct vmm *v, uint64_t ms);
int vmm_free(struct env *e, struct vmm *v);
const char *vmm_why(struct vmm *v);
void bare_free(struct env *e, struct bare *b);
int bare_new(struct env *e, struct bare **out);
void bare_args(const struct bare *b, int ep, uint32_t flags,
	       struct nvx_uvm_attach *a);
int bare_attach(struct env *e, struct bare *b, int ep, uint32_t flags);
int bare_kick(struct bare *b, uint32_t port);
int bare_post(struct bare *b, const struct nvx_uvm_msg *m);
int bare_complete(struct bare *b, struct nvx_uvm_msg *m);
int chan_status(int chan_fd, struct nvx_uvm_status *st);
int recv_nb(int ep, struct nvx_uvm_recv *r);
int kvm_vms(void);
int kvm_vms_are(int fd, const void *arg);
int serve_recv_by(int ep, struct nvx_uvm_serve *sv, struct nvx_uvm_recv *r,
		  uint64_t deadline);
int recv_gone(int ep, uint32_t vm_id, uint32_t reason,
	      struct nvx_uvm_recv *r);
void __attribute__((format(printf, 3, 4)))
sv_fail(struct server *sv, int err, const char *fmt, ...);
int server_init(struct server *sv, int ep, int wake, bool capture);
void server_fini(struct server *sv);
char *server_stdout(struct server *sv, size_t *len);
const char *server_stderr(struct server *sv);
int serve_default(struct server *sv, struct nvx_uvm_recv *r);
int serve_done(struct server *sv, struct vmm **v, int n, uint64_t ms);
int serve_for(struct server *sv, uint64_t ms);
int serve_until_stop(struct server *sv, uint64_t ms);
int hold_handle(struct server *sv, struct nvx_uvm_recv *r);
int probe_get(void);
void probe_set(int v);
int find_images(char *dir, size_t n);
void env_stop_all(struct env *e);
void env_release(struct env *e);
int add_kid(struct env *e, pid_t pid);
int reap_kid(struct env *e, pid_t pid);
int probe(struct env *e, char *why, size_t n);

#endif /* NVX_UVM_UTIL_H */
