// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench scale: user VMs started from a template (clones) against
 * fresh boots and host processes, and how much memory an idle clone
 * costs. This process is the VMM and the system side; one VM runs at a
 * time for the start times.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "bench.h"
#include "nvx_uvm.h"

enum {
	NVX_SCALE_OPT_RUNS = 0x100,
	NVX_SCALE_OPT_DENSITY,
};

/* the ways to start, measured in turn in every round */
enum {
	NVX_SCALE_FRESH,	/* boot the image */
	NVX_SCALE_CLONE,	/* clone the template, KVM VM made now */
	NVX_SCALE_PREPARED,	/* clone into a KVM VM made ahead */
	NVX_SCALE_EXEC,		/* fork + exec of a static host program */
	NVX_SCALE_FORK,		/* fork of this (warm) process */
	NVX_SCALE_NR
};

static const char *const nvx_scale_names[NVX_SCALE_NR] = {
	"fresh", "clone", "clone_prepared", "fork_exec", "fork",
};

#define NVX_SCALE_POOL	(16ULL << 20)
/* the /proc/meminfo lines of nvx_scale_parts[] */
#define NVX_SCALE_PARTS	7
#define NVX_KIB		1024ULL
/*
 * No message from any VM for this long: the bench stops and says which
 * VMs it was waiting for and where their vCPUs are, rather than waiting
 * for ever (the density run under TCG sends one every few ms).
 */
#define NVX_SCALE_QUIET_MS	60000
/* the stalled VMs described after a quiet period, at most */
#define NVX_SCALE_DESCRIBE	8

struct nvx_scale_vm {
	struct nvx_uvm_vm vm;
	pthread_t th;
	int ret;
	int joined;		/* th has ended and been joined */
	struct nvx_uvm_recv r;	/* density: its request, answered last */
	unsigned int got;	/* density: its requests and EXIT, received */
};

struct nvx_scale {
	struct nvx_ctx *ctx;
	unsigned int runs, density;
	int ep;
	struct nvx_uvm_serve sv;
	struct nvx_uvm_tmpl t;
	struct nvx_uvm_opts fresh, clone;
	char test[PATH_MAX], host[PATH_MAX];
	uint64_t *ns[NVX_SCALE_NR];
	double p50[NVX_SCALE_NR], p95[NVX_SCALE_NR], p99[NVX_SCALE_NR];
	/* density */
	long long avail_kib;	/* MemAvailable used by the idle clones */
	long long parts[NVX_SCALE_PARTS];	/* their growth, KiB */
	long long copied;	/* pages they copied */
	double per_vm_kib, per_gib;
	long long served_kib;	/* the same once each had one answer */
	double served_per_gib;
	/* the same run in a memory cgroup of its own (Junction's way) */
	int cg_on;
	long long cg_kib, cg_served_kib, cg_peak_kib;	/* over its start */
};

/*
 * The density run's memory cgroup: a child of the bench's cgroup v2
 * cgroup with the memory controller, the bench process moved into it for
 * the run. Its memory.current and memory.peak count what the VMM side
 * uses (its heap, stacks, page tables) and the kernel memory charged to
 * it: KVM's VMs, vCPUs and nested page tables, nvx's channels and the
 * clones' copied pages (all allocated with __GFP_ACCOUNT).
 */
struct nvx_scale_cg {
	char parent[PATH_MAX], dir[PATH_MAX];
};

