// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: netdevs by name, and a small rtnetlink client to add, delete
 * and raise links (nvx_net.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "nvx_net.h"

/* An ioctl on an interface by name, through a throwaway socket. */
static int nvx_if_ioctl(const char *name, unsigned long req,
			struct ifreq *ifr)
{
	int fd, ret = 0;

	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, req, ifr))
		ret = -errno;
	close(fd);
	return ret;
}

/**
 * nvx_if_mac() - the MAC address of a netdev
 * @name: the netdev.
 * @mac: filled in.
 *
 * Return: 0 or -errno.
 */
int nvx_if_mac(const char *name, uint8_t mac[ETH_ALEN])
{
	struct ifreq ifr;
	int ret;

	ret = nvx_if_ioctl(name, SIOCGIFHWADDR, &ifr);
	if (!ret)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return ret;
}

/**
 * nvx_if_up() - is a netdev up?
 * @name: the netdev.
 *
 * Return: true when it exists and is IFF_UP.
 */
bool nvx_if_up(const char *name)
{
	struct ifreq ifr;

	return !nvx_if_ioctl(name, SIOCGIFFLAGS, &ifr) &&
	       (ifr.ifr_flags & IFF_UP);
}

/*
 * rtnetlink, for the NICs of nvx-bench srq and the tests: a request of at most
 * sizeof(struct nvx_nl_msg), answered by an ACK.
 */
struct nvx_nl_msg {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char attrs[256];
};

static struct rtattr *nvx_nl_put(struct nvx_nl_msg *m, unsigned short type,
				 const void *data, size_t len)
{
	struct rtattr *rta;

	assert(NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_SPACE(len) <= sizeof(*m));
	rta = (struct rtattr *)((char *)m + NLMSG_ALIGN(m->nh.nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_SPACE(len);
	return rta;
}

static void nvx_nl_end(struct nvx_nl_msg *m, struct rtattr *nest)
{
	nest->rta_len = (char *)m + m->nh.nlmsg_len - (char *)nest;
}

static void nvx_nl_init(struct nvx_nl_msg *m, unsigned short type,
			unsigned short flags)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(m->ifi));
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->nh.nlmsg_seq = 1;
	m->ifi.ifi_family = AF_UNSPEC;
}

/* Send @m to the kernel: 0, or -errno of its answer. */
static int nvx_nl_talk(struct nvx_nl_msg *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint32_t buf[2048];
	struct nlmsghdr *h;
	ssize_t n;
	int fd, ret = -EPROTO;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (sendto(fd, m, m->nh.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (!n)
			goto out;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				ret = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				goto out;
			}
		}
	}
out:
	close(fd);
	return ret;
}

/**
 * nvx_link_add() - ip link add NAME type KIND [peer name PEER]
 * @name: the new netdev.
 * @kind: its type: "nvxsim", "veth", ...
 * @peer: veth only: the peer's name; or NULL.
 *
 * Return: 0 or -errno.
 */
int nvx_link_add(const char *name, const char *kind, const char *peer)
{
	struct ifinfomsg pi = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *p;
	struct nvx_nl_msg m;

	nvx_nl_init(&m, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	nvx_nl_put(&m, IFLA_IFNAME, name, strlen(name) + 1);
	info = nvx_nl_put(&m, IFLA_LINKINFO, NULL, 0);
	nvx_nl_put(&m, IFLA_INFO_KIND, kind, strlen(kind));
	if (peer) {
		data = nvx_nl_put(&m, IFLA_INFO_DATA, NULL, 0);
		p = nvx_nl_put(&m, VETH_INFO_PEER, &pi, sizeof(pi));
		nvx_nl_put(&m, IFLA_IFNAME, peer, strlen(peer) + 1);
		nvx_nl_end(&m, p);
		nvx_nl_end(&m, data);
	}
	nvx_nl_end(&m, info);
	return nvx_nl_talk(&m);
}

/**
 * nvx_link_del() - ip link del NAME
 * @name: the netdev.
 *
 * Return: 0 or -errno.
 */
int nvx_link_del(const char *name)
{
	struct nvx_nl_msg m;

	nvx_nl_init(&m, RTM_DELLINK, 0);
	nvx_nl_put(&m, IFLA_IFNAME, name, strlen(name) + 1);
	return nvx_nl_talk(&m);
}

/**
 * nvx_link_up() - ip link set dev up
 * @ifindex: the netdev.
 *
 * Return: 0 or -errno.
 */
int nvx_link_up(unsigned int ifindex)
{
	struct nvx_nl_msg m;

	nvx_nl_init(&m, RTM_NEWLINK, 0);
	m.ifi.ifi_index = ifindex;
	m.ifi.ifi_flags = IFF_UP;
	m.ifi.ifi_change = IFF_UP;
	return nvx_nl_talk(&m);
}

/**
 * nvx_link_quiet() - keep the stack from sending on a link
 * @name: the netdev.
 *
 * IPv6 router solicitations would reach a set that is measured. Best
 * effort: without IPv6 there is nothing to turn off.
 */
void nvx_link_quiet(const char *name)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 name);
	f = fopen(path, "we");
	if (!f)
		return;
	fputs("1\n", f);
	fclose(f);
}
