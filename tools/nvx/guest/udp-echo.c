// SPDX-License-Identifier: GPL-2.0
/*
 * udp-echo: answer every UDP datagram sent to this VM's port with the
 * same bytes, straight on the VM's own receive queue (net.h): no copy on
 * receive, no exit while frames come, one port write per batch sent.
 * ARP and ping are answered on the way.
 *
 *   udp-echo [--port P] [--count N] [--hold N] [--sink] [--poll]
 *            [--hello IP:PORT | --sys IP:PORT]
 *
 * --port P   the port served (default 7; 0: any port);
 * --count N  stop after N datagrams (default 0: never);
 * --hold N   give no buffer back to the NIC until N datagrams have come
 *            (a guest that stops releasing; a burst taken whole), then
 *            all at once;
 * --sink     count them without answering;
 * --poll     never sleep: poll the completion ring only;
 * --hello IP:PORT  first send one datagram, "hello", from our port to
 *            IP:PORT, its next hop's MAC found by ARP (asked again every
 *            100 ms, for 5 s at most);
 * --sys IP:PORT  not on this VM's own queue: through a UDP socket of the
 *            system process (rt.h's socket calls, one message each way
 *            per datagram), bound to --port and connected to IP:PORT,
 *            the only sender it then hears (a baseline for nvx-bench
 *            vmnet). The tenant needs socket bind connect send sockrecv
 *            and an egress rule for IP.
 *
 * Prints "udp-echo: IP port P" when it starts, "udp-echo: hello to
 * IP:PORT after N ARP requests" once the hello is posted and, at the end,
 * its counters ("udp-echo: rx N tx N arp N icmp N bad N kicks N halts N
 * wakes N": wakes are the sleeps that a frame's interrupt ended before
 * the safety tick was due). Exit 0; 2 without a network (the VMM gave
 * none); 1 on bad arguments, when the TX ring was stopped or no ARP
 * answer came for the hello.
 */
#include "net.h"

static const char usage[] =
	"usage: udp-echo [--port P] [--count N] [--hold N] [--sink] [--poll]\n"
	"                [--hello IP:PORT | --sys IP:PORT]\n";

/* A line built whole, then written at once: VMs sharing a stdout. */
struct line {
	char b[256];
	unsigned int n;
};

static void add(struct line *l, const char *s)
{
	while (*s && l->n < sizeof(l->b) - 1)
		l->b[l->n++] = *s++;
}

static void add_dec(struct line *l, unsigned long long v)
{
	char d[24];

	d[fmt_u64(d, v, 10)] = '\0';
	add(l, d);
}

static void add_stat(struct line *l, const char *name, unsigned long long v)
{
	add(l, " ");
	add(l, name);
	add(l, " ");
	add_dec(l, v);
}

/* "IP:PORT" into @ip (a string) and @port (1..65535): 0, or -1. */
static int parse_peer(const char *peer, char ip[16], unsigned long *port)
{
	unsigned int i;
	char *end;

	for (i = 0; peer[i] && peer[i] != ':' && i < 15; i++)
		ip[i] = peer[i];
	ip[i] = '\0';
	if (peer[i] != ':')
		return -1;
	*port = strtoul(peer + i + 1, &end, 10);
	if (*end || end == peer + i + 1 || !*port || *port > 65535)
		return -1;
	return 0;
}

/*
 * --sys: echo through a socket of the system process, connected to
 * @peer ("IP:PORT"). The start and end lines as on the direct path.
 */
static int sys_echo(const char *peer, unsigned long port,
		    unsigned long count, int sink)
{
	static unsigned char buf[2048];
	unsigned long long rx = 0, tx = 0;
	struct nvx_uvm_sockaddr a;
	struct line l = { .n = 0 };
	unsigned long pport;
	const char *what;
	char ip[16];
	long n;
	int fd, err;

	if (parse_peer(peer, ip, &pport))
		goto bad;
	what = "socket";
	fd = socket(AF_INET, SOCK_DGRAM);
	err = fd < 0 ? fd : 0;
	if (!err) {
		what = "bind";
		err = sockaddr4(&a, "0.0.0.0", port) ?: bind(fd, &a);
	}
	if (!err) {
		what = "connect";
		err = sockaddr4(&a, ip, pport) ?: connect(fd, &a);
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		add(&l, "udp-echo: ");
		add(&l, what);
		add(&l, ": errno ");
		add_dec(&l, -err);
		add(&l, "\n");
		write(1, l.b, l.n);
		return 2;
	}
	add(&l, "udp-echo: sys socket port ");
	add_dec(&l, port);
	add(&l, "\n");
	write(1, l.b, l.n);
	while (!count || rx < count) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			l.n = 0;
			add(&l, "udp-echo: recv: errno ");
			add_dec(&l, -n);
			add(&l, "\n");
			write(1, l.b, l.n);
			break;
		}
		rx++;
		if (!sink && send(fd, buf, n, 0) == n)
			tx++;
	}
	close(fd);
	l.n = 0;
	add(&l, "udp-echo:");
	add_stat(&l, "rx", rx);
	add_stat(&l, "tx", tx);
	add(&l, "\n");
	write(1, l.b, l.n);
	return 0;