static int nvx_scale_cg_write(const char *dir, const char *file,
			      const char *v)
{
	char path[PATH_MAX + 32];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A cgroup file's one number, bytes, in KiB; -1 when unreadable. */
static long long nvx_scale_cg_kib(const struct nvx_scale_cg *cg,
				  const char *file)
{
	char path[PATH_MAX + 32];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg->dir, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v < 0 ? -1 : v / 1024;
}

/* Make the cgroup and move the bench into it: 0 or -errno (then none). */
static int nvx_scale_cg_enter(struct nvx_scale_cg *cg)
{
	char line[PATH_MAX], pid[32];
	FILE *f;
	int ret;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		ret = snprintf(cg->parent, sizeof(cg->parent),
			       "/sys/fs/cgroup%s",
			       strcmp(line + 3, "/") ? line + 3 : "");
		ret = ret < (int)sizeof(cg->parent) ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	if (ret)
		return ret;
	/* fails where the parent holds processes and is not the root */
	nvx_scale_cg_write(cg->parent, "cgroup.subtree_control", "+memory");
	if (snprintf(cg->dir, sizeof(cg->dir), "%s/nvx-bench-scale.%d",
		     cg->parent, getpid()) >= (int)sizeof(cg->dir))
		return -ENAMETOOLONG;
	if (mkdir(cg->dir, 0755))
		return -errno;
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (nvx_scale_cg_kib(cg, "memory.peak") < 0)
		ret = -EOPNOTSUPP;
	else
		ret = nvx_scale_cg_write(cg->dir, "cgroup.procs", pid);
	if (ret)
		rmdir(cg->dir);
	return ret;
}

/* Move the bench back and remove the cgroup. */
static void nvx_scale_cg_leave(struct nvx_scale_cg *cg)
{
	char pid[32];
	int ret;

	snprintf(pid, sizeof(pid), "%d", getpid());
	ret = nvx_scale_cg_write(cg->parent, "cgroup.procs", pid);
	if (ret)
		nvx_err("bench scale: back to %s: %s", cg->parent,
			strerror(-ret));
	else if (rmdir(cg->dir))
		nvx_err("bench scale: rmdir %s: %s", cg->dir, strerror(errno));
}

static void nvx_scale_nop(int sig)
{
}

/*
 * Make a vCPU thread's nvx_uvm_run() return: set stop, then SIGUSR1
 * (no SA_RESTART) until the thread ends; a signal that came before
 * KVM_RUN was entered is sent again.
 */
static void nvx_scale_stop(struct nvx_scale_vm *v)
{
	if (v->joined)
		return;
	__atomic_store_n(&v->vm.stop, 1, __ATOMIC_RELAXED);
	while (pthread_tryjoin_np(v->th, NULL) == EBUSY) {
		pthread_kill(v->th, SIGUSR1);
		usleep(10000);
	}
	v->joined = 1;
}

static void *nvx_scale_vcpu(void *arg)
{
	struct nvx_scale_vm *v = arg;

	v->ret = nvx_uvm_run(&v->vm);
	return NULL;
}

/*
 * Where an idle clone's memory goes, from /proc/meminfo (KiB): the
 * kernel's unreclaimable slab (nvx channels and slots, KVM's vCPUs, files,
 * debugfs), vmalloc (KVM's struct kvm), the vCPU threads' kernel stacks,
 * the VMM's page tables, KVM's nested page tables (SecPageTables),
 * anonymous pages (the VMM's heap and thread stacks) and per-CPU memory.
 * The clones' copied pages are counted by nvx (copied_pages).
 */
static const char *const nvx_scale_parts[NVX_SCALE_PARTS] = {
	"SUnreclaim:", "VmallocUsed:", "KernelStack:", "PageTables:",
	"SecPageTables:", "AnonPages:", "Percpu:",
};

static void nvx_scale_parts_read(long long *v)
{
	unsigned int i;

	for (i = 0; i < NVX_ARRAY_SIZE(nvx_scale_parts); i++)
		v[i] = nvx_file_num("/proc/meminfo", nvx_scale_parts[i]);
}

/* MemAvailable of /proc/meminfo in KiB; -1 when unreadable. */
static long long nvx_scale_avail(void)
{
	return nvx_file_num("/proc/meminfo", "MemAvailable:");
}

/*
 * The next request that is not a VM_GONE notice (those are served);
 * -ETIMEDOUT after NVX_SCALE_QUIET_MS without any.
 */
static int nvx_scale_recv(struct nvx_scale *s, struct nvx_uvm_recv *r)
{
	struct pollfd p = { .fd = s->ep, .events = POLLIN };
	int ret;

	for (;;) {
		ret = poll(&p, 1, NVX_SCALE_QUIET_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (!ret)
			return -ETIMEDOUT;
		ret = nvx_uvm_recv(s->ep, &s->sv, r, NVX_UVM_RECV_NONBLOCK);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret || r->msg.type != NVX_UVM_MSG_VM_GONE)
			return ret;
		nvx_uvm_serve_msg(s->ep, &s->sv, r);
	}
}

/*
 * After a quiet period: the VMs of @v that sent fewer than @want
 * messages, each stopped and its vCPU described (the first
 * NVX_SCALE_DESCRIBE of them), then how many there were.
 */
static void nvx_scale_stalled(struct nvx_scale_vm *v, unsigned int nr,
			      unsigned int want)
{
	unsigned int i, n = 0;
	char text[512];

	for (i = 0; i < nr; i++) {
		if (v[i].got >= want)
			continue;
		if (n++ >= NVX_SCALE_DESCRIBE)
			continue;
		/* its thread may have ended by itself (a triple fault) */
		if (!v[i].joined && !pthread_tryjoin_np(v[i].th, NULL)) {
			v[i].joined = 1;
			nvx_err("bench scale: density: VM %u (clone %u) sent %u of %u messages: it ended: %s, exit %u, reason %s %s",
				v[i].vm.vm_id, i, v[i].got, want,
				strerror(-v[i].ret), v[i].vm.exit_status,
				nvx_uvm_reason_name(v[i].vm.reason),
				v[i].vm.fault);
			continue;
		}
		nvx_scale_stop(&v[i]);
		if (nvx_uvm_describe(&v[i].vm, text, sizeof(text)))
			snprintf(text, sizeof(text), "vCPU state unreadable");
		nvx_err("bench scale: density: VM %u (clone %u) sent %u of %u messages, still running: %s",
			v[i].vm.vm_id, i, v[i].got, want, text);
	}
	nvx_err("bench scale: density: %u of %u VMs silent for %d s", n, nr,
		NVX_SCALE_QUIET_MS / 1000);
}

/*
 * Start one VM the way @kind says, time it to its first request, serve
 * it to its EXIT message and take it down.
 */
static int nvx_scale_vm_once(struct nvx_scale *s, int kind, uint64_t *ns)
{
	struct nvx_scale_vm v;
	struct nvx_uvm_recv r;
	const char *where;
	uint64_t t0;
	int ret;

	memset(&v, 0, sizeof(v));
	if (kind == NVX_SCALE_PREPARED) {
		ret = nvx_uvm_prepare(&v.vm, &where);
		if (ret)
			goto fail;
	}
	t0 = nvx_now_ns();
	if (kind == NVX_SCALE_FRESH)
		ret = nvx_uvm_create(&v.vm, s->ctx->fd, &s->fresh, &where);
	else
		ret = nvx_uvm_clone(&v.vm, s->ctx->fd, &s->t, &s->clone,
				    &where);
	if (ret)
		goto fail;
	ret = pthread_create(&v.th, NULL, nvx_scale_vcpu, &v);
	if (ret) {
		ret = -ret;
		where = "pthread_create";
		goto fail;
	}
	ret = nvx_scale_recv(s, &r);
	*ns = nvx_now_ns() - t0;
	/* `test id`: one WRITE, then EXIT */
	while (!ret) {
		ret = nvx_uvm_serve_msg(s->ep, &s->sv, &r);
		if (ret || r.msg.type == NVX_UVM_MSG_EXIT)
			break;
		ret = nvx_scale_recv(s, &r);
	}
	if (ret)
		nvx_scale_stop(&v);
	else
		pthread_join(v.th, NULL);
	if (!ret && (v.ret || v.vm.exit_status))
		ret = -ECHILD;
	where = "serve";
	if (!ret) {
		nvx_uvm_destroy(&v.vm);
		return 0;
	}
fail:
	nvx_err("bench scale: %s: %s: %s", nvx_scale_names[kind], where,
		strerror(-ret));
	nvx_uvm_destroy(&v.vm);
	return ret;
}

static int nvx_scale_starts(struct nvx_scale *s)
{
	char *host_argv[2] = { s->host, NULL };
	unsigned int i, k;
	int ret = 0;

	for (k = 0; k < NVX_SCALE_NR; k++) {
		s->ns[k] = calloc(s->runs, sizeof(uint64_t));
		if (!s->ns[k])
			return -ENOMEM;
	}
	/* each round starts every kind once: drift touches all alike */
	for (i = 0; i < s->runs && !ret; i++) {
		for (k = 0; k < NVX_SCALE_NR && !ret; k++) {
			if (k == NVX_SCALE_EXEC)
				ret = nvx_bench_first_byte(host_argv,
							   &s->ns[k][i]);
			else if (k == NVX_SCALE_FORK)
				ret = nvx_bench_first_byte(NULL,
							   &s->ns[k][i]);
			else
				ret = nvx_scale_vm_once(s, k, &s->ns[k][i]);
			if (ret && k >= NVX_SCALE_EXEC)
				nvx_err("bench scale: %s: %s",
					nvx_scale_names[k], strerror(-ret));
		}
	}
	if (ret)
		return ret;
	for (k = 0; k < NVX_SCALE_NR; k++) {
		qsort(s->ns[k], s->runs, sizeof(uint64_t), nvx_bench_cmp_u64);
		s->p50[k] = nvx_bench_pct_ms(s->ns[k], s->runs, 0.5);
		s->p95[k] = nvx_bench_pct_ms(s->ns[k], s->runs, 0.95);
		s->p99[k] = nvx_bench_pct_ms(s->ns[k], s->runs, 0.99);
	}
	return 0;
}

/* The copied_pages of a grant fd's fdinfo; 0 when unreadable. */
static long long nvx_scale_copied(int fd)
{
	char path[64];
	long long v;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	v = nvx_file_num(path, "copied_pages:");
	return v > 0 ? v : 0;
}

/*
 * s->density idle clones at once (`test wait 2`: two IPC requests each,
 * one after the other, each answered only when all are in): MemAvailable
 * before, with every clone waiting for its first answer (idle, ready),
 * and with every clone waiting for its second (each served once).
 */
static int nvx_scale_density(struct nvx_scale *s)
{
	struct nvx_uvm_opts o = s->clone;
	char *argv[3];
	unsigned int i, k, started = 0, waiting = 0;
	struct nvx_scale_vm *v;
	struct nvx_uvm_recv r;
	const char *where;
	long long a0, a1 = 0, a2 = 0, p0[NVX_ARRAY_SIZE(nvx_scale_parts)];
	long long c0 = -1, c1 = -1, c2 = -1, peak = -1;
	struct nvx_scale_cg cg;
	int ret = 0;

	v = calloc(s->density, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = nvx_scale_cg_enter(&cg);
	s->cg_on = !ret;
	if (ret)
		nvx_err("bench scale: density: no memory cgroup of its own (%s): MemAvailable only",
			strerror(-ret));
	else
		c0 = nvx_scale_cg_kib(&cg, "memory.current");
	ret = 0;
	argv[0] = "test";
	argv[1] = "wait";
	argv[2] = "2";
	o.argc = 3;
	o.argv = argv;
	a0 = nvx_scale_avail();
	nvx_scale_parts_read(p0);
	for (i = 0; i < s->density; i++) {
		ret = nvx_uvm_clone(&v[i].vm, s->ctx->fd, &s->t, &o, &where);
		if (!ret) {
			where = "pthread_create";
			ret = -pthread_create(&v[i].th, NULL, nvx_scale_vcpu,
					      &v[i]);
		}
		if (ret) {
			nvx_err("bench scale: density: clone %u: %s: %s", i,
				where, strerror(-ret));
			nvx_uvm_destroy(&v[i].vm);
			break;
		}
		started++;
	}
	/* each clone's request, kept until all are in; twice */
	for (k = 0; k < 2 && !ret; k++) {
		for (waiting = 0; !ret && waiting < started; waiting++) {
			ret = nvx_scale_recv(s, &r);
			if (ret == -ETIMEDOUT)
				nvx_scale_stalled(v, started, k + 1);
			if (ret)
				break;
			for (i = 0; i < started; i++) {
				if (v[i].vm.vm_id == r.msg.src_vm) {
					v[i].r = r;
					v[i].got++;
				}
			}
		}
		if (ret)
			break;
		if (!k) {
			a1 = nvx_scale_avail();
			if (s->cg_on)
				c1 = nvx_scale_cg_kib(&cg, "memory.current");
			nvx_scale_parts_read(s->parts);
			for (i = 0; i < NVX_ARRAY_SIZE(nvx_scale_parts); i++)
				s->parts[i] -= p0[i];
			for (i = 0; i < started; i++)
				s->copied +=
					nvx_scale_copied(v[i].vm.grant_fd);
		} else {
			a2 = nvx_scale_avail();
			if (s->cg_on)
				c2 = nvx_scale_cg_kib(&cg, "memory.current");
		}
		/* answer them all: the second answer makes each exit */
		for (i = 0; i < started; i++)
			nvx_uvm_serve_msg(s->ep, &s->sv, &v[i].r);
	}
	/* then each exits (its EXIT message); after an error, stop them */
	waiting = started;
	while (!ret && waiting < 2 * started) {
		ret = nvx_scale_recv(s, &r);
		if (ret == -ETIMEDOUT)
			nvx_scale_stalled(v, started, 3);
		if (!ret)
			ret = nvx_uvm_serve_msg(s->ep, &s->sv, &r);
		if (ret || r.msg.type != NVX_UVM_MSG_EXIT)
			continue;
		waiting++;
		for (i = 0; i < started; i++)
			if (v[i].vm.vm_id == r.msg.src_vm)
				v[i].got++;
	}
	for (i = 0; i < started; i++) {
		if (ret)
			nvx_scale_stop(&v[i]);
		else
			pthread_join(v[i].th, NULL);
		nvx_uvm_destroy(&v[i].vm);
	}
	free(v);
	if (s->cg_on) {
		peak = nvx_scale_cg_kib(&cg, "memory.peak");
		nvx_scale_cg_leave(&cg);
		s->cg_on = c0 >= 0 && c1 >= 0 && c2 >= 0 && peak >= 0;
		s->cg_kib = c1 - c0;
		s->cg_served_kib = c2 - c0;
		s->cg_peak_kib = peak - c0;
	}
	if (ret)
		return ret;
	if (started < s->density)
		return -ENOMEM;
	s->avail_kib = a0 - a1;
	s->per_vm_kib = (double)s->avail_kib / s->density;
	s->per_gib = s->per_vm_kib > 0 ? (1024.0 * 1024) / s->per_vm_kib : 0;
	s->served_kib = a0 - a2;
	s->served_per_gib = s->served_kib > 0 ?
			    (1024.0 * 1024) * s->density / s->served_kib : 0;
	return 0;
}

/* A part's name without its colon, in @buf (16 bytes). */
static const char *nvx_scale_part_name(int k, char *buf)
{
	snprintf(buf, 16, "%.*s", (int)strlen(nvx_scale_parts[k]) - 1,
		 nvx_scale_parts[k]);
	return buf;
}

static void nvx_scale_print(struct nvx_scale *s)
{
	struct nvx_json *j = &s->ctx->js;
	char name[16];
	double headline = nvx_bench_div(s->p50[NVX_SCALE_CLONE],
					s->p50[NVX_SCALE_EXEC]);
	int k;

	if (s->ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "runs", s->runs);
		for (k = 0; k < NVX_SCALE_NR; k++) {
			nvx_json_object_begin(j, nvx_scale_names[k]);
			nvx_json_double(j, "p50_ms", s->p50[k]);
			nvx_json_double(j, "p95_ms", s->p95[k]);
			nvx_json_double(j, "p99_ms", s->p99[k]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "clone_over_fresh",
				nvx_bench_div(s->p50[NVX_SCALE_CLONE],
					      s->p50[NVX_SCALE_FRESH]));
		nvx_json_double(j, "prepared_over_fork_exec",
				nvx_bench_div(s->p50[NVX_SCALE_PREPARED],
					      s->p50[NVX_SCALE_EXEC]));
		nvx_json_object_begin(j, "density");
		nvx_json_u64(j, "vms", s->density);
		nvx_json_s64(j, "mem_available_kib", s->avail_kib);
		nvx_json_double(j, "kib_per_vm", s->per_vm_kib);
		nvx_json_double(j, "copied_pages_per_vm",
				nvx_bench_div(s->copied, s->density));
		nvx_json_double(j, "kib_per_vm_served",
				nvx_bench_div(s->served_kib, s->density));
		nvx_json_double(j, "per_gib_served", s->served_per_gib);
		nvx_json_object_begin(j, "kib_per_vm_in");
		for (k = 0; k < (int)NVX_ARRAY_SIZE(nvx_scale_parts); k++)
			nvx_json_double(j, nvx_scale_part_name(k, name),
					nvx_bench_div(s->parts[k], s->density));
		nvx_json_end(j);
		if (s->cg_on) {
			nvx_json_object_begin(j, "cgroup");
			nvx_json_double(j, "kib_per_vm",
					nvx_bench_div(s->cg_kib, s->density));
			nvx_json_double(j, "kib_per_vm_served",
					nvx_bench_div(s->cg_served_kib,
						      s->density));
			nvx_json_double(j, "peak_kib_per_vm",
					nvx_bench_div(s->cg_peak_kib,
						      s->density));
			nvx_json_double(j, "per_gib",
					nvx_bench_div(1024.0 * 1024 * s->density,
						      s->cg_peak_kib));
			nvx_json_end(j);
		}
		nvx_json_end(j);
		nvx_json_double(j, "per_gib", s->per_gib);
		nvx_json_double(j, "headline", headline);
		nvx_json_end(j);
		fputc('\n', stdout);
		return;
	}
	printf("start to the first request at the system side (or first byte), %u runs each:\n",
	       s->runs);
	printf("%-16s %10s %10s %10s\n", "how", "p50 ms", "p95 ms", "p99 ms");
	for (k = 0; k < NVX_SCALE_NR; k++)
		printf("%-16s %10.2f %10.2f %10.2f\n", nvx_scale_names[k],
		       s->p50[k], s->p95[k], s->p99[k]);
	printf("clone / fresh p50: %.3f   clone_prepared / fork_exec p50: %.3f\n",
	       nvx_bench_div(s->p50[NVX_SCALE_CLONE], s->p50[NVX_SCALE_FRESH]),
	       nvx_bench_div(s->p50[NVX_SCALE_PREPARED],
			     s->p50[NVX_SCALE_EXEC]));
	printf("density: %u idle clones used %lld KiB of MemAvailable:",
	       s->density, s->avail_kib);
	printf(" %.1f KiB each, %.0f per GiB; %.1f pages copied each\n",
	       s->per_vm_kib, s->per_gib, nvx_bench_div(s->copied, s->density));
	printf("  each served once: %.1f KiB each, %.0f per GiB\n",
	       nvx_bench_div(s->served_kib, s->density), s->served_per_gib);
	printf("  of which (idle), KiB per VM:");
	for (k = 0; k < (int)NVX_ARRAY_SIZE(nvx_scale_parts); k++)
		printf(" %s %.1f", nvx_scale_part_name(k, name),
		       nvx_bench_div(s->parts[k], s->density));
	printf("\n");
	if (s->cg_on) {
		printf("  in the run's memory cgroup, KiB per VM: %.1f idle,",
		       nvx_bench_div(s->cg_kib, s->density));
		printf(" %.1f served, %.1f at memory.peak: %.0f per GiB\n",
		       nvx_bench_div(s->cg_served_kib, s->density),
		       nvx_bench_div(s->cg_peak_kib, s->density),
		       nvx_bench_div(1024.0 * 1024 * s->density,
				     s->cg_peak_kib));
	}
	printf("headline (clone p50 / fork+exec p50): %.3f\n", headline);
}

int cmd_bench_scale(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, NVX_SCALE_OPT_RUNS },
		{ "density", required_argument, NULL, NVX_SCALE_OPT_DENSITY },
		{ }
	};
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC };
	char *fresh_argv[2], *tmpl_argv[3];
	struct nvx_pool_resize grow = { 0 };
	struct nvx_scale s = { .runs = 100, .density = 100, .ctx = ctx };
	struct sigaction sa = { .sa_handler = nvx_scale_nop };
	struct nvx_uvm_opts tmpl;
	const char *where;
	unsigned long long v;
	int c, k, ret;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_SCALE_OPT_RUNS:
			if (nvx_parse_uint(optarg, 100000, &v) || !v)
				return nvx_usage_error(ctx, "bad --runs: %s",
						       optarg);
			s.runs = v;
			break;
		case NVX_SCALE_OPT_DENSITY:
			if (nvx_parse_uint(optarg, NVX_UVM_MAX_VMS - 2, &v) ||
			    !v)
				return nvx_usage_error(ctx,
					"bad --density: %s", optarg);
			s.density = v;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (nvx_uvm_find_image("test", s.test, sizeof(s.test)) ||
	    nvx_uvm_find_image("hello-host", s.host, sizeof(s.host))) {
		nvx_err("bench scale: test or hello-host not found (set NVX_GUEST_DIR)");
		return NVX_EXIT_FAIL;
	}
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	/* six fds per VM; a stop signal that ends KVM_RUN */
	nvx_nofile_max(6UL * (s.density + 2) + 64);
	sigaction(SIGUSR1, &sa, NULL);
	grow.node = NVX_NODE_ANY;
	grow.bytes = NVX_SCALE_POOL;
	ret = nvx_ioctl(ctx, NVX_IOC_POOL_GROW, &grow, "NVX_IOC_POOL_GROW");
	if (ret)
		return ret;
	ep.max_vms = s.density + 2;
	ret = nvx_ioctl(ctx, NVX_IOC_UVM_ENDPOINT, &ep,
			"NVX_IOC_UVM_ENDPOINT");
	if (ret)
		goto out_shrink;
	s.ep = ep.fd;
	s.sv.in_fd = -1;
	s.sv.out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	s.sv.err_fd = 2;
	s.sv.buf = malloc(NVX_UVM_MAX_BULK);
	ret = -ENOMEM;
	if (s.sv.out_fd < 0 || !s.sv.buf)
		goto out;
	fresh_argv[0] = "test";
	fresh_argv[1] = "id";
	tmpl_argv[0] = "test";
	tmpl_argv[1] = "template";
	tmpl_argv[2] = "id";
	s.fresh.image = s.test;
	s.fresh.argc = 2;
	s.fresh.argv = fresh_argv;
	s.fresh.ep_fd = s.ep;
	s.clone = s.fresh;
	s.clone.argc = 0;	/* the template's: `test template id` */
	s.clone.argv = NULL;

	/* its VM's VM_GONE notice is taken by the first RECV */
	tmpl = s.fresh;
	tmpl.argc = 3;
	tmpl.argv = tmpl_argv;
	ret = nvx_uvm_tmpl_make(&s.t, ctx->fd, &tmpl, &where);
	if (ret) {
		nvx_err("bench scale: template: %s: %s", where, strerror(-ret));
		goto out;
	}
	ret = nvx_scale_starts(&s);
	if (!ret)
		ret = nvx_scale_density(&s);
	if (!ret)
		nvx_scale_print(&s);
	else
		nvx_err("bench scale: %s", strerror(-ret));
	nvx_uvm_tmpl_free(&s.t);
