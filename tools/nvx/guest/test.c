// SPDX-License-Identifier: GPL-2.0
/*
 * test: the guest half of the nvx user VM selftests. "test MODE [ARGS]"
 * exercises one part of the ring protocol, or breaks one of its rules
 * on purpose so that the host must stop the VM. Exit status 0 is
 * success; a misbehaving mode that is not stopped exits with 99.
 */
#include "rt.h"

#define NOT_STOPPED	99
#define SETTLE_NS	1000000000ULL

static char **args;
static int nargs;

static unsigned long arg(int i, unsigned long def)
{
	return i < nargs ? strtoul(args[i], NULL, 0) : def;
}

/*
 * The host should have stopped us by now. A bad message may be judged
 * only when the system process takes it, so wait for its completion;
 * otherwise give the host a moment. Either way: not stopped.
 */
static noreturn void not_stopped(int wait_completion)
{
	struct nvx_uvm_msg m;
	unsigned long long t0 = clock_ns();

	if (wait_completion)
		nvx_complete(&m);
	else
		while (clock_ns() - t0 < SETTLE_NS)
			cpu_relax();
	exit_now(NOT_STOPPED);
}

static void msg_init(struct nvx_uvm_msg *m, unsigned int type,
		     unsigned int tag)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->tag = tag;
}

static int test_ping(void)
{
	unsigned long n = arg(2, 1), w = arg(3, 1), sent = 0, got = 0;
	unsigned long long v;
	struct nvx_uvm_msg m;

	if (!w)
		w = 1;
	if (w > ctrl()->cq_entries)
		w = ctrl()->cq_entries;
	while (got < n) {
		while (sent < n && sent - got < w) {
			msg_init(&m, NVX_UVM_MSG_IPC, sent);
			v = sent;
			memcpy(m.payload, &v, sizeof(v));
			nvx_submit(&m);
			sent++;
		}
		nvx_complete(&m);
		memcpy(&v, m.payload, sizeof(v));
		if (m.tag != (unsigned int)got)
			return 10;
		if (v != got + 1)
			return 11;
		if (m.status)
			return 12;
		got++;
	}
	return 0;
}

static int test_bulk(void)
{
	unsigned long size = arg(2, 4096), off = arg(3, 0), k;
	struct nvx_uvm_msg m;
	unsigned char *buf = alloc(size + off, 4096);

	if (!buf)
		return 2;
	buf += off;
	for (k = 0; k < size; k++)
		buf[k] = (k * 7 + size) & 0xff;
	nvx_xfer(NVX_UVM_MSG_WRITE, 1, buf, size, NVX_UVM_MSGF_PUSH, &m);
	if (m.status || m.bulk_len != size)
		return 20;
	memset(buf, 0, size);
	nvx_xfer(NVX_UVM_MSG_READ, 0, buf, size, NVX_UVM_MSGF_PULL, &m);
	if (m.status || m.bulk_len != size)
		return 21;
	for (k = 0; k < size; k++)
		if (buf[k] != ((k * 7 + size) & 0xff))
			return 22;
	return 0;
}

