// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: shared multi-packet RX queues (include/uapi/nvx/srq.h).
 *
 *   srq create --dev NAME ...	a grant, NVX_IOC_SRQ_CREATE, the set
 *				mapped; optionally receive and release
 *				frames, and hold the set a while
 *   srq show --dev NAME	NVX_IOC_SRQ_INFO: the set's shape, owner
 *   srq stats --dev NAME	NVX_IOC_SRQ_QUERY: counters, per queue
 *   srq send --dev PEER	IPv4/UDP frames out of a netdev through an
 *				AF_PACKET socket
 *   bench srq			buffer memory and frame rate against
 *				per-queue buffers and AF_PACKET; listed
 *				under "bench" through nvx_srq_bench_cmds
 *
 * A set works on an nvxsim NIC (ip link add NAME type nvxsim): frames
 * sent out of its peer NAMEp arrive at NAME's receive queues.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <nvx/pool.h>
#include <nvx/srq.h>

#include "nvxtool.h"

#define NVX_NSEC_PER_SEC	1000000000ULL
#define NVX_NSEC_PER_MSEC	1000000ULL
#define NVX_NSEC_PER_USEC	1000ULL
#define NVX_MIB			(1024ULL * 1024)

/* srq create */
#define NVX_SRQ_DEF_QUEUES	1
#define NVX_SRQ_MAX_RECV	100000000ULL
#define NVX_SRQ_MAX_HOLD	86400		/* s */
/* --recv gives up after this long without a completion */
#define NVX_SRQ_RECV_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* an idle receiver of srq create sleeps this long between polls */
#define NVX_SRQ_IDLE_NS		(100 * NVX_NSEC_PER_USEC)
/* bench srq --duration */
#define NVX_SRQ_MAX_DURATION	60		/* s */

/*
 * The frames nvxtool sends: Ethernet, IPv4 192.0.2.1 to 192.0.2.2
 * (TEST-NET-1), UDP from port NVX_FRAME_SPORT + flow to port 9, then the
 * frame's number and a byte pattern. The flow hash of a frame depends
 * on the addresses and ports only: one flow, one queue.
 */
#define NVX_FRAME_HDRS		42		/* Ethernet + IPv4 + UDP */
#define NVX_FRAME_DEF		64
#define NVX_FRAME_MAX		9216
#define NVX_FRAME_SPORT		1024
#define NVX_FRAME_DPORT		9
#define NVX_FRAME_UDP		34		/* offset of the UDP header */
#define NVX_SEND_BATCH		64		/* frames per sendmmsg() */
#define NVX_SEND_MAX_COUNT	1000000000ULL
#define NVX_SEND_MAX_FLOWS	4096
/* a send that makes no progress (ENOBUFS) this long fails */
#define NVX_SEND_STALL		(10 * NVX_NSEC_PER_SEC)

static const uint8_t nvx_broadcast[ETH_ALEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* ------------------------------------------------------------- errors */

/* Where nvx says more than strerror(): per request (0: any) and errno. */
static const struct {
	unsigned long req;
	int err;
	const char *why;
} nvx_srq_why[] = {
	{ 0, ENOTTY,
	  "the running kernel has no shared RX queues (CONFIG_NVX_SRQ), or an older nvx ABI",
	},
	{ NVX_IOC_SRQ_CREATE, EPERM,
	  "needs CAP_NET_ADMIN in the NIC's network namespace" },
	{ NVX_IOC_SRQ_CREATE, EBUSY,
	  "a set is attached to this NIC already (nvxtool srq show tells whose)",
	},
	{ NVX_IOC_SRQ_CREATE, ENOSPC, "the buffers do not fit in the grant" },
	{ NVX_IOC_SRQ_CREATE, EINVAL,
	  "a parameter is out of range (nvxtool srq create --help lists the limits)",
	},
	{ 0, EOPNOTSUPP,
	  "not an nvxsim NIC (ip link add NAME type nvxsim makes one)" },
	{ 0, ENODEV, "no such network device" },
	{ 0, ENOENT, "no set is attached to this NIC" },
};

/* Why @req failed with @err, where nvx says more than strerror(). */
static const char *nvx_srq_explain(unsigned long req, int err)
{
	size_t i;

	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_why); i++)
		if (nvx_srq_why[i].err == err &&
		    (!nvx_srq_why[i].req || nvx_srq_why[i].req == req))
			return nvx_srq_why[i].why;
	return NULL;
}

/*
 * Say that @what (@req) on NIC @dev failed with @err, e.g. "srq show:
 * NVX_IOC_SRQ_INFO on nvxd0: No such file or directory: no set is
 * attached to this NIC".
 */
static void nvx_srq_perror(struct nvx_ctx *ctx, const char *what,
			   const char *dev, unsigned long req, int err)
{
	const char *why = nvx_srq_explain(req, err);

	if (why)
		nvx_err("%s: %s on %s: %s: %s", ctx->path, what, dev,
			strerror(err), why);
	else
		nvx_err("%s: %s on %s: %s", ctx->path, what, dev,
			strerror(err));
}

/* ------------------------------------------------------------ netdevs */

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

static int nvx_if_mac(const char *name, uint8_t mac[ETH_ALEN])
{
	struct ifreq ifr;
	int ret;

	ret = nvx_if_ioctl(name, SIOCGIFHWADDR, &ifr);
	if (!ret)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return ret;
}

static bool nvx_if_up(const char *name)
{
	struct ifreq ifr;

	return !nvx_if_ioctl(name, SIOCGIFFLAGS, &ifr) &&
	       (ifr.ifr_flags & IFF_UP);
}

/* The ifindex of --dev NAME; 0 after printing why there is none. */
static unsigned int nvx_srq_ifindex(struct nvx_ctx *ctx, const char *name)
{
	unsigned int ifindex = if_nametoindex(name);

	if (!ifindex)
		nvx_err("%s: no network device '%s' (%s)%s", ctx->path, name,
			strerror(errno),
			errno == ENODEV ?
			"; an nvxsim NIC is made with: ip link add NAME type nvxsim" :
			"");
	return ifindex;
}

/*
 * rtnetlink, for bench srq's own NICs: a request of at most
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

/* ip link add NAME type KIND [peer name PEER] (PEER: veth only) */
static int nvx_link_add(const char *name, const char *kind, const char *peer)
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

/* ip link del NAME */
static int nvx_link_del(const char *name)
{
	struct nvx_nl_msg m;

	nvx_nl_init(&m, RTM_DELLINK, 0);
	nvx_nl_put(&m, IFLA_IFNAME, name, strlen(name) + 1);
	return nvx_nl_talk(&m);
}

/* ip link set NAME up */
static int nvx_link_up(unsigned int ifindex)
{
	struct nvx_nl_msg m;

	nvx_nl_init(&m, RTM_NEWLINK, 0);
	m.ifi.ifi_index = ifindex;
	m.ifi.ifi_flags = IFF_UP;
	m.ifi.ifi_change = IFF_UP;
	return nvx_nl_talk(&m);
}

/*
 * Keep the stack from sending on a link the bench measures (IPv6
 * router solicitations would reach the set). Best effort: without IPv6
 * there is nothing to turn off.
 */
static void nvx_link_quiet(const char *name)
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

/* -------------------------------------------------------------- frames */

/**
 * struct nvx_tx - frames sent in batches through an AF_PACKET socket
 * @fd: the socket, bound to the netdev they leave through.
 * @len: bytes per frame.
 * @flows: flows the frames go round, 1 or more.
 * @next: the number of the next frame.
 * @frames: NVX_SEND_BATCH frames of @len bytes.
 * @iov: one per frame.
 * @msgs: one per frame, for sendmmsg().
 */
struct nvx_tx {
	int fd;
	size_t len;
	uint32_t flows;
	uint64_t next;
	uint8_t *frames;
	struct iovec iov[NVX_SEND_BATCH];
	struct mmsghdr msgs[NVX_SEND_BATCH];
};

static void nvx_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void nvx_put32(uint8_t *p, uint32_t v)
{
	nvx_put16(p, v >> 16);
	nvx_put16(p + 2, v);
}

static uint16_t nvx_ip_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* Frame @f of @len bytes from @src to @dst; nvx_frame_number() sets the rest. */
static void nvx_frame_build(uint8_t *f, size_t len, const uint8_t *dst,
			    const uint8_t *src)
{
	static const uint8_t saddr[4] = { 192, 0, 2, 1 };
	static const uint8_t daddr[4] = { 192, 0, 2, 2 };
	uint8_t *ip = f + ETH_HLEN, *udp = f + NVX_FRAME_UDP;
	size_t i;

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	nvx_put16(f + 2 * ETH_ALEN, ETH_P_IP);
	ip[0] = 0x45;				/* IPv4, 20 bytes */
	ip[1] = 0;
	nvx_put16(ip + 2, len - ETH_HLEN);
	nvx_put16(ip + 4, 0);
	nvx_put16(ip + 6, 0x4000);		/* DF */
	ip[8] = 64;				/* TTL */
	ip[9] = 17;				/* UDP */
	nvx_put16(ip + 10, 0);
	memcpy(ip + 12, saddr, 4);
	memcpy(ip + 16, daddr, 4);
	nvx_put16(ip + 10, nvx_ip_csum(ip, 20));
	nvx_put16(udp + 2, NVX_FRAME_DPORT);
	nvx_put16(udp + 4, len - NVX_FRAME_UDP);
	nvx_put16(udp + 6, 0);			/* no checksum */
	for (i = NVX_FRAME_HDRS; i < len; i++)
		f[i] = i;
}

/* The flow (source port) and number of a built frame. */
static void nvx_frame_number(uint8_t *f, size_t len, uint32_t flow,
			     uint64_t seq)
{
	nvx_put16(f + NVX_FRAME_UDP, NVX_FRAME_SPORT + flow);
	if (len >= NVX_FRAME_HDRS + 4)
		nvx_put32(f + NVX_FRAME_HDRS, seq);
}

static void nvx_tx_close(struct nvx_tx *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->frames);
	t->frames = NULL;
}

/*
 * A socket on @ifindex sending frames of @len bytes from @src to @dst, on
 * @flows flows in turn. Return: 0 or -errno.
 */
static int nvx_tx_open(struct nvx_tx *t, unsigned int ifindex, size_t len,
		       uint32_t flows, const uint8_t *dst, const uint8_t *src)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = ifindex,		/* protocol 0: receive nothing */
	};
	unsigned int i;
	int err;

	memset(t, 0, sizeof(*t));
	t->len = len;
	t->flows = flows;
	t->frames = calloc(NVX_SEND_BATCH, len);
	if (!t->frames)
		return -ENOMEM;
	t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->fd < 0 || bind(t->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		nvx_tx_close(t);
		return err;
	}
	for (i = 0; i < NVX_SEND_BATCH; i++) {
		nvx_frame_build(t->frames + i * len, len, dst, src);
		t->iov[i].iov_base = t->frames + i * len;
		t->iov[i].iov_len = len;
		t->msgs[i].msg_hdr.msg_iov = &t->iov[i];
		t->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/*
 * Send @count frames, or as many as go until @deadline_ns (0: none),
 * NVX_SEND_BATCH per sendmmsg(). *@sent: how many went; *@retries (if
 * given): calls that sent nothing for want of room (ENOBUFS, EAGAIN).
 * Return: 0 or -errno (-ETIMEDOUT: no progress for NVX_SEND_STALL).
 */
static int nvx_tx_send(struct nvx_tx *t, uint64_t count, uint64_t deadline_ns,
		       uint64_t *sent, uint64_t *retries)
{
	uint64_t done = 0, now, progress = nvx_now_ns();
	unsigned int i, n;
	int r;

	while (done < count) {
		n = count - done < NVX_SEND_BATCH ? count - done :
		    NVX_SEND_BATCH;
		for (i = 0; i < n; i++)
			nvx_frame_number(t->frames + i * t->len, t->len,
					 (t->next + i) % t->flows,
					 t->next + i);
		r = sendmmsg(t->fd, t->msgs, n, 0);
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != EINTR) {
			*sent = done;
			return -errno;
		}
		now = nvx_now_ns();
		if (r > 0) {
			done += r;
			t->next += r;
			progress = now;
		} else {
			if (retries)
				(*retries)++;
			if (now - progress > NVX_SEND_STALL) {
				*sent = done;
				return -ETIMEDOUT;
			}
			sched_yield();
		}
		if (deadline_ns && now >= deadline_ns)
			break;
	}
	*sent = done;
	return 0;
}

/* ------------------------------------------------------------- the set */

/**
 * struct nvx_srq_set - a set made by nvxtool
 * @fd: the set's fd, or -1.
 * @ifindex: the NIC.
 * @grant_bytes: the bytes of buffers asked for the grant.
 * @granted: the size of the grant (whole chunks).
 * @p: the parameters in use.
 * @l: the mmap() layout.
 * @ring: the ring area, or NULL when not mapped.
 * @bufs: the buffers, read-only, or NULL when not mapped.
 * @spb: strides per buffer.
 */
struct nvx_srq_set {
	int fd;
	uint32_t ifindex;
	uint64_t grant_bytes;
	uint64_t granted;
	struct nvx_srq_params p;
	struct nvx_srq_layout l;
	uint8_t *ring;
	const uint8_t *bufs;
	uint32_t spb;
};

/* What nvx_srq_open() failed at. */
enum nvx_srq_step {
	NVX_SRQ_STEP_GRANT,
	NVX_SRQ_STEP_CREATE,
	NVX_SRQ_STEP_MAP,
};

/* The bytes of buffers @p asks for, defaults filled in. */
static uint64_t nvx_srq_buf_bytes(const struct nvx_srq_params *p)
{
	return (uint64_t)(p->nr_bufs ? p->nr_bufs : NVX_SRQ_DEF_NR_BUFS) *
	       (p->buf_size ? p->buf_size : NVX_SRQ_DEF_BUF_SIZE);
}

static bool nvx_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Does the layout the kernel wrote back hold what the parameters say? */
static bool nvx_srq_layout_ok(const struct nvx_srq_set *s)
{
	const struct nvx_srq_layout *l = &s->l;
	const struct nvx_srq_params *p = &s->p;
	uint64_t cq = sizeof(struct nvx_srq_ring) +
		      (uint64_t)p->cq_entries * sizeof(struct nvx_srq_cqe);
	uint64_t rel = sizeof(struct nvx_srq_ring) +
		       (uint64_t)p->rel_entries * sizeof(struct nvx_srq_rel);

	return p->nr_queues && p->nr_rel_rings && p->stride_size &&
	       nvx_pow2(p->cq_entries) && nvx_pow2(p->rel_entries) &&
	       p->buf_size >= p->stride_size &&
	       l->cq_bytes >= cq && l->rel_bytes >= rel &&
	       l->cq_offset + p->nr_queues * l->cq_bytes <= l->ring_bytes &&
	       l->rel_offset + p->nr_rel_rings * l->rel_bytes <= l->ring_bytes &&
	       l->buf_bytes >= (uint64_t)p->nr_bufs * p->buf_size;
}