bad:
	print("udp-echo: bad --sys address (IP:PORT)\n");
	return 1;
}

/*
 * --hello: one datagram "hello" from @port to @peer ("IP:PORT"), sent
 * as soon as ARP found the next hop (udp_send() without a MAC asks for
 * it; the answer is learned while frames are read). 0, or 1 (said why).
 */
static int say_hello(const char *peer, unsigned long port)
{
	static const char msg[] = "hello";
	unsigned long long now, next = 0, end;
	struct line l = { .n = 0 };
	unsigned int asks = 0;
	struct udp_dgram d;
	unsigned long pport;
	unsigned int dst;
	char ip[16];
	int err = -EHOSTUNREACH;

	if (parse_peer(peer, ip, &pport) ||
	    inet_pton4(ip, (unsigned char *)&dst)) {
		print("udp-echo: bad --hello address (IP:PORT)\n");
		return 1;
	}
	end = clock_ns() + 5000000000ULL;
	while ((now = clock_ns()) < end) {
		if (now >= next) {
			/* with the MAC known, the hello itself */
			err = udp_send(NULL, dst, port, pport, msg,
				       sizeof(msg) - 1);
			if (err != -EHOSTUNREACH)
				break;
			asks++;
			next = now + 100000000ULL;
		}
		/* ARP answers are learned here; a datagram is dropped */
		while (!udp_recv(&d, 0))
			;
		cpu_relax();
	}
	net_flush();
	add(&l, err ? "udp-echo: no hello to " : "udp-echo: hello to ");
	add(&l, peer);
	add(&l, err ? ": errno " : " after ");
	add_dec(&l, err ? (unsigned int)-err : asks);
	add(&l, err ? "\n" : " ARP requests\n");
	write(1, l.b, l.n);
	return err ? 1 : 0;
}

int nvx_main(int argc, char **argv)
{
	unsigned long port = 7, count = 0, hold = 0, n = 0;
	const struct net_stats *s;
	const unsigned char *ip;
	int sink = 0, i, err = 0;
	const char *sys = NULL, *hello = NULL;
	struct line l = { .n = 0 };
	struct udp_dgram d;
	char *end;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sink")) {
			sink = 1;
		} else if (!strcmp(argv[i], "--poll")) {
			net_set_poll(1);
		} else if (i + 1 < argc && !strcmp(argv[i], "--sys")) {
			sys = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--hello")) {
			hello = argv[++i];
		} else if (i + 1 < argc && (!strcmp(argv[i], "--port") ||
					    !strcmp(argv[i], "--count") ||
					    !strcmp(argv[i], "--hold"))) {
			unsigned long v = strtoul(argv[i + 1], &end, 10);

			if (*end || end == argv[i + 1] ||
			    (argv[i][2] == 'p' && v > 65535) ||
			    (argv[i][2] == 'h' && !v)) {
				print("udp-echo: bad number\n");
				return 1;
			}
			if (argv[i][2] == 'p')
				port = v;
			else if (argv[i][2] == 'c')
				count = v;
			else
				hold = v;
			i++;
		} else {
			print(usage);
			return 1;
		}
	}
	if (sys && (hold || hello)) {
		print("udp-echo: --hold and --hello are for the VM's own queue, not --sys\n");
		return 1;
	}
	if (sys)
		return sys_echo(sys, port, count, sink);
	if (net_init()) {
		print("udp-echo: no network\n");
		return 2;
	}
	ip = (const unsigned char *)&net_info()->ip4;
	add(&l, "udp-echo: ");
	for (i = 0; i < 4; i++) {
		add_dec(&l, ip[i]);
		add(&l, i < 3 ? "." : " port ");
	}
	add_dec(&l, port);
	add(&l, "\n");
	write(1, l.b, l.n);
	if (hello && say_hello(hello, port ? port : 7))
		return 1;
	if (hold)
		net_set_hold(1);

	while (!count || n < count) {
		if (udp_recv(&d, 1))
			break;
		if (port && d.dport != port)
			continue;
		n++;
		if (n == hold)
			net_set_hold(0);
		if (sink)
			continue;
		/* the next hop is who sent it: no ARP lookup */
		if (udp_send(d.mac, d.ip, d.dport, d.sport, d.data, d.len) ==
		    -EIO) {
			err = 1;
			break;
		}
	}
	net_flush();
	s = net_stats();
	l.n = 0;
	add(&l, "udp-echo:");
	add_stat(&l, "rx", s->rx_udp);
	add_stat(&l, "tx", s->tx_frames);
	add_stat(&l, "arp", s->rx_arp);
	add_stat(&l, "icmp", s->rx_icmp);
	add_stat(&l, "bad", s->rx_bad);
	add_stat(&l, "kicks", s->kicks);
	add_stat(&l, "halts", s->halts);
	add_stat(&l, "wakes", s->irq_wakes);
	add(&l, "\n");
	write(1, l.b, l.n);
	return err;
}
