// SPDX-License-Identifier: GPL-2.0
/*
 * test: the guest half of the nvx user VM selftests. "test MODE [ARGS]"
 * exercises one part of the ring protocol, or breaks one of its rules
 * on purpose so that the host must stop the VM. Exit status 0 is
 * success; a misbehaving mode that is not stopped exits with 99.
 * Numbers are decimal or 0x hex (no octal); DIRFD may be negative.
 *
 * Ring protocol: ping N [W] | bulk SIZE OFF | seed | args | clock |
 * spin | pushloop | wait [N] | badport | badring | oversize | badaddr |
 * badsg | badmsg | flood.
 *   ping-gap N MAXUS		ping N times, one at a time, after a pause
 *				of 0..MAXUS us (pseudo-random, spinning)
 *				before each: a poller that sleeps after
 *				about that long is caught going to sleep
 *				as the guest publishes; exit 0, or as ping
 *   plain			for a VM without nvx (no channel, the
 *				control page written by the VMM): the ready
 *				port, then halted (the safety tick backing
 *				off as in a wait) until the control page's
 *				cq_prod is set; exit 0 by the exit port only
 *
 * File calls (served by the system process). Each prints its result on
 * stdout, a line per call; "err E" (E the positive errno) for a call
 * that failed. Exit status 0 unless said otherwise:
 *   open PATH [FLAGS]		open(), mode 0644: "fd N"
 *   openat DIRFD PATH [FLAGS [MODE]]  openat(), PATH as given: "fd N"
 *   openlong N			openat(NVX_UVM_FD_ROOT) of N bytes ('a's
 *				and the NUL): "fd N"
 *   opennonul			an OPENAT whose path has no NUL: "fd N"
 *   cat PATH			the file's bytes, as they are
 *   write PATH TEXT		O_WRONLY|O_CREAT|O_TRUNC, 0644: "ok"
 *   pwrite PATH OFF TEXT	O_WRONLY|O_CREAT, 0644: "ok BYTES"
 *   stat PATH			"type dir|reg|other size N mode OCTAL
 *				nlink N" (mode: permission bits)
 *   ls PATH			one name a line, not "." and ".."
 *   mkdir PATH [MODE]		mode 0755: "ok"
 *   rm PATH | rmdir PATH	"ok"
 *   mv OLD NEW			"ok"
 *   trunc PATH LEN		"ok"
 *   lseek PATH			lseek(SEEK_END): "size N"
 *   fsync PATH			"ok"
 *   random N			getrandom() N bytes: "ok N"; exit 1 when
 *				N >= 16 and every byte is zero
 *   fdops			fds never opened, one line each ("ok R" if a
 *				call succeeds): read(7), close(7), pread(100),
 *				fstat(63), close(1000), close(-5)
 *   sysfuzz			for fd -1, 0x7fffffff, 64, 65, 3..10:
 *				close(fd), read(fd), fstat(fd), as fdops
 *   hold PATH MS		open() read-only: "fd N"; keep it open MS
 *				ms (halted between the runtime's 10 ms
 *				ticks, attached all along), then read 5
 *				bytes: "read N", and close it
 *   usefd N			an fd this VM may not have: read(N, 16),
 *				pread(N, 16, 0), fstat(N), close(N), one
 *				line each ("ok R" if a call succeeds)
 *
 * VM-to-VM messages (exit 0, or 1 with "MODE: WHAT at ITERATION: ..."
 * on stderr; 2 when out of memory or LEN > NVX_UVM_MAX_BULK). Bulk
 * buffers start at odd offsets and cross pages. The pattern of
 * iteration S: byte K is (K * 7 + (K >> 8) * 13 + S * 31) & 0xff.
 *   vm-echo N [MAXLEN]		N times: RECV with PULL room MAXLEN
 *				(NVX_UVM_MAX_BULK), send the bytes and the
 *				payload back to the sender (PUSH)
 *   vm-ping DST N LEN [SEGS]	N times: send LEN pattern bytes (PUSH, in
 *				SEGS segments) and payload[0..7] = the
 *				iteration to DST, then RECV the echo (PULL,
 *				SEGS segments) and check it. Prints
 *				"ping N LEN ok" and "rtt_ns X" (per round trip)
 *   vm-offer N LEN		N times: RECV offering LEN pattern bytes
 *				(PUSH) to a PULL sender
 *   vm-pull DST N LEN		N times: send to DST with PULL room LEN;
 *				check LEN pattern bytes came
 *   vm-send DST [LEN]		one send of LEN (0) pattern bytes (PUSH):
 *				"status S bulk B"
 *   vm-recv1			one RECV (PULL, NVX_UVM_MAX_BULK room):
 *				"from V bulk B status S"
 *
 * Relayed by the system process instead (the benchmark's baseline):
 * IPC to dst 0 with payload[0..3] (u32) = RELAY_SEND 1 (PUSH data) or
 * RELAY_RECV 2 (PULL room: the other VM's next RELAY_SEND).
 *   relay-ping N LEN		N times: RELAY_SEND LEN pattern bytes, then
 *				RELAY_RECV the echo and check it. Prints
 *				"relay N LEN ok" and "rtt_ns X"
 *   relay-echo N		N times: RELAY_RECV (up to NVX_UVM_MAX_BULK),
 *				RELAY_SEND the same bytes
 *
 * Sockets (served by the system process in the tenant's network
 * namespace). A line per call, "err E" for a call that failed, as the
 * file calls; exit 0 unless said otherwise. IP is dotted-quad IPv4.
 *   sock-echo PORT N [IP]	listen on IP (127.0.0.1):PORT: "listening";
 *				then N times: accept, "accepted PEER_IP",
 *				echo until the peer's EOF, close; "done N".
 *				Exit 1 after "err E"
 *   sock-connect IP PORT [TEXT]  connect: "ok"; with TEXT send it, shut
 *				down writing, read to EOF: "got BYTES"
 *   sock-connect6 IP PORT	an IPv6 socket's connect to ::ffff:IP: "ok"
 *   sock-fds [PATH]		socket: "fd N", close it: "ok"; then on it
 *				send, recv, listen, accept, shutdown, and
 *				listen(64), listen(-1): EBADF each; listen
 *				and send on stdio fds 1, 0: ENOTSOCK; with
 *				PATH open it ("fd N") and listen on it:
 *				ENOTSOCK, poll it: "poll 1 revents 32"
 *   sock-use FD		an fd of another VM: send, recv, bind,
 *				listen, accept, connect, shutdown, one
 *				line each; poll: "poll N revents R"
 *   sock-poll PORT		a listener on 127.0.0.1:PORT, a client
 *				connected to it and the accepted socket,
 *				polled in several ways: "poll N revents
 *				R..." lines, "recv N", "ok"
 *   sock-bad			malformed socket calls, a line each
 *
 * Function server guests (nvxtool uvm serve --listen): each says READY,
 * then fd 0 and 1 are a client's connection. A READ or WRITE that fails
 * prints "MODE: read R" or "MODE: write R" (R the negative errno) on
 * stderr and exits 1. The guest writes with single WRITE messages whose
 * status it checks (write() counts a failed one's bytes as written).
 *   serve-exit		read once (up to 4 KiB), exit 3 without writing
 *   serve-crash		read once, then write port 0x80 (as badport)
 *   serve-mute		read until EOF, never write; exit 0
 *   serve-deaf [MS]	never read: wait MS ms (60000), exit 0
 *   serve-flood		write 'a'..'z' over and over until a WRITE
 *				fails (the stream's byte K is 'a' + K % 26)
 *   serve-mix		read the client's first line, then do what it
 *				says: "echo" (send back every byte after
 *				the line, until EOF; exit 0), "exit",
 *				"crash", "mute", "deaf [MS]" or "flood"
 *				as the modes above; exit 2 for another
 *
 * For nvx-bench sys:
 *   bench-pread PATH N LEN	N preads of LEN bytes at offset 0 of PATH
 *   deny N			N messages of type NVX_UVM_MSG_GUEST_MAX,
 *				each must complete with -EPERM
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

/* arg() with an optional '-' */
static long sarg(int i, long def)
{
	if (i >= nargs)
		return def;
	if (args[i][0] == '-')
		return -(long)strtoul(args[i] + 1, NULL, 0);
	return strtoul(args[i], NULL, 0);
}