static void nvx_srq_close(struct nvx_srq_set *s)
{
	if (s->bufs)
		munmap((void *)s->bufs, s->l.buf_bytes);
	if (s->ring)
		munmap(s->ring, s->l.ring_bytes);
	if (s->fd >= 0)
		close(s->fd);
	s->bufs = NULL;
	s->ring = NULL;
	s->fd = -1;
}

/*
 * Make a set shaped by @p on @ifindex: a grant of its buffers on @node,
 * NVX_IOC_SRQ_CREATE, and with @map the ring area and the buffers
 * mapped. The grant fd is closed once the set holds its own reference.
 * Return: 0, or -errno with *@step telling what failed (-EPROTO: the
 * layout the kernel wrote back does not add up).
 */
static int nvx_srq_open(struct nvx_ctx *ctx, struct nvx_srq_set *s,
			uint32_t ifindex, uint32_t node,
			const struct nvx_srq_params *p, bool map,
			enum nvx_srq_step *step)
{
	struct nvx_srq_create c = {
		.flags = NVX_SRQ_CLOEXEC,
		.ifindex = ifindex,
		.params = *p,
	};
	uint64_t chunk = 1ULL << NVX_POOL_CHUNK_SHIFT;
	struct nvx_grant_info gi = { 0 };
	void *m;
	int err, gfd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->ifindex = ifindex;
	s->grant_bytes = nvx_srq_buf_bytes(p);

	*step = NVX_SRQ_STEP_GRANT;
	err = nvx_grant_new(ctx, node, s->grant_bytes, NVX_GRANT_CLOEXEC,
			    &gfd);
	if (err)
		return err;
	if (!ioctl(gfd, NVX_IOC_GRANT_INFO, &gi) && gi.bytes)
		s->granted = gi.bytes;
	else
		s->granted = (s->grant_bytes + chunk - 1) / chunk * chunk;
	*step = NVX_SRQ_STEP_CREATE;
	c.grant_fd = gfd;
	err = ioctl(ctx->fd, NVX_IOC_SRQ_CREATE, &c) ? -errno : 0;
	close(gfd);
	if (err)
		return err;
	s->fd = c.fd;
	s->p = c.params;
	s->l = c.layout;
	s->spb = s->p.stride_size ? s->p.buf_size / s->p.stride_size : 0;

	*step = NVX_SRQ_STEP_MAP;
	if (!nvx_srq_layout_ok(s)) {
		nvx_srq_close(s);
		return -EPROTO;
	}
	if (!map)
		return 0;
	m = mmap(NULL, s->l.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	s->ring = m;
	m = mmap(NULL, s->l.buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 s->l.buf_offset);
	if (m == MAP_FAILED)
		goto fail;
	s->bufs = m;
	return 0;
fail:
	err = -errno;
	nvx_srq_close(s);
	return err;
}

/* Say why nvx_srq_open() failed with @err at @step, for NIC @dev. */
static void nvx_srq_open_perror(struct nvx_ctx *ctx, const char *dev,
				uint64_t grant_bytes, enum nvx_srq_step step,
				int err)
{
	const char *why = nvx_pool_strerror(NVX_IOC_GRANT, err);
	uint64_t chunk = 1ULL << NVX_POOL_CHUNK_SHIFT;
	char h[NVX_FMT_BYTES_LEN];

	nvx_fmt_bytes(h, sizeof(h), grant_bytes);
	switch (step) {
	case NVX_SRQ_STEP_GRANT:
		if (err == ENOSPC)
			nvx_err("%s: a grant of %s for the buffers: the pool does not hold that much free memory; grow it first: nvxtool pool grow %lluM",
				ctx->path, h,
				(unsigned long long)((grant_bytes + chunk - 1) /
						     chunk * chunk / NVX_MIB));
		else if (strcmp(why, strerror(err)))
			nvx_err("%s: a grant of %s for the buffers: %s: %s",
				ctx->path, h, strerror(err), why);
		else
			nvx_err("%s: a grant of %s for the buffers: %s",
				ctx->path, h, strerror(err));
		break;
	case NVX_SRQ_STEP_CREATE:
		nvx_srq_perror(ctx, "NVX_IOC_SRQ_CREATE", dev,
			       NVX_IOC_SRQ_CREATE, err);
		break;
	default:
		if (err == EPROTO)
			nvx_err("%s: the layout the kernel wrote back does not hold the rings and buffers of the parameters: a kernel bug, or a different ABI",
				ctx->path);
		else
			nvx_err("%s: mmap of the set: %s", ctx->path,
				strerror(err));
		break;
	}
}

static int nvx_srq_stats_get(const struct nvx_srq_set *s, uint32_t queue,
			     struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = queue;
	return ioctl(s->fd, NVX_SRQ_IOC_STATS, st) ? -errno : 0;
}

/* NVX_SRQ_IOC_RELEASE; *@garbage (if given) grows by what it ignored. */
static int nvx_srq_release_now(const struct nvx_srq_set *s,
			       uint64_t *garbage)
{
	struct nvx_srq_release r = { 0 };

	if (ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &r))
		return -errno;
	if (garbage)
		*garbage += r.garbage;
	return 0;
}

static struct nvx_srq_ring *nvx_srq_cq(const struct nvx_srq_set *s,
				       uint32_t q)
{
	return (struct nvx_srq_ring *)(s->ring + s->l.cq_offset +
				       q * s->l.cq_bytes);
}

static struct nvx_srq_ring *nvx_srq_rel_ring(const struct nvx_srq_set *s,
					     uint32_t r)
{
	return (struct nvx_srq_ring *)(s->ring + s->l.rel_offset +
				       r * s->l.rel_bytes);
}

/*
 * The completions of queue @q not consumed yet: from *@cons, the return
 * value of them. UINT32_MAX when the kernel's index is not sane.
 */
static uint32_t nvx_srq_cq_ready(const struct nvx_srq_set *s, uint32_t q,
				 uint32_t *cons)
{
	struct nvx_srq_ring *r = nvx_srq_cq(s, q);
	uint32_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);

	*cons = r->cons;	/* ours */
	if (prod - *cons > s->p.cq_entries)
		return UINT32_MAX;
	return prod - *cons;
}

static const struct nvx_srq_cqe *nvx_srq_cqe(const struct nvx_srq_set *s,
					     uint32_t q, uint32_t idx)
{
	const struct nvx_srq_cqe *e =
		(const struct nvx_srq_cqe *)(nvx_srq_cq(s, q) + 1);

	return &e[idx & (s->p.cq_entries - 1)];
}

/* The completions of queue @q up to @cons are read: the kernel may reuse them. */
static void nvx_srq_cq_done(const struct nvx_srq_set *s, uint32_t q,
			    uint32_t cons)
{
	__atomic_store_n(&nvx_srq_cq(s, q)->cons, cons, __ATOMIC_RELEASE);
}

/* Is @c a completion the set could have written? */
static bool nvx_srq_cqe_ok(const struct nvx_srq_set *s,
			   const struct nvx_srq_cqe *c)
{
	uint64_t room;

	if (c->buf >= s->p.nr_bufs || !c->strides ||
	    (uint32_t)c->stride + c->strides > s->spb)
		return false;
	if (c->flags & NVX_SRQ_CQE_FILLER)
		return !c->len;
	room = (uint64_t)(s->spb - c->stride) * s->p.stride_size;
	return c->len && c->len <= room;
}

/*
 * Give @strides of @buf back through release ring @r. When the ring is
 * full, NVX_SRQ_IOC_RELEASE has the kernel take its entries first.
 * Return: 0 or -errno (-ENOSPC: still full).
 */
static int nvx_srq_release(const struct nvx_srq_set *s, uint32_t r,
			   uint32_t buf, uint32_t strides, uint64_t *garbage)
{
	struct nvx_srq_ring *h = nvx_srq_rel_ring(s, r);
	struct nvx_srq_rel *e = (struct nvx_srq_rel *)(h + 1);
	uint32_t prod = h->prod;	/* ours */
	int err;

	if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
	    s->p.rel_entries) {
		err = nvx_srq_release_now(s, garbage);
		if (err)
			return err;
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    s->p.rel_entries)
			return -ENOSPC;
	}
	e[prod & (s->p.rel_entries - 1)] = (struct nvx_srq_rel) {
		.buf = buf,
		.strides = strides,
	};
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The NUMA node of the CPU this runs on; 0 when the kernel won't say. */
static uint32_t nvx_srq_cpu_node(void)
{
	unsigned int cpu, node;

	if (syscall(SYS_getcpu, &cpu, &node, NULL))
		return 0;
	return node;
}

/* ---------------------------------------------------------- parameters */

static bool nvx_srq_per_queue(const struct nvx_srq_params *p)
{
	return p->flags & NVX_SRQ_PER_QUEUE;
}

static void nvx_srq_print_params(const struct nvx_srq_params *p)
{
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	char h3[NVX_FMT_BYTES_LEN];
	uint32_t spb = p->stride_size ? p->buf_size / p->stride_size : 0;

	printf("  %-12s %s\n", "sharing", nvx_srq_per_queue(p) ?
	       "per queue: each queue posts only its own buffers" :
	       "shared: one pool of buffers feeds every queue");
	printf("  %-12s %s\n", "poison", p->flags & NVX_SRQ_POISON ?
	       "yes: a returned buffer is filled with 0x6b" : "no");
	printf("  %-12s %u\n", "queues", p->nr_queues);
	printf("  %-12s %u x %s = %s", "buffers", p->nr_bufs,
	       nvx_fmt_bytes(h1, sizeof(h1), p->buf_size),
	       nvx_fmt_bytes(h2, sizeof(h2),
			     (uint64_t)p->nr_bufs * p->buf_size));
	if (nvx_srq_per_queue(p) && p->nr_queues)
		printf(" (%u per queue)", p->nr_bufs / p->nr_queues);
	printf("\n  %-12s %s, %u per buffer%s\n", "strides",
	       nvx_fmt_bytes(h3, sizeof(h3), p->stride_size), spb,
	       spb == 1 ? " (striding off: one frame per buffer)" : "");
	printf("  %-12s %u per queue\n", "cq_entries", p->cq_entries);
	printf("  %-12s %u ring%s of %u entries\n", "release",
	       p->nr_rel_rings, p->nr_rel_rings == 1 ? "" : "s",
	       p->rel_entries);
	printf("  %-12s %u strides posted\n", "low_water", p->low_water);
}

static void nvx_srq_json_params(struct nvx_json *j, const char *key,
				const struct nvx_srq_params *p)
{
	nvx_json_object_begin(j, key);
	nvx_json_hex(j, "flags", p->flags);
	nvx_json_bool(j, "per_queue", p->flags & NVX_SRQ_PER_QUEUE);
	nvx_json_bool(j, "poison", p->flags & NVX_SRQ_POISON);
	nvx_json_u64(j, "nr_queues", p->nr_queues);
	nvx_json_u64(j, "nr_bufs", p->nr_bufs);
	nvx_json_u64(j, "buf_size", p->buf_size);
	nvx_json_u64(j, "stride_size", p->stride_size);
	nvx_json_u64(j, "cq_entries", p->cq_entries);
	nvx_json_u64(j, "rel_entries", p->rel_entries);
	nvx_json_u64(j, "nr_rel_rings", p->nr_rel_rings);
	nvx_json_u64(j, "low_water", p->low_water);
	nvx_json_end(j);
}

/* ------------------------------------------------------------- options */

enum {
	NVX_OPT_DEV = 256,
	NVX_OPT_QUEUES,
	NVX_OPT_BUFS,
	NVX_OPT_BUF_SIZE,
	NVX_OPT_STRIDE,
	NVX_OPT_PER_QUEUE,
	NVX_OPT_POISON,
	NVX_OPT_RECV,
	NVX_OPT_HOLD,
	NVX_OPT_QUEUE,
	NVX_OPT_COUNT,
	NVX_OPT_SIZE,
	NVX_OPT_FLOWS,
	NVX_OPT_DURATION,
};

/**
 * struct nvx_srq_args - the command line of an srq command
 * @dev: --dev.
 * @p: --queues, --bufs, --buf-size, --stride, --per-queue, --poison.
 * @recv: --recv, 0 without.
 * @hold: --hold, seconds, 0 without.
 * @queue: --queue, NVX_SRQ_ALL_QUEUES without.
 * @count: --count.
 * @size: --size.
 * @flows: --flows.
 * @duration: --duration, seconds.
 */
struct nvx_srq_args {
	const char *dev;
	struct nvx_srq_params p;
	uint64_t recv;
	unsigned int hold;
	uint32_t queue;
	uint64_t count;
	uint32_t size;
	uint32_t flows;
	unsigned int duration;
};

static const struct option nvx_srq_create_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "queues", required_argument, NULL, NVX_OPT_QUEUES },
	{ "bufs", required_argument, NULL, NVX_OPT_BUFS },
	{ "buf-size", required_argument, NULL, NVX_OPT_BUF_SIZE },
	{ "stride", required_argument, NULL, NVX_OPT_STRIDE },
	{ "per-queue", no_argument, NULL, NVX_OPT_PER_QUEUE },
	{ "poison", no_argument, NULL, NVX_OPT_POISON },
	{ "recv", required_argument, NULL, NVX_OPT_RECV },
	{ "hold", required_argument, NULL, NVX_OPT_HOLD },
	{ }
};

static const struct option nvx_srq_show_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ }
};

static const struct option nvx_srq_stats_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "queue", required_argument, NULL, NVX_OPT_QUEUE },
	{ }
};

static const struct option nvx_srq_send_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "count", required_argument, NULL, NVX_OPT_COUNT },
	{ "size", required_argument, NULL, NVX_OPT_SIZE },
	{ "flows", required_argument, NULL, NVX_OPT_FLOWS },
	{ }
};

static const struct option nvx_srq_bench_opts[] = {
	{ "duration", required_argument, NULL, NVX_OPT_DURATION },
	{ }
};

/* --NAME: a number from @min to @max into *@v. */
static int nvx_srq_num(struct nvx_ctx *ctx, const char *name, const char *s,
		       unsigned long long min, unsigned long long max,
		       unsigned long long *v)
{
	if (nvx_parse_uint(s, max, v) || *v < min)
		return nvx_usage_error(ctx, "--%s: '%s' is not a number from %llu to %llu",
				       name, s, min, max);
	return NVX_EXIT_OK;
}

/* --NAME: a power-of-two size from @min to @max into *@v. */
static int nvx_srq_pow2(struct nvx_ctx *ctx, const char *name, const char *s,
			uint64_t min, uint64_t max, uint32_t *v)
{
	uint64_t bytes;

	if (!nvx_parse_size(s, &bytes) && bytes >= min && bytes <= max &&
	    nvx_pow2(bytes)) {
		*v = bytes;
		return NVX_EXIT_OK;
	}
	return nvx_usage_error(ctx,
			       "--%s: '%s' is not a power of two from %llu to %llu bytes (e.g. 4K)",
			       name, s, (unsigned long long)min,
			       (unsigned long long)max);
}

