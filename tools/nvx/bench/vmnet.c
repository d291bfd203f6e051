// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench vmnet: UDP echoed by a user VM straight on its own receive
 * queue (a shared RX queue set in its memory, on an nvxsim NIC) against a
 * host process echoing with recvmmsg()/sendmmsg() on a veth pair, with
 * the same client in the same run; KVM's exits per frame; the receive
 * memory a burst needs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <nvx/pool.h>
#include <nvx/srq.h>
#include <nvx/uvm.h>

#include "bench.h"
#include "nvx_uvm.h"

#define VN_NIC		"nvxbn0"		/* and its peer nvxbn0p */
#define VN_HOST		"198.51.100.1"
#define VN_GUEST	"198.51.100.2"
#define VN_VETH		"nvxbv0"		/* and nvxbv1, in a netns */
#define VN_VHOST	"198.51.101.1"
#define VN_VSERVER	"198.51.101.2"
#define VN_PORT		7
#define VN_PAYLOAD	18			/* a 64-byte frame with FCS */
#define VN_BATCH	32
#define VN_BURST	4096
#define VN_POOL		(32ULL << 20)

enum {
	VN_OPT_SECONDS = 0x100,
	VN_OPT_WINDOW,
};

/* One echo run: the client's view and, for a VM, KVM's. */
struct vn_run {
	double rate;		/* echoes per second */
	uint64_t echoed;
	uint64_t sent;
	uint64_t lost;		/* sent, never echoed */
	double exits;		/* per echoed frame, KVM's, host irqs out */
	double irq_exits;	/* per frame: the host's interrupts */
	double user_exits;	/* per frame: to the VMM (TX kicks) */
	double halts;		/* per frame */
};

static void vn_nop(int sig)
{
	(void)sig;
}

static int vn_sh(const char *cmd)
{
	int st = system(cmd);

	return st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) ? -1 : 0;
}

static int vn_socket(const char *dst, uint16_t dport, uint16_t lport)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(dport) };
	struct sockaddr_in l = { .sin_family = AF_INET,
				 .sin_port = htons(lport) };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	inet_pton(AF_INET, dst, &a.sin_addr);
	if ((lport && bind(s, (struct sockaddr *)&l, sizeof(l))) ||
	    connect(s, (struct sockaddr *)&a, sizeof(a))) {
		close(s);
		return -errno;
	}
	return s;
}

/*
 * One datagram echoed within 2 s, for up to 30 s (ARP, a guest booting;
 * a port nobody has bound yet answers ECONNREFUSED at once: wait then).
 */