/* ----------------------------------------------------------- output --- */

/* one line of output, built here and written at once */
static char line[256];
static unsigned int line_n;

static void lstr(const char *s)
{
	while (*s && line_n < sizeof(line) - 1)
		line[line_n++] = *s++;
}

static void lnum(long long v)
{
	unsigned long long u = v;

	if (line_n > sizeof(line) - 23)
		return;
	if (v < 0) {
		line[line_n++] = '-';
		u = -u;
	}
	line_n += fmt_u64(line + line_n, u, 10);
}

static void lend(int fd)
{
	line[line_n++] = '\n';
	write(fd, line, line_n);
	line_n = 0;
}

/* "WORD V" */
static void say(const char *word, long long v)
{
	lstr(word);
	lstr(" ");
	lnum(v);
	lend(1);
}

/* A call's result: "err E" when it failed, else "ok" or "ok R". */
static int result(long long r, int show)
{
	if (r < 0)
		say("err", -r);
	else if (show)
		say("ok", r);
	else
		print("ok\n");
	return 0;
}

/* "MODE: WHAT at I: ..." on stderr; exit status 1 */
static void fail_at(const char *what, unsigned long i)
{
	lstr(args[1]);
	lstr(": ");
	lstr(what);
	lstr(" at ");
	lnum(i);
	lstr(": ");
}

static int fail(const char *what, unsigned long i, long long v)
{
	fail_at(what, i);
	lnum(v);
	lend(2);
	return 1;
}