static int test_seed(void)
{
	const unsigned char *s = seed();
	char out[NVX_UVM_SEED_SIZE * 2 + 1];
	int i;

	for (i = 0; i < NVX_UVM_SEED_SIZE; i++) {
		out[2 * i] = "0123456789abcdef"[s[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[s[i] & 15];
	}
	out[2 * i] = '\n';
	return write(1, out, sizeof(out)) != sizeof(out);
}

static int test_args(void)
{
	char *line;
	unsigned long len;
	int i;

	for (i = 0; i < nargs; i++) {
		len = strlen(args[i]);
		line = alloc(len + 1, 1);
		if (!line)
			return 2;
		memcpy(line, args[i], len);
		line[len] = '\n';
		if (write(1, line, len + 1) != (long)len + 1)
			return 1;
	}
	return 0;
}

static int test_clock(void)
{
	char buf[21];
	unsigned int n = fmt_u64(buf, realtime_ns(), 10);

	buf[n++] = '\n';
	return write(1, buf, n) != n;
}

/* one WRITE of fd 1 with the segment @sg, not waited for */
static void bad_write(const struct nvx_uvm_sg *sg, unsigned long sg_gpa)
{
	static struct nvx_uvm_sg seg __aligned(16);
	struct nvx_uvm_msg m;

	seg = *sg;
	msg_init(&m, NVX_UVM_MSG_WRITE, 1);
	m.payload[0] = 1;
	m.flags = NVX_UVM_MSGF_PUSH;
	m.sg_gpa = sg_gpa ? sg_gpa : (unsigned long)&seg;
	m.sg_nr = 1;
	nvx_post(&m);
	not_stopped(1);
}

static int test_bad(const char *mode)
{
	struct nvx_uvm_ctrl *c = ctrl();
	struct nvx_uvm_sg sg = { 0 };
	struct nvx_uvm_msg m;
	unsigned int i;

	if (!strcmp(mode, "badport")) {
		port_out8(0x80, 0);
		not_stopped(0);
	}
	if (!strcmp(mode, "badring")) {
		__atomic_store_n(&c->sq_prod, c->sq_prod + c->sq_entries + 5,
				 __ATOMIC_RELEASE);
		nvx_doorbell();
		not_stopped(0);
	}
	if (!strcmp(mode, "oversize")) {
		sg.len = NVX_UVM_MAX_BULK + 1;
		sg.gpa = (unsigned long)alloc(sg.len, 4096);
		if (!sg.gpa)
			return 2;
		bad_write(&sg, 0);
	}
	if (!strcmp(mode, "badaddr")) {
		sg.gpa = c->mem_size - 16;
		sg.len = 4096;
		bad_write(&sg, 0);
	}
	if (!strcmp(mode, "badsg")) {
		sg.gpa = 0x100000;
		sg.len = 16;
		bad_write(&sg, c->mem_size + 0x1000);
	}
	if (!strcmp(mode, "badmsg")) {
		msg_init(&m, 0, 1);
		nvx_post(&m);
		not_stopped(1);
	}
	if (!strcmp(mode, "flood")) {
		for (i = 0; i <= c->cq_entries; i++) {
			msg_init(&m, NVX_UVM_MSG_IPC, i);
			nvx_post(&m);
		}
		not_stopped(1);
	}
	return -1;
}

static int test_pushloop(void)
{
	unsigned long len = 64 << 10;
	char *buf = alloc(len, 4096);

	if (!buf)
		return 2;
	memset(buf, 'x', len);
	print("pushing\n");
	for (;;)
		write(1, buf, len);
}

static int test_wait(void)
{
	struct nvx_uvm_msg m;

	msg_init(&m, NVX_UVM_MSG_IPC, 1);
	nvx_call(&m);
	return 0;
}

static int print_usage(void)
{
	static const char *const u[] = {
		"usage: test MODE [ARGS]\n",
		"modes: ping N [W] | bulk SIZE OFF | seed | args | clock |\n",
		"  spin | pushloop | wait | badport | badring | oversize |\n",
		"  badaddr | badsg | badmsg | flood\n",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(u); i++)
		write(2, u[i], strlen(u[i]));
	return 2;
}

int nvx_main(int argc, char **argv)
{
	const char *mode;
	int ret;

	args = argv;
	nargs = argc;
	if (argc < 2)
		return print_usage();
	mode = argv[1];
	if (!strcmp(mode, "ping"))
		return test_ping();
	if (!strcmp(mode, "bulk"))
		return test_bulk();
	if (!strcmp(mode, "seed"))
		return test_seed();
	if (!strcmp(mode, "args"))
		return test_args();
	if (!strcmp(mode, "clock"))
		return test_clock();
	if (!strcmp(mode, "spin")) {
		print("spinning\n");
		for (;;)
			cpu_relax();
	}
	if (!strcmp(mode, "pushloop"))
		return test_pushloop();
	if (!strcmp(mode, "wait"))
		return test_wait();
	ret = test_bad(mode);
	return ret < 0 ? print_usage() : ret;
}