static int vn_warm(int s)
{
	char buf[VN_PAYLOAD] = "warm", in[64];
	struct pollfd p = { .fd = s, .events = POLLIN };
	uint64_t end = nvx_now_ns() + 30000000000ULL;

	while (nvx_now_ns() < end) {
		if (send(s, buf, sizeof(buf), 0) < 0 && errno != ECONNREFUSED)
			return -errno;
		if (poll(&p, 1, 2000) == 1 && recv(s, in, sizeof(in), 0) > 0)
			return 0;
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/* @m[i] one datagram each in @bufs[i] (VN_BATCH of @len bytes). */
static void vn_mmsg_init(struct mmsghdr *m, struct iovec *iov, void *bufs,
			 size_t len)
{
	int i;

	memset(m, 0, VN_BATCH * sizeof(*m));
	for (i = 0; i < VN_BATCH; i++) {
		iov[i].iov_base = (char *)bufs + i * len;
		iov[i].iov_len = len;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
}

/*
 * The client: @window datagrams in flight at most, sent and received in
 * batches, for @ns; then what is still out is waited for 500 ms.
 */
static int vn_client(const char *dst, uint16_t dport, uint16_t lport,
		     uint64_t ns, unsigned int window, struct vn_run *r)
{
	char out[VN_BATCH][VN_PAYLOAD], in[VN_BATCH][64];
	struct mmsghdr so[VN_BATCH], ri[VN_BATCH];
	struct iovec iso[VN_BATCH], iri[VN_BATCH];
	struct pollfd p;
	uint64_t t0, t1, end, last, out_now;
	int s, k;

	s = vn_socket(dst, dport, lport);
	if (s < 0)
		return s;
	k = vn_warm(s);
	if (k) {
		close(s);
		return k;
	}
	/* late echoes of the warm-up's retries are not this run's */
	usleep(200000);
	while (recv(s, in[0], sizeof(in[0]), MSG_DONTWAIT) > 0)
		;
	memset(out, 0x5a, sizeof(out));
	vn_mmsg_init(so, iso, out, VN_PAYLOAD);
	vn_mmsg_init(ri, iri, in, sizeof(in[0]));
	p.fd = s;
	p.events = POLLIN;
	memset(r, 0, sizeof(*r));
	t0 = nvx_now_ns();
	last = t0;
	end = t0 + ns;
	for (;;) {
		t1 = nvx_now_ns();
		out_now = r->sent - r->echoed - r->lost;
		if (t1 >= end && (!out_now || t1 >= end + 500000000))
			break;
		/* nothing back for 200 ms: what is out is lost, the window free */
		if (out_now && t1 - last > 200000000) {
			r->lost += out_now;
			last = t1;
			continue;
		}
		if (t1 < end && out_now + VN_BATCH <= window) {
			k = sendmmsg(s, so, VN_BATCH, 0);
			if (k > 0)
				r->sent += k;
		}
		if (out_now + VN_BATCH > window || t1 >= end)
			poll(&p, 1, 10);
		k = recvmmsg(s, ri, VN_BATCH, MSG_DONTWAIT, NULL);
		if (k > 0) {
			r->echoed += k;
			last = nvx_now_ns();
		}
	}
	close(s);
	/* echoes that came after being counted lost */
	r->lost = r->sent > r->echoed ? r->sent - r->echoed : 0;
	/* to the last echo: not the drain of what was lost */
	r->rate = last > t0 ? r->echoed / ((last - t0) / 1e9) : 0;
	return 0;
}

/* ------------------------------------------------------ the VM side --- */

struct vn_vm {
	struct nvx_uvm_vm vm;
	int ep_fd, done_fd, ret;
	struct nvx_uvm_serve sv;
	pthread_t vcpu, server;
	int stop_serving;
};

static void *vn_vcpu(void *arg)
{
	struct vn_vm *b = arg;
	uint64_t one = 1;

	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		nvx_pin_self(0);
	b->ret = nvx_uvm_run(&b->vm);
	if (write(b->done_fd, &one, sizeof(one)) < 0)
		b->ret = -errno;
	return NULL;
}

static void *vn_serve(void *arg)
{
	struct vn_vm *b = arg;
	struct pollfd p = { .fd = b->ep_fd, .events = POLLIN };
	struct nvx_uvm_recv r;

	while (!__atomic_load_n(&b->stop_serving, __ATOMIC_RELAXED)) {
		poll(&p, 1, 50);
		while (!nvx_uvm_recv(b->ep_fd, &b->sv, &r,
				     NVX_UVM_RECV_NONBLOCK))
			nvx_uvm_serve_msg(b->ep_fd, &b->sv, &r);
	}
	return NULL;
}

static int64_t vn_stat(struct vn_vm *b, const char *name)
{
	return nvx_uvm_kvm_stat(b->vm.stats_fd, name);
}

/*
 * Start @image with @argv (NULL-ended) in a VM on VN_NIC with @net, its
 * vCPU and its message server running: 0, or -errno (logged).
 */
static int vn_vm_start(struct nvx_ctx *ctx, const char *image, char **argv,
		       struct nvx_uvm_net *net, struct vn_vm *b)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	struct nvx_uvm_opts o = { 0 };
	const char *where;
	int ret;

	memset(b, 0, sizeof(*b));
	b->ep_fd = -1;
	b->done_fd = -1;
	net->ifindex = if_nametoindex(VN_NIC);
	nvx_uvm_net_parse_ip(net, VN_GUEST);
	b->sv.in_fd = -1;
	b->sv.out_fd = -1;
	b->sv.err_fd = 2;
	b->sv.buf = malloc(NVX_UVM_MAX_BULK);
	if (!b->sv.buf)
		return -ENOMEM;
	b->done_fd = eventfd(0, EFD_CLOEXEC);
	if (b->done_fd < 0 || ioctl(ctx->fd, NVX_IOC_UVM_ENDPOINT, &ep) < 0) {
		ret = -errno;
		nvx_err("bench vmnet: %s: %s",
			b->done_fd < 0 ? "eventfd" : "NVX_IOC_UVM_ENDPOINT",
			strerror(-ret));
		if (b->done_fd >= 0)
			close(b->done_fd);
		free(b->sv.buf);
		return ret;
	}
	b->ep_fd = ep.fd;
	o.image = image;
	o.argv = argv;
	while (argv[o.argc])
		o.argc++;
	o.ep_fd = ep.fd;
	o.net = net;
	ret = nvx_uvm_create(&b->vm, ctx->fd, &o, &where);
	if (ret) {
		nvx_err("bench vmnet: %s: %s", where, strerror(-ret));
		goto fail;
	}
	ret = -pthread_create(&b->server, NULL, vn_serve, b);
	if (ret)
		goto fail_thread;
	ret = -pthread_create(&b->vcpu, NULL, vn_vcpu, b);
	if (ret) {
		b->stop_serving = 1;
		pthread_join(b->server, NULL);
		goto fail_thread;
	}
	return 0;
fail_thread:
	nvx_err("bench vmnet: a thread: %s", strerror(-ret));
fail:
	nvx_uvm_destroy(&b->vm);
	close(b->done_fd);
	close(b->ep_fd);
	free(b->sv.buf);
	return ret;
}

/* Stop what vn_vm_start() started and free it. */
static void vn_vm_stop(struct vn_vm *b)
{
	b->vm.stop = 1;
	while (pthread_tryjoin_np(b->vcpu, NULL)) {
		pthread_kill(b->vcpu, SIGUSR1);
		usleep(10000);
	}
	b->stop_serving = 1;
	pthread_join(b->server, NULL);
	nvx_uvm_destroy(&b->vm);
	close(b->done_fd);
	close(b->ep_fd);
	free(b->sv.buf);
}

/* udp-echo in a VM on VN_NIC (--poll with @poll), echoing to the client. */
static int vn_guest(struct nvx_ctx *ctx, const char *image, bool poll,
		    uint64_t ns, unsigned int window, struct vn_run *r)
{
	static const char *const names[] = {
		"exits", "irq_exits", "userspace_exits", "halt_exits",
	};
	char a0[] = "udp-echo", a1[] = "--poll";
	char *argv[3];
	int64_t before[4], after[4];
	struct nvx_uvm_net net = { 0 };
	struct vn_vm b;
	unsigned int i;
	int ret;

	argv[0] = a0;
	argv[1] = poll ? a1 : NULL;
	argv[2] = NULL;
	ret = vn_vm_start(ctx, image, argv, &net, &b);
	if (ret)
		return ret;
	for (i = 0; i < 4; i++)
		before[i] = vn_stat(&b, names[i]);
	ret = vn_client(VN_GUEST, VN_PORT, 0, ns, window, r);
	for (i = 0; i < 4; i++)
		after[i] = vn_stat(&b, names[i]);
	vn_vm_stop(&b);
	if (ret) {
		nvx_err("bench vmnet: the VM's client: %s", strerror(-ret));
		return ret;
	}
	/* KVM's counts take in the warm-up too (its frames and a 200 ms wait) */
	r->exits = nvx_bench_div((after[0] - before[0]) -
				 (after[1] - before[1]), r->echoed);
	r->irq_exits = nvx_bench_div(after[1] - before[1], r->echoed);
	r->user_exits = nvx_bench_div(after[2] - before[2], r->echoed);
	r->halts = nvx_bench_div(after[3] - before[3], r->echoed);
	return 0;
}

/* A burst taken whole by a VM that holds every buffer: what it used. */
struct vn_burst {
	unsigned int nr_bufs;	/* the VM's buffers (16 KiB each) */
	uint64_t sent;
	uint64_t received;	/* frames the NIC wrote into them */
	uint64_t drops_no_buf;
	uint64_t drops_cq_full;
	unsigned int bufs_used;	/* buffers filled or filling at the end */
};

/*
 * VN_BURST datagrams of VN_PAYLOAD bytes, sent at once to udp-echo
 * --sink --poll --hold in a VM with @nr_bufs buffers: nothing is given
 * back, so what fits is what the buffers hold.
 */
static int vn_burst(struct nvx_ctx *ctx, const char *image,
		    unsigned int nr_bufs, struct vn_burst *r)
{
	char a0[] = "udp-echo", a1[] = "--sink", a2[] = "--poll",
	     a3[] = "--hold", a4[] = "1000000";
	char *argv[6];
	struct nvx_uvm_net net = { .nr_bufs = nr_bufs,
				   .cq_entries = NVX_UVM_NET_MAX_CQ };
	char out[VN_BATCH][VN_PAYLOAD], cmd[160];
	struct mmsghdr so[VN_BATCH];
	struct iovec iso[VN_BATCH];
	struct nvx_srq_stats st = { 0 };
	uint64_t seen = UINT64_MAX;
	const uint8_t *m;
	struct vn_vm b;
	int s, i, k, ret;

	memset(r, 0, sizeof(*r));
	r->nr_bufs = nr_bufs;
	argv[0] = a0;
	argv[1] = a1;
	argv[2] = a2;
	argv[3] = a3;
	argv[4] = a4;
	argv[5] = NULL;
	ret = vn_vm_start(ctx, image, argv, &net, &b);
	if (ret)
		return ret;
	/*
	 * The guest polling its ring (a drop for a full completion ring
	 * says it was not yet: warned below); its MAC known: no ARP.
	 */
	usleep(2000000);
	m = b.vm.net->mac;
	snprintf(cmd, sizeof(cmd),
		 "ip neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %sp nud permanent",
		 VN_GUEST, m[0], m[1], m[2], m[3], m[4], m[5], VN_NIC);
	s = vn_sh(cmd) ? -EIO : vn_socket(VN_GUEST, VN_PORT, 0);
	if (s < 0) {
		ret = s;
		goto out;
	}
	memset(out, 0x5a, sizeof(out));
	vn_mmsg_init(so, iso, out, VN_PAYLOAD);
	while (r->sent < VN_BURST) {
		k = sendmmsg(s, so, VN_BATCH, 0);
		if (k < 0 && (errno == ENOBUFS || errno == EAGAIN)) {
			usleep(1000);	/* the host's queue, not the VM's */
			continue;
		}
		if (k <= 0) {
			ret = k ? -errno : -EIO;
			break;
		}
		r->sent += k;
	}
	close(s);
	/* until the set's counts stop moving (3 s at most) */
	for (i = 0; i < 30 && !ret; i++) {
		st = (struct nvx_srq_stats){ .queue = NVX_SRQ_ALL_QUEUES };
		if (ioctl(b.vm.srq_fd, NVX_SRQ_IOC_STATS, &st)) {
			ret = -errno;
			break;
		}
		if (st.rx_packets + st.drops_no_buf + st.drops_cq_full == seen)
			break;
		seen = st.rx_packets + st.drops_no_buf + st.drops_cq_full;
		usleep(100000);
	}
	r->received = st.rx_packets;
	r->drops_no_buf = st.drops_no_buf;
	r->drops_cq_full = st.drops_cq_full;
	r->bufs_used = st.bufs_held + st.bufs_filling;
	if (r->drops_cq_full)
		nvx_warn("bench vmnet: the burst to %u buffers: %llu drops for a full completion ring: the guest did not keep up, the run says nothing of the buffers",
			 nr_bufs, (unsigned long long)r->drops_cq_full);
out:
	vn_vm_stop(&b);
	if (ret)
		nvx_err("bench vmnet: the burst: %s", strerror(-ret));
	return ret;
}

/* ---------------------------------------------------- the host side --- */

/* The echo server: in its own netns, recvmmsg() then sendmmsg() back. */
static void vn_server(int go_fd, int ns_fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(VN_PORT) };
	struct sockaddr_in from[VN_BATCH];
	char buf[VN_BATCH][2048];
	struct mmsghdr m[VN_BATCH];
	struct iovec iov[VN_BATCH];
	char c;
	int s, i, k;

	/* its netns exists: the parent may move the veth's end into it */
	if (write(ns_fd, "n", 1) != 1)
		_exit(1);
	close(ns_fd);
	if (read(go_fd, &c, 1) != 1)
		_exit(1);
	if (vn_sh("ip link set lo up && ip addr add " VN_VSERVER
		  "/24 dev nvxbv1 && ip link set nvxbv1 up"))
		_exit(2);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)))
		_exit(3);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		nvx_pin_self(0);
	for (;;) {
		memset(m, 0, sizeof(m));
		for (i = 0; i < VN_BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
			m[i].msg_hdr.msg_name = &from[i];
			m[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		k = recvmmsg(s, m, VN_BATCH, MSG_WAITFORONE, NULL);
		if (k <= 0)
			continue;
		for (i = 0; i < k; i++)
			iov[i].iov_len = m[i].msg_len;
		sendmmsg(s, m, k, 0);
	}
}

static int vn_host(uint64_t ns, unsigned int window, struct vn_run *r)
{
	int go[2] = { -1, -1 }, nsp[2] = { -1, -1 }, ret, i;
	char cmd[160], c;
	pid_t pid;

	vn_sh("ip link del " VN_VETH " 2>/dev/null");
	if (vn_sh("ip link add " VN_VETH " type veth peer name nvxbv1"))
		return -ENODEV;
	if (pipe2(go, O_CLOEXEC) || pipe2(nsp, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(go[1]);
		close(nsp[0]);
		if (unshare(CLONE_NEWNET))
			_exit(4);
		vn_server(go[0], nsp[1]);
	}
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	close(nsp[1]);
	nsp[1] = -1;
	ret = -ENODEV;
	if (read(nsp[0], &c, 1) == 1) {
		snprintf(cmd, sizeof(cmd), "ip link set nvxbv1 netns %d",
			 (int)pid);
		ret = vn_sh(cmd) || vn_sh("ip addr add " VN_VHOST "/24 dev "
					  VN_VETH " && ip link set " VN_VETH
					  " up") ? -ENODEV : 0;
	}
	/* SIGPIPE is ignored: a child that died is an EPIPE here */
	if (!ret && write(go[1], "g", 1) != 1)
		ret = -EPIPE;
	if (!ret)
		ret = vn_client(VN_VSERVER, VN_PORT, 0, ns, window, r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	for (i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (nsp[i] >= 0)
			close(nsp[i]);
	}
	vn_sh("ip link del " VN_VETH " 2>/dev/null");
	return ret;
}

/* ------------------------------------- through the system process --- */

#define VN_SYS_PORT	7007	/* the guest's socket (unprivileged) */
#define VN_SYS_CPORT	7008	/* the client's port: the guest connects to it */

static const char vn_sys_policy[] =
	"[tenant vmnet]\n"
	"calls = write exit clock getrandom socket bind connect send sockrecv close\n"
	"egress = allow 127.0.0.0/8\n";

/*
 * The same guest (udp-echo --sys) echoing through a UDP socket of its
 * system process (`nvxtool uvm run`, nvxtool beside this program),
 * bound to 0.0.0.0:VN_SYS_PORT in this namespace and connected to the
 * client's 127.0.0.1:VN_SYS_CPORT: one message to the system process
 * per datagram each way (Nanvix's gateway path).
 */
static int vn_sys(const char *image, uint64_t ns, unsigned int window,
		  struct vn_run *r)
{
	char dir[] = "/tmp/nvx-bench-vmnet.XXXXXX", policy[64], tool[PATH_MAX];
	const char *argv[14] = { tool, "uvm", "run", "--policy", policy,
				 "--tenant", "vmnet", image, "--", "--sys",
				 NULL, "--port" };
	char peer[32], port[8];
	ssize_t len;
	pid_t pid;
	int fd, ret;

	snprintf(peer, sizeof(peer), "127.0.0.1:%u", VN_SYS_CPORT);
	snprintf(port, sizeof(port), "%u", VN_SYS_PORT);
	argv[10] = peer;
	argv[12] = port;
	len = readlink("/proc/self/exe", tool, sizeof(tool) - 16);
	if (len <= 0)
		return -errno;
	tool[len] = 0;
	snprintf(strrchr(tool, '/'), 16, "/nvxtool");
	if (access(tool, X_OK) || !mkdtemp(dir))
		return -errno;
	snprintf(policy, sizeof(policy), "%s/policy", dir);
	fd = open(policy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out_dir;
	}
	len = write(fd, vn_sys_policy, sizeof(vn_sys_policy) - 1);
	close(fd);
	if (len != sizeof(vn_sys_policy) - 1) {
		ret = -EIO;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (!pid) {
		/* a group of its own: it and the system process it forks */
		setpgid(0, 0);
		/* VM and system process on CPU 0, as the other servers */
		if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
			nvx_pin_self(0);
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, 1);
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	ret = vn_client("127.0.0.1", VN_SYS_PORT, VN_SYS_CPORT, ns, window, r);
	kill(-pid, SIGTERM);
	waitpid(pid, NULL, 0);
out:
	unlink(policy);
out_dir:
	rmdir(dir);
	return ret;
}

/* ------------------------------------------------------------ main --- */

static void vn_print_run(struct nvx_ctx *ctx, const char *name,
			 const struct vn_run *r, bool vm)
{
	struct nvx_json *j = &ctx->js;

	if (ctx->json) {
		nvx_json_object_begin(j, name);
		nvx_json_double(j, "frames_per_s", r->rate);
		nvx_json_u64(j, "sent", r->sent);
		nvx_json_u64(j, "echoed", r->echoed);
		nvx_json_u64(j, "lost", r->lost);
		if (vm) {
			nvx_json_double(j, "exits_per_frame", r->exits);
			nvx_json_double(j, "irq_exits_per_frame",
					r->irq_exits);
			nvx_json_double(j, "userspace_exits_per_frame",
					r->user_exits);
			nvx_json_double(j, "halt_exits_per_frame", r->halts);
		}
		nvx_json_end(j);
		return;
	}
	printf("%-22s %12.0f %10llu %8llu", name, r->rate,
	       (unsigned long long)r->echoed, (unsigned long long)r->lost);
	if (vm)
		printf(" %10.4f %10.4f %10.4f %10.4f", r->exits, r->user_exits,
		       r->halts, r->irq_exits);
	printf("\n");
}

static void vn_print_burst(struct nvx_ctx *ctx, const struct vn_burst *b)
{
	struct nvx_json *j = &ctx->js;

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "nr_bufs", b->nr_bufs);
		nvx_json_u64(j, "kib", b->nr_bufs * NVX_SRQ_DEF_BUF_SIZE / 1024);
		nvx_json_u64(j, "sent", b->sent);
		nvx_json_u64(j, "received", b->received);
		nvx_json_u64(j, "drops_no_buf", b->drops_no_buf);
		nvx_json_u64(j, "drops_cq_full", b->drops_cq_full);
		nvx_json_u64(j, "bufs_used", b->bufs_used);
		nvx_json_end(j);
		return;
	}
	printf("  measured, a VM holding what it takes, %u buffers (%u KiB): ",
	       b->nr_bufs, b->nr_bufs * NVX_SRQ_DEF_BUF_SIZE / 1024);
	printf("sent %llu, in its buffers %llu, dropped no-buffer %llu, ",
	       (unsigned long long)b->sent, (unsigned long long)b->received,
	       (unsigned long long)b->drops_no_buf);
	printf("cq-full %llu, buffers used %u\n",
	       (unsigned long long)b->drops_cq_full, b->bufs_used);
}

/**
 * cmd_bench_vmnet() - nvx-bench vmnet
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_vmnet(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, VN_OPT_SECONDS },
		{ "window", required_argument, NULL, VN_OPT_WINDOW },
		{ }
	};
	struct sigaction sa = { .sa_handler = vn_nop };
	struct nvx_pool_resize grow = { 0 };
	struct vn_run irq = { 0 }, poll = { 0 }, sys = { 0 }, host = { 0 };
	unsigned long long v, seconds = 3, window = 256;
	/* a burst of VN_BURST 64-byte frames: strides, or whole buffers */
	double direct_kib = VN_BURST * (double)NVX_SRQ_DEF_STRIDE / 1024;
	double perq_kib = VN_BURST * 2048.0 / 1024;
	const unsigned int burst_bufs = VN_BURST * NVX_SRQ_DEF_STRIDE /
					NVX_SRQ_DEF_BUF_SIZE;
	struct vn_burst burst[2] = { 0 };
	char image[PATH_MAX];
	struct nvx_json *j = &ctx->js;
	uint64_t ns;
	int c, i, ret;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case VN_OPT_SECONDS:
			if (nvx_parse_uint(optarg, 3600, &v) || !v)
				return nvx_usage_error(ctx, "bad --seconds: %s",
						       optarg);
			seconds = v;
			break;
		case VN_OPT_WINDOW:
			if (nvx_parse_uint(optarg, 1000, &v) || v < VN_BATCH)
				return nvx_usage_error(ctx, "bad --window: %s",
						       optarg);
			window = v;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (nvx_uvm_find_image("udp-echo", image, sizeof(image))) {
		nvx_err("bench vmnet: udp-echo not found (set NVX_GUEST_DIR)");
		return NVX_EXIT_FAIL;
	}
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	grow.node = NVX_NODE_ANY;
	grow.bytes = VN_POOL;
	ret = nvx_ioctl(ctx, NVX_IOC_POOL_GROW, &grow, "NVX_IOC_POOL_GROW");
	if (ret)
		return ret;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ns = seconds * 1000000000ULL;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		nvx_pin_self(1);	/* the client; VM and server on CPU 0 */

	vn_sh("ip link del " VN_NIC " 2>/dev/null");
	ret = vn_sh("ip link add " VN_NIC " type nvxsim && ip link set " VN_NIC
		    " up && ip link set " VN_NIC "p up && ip addr add "
		    VN_HOST "/24 dev " VN_NIC "p");
	if (ret) {
		nvx_err("bench vmnet: cannot make the nvxsim NIC " VN_NIC);
		vn_sh("ip link del " VN_NIC " 2>/dev/null");
		ret = -ENODEV;
		goto out;
	}
	ret = vn_guest(ctx, image, false, ns, window, &irq);
	if (!ret)
		ret = vn_guest(ctx, image, true, ns, window, &poll);
	/* the whole burst's strides, then half of them */
	for (i = 0; i < 2 && !ret; i++)
		ret = vn_burst(ctx, image, burst_bufs >> i, &burst[i]);
	vn_sh("ip link del " VN_NIC);
	if (!ret) {
		ret = vn_sys(image, ns, window, &sys);
		if (ret)
			nvx_err("bench vmnet: through the system process: %s",
				strerror(-ret));
	}
	if (!ret) {
		ret = vn_host(ns, window, &host);
		if (ret)
			nvx_err("bench vmnet: the veth baseline: %s",
				strerror(-ret));
	}
	if (ret)
		goto out;

	if (ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "seconds", seconds);
		nvx_json_u64(j, "window", window);
		nvx_json_u64(j, "payload", VN_PAYLOAD);
		vn_print_run(ctx, "vm_direct", &irq, true);
		vn_print_run(ctx, "vm_direct_polling", &poll, true);
		vn_print_run(ctx, "vm_sys_socket", &sys, false);
		vn_print_run(ctx, "host_veth_mmsg", &host, false);
		nvx_json_object_begin(j, "burst_4096x64");
		nvx_json_double(j, "direct_kib", direct_kib);
		nvx_json_double(j, "per_queue_one_frame_kib", perq_kib);
		nvx_json_array_begin(j, "measured");
		for (i = 0; i < 2; i++)
			vn_print_burst(ctx, &burst[i]);
		nvx_json_end(j);
		nvx_json_end(j);
		nvx_json_double(j, "polling_over_host",
				nvx_bench_div(poll.rate, host.rate));
		nvx_json_double(j, "direct_over_sys_socket",
				nvx_bench_div(irq.rate, sys.rate));
		nvx_json_double(j, "headline", nvx_bench_div(irq.rate,
							     host.rate));
		nvx_json_end(j);
		fputc('\n', stdout);
	} else {
		printf("UDP echo, %u-byte payloads (64-byte frames), %llu s, ",
		       VN_PAYLOAD, seconds);
		printf("at most %llu in flight\n", window);
		printf("%-22s %12s %10s %8s %10s %10s %10s %10s\n", "path",
		       "echoes/s", "echoed", "lost", "exits/fr", "user/fr",
		       "hlt/fr", "hostirq/fr");
		vn_print_run(ctx, "vm_direct", &irq, true);
		vn_print_run(ctx, "vm_direct_polling", &poll, true);
		vn_print_run(ctx, "vm_sys_socket", &sys, false);
		vn_print_run(ctx, "host_veth_mmsg", &host, false);
		printf("burst of %u x 64 B, no drop: %.0f KiB of 16 KiB buffers at 256 B strides; ",
		       VN_BURST, direct_kib);
		printf("%.0f KiB one frame per 2 KiB buffer\n", perq_kib);
		for (i = 0; i < 2; i++)
			vn_print_burst(ctx, &burst[i]);
		printf("polling VM / host: %.2f\n",
		       nvx_bench_div(poll.rate, host.rate));
		printf("VM direct / the same VM through its system process's socket: %.2f\n",
		       nvx_bench_div(irq.rate, sys.rate));
		printf("headline (VM direct / host process, echoes per second): %.2f\n",
		       nvx_bench_div(irq.rate, host.rate));
	}
out:
	nvx_unpin_self();
	nvx_bench_shrink(ctx, grow.done, "vmnet");
	return ret ? NVX_EXIT_FAIL : NVX_EXIT_OK;
}

