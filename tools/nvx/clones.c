// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: `nvxtool uvm run --clones N IMAGE [-- ARGS...]`: boot IMAGE to
 * its ready point, freeze it into a template (lib/uvm.c,
 * nvx_uvm_tmpl_make()), then start N clones of it, each with a vCPU
 * thread of this process, all attached to the tenant's one endpoint.
 * Documentation/nvx/uvm.rst, "Templates and clones".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvxtool.h"
#include "nvx_uvm.h"

#define NVX_CLONE_MAX_ARGS	64

struct nvx_clone {
	struct nvx_uvm_vm vm;
	pthread_t th;
	int ret;
	uint64_t start_ns;	/* NVX_GRANT_IOC_CLONE .. ATTACH */
	long long copied;	/* pages the clone copied, at its end */
	char *argv[NVX_CLONE_MAX_ARGS];
	char buf[NVX_UVM_ARGS_SIZE];
};

static uint64_t nvx_clone_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *nvx_clone_thread(void *arg)
{
	struct nvx_clone *c = arg;

	c->ret = nvx_uvm_run(&c->vm);
	return NULL;
}

/*
 * Clone @idx's arguments: the image name, then @spec split at spaces,
 * each "%i" word replaced by @idx. Returns argc, or -E2BIG.
 */
