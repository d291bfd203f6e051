// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the function server, `nvxtool uvm serve
 * --listen`.
 *
 * Each test starts its servers (nvxtool from PATH, on 127.0.0.1 port 0,
 * --mem 2M --verbose, images from beside this program: http-echo.img,
 * or test.img with a serve-* mode) and talks to them as TCP clients:
 * HTTP requests whose answers must be http-echo's byte for byte (bodies
 * of 0 B to 1 MiB, pipelined keep-alive requests, 64 connections at
 * once), warm VMs handed out once and replaced, clients that leave
 * mid-request, mid-response or at once, guests that exit, crash, never
 * read, never write or flood (their clients read EOF within CLOSE_MS;
 * other connections of the same server and system process are served
 * meanwhile), --timeout and --lifetime, bad command lines. The
 * teardown checks that every server is idle again (its endpoint holds
 * only the warm VMs, each waiting in READY; neither the server nor its
 * system process has an fd more than at its start; the pool's grants
 * are the warm VMs'), stops it with SIGTERM (exit 0) and compares its
 * --verbose summary with what the test expects
 * (Documentation/nvx/uvm-sys.rst, "The function server").
 */
#include "serve_fixture.h"

/* ------------------------------------------------------- tests --- */

/*
 * Bodies of 0 B, 1 B, 64 KiB and 1 MiB, each on a new connection (a VM
 * made for it), then one after the other on one keep-alive connection:
 * each echoed exactly.
 */
SERVE_TEST(echo_bodies)
{
	static const size_t sizes[] = { 0, 1, 64 << 10, 1 << 20 };
	struct req q[ARRAY_SIZE(sizes)];
	struct srv *s = &self->x.s[0];
	unsigned int i;
	char what[64];
	struct hc c;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "a body of %zu bytes", sizes[i]);
		EXPECT_TRUE(echo_new(_metadata, s, sizes[i], i + 1, what));
	}
	memset(q, 0, sizeof(q));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		q[i].body = body_of(sizes[i], 10 + i);
		q[i].len = sizes[i];
	}
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	for (i = 0; !ret && i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "keep-alive, a body of %zu bytes",
			 sizes[i]);
		if (!q[i].body || !echo_ok(_metadata, &c, &q[i], 1, what))
			break;
	}
	hc_close(&c);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		free((void *)q[i].body);
	srv_want(s, 5, 5, 0, 0);
}

/* How many of @pid's fds have @line in their fdinfo. */
static int count_fdinfo(pid_t pid, const char *line)
{
	char path[320], buf[2048];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid,
			 de->d_name);
		if (!read_text(path, buf, sizeof(buf)) && strstr(buf, line))
			n++;
	}
	closedir(d);
	return n;
}

static void th_log_text(void *arg, const char *text)
{
	struct __test_metadata *_metadata = arg;

	TH_LOG("thread %s", text);
}

/*
 * --template FILE: `uvm template` of http-echo (its ready point comes
 * before READY) in one process, a server of clones of it in another.
 * Its VMs are clones (fdinfo of the server: one template grant, a clone
 * grant per warm VM); bodies of 0 to 35,000 bytes, each on a new
 * connection, are echoed as by booted VMs; warm VMs and VMs made for
 * their connection are all clones (no grant that is neither template
 * nor clone); a bad --template is refused.
 */
SERVE_TEST(template_clones)
{
	char dir[] = "/tmp/nvx-serve-XXXXXX", path[64], img[PATH_MAX + 32];
	struct srv *s = &self->x.s[0];
	unsigned int i;
	char what[64];
	uint64_t end;
	int n;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/http.nvxt", dir);
	snprintf(img, sizeof(img), "%s/http-echo.img", self->x.e.dir);
	nvxtool(&cmd, "uvm", "template", "-o", path, "--mem", SRV_MEM, img,
		NULL);
	ASSERT_TRUE(WIFEXITED(cmd.status)) TH_LOG("%s: %s", cmd.cmd, cmd.err);
	ASSERT_EQ(0, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 2,
			      OPTS("--template", path), NULL, NULL));
	/* the file is read at the start: the server does not need it */
	unlink(path);
	rmdir(dir);
	EXPECT_EQ(1, count_fdinfo(s->pid, "template:\t1\n"));
	EXPECT_EQ(2, count_fdinfo(s->pid, "clone:\t1\n"));
	for (i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "clone %u, %u bytes", i,
			 i * 7000);
		EXPECT_TRUE(echo_new(_metadata, s, i * 7000, i + 1, what));
	}
	/*
	 * 2 warm, then made for their connections; the server makes its
	 * warm VMs again after it answered, so wait for them (CI once
	 * counted 1 clone here, the second one not yet made).
	 */
	srv_want(s, 6, -1, 0, 0);
	end = now_ms() + IDLE_MS;
	while ((n = count_fdinfo(s->pid, "clone:\t1\n")) >= 0 && n < 2 &&
	       now_ms() < end)
		usleep(50 * 1000);
	EXPECT_EQ(1, count_fdinfo(s->pid, "template:\t1\n"));
	n = count_fdinfo(s->pid, "clone:\t1\n");
	EXPECT_LE(2, n);
	if (n < 2)
		thread_report(s->pid, th_log_text, _metadata);
	EXPECT_EQ(0, count_fdinfo(s->pid, "template:\t0\nclone:\t0\n"))
		TH_LOG("a grant that is not a clone: a VM booted from an image");

	/* usage: no --mem, no IMAGE with --template; a bad file: 1 */
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		path, "--mem", "2M", NULL);
	EXPECT_EQ(2, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		path, img, NULL);
	EXPECT_EQ(2, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		img, NULL);
	EXPECT_EQ(1, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	EXPECT_NE(NULL, strstr(cmd.err, "not an nvx template"))
		TH_LOG("%s", cmd.err);
}

/*
 * --uintr: the system process runs its event loop. The endpoint holds its
 * vector and has posted it (fdinfo of the server's endpoint: notify 1,
 * notified > 0), and new connections are echoed as without it.
 * Skipped without user interrupts.
 */
SERVE_TEST(uintr_event_loop)
{
	struct srv *s = &self->x.s[0];
	char path[64], buf[2048];
	struct ep_info ei;
	long long notified;
	unsigned int i;
	char what[64];

	if (nvx_has_feature(self->x.e.fd, NVX_FEAT_UINTR) != 1)
		SKIP(return, "no user interrupts (NVX_FEAT_UINTR)");
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--uintr"),
			      "http-echo.img", NULL));
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what), "--uintr, connection %u", i);
		EXPECT_TRUE(echo_new(_metadata, s, 100 << i, i + 1, what));
	}
	ASSERT_EQ(0, ep_info(s, &ei));
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", s->pid, s->ep_nr);
	ASSERT_EQ(0, read_text(path, buf, sizeof(buf)));
	EXPECT_EQ(1, field(buf, "notify")) TH_LOG("%s", buf);
	notified = field(buf, "notified");
	EXPECT_LT(0, notified) TH_LOG("%s", buf);
	srv_want(s, 4, 4, 0, 0);
}

/*
 * NPIPE requests written at once on one connection, answered in order
 * (each body starts with its number), by one VM; the last says
 * "Connection: close": its answer says so too and the server closes.
 */
SERVE_TEST(pipelined)
{
	struct srv *s = &self->x.s[0];
	struct ep_info e0, e1;
	struct req q[NPIPE];
	unsigned int i;
	struct hc c;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));
	ASSERT_EQ(0, ep_info(s, &e0));
	memset(q, 0, sizeof(q));
	for (i = 0; i < NPIPE; i++) {
		q[i].len = 20 + i * 997;
		q[i].body = body_of(q[i].len, 100 + i);
		if (q[i].body)
			snprintf((char *)q[i].body, 20, "request %02u of %u", i + 1,
				 NPIPE);
		q[i].close = i == NPIPE - 1;
		EXPECT_NE(NULL, q[i].body);
	}
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret && q[NPIPE - 1].body &&
	    echo_ok(_metadata, &c, q, NPIPE, "pipelined requests"))
		expect_closed(_metadata, &c, now_ms(), 0, CLOSE_MS,
			      "after Connection: close");
	hc_close(&c);
	for (i = 0; i < NPIPE; i++)
		free((void *)q[i].body);
	all_idle(_metadata, &self->x, "after the connection");
	ASSERT_EQ(0, ep_info(s, &e1));
	EXPECT_EQ(e0.attached + 1, e1.attached)
		TH_LOG("one VM serves a connection: %lld made for it",
		       e1.attached - e0.attached);
	srv_want(s, 1, 1, 0, 0);
}

/* Lets the threads of concurrent go on once all got there. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int arrived;
	bool open;
};

static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

/* Wait up to @ms for @n threads at @g: how many came. */
static unsigned int gate_wait(struct gate *g, unsigned int n, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	struct timespec ts;
	unsigned int got;

	pthread_mutex_lock(&g->mu);
	while (g->arrived < n && now_ms() < end) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	got = g->arrived;
	pthread_mutex_unlock(&g->mu);
	return got;
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* One client of concurrent. */
struct job {
	const struct srv *s;
	struct gate *g;
	unsigned int i;
	int ret;
	char why[512];
};

/*
 * Connect, one request; wait at the gate (if there is one) with the
 * connection open; a second request with "Connection: close"; the
 * server closes.
 */
static void *job_main(void *arg)
{
	struct job *j = arg;
	struct req q1 = { .len = 1 + j->i * 1237 % 20000 };
	struct req q2 = { .len = j->i * 331 % 5000, .close = true };
	struct hc c;

	q1.body = body_of(q1.len, 2 * j->i + 1);
	q2.body = body_of(q2.len, 2 * j->i + 2);
	hc_init(&c);
	j->ret = q1.body && q2.body ? hc_open(&c, j->s) : -ENOMEM;
	if (j->ret)
		snprintf(j->why, sizeof(j->why), "connect: %s",
			 strerror(-j->ret));
	else
		j->ret = echo_reqs(&c, &q1, 1, j->why, sizeof(j->why));
	if (j->g)
		gate_pass(j->g);
	if (!j->ret)
		j->ret = echo_reqs(&c, &q2, 1, j->why, sizeof(j->why));
	if (!j->ret) {
		j->ret = wait_closed(&c, now_ms() + CLOSE_MS);
		if (j->ret)
			snprintf(j->why, sizeof(j->why),
				 "not closed after Connection: close: %s",
				 strerror(-j->ret));
	}
	hc_close(&c);
	free((void *)q1.body);
	free((void *)q2.body);
	return NULL;
}

/*
 * nconc clients at once (--max 64, --warm 4), each with bodies of its
 * own: all answered exactly, all nconc VMs live at the same time.
 */
/*
 * 64 VMs made one after the other by the accept loop, on the debug
 * kernel under TCG: the last is answered minutes after the first.
 */
TEST_F_TIMEOUT(serve, concurrent, 600)
{
	static struct job jobs[NCONC_MAX];
	const char *env = getenv("NVX_SERVE_CONC");
	unsigned int nconc;
	struct gate g = {
		.mu = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER,
	};
	struct srv *s = &self->x.s[0];
	unsigned int i, made = 0, came, ok = 0;
	pthread_t th[NCONC_MAX];
	struct ep_info ei = { };
	pthread_attr_t a;
	int ret = -1;

	nconc = env ? strtoul(env, NULL, 10) : NCONC_DEF;
	if (!nconc || nconc > NCONC_MAX)
		nconc = NCONC_DEF;
	TH_LOG("%u connections at once", nconc);
	io_ms = CONC_IO_MS;
	/* --timeout: the first to be answered wait for the last */
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, CONC_WARM,
			      OPTS("--max", "64", "--timeout", "300"),
			      "http-echo.img", NULL));
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	for (i = 0; i < nconc; i++) {
		jobs[i] = (struct job){ .s = s, .g = &g, .i = i };
		if (pthread_create(&th[i], &a, job_main, &jobs[i]))
			break;
		made++;
	}
	pthread_attr_destroy(&a);
	EXPECT_EQ(nconc, made);
	came = gate_wait(&g, made, SHORT_MS + IO_MS + SHORT_MS);
	EXPECT_EQ(made, came);
	if (came == made) {
		for (i = 0; i < made; i++)
			ok += !jobs[i].ret;
		/* every connection answered once and still open */
		ret = ep_info(s, &ei);
	}
	EXPECT_EQ(0, ret);
	if (!ret && ok == nconc) {
		EXPECT_LE(nconc, ei.vms) TH_LOG("%lld VMs at a time", ei.vms);
		EXPECT_GE(nconc + CONC_WARM, ei.vms);
	}
	gate_open(&g);
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < made; i++)
		EXPECT_EQ(0, jobs[i].ret)
			TH_LOG("connection %u: %s", i, jobs[i].why);
	srv_want(s, nconc, -1, 0, 0);
}

/*
 * NCONC_MAX (64) clients at once, --max 16: the server holds 16 VMs at
 * a time and the other connections wait in the listen backlog until a
 * VM ends (their requests already sent); every body echoed exactly.
 * 16 live VMs, not 64: with 64 nested guests at once under TCG on the
 * debug kernel some end in a triple fault (concurrent with
 * NVX_SERVE_CONC=64 shows it), a limit of the emulation, not of nvx.
 */
TEST_F_TIMEOUT(serve, concurrent_queued, 600)
{
	static struct job jobs[NCONC_MAX];
	struct srv *s = &self->x.s[0];
	pthread_t th[NCONC_MAX];
	unsigned int i, made = 0;
	pthread_attr_t a;

	io_ms = CONC_IO_MS;
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, CONC_WARM,
			      OPTS("--max", "16", "--timeout", "300"),
			      "http-echo.img", NULL));
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	for (i = 0; i < NCONC_MAX; i++) {
		jobs[i] = (struct job){ .s = s, .i = i };
		if (pthread_create(&th[i], &a, job_main, &jobs[i]))
			break;
		made++;
	}
	pthread_attr_destroy(&a);
	EXPECT_EQ(NCONC_MAX, made);
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < made; i++)
		EXPECT_EQ(0, jobs[i].ret)
			TH_LOG("connection %u: %s", i, jobs[i].why);
	srv_want(s, made, -1, 0, 0);
}

/*
 * --warm 2: before any connection two VMs wait in READY; each of four
 * connections in turn gets a warm one (no VM made for a connection),
 * and each warm VM handed out is replaced by exactly one.
 */
SERVE_TEST(warm_vms)
{
	struct srv *s = &self->x.s[0];
	struct ep_info ei;
	unsigned int i;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 2, NO_OPTS,
			      "http-echo.img", NULL));
	for (i = 0; i < 4; i++) {
		EXPECT_TRUE(echo_new(_metadata, s, 1000 + i, i,
				     "a request to a warm VM"));
		/* its VM went, another was made and waits */
		all_idle(_metadata, &self->x, "after a connection");
	}
	ASSERT_EQ(0, ep_info(s, &ei));
	EXPECT_EQ(2 + 4, ei.attached)
		TH_LOG("%lld VMs made for --warm 2 and 4 connections",
		       ei.attached);
	srv_want(s, 4, 0, 0, 0);
}

/*
 * Clients that leave mid-request, mid-response, at once after connect
 * (while their VM is being made) and with a reset: the server serves
 * the next client, and nothing of theirs is left.
 */
SERVE_TEST(client_disconnects)
{
	static const char head[] =
		"POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: 200000\r\n\r\n";
	static const char big[] =
		"POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: 1048576\r\n\r\n";
	size_t n = sizeof(big) - 1 + (1 << 20);
	struct srv *s = &self->x.s[0];
	unsigned char *out;
	struct hc c;
	int ret;

	out = malloc(n);
	ASSERT_NE(NULL, out);
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));

	/* half of a 200000-byte body, then close */
	memcpy(out, head, sizeof(head) - 1);
	fill_bytes(out + sizeof(head) - 1, 100000, 1);
	ret = hc_open(&c, s);
	if (!ret)
		ret = hc_io(&c, out, sizeof(head) - 1 + 100000, got_bytes, 0,
			    true, now_ms() + IO_MS);
	EXPECT_EQ(0, ret) TH_LOG("half a request: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 2, "after half a request"));
	all_idle(_metadata, &self->x, "after half a request");

	/* a 1 MiB body; close once 64 KiB of the answer came */
	memcpy(out, big, sizeof(big) - 1);
	fill_bytes(out + sizeof(big) - 1, 1 << 20, 3);
	ret = hc_open(&c, s);
	if (!ret)
		ret = hc_io(&c, out, n, got_bytes, 64 << 10, false,
			    now_ms() + IO_MS);
	EXPECT_EQ(0, ret) TH_LOG("64 KiB of an answer: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 4, "after half an answer"));
	all_idle(_metadata, &self->x, "after half an answer");

	/* gone before its VM is there */
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 5, "after a quick close"));
	all_idle(_metadata, &self->x, "after a quick close");

	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	hc_reset(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 6, "after a reset"));
	free(out);
	/* a reset connection may go before it is accepted */
	srv_want(s, -1, -1, 0, 0);
}

/*
 * A guest that reads the request and exits without an answer: its
 * client reads EOF; the next connection of the same server is served.
 */
SERVE_TEST(guest_exits_before_answer)
{
	struct srv *ex = &self->x.s[0], *m = &self->x.s[1];

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS, "test.img",
			      "serve-exit"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, NO_OPTS, "test.img",
			      "serve-mix"));
	closed_new(_metadata, ex, HTTP_REQ, "serve-exit");
	closed_new(_metadata, ex, HTTP_REQ, "serve-exit, again");
	closed_new(_metadata, m, "exit\nhello", "serve-mix exit");
	EXPECT_TRUE(mix_echo(_metadata, m, 4096, 1, NULL,
			     "serve-mix echo after an exit"));
	closed_new(_metadata, m, "exit\n", "serve-mix exit, again");
	EXPECT_TRUE(mix_echo(_metadata, m, 100, 2, NULL,
			     "serve-mix echo after two"));
	srv_want(ex, 2, 2, 0, 0);
	srv_want(m, 4, 4, 0, 0);
}

/*
 * Guests that crash (port 0x80) after reading the request, or before
 * READY (badport): their clients read EOF, the VMs count as ended in
 * error; the next connection of the same server is served.
 */
SERVE_TEST(guest_crashes)
{
	struct srv *c = &self->x.s[0], *b = &self->x.s[1], *m = &self->x.s[2];

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS, "test.img",
			      "serve-crash"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, NO_OPTS, "test.img",
			      "badport"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 2, 0, NO_OPTS, "test.img",
			      "serve-mix"));
	closed_new(_metadata, c, HTTP_REQ, "serve-crash");
	closed_new(_metadata, c, HTTP_REQ, "serve-crash, again");
	closed_new(_metadata, b, HTTP_REQ, "badport");
	closed_new(_metadata, b, NULL, "badport, again");
	closed_new(_metadata, m, "crash\n", "serve-mix crash");
	EXPECT_TRUE(mix_echo(_metadata, m, 4096, 1, NULL,
			     "serve-mix echo after a crash"));
	srv_want(c, 2, 2, 0, 2);
	srv_want(b, 2, 2, 0, 2);
	srv_want(m, 2, 2, 0, 1);
	srv_want_err(c, " stopped: bad-port (0x80)");
	srv_want_err(b, " stopped: bad-port (0x80)");
	srv_want_err(m, " stopped: bad-port (0x80)");
}

/*
 * Guests that flood a client who does not read, never read a client who
 * sends, or never write: while they hold their connections, new
 * connections of the same server (one system process) are served
 * within ECHO_MS each.
 *
 * Two of each: under nested KVM in QEMU TCG, four flooding guests and
 * four deaf ones beside the rest were too much for the emulator now and
 * then (a VM that never left guest mode, an oops with a corrupted stack,
 * the test VM's kernel memory corrupted: testing.rst, "Known problems").
 */
#define NR_FLOOD	2
#define NR_DEAF		2
#define NR_MUTE		2
#define NR_STUCK	(NR_FLOOD + NR_DEAF + NR_MUTE)
#define NR_ECHO		3	/* echoes beside them, a VM each */

/* 450 s: the deaf guests sleep DEAF_MS by their own clock, late under load */
TEST_F_TIMEOUT(serve, stuck_guests_isolated, 450)
{
	static unsigned char junk[256 << 10];
	struct hc flood[NR_FLOOD], deaf[NR_DEAF], mute[NR_MUTE];
	struct srv *s = &self->x.s[0];
	struct pollfd p;
	struct ep_info ei;
	uint64_t ms, t0;
	unsigned int i;
	bool ok;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0,
			      OPTS("--max", "16", "--timeout", "300"),
			      "test.img", "serve-mix"));
	memset(junk, 'j', sizeof(junk));
	memcpy(junk, "deaf " DEAF_MS "\n", sizeof("deaf " DEAF_MS));
	for (i = 0; i < NR_FLOOD; i++) {
		EXPECT_EQ(0, hc_open(&flood[i], s));
		hc_io(&flood[i], "flood\n", 6, got_bytes, 0, true,
		      now_ms() + SHORT_MS);
	}
	for (i = 0; i < NR_DEAF; i++) {
		/* as much as the socket takes in a moment */
		EXPECT_EQ(0, hc_open(&deaf[i], s));
		hc_io(&deaf[i], junk, sizeof(junk), got_bytes, 0, true,
		      now_ms() + 500);
	}
	memcpy(junk, "mute\n", 5);
	for (i = 0; i < NR_MUTE; i++) {
		EXPECT_EQ(0, hc_open(&mute[i], s));
		hc_io(&mute[i], junk, 64 << 10, got_bytes, 0, true,
		      now_ms() + SHORT_MS);
	}
	/*
	 * All the stuck VMs there, the floods flowing. They are made one
	 * after the other (tens of seconds under TCG on the debug kernel):
	 * the deaf ones must outlive that, hence DEAF_MS.
	 */
	t0 = now_ms();
	ok = wait_vms(s, NR_STUCK, NR_STUCK, t0 + IO_MS, &ei);
	EXPECT_TRUE(ok) TH_LOG("%lld VMs, %lld made after %llu ms; want %d",
			       ei.vms, ei.attached,
			       (unsigned long long)(now_ms() - t0), NR_STUCK);
	for (i = 0; i < NR_FLOOD; i++) {
		p = (struct pollfd){ .fd = flood[i].fd, .events = POLLIN };
		EXPECT_EQ(1, poll(&p, 1, IO_MS)) TH_LOG("flood %u: no byte", i);
	}
	usleep(500000);

	for (i = 0; i < NR_ECHO; i++) {
		ms = 0;
		EXPECT_TRUE(mix_echo(_metadata, s, 64 << 10, i, &ms,
				     "an echo beside stuck guests"));
		EXPECT_GT((uint64_t)ECHO_MS, ms)
			TH_LOG("an echo took %llu ms", (unsigned long long)ms);
	}
	/* the floods and the mutes are still there: they cannot end */
	ASSERT_EQ(0, ep_info(s, &ei));
	EXPECT_LE(NR_FLOOD + NR_MUTE, ei.vms);

	for (i = 0; i < NR_FLOOD; i++)
		hc_close(&flood[i]);
	for (i = 0; i < NR_DEAF; i++)
		hc_close(&deaf[i]);
	for (i = 0; i < NR_MUTE; i++)
		hc_close(&mute[i]);
	/* the deaf ones end after DEAF_MS; then the server is idle */
	ok = wait_vms(s, 0, NR_STUCK + NR_ECHO,
		      now_ms() + 3 * atoi(DEAF_MS), &ei);
	EXPECT_TRUE(ok) {
		/* a vCPU thread running (R) or halted for good (S, kvm_vcpu_block) */
		TH_LOG("%lld VMs left, %lld made", ei.vms, ei.attached);
		thread_report(s->pid, th_log_text, _metadata);
	}
	srv_want(s, NR_STUCK + NR_ECHO, NR_STUCK + NR_ECHO, 0, 0);
}

/*
 * Read @c to its end: every byte of the stream must be 'a' + K % 26.
 * The bytes read, or -errno; *@bad: the first byte that was not.
 */
static long long drain_flood(struct hc *c, uint64_t deadline,
			     long long *bad)
{
	static unsigned char buf[64 << 10];
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	long long total = 0;
	uint64_t now;
	ssize_t n, i;

	*bad = -1;
	for (;;) {
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, deadline - now) < 0 && errno != EINTR)
			return -errno;
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return errno == ECONNRESET ? total : -errno;
		if (!n)
			return total;
		for (i = 0; i < n && *bad < 0; i++)
			if (buf[i] != 'a' + (total + i) % 26)
				*bad = total + i;
		total += n;
	}
}

/*
 * --timeout 2: a silent client's guest (serve-mute) fails its READ with
 * -EAGAIN after 2 s, exits, and the client reads EOF; the guest of a
 * client that does not read (serve-flood) fails its WRITE the same way,
 * and the client reads what it wrote, then EOF.
 */
SERVE_TEST(timeouts)
{
	struct srv *m = &self->x.s[0], *f = &self->x.s[1];
	long long got, bad;
	struct ep_info ei;
	uint64_t t0;
	struct hc c;
	bool ok;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--timeout", "2"),
			      "test.img", "serve-mute"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, OPTS("--timeout", "2"),
			      "test.img", "serve-flood"));
	t0 = now_ms();
	ret = hc_open(&c, m);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret)
		expect_closed(_metadata, &c, t0, TIMEOUT_MS, CLOSE_MS,
			      "a silent client");
	hc_close(&c);

	t0 = now_ms();
	ret = hc_open(&c, f);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret) {
		/* not reading: the VM comes and goes */
		ok = wait_vms(f, 0, 1, t0 + CLOSE_MS, &ei);
		EXPECT_TRUE(ok) TH_LOG("flooding: %lld VMs, %lld made, after %llu ms",
				       ei.vms, ei.attached,
				       (unsigned long long)(now_ms() - t0));
		EXPECT_LE((uint64_t)TIMEOUT_MS, now_ms() - t0);
		got = drain_flood(&c, now_ms() + IO_MS, &bad);
		EXPECT_LT(0, got) TH_LOG("read the flood: %s",
					 got < 0 ? strerror(-got) : "no byte");
		EXPECT_EQ(-1, bad) TH_LOG("byte %lld of the flood", bad);
	}
	hc_close(&c);
	srv_want(m, 1, 1, 0, 0);
	srv_want(f, 1, 1, 0, 0);
	srv_want_err(m, "serve-mute: read -11\n");
	srv_want_err(f, "serve-flood: write -11\n");
}

/*
 * --lifetime 2: a guest that never reads nor ends (serve-deaf) and a
 * keep-alive connection answered once, then idle (a warm VM of
 * http-echo, --timeout 0): both VMs are stopped after 2 s, their
 * clients read EOF.
 */
SERVE_TEST(lifetime)
{
	struct srv *d = &self->x.s[0], *h = &self->x.s[1];
	struct req q = { .len = 1000 };
	struct hc a, b;
	uint64_t ta, tb;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--lifetime", "2"),
			      "test.img", "serve-deaf"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 1,
			      OPTS("--lifetime", "2", "--timeout", "0"),
			      "http-echo.img", NULL));
	q.body = body_of(q.len, 7);
	ASSERT_NE(NULL, q.body);
	ta = now_ms();
	ret = hc_open(&a, d);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	tb = now_ms();
	ret = hc_open(&b, h);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret)
		echo_ok(_metadata, &b, &q, 1, "a request before --lifetime");
	if (a.fd >= 0)
		expect_closed(_metadata, &a, ta, TIMEOUT_MS, CLOSE_MS,
			      "serve-deaf past --lifetime 2");
	if (b.fd >= 0)
		expect_closed(_metadata, &b, tb, TIMEOUT_MS, CLOSE_MS,
			      "an idle connection past --lifetime 2");
	hc_close(&a);
	hc_close(&b);
	free((void *)q.body);
	/* a stop is not an error */
	srv_want(d, 1, 1, 0, 0);
	srv_want(h, 1, 0, 0, 0);
	srv_want_err(d, ": over --lifetime, stopped");
	srv_want_err(h, ": over --lifetime, stopped");
}

/* @cmd exited @code, printed no "listening on" line. */
static void expect_exit(struct __test_metadata *_metadata, int code)
{
	EXPECT_TRUE(WIFEXITED(cmd.status) && WEXITSTATUS(cmd.status) == code)
		TH_LOG("%s: status %#x%s, want exit %d; stdout '%s'; stderr '%s'",
		       cmd.cmd, cmd.status, cmd.timed_out ? " (timed out)" : "",
		       code, cmd.out, cmd.err);
	EXPECT_EQ(NULL, strstr(cmd.out, "listening on")) TH_LOG("%s", cmd.cmd);
}

/* nvxtool uvm serve ARGS... is a usage error: exit 2. */
#define USAGE(...) do {							\
	nvxtool(&cmd, "uvm", "serve", __VA_ARGS__, NULL);		\
	expect_exit(_metadata, 2);					\
} while (0)

/*
 * Bad command lines are usage errors (exit 2); a port another socket
 * listens on is exit 1.
 */
SERVE_TEST(bad_command_lines)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char img[PATH_MAX + 32], addr[32];
	int l, ret;

	snprintf(img, sizeof(img), "%s/http-echo.img", self->x.e.dir);
	USAGE("--listen", "nonsense", img);
	USAGE("--listen", "127.0.0.1:0", "--warm", "300", img);
	USAGE("--listen", "127.0.0.1:0", "--max", "0", img);
	USAGE("--listen", "127.0.0.1:0", "--max", "200", "--warm", "57", img);
	USAGE("--listen", "127.0.0.1:0", "--ep-fd", "5", img);
	USAGE("--listen", "127.0.0.1:0", "--debug-forbidden-syscall", img);
	USAGE("--listen", "127.0.0.1:0", "--mem", "1M", img);
	USAGE("--listen", "127.0.0.1:0", "--timeout", "86401", img);
	USAGE("--listen", "127.0.0.1:0");
	USAGE("--warm", "1", img);
	USAGE("--lifetime", "1", img);

	/* a port in use */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, l);
	ret = bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	      getsockname(l, (struct sockaddr *)&a, &len) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("a listening socket: %s", strerror(-ret));
	if (!ret) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%u",
			 ntohs(a.sin_port));
		nvxtool(&cmd, "uvm", "serve", "--listen", addr, img, NULL);
		expect_exit(_metadata, 1);
		EXPECT_NE(NULL, strstr(cmd.err, "Address already in use"))
			TH_LOG("stderr: '%s'", cmd.err);
	}
	close(l);
}

TEST_HARNESS_MAIN