out:
	for (k = 0; k < NVX_SCALE_NR; k++)
		free(s.ns[k]);
	free(s.sv.buf);
	if (s.sv.out_fd >= 0)
		close(s.sv.out_fd);
	close(s.ep);
out_shrink:
	nvx_bench_shrink(ctx, grow.done, "scale");
	return ret ? NVX_EXIT_FAIL : NVX_EXIT_OK;
}

const char nvx_bench_scale_usage[] =
	"[--runs N] [--density N]\n"
	"\n"
	"User VMs started from a template, in the same run as the baselines.\n"
	"This process is the VMM and the system side. The template is the\n"
	"guest `test template id` frozen at its ready point. Each round starts,\n"
	"one at a time: a fresh VM of `test id` (fresh), a clone of the\n"
	"template (clone: the KVM VM made in the measured time), a clone into\n"
	"a KVM VM made ahead of demand (clone_prepared), a static host\n"
	"program by fork+exec (fork_exec, to the first byte on its stdout)\n"
	"and a fork of this process (fork, the child's first byte). A VM's\n"
	"time runs from the start to its first request at the system side\n"
	"(its WRITE). --runs rounds (default 100); p50, p95, p99 of each.\n"
	"\n"
	"Density: --density N idle clones at once (default 100, at most 4094:\n"
	"one endpoint), each blocked on a request: MemAvailable before and\n"
	"after, per VM and per GiB, again once each had one request served\n"
	"(\"each served once\"; JSON \"kib_per_vm_served\", \"per_gib_served\"),\n"
	"the pages each copied, and the growth per\n"
	"VM of the /proc/meminfo lines a VM adds to (\"of which\"; JSON\n"
	"\"kib_per_vm_in\" in \"density\").\n"
	"Where cgroup v2 has the memory controller, the same run is made in a\n"
	"memory cgroup of its own (this process moved into it): memory.current\n"
	"over its start per VM idle and served, memory.peak per VM and VMs per\n"
	"GiB at that peak (JSON \"cgroup\" in \"density\": \"kib_per_vm\",\n"
	"\"kib_per_vm_served\", \"peak_kib_per_vm\", \"per_gib\"); it counts\n"
	"this VMM's memory and the kernel memory charged to it (KVM's, nvx's,\n"
	"the clones' copies).\n"
	"Grows the pool by 16 MiB (CAP_SYS_ADMIN) and gives that back.\n"
	"Under QEMU TCG the times are not hardware times: compare the ratios.\n"
	"JSON: per way (\"fresh\", \"clone\", \"clone_prepared\", \"fork_exec\",\n"
	"\"fork\"): \"p50_ms\", \"p95_ms\", \"p99_ms\"; \"clone_over_fresh\",\n"
	"\"prepared_over_fork_exec\", \"density\" (\"vms\",\n"
	"\"mem_available_kib\", \"kib_per_vm\", \"copied_pages_per_vm\"),\n"
	"\"per_gib\" (at --density VMs) and \"headline\": clone p50 / fork_exec\n"
	"p50.\n";