static int nvx_clone_args(struct nvx_clone *c, const char *image,
			  const char *spec, unsigned int idx)
{
	size_t off = strlen(spec) + 1;
	int argc = 1, i;
	char *w, *save;

	c->argv[0] = (char *)image;
	if (off > sizeof(c->buf))
		return -E2BIG;
	memcpy(c->buf, spec, off);
	for (w = strtok_r(c->buf, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		if (argc == NVX_CLONE_MAX_ARGS)
			return -E2BIG;
		c->argv[argc++] = w;
	}
	/* "%i" words point at a number of their own, after the words */
	for (i = 1; i < argc; i++) {
		char *num;
		int n;

		if (strcmp(c->argv[i], "%i"))
			continue;
		num = c->buf + off;
		n = snprintf(num, sizeof(c->buf) - off, "%u", idx);
		if (n < 0 || (size_t)n >= sizeof(c->buf) - off)
			return -E2BIG;
		c->argv[i] = num;
		off += n + 1;
	}
	return argc;
}

static int nvx_clone_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The copied_pages line of a grant fd's fdinfo; -1 when unreadable. */
static long long nvx_clone_copied(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return nvx_file_num(path, "copied_pages:");
}

static void nvx_clone_stats(struct nvx_clone *c, unsigned int n,
			    uint64_t tmpl_ns, uint64_t all_ns)
{
	uint64_t *ns = calloc(n, sizeof(*ns));
	long long copied = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		copied += c[i].copied > 0 ? c[i].copied : 0;
	if (tmpl_ns)
		fprintf(stderr, "template: ready and sealed in %.1f ms\n",
			tmpl_ns / 1e6);
	if (!ns || !n) {
		free(ns);
		return;
	}
	for (i = 0; i < n; i++)
		ns[i] = c[i].start_ns;
	qsort(ns, n, sizeof(*ns), nvx_clone_cmp);
	fprintf(stderr,
		"clones: %u started in %.1f ms; each (clone, KVM, restore, attach) p50 %.2f ms, p99 %.2f ms, max %.2f ms; pages copied %lld (%.1f per clone)\n",
		n, all_ns / 1e6, ns[n / 2] / 1e6, ns[(n * 99) / 100] / 1e6,
		ns[n - 1] / 1e6, copied, (double)copied / n);
	free(ns);
}

/**
 * nvx_uvm_run_clones() - a template of @o (or @loaded), then @n clones
 * @ctx: the command; ctx->fd is the nvx device.
 * @o: the template's VM (image, arguments, endpoint @o->ep_fd, which this
 *	closes once the last clone attached, or on an error: from then on
 *	only the system process holds the endpoint, and its death stops
 *	the clones). With @loaded, the endpoint and the clones' arguments
 *	(@o->argc 0: the template's).
 * @loaded: a template from a file (nvx_uvm_tmpl_load()), or NULL to make
 *	one of @o; this frees it.
 * @n: clones, at least 1.
 * @spec: the clones' arguments (split at spaces, "%i" = the clone's
 *	index), or NULL for the template's.
 * @stats: print start times and copied pages on stderr.
 * @started: out: the clones that ran (fewer than @n after an error).
 *
 * The clones run at once, each in its own vCPU thread; this returns when
 * all have ended.
 *
 * Return: 0 when every clone exited 0; else the first clone's status that
 * was not (as uvm run's), NVX_UVM_EXIT_STOPPED when the template or a
 * clone could not be made.
 */
int nvx_uvm_run_clones(struct nvx_ctx *ctx, const struct nvx_uvm_opts *o,
		       struct nvx_uvm_tmpl *loaded, unsigned int n,
		       const char *spec, bool stats, unsigned int *nr_started)
{
	uint64_t t0, t1, tmpl_ns = 0;
	unsigned int i, started = 0;
	struct nvx_uvm_opts co = *o;
	struct nvx_uvm_tmpl *t;
	struct nvx_clone *c;
	const char *where;
	int ret = 0, status = 0;

	*nr_started = 0;
	/* six fds per VM (the template's and the clones') */
	nvx_nofile_max(6UL * (n + 1) + 64);
	t = loaded ? loaded : calloc(1, sizeof(*t));
	c = calloc(n, sizeof(*c));
	if (!t || !c) {
		nvx_err("uvm: clones: %s", strerror(ENOMEM));
		close(o->ep_fd);
		if (loaded)
			nvx_uvm_tmpl_free(loaded);
		else
			free(t);
		free(c);
		return NVX_UVM_EXIT_STOPPED;
	}
	t0 = nvx_clone_now();
	if (!loaded) {
		ret = nvx_uvm_tmpl_make(t, ctx->fd, o, &where);
		tmpl_ns = nvx_clone_now() - t0;
	}
	if (ret == -ENOEXEC && !t->reason) {
		nvx_err("uvm: template: the guest exited with status %u before its ready point",
			t->exit_status);
		goto out;
	}
	if (ret == -ENOEXEC) {
		nvx_err("uvm: template: the guest was stopped before its ready point: %s",
			nvx_uvm_reason_name(t->reason));
		goto out;
	}
	if (ret) {
		nvx_err("uvm: template: %s: %s", where, strerror(-ret));
		goto out;
	}

	t1 = nvx_clone_now();
	for (i = 0; i < n; i++) {
		uint64_t s = nvx_clone_now();

		co.argc = loaded ? o->argc : 0;
		if (spec) {
			ret = nvx_clone_args(&c[i], loaded ? t->name :
					     o->argv[0], spec, i);
			if (ret < 0) {
				nvx_err("uvm: --clone-args: too long");
				break;
			}
			co.argc = ret;
			co.argv = c[i].argv;
		}
		ret = nvx_uvm_clone(&c[i].vm, ctx->fd, t, &co, &where);
		c[i].start_ns = nvx_clone_now() - s;
		if (ret) {
			nvx_err("uvm: clone %u: %s: %s", i, where,
				strerror(-ret));
			nvx_uvm_destroy(&c[i].vm);
			break;
		}
		ret = pthread_create(&c[i].th, NULL, nvx_clone_thread, &c[i]);
		if (ret) {
			nvx_err("uvm: clone %u: pthread_create: %s", i,
				strerror(ret));
			nvx_uvm_destroy(&c[i].vm);
			break;
		}
		started++;
	}
	t1 = nvx_clone_now() - t1;
	*nr_started = started;
	close(o->ep_fd);
	if (started < n)
		status = NVX_UVM_EXIT_STOPPED;
	/* the clones started run to their end; they share nothing with us */
	for (i = 0; i < started; i++) {
		pthread_join(c[i].th, NULL);
		c[i].copied = nvx_clone_copied(c[i].vm.grant_fd);
		ret = nvx_uvm_report(&c[i].vm, c[i].ret);
		if (ret && !status)
			status = ret;
		nvx_uvm_destroy(&c[i].vm);
	}
	if (stats)
		nvx_clone_stats(c, started, loaded ? 0 : tmpl_ns, t1);
	nvx_uvm_tmpl_free(t);
	free(c);
	if (!loaded)
		free(t);
	return status;
out:
	close(o->ep_fd);
	free(c);
	if (loaded)
		nvx_uvm_tmpl_free(t);
	else
		free(t);
	return NVX_UVM_EXIT_STOPPED;
}