/* --dev: a network device name into *@dev. */
static int nvx_srq_dev(struct nvx_ctx *ctx, const char *s, const char **dev)
{
	if (s[0] && strlen(s) < IFNAMSIZ) {
		*dev = s;
		return NVX_EXIT_OK;
	}
	return nvx_usage_error(ctx,
			       "--dev: '%s' is not a network device name (1 to %d characters)",
			       s, IFNAMSIZ - 1);
}

static int nvx_srq_parse(struct nvx_ctx *ctx, int argc, char **argv,
			 const struct option *opts, struct nvx_srq_args *a)
{
	unsigned long long v = 0;
	int c, ret = NVX_EXIT_OK;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_OPT_DEV:
			ret = nvx_srq_dev(ctx, optarg, &a->dev);
			break;
		case NVX_OPT_QUEUES:
			ret = nvx_srq_num(ctx, "queues", optarg, 1,
					  NVX_SRQ_MAX_QUEUES, &v);
			a->p.nr_queues = v;
			break;
		case NVX_OPT_BUFS:
			ret = nvx_srq_num(ctx, "bufs", optarg, 1,
					  NVX_SRQ_MAX_BUFS, &v);
			a->p.nr_bufs = v;
			break;
		case NVX_OPT_BUF_SIZE:
			ret = nvx_srq_pow2(ctx, "buf-size", optarg,
					   NVX_SRQ_MIN_BUF_SIZE,
					   NVX_SRQ_MAX_BUF_SIZE,
					   &a->p.buf_size);
			break;
		case NVX_OPT_STRIDE:
			ret = nvx_srq_pow2(ctx, "stride", optarg,
					   NVX_SRQ_MIN_STRIDE,
					   NVX_SRQ_MAX_BUF_SIZE,
					   &a->p.stride_size);
			break;
		case NVX_OPT_PER_QUEUE:
			a->p.flags |= NVX_SRQ_PER_QUEUE;
			break;
		case NVX_OPT_POISON:
			a->p.flags |= NVX_SRQ_POISON;
			break;
		case NVX_OPT_RECV:
			ret = nvx_srq_num(ctx, "recv", optarg, 1,
					  NVX_SRQ_MAX_RECV, &v);
			a->recv = v;
			break;
		case NVX_OPT_HOLD:
			ret = nvx_srq_num(ctx, "hold", optarg, 0,
					  NVX_SRQ_MAX_HOLD, &v);
			a->hold = v;
			break;
		case NVX_OPT_QUEUE:
			ret = nvx_srq_num(ctx, "queue", optarg, 0,
					  NVX_SRQ_MAX_QUEUES - 1, &v);
			a->queue = v;
			break;
		case NVX_OPT_COUNT:
			ret = nvx_srq_num(ctx, "count", optarg, 1,
					  NVX_SEND_MAX_COUNT, &v);
			a->count = v;
			break;
		case NVX_OPT_SIZE:
			ret = nvx_srq_num(ctx, "size", optarg, NVX_FRAME_HDRS,
					  NVX_FRAME_MAX, &v);
			a->size = v;
			break;
		case NVX_OPT_FLOWS:
			ret = nvx_srq_num(ctx, "flows", optarg, 1,
					  NVX_SEND_MAX_FLOWS, &v);
			a->flows = v;
			break;
		case NVX_OPT_DURATION:
			ret = nvx_srq_num(ctx, "duration", optarg, 1,
					  NVX_SRQ_MAX_DURATION, &v);
			a->duration = v;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	if (opts[0].val == NVX_OPT_DEV && !a->dev)
		return nvx_usage_error(ctx, "missing --dev");
	return NVX_EXIT_OK;
}

/* ---------------------------------------------------------- srq create */

static atomic_int nvx_srq_signal;

static void nvx_srq_handler(int sig)
{
	atomic_store(&nvx_srq_signal, sig);
}

/**
 * struct nvx_srq_recv - what srq create --recv took
 * @frames: frames received, each released.
 * @bytes: their bytes.
 * @fillers: filler completions seen (the kernel releases those).
 * @truncated: frames cut to what their buffer held.
 * @bad: completions naming strides outside the set: not released.
 * @garbage: release entries the kernel ignored.
 * @per_queue: frames per queue.
 * @ns: from the start until the last completion.
 */
struct nvx_srq_recv {
	uint64_t frames;
	uint64_t bytes;
	uint64_t fillers;
	uint64_t truncated;
	uint64_t bad;
	uint64_t garbage;
	uint64_t *per_queue;
	uint64_t ns;
};

static const char *nvx_srq_cqe_flags(const struct nvx_srq_cqe *c, bool ok)
{
	if (!ok)
		return "BAD: not in the set";
	if (c->flags & NVX_SRQ_CQE_FILLER)
		return "filler";
	if (c->flags & NVX_SRQ_CQE_TRUNCATED)
		return "truncated";
	return "-";
}

/*
 * Receive @want frames on every queue of @s, printing one line per
 * completion (text) and releasing each frame; NVX_SRQ_IOC_RELEASE after
 * every pass that found some.
 */
static int nvx_srq_recv(struct nvx_ctx *ctx, const struct nvx_srq_set *s,
			const char *dev, uint64_t want,
			struct nvx_srq_recv *r)
{
	struct timespec idle = { 0, NVX_SRQ_IDLE_NS };
	uint64_t t0 = nvx_now_ns(), last = t0, now;
	uint32_t q, n, cons, rel;
	struct nvx_srq_cqe c;
	bool got, ok;
	int err;

	if (!ctx->json)
		printf("%5s %6s %6s %7s %6s  %s\n", "queue", "buf", "stride",
		       "strides", "len", "flags");
	while (r->frames < want) {
		got = false;
		for (q = 0; q < s->p.nr_queues && r->frames < want; q++) {
			n = nvx_srq_cq_ready(s, q, &cons);
			if (n == UINT32_MAX) {
				fflush(stdout);
				nvx_err("%s: queue %u: the completion ring's producer index is %u, more than its %u entries ahead of the consumer's, %u",
					ctx->path, q, nvx_srq_cq(s, q)->prod,
					s->p.cq_entries, cons);
				return NVX_EXIT_FAIL;
			}
			if (n)
				got = true;
			rel = q % s->p.nr_rel_rings;
			for (; n && r->frames < want; n--) {
				c = *nvx_srq_cqe(s, q, cons++);
				ok = nvx_srq_cqe_ok(s, &c);
				if (!ctx->json)
					printf("%5u %6u %6u %7u %6u  %s\n", q,
					       c.buf, c.stride, c.strides,
					       c.len, nvx_srq_cqe_flags(&c, ok));
				if (!ok) {
					r->bad++;
					continue;
				}
				if (c.flags & NVX_SRQ_CQE_FILLER) {
					r->fillers++;
					continue;
				}
				r->frames++;
				r->bytes += c.len;
				r->per_queue[q]++;
				if (c.flags & NVX_SRQ_CQE_TRUNCATED)
					r->truncated++;
				err = nvx_srq_release(s, rel, c.buf, c.strides,
						      &r->garbage);
				if (err) {
					fflush(stdout);
					nvx_err("%s: releasing %u strides of buffer %u: %s",
						ctx->path, c.strides, c.buf,
						err == -ENOSPC ?
						"the release ring stays full" :
						strerror(-err));
					return NVX_EXIT_FAIL;
				}
			}
			nvx_srq_cq_done(s, q, cons);
		}
		now = nvx_now_ns();
		if (got) {
			err = nvx_srq_release_now(s, &r->garbage);
			if (err) {
				fflush(stdout);
				nvx_err("%s: NVX_SRQ_IOC_RELEASE: %s",
					ctx->path, strerror(-err));
				return NVX_EXIT_FAIL;
			}
			last = now;
			r->ns = now - t0;
			continue;
		}
		if (atomic_load(&nvx_srq_signal)) {
			fflush(stdout);
			nvx_err("%s: interrupted (%s) after %llu of %llu frames",
				ctx->path,
				strsignal(atomic_load(&nvx_srq_signal)),
				(unsigned long long)r->frames,
				(unsigned long long)want);
			return NVX_EXIT_FAIL;
		}
		if (now - last >= NVX_SRQ_RECV_TIMEOUT) {
			fflush(stdout);
			nvx_err("%s: no completion for %llu s, %llu of %llu frames received: is %s up, and is something sending through its peer (e.g. nvxtool srq send --dev %sp)?",
				ctx->path,
				NVX_SRQ_RECV_TIMEOUT / NVX_NSEC_PER_SEC,
				(unsigned long long)r->frames,
				(unsigned long long)want, dev, dev);
			return NVX_EXIT_FAIL;
		}
		nanosleep(&idle, NULL);
	}
	return NVX_EXIT_OK;
}

/* Keep the set @seconds, or until SIGINT or SIGTERM: the signal, or 0. */
static int nvx_srq_hold(unsigned int seconds)
{
	uint64_t end = nvx_now_ns() + seconds * NVX_NSEC_PER_SEC, now, left;
	struct timespec ts;

	while (!atomic_load(&nvx_srq_signal) && (now = nvx_now_ns()) < end) {
		left = end - now;
		if (left > 100 * NVX_NSEC_PER_MSEC)
			left = 100 * NVX_NSEC_PER_MSEC;
		ts.tv_sec = 0;
		ts.tv_nsec = left;
		nanosleep(&ts, NULL);
	}
	return atomic_load(&nvx_srq_signal);
}

static void nvx_srq_create_print(struct nvx_ctx *ctx, const char *dev,
				 const struct nvx_srq_set *s,
				 const struct nvx_srq_args *a,
				 const struct nvx_srq_recv *r)
{
	const struct nvx_srq_layout *l = &s->l;
	struct nvx_json *j = &ctx->js;
	uint32_t q;

	if (!ctx->json) {
		if (!r)
			return;
		printf("received %llu frames (%llu bytes) within %.3f s; ",
		       (unsigned long long)r->frames,
		       (unsigned long long)r->bytes, (double)r->ns / 1e9);
		printf("fillers %llu, truncated %llu; every frame released\n",
		       (unsigned long long)r->fillers,
		       (unsigned long long)r->truncated);
		printf("frames per queue:");
		for (q = 0; q < s->p.nr_queues; q++)
			printf(" %llu", (unsigned long long)r->per_queue[q]);
		printf("\n");
		return;
	}

	nvx_json_object_begin(j, NULL);
	nvx_json_str(j, "dev", dev);
	nvx_json_u64(j, "ifindex", s->ifindex);
	nvx_json_u64(j, "grant_bytes", s->granted);
	nvx_srq_json_params(j, "params", &s->p);
	nvx_json_object_begin(j, "layout");
	nvx_json_u64(j, "ring_bytes", l->ring_bytes);
	nvx_json_u64(j, "cq_offset", l->cq_offset);
	nvx_json_u64(j, "cq_bytes", l->cq_bytes);
	nvx_json_u64(j, "rel_offset", l->rel_offset);
	nvx_json_u64(j, "rel_bytes", l->rel_bytes);
	nvx_json_u64(j, "buf_offset", l->buf_offset);
	nvx_json_u64(j, "buf_bytes", l->buf_bytes);
	nvx_json_end(j);
	if (r) {
		nvx_json_object_begin(j, "recv");
		nvx_json_u64(j, "frames", r->frames);
		nvx_json_u64(j, "bytes", r->bytes);
		nvx_json_u64(j, "fillers", r->fillers);
		nvx_json_u64(j, "truncated", r->truncated);
		nvx_json_u64(j, "bad", r->bad);
		nvx_json_u64(j, "release_garbage", r->garbage);
		nvx_json_u64(j, "ns", r->ns);
		nvx_json_array_begin(j, "per_queue");
		for (q = 0; q < s->p.nr_queues; q++)
			nvx_json_u64(j, NULL, r->per_queue[q]);
		nvx_json_end(j);
		nvx_json_end(j);
	} else {
		nvx_json_null(j, "recv");
	}
	nvx_json_u64(j, "hold_s", a->hold);
	nvx_json_end(j);
}

static void nvx_srq_print_layout(const struct nvx_srq_set *s)
{
	const struct nvx_srq_layout *l = &s->l;
	char h[NVX_FMT_BYTES_LEN];

	printf("layout (mmap offsets of the set's fd):\n");
	printf("  %-12s 0x0, %llu bytes, read-write\n", "ring area",
	       (unsigned long long)l->ring_bytes);
	printf("  %-12s 0x%llx + queue x 0x%llx (header, then %u entries)\n",
	       "completion", (unsigned long long)l->cq_offset,
	       (unsigned long long)l->cq_bytes, s->p.cq_entries);
	printf("  %-12s 0x%llx + ring x 0x%llx (header, then %u entries)\n",
	       "release", (unsigned long long)l->rel_offset,
	       (unsigned long long)l->rel_bytes, s->p.rel_entries);
	printf("  %-12s 0x%llx, %s, read-only\n", "buffers",
	       (unsigned long long)l->buf_offset,
	       nvx_fmt_bytes(h, sizeof(h), l->buf_bytes));
}

/* The checks the kernel would make, with a better message. */
static int nvx_srq_check_params(struct nvx_ctx *ctx,
				const struct nvx_srq_params *p)
{
	uint32_t bs = p->buf_size ? p->buf_size : NVX_SRQ_DEF_BUF_SIZE;
	uint32_t ss = p->stride_size ? p->stride_size : NVX_SRQ_DEF_STRIDE;
	uint32_t nr = p->nr_bufs ? p->nr_bufs : NVX_SRQ_DEF_NR_BUFS;

	if (ss > bs)
		return nvx_usage_error(ctx, "strides of %u bytes do not fit in buffers of %u bytes",
				       ss, bs);
	if (bs / ss > NVX_SRQ_MAX_STRIDES)
		return nvx_usage_error(ctx,
				       "%u-byte buffers hold %u strides of %u bytes: at most %u",
				       bs, bs / ss, ss, NVX_SRQ_MAX_STRIDES);
	if (nvx_srq_per_queue(p) && nr % p->nr_queues)
		return nvx_usage_error(ctx,
				       "--per-queue: --bufs %u is not a multiple of the %u queues",
				       nr, p->nr_queues);
	return NVX_EXIT_OK;
}