const char nvx_bench_vmnet_usage[] =
	"[--seconds S] [--window N]\n"
	"\n"
	"Packets straight into user VMs, against a process on a socket, in the\n"
	"same run, with the same client (this process, a connected UDP socket,\n"
	"sendmmsg()/recvmmsg() in batches of 32, at most --window datagrams of\n"
	"18 bytes (64-byte frames) in flight, for --seconds):\n"
	"\n"
	"  vm_direct: udp-echo.img in a user VM with a network (nvxsim NIC\n"
	"    nvxbn0, the VM at " VN_GUEST "): frames read in its own memory,\n"
	"    echoes sent by its TX ring, one port write per batch; it sleeps\n"
	"    when idle (the set's notification as its interrupt)\n"
	"  vm_direct_polling: the same with udp-echo --poll (never sleeps)\n"
	"  vm_sys_socket: the same guest (udp-echo --sys) echoing through a\n"
	"    UDP socket of its system process (`nvxtool uvm run`, the nvxtool\n"
	"    beside this program, a tenant with socket calls), at\n"
	"    127.0.0.1:7007: a message each way per datagram\n"
	"  host_veth_mmsg: a host process echoing with recvmmsg()/sendmmsg()\n"
	"    in another network namespace over a veth pair\n"
	"\n"
	"Per VM path, KVM's exits per echoed frame (all but the host's\n"
	"interrupts), to userspace (TX kicks), halts, and the host's\n"
	"interrupts. The memory a burst of 4,096 64-byte frames needs without a\n"
	"drop is computed from the geometry (256-byte strides of 16 KiB\n"
	"buffers, against one frame per 2 KiB buffer) and measured: the burst\n"
	"sent at once to udp-echo --sink --poll --hold in a VM with 64 buffers\n"
	"(1 MiB), then 32, that gives none back; the set's counters say what\n"
	"landed and what was dropped. With two CPUs the VM's\n"
	"vCPU (or the server) runs on CPU 0, the client on CPU 1. Grows the\n"
	"pool by 32 MiB and gives it back; makes and deletes the NIC and veth.\n"
	"Under QEMU TCG the rates are not hardware rates: compare the ratios.\n"
	"JSON: \"vm_direct\", \"vm_direct_polling\", \"vm_sys_socket\",\n"
	"\"host_veth_mmsg\" (each\n"
	"\"frames_per_s\", \"sent\", \"echoed\", \"lost\", and for a VM\n"
	"\"exits_per_frame\", \"irq_exits_per_frame\",\n"
	"\"userspace_exits_per_frame\", \"halt_exits_per_frame\"),\n"
	"\"burst_4096x64\" (\"direct_kib\", \"per_queue_one_frame_kib\" and\n"
	"\"measured\": per run \"nr_bufs\", \"kib\", \"sent\", \"received\",\n"
	"\"drops_no_buf\", \"drops_cq_full\", \"bufs_used\"),\n"
	"\"polling_over_host\", \"direct_over_sys_socket\" and \"headline\": vm_direct's\n"
	"echoes per second over host_veth_mmsg's.\n";
