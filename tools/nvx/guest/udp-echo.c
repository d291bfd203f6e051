// SPDX-License-Identifier: GPL-2.0
/*
 * udp-echo: answer every UDP datagram sent to this VM's port with the
 * same bytes, straight on the VM's own receive queue (net.h): no copy on
 * receive, no exit while frames come, one port write per batch sent.
 * ARP and ping are answered on the way.
 *
 *   udp-echo [--port P] [--count N] [--sink] [--poll]
 *
 * --port P   the port served (default 7; 0: any port);
 * --count N  stop after N datagrams (default 0: never);
 * --sink     count them without answering;
 * --poll     never sleep: poll the completion ring only.
 *
 * Prints "udp-echo: IP port P" when it starts and, at the end, its
 * counters ("udp-echo: rx N tx N arp N icmp N bad N kicks N halts N").
 * Exit 0; 2 without a network (the VMM gave none); 1 on bad arguments
 * or when the TX ring was stopped.
 */
#include "net.h"

static void print_ip(unsigned int ip)
{
	const unsigned char *b = (const unsigned char *)&ip;
	int i;

	for (i = 0; i < 4; i++) {
		print_dec(b[i]);
		if (i < 3)
			print(".");
	}
}

static void print_stat(const char *name, unsigned long long v)
{
	print(" ");
	print(name);
	print(" ");
	print_dec(v);
}

int nvx_main(int argc, char **argv)
{
	unsigned long port = 7, count = 0, n = 0;
	const struct net_stats *s;
	int sink = 0, i, err = 0;
	struct udp_dgram d;
	char *end;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sink")) {
			sink = 1;
		} else if (!strcmp(argv[i], "--poll")) {
			net_set_poll(1);
		} else if (i + 1 < argc && (!strcmp(argv[i], "--port") ||
					    !strcmp(argv[i], "--count"))) {
			unsigned long v = strtoul(argv[i + 1], &end, 10);

			if (*end || end == argv[i + 1] ||
			    (argv[i][2] == 'p' && v > 65535)) {
				print("udp-echo: bad number\n");
				return 1;
			}
			if (argv[i][2] == 'p')
				port = v;
			else
				count = v;
			i++;
		} else {
			print("usage: udp-echo [--port P] [--count N] [--sink] [--poll]\n");
			return 1;
		}
	}
	if (net_init()) {
		print("udp-echo: no network\n");
		return 2;
	}
	print("udp-echo: ");
	print_ip(net_info()->ip4);
	print(" port ");
	print_dec(port);
	print("\n");

	while (!count || n < count) {
		if (udp_recv(&d, 1))
			break;
		if (port && d.dport != port)
			continue;
		n++;
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
	print("udp-echo:");
	print_stat("rx", s->rx_udp);
	print_stat("tx", s->tx_frames);
	print_stat("arp", s->rx_arp);
	print_stat("icmp", s->rx_icmp);
	print_stat("bad", s->rx_bad);
	print_stat("kicks", s->kicks);
	print_stat("halts", s->halts);
	print("\n");
	return err;
}