static int cmd_srq_create(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { .p.nr_queues = NVX_SRQ_DEF_QUEUES };
	struct sigaction sa = { .sa_handler = nvx_srq_handler };
	struct sigaction old_int, old_term;
	struct nvx_srq_recv r = { 0 };
	struct nvx_srq_set s = { .fd = -1 };
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	enum nvx_srq_step step;
	unsigned int ifindex;
	int ret, err, sig;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_create_opts, &a);
	if (ret)
		return ret;
	ret = nvx_srq_check_params(ctx, &a.p);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	ifindex = nvx_srq_ifindex(ctx, a.dev);
	if (!ifindex)
		return NVX_EXIT_FAIL;
	if (a.recv) {
		r.per_queue = calloc(a.p.nr_queues, sizeof(*r.per_queue));
		if (!r.per_queue) {
			nvx_err("%s: out of memory", ctx->path);
			return NVX_EXIT_FAIL;
		}
		if (!nvx_if_up(a.dev))
			nvx_warn("%s: %s is down: frames reach the set only while it is up (ip link set %s up)",
				 ctx->path, a.dev, a.dev);
	}

	/* SIGINT and SIGTERM end --recv (a failure) and --hold (not one) */
	atomic_store(&nvx_srq_signal, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	err = -nvx_srq_open(ctx, &s, ifindex, NVX_NODE_ANY, &a.p, true, &step);
	if (err) {
		nvx_srq_open_perror(ctx, a.dev, s.grant_bytes, step, err);
		ret = NVX_EXIT_FAIL;
		goto out;
	}

	if (!ctx->json) {
		printf("srq set on %s (ifindex %u): %s of buffers in a grant of %s\n",
		       a.dev, ifindex,
		       nvx_fmt_bytes(h, sizeof(h), s.grant_bytes),
		       nvx_fmt_bytes(h2, sizeof(h2), s.granted));
		nvx_srq_print_params(&s.p);
		nvx_srq_print_layout(&s);
		fflush(stdout);
	}
	if (a.recv) {
		ret = nvx_srq_recv(ctx, &s, a.dev, a.recv, &r);
		if (ret)
			goto out;
	}
	nvx_srq_create_print(ctx, a.dev, &s, &a, a.recv ? &r : NULL);
	fflush(stdout);
	if (r.bad || r.garbage) {
		nvx_err("%s: %llu completions named strides outside the set, and the kernel ignored %llu release entries",
			ctx->path, (unsigned long long)r.bad,
			(unsigned long long)r.garbage);
		ret = NVX_EXIT_FAIL;
		goto out;
	}

	if (a.hold) {
		fprintf(stderr, "nvxtool: holding the set on %s for %u s; ",
			a.dev, a.hold);
		fprintf(stderr, "end early with Ctrl-C or SIGTERM\n");
		sig = nvx_srq_hold(a.hold);
		fprintf(stderr, "nvxtool: releasing the set (%s)\n",
			sig ? strsignal(sig) : "time is up");
	}
out:
	nvx_srq_close(&s);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(r.per_queue);
	return ret;
}

/* ------------------------------------------------------------ srq show */

/* The command name of process @pid, or "?". */
static void nvx_srq_comm(uint32_t pid, char *buf, size_t size)
{
	char path[32];
	FILE *f;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int cmd_srq_show(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { 0 };
	struct nvx_srq_info info;
	struct nvx_json *j = &ctx->js;
	unsigned int ifindex;
	char comm[64];
	int ret;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_show_opts, &a);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	ifindex = nvx_srq_ifindex(ctx, a.dev);
	if (!ifindex)
		return NVX_EXIT_FAIL;

	memset(&info, 0, sizeof(info));
	info.ifindex = ifindex;
	if (ioctl(ctx->fd, NVX_IOC_SRQ_INFO, &info)) {
		nvx_srq_perror(ctx, "NVX_IOC_SRQ_INFO", a.dev,
			       NVX_IOC_SRQ_INFO, errno);
		return NVX_EXIT_FAIL;
	}
	nvx_srq_comm(info.owner, comm, sizeof(comm));

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		if (info.owner) {
			nvx_json_u64(j, "owner", info.owner);
			nvx_json_str(j, "owner_comm", comm);
		} else {
			nvx_json_null(j, "owner");
			nvx_json_null(j, "owner_comm");
		}
		nvx_srq_json_params(j, "params", &info.params);
		nvx_json_end(j);
		return NVX_EXIT_OK;
	}
	printf("srq set on %s (ifindex %u), ", a.dev, ifindex);
	if (info.owner)
		printf("made by pid %u (%s)\n", info.owner, comm);
	else
		printf("made by a process not visible in this pid namespace\n");
	nvx_srq_print_params(&info.params);
	return NVX_EXIT_OK;
}

/* ----------------------------------------------------------- srq stats */

/**
 * struct nvx_srq_counter - a __u64 field of struct nvx_srq_stats
 * @name: its name, the JSON key.
 * @off: its offset.
 * @width: its column in text (queue counters).
 */
struct nvx_srq_counter {
	const char *name;
	size_t off;
	int width;
};

#define NVX_SRQ_COUNTER(f, w) { #f, offsetof(struct nvx_srq_stats, f), w }

/* Counted per queue. */
static const struct nvx_srq_counter nvx_srq_qcounters[] = {
	NVX_SRQ_COUNTER(rx_packets, 12),
	NVX_SRQ_COUNTER(rx_bytes, 14),
	NVX_SRQ_COUNTER(rx_strides, 12),
	NVX_SRQ_COUNTER(fillers, 9),
	NVX_SRQ_COUNTER(truncated, 9),
	NVX_SRQ_COUNTER(drops_no_buf, 12),
	NVX_SRQ_COUNTER(drops_cq_full, 13),
};

/* The set's. */
static const struct nvx_srq_counter nvx_srq_scounters[] = {
	NVX_SRQ_COUNTER(refills, 0),
	NVX_SRQ_COUNTER(bufs_returned, 0),
	NVX_SRQ_COUNTER(released, 0),
	NVX_SRQ_COUNTER(release_garbage, 0),
	NVX_SRQ_COUNTER(tx_packets, 0),
	NVX_SRQ_COUNTER(tx_bytes, 0),
};

static uint64_t nvx_srq_counter(const struct nvx_srq_stats *st,
				const struct nvx_srq_counter *c)
{
	uint64_t v;

	memcpy(&v, (const char *)st + c->off, sizeof(v));
	return v;
}

static void nvx_srq_json_qcounters(struct nvx_json *j,
				   const struct nvx_srq_stats *st)
{
	size_t i;

	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		nvx_json_u64(j, nvx_srq_qcounters[i].name,
			     nvx_srq_counter(st, &nvx_srq_qcounters[i]));
}

static void nvx_srq_print_qrow(const char *name,
			       const struct nvx_srq_stats *st)
{
	size_t i;

	printf("%-5s", name);
	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		printf(" %*llu", nvx_srq_qcounters[i].width,
		       (unsigned long long)nvx_srq_counter(st,
							   &nvx_srq_qcounters[i]));
	printf("\n");
}

static int nvx_srq_query(struct nvx_ctx *ctx, const char *dev,
			 uint32_t ifindex, uint32_t queue,
			 struct nvx_srq_stats *st)
{
	char what[48];

	memset(st, 0, sizeof(*st));
	st->ifindex = ifindex;
	st->queue = queue;
	if (!ioctl(ctx->fd, NVX_IOC_SRQ_QUERY, st))
		return NVX_EXIT_OK;
	if (queue == NVX_SRQ_ALL_QUEUES)
		snprintf(what, sizeof(what), "NVX_IOC_SRQ_QUERY");
	else
		snprintf(what, sizeof(what), "NVX_IOC_SRQ_QUERY of queue %u",
			 queue);
	nvx_srq_perror(ctx, what, dev, NVX_IOC_SRQ_QUERY, errno);
	return NVX_EXIT_FAIL;
}

static int cmd_srq_stats(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { .queue = NVX_SRQ_ALL_QUEUES };
	struct nvx_srq_stats all, *qs = NULL;
	struct nvx_json *j = &ctx->js;
	uint32_t q, first, n;
	unsigned int ifindex;
	char name[16];
	size_t i;
	int ret;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_stats_opts, &a);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	ifindex = nvx_srq_ifindex(ctx, a.dev);
	if (!ifindex)
		return NVX_EXIT_FAIL;
	ret = nvx_srq_query(ctx, a.dev, ifindex, NVX_SRQ_ALL_QUEUES, &all);
	if (ret)
		return ret;
	if (a.queue != NVX_SRQ_ALL_QUEUES && a.queue >= all.nr_queues) {
		nvx_err("%s: --queue %u: the set on %s has %u queue%s",
			ctx->path, a.queue, a.dev, all.nr_queues,
			all.nr_queues == 1 ? "" : "s");
		return NVX_EXIT_FAIL;
	}
	first = a.queue == NVX_SRQ_ALL_QUEUES ? 0 : a.queue;
	n = a.queue == NVX_SRQ_ALL_QUEUES ? all.nr_queues : 1;
	if (n) {
		qs = calloc(n, sizeof(*qs));
		if (!qs) {
			nvx_err("%s: out of memory", ctx->path);
			return NVX_EXIT_FAIL;
		}
	}
	for (q = 0; q < n; q++) {
		ret = nvx_srq_query(ctx, a.dev, ifindex, first + q, &qs[q]);
		if (ret)
			goto out;
	}

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		nvx_json_u64(j, "nr_queues", all.nr_queues);
		nvx_json_object_begin(j, "all");
		nvx_srq_json_qcounters(j, &all);
		nvx_json_end(j);
		nvx_json_array_begin(j, "queues");
		for (q = 0; q < n; q++) {
			nvx_json_object_begin(j, NULL);
			nvx_json_u64(j, "queue", first + q);
			nvx_srq_json_qcounters(j, &qs[q]);
			nvx_json_end(j);
		}
		nvx_json_end(j);
		nvx_json_object_begin(j, "set");
		for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_scounters); i++)
			nvx_json_u64(j, nvx_srq_scounters[i].name,
				     nvx_srq_counter(&all,
						     &nvx_srq_scounters[i]));
		nvx_json_u64(j, "bufs_posted", all.bufs_posted);
		nvx_json_u64(j, "bufs_filling", all.bufs_filling);
		nvx_json_u64(j, "bufs_held", all.bufs_held);
		nvx_json_u64(j, "posted_strides", all.posted_strides);
		nvx_json_end(j);
		nvx_json_end(j);
		goto out;
	}

	printf("srq set on %s (ifindex %u): %u queue%s\n", a.dev, ifindex,
	       all.nr_queues, all.nr_queues == 1 ? "" : "s");
	printf("%-5s", "queue");
	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		printf(" %*s", nvx_srq_qcounters[i].width,
		       nvx_srq_qcounters[i].name);
	printf("\n");
	nvx_srq_print_qrow("all", &all);
	for (q = 0; q < n; q++) {
		snprintf(name, sizeof(name), "%u", first + q);
		nvx_srq_print_qrow(name, &qs[q]);
	}
	printf("refills %llu, buffers returned %llu, ",
	       (unsigned long long)all.refills,
	       (unsigned long long)all.bufs_returned);
	printf("release entries taken %llu (ignored as garbage %llu)\n",
	       (unsigned long long)all.released,
	       (unsigned long long)all.release_garbage);
	printf("sent (NVX_SRQ_IOC_TX) %llu frames, %llu bytes\n",
	       (unsigned long long)all.tx_packets,
	       (unsigned long long)all.tx_bytes);
	printf("buffers now: %u posted, %u filling, %u held for releases; %u strides posted\n",
	       all.bufs_posted, all.bufs_filling, all.bufs_held,
	       all.posted_strides);
out:
	free(qs);
	return ret;
}

/* ------------------------------------------------------------ srq send */

/*
 * Where srq send addresses its frames: the MAC address of NAME when
 * @dev is the peer NAMEp of an existing NAME (an nvxsim pair), else the
 * broadcast address.
 */
static void nvx_srq_send_dst(const char *dev, uint8_t dst[ETH_ALEN])
{
	char nic[IFNAMSIZ];
	size_t len = strlen(dev);

	memcpy(dst, nvx_broadcast, ETH_ALEN);
	if (len < 2 || dev[len - 1] != 'p')
		return;
	snprintf(nic, sizeof(nic), "%.*s", (int)(len - 1), dev);
	if (nvx_if_mac(nic, dst))
		memcpy(dst, nvx_broadcast, ETH_ALEN);
}

static int cmd_srq_send(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = {
		.count = 1,
		.size = NVX_FRAME_DEF,
		.flows = 1,
	};
	uint8_t src[ETH_ALEN], dst[ETH_ALEN];
	uint64_t t0, ns, sent = 0;
	struct nvx_json *j = &ctx->js;
	unsigned int ifindex;
	struct nvx_tx tx;
	int ret, err;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_send_opts, &a);
	if (ret)
		return ret;
	ifindex = nvx_srq_ifindex(ctx, a.dev);
	if (!ifindex)
		return NVX_EXIT_FAIL;
	err = -nvx_if_mac(a.dev, src);
	if (err) {
		nvx_err("%s: the MAC address of %s: %s", ctx->path, a.dev,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	nvx_srq_send_dst(a.dev, dst);
	if (!nvx_if_up(a.dev))
		nvx_warn("%s: %s is down: nothing leaves through it (ip link set %s up)",
			 ctx->path, a.dev, a.dev);

	err = -nvx_tx_open(&tx, ifindex, a.size, a.flows, dst, src);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s%s", ctx->path,
			a.dev, strerror(err),
			err == EPERM ? " (needs CAP_NET_RAW)" : "");
		return NVX_EXIT_FAIL;
	}
	t0 = nvx_now_ns();
	err = -nvx_tx_send(&tx, a.count, 0, &sent, NULL);
	ns = nvx_now_ns() - t0;
	nvx_tx_close(&tx);
	if (err) {
		nvx_err("%s: sending on %s, after %llu of %llu frames: %s%s",
			ctx->path, a.dev, (unsigned long long)sent,
			(unsigned long long)a.count,
			err == ETIMEDOUT ? "no room to send for 10 s" :
			strerror(err),
			err == EMSGSIZE ? " (--size above the MTU + 14?)" : "");
		return NVX_EXIT_FAIL;
	}

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		nvx_json_u64(j, "count", a.count);
		nvx_json_u64(j, "size", a.size);
		nvx_json_u64(j, "flows", a.flows);
		nvx_json_u64(j, "sent", sent);
		nvx_json_u64(j, "ns", ns);
		nvx_json_double(j, "frames_per_s",
				ns ? (double)sent * NVX_NSEC_PER_SEC / ns : NAN);
		nvx_json_end(j);
		return NVX_EXIT_OK;
	}
	printf("sent %llu frames of %u bytes on %u flow%s out of %s in %.3f s (%.0f frames/s)\n",
	       (unsigned long long)sent, a.size, a.flows,
	       a.flows == 1 ? "" : "s", a.dev, (double)ns / 1e9,
	       ns ? (double)sent * NVX_NSEC_PER_SEC / ns : 0.0);
	return NVX_EXIT_OK;
}

/* ----------------------------------------------------------- bench srq */