/* "MODE: WHAT at I: status S bulk B" for a completion @m */
static int fail_msg(const char *what, unsigned long i,
		    const struct nvx_uvm_msg *m)
{
	fail_at(what, i);
	lstr("status ");
	lnum(m->status);
	lstr(" bulk ");
	lnum(m->bulk_len);
	lend(2);
	return 1;
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

/* Submit ping @i: IPC, tag @i, payload[0..7] = @i. */
static void ping_send(unsigned long i)
{
	unsigned long long v = i;
	struct nvx_uvm_msg m;

	msg_init(&m, NVX_UVM_MSG_IPC, i);
	memcpy(m.payload, &v, sizeof(v));
	nvx_submit(&m);
}

/* Take the next completion: ping @i's answer (0), or 10, 11, 12. */
static int ping_check(unsigned long i)
{
	unsigned long long v;
	struct nvx_uvm_msg m;

	nvx_complete(&m);
	memcpy(&v, m.payload, sizeof(v));
	if (m.tag != (unsigned int)i)
		return 10;
	if (v != i + 1)
		return 11;
	if (m.status)
		return 12;
	return 0;
}

static int test_ping(void)
{
	unsigned long n = arg(2, 1), w = arg(3, 1), sent = 0, got = 0;
	int ret;

	if (!w)
		w = 1;
	if (w > ctrl()->cq_entries)
		w = ctrl()->cq_entries;
	while (got < n) {
		while (sent < n && sent - got < w)
			ping_send(sent++);
		ret = ping_check(got++);
		if (ret)
			return ret;
	}
	return 0;
}

static int test_ping_gap(void)
{
	unsigned long n = arg(2, 1), max = arg(3, 100), i;
	unsigned long long until;
	unsigned int x = 12345;
	int ret;

	for (i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		until = clock_ns() + (x >> 8) % (max + 1) * 1000;
		while (clock_ns() < until)
			cpu_relax();
		ping_send(i);
		ret = ping_check(i);
		if (ret)
			return ret;
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

/* "id": this VM's id (the control page's vm_id) */
static int test_id(void)
{
	char buf[21];
	unsigned int n = fmt_u64(buf, ctrl()->vm_id, 10);

	buf[n++] = '\n';
	return write(1, buf, n) != n;
}

/* Prepared before the ready point: what every clone starts from. */
static unsigned char tmpl_page[4096] __aligned(4096);
static unsigned int tmpl_vm;

static int print_usage(void);

/*
 * "template [MODE ARGS...]": prepare (a page of 'T's, the VM's id noted),
 * stop at the ready point, then run the mode the arguments name now: a
 * clone's own arguments, or MODE ARGS... when they are still these.
 */
static int t_template(void)
{
	char **av;
	int ac;

	memset(tmpl_page, 'T', sizeof(tmpl_page));
	tmpl_vm = ctrl()->vm_id;
	if (ready_point())
		return 40;
	ac = rt_args(&av);
	if (ac >= 2 && !strcmp(av[1], "template")) {
		av[1] = av[0];
		av++;
		ac--;
	}
	if (ac >= 2 && !strcmp(av[1], "template"))
		return print_usage();
	return nvx_main(ac, av);
}

/*
 * "template-raw-busy": the ready port written with a message in flight,
 * as a guest that is not the runtime may: the VMM must refuse to make a
 * template (the guest then goes on and takes its completion).
 */
static int t_template_raw_busy(void)
{
	struct nvx_uvm_msg m;

	msg_init(&m, NVX_UVM_MSG_IPC, 1);
	if (nvx_submit(&m))
		return 42;
	port_out32(NVX_UVM_PORT_READY, 0);
	nvx_complete(&m);
	return 0;
}

/* "template-busy": the ready point refuses while a message is in flight */
static int t_template_busy(void)
{
	struct nvx_uvm_msg m;
	int ret;

	msg_init(&m, NVX_UVM_MSG_IPC, 1);
	if (nvx_submit(&m))
		return 42;
	ret = ready_point();
	nvx_complete(&m);
	return ret == -EBUSY ? 0 : 41;
}

/*
 * "tmpl-check [file]", in a clone of "template": the prepared page is as
 * the template left it (no other clone's writes), the id is not the
 * template's (ids are per endpoint: with "file", a template made on
 * another endpoint, only that one was noted); then the clone writes its
 * own id over the page.
 */
static int t_tmpl_check(void)
{
	unsigned int id = ctrl()->vm_id, i;
	int file = nargs > 2 && !strcmp(args[2], "file");

	for (i = 0; i < sizeof(tmpl_page); i++)
		if (tmpl_page[i] != 'T')
			return 31;
	if (!tmpl_vm || (id == tmpl_vm && !file))
		return 32;
	memset(tmpl_page, id & 0xff, sizeof(tmpl_page));
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

/* N (1) IPC requests, one after the other: idle while each waits */
static int test_wait(void)
{
	unsigned long i, n = arg(2, 1);
	struct nvx_uvm_msg m;

	for (i = 0; i < n; i++) {
		msg_init(&m, NVX_UVM_MSG_IPC, 1 + i);
		nvx_call(&m);
	}
	return 0;
}

/*
 * "plain": a guest of a KVM VM that nvx does not know (uvm_scale_many's
 * control, nvx_uvm_plain()): it never sends a message, idles as one
 * waiting for a reply does, and leaves by the exit port when the VMM
 * sets cq_prod and signals its interrupt.
 */
static int t_plain(void)
{
	port_out32(NVX_UVM_PORT_READY, 0);
	/* checked with interrupts off: the VMM's interrupt wakes the hlt */
	asm volatile("cli" ::: "memory");
	while (!__atomic_load_n(&ctrl()->cq_prod, __ATOMIC_ACQUIRE)) {
		halt();
		halt_woke(1);
	}
	exit_now(0);
	return 0;
}

/* ------------------------------------------------------- file calls --- */

#define CHUNK		(64 << 10)
#define NAME_OFF	__builtin_offsetof(struct linux_dirent64, d_name)

/* "fd N" or "err E" */
static int fd_result(long long fd)
{
	if (fd < 0)
		return result(fd, 1);
	say("fd", fd);
	return 0;
}

static int t_open(void)
{
	return fd_result(open(args[2], arg(3, O_RDONLY), 0644));
}

static int t_openat(void)
{
	return fd_result(openat(sarg(2, 0), args[3], arg(4, O_RDONLY),
				arg(5, 0644)));
}

static int t_openlong(void)
{
	unsigned long n = arg(2, 1);
	char *path = alloc(n ? n : 1, 1);

	if (!path)
		return 2;
	memset(path, 'a', n);
	path[n ? n - 1 : 0] = 0;
	return fd_result(openat(NVX_UVM_FD_ROOT, path, O_RDONLY, 0));
}

static int t_opennonul(void)
{
	static char path[] = { 'a', 'b', 'c' };
	struct nvx_uvm_fcall fc = { .fd = NVX_UVM_FD_ROOT };
	struct nvx_uvm_msg m;
	int st;

	nvx_msg(&m, NVX_UVM_MSG_OPENAT);
	memcpy(m.payload, &fc, sizeof(fc));
	st = nvx_call_bulk(&m, path, sizeof(path), NVX_UVM_MSGF_PUSH, 1);
	memcpy(&fc, m.payload, sizeof(fc));
	return fd_result(st < 0 ? st : fc.ret);
}

static int t_cat(void)
{
	char *buf = alloc(CHUNK, 4096);
	int fd = open(args[2], O_RDONLY, 0);
	unsigned long k;
	long n;

	if (!buf)
		return 2;
	/* fresh heap, also in a clone: no other clone's READ landed here */
	for (k = 0; k < CHUNK; k++)
		if (buf[k])
			return 34;
	if (fd < 0)
		return result(fd, 1);
	while ((n = read(fd, buf, CHUNK)) > 0)
		write(1, buf, n);
	if (n < 0)
		result(n, 1);
	close(fd);
	return 0;
}

static int t_write(void)
{
	unsigned long len = strlen(args[3]);
	int fd = open(args[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long n;

	if (fd < 0)
		return result(fd, 1);
	n = write(fd, args[3], len);
	if (n >= 0 && (unsigned long)n != len)
		n = -EIO;
	if (n >= 0)
		n = close(fd);
	return result(n, 0);
}

static int t_pwrite(void)
{
	int fd = open(args[2], O_WRONLY | O_CREAT, 0644);

	if (fd < 0)
		return result(fd, 1);
	return result(pwrite(fd, args[4], strlen(args[4]), arg(3, 0)), 1);
}

static int t_stat(void)
{
	struct nvx_uvm_stat st;
	int fd = open(args[2], O_RDONLY, 0), ret;
	char oct[12];

	if (fd < 0)
		return result(fd, 1);
	ret = fstat(fd, &st);
	if (ret < 0)
		return result(ret, 1);
	oct[fmt_u64(oct, st.mode & 07777, 8)] = 0;
	lstr("type ");
	lstr((st.mode & S_IFMT) == S_IFDIR ? "dir" :
	     (st.mode & S_IFMT) == S_IFREG ? "reg" : "other");
	lstr(" size ");
	lnum(st.size);
	lstr(" mode ");
	lstr(oct);
	lstr(" nlink ");
	lnum(st.nlink);
	lend(1);
	return 0;
}

static int t_ls(void)
{
	char *buf = alloc(CHUNK, 4096);
	int fd = open(args[2], O_RDONLY | O_DIRECTORY, 0);
	struct linux_dirent64 *d;
	long n, k;

	if (!buf)
		return 2;
	if (fd < 0)
		return result(fd, 1);
	while ((n = getdents64(fd, buf, CHUNK)) > 0) {
		for (k = 0; k < n; k += d->d_reclen) {
			d = (struct linux_dirent64 *)(buf + k);
			if (d->d_reclen < NAME_OFF + 2 || d->d_reclen > n - k)
				return result(-EIO, 1);
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			lstr(d->d_name);
			lend(1);
		}
	}
	if (n < 0)
		result(n, 1);
	close(fd);
	return 0;
}

/* open @path, call @fn on the fd with @arg, close: "ok" or "err E" */
static int on_fd(const char *path, int flags,
		 int (*fn)(int fd, unsigned long long arg),
		 unsigned long long arg)
{
	int fd = open(path, flags, 0), ret;

	if (fd < 0)
		return result(fd, 0);
	ret = fn(fd, arg);
	if (!ret)
		ret = close(fd);
	return result(ret, 0);
}

static int do_fsync(int fd, unsigned long long arg)
{
	(void)arg;
	return fsync(fd);
}

static int t_trunc(void)
{
	return on_fd(args[2], O_WRONLY, ftruncate, arg(3, 0));
}

static int t_fsync(void)
{
	return on_fd(args[2], O_RDONLY, do_fsync, 0);
}

static int t_lseek(void)
{
	int fd = open(args[2], O_RDONLY, 0);
	long long off;

	if (fd < 0)
		return result(fd, 1);
	off = lseek(fd, 0, SEEK_END);
	if (off < 0)
		return result(off, 1);
	say("size", off);
	return 0;
}

static int t_mkdir(void)
{
	return result(mkdir(args[2], arg(3, 0755)), 0);
}

static int t_rm(void)
{
	return result(unlink(args[2]), 0);
}

static int t_rmdir(void)
{
	return result(rmdir(args[2]), 0);
}

static int t_mv(void)
{
	return result(rename(args[2], args[3]), 0);
}

static int t_random(void)
{
	unsigned long n = arg(2, 32), done = 0, k;
	unsigned char *buf = alloc(n, 16), any = 0;
	long r;

	if (!buf)
		return 2;
	while (done < n) {
		r = getrandom(buf + done, n - done);
		if (r <= 0)
			return result(r ? r : -EIO, 1);
		done += r;
	}
	for (k = 0; k < n; k++)
		any |= buf[k];
	say("ok", n);
	return n >= 16 && !any;
}

/* close, read and fstat of fds that were never opened */
static void bad_fd(int fd, int ops)
{
	struct nvx_uvm_stat st;
	char buf[16];

	if (ops & 1)
		result(close(fd), 1);
	if (ops & 2)
		result(read(fd, buf, sizeof(buf)), 1);
	if (ops & 4)
		result(fstat(fd, &st), 1);
}

static int t_fdops(void)
{
	char buf[16];

	bad_fd(7, 2);
	bad_fd(7, 1);
	result(pread(100, buf, sizeof(buf), 0), 1);
	bad_fd(63, 4);
	bad_fd(1000, 1);
	bad_fd(-5, 1);
	return 0;
}

static int t_sysfuzz(void)
{
	static const int fds[] = { -1, 0x7fffffff, 64, 65 };
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		bad_fd(fds[i], 7);
	for (fd = 3; fd <= 10; fd++)
		bad_fd(fd, 7);
	return 0;
}

/*
 * Wait @ms milliseconds, still attached. With the runtime's safety tick
 * (when the VMM gave an interrupt vector) halt, woken at least every
 * 10 ms, which costs next to nothing; else spin.
 */
static void pause_ms(unsigned long ms)
{
	unsigned long long end = clock_ns() + ms * 1000000ULL;
	unsigned int vec = ctrl()->irq_vector;
	int tick = vec >= 32 && vec < 255;

	while (clock_ns() < end) {
		if (tick)
			halt();
		else
			cpu_relax();
	}
}

static int t_hold(void)
{
	int fd = open(args[2], O_RDONLY, 0), ret;
	char buf[5];
	long n;

	if (fd < 0)
		return result(fd, 1);
	say("fd", fd);
	pause_ms(arg(3, 0));
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		result(n, 1);
	else
		say("read", n);
	ret = close(fd);
	if (ret < 0)
		result(ret, 1);
	return 0;
}

static int t_usefd(void)
{
	struct nvx_uvm_stat st;
	int fd = sarg(2, 0);
	char buf[16];

	result(read(fd, buf, sizeof(buf)), 1);
	result(pread(fd, buf, sizeof(buf), 0), 1);
	result(fstat(fd, &st), 1);
	result(close(fd), 1);
	return 0;
}

/* ---------------------------------------------------------- sockets --- */

/* "err E", exit status 1 */
static int sock_fail(long long r)
{
	say("err", -r);
	return 1;
}

/* "accepted A.B.C.D" (or "accepted family F" for an IPv6 peer) */
static void say_peer(const struct nvx_uvm_sockaddr *a)
{
	unsigned int i;

	lstr("accepted ");
	if (a->family != AF_INET) {
		lstr("family ");
		lnum(a->family);
	}
	for (i = 0; a->family == AF_INET && i < 4; i++) {
		if (i)
			lstr(".");
		lnum(a->addr[i]);
	}
	lend(1);
}

static int t_sock_echo(void)
{
	unsigned long n = arg(3, 1), i;
	char *buf = alloc(CHUNK, 4096);
	struct nvx_uvm_sockaddr a;
	long got, put;
	int l, c, ret;

	if (!buf)
		return 2;
	if (sockaddr4(&a, nargs > 4 ? args[4] : "127.0.0.1", arg(2, 0)))
		return sock_fail(-EINVAL);
	l = socket(AF_INET, SOCK_STREAM);
	if (l < 0)
		return sock_fail(l);
	ret = bind(l, &a);
	if (!ret)
		ret = listen(l, 8);
	if (ret)
		return sock_fail(ret);
	print("listening\n");
	for (i = 0; i < n; i++) {
		c = accept(l, &a, 0);
		if (c < 0)
			return sock_fail(c);
		say_peer(&a);
		while ((got = recv(c, buf, CHUNK, 0)) > 0) {
			put = send(c, buf, got, 0);
			if (put != got)
				return sock_fail(put < 0 ? put : -EIO);
		}
		if (got < 0)
			return sock_fail(got);
		ret = close(c);
		if (ret)
			return sock_fail(ret);
	}
	say("done", n);
	return 0;
}

static int t_sock_connect(void)
{
	char *buf = alloc(CHUNK, 4096);
	struct nvx_uvm_sockaddr a;
	long got, total = 0;
	int fd, ret;

	if (!buf)
		return 2;
	if (sockaddr4(&a, args[2], arg(3, 0)))
		return result(-EINVAL, 1);
	fd = socket(AF_INET, SOCK_STREAM);
	if (fd < 0)
		return result(fd, 1);
	ret = connect(fd, &a);
	result(ret, 0);
	if (ret || nargs < 5)
		return 0;
	got = send(fd, args[4], strlen(args[4]), 0);
	if (got < 0)
		return result(got, 1);
	ret = shutdown(fd, SHUT_WR);
	if (ret)
		return result(ret, 1);
	while ((got = recv(fd, buf, CHUNK, 0)) > 0)
		total += got;
	if (got < 0)
		return result(got, 1);
	say("got", total);
	return 0;
}

static int t_sock_connect6(void)
{
	struct nvx_uvm_sockaddr a;
	int fd;

	if (sockaddr4(&a, args[2], arg(3, 0)))
		return result(-EINVAL, 1);
	/* ::ffff:A.B.C.D */
	a.family = AF_INET6;
	a.addr[15] = a.addr[3];
	a.addr[14] = a.addr[2];
	a.addr[13] = a.addr[1];
	a.addr[12] = a.addr[0];
	memset(a.addr, 0, 10);
	a.addr[10] = 0xff;
	a.addr[11] = 0xff;
	fd = socket(AF_INET6, SOCK_STREAM);
	if (fd < 0)
		return result(fd, 1);
	return result(connect(fd, &a), 0);
}

/* "poll N revents R0 R1 ..." */
static void say_poll(int n, const unsigned char *rev, unsigned int nr)
{
	unsigned int i;

	lstr("poll ");
	lnum(n);
	lstr(" revents");
	for (i = 0; i < nr; i++) {
		lstr(" ");
		lnum(n < 0 ? 0 : rev[i]);
	}
	lend(1);
}

/* poll one fd for @events, @ms: "poll N revents R" */
static void poll1(int fd, unsigned int events, int ms)
{
	struct nvx_uvm_pollfd p = { .fd = fd, .events = events };
	unsigned char rev;
	int n = poll(&p, 1, ms, &rev);

	if (n < 0)
		result(n, 1);
	else
		say_poll(n, &rev, 1);
}

/* the socket calls on @fd, a line each, with arguments good but for it */
static void sock_calls(int fd)
{
	struct nvx_uvm_sockaddr a;
	char buf[8];

	sockaddr4(&a, "127.0.0.1", 1);
	result(send(fd, "x", 1, 0), 1);
	result(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 1);
	result(bind(fd, &a), 1);
	result(listen(fd, 1), 1);
	result(accept(fd, NULL, MSG_DONTWAIT), 1);
	result(connect(fd, &a), 1);
	result(shutdown(fd, SHUT_RDWR), 1);
}

static int t_sock_fds(void)
{
	char buf[8];
	int fd = socket(AF_INET, SOCK_STREAM);

	if (fd < 0)
		return result(fd, 1);
	say("fd", fd);
	result(close(fd), 0);
	result(send(fd, "x", 1, 0), 1);
	result(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 1);
	result(listen(fd, 1), 1);
	result(accept(fd, NULL, MSG_DONTWAIT), 1);
	result(shutdown(fd, SHUT_RDWR), 1);
	result(listen(64, 1), 1);
	result(listen(-1, 1), 1);
	result(listen(1, 1), 1);
	result(send(0, "x", 1, 0), 1);
	if (nargs < 3)
		return 0;
	fd = open(args[2], O_RDONLY, 0);
	if (fd < 0)
		return result(fd, 1);
	say("fd", fd);
	result(listen(fd, 1), 1);
	poll1(fd, POLLIN, 0);
	return 0;
}

static int t_sock_use(void)
{
	int fd = sarg(2, 0);

	sock_calls(fd);
	poll1(fd, POLLIN, 0);
	return 0;
}

static int t_sock_poll(void)
{
	struct nvx_uvm_pollfd p[6];
	struct nvx_uvm_sockaddr a;
	unsigned char rev[6];
	int l, c, s, n;
	char buf[16];

	if (sockaddr4(&a, "127.0.0.1", arg(2, 0)))
		return result(-EINVAL, 1);
	l = socket(AF_INET, SOCK_STREAM);
	c = socket(AF_INET, SOCK_STREAM);
	if (l < 0 || c < 0)
		return result(l < 0 ? l : c, 1);
	n = bind(l, &a);
	if (!n)
		n = listen(l, 4);
	if (!n)
		n = connect(c, &a);
	if (n)
		return result(n, 1);
	s = accept(l, NULL, 0);
	if (s < 0)
		return result(s, 1);
	print("ok\n");

	/* nothing to accept or read; c writable; fd 40 and stdout: NVAL */
	memset(p, 0, sizeof(p));
	p[0].fd = l;
	p[0].events = POLLIN;
	p[1].fd = c;
	p[1].events = POLLOUT;
	p[2].fd = s;
	p[2].events = POLLIN | POLLPRI;
	p[3].fd = 40;
	p[3].events = POLLIN;
	p[4].fd = -1;
	p[4].events = POLLIN;
	p[5].fd = 1;
	p[5].events = POLLOUT;
	n = poll(p, 6, -1, rev);
	say_poll(n, rev, 6);

	/* data arrives: woken from a wait */
	send(c, "x", 1, 0);
	poll1(s, POLLIN, 10000);
	/* a timeout: none */
	poll1(l, POLLIN, 200);
	/* the peer's EOF after the byte */
	shutdown(c, SHUT_WR);
	say("recv", recv(s, buf, sizeof(buf), 0));
	poll1(s, POLLIN, 10000);
	say("recv", recv(s, buf, sizeof(buf), 0));
	/* nothing to read: MSG_DONTWAIT is EAGAIN at once */
	close(c);
	poll1(c, POLLIN, 0);
	result(accept(l, NULL, MSG_DONTWAIT), 1);
	return 0;
}

/* One socket call with raw payload fields and PUSH data @buf/@len. */
static int raw_sock(unsigned int type, int fd, unsigned int flags,
		    unsigned long long arg, void *buf, unsigned int len)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .flags = flags, .arg = arg };
	struct nvx_uvm_msg m;

	nvx_msg(&m, type);
	memcpy(m.payload, &fc, sizeof(fc));
	return nvx_call_bulk(&m, buf, len, NVX_UVM_MSGF_PUSH, 1);
}

static int t_sock_bad(void)
{
	struct nvx_uvm_pollfd p[NVX_UVM_POLL_MAX + 1];
	struct nvx_uvm_sockaddr a, b;
	char buf[40];
	int fd;

	result(socket(99, SOCK_STREAM), 1);		/* EAFNOSUPPORT */
	result(socket(AF_INET, 3), 1);			/* EINVAL */
	result(socket(AF_INET, 0), 1);
	fd = socket(AF_INET, SOCK_STREAM);
	if (fd < 0)
		return result(fd, 1);
	say("fd", fd);
	/* unknown flags */
	result(send(fd, "x", 1, 0x4), 1);
	result(send(fd, "x", 1, MSG_PEEK), 1);
	result(recv(fd, buf, 1, 0x4), 1);
	result(accept(fd, NULL, MSG_PEEK), 1);
	result(shutdown(fd, 3), 1);
	result(raw_sock(NVX_UVM_MSG_LISTEN, fd, 1, 1, NULL, 0), 1);
	/* addresses: pad, IPv4's spare bytes, family, size */
	sockaddr4(&a, "127.0.0.1", 1);
	b = a;
	b.pad = 1;
	result(bind(fd, &b), 1);
	b = a;
	b.addr[4] = 1;
	result(connect(fd, &b), 1);
	b = a;
	b.family = 1;
	result(bind(fd, &b), 1);
	result(raw_sock(NVX_UVM_MSG_BIND, fd, 0, 0, &a, sizeof(a) - 4), 1);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &a, sizeof(a));
	result(raw_sock(NVX_UVM_MSG_CONNECT, fd, 0, 0, buf, sizeof(a) + 4),
	       1);
	result(raw_sock(NVX_UVM_MSG_CONNECT, fd, 1, 0, &a, sizeof(a)), 1);
	/* poll: too many entries, pad, events, a partial entry */
	memset(p, 0, sizeof(p));
	result(poll(p, NVX_UVM_POLL_MAX + 1, 0, NULL), 1);
	p[0].fd = fd;
	p[0].events = POLLIN;
	p[0].pad = 1;
	result(poll(p, 1, 0, NULL), 1);
	p[0].pad = 0;
	p[0].events = POLLERR;
	result(poll(p, 1, 0, NULL), 1);
	p[0].events = POLLIN;
	result(raw_sock(NVX_UVM_MSG_POLL, 0, 0, 0, p, sizeof(p[0]) + 4), 1);
	result(raw_sock(NVX_UVM_MSG_POLL, 0, 1, 0, p, sizeof(p[0])), 1);
	/* and the socket is still good: nothing to accept (not listening) */
	result(accept(fd, NULL, MSG_DONTWAIT), 1);
	return 0;
}

/* --------------------------------------------------------- VM-to-VM --- */

#define RELAY_SEND	1
#define RELAY_RECV	2

static unsigned char pat(unsigned long k, unsigned long seed)
{
	return k * 7 + (k >> 8) * 13 + seed * 31;
}

static void pattern(unsigned char *p, unsigned long len, unsigned long seed)
{
	unsigned long k;

	for (k = 0; k < len; k++)
		p[k] = pat(k, seed);
}

/* @len bytes that start @skew bytes before a page boundary */
static unsigned char *xbuf(unsigned long len, unsigned int skew)
{
	unsigned char *p = alloc(len + 8192, 4096);

	return p ? p + 4096 - skew : NULL;
}

static int t_vm_echo(void)
{
	unsigned long n = arg(2, 1), max = arg(3, NVX_UVM_MAX_BULK), i;
	unsigned char *buf = xbuf(max, 37);
	struct nvx_uvm_msg in, out;
	int st;

	if (!buf || max > NVX_UVM_MAX_BULK)
		return 2;
	for (i = 0; i < n; i++) {
		st = vm_recv(buf, max, NVX_UVM_MSGF_PULL, NULL, &in);
		if (st || in.bulk_len > max)
			return fail_msg("recv", i, &in);
		st = vm_send(in.src_vm, in.payload, buf, in.bulk_len,
			     NVX_UVM_MSGF_PUSH, &out);
		if (st || out.bulk_len != in.bulk_len)
			return fail_msg("send", i, &out);
	}
	return 0;
}

/* "WHAT N LEN ok" and "rtt_ns X" */
static int round_trips(const char *what, unsigned long n, unsigned long len,
		       unsigned long long ns)
{
	lstr(what);
	lstr(" ");
	lnum(n);
	lstr(" ");
	lnum(len);
	lstr(" ok");
	lend(1);
	say("rtt_ns", n ? ns / n : 0);
	return 0;
}

static int t_vm_ping(void)
{
	unsigned long dst = arg(2, 0), n = arg(3, 1), len = arg(4, 64);
	unsigned long segs = arg(5, 1), i;
	unsigned char *out = xbuf(len, 37), *in = xbuf(len, 1000);
	__u8 pl[NVX_UVM_PAYLOAD] = { 0 };
	unsigned long long ns = 0, t0;
	struct nvx_uvm_msg m;
	int st;

	if (!out || !in || len > NVX_UVM_MAX_BULK)
		return 2;
	for (i = 0; i < n; i++) {
		pattern(out, len, i);
		memset(in, 0, len);
		memcpy(pl, &i, sizeof(i));
		t0 = clock_ns();
		nvx_msg(&m, NVX_UVM_MSG_IPC);
		m.dst = dst;
		memcpy(m.payload, pl, sizeof(pl));
		st = nvx_call_bulk(&m, out, len, NVX_UVM_MSGF_PUSH, segs);
		if (st || m.bulk_len != len)
			return fail_msg("send", i, &m);
		nvx_msg(&m, NVX_UVM_MSG_RECV);
		st = nvx_call_bulk(&m, in, len, NVX_UVM_MSGF_PULL, segs);
		ns += clock_ns() - t0;
		if (st || m.bulk_len != len)
			return fail_msg("recv", i, &m);
		if (m.src_vm != dst)
			return fail("recv from", i, m.src_vm);
		if (memcmp(in, out, len))
			return fail("echoed bytes differ", i, 0);
		if (memcmp(m.payload, pl, sizeof(pl)))
			return fail("echoed payload differs", i, 0);
	}
	return round_trips("ping", n, len, ns);
}

static int t_vm_offer(void)
{
	unsigned long n = arg(2, 1), len = arg(3, 64), i;
	unsigned char *buf = xbuf(len, 37);
	struct nvx_uvm_msg m;
	int st;

	if (!buf || len > NVX_UVM_MAX_BULK)
		return 2;
	for (i = 0; i < n; i++) {
		pattern(buf, len, i);
		st = vm_recv(buf, len, NVX_UVM_MSGF_PUSH, NULL, &m);
		if (st)
			return fail("recv", i, st);
	}
	return 0;
}

static int t_vm_pull(void)
{
	unsigned long dst = arg(2, 0), n = arg(3, 1), len = arg(4, 64), i, k;
	unsigned char *buf = xbuf(len, 37);
	struct nvx_uvm_msg m;
	int st;

	if (!buf || len > NVX_UVM_MAX_BULK)
		return 2;
	for (i = 0; i < n; i++) {
		memset(buf, 0, len);
		st = vm_send(dst, NULL, buf, len, NVX_UVM_MSGF_PULL, &m);
		if (st || m.bulk_len != len)
			return fail_msg("send", i, &m);
		for (k = 0; k < len; k++)
			if (buf[k] != pat(k, i))
				return fail("byte differs", i, k);
	}
	return 0;
}

static int t_vm_send(void)
{
	unsigned long len = arg(3, 0);
	unsigned char *buf = xbuf(len, 37);
	struct nvx_uvm_msg m;
	int st;

	if (!buf || len > NVX_UVM_MAX_BULK)
		return 2;
	pattern(buf, len, 0);
	st = vm_send(arg(2, 0), NULL, buf, len, NVX_UVM_MSGF_PUSH, &m);
	lstr("status ");
	lnum(st);
	lstr(" bulk ");
	lnum(m.bulk_len);
	lend(1);
	return 0;
}

static int t_vm_recv1(void)
{
	unsigned char *buf = xbuf(NVX_UVM_MAX_BULK, 37);
	struct nvx_uvm_msg m;
	int st;

	if (!buf)
		return 2;
	st = vm_recv(buf, NVX_UVM_MAX_BULK, NVX_UVM_MSGF_PULL, NULL, &m);
	lstr("from ");
	lnum(m.src_vm);
	lstr(" bulk ");
	lnum(m.bulk_len);
	lstr(" status ");
	lnum(st);
	lend(1);
	return 0;
}

/* one relay message to the system process: payload[0..3] = @op */
static int relay(__u32 op, void *buf, unsigned int len, unsigned int dir,
		 struct nvx_uvm_msg *m)
{
	__u8 pl[NVX_UVM_PAYLOAD] = { 0 };

	memcpy(pl, &op, sizeof(op));
	return vm_send(0, pl, buf, len, dir, m);
}

static int t_relay_ping(void)
{
	unsigned long n = arg(2, 1), len = arg(3, 64), i;
	unsigned char *out = xbuf(len, 37), *in = xbuf(len, 1000);
	unsigned long long ns = 0, t0;
	struct nvx_uvm_msg m;
	int st;

	if (!out || !in || len > NVX_UVM_MAX_BULK)
		return 2;
	for (i = 0; i < n; i++) {
		pattern(out, len, i);
		memset(in, 0, len);
		t0 = clock_ns();
		st = relay(RELAY_SEND, out, len, NVX_UVM_MSGF_PUSH, &m);
		if (st || m.bulk_len != len)
			return fail_msg("send", i, &m);
		st = relay(RELAY_RECV, in, len, NVX_UVM_MSGF_PULL, &m);
		ns += clock_ns() - t0;
		if (st || m.bulk_len != len)
			return fail_msg("recv", i, &m);
		if (memcmp(in, out, len))
			return fail("echoed bytes differ", i, 0);
	}
	return round_trips("relay", n, len, ns);
}

static int t_relay_echo(void)
{
	unsigned char *buf = xbuf(NVX_UVM_MAX_BULK, 37);
	unsigned long n = arg(2, 1), i;
	struct nvx_uvm_msg in, out;
	int st;

	if (!buf)
		return 2;
	for (i = 0; i < n; i++) {
		st = relay(RELAY_RECV, buf, NVX_UVM_MAX_BULK,
			   NVX_UVM_MSGF_PULL, &in);
		if (st || in.bulk_len > NVX_UVM_MAX_BULK)
			return fail_msg("recv", i, &in);
		st = relay(RELAY_SEND, buf, in.bulk_len, NVX_UVM_MSGF_PUSH,
			   &out);
		if (st || out.bulk_len != in.bulk_len)
			return fail_msg("send", i, &out);
	}
	return 0;
}

/* ------------------------------------------------- function server --- */

#define SERVE_BUF	(26 * 2520)	/* a whole number of 'a'..'z' */

enum {
	SERVE_ECHO, SERVE_EXIT, SERVE_CRASH, SERVE_MUTE, SERVE_DEAF,
	SERVE_FLOOD, SERVE_MIX,
};

static const char *const serve_names[] = {
	[SERVE_ECHO] = "echo", [SERVE_EXIT] = "exit", [SERVE_CRASH] = "crash",
	[SERVE_MUTE] = "mute", [SERVE_DEAF] = "deaf", [SERVE_FLOOD] = "flood",
	[SERVE_MIX] = "mix",
};

/* "MODE: CALL R" on stderr; exit status 1 */
static int serve_fail(const char *call, long r)
{
	lstr(args[1]);
	lstr(": ");
	lstr(call);
	lstr(" ");
	lnum(r);
	lend(2);
	return 1;
}

/* One WRITE of @len bytes to fd 1: its status. */
static int serve_write(const char *buf, unsigned long len)
{
	struct nvx_uvm_msg m;

	return nvx_xfer(NVX_UVM_MSG_WRITE, 1, (void *)buf, len,
			NVX_UVM_MSGF_PUSH, &m);
}

/* Which of serve_names @s (of @n bytes) starts with; -1 for none. */
static int serve_how(const char *s, unsigned long n)
{
	unsigned long k;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(serve_names); i++) {
		k = strlen(serve_names[i]);
		if (n >= k && !memcmp(s, serve_names[i], k) &&
		    (n == k || s[k] == ' ' || s[k] == '\n'))
			return i;
	}
	return -1;
}

/* Behave as @how; @have bytes of the client's at @p came already. */
static int serve_as(int how, char *buf, const char *p, unsigned long have,
		    unsigned long ms)
{
	unsigned long k;
	long n;
	int st;

	switch (how) {
	case SERVE_EXIT:
		exit(3);
	case SERVE_CRASH:
		port_out8(0x80, 0);
		not_stopped(0);
	case SERVE_DEAF:
		pause_ms(ms);
		return 0;
	case SERVE_FLOOD:
		for (k = 0; k < SERVE_BUF; k++)
			buf[k] = 'a' + k % 26;
		for (;;) {
			st = serve_write(buf, SERVE_BUF);
			if (st < 0)
				return serve_fail("write", st);
		}
	case SERVE_ECHO:
	case SERVE_MUTE:
		break;
	default:
		return 2;
	}
	for (;;) {
		if (how == SERVE_ECHO && have) {
			st = serve_write(p, have);
			if (st < 0)
				return serve_fail("write", st);
		}
		n = read(0, buf, SERVE_BUF);
		if (n < 0)
			return serve_fail("read", n);
		if (!n)
			return 0;
		p = buf;
		have = n;
	}
}

/* serve-MODE: see the top */
static int t_serve(void)
{
	unsigned long have = 0, ms = arg(2, 60000), eol = 0;
	char *buf = alloc(SERVE_BUF, 4096);
	int how = serve_how(args[1] + 6, strlen(args[1] + 6));
	long n;

	if (!buf)
		return 2;
	if (ready())
		return 1;
	if (how == SERVE_EXIT || how == SERVE_CRASH) {
		n = read(0, buf, 4096);
		if (n < 0)
			return serve_fail("read", n);
	}
	if (how != SERVE_MIX)
		return serve_as(how, buf, buf, 0, ms);
	/* the first line, and what came after it */
	for (;;) {
		for (; eol < have && buf[eol] != '\n'; eol++)
			;
		if (eol < have)
			break;
		if (have == SERVE_BUF)
			return 2;
		n = read(0, buf + have, SERVE_BUF - have);
		if (n < 0)
			return serve_fail("read", n);
		if (!n)
			return 0;
		have += n;
	}
	how = serve_how(buf, eol);
	if (how == SERVE_DEAF && eol > 5)
		ms = strtoul(buf + 5, NULL, 0);
	if (how == SERVE_MIX)
		how = -1;
	return serve_as(how, buf, buf + eol + 1, have - eol - 1, ms);
}

static int print_usage(void)
{
	static const char *const u[] = {
		"usage: test MODE [ARGS] (see test.c)\n",
		"modes: ping N [W] | ping-gap N MAXUS | bulk SIZE OFF |\n",
		"  seed | args | id | clock | template [MODE ARGS] | tmpl-check [file] |\n",
		"  template-busy | template-raw-busy |\n",
		"  spin | pushloop | wait [N] | badport | badring | oversize |\n",
		"  badaddr | badsg | badmsg | flood |\n",
		"  open PATH [FLAGS] | openat DIRFD PATH [FLAGS [MODE]] |\n",
		"  openlong N | opennonul | cat PATH | write PATH TEXT |\n",
		"  pwrite PATH OFF TEXT | stat PATH | ls PATH |\n",
		"  mkdir PATH [MODE] | rm PATH | rmdir PATH | mv OLD NEW |\n",
		"  trunc PATH LEN | lseek PATH | fsync PATH | random N |\n",
		"  fdops | sysfuzz | hold PATH MS | usefd N |\n",
		"  vm-echo N [MAXLEN] | vm-ping DST N LEN [SEGS] |\n",
		"  vm-offer N LEN | vm-pull DST N LEN | vm-send DST [LEN] |\n",
		"  vm-recv1 | relay-ping N LEN | relay-echo N |\n",
		"  bench-pread PATH N LEN | deny N |\n",
		"  sock-echo PORT N [IP] | sock-connect IP PORT [TEXT] |\n",
		"  sock-connect6 IP PORT | sock-fds [PATH] | sock-use FD |\n",
		"  sock-poll PORT | sock-bad |\n",
		"  serve-exit | serve-crash | serve-mute | serve-deaf [MS] |\n",
		"  serve-flood | serve-mix\n",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(u); i++)
		write(2, u[i], strlen(u[i]));
	return 2;
}

static noreturn int test_spin(void)
{
	print("spinning\n");
	for (;;)
		cpu_relax();
}

/* @argc: the fewest arguments the mode needs, argv[0] and MODE included */
/* "bench-pread PATH N LEN": N preads of LEN bytes at offset 0 */
static int t_bench_pread(void)
{
	unsigned long n = arg(3, 1), len = arg(4, 4096), i;
	unsigned char *buf = alloc(len ? len : 1, 64);
	int fd = open(args[2], O_RDONLY, 0);

	if (fd < 0 || !buf)
		return 2;
	for (i = 0; i < n; i++)
		if (pread(fd, buf, len, 0) != (long)len)
			return 1;
	close(fd);
	return 0;
}

/*
 * "deny N": N messages of type NVX_UVM_MSG_GUEST_MAX, which no policy
 * that names its types allows: each must complete with -EPERM.
 */
static int t_deny(void)
{
	unsigned long n = arg(2, 1), i;
	struct nvx_uvm_msg m;

	for (i = 0; i < n; i++) {
		nvx_msg(&m, NVX_UVM_MSG_GUEST_MAX);
		if (nvx_call(&m) != -EPERM)
			return 1;
	}
	return 0;
}

static const struct mode {
	const char *name;
	int argc;
	int (*fn)(void);
} modes[] = {
	{ "ping", 2, test_ping },
	{ "ping-gap", 4, test_ping_gap },
	{ "bulk", 2, test_bulk },
	{ "seed", 2, test_seed },
	{ "args", 2, test_args },
	{ "id", 2, test_id },
	{ "template", 2, t_template },
	{ "template-busy", 2, t_template_busy },
	{ "template-raw-busy", 2, t_template_raw_busy },
	{ "tmpl-check", 2, t_tmpl_check },
	{ "clock", 2, test_clock },
	{ "spin", 2, test_spin },
	{ "pushloop", 2, test_pushloop },
	{ "wait", 2, test_wait },
	{ "plain", 2, t_plain },
	{ "open", 3, t_open },
	{ "openat", 4, t_openat },
	{ "openlong", 3, t_openlong },
	{ "opennonul", 2, t_opennonul },
	{ "cat", 3, t_cat },
	{ "write", 4, t_write },
	{ "pwrite", 5, t_pwrite },
	{ "stat", 3, t_stat },
	{ "ls", 3, t_ls },
	{ "mkdir", 3, t_mkdir },
	{ "rm", 3, t_rm },
	{ "rmdir", 3, t_rmdir },
	{ "mv", 4, t_mv },
	{ "trunc", 4, t_trunc },
	{ "lseek", 3, t_lseek },
	{ "fsync", 3, t_fsync },
	{ "random", 3, t_random },
	{ "fdops", 2, t_fdops },
	{ "sysfuzz", 2, t_sysfuzz },
	{ "hold", 4, t_hold },
	{ "usefd", 3, t_usefd },
	{ "vm-echo", 3, t_vm_echo },
	{ "vm-ping", 5, t_vm_ping },
	{ "vm-offer", 4, t_vm_offer },
	{ "vm-pull", 5, t_vm_pull },
	{ "vm-send", 3, t_vm_send },
	{ "vm-recv1", 2, t_vm_recv1 },
	{ "relay-ping", 4, t_relay_ping },
	{ "relay-echo", 3, t_relay_echo },
	{ "bench-pread", 5, t_bench_pread },
	{ "deny", 3, t_deny },
	{ "sock-echo", 4, t_sock_echo },
	{ "sock-connect", 4, t_sock_connect },
	{ "sock-connect6", 4, t_sock_connect6 },
	{ "sock-fds", 2, t_sock_fds },
	{ "sock-use", 3, t_sock_use },
	{ "sock-poll", 3, t_sock_poll },
	{ "sock-bad", 2, t_sock_bad },
	{ "serve-exit", 2, t_serve },
	{ "serve-crash", 2, t_serve },
	{ "serve-mute", 2, t_serve },
	{ "serve-deaf", 2, t_serve },
	{ "serve-flood", 2, t_serve },
	{ "serve-mix", 2, t_serve },
};

int nvx_main(int argc, char **argv)
{
	unsigned int i;
	int ret;

	args = argv;
	nargs = argc;
	if (argc < 2)
		return print_usage();
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		if (strcmp(argv[1], modes[i].name))
			continue;
		if (argc < modes[i].argc)
			return print_usage();
		return modes[i].fn();
	}
	ret = test_bad(argv[1]);
	return ret < 0 ? print_usage() : ret;
}