/*
 * bench srq: (a) the buffer memory that takes a burst on one queue with
 * no drop, shared and striding against a pool per queue with a frame per
 * buffer; (b) the buffer memory a frame consumes; (c) the frames per
 * second one receiving thread takes from nvx against AF_PACKET.
 */

#define NVX_SB_BURST		4096	/* frames of (a), one flow */
#define NVX_SB_FRAMES		2048	/* frames of (b) per size and shape */
#define NVX_SB_SMALL		64	/* the frames of (a) and (c) */
#define NVX_SB_BASE_BUF		2048	/* the baseline: a frame per 2 KiB */
#define NVX_SB_RATE_QUEUES	4	/* the set of (c) */
#define NVX_SB_RATE_FLOWS	64
#define NVX_SB_RATE_BUFS	256	/* 4 MiB of 16 KiB buffers */
#define NVX_SB_BLOCK		(128 * 1024)	/* TPACKET_V3 block */
#define NVX_SB_BLOCKS		32		/* the same 4 MiB */
#define NVX_SB_BLOCK_TOV	1	/* ms until a block not full is retired */
#define NVX_SB_DURATION		2	/* s of sending per method in (c) */
/* the receiver of (c) stops when idle this long after the sender */
#define NVX_SB_DRAIN		(100 * NVX_NSEC_PER_MSEC)
/* a set just closed may hold its NIC and grant a little longer */
#define NVX_SB_RETRY		(2 * NVX_NSEC_PER_SEC)
/* how long the counters may take to show every frame sent */
#define NVX_SB_SETTLE		NVX_NSEC_PER_SEC
#define NVX_SB_HEADLINE_Q	8	/* queues of the headline */
#define NVX_SB_GOAL		32	/* what the headline should reach */

static const uint32_t nvx_sb_queues[] = { 1, 2, 4, 8, 16 };
static const uint32_t nvx_sb_lens[] = { 64, 256, 1500 };

#define NVX_SB_NR_Q		NVX_ARRAY_SIZE(nvx_sb_queues)
#define NVX_SB_NR_LENS		NVX_ARRAY_SIZE(nvx_sb_lens)

/* The two shapes of buffer pool compared in (a) and (b). */
enum {
	NVX_SB_SHARED,		/* the defaults: 16 KiB, 256 B strides */
	NVX_SB_PER_QUEUE,	/* PER_QUEUE, 2 KiB, a frame per buffer */
	NVX_SB_SHAPES,
};

static const char * const nvx_sb_shape_names[NVX_SB_SHAPES] = {
	[NVX_SB_SHARED]		= "shared",
	[NVX_SB_PER_QUEUE]	= "per_queue",
};

/* The receivers of (c). */
enum {
	NVX_SB_NVX,
	NVX_SB_PACKET,
	NVX_SB_METHODS,
};

static const char * const nvx_sb_method_names[NVX_SB_METHODS] = {
	[NVX_SB_NVX]	= "nvx",
	[NVX_SB_PACKET]	= "af_packet",
};

/**
 * struct nvx_sb_burst - a row of (a)
 * @queues: the set's queues.
 * @found: per shape, whether a pool within the limits took the burst.
 * @nr_bufs: per shape, the fewest buffers that took it.
 * @bytes: per shape, their memory.
 * @trials: per shape, the sets tried.
 */
struct nvx_sb_burst {
	uint32_t queues;
	bool found[NVX_SB_SHAPES];
	uint32_t nr_bufs[NVX_SB_SHAPES];
	uint64_t bytes[NVX_SB_SHAPES];
	unsigned int trials[NVX_SB_SHAPES];
};

/**
 * struct nvx_sb_frame - a row of (b)
 * @len: bytes per frame.
 * @rx_packets: per shape, frames completed.
 * @rx_strides: per shape, strides consumed, fillers included.
 * @fillers: per shape, filler completions.
 * @stride: per shape, the stride size.
 * @per_frame: per shape, bytes of buffer consumed per frame.
 */
struct nvx_sb_frame {
	uint32_t len;
	uint64_t rx_packets[NVX_SB_SHAPES];
	uint64_t rx_strides[NVX_SB_SHAPES];
	uint64_t fillers[NVX_SB_SHAPES];
	uint32_t stride[NVX_SB_SHAPES];
	double per_frame[NVX_SB_SHAPES];
};

/**
 * struct nvx_sb_rate - one receiver of (c)
 * @sent: frames the sending thread sent.
 * @received: frames the receiving thread took.
 * @ring_drops: frames the kernel dropped for want of room in the ring
 *	(nvx: drops_no_buf + drops_cq_full; AF_PACKET: tp_drops).
 * @retries: sendmmsg() calls that found no room.
 * @ns: from the first send until the last frame was taken.
 * @pps: @received / @ns.
 */
struct nvx_sb_rate {
	uint64_t sent;
	uint64_t received;
	uint64_t ring_drops;
	uint64_t retries;
	uint64_t ns;
	double pps;
};

/**
 * struct nvx_sb - one run of bench srq
 * @ctx: the command's context; the device is open.
 * @node: the NUMA node of the pool memory and grants.
 * @added: bytes the bench added to the pool on @node, to give back.
 * @duration_ns: how long the sender of (c) sends, per method.
 * @cpu: the CPUs of the receiving thread (this one) and the sender.
 * @same_cpu: both are the same.
 * @nic: the nvxsim NIC made for the run, @peer its peer.
 * @veth: the veth pair for AF_PACKET: sender side, receiver side.
 * @have_nic: @nic exists (and so @peer).
 * @have_veth: the veth pair exists.
 * @nic_if: ifindex of @nic; @peer_if, @veth_if likewise.
 * @nic_mac: MAC address of @nic; @peer_mac, @veth_mac likewise.
 * @burst: the rows of (a).
 * @frame: the rows of (b).
 * @rate: the results of (c).
 */
struct nvx_sb {
	struct nvx_ctx *ctx;
	uint32_t node;
	uint64_t added;
	uint64_t duration_ns;
	int cpu[2];
	bool same_cpu;
	char nic[IFNAMSIZ];
	char peer[IFNAMSIZ + 1];
	char veth[2][IFNAMSIZ];
	bool have_nic;
	bool have_veth;
	unsigned int nic_if;
	unsigned int peer_if;
	unsigned int veth_if[2];
	uint8_t nic_mac[ETH_ALEN];
	uint8_t peer_mac[ETH_ALEN];
	uint8_t veth_mac[2][ETH_ALEN];
	struct nvx_sb_burst burst[NVX_SB_NR_Q];
	struct nvx_sb_frame frame[NVX_SB_NR_LENS];
	struct nvx_sb_rate rate[NVX_SB_METHODS];
};

static bool nvx_sb_stopped(void)
{
	return atomic_load(&nvx_srq_signal);
}

static void nvx_sb_progress(const struct nvx_sb *b, const char *fmt, ...)
	__printf(2, 3);

static void nvx_sb_progress(const struct nvx_sb *b, const char *fmt, ...)
{
	va_list ap;

	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "nvxtool: %s: ", b->ctx->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline void nvx_sb_relax(const struct nvx_sb *b)
{
	if (b->same_cpu)
		sched_yield();
#if defined(__x86_64__)
	else
		__builtin_ia32_pause();
#endif
}

static uint32_t nvx_div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* The parameters of @shape with @queues queues and @nr_bufs buffers. */
static void nvx_sb_params(int shape, uint32_t queues, uint32_t nr_bufs,
			  struct nvx_srq_params *p)
{
	memset(p, 0, sizeof(*p));
	p->nr_queues = queues;
	p->nr_bufs = nr_bufs;
	if (shape == NVX_SB_SHARED) {
		p->buf_size = NVX_SRQ_DEF_BUF_SIZE;
		p->stride_size = NVX_SRQ_DEF_STRIDE;
	} else {
		p->flags = NVX_SRQ_PER_QUEUE;
		p->buf_size = NVX_SB_BASE_BUF;
		p->stride_size = NVX_SB_BASE_BUF;
	}
}

/* Buffers of @shape that surely hold @frames frames of @len bytes. */
static uint32_t nvx_sb_enough(int shape, uint32_t frames, uint32_t len)
{
	uint32_t spb = NVX_SRQ_DEF_BUF_SIZE / NVX_SRQ_DEF_STRIDE;
	uint32_t per_buf = spb / nvx_div_up(len, NVX_SRQ_DEF_STRIDE);

	if (shape == NVX_SB_PER_QUEUE)
		return frames;
	return nvx_div_up(frames, per_buf ? per_buf : 1);
}

/* The largest grant a set of the bench takes. */
static uint64_t nvx_sb_need(void)
{
	uint64_t need = (uint64_t)NVX_SRQ_MAX_BUFS * NVX_SB_BASE_BUF;
	uint64_t shared = (uint64_t)NVX_SB_BURST * NVX_SRQ_DEF_BUF_SIZE;
	uint64_t frames = 2ULL * NVX_SB_FRAMES * NVX_SB_BASE_BUF;

	if (shared > need)
		need = shared;
	if (frames > need)
		need = frames;
	return need;
}

/* ---- the links */

static int nvx_sb_link_err(struct nvx_sb *b, const char *what, int err)
{
	nvx_err("%s: %s: %s%s", b->ctx->path, what, strerror(err),
		err == EPERM ? " (needs CAP_NET_ADMIN: run as root)" : "");
	return NVX_EXIT_FAIL;
}

/* ifindex and MAC address of @name, brought up without IPv6. */
static int nvx_sb_link_ready(struct nvx_sb *b, const char *name,
			     unsigned int *ifindex, uint8_t *mac)
{
	char what[64];
	int err;

	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		nvx_err("%s: %s was made, but is not there: %s", b->ctx->path,
			name, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	nvx_link_quiet(name);
	snprintf(what, sizeof(what), "ip link set %s up", name);
	err = -nvx_link_up(*ifindex);
	if (err)
		return nvx_sb_link_err(b, what, err);
	err = -nvx_if_mac(name, mac);
	if (err) {
		nvx_err("%s: the MAC address of %s: %s", b->ctx->path, name,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* The nvxsim pair and the veth pair of this run, up. */
static int nvx_sb_links(struct nvx_sb *b)
{
	unsigned int id = getpid() % 10000000;	/* names of 15 at most */
	char what[96];
	int err, ret;

	snprintf(b->nic, sizeof(b->nic), "nvxb%u", id);
	snprintf(b->peer, sizeof(b->peer), "%sp", b->nic);
	snprintf(b->veth[0], sizeof(b->veth[0]), "nvxv%ua", id);
	snprintf(b->veth[1], sizeof(b->veth[1]), "nvxv%ub", id);

	snprintf(what, sizeof(what), "ip link add %s type nvxsim", b->nic);
	err = -nvx_link_add(b->nic, "nvxsim", NULL);
	if (err == EOPNOTSUPP) {
		nvx_err("%s: %s: the running kernel has no nvxsim NIC (CONFIG_NVX_SRQ)",
			b->ctx->path, what);
		return NVX_EXIT_FAIL;
	}
	if (err)
		return nvx_sb_link_err(b, what, err);
	b->have_nic = true;
	snprintf(what, sizeof(what), "ip link add %s type veth peer name %s",
		 b->veth[0], b->veth[1]);
	err = -nvx_link_add(b->veth[0], "veth", b->veth[1]);
	if (err)
		return nvx_sb_link_err(b, what, err);
	b->have_veth = true;

	ret = nvx_sb_link_ready(b, b->nic, &b->nic_if, b->nic_mac);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->peer, &b->peer_if, b->peer_mac);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->veth[0], &b->veth_if[0],
					b->veth_mac[0]);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->veth[1], &b->veth_if[1],
					b->veth_mac[1]);
	return ret;
}

/* Delete the links of the run: status 1 when one stays. */
static int nvx_sb_unlink(struct nvx_sb *b)
{
	int err, ret = NVX_EXIT_OK;

	if (b->have_nic) {
		err = -nvx_link_del(b->nic);
		if (err) {
			nvx_err("%s: could not delete %s: %s (ip link del %s)",
				b->ctx->path, b->nic, strerror(err), b->nic);
			ret = NVX_EXIT_FAIL;
		}
		b->have_nic = false;
	}
	if (b->have_veth) {
		err = -nvx_link_del(b->veth[0]);
		if (err) {
			nvx_err("%s: could not delete %s: %s (ip link del %s)",
				b->ctx->path, b->veth[0], strerror(err),
				b->veth[0]);
			ret = NVX_EXIT_FAIL;
		}
		b->have_veth = false;
	}
	return ret;
}

/* ---- the pool */

/* Grow the pool on b->node until @need bytes of it are not granted. */
static int nvx_sb_grow(struct nvx_sb *b, uint64_t need)
{
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	struct nvx_pool_stats s;
	uint64_t avail, done = 0;
	int err;

	err = -nvx_pool_stats_get(b->ctx, b->node, &s);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	avail = s.total_bytes > s.granted_bytes ?
		s.total_bytes - s.granted_bytes : 0;
	if (avail >= need)
		return NVX_EXIT_OK;
	err = -nvx_pool_resize(b->ctx, true, b->node, need - avail, 0,
			       &done);
	b->added += done;
	if (err) {
		nvx_err("%s: the bench needs %s of the pool, which holds %s not granted; growing it by the rest failed: %s",
			b->ctx->path, nvx_fmt_bytes(h1, sizeof(h1), need),
			nvx_fmt_bytes(h2, sizeof(h2), avail),
			nvx_pool_strerror(NVX_IOC_POOL_GROW, err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* Shrink the pool by what the bench added; status 1 when some stays. */
static int nvx_sb_give_back(struct nvx_sb *b)
{
	struct timespec ms = { 0, 10 * NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_SB_RETRY, added = b->added, done;
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	int err = 0;

	while (b->added) {
		done = 0;
		err = -nvx_pool_resize(b->ctx, false, b->node, b->added, 0,
				       &done);
		b->added -= done < b->added ? done : b->added;
		/* a grant may be returned a little after its set is closed */
		if (err != EBUSY || nvx_now_ns() > end)
			break;
		nanosleep(&ms, NULL);
	}
	if (!b->added)
		return NVX_EXIT_OK;
	nvx_err("%s: could not give back %s of the %s the bench added to the pool on node %u (%s); see nvxtool pool shrink",
		b->ctx->path, nvx_fmt_bytes(h1, sizeof(h1), b->added),
		nvx_fmt_bytes(h2, sizeof(h2), added), b->node,
		err ? nvx_pool_strerror(NVX_IOC_POOL_SHRINK, err) :
		"it shrank by less than asked");
	return NVX_EXIT_FAIL;
}

/* ---- sets */

/*
 * A set of @p on the bench's NIC. The set closed just before may still
 * hold the NIC (EBUSY) or its grant (ENOSPC) a moment: retried.
 */
static int nvx_sb_open(struct nvx_sb *b, struct nvx_srq_set *s,
		       const struct nvx_srq_params *p, bool map)
{
	struct timespec ms = { 0, 10 * NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_SB_RETRY;
	enum nvx_srq_step step;
	int err;

	for (;;) {
		err = -nvx_srq_open(b->ctx, s, b->nic_if, b->node, p, map,
				    &step);
		if (!err)
			return NVX_EXIT_OK;
		if (!((step == NVX_SRQ_STEP_GRANT && err == ENOSPC) ||
		      (step == NVX_SRQ_STEP_CREATE && err == EBUSY)) ||
		    nvx_now_ns() > end)
			break;
		nanosleep(&ms, NULL);
	}
	nvx_srq_open_perror(b->ctx, b->nic, s->grant_bytes, step, err);
	return NVX_EXIT_FAIL;
}

/*
 * A fresh set of @p; @count frames sent through @tx, none released; the
 * set's counters in *@st. Fails when frames went missing on the way.
 */
static int nvx_sb_fill(struct nvx_sb *b, struct nvx_tx *tx,
		       const struct nvx_srq_params *p, uint64_t count,
		       struct nvx_srq_stats *st)
{
	struct timespec ms = { 0, NVX_NSEC_PER_MSEC };
	uint64_t sent = 0, seen, end;
	struct nvx_srq_set s;
	int ret, err;

	ret = nvx_sb_open(b, &s, p, false);
	if (ret)
		return ret;
	err = -nvx_tx_send(tx, count, 0, &sent, NULL);
	if (err) {
		nvx_srq_close(&s);
		nvx_err("%s: sending on %s, after %llu of %llu frames: %s",
			b->ctx->path, b->peer, (unsigned long long)sent,
			(unsigned long long)count,
			err == ETIMEDOUT ? "no room to send for 10 s" :
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	/* the frames are there when sendmmsg() returns; allow a moment */
	end = nvx_now_ns() + NVX_SB_SETTLE;
	do {
		err = -nvx_srq_stats_get(&s, NVX_SRQ_ALL_QUEUES, st);
		seen = st->rx_packets + st->drops_no_buf + st->drops_cq_full;
		if (err || seen >= sent)
			break;
		nanosleep(&ms, NULL);
	} while (nvx_now_ns() < end);
	nvx_srq_close(&s);
	if (err) {
		nvx_err("%s: NVX_SRQ_IOC_STATS: %s", b->ctx->path,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	if (seen != sent || st->drops_cq_full) {
		nvx_err("%s: %llu frames sent out of %s, and the set on %s saw %llu: %llu received, %llu dropped for want of a buffer, %llu for a full completion ring (%u entries)",
			b->ctx->path, (unsigned long long)sent, b->peer, b->nic,
			(unsigned long long)seen,
			(unsigned long long)st->rx_packets,
			(unsigned long long)st->drops_no_buf,
			(unsigned long long)st->drops_cq_full, p->cq_entries ?
			p->cq_entries : NVX_SRQ_DEF_CQ_ENTRIES);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* ---- (a) */

/* Does @shape with @n buffers (per queue for PER_QUEUE) take the burst? */
static int nvx_sb_try(struct nvx_sb *b, struct nvx_tx *tx, int shape,
		      struct nvx_sb_burst *row, uint32_t n, bool *fits)
{
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	int ret;

	if (nvx_sb_stopped())
		return NVX_EXIT_FAIL;
	nvx_sb_params(shape, row->queues,
		      shape == NVX_SB_PER_QUEUE ? n * row->queues : n, &p);
	ret = nvx_sb_fill(b, tx, &p, NVX_SB_BURST, &st);
	if (ret)
		return ret;
	row->trials[shape]++;
	*fits = !st.drops_no_buf;
	return NVX_EXIT_OK;
}

/*
 * The fewest buffers (per queue for the per-queue shape) that take the
 * burst without a drop: a bisection over pool sizes, each tried with a
 * fresh set. Nothing is computed from the geometry: the answer is what
 * the NIC model did.
 */
static int nvx_sb_search(struct nvx_sb *b, struct nvx_tx *tx, int shape,
			 struct nvx_sb_burst *row)
{
	uint32_t q = row->queues, cap, lo = 0, hi, mid;
	bool fits;
	int ret;

	/* per queue: the burst may land on any queue, each needs it all */
	cap = shape == NVX_SB_PER_QUEUE ? NVX_SRQ_MAX_BUFS / q : NVX_SB_BURST;
	ret = nvx_sb_try(b, tx, shape, row, cap, &fits);
	if (ret)
		return ret;
	if (!fits)
		return NVX_EXIT_OK;	/* not found */
	hi = cap;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		ret = nvx_sb_try(b, tx, shape, row, mid, &fits);
		if (ret)
			return ret;
		if (fits)
			hi = mid;
		else
			lo = mid;
	}
	row->found[shape] = true;
	row->nr_bufs[shape] = shape == NVX_SB_PER_QUEUE ? hi * q : hi;
	row->bytes[shape] = (uint64_t)row->nr_bufs[shape] *
			    (shape == NVX_SB_PER_QUEUE ? NVX_SB_BASE_BUF :
			     NVX_SRQ_DEF_BUF_SIZE);
	return NVX_EXIT_OK;
}

static int nvx_sb_bursts(struct nvx_sb *b)
{
	struct nvx_tx tx;
	unsigned int i;
	int ret = NVX_EXIT_OK, shape, err;

	err = -nvx_tx_open(&tx, b->peer_if, NVX_SB_SMALL, 1, b->nic_mac,
			   b->peer_mac);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s", b->ctx->path,
			b->peer, strerror(err));
		return NVX_EXIT_FAIL;
	}
	for (i = 0; i < NVX_SB_NR_Q && !ret; i++) {
		b->burst[i].queues = nvx_sb_queues[i];
		for (shape = 0; shape < NVX_SB_SHAPES && !ret; shape++) {
			nvx_sb_progress(b, "(a) %u queue%s, %s...",
					nvx_sb_queues[i],
					nvx_sb_queues[i] == 1 ? "" : "s",
					nvx_sb_shape_names[shape]);
			ret = nvx_sb_search(b, &tx, shape, &b->burst[i]);
		}
	}
	nvx_tx_close(&tx);
	return ret;
}

/* ---- (b) */

static int nvx_sb_frames(struct nvx_sb *b, struct nvx_sb_frame *row)
{
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	struct nvx_tx tx;
	int ret = NVX_EXIT_OK, shape, err;

	err = -nvx_tx_open(&tx, b->peer_if, row->len, 1, b->nic_mac,
			   b->peer_mac);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s", b->ctx->path,
			b->peer, strerror(err));
		return NVX_EXIT_FAIL;
	}
	for (shape = 0; shape < NVX_SB_SHAPES && !ret; shape++) {
		nvx_sb_progress(b, "(b) %u-byte frames, %s...", row->len,
				nvx_sb_shape_names[shape]);
		/* twice what they should need: none is dropped */
		nvx_sb_params(shape, 1,
			      2 * nvx_sb_enough(shape, NVX_SB_FRAMES,
						row->len) + 2, &p);
		ret = nvx_sb_fill(b, &tx, &p, NVX_SB_FRAMES, &st);
		if (ret)
			break;
		if (st.drops_no_buf || !st.rx_packets) {
			nvx_err("%s: a set of %u buffers of %u bytes dropped %llu of %u frames of %u bytes for want of a buffer",
				b->ctx->path, p.nr_bufs, p.buf_size,
				(unsigned long long)st.drops_no_buf,
				NVX_SB_FRAMES, row->len);
			ret = NVX_EXIT_FAIL;
			break;
		}
		row->rx_packets[shape] = st.rx_packets;
		row->rx_strides[shape] = st.rx_strides;
		row->fillers[shape] = st.fillers;
		row->stride[shape] = p.stride_size;
		row->per_frame[shape] = (double)st.rx_strides *
					p.stride_size / st.rx_packets;
	}
	nvx_tx_close(&tx);
	return ret;
}

/* ---- (c) */

/**
 * struct nvx_sb_sender - the sending thread of (c)
 * @tx: what it sends through.
 * @cpu: where it runs.
 * @duration_ns: how long it sends.
 * @t0: when it started.
 * @t1: when it stopped.
 * @sent: frames sent.
 * @retries: sendmmsg() calls that found no room.
 * @err: -errno of a send that failed, else 0.
 * @done: set last, when it stopped.
 */
struct nvx_sb_sender {
	struct nvx_tx *tx;
	int cpu;
	uint64_t duration_ns;
	uint64_t t0;
	uint64_t t1;
	uint64_t sent;
	uint64_t retries;
	int err;
	int done;
};

static void *nvx_sb_send_thread(void *arg)
{
	struct nvx_sb_sender *snd = arg;

	nvx_pin_self(snd->cpu);
	snd->t0 = nvx_now_ns();
	snd->err = nvx_tx_send(snd->tx, UINT64_MAX,
			       snd->t0 + snd->duration_ns, &snd->sent,
			       &snd->retries);
	snd->t1 = nvx_now_ns();
	__atomic_store_n(&snd->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/**
 * struct nvx_sb_rx - the receiving thread of (c)
 * @received: frames taken.
 * @last_ns: when the last were taken.
 * @done_ns: when the receiver saw the sender stopped, 0 before.
 * @sum: of a word of every frame, so that every frame is read.
 * @garbage: nvx: release entries the kernel ignored.
 * @bad: nvx: completions naming strides outside the set.
 */
struct nvx_sb_rx {
	uint64_t received;
	uint64_t last_ns;
	uint64_t done_ns;
	uint32_t sum;
	uint64_t garbage;
	uint64_t bad;
};

/* Nothing new: true when the receiver is done, after a pause. */
static bool nvx_sb_rx_idle(const struct nvx_sb *b,
			   const struct nvx_sb_sender *snd,
			   struct nvx_sb_rx *rx)
{
	uint64_t now = nvx_now_ns();

	if (!rx->done_ns && __atomic_load_n(&snd->done, __ATOMIC_ACQUIRE))
		rx->done_ns = now;
	if (rx->done_ns &&
	    now - (rx->last_ns > rx->done_ns ? rx->last_ns : rx->done_ns) >
	    NVX_SB_DRAIN)
		return true;
	nvx_sb_relax(b);
	return false;
}

static uint32_t nvx_sb_word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * nvx: poll every completion ring, read each frame's UDP ports, give
 * the strides back (consecutive frames of a buffer in one entry), and
 * NVX_SRQ_IOC_RELEASE after every pass that found frames.
 */
static int nvx_sb_rx_nvx(struct nvx_sb *b, const struct nvx_srq_set *s,
			 const struct nvx_sb_sender *snd, struct nvx_sb_rx *rx)
{
	uint32_t q, n, cons, rel, pend_buf = 0, pend_n;
	const struct nvx_srq_cqe *c;
	uint64_t got;
	int err;

	for (;;) {
		got = 0;
		for (q = 0; q < s->p.nr_queues; q++) {
			n = nvx_srq_cq_ready(s, q, &cons);
			if (n == UINT32_MAX) {
				nvx_err("%s: nvx: queue %u: the completion ring's producer index is more than its %u entries ahead",
					b->ctx->path, q, s->p.cq_entries);
				return NVX_EXIT_FAIL;
			}
			rel = q % s->p.nr_rel_rings;
			pend_n = 0;
			for (; n; n--, cons++) {
				c = nvx_srq_cqe(s, q, cons);
				if (c->flags & NVX_SRQ_CQE_FILLER)
					continue;
				if (c->buf >= s->p.nr_bufs ||
				    c->stride >= s->spb || !c->strides) {
					rx->bad++;
					continue;
				}
				rx->sum += nvx_sb_word(s->bufs +
					(uint64_t)c->buf * s->p.buf_size +
					(uint64_t)c->stride * s->p.stride_size +
					NVX_FRAME_UDP);
				got++;
				if (pend_n && c->buf == pend_buf &&
				    pend_n + c->strides <= UINT16_MAX) {
					pend_n += c->strides;
					continue;
				}
				if (pend_n) {
					err = nvx_srq_release(s, rel, pend_buf,
							      pend_n,
							      &rx->garbage);
					if (err)
						goto fail;
				}
				pend_buf = c->buf;
				pend_n = c->strides;
			}
			nvx_srq_cq_done(s, q, cons);
			if (pend_n) {
				err = nvx_srq_release(s, rel, pend_buf, pend_n,
						      &rx->garbage);
				if (err)
					goto fail;
			}
		}
		if (got) {
			rx->received += got;
			rx->last_ns = nvx_now_ns();
			err = nvx_srq_release_now(s, &rx->garbage);
			if (err)
				goto fail;
			continue;
		}
		if (nvx_sb_stopped())
			return NVX_EXIT_FAIL;
		if (nvx_sb_rx_idle(b, snd, rx))
			return NVX_EXIT_OK;
	}
fail:
	nvx_err("%s: nvx: giving strides back: %s", b->ctx->path,
		err == -ENOSPC ? "the release ring stays full" :
		strerror(-err));
	return NVX_EXIT_FAIL;
}

/* AF_PACKET: poll the blocks of the TPACKET_V3 ring, read every frame. */
static int nvx_sb_rx_packet(struct nvx_sb *b, uint8_t *ring,
			    const struct nvx_sb_sender *snd,
			    struct nvx_sb_rx *rx)
{
	struct tpacket_block_desc *bd;
	struct tpacket3_hdr *h;
	unsigned int cur = 0;
	uint32_t i, n;

	for (;;) {
		bd = (struct tpacket_block_desc *)(ring +
						   (size_t)cur * NVX_SB_BLOCK);
		if (__atomic_load_n(&bd->hdr.bh1.block_status,
				    __ATOMIC_ACQUIRE) & TP_STATUS_USER) {
			n = bd->hdr.bh1.num_pkts;
			h = (struct tpacket3_hdr *)((uint8_t *)bd +
				bd->hdr.bh1.offset_to_first_pkt);
			for (i = 0; i < n; i++) {
				rx->sum += nvx_sb_word((uint8_t *)h + h->tp_mac +
						       NVX_FRAME_UDP);
				h = (struct tpacket3_hdr *)((uint8_t *)h +
							    h->tp_next_offset);
			}
			__atomic_store_n(&bd->hdr.bh1.block_status,
					 TP_STATUS_KERNEL, __ATOMIC_RELEASE);
			cur = (cur + 1) % NVX_SB_BLOCKS;
			rx->received += n;
			rx->last_ns = nvx_now_ns();
			continue;
		}
		if (nvx_sb_stopped())
			return NVX_EXIT_FAIL;
		if (nvx_sb_rx_idle(b, snd, rx))
			return NVX_EXIT_OK;
	}
}

/* A TPACKET_V3 ring of NVX_SB_BLOCKS blocks on the receiving veth. */
static int nvx_sb_packet_open(struct nvx_sb *b, int *fd, uint8_t **ring)
{
	struct tpacket_req3 req = {
		.tp_block_size = NVX_SB_BLOCK,
		.tp_block_nr = NVX_SB_BLOCKS,
		.tp_frame_size = NVX_SB_BASE_BUF,
		.tp_frame_nr = NVX_SB_BLOCK / NVX_SB_BASE_BUF * NVX_SB_BLOCKS,
		.tp_retire_blk_tov = NVX_SB_BLOCK_TOV,
	};
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = b->veth_if[1],
	};
	size_t size = (size_t)NVX_SB_BLOCK * NVX_SB_BLOCKS;
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	int v = TPACKET_V3, err;
	const char *what;
	void *m;

	*ring = NULL;
	/* protocol 0: nothing arrives before the ring is there */
	what = "socket(AF_PACKET)";
	*fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		goto fail;
	what = "PACKET_VERSION TPACKET_V3";
	if (setsockopt(*fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		goto fail;
	what = "PACKET_RX_RING";
	if (setsockopt(*fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		goto fail;
	what = "mmap of the ring";
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	*ring = m;
	what = "bind";
	if (bind(*fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto fail;
	/* the counters start from zero */
	getsockopt(*fd, SOL_PACKET, PACKET_STATISTICS, &st, &len);
	return NVX_EXIT_OK;
fail:
	err = errno;
	nvx_err("%s: af_packet: %s on %s: %s", b->ctx->path, what, b->veth[1],
		strerror(err));
	if (*ring)
		munmap(*ring, size);
	if (*fd >= 0)
		close(*fd);
	*ring = NULL;
	*fd = -1;
	return NVX_EXIT_FAIL;
}

/* One method of (c): the sending thread against one receiver. */
static int nvx_sb_rate_run(struct nvx_sb *b, int method)
{
	struct nvx_sb_sender snd = {
		.cpu = b->cpu[1],
		.duration_ns = b->duration_ns,
	};
	struct nvx_sb_rate *r = &b->rate[method];
	const char *name = nvx_sb_method_names[method];
	struct nvx_srq_set s = { .fd = -1 };
	struct tpacket_stats_v3 pst;
	socklen_t len = sizeof(pst);
	struct nvx_sb_rx rx = { 0 };
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	struct nvx_tx tx = { .fd = -1 };
	uint8_t *ring = NULL;
	int pfd = -1, ret, err;
	pthread_t th;

	nvx_sb_progress(b, "(c) %s, %llu s...", name,
			(unsigned long long)(b->duration_ns / NVX_NSEC_PER_SEC));
	if (method == NVX_SB_NVX) {
		nvx_sb_params(NVX_SB_SHARED, NVX_SB_RATE_QUEUES,
			      NVX_SB_RATE_BUFS, &p);
		ret = nvx_sb_open(b, &s, &p, true);
		if (ret)
			return ret;
		err = -nvx_tx_open(&tx, b->peer_if, NVX_SB_SMALL,
				   NVX_SB_RATE_FLOWS, b->nic_mac, b->peer_mac);
	} else {
		ret = nvx_sb_packet_open(b, &pfd, &ring);
		if (ret)
			return ret;
		err = -nvx_tx_open(&tx, b->veth_if[0], NVX_SB_SMALL,
				   NVX_SB_RATE_FLOWS, b->veth_mac[1],
				   b->veth_mac[0]);
	}
	ret = NVX_EXIT_FAIL;
	if (err) {
		nvx_err("%s: %s: an AF_PACKET socket to send on: %s",
			b->ctx->path, name, strerror(err));
		goto out;
	}
	snd.tx = &tx;
	nvx_pin_self(b->cpu[0]);
	err = pthread_create(&th, NULL, nvx_sb_send_thread, &snd);
	if (err) {
		nvx_err("%s: %s: cannot start the sending thread: %s",
			b->ctx->path, name, strerror(err));
		goto out;
	}
	if (method == NVX_SB_NVX)
		ret = nvx_sb_rx_nvx(b, &s, &snd, &rx);
	else
		ret = nvx_sb_rx_packet(b, ring, &snd, &rx);
	pthread_join(th, NULL);
	__asm__ volatile("" : : "r"(rx.sum));	/* every frame was read */
	if (ret)
		goto out;
	ret = NVX_EXIT_FAIL;
	if (snd.err) {
		nvx_err("%s: %s: sending, after %llu frames: %s", b->ctx->path,
			name, (unsigned long long)snd.sent,
			snd.err == -ETIMEDOUT ? "no room to send for 10 s" :
			strerror(-snd.err));
		goto out;
	}
	if (method == NVX_SB_NVX) {
		err = -nvx_srq_stats_get(&s, NVX_SRQ_ALL_QUEUES, &st);
		if (err) {
			nvx_err("%s: nvx: NVX_SRQ_IOC_STATS: %s", b->ctx->path,
				strerror(err));
			goto out;
		}
		if (rx.bad || rx.garbage) {
			nvx_err("%s: nvx: %llu completions named strides outside the set, and the kernel ignored %llu release entries",
				b->ctx->path, (unsigned long long)rx.bad,
				(unsigned long long)rx.garbage);
			goto out;
		}
		r->ring_drops = st.drops_no_buf + st.drops_cq_full;
	} else {
		if (getsockopt(pfd, SOL_PACKET, PACKET_STATISTICS, &pst,
			       &len)) {
			nvx_err("%s: af_packet: PACKET_STATISTICS: %s",
				b->ctx->path, strerror(errno));
			goto out;
		}
		r->ring_drops = pst.tp_drops;
	}
	r->sent = snd.sent;
	r->received = rx.received;
	r->retries = snd.retries;
	r->ns = rx.last_ns > snd.t0 ? rx.last_ns - snd.t0 : 0;
	r->pps = r->ns ? (double)r->received * NVX_NSEC_PER_SEC / r->ns : 0;
	ret = NVX_EXIT_OK;
out:
	nvx_tx_close(&tx);
	nvx_srq_close(&s);
	if (ring)
		munmap(ring, (size_t)NVX_SB_BLOCK * NVX_SB_BLOCKS);
	if (pfd >= 0)
		close(pfd);
	return ret;
}

/* ---- the run */

static int nvx_sb_body(struct nvx_sb *b)
{
	unsigned int i;
	int ret, m;

	ret = nvx_sb_links(b);
	if (ret)
		return ret;
	ret = nvx_sb_grow(b, nvx_sb_need());
	if (ret)
		return ret;
	ret = nvx_sb_bursts(b);
	for (i = 0; i < NVX_SB_NR_LENS && !ret; i++) {
		b->frame[i].len = nvx_sb_lens[i];
		ret = nvx_sb_frames(b, &b->frame[i]);
	}
	for (m = 0; m < NVX_SB_METHODS && !ret; m++)
		ret = nvx_sb_rate_run(b, m);
	if (!ret && nvx_sb_stopped())
		ret = NVX_EXIT_FAIL;
	return ret;
}

static double nvx_sb_ratio(double num, double den)
{
	return den > 0 ? num / den : NAN;
}

static double nvx_sb_burst_ratio(const struct nvx_sb_burst *row)
{
	if (!row->found[NVX_SB_SHARED] || !row->found[NVX_SB_PER_QUEUE])
		return NAN;
	return nvx_sb_ratio(row->bytes[NVX_SB_PER_QUEUE],
			    row->bytes[NVX_SB_SHARED]);
}

static double nvx_sb_headline(const struct nvx_sb *b)
{
	unsigned int i;

	for (i = 0; i < NVX_SB_NR_Q; i++)
		if (b->burst[i].queues == NVX_SB_HEADLINE_Q)
			return nvx_sb_burst_ratio(&b->burst[i]);
	return NAN;
}

/* The cap of the search of (a) for @shape at @queues, in buffers. */
static uint32_t nvx_sb_cap(int shape, uint32_t queues)
{
	return shape == NVX_SB_PER_QUEUE ?
	       NVX_SRQ_MAX_BUFS / queues * queues : NVX_SB_BURST;
}

static void nvx_sb_print_json(const struct nvx_sb *b)
{
	struct nvx_json *j = &b->ctx->js;
	unsigned int i;
	int shape, m;

	nvx_json_object_begin(j, NULL);
	nvx_json_array_begin(j, "cpus");
	nvx_json_s64(j, NULL, b->cpu[0]);
	nvx_json_s64(j, NULL, b->cpu[1]);
	nvx_json_end(j);
	nvx_json_bool(j, "same_cpu", b->same_cpu);
	nvx_json_u64(j, "node", b->node);

	nvx_json_object_begin(j, "burst");
	nvx_json_u64(j, "frames", NVX_SB_BURST);
	nvx_json_u64(j, "frame_bytes", NVX_SB_SMALL);
	nvx_json_array_begin(j, "rows");
	for (i = 0; i < NVX_SB_NR_Q; i++) {
		const struct nvx_sb_burst *row = &b->burst[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "queues", row->queues);
		for (shape = 0; shape < NVX_SB_SHAPES; shape++) {
			struct nvx_srq_params p;

			nvx_sb_params(shape, row->queues, 0, &p);
			nvx_json_object_begin(j, nvx_sb_shape_names[shape]);
			nvx_json_u64(j, "buf_size", p.buf_size);
			nvx_json_u64(j, "stride_size", p.stride_size);
			if (row->found[shape]) {
				nvx_json_u64(j, "nr_bufs", row->nr_bufs[shape]);
				nvx_json_u64(j, "bytes", row->bytes[shape]);
			} else {
				nvx_json_null(j, "nr_bufs");
				nvx_json_null(j, "bytes");
			}
			nvx_json_u64(j, "searched_up_to",
				     nvx_sb_cap(shape, row->queues));
			nvx_json_u64(j, "trials", row->trials[shape]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "ratio", nvx_sb_burst_ratio(row));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "per_frame");
	nvx_json_u64(j, "frames", NVX_SB_FRAMES);
	nvx_json_array_begin(j, "rows");
	for (i = 0; i < NVX_SB_NR_LENS; i++) {
		const struct nvx_sb_frame *row = &b->frame[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "frame_bytes", row->len);
		for (shape = 0; shape < NVX_SB_SHAPES; shape++) {
			nvx_json_object_begin(j, nvx_sb_shape_names[shape]);
			nvx_json_double(j, "bytes_per_frame",
					row->per_frame[shape]);
			nvx_json_u64(j, "stride_size", row->stride[shape]);
			nvx_json_u64(j, "rx_packets", row->rx_packets[shape]);
			nvx_json_u64(j, "rx_strides", row->rx_strides[shape]);
			nvx_json_u64(j, "fillers", row->fillers[shape]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "ratio",
				nvx_sb_ratio(row->per_frame[NVX_SB_PER_QUEUE],
					     row->per_frame[NVX_SB_SHARED]));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "rate");
	nvx_json_u64(j, "duration_ns", b->duration_ns);
	nvx_json_u64(j, "frame_bytes", NVX_SB_SMALL);
	nvx_json_u64(j, "batch", NVX_SEND_BATCH);
	nvx_json_u64(j, "flows", NVX_SB_RATE_FLOWS);
	nvx_json_u64(j, "buffer_bytes",
		     (uint64_t)NVX_SB_RATE_BUFS * NVX_SRQ_DEF_BUF_SIZE);
	for (m = 0; m < NVX_SB_METHODS; m++) {
		const struct nvx_sb_rate *r = &b->rate[m];

		nvx_json_object_begin(j, nvx_sb_method_names[m]);
		nvx_json_u64(j, "sent", r->sent);
		nvx_json_u64(j, "received", r->received);
		nvx_json_u64(j, "ns", r->ns);
		nvx_json_double(j, "pps", r->pps);
		nvx_json_u64(j, "ring_drops", r->ring_drops);
		nvx_json_u64(j, "lost", r->sent > r->received ?
			     r->sent - r->received : 0);
		nvx_json_u64(j, "send_retries", r->retries);
		nvx_json_end(j);
	}
	nvx_json_double(j, "ratio",
			nvx_sb_ratio(b->rate[NVX_SB_NVX].pps,
				     b->rate[NVX_SB_PACKET].pps));
	nvx_json_end(j);

	nvx_json_double(j, "headline", nvx_sb_headline(b));
	nvx_json_u64(j, "headline_queues", NVX_SB_HEADLINE_Q);
	nvx_json_u64(j, "goal", NVX_SB_GOAL);
	nvx_json_end(j);
}

/* "1.50", or "n/a" where there is no ratio. */
static const char *nvx_sb_fmt_ratio(char *buf, size_t size, double r)
{
	if (isfinite(r))
		snprintf(buf, size, "%.2f", r);
	else
		snprintf(buf, size, "n/a");
	return buf;
}

static void nvx_sb_print_text(const struct nvx_sb *b)
{
	static const char * const receivers[NVX_SB_METHODS] = {
		[NVX_SB_NVX]	= "polls the completion rings, releases",
		[NVX_SB_PACKET]	= "polls a TPACKET_V3 ring on a veth",
	};
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN], r[16];
	char n1[16], n2[16];
	unsigned int i, missing = 0;
	int m;

	printf("bench srq: nvx shared striding RX buffers against ");
	printf("a pool per queue with a frame per buffer, and AF_PACKET\n");
	printf("NIC %s (nvxsim, peer %s), veth %s and %s, pool memory on node %u\n",
	       b->nic, b->peer, b->veth[0], b->veth[1], b->node);

	printf("\n(a) buffer memory that takes a burst of %u frames of %u B ",
	       NVX_SB_BURST, NVX_SB_SMALL);
	printf("on one flow (so one queue) without a drop\n");
	printf("    shared: one pool, %u KiB buffers, %u B strides; ",
	       NVX_SRQ_DEF_BUF_SIZE / 1024, NVX_SRQ_DEF_STRIDE);
	printf("per queue: a pool per queue, a frame per %u B buffer\n",
	       NVX_SB_BASE_BUF);
	printf("%6s %12s %14s %12s %14s %10s\n", "queues", "shared bufs",
	       "shared memory", "per-q bufs", "per-q memory", "per-q/shr");
	for (i = 0; i < NVX_SB_NR_Q; i++) {
		const struct nvx_sb_burst *row = &b->burst[i];

		snprintf(n1, sizeof(n1), "%u", row->nr_bufs[NVX_SB_SHARED]);
		snprintf(n2, sizeof(n2), "%u", row->nr_bufs[NVX_SB_PER_QUEUE]);
		nvx_fmt_bytes(h1, sizeof(h1), row->bytes[NVX_SB_SHARED]);
		nvx_fmt_bytes(h2, sizeof(h2), row->bytes[NVX_SB_PER_QUEUE]);
		if (!row->found[NVX_SB_SHARED]) {
			snprintf(n1, sizeof(n1), "n/a");
			snprintf(h1, sizeof(h1), "n/a");
			missing++;
		}
		if (!row->found[NVX_SB_PER_QUEUE]) {
			snprintf(n2, sizeof(n2), "n/a");
			snprintf(h2, sizeof(h2), "n/a");
			missing++;
		}
		printf("%6u %12s %14s %12s %14s %10s\n", row->queues, n1, h1,
		       n2, h2, nvx_sb_fmt_ratio(r, sizeof(r),
						nvx_sb_burst_ratio(row)));
	}
	if (missing) {
		printf("n/a: even the largest set tried dropped frames ");
		printf("(shared: %u buffers, a buffer per frame; ",
		       NVX_SB_BURST);
		printf("per queue: %u buffers in all, NVX_SRQ_MAX_BUFS)\n",
		       NVX_SRQ_MAX_BUFS);
	}

	printf("\n(b) buffer memory a frame consumes: %u frames of one flow, ",
	       NVX_SB_FRAMES);
	printf("strides consumed (fillers included) x stride size / frames\n");
	printf("%8s %16s %16s %10s\n", "frame", "shared, strided",
	       "a frame per buf", "ratio");
	for (i = 0; i < NVX_SB_NR_LENS; i++) {
		const struct nvx_sb_frame *row = &b->frame[i];

		printf("%6u B %14.1f B %14.1f B %10s\n", row->len,
		       row->per_frame[NVX_SB_SHARED],
		       row->per_frame[NVX_SB_PER_QUEUE],
		       nvx_sb_fmt_ratio(r, sizeof(r),
					nvx_sb_ratio(row->per_frame[NVX_SB_PER_QUEUE],
						     row->per_frame[NVX_SB_SHARED])));
	}

	printf("\n(c) %u B frames into one instance for %.1f s per method: ",
	       NVX_SB_SMALL, (double)b->duration_ns / NVX_NSEC_PER_SEC);
	printf("a sending thread (sendmmsg, %u frames a call, %u flows) ",
	       NVX_SEND_BATCH, NVX_SB_RATE_FLOWS);
	printf("and a receiving thread; %s of buffers for each\n",
	       nvx_fmt_bytes(h1, sizeof(h1),
			     (uint64_t)NVX_SB_RATE_BUFS * NVX_SRQ_DEF_BUF_SIZE));
	if (b->same_cpu)
		printf("    both threads on CPU %d, the only CPU this process may use\n",
		       b->cpu[0]);
	else
		printf("    receiving thread on CPU %d, sending thread on CPU %d\n",
		       b->cpu[0], b->cpu[1]);
	printf("%-10s %-37s %11s %11s %11s %10s %10s\n", "method",
	       "receiving thread", "sent", "received", "frames/s",
	       "ring drops", "lost");
	for (m = 0; m < NVX_SB_METHODS; m++) {
		const struct nvx_sb_rate *rt = &b->rate[m];

		printf("%-10s %-37s %11llu %11llu %11.0f %10llu %10llu\n",
		       nvx_sb_method_names[m], receivers[m],
		       (unsigned long long)rt->sent,
		       (unsigned long long)rt->received, rt->pps,
		       (unsigned long long)rt->ring_drops,
		       (unsigned long long)(rt->sent > rt->received ?
					    rt->sent - rt->received : 0));
	}
	printf("nvx/af_packet: %s (frames received per second)\n",
	       nvx_sb_fmt_ratio(r, sizeof(r),
				nvx_sb_ratio(b->rate[NVX_SB_NVX].pps,
					     b->rate[NVX_SB_PACKET].pps)));

	printf("\nheadline: per-queue/shared buffer memory at %u queues: %s (goal >= %u)\n",
	       NVX_SB_HEADLINE_Q,
	       nvx_sb_fmt_ratio(r, sizeof(r), nvx_sb_headline(b)),
	       NVX_SB_GOAL);
	printf("note: frame rates are from this machine; ");
	printf("under QEMU TCG they are not hardware numbers: compare the ratios\n");
}

static int cmd_bench_srq(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { .duration = NVX_SB_DURATION };
	struct sigaction sa = { .sa_handler = nvx_srq_handler };
	struct sigaction old_int, old_term;
	struct nvx_features f = { 0 };
	struct nvx_pool_stats ps;
	struct nvx_sb b;
	int ret, ncpus, unlinked, given;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_bench_opts, &a);
	if (ret)
		return ret;
	ret = nvx_ioctl(ctx, NVX_IOC_FEATURES, &f, "NVX_IOC_FEATURES");
	if (ret)
		return ret;
	if (!(f.features & NVX_FEAT_SRQ)) {
		nvx_err("%s: the running kernel has no shared RX queues (nvxtool features: srq no; CONFIG_NVX_SRQ)",
			ctx->path);
		return NVX_EXIT_FAIL;
	}

	memset(&b, 0, sizeof(b));
	b.ctx = ctx;
	b.duration_ns = a.duration * NVX_NSEC_PER_SEC;
	b.node = nvx_srq_cpu_node();
	if (nvx_pool_stats_get(ctx, b.node, &ps) == -EINVAL)
		b.node = 0;
	ncpus = nvx_two_cpus(b.cpu);
	if (ncpus < 0) {
		nvx_err("%s: which CPUs may this process use? %s", ctx->path,
			strerror(-ncpus));
		return NVX_EXIT_FAIL;
	}
	b.same_cpu = ncpus < 2;

	/* stop at the next step on SIGINT or SIGTERM, and clean up */
	atomic_store(&nvx_srq_signal, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	ret = nvx_sb_body(&b);

	/* every set is closed: the links and the pool go back as they were */
	unlinked = nvx_sb_unlink(&b);
	given = nvx_sb_give_back(&b);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (nvx_sb_stopped()) {
		nvx_err("%s: interrupted (%s)", ctx->path,
			strsignal(atomic_load(&nvx_srq_signal)));
		return NVX_EXIT_FAIL;
	}
	if (ret)
		return ret;
	if (ctx->json)
		nvx_sb_print_json(&b);
	else
		nvx_sb_print_text(&b);
	return unlinked ? unlinked : given;
}

/* ------------------------------------------------------- command table */

const struct nvx_cmd nvx_srq_cmds[] = {
	{
		.name = "create",
		.summary = "make a set on an nvxsim NIC; receive, release, hold",
		.usage = "--dev NAME [--queues N] [--bufs N] [--buf-size S] [--stride S]\n"
			 "       [--per-queue] [--poison] [--recv N] [--hold SECONDS] [--json]\n"
			 "\n"
			 "Take a grant of the set's buffers from the pool (NVX_IOC_GRANT: N x\n"
			 "S, rounded up to whole chunks; nothing grows the pool, see\n"
			 "nvxtool pool grow), make a set on the nvxsim NIC NAME with it\n"
			 "(NVX_IOC_SRQ_CREATE), map its rings and buffers, and print its\n"
			 "parameters, defaults filled in by the kernel, and its mmap()\n"
			 "layout. The set goes away when nvxtool exits.\n"
			 "\n"
			 "  --dev NAME        the NIC (ip link add NAME type nvxsim)\n"
			 "  --queues N        receive queues, 1 to 64 (default 1)\n"
			 "  --bufs N          buffers in the pool (default 128)\n"
			 "  --buf-size S      bytes per buffer, a power of two from 2K to\n"
			 "                    2M (default 16K)\n"
			 "  --stride S        bytes per stride, a power of two from 64 to\n"
			 "                    the buffer size, at most 1024 strides per\n"
			 "                    buffer (default 256); S = --buf-size: one\n"
			 "                    frame per buffer\n"
			 "  --per-queue       NVX_SRQ_PER_QUEUE: the buffers split evenly\n"
			 "                    over the queues (a multiple of N queues)\n"
			 "  --poison          NVX_SRQ_POISON: returned buffers are filled\n"
			 "                    with 0x6b\n"
			 "  --recv N          receive N frames, polling the completion\n"
			 "                    rings: one line per completion (queue, buf,\n"
			 "                    stride, strides, len, flags), each frame\n"
			 "                    released; fails after 10 s without one\n"
			 "  --hold SECONDS    then keep the set that long, e.g. for srq\n"
			 "                    show and srq stats from another shell; SIGINT\n"
			 "                    or SIGTERM ends it early\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"grant_bytes\", \"params\" (the fields of\n"
			 "struct nvx_srq_params, \"flags\" as hex, plus \"per_queue\" and\n"
			 "\"poison\"), \"layout\" (the fields of struct nvx_srq_layout),\n"
			 "\"recv\" (null without --recv; \"frames\", \"bytes\", \"fillers\",\n"
			 "\"truncated\", \"bad\", \"release_garbage\", \"ns\", \"per_queue\")\n"
			 "and \"hold_s\". Printed before the hold.\n",
		.fn = cmd_srq_create,
	},
	{
		.name = "show",
		.summary = "show the set attached to a NIC and its owner",
		.usage = "--dev NAME [--json]\n"
			 "\n"
			 "Show the parameters of the set attached to NAME and the process\n"
			 "that made it (NVX_IOC_SRQ_INFO). Exits 1 when no set is attached.\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"owner\" (a pid, null when not visible\n"
			 "in this pid namespace), \"owner_comm\", \"params\" (as for srq\n"
			 "create).\n",
		.fn = cmd_srq_show,
	},
	{
		.name = "stats",
		.summary = "show the counters of the set attached to a NIC",
		.usage = "--dev NAME [--queue N] [--json]\n"
			 "\n"
			 "Show the counters of the set attached to NAME (NVX_IOC_SRQ_QUERY):\n"
			 "the receive counters of all queues together and of each queue\n"
			 "(frames, bytes, strides consumed, fillers, truncated frames,\n"
			 "drops for want of a buffer or of room in the completion ring),\n"
			 "then the set's own: refills, buffers returned, release entries\n"
			 "taken and ignored, frames sent, and the buffers posted, filling\n"
			 "and held now. Exits 1 when no set is attached.\n"
			 "\n"
			 "  --queue N  of the queues, show only queue N\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"nr_queues\", \"all\" and \"queues\" (with\n"
			 "\"queue\") with the per-queue fields of struct nvx_srq_stats, and\n"
			 "\"set\" with the others.\n",
		.fn = cmd_srq_stats,
	},
	{
		.name = "send",
		.summary = "send IPv4/UDP frames out of a netdev (AF_PACKET)",
		.usage = "--dev PEER [--count N] [--size BYTES] [--flows N] [--json]\n"
			 "\n"
			 "Send N frames of BYTES out of the netdev PEER through an AF_PACKET\n"
			 "socket, 64 per sendmmsg(): Ethernet, IPv4 192.0.2.1 to 192.0.2.2,\n"
			 "UDP to port 9 from port 1024 + the frame's flow, then its number.\n"
			 "Frames go round the flows in turn; one flow lands on one queue.\n"
			 "They are addressed to NAME when PEER is the peer NAMEp of an\n"
			 "nvxsim NIC NAME, else to the broadcast address. Needs CAP_NET_RAW.\n"
			 "\n"
			 "  --dev PEER     the netdev, e.g. NAMEp to reach the NIC NAME\n"
			 "  --count N      frames to send (default 1)\n"
			 "  --size BYTES   bytes per frame, 42 to 9216 (default 64); at\n"
			 "                 most PEER's MTU + 14\n"
			 "  --flows N      UDP source ports to go round, 1 to 4096\n"
			 "                 (default 1)\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"count\", \"size\", \"flows\", \"sent\",\n"
			 "\"ns\", \"frames_per_s\".\n",
		.fn = cmd_srq_send,
	},
	{ }
};

/* Subcommands of "bench" (nvxtool.c lists them after bench.c's). */
const struct nvx_cmd nvx_srq_bench_cmds[] = {
	{
		.name = "srq",
		.summary = "measure nvx shared RX buffers against per-queue buffers and AF_PACKET",
		.usage = "[--duration SECONDS] [--json]\n"
			 "\n"
			 "Makes its own nvxsim NIC and veth pair (deleted at the end), grows\n"
			 "the pool by what it lacks for its largest set (128 MiB) and gives\n"
			 "that back at the end. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).\n"
			 "\n"
			 "(a) The buffer memory that takes a burst of 4096 frames of 64 B\n"
			 "on one flow, so on one queue, without a drop, for 1, 2, 4, 8 and\n"
			 "16 queues: shared (the defaults: one pool of 16 KiB buffers,\n"
			 "256 B strides) against a pool per queue with a frame per 2 KiB\n"
			 "buffer (NVX_SRQ_PER_QUEUE, stride = buffer = 2 KiB). Each is the\n"
			 "fewest buffers with which a fresh set, sent the burst without a\n"
			 "release, drops nothing (drops_no_buf), found by trying sets.\n"
			 "\n"
			 "(b) The buffer memory a frame consumes, for frames of 64, 256\n"
			 "and 1500 B: 2048 frames into a set with room, then rx_strides x\n"
			 "stride size / rx_packets (fillers included), both shapes.\n"
			 "\n"
			 "(c) Frames per second into one instance: a thread sends 64 B\n"
			 "frames on 64 flows (sendmmsg, 64 a call) for SECONDS while this\n"
			 "thread receives: from a shared set of 4 queues and 4 MiB, polling\n"
			 "the completion rings, reading each frame, giving the strides back\n"
			 "and calling NVX_SRQ_IOC_RELEASE after every pass; and from an\n"
			 "AF_PACKET TPACKET_V3 ring of the same 4 MiB on a veth, polling\n"
			 "its blocks. Frames received per second, the ratio, the ring's\n"
			 "drops and the frames lost.\n"
			 "\n"
			 "  --duration SECONDS  sending time per method in (c), 1 to 60\n"
			 "                      (default 2)\n"
			 "\n"
			 "Frame rates are from this machine; under QEMU TCG they are not\n"
			 "hardware numbers: compare the ratios. The headline is the memory\n"
			 "per queue over the shared memory of (a) at 8 queues (goal >= 32).\n"
			 "JSON: \"cpus\", \"same_cpu\", \"node\", \"burst\" (\"frames\",\n"
			 "\"frame_bytes\", \"rows\": \"queues\", \"shared\" and \"per_queue\"\n"
			 "with \"buf_size\", \"stride_size\", \"nr_bufs\" and \"bytes\" (null\n"
			 "when even \"searched_up_to\" buffers dropped frames), \"trials\";\n"
			 "\"ratio\"), \"per_frame\" (\"frames\", \"rows\": \"frame_bytes\",\n"
			 "\"shared\" and \"per_queue\" with \"bytes_per_frame\",\n"
			 "\"stride_size\", \"rx_packets\", \"rx_strides\", \"fillers\";\n"
			 "\"ratio\"), \"rate\" (\"duration_ns\", \"frame_bytes\", \"batch\",\n"
			 "\"flows\", \"buffer_bytes\", \"nvx\" and \"af_packet\" with \"sent\",\n"
			 "\"received\", \"ns\", \"pps\", \"ring_drops\", \"lost\",\n"
			 "\"send_retries\"; \"ratio\"), \"headline\", \"headline_queues\",\n"
			 "\"goal\".\n",
		.fn = cmd_bench_srq,
	},
	{ }
};
