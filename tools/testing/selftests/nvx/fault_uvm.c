// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": user VMs' calls, every allocation and
 * user copy failed in turn (include/fault_util.h).
 *
 * ENDPOINT, ATTACH (fast and slow path), the endpoint's RECV (a request
 * and a notice) and REPLY (with PULL data): after each failure, no fd,
 * the endpoint's queues and VMs as before. REPLY with PULL data into a
 * clone, whose copy of the page cannot be made: that VM stopped
 * (NVX_UVM_ERR_MEMORY), nobody else hurt. SET_POLICY of a VM: its
 * policy as before. The calls that only report (the endpoint's STATS
 * and GET_POLICY, the channel's STATUS): the argument as it was, and a
 * success gives what an unfaulted call gives. NOTIFY: no vector held.
 */
#include "uvm_fixture.h"
#include "uintr_util.h"
#include "fault_fixture.h"

FIXTURE(fault_uvm) {
	struct env e;
	bool set;
};

FIXTURE_SETUP(fault_uvm)
{
	int ret;

	env_setup(_metadata, &self->e, false);
	if (_metadata->exit_code != KSFT_PASS)	/* skipped or failed */
		return;
	ret = fault_arm_setup();
	if (ret == -ENOENT)
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, ret);
	self->set = true;
}

FIXTURE_TEARDOWN(fault_uvm)
{
	if (self->set)
		fault_arm_restore();
	env_teardown(_metadata, &self->e);
}

/* The endpoint's queues as @want says, or -1 with @why. */
static int ep_is(int ep, const struct nvx_uvm_ep_stats *want, char *why,
		 size_t len)
{
	struct nvx_uvm_ep_stats st;

	if (ep_stats(ep, &st)) {
		snprintf(why, len, "STATS failed");
		return -1;
	}
	if (st.nr_vms != want->nr_vms || st.queued != want->queued ||
	    st.taken != want->taken || st.gone != want->gone) {
		snprintf(why, len,
			 "endpoint: %u VMs %u queued %u taken %u gone, want %u %u %u %u",
			 st.nr_vms, st.queued, st.taken, st.gone,
			 want->nr_vms, want->queued, want->taken, want->gone);
		return -1;
	}
	return 0;
}

struct ep_call {
	int fd;
	struct nvx_uvm_endpoint ep;
};

static int do_endpoint(void *arg)
{
	struct ep_call *ec = arg;

	ec->ep = (struct nvx_uvm_endpoint){ .flags = NVX_UVM_EP_CLOEXEC };
	return nvx_ioctl(ec->fd, NVX_IOC_UVM_ENDPOINT, &ec->ep);
}

static void undo_endpoint(void *arg)
{
	close(((struct ep_call *)arg)->ep.fd);
}

TEST_F_TIMEOUT(fault_uvm, endpoint, 300)
{
	struct ep_call ec = { .fd = self->e.fd };
	struct fault_call c = {
		.what = "UVM_ENDPOINT", .call = do_endpoint,
		.undo = undo_endpoint, .arg = &ec,
	};

	fault_sweep(_metadata, &c, false);
}

struct attach_call {
	struct env *e;
	struct bare *b;
	uint32_t flags;
};

static int do_attach(void *arg)
{
	struct attach_call *ac = arg;

	return bare_attach(ac->e, ac->b, ac->e->ep, ac->flags);
}

/* Detach, and take the notice: the endpoint as before. */
static void undo_attach(void *arg)
{
	struct attach_call *ac = arg;
	struct nvx_uvm_recv r;

	close(ac->b->chan_fd);
	ac->b->chan_fd = -1;
	recv_gone(ac->e->ep, ac->b->vm_id, NVX_UVM_DETACHED, &r);
}

/* A failed ATTACH leaves no VM and no notice. */
static int check_attach(void *arg, char *why, size_t len)
{
	struct attach_call *ac = arg;
	struct nvx_uvm_ep_stats want = { };

	return ep_is(ac->e->ep, &want, why, len);
}

static void fault_attach(struct __test_metadata *_metadata, struct env *e,
			 uint32_t flags, const char *what)
{
	struct attach_call ac = { .e = e, .flags = flags };
	struct fault_call c = {
		.what = what, .call = do_attach, .undo = undo_attach,
		.check = check_attach, .arg = &ac,
	};

	ASSERT_EQ(0, bare_new(e, &ac.b));
	fault_sweep(_metadata, &c, false);
	/* and the VM can still be attached */
	ASSERT_EQ(0, bare_attach(e, ac.b, e->ep, flags));
	undo_attach(&ac);
	check_ep_idle(_metadata, e->ep);
}

TEST_F_TIMEOUT(fault_uvm, attach_fast, 300)
{
	fault_attach(_metadata, &self->e, 0, "UVM_ATTACH");
}

TEST_F_TIMEOUT(fault_uvm, attach_slow, 300)
{
	fault_attach(_metadata, &self->e, NVX_UVM_ATTACH_SLOW,
		     "UVM_ATTACH slow path");
}

#define SG_GPA	0x100000ULL
#define DATA_GPA	0x200000ULL

struct msg_call {
	struct env *e;
	struct bare *b;
	bool push, pull;
	struct nvx_uvm_recv r;
	unsigned char buf[300], pat[300];
	struct nvx_uvm_ep_stats want;	/* after a failure */
};

/* The bare VM posts one request: PUSH 300 bytes, or PULL into 300. */
static int post_one(struct msg_call *mc)
{
	struct nvx_uvm_sg *sg = (struct nvx_uvm_sg *)(mc->b->mem + SG_GPA);
	struct nvx_uvm_msg m;

	sg[0] = (struct nvx_uvm_sg){ .gpa = DATA_GPA, .len = 300 };
	msg_init(&m, NVX_UVM_MSG_IPC, 7);
	if (mc->push || mc->pull) {
		m.type = mc->push ? NVX_UVM_MSG_WRITE : NVX_UVM_MSG_READ;
		m.flags = mc->push ? NVX_UVM_MSGF_PUSH : NVX_UVM_MSGF_PULL;
		m.sg_gpa = SG_GPA;
		m.sg_nr = 1;
	}
	return bare_post(mc->b, &m);
}

/* Answer the request received in mc->r; the VM takes the completion. */
static int answer(struct msg_call *mc)
{
	struct nvx_uvm_reply rep = {
		.cookie = mc->r.cookie, .msg.type = mc->r.msg.type,
	};
	struct nvx_uvm_msg m;
	int ret;

	ret = nvx_ioctl(mc->e->ep, NVX_UVM_EP_IOC_REPLY, &rep);
	return ret ?: bare_complete(mc->b, &m);
}

static int do_recv(void *arg)
{
	struct msg_call *mc = arg;

	memset(&mc->r, 0, sizeof(mc->r));
	mc->r.flags = NVX_UVM_RECV_NONBLOCK;
	mc->r.buf = (uintptr_t)mc->buf;
	mc->r.buf_len = sizeof(mc->buf);
	return nvx_ioctl(mc->e->ep, NVX_UVM_EP_IOC_RECV, &mc->r);
}

/* A request received: answer it and post the next. */
static void undo_recv(void *arg)
{
	struct msg_call *mc = arg;

	if (!answer(mc))
		post_one(mc);
}

/* A failed RECV leaves the request queued, not taken. */
static int check_recv(void *arg, char *why, size_t len)
{
	struct msg_call *mc = arg;

	return ep_is(mc->e->ep, &mc->want, why, len);
}

static void fault_recv(struct __test_metadata *_metadata, struct env *e,
		       bool push, const char *what)
{
	struct msg_call mc = { .e = e, .push = push };
	struct fault_call c = {
		.what = what, .call = do_recv, .undo = undo_recv,
		.check = check_recv, .arg = &mc,
	};

	ASSERT_EQ(0, bare_new(e, &mc.b));
	ASSERT_EQ(0, bare_attach(e, mc.b, e->ep, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, post_one(&mc));
	mc.want = (struct nvx_uvm_ep_stats){ .nr_vms = 1, .queued = 1 };
	fault_sweep(_metadata, &c, false);
	/* the request is still there, once */
	ASSERT_EQ(0, do_recv(&mc));
	EXPECT_EQ(7U, mc.r.msg.tag);
	EXPECT_EQ(0, answer(&mc));
	EXPECT_EQ(-EAGAIN, do_recv(&mc));
}

TEST_F_TIMEOUT(fault_uvm, recv, 300)
{
	fault_recv(_metadata, &self->e, false, "EP_RECV");
}

TEST_F_TIMEOUT(fault_uvm, recv_push, 300)
{
	fault_recv(_metadata, &self->e, true, "EP_RECV with PUSH data");
}

struct gone_call {
	struct env *e;
	struct bare *b;
	struct nvx_uvm_recv r;
};

static int do_recv_gone(void *arg)
{
	struct gone_call *gc = arg;

	return recv_nb(gc->e->ep, &gc->r);
}

/* The notice received: attach and detach again, for the next. */
static void undo_recv_gone(void *arg)
{
	struct gone_call *gc = arg;

	if (!bare_attach(gc->e, gc->b, gc->e->ep, NVX_UVM_ATTACH_SLOW)) {
		close(gc->b->chan_fd);
		gc->b->chan_fd = -1;
	}
}

/* A failed RECV leaves the notice there. */
static int check_recv_gone(void *arg, char *why, size_t len)
{
	struct gone_call *gc = arg;
	struct nvx_uvm_ep_stats want = { .gone = 1 };

	return ep_is(gc->e->ep, &want, why, len);
}

TEST_F_TIMEOUT(fault_uvm, recv_notice, 300)
{
	struct gone_call gc = { .e = &self->e };
	struct fault_call c = {
		.what = "EP_RECV of a VM_GONE notice", .call = do_recv_gone,
		.undo = undo_recv_gone, .check = check_recv_gone, .arg = &gc,
	};

	ASSERT_EQ(0, bare_new(&self->e, &gc.b));
	undo_recv_gone(&gc);
	fault_sweep(_metadata, &c, false);
	EXPECT_EQ(0, recv_gone(self->e.ep, gc.b->vm_id, NVX_UVM_DETACHED,
			       &gc.r));
	check_ep_idle(_metadata, self->e.ep);
}

static int do_reply(void *arg)
{
	struct msg_call *mc = arg;
	struct nvx_uvm_reply rep = {
		.cookie = mc->r.cookie, .msg.type = mc->r.msg.type,
		.buf = (uintptr_t)mc->pat, .buf_len = sizeof(mc->pat),
	};

	return nvx_ioctl(mc->e->ep, NVX_UVM_EP_IOC_REPLY, &rep);
}

/* Answered: the VM takes the completion, posts and we receive again. */
static void undo_reply(void *arg)
{
	struct msg_call *mc = arg;
	struct nvx_uvm_msg m;

	if (!bare_complete(mc->b, &m) && !post_one(mc))
		do_recv(mc);
}

TEST_F_TIMEOUT(fault_uvm, reply_pull, 300)
{
	struct msg_call mc = { .e = &self->e, .pull = true };
	struct fault_call c = {
		.what = "EP_REPLY with PULL data", .call = do_reply,
		.undo = undo_reply, .check = check_recv, .arg = &mc,
	};
	struct nvx_uvm_msg m;

	memset(mc.pat, 0x5a, sizeof(mc.pat));
	ASSERT_EQ(0, bare_new(&self->e, &mc.b));
	ASSERT_EQ(0, bare_attach(&self->e, mc.b, self->e.ep,
				 NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, post_one(&mc));
	ASSERT_EQ(0, do_recv(&mc));
	/* a failed REPLY leaves the request received */
	mc.want = (struct nvx_uvm_ep_stats){ .nr_vms = 1, .taken = 1 };
	fault_sweep(_metadata, &c, false);
	ASSERT_EQ(0, do_reply(&mc));
	ASSERT_EQ(0, bare_complete(mc.b, &m));
	EXPECT_EQ(300U, m.bulk_len);
	EXPECT_EQ(0x5a, mc.b->mem[DATA_GPA + 299]);
}

/*
 * @b's grant made a template (sealed) and @b's memory a copy-on-write
 * clone of it, as a VMM that clones does; the template's fd closed.
 */
static int bare_make_clone(struct bare *b)
{
	struct nvx_grant_clone cl = { .flags = NVX_CLONE_CLOEXEC };
	struct nvx_grant_seal seal = { };
	void *mem;
	int ret;

	munmap(b->mem, b->mem_size);
	b->mem = NULL;
	ret = nvx_ioctl(b->grant_fd, NVX_GRANT_IOC_SEAL, &seal);
	if (!ret)
		ret = nvx_ioctl(b->grant_fd, NVX_GRANT_IOC_CLONE, &cl);
	if (ret)
		return ret;
	close(b->grant_fd);
	b->grant_fd = cl.fd;
	mem = mmap(NULL, b->mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   b->grant_fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	b->mem = mem;
	b->ctrl = (struct nvx_uvm_ctrl *)(b->mem + NVX_UVM_CTRL_GPA);
	b->sq = (struct nvx_uvm_msg *)(b->mem + NVX_UVM_SQ_GPA);
	b->cq = (struct nvx_uvm_msg *)(b->mem + NVX_UVM_CQ_GPA);
	return 0;
}

/* more than REPLY into a clone reaches */
#define CLONE_POINTS	200U

/*
 * REPLY with PULL data into a clone, every allocation and user copy
 * failed in turn: the data's page is still the template's, so the reply
 * makes the clone's copy of it (nvx_grant_page_write()). When that copy
 * cannot be made, the VM is stopped (NVX_UVM_ERR_MEMORY, detail ENOMEM)
 * and REPLY fails with ESRCH; any other failure leaves the request
 * taken, as for a VM of its own memory. A fresh clone per point: a
 * stopped VM stays stopped. Its VM_GONE notice says why it went.
 */
TEST_F_TIMEOUT(fault_uvm, reply_pull_into_clone, 300)
{
	unsigned int n, memfail = 0, other = 0, tolerated = 0;
	struct nvx_uvm_ep_stats want = { .nr_vms = 1, .taken = 1 };
	struct nvx_uvm_status st;
	struct nvx_uvm_recv gone;
	struct nvx_uvm_msg m;
	char buf[32], why[256];
	uint64_t detail;
	uint32_t vm_id;
	bool hit = true;
	ssize_t got;
	int fd, ret;

	fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (n = 1; hit && n < CLONE_POINTS; n++) {
		struct msg_call mc = { .e = &self->e, .pull = true };

		memset(mc.pat, 0x5a, sizeof(mc.pat));
		ASSERT_EQ(0, bare_new(&self->e, &mc.b));
		ASSERT_EQ(0, bare_make_clone(mc.b));
		ASSERT_EQ(0, bare_attach(&self->e, mc.b, self->e.ep,
					 NVX_UVM_ATTACH_SLOW));
		vm_id = mc.b->vm_id;
		ASSERT_EQ(0, post_one(&mc));
		ASSERT_EQ(0, do_recv(&mc));

		snprintf(buf, sizeof(buf), "%u", n);
		ASSERT_LT(0, pwrite(fd, buf, strlen(buf), 0));
		ret = do_reply(&mc);
		got = pread(fd, buf, sizeof(buf) - 1, 0);
		hit = got > 0 && (buf[got] = 0, atoi(buf) == 0);
		/* as fault_run(): a spent point may be the disarm's copy */
		if (pwrite(fd, "0", 1, 0) < 0)
			ASSERT_LT(0, pwrite(fd, "0", 1, 0));

		if (!ret) {
			/* the data is in the clone's copy, not the template's */
			tolerated += hit;
			ASSERT_EQ(0, bare_complete(mc.b, &m)) TH_LOG("point %u", n);
			EXPECT_EQ(300U, m.bulk_len);
			EXPECT_EQ(0x5a, mc.b->mem[DATA_GPA + 299]);
		} else if (ret == -ESRCH) {
			memfail++;
			EXPECT_TRUE(hit) TH_LOG("point %u: ESRCH without a fault",
						n);
			ASSERT_EQ(0, chan_status(mc.b->chan_fd, &st));
			EXPECT_EQ((uint32_t)NVX_UVM_ERR_MEMORY, st.reason)
				TH_LOG("point %u: reason %u", n, st.reason);
			EXPECT_EQ((uint64_t)ENOMEM, st.detail);
			/* nothing was written into it */
			EXPECT_EQ(0, mc.b->mem[DATA_GPA + 299]);
		} else {
			other++;
			EXPECT_TRUE(hit) TH_LOG("point %u: %s without a fault",
						n, strerror(-ret));
			EXPECT_TRUE(ret == -ENOMEM || ret == -EFAULT)
				TH_LOG("point %u: %s", n, strerror(-ret));
			EXPECT_EQ(0, ep_is(self->e.ep, &want, why,
					   sizeof(why))) TH_LOG("%s", why);
			EXPECT_EQ(0, do_reply(&mc)) TH_LOG("point %u", n);
		}
		bare_free(&self->e, mc.b);
		/* gone: the notice says why, and the errno of a failed copy */
		EXPECT_EQ(0, recv_gone(self->e.ep, vm_id, ret == -ESRCH ?
				       NVX_UVM_ERR_MEMORY : NVX_UVM_DETACHED,
				       &gone))
			TH_LOG("point %u: type %u VM %u status %d", n,
			       gone.msg.type, gone.msg.src_vm, gone.msg.status);
		memcpy(&detail, gone.msg.payload, sizeof(detail));
		if (ret == -ESRCH)
			EXPECT_EQ((uint64_t)ENOMEM, detail);
		check_ep_idle(_metadata, self->e.ep);
		if (!ret && !hit)
			break;
	}
	close(fd);
	TH_LOG("%u points: %u stopped the VM, %u failed otherwise, %u tolerated",
	       n - 1, memfail, other, tolerated);
	EXPECT_LT(0U, memfail) TH_LOG("no point made the copy fail");
	EXPECT_LT(n, CLONE_POINTS) TH_LOG("still failing");
}

struct pol_call {
	struct env *e;
	uint32_t vm_id;
	char bad[128];
};

/* The VM's own policy: only IPC, 100 messages a second. */
static int do_set_policy(void *arg)
{
	struct pol_call *pc = arg;
	struct nvx_uvm_policy p = {
		.vm_id = pc->vm_id, .allow = 1ULL << NVX_UVM_MSG_IPC,
		.rate = 100,
	};

	return nvx_ioctl(pc->e->ep, NVX_UVM_EP_IOC_SET_POLICY, &p);
}

/* The VM's policy: 1 its own (@p filled), 0 the endpoint's, or -errno. */
static int vm_policy(struct pol_call *pc, struct nvx_uvm_policy *p)
{
	int ret;

	*p = (struct nvx_uvm_policy){ .vm_id = pc->vm_id };
	ret = nvx_ioctl(pc->e->ep, NVX_UVM_EP_IOC_GET_POLICY, p);
	return ret ?: !!(p->flags & NVX_UVM_POLICY_OWN);
}

static void undo_set_policy(void *arg)
{
	struct pol_call *pc = arg;
	struct nvx_uvm_policy p = {
		.flags = NVX_UVM_POLICY_RESET, .vm_id = pc->vm_id,
	};

	if ((vm_policy(pc, &p) != 1 || p.rate != 100 ||
	     p.allow != 1ULL << NVX_UVM_MSG_IPC) && !pc->bad[0])
		snprintf(pc->bad, sizeof(pc->bad),
			 "a SET_POLICY that succeeded: rate %u allow %#llx",
			 p.rate, (unsigned long long)p.allow);
	p = (struct nvx_uvm_policy){
		.flags = NVX_UVM_POLICY_RESET, .vm_id = pc->vm_id,
	};
	if (nvx_ioctl(pc->e->ep, NVX_UVM_EP_IOC_SET_POLICY, &p) &&
	    !pc->bad[0])
		snprintf(pc->bad, sizeof(pc->bad), "RESET failed");
}

/* No policy of its own: the endpoint's, as before. */
static int check_set_policy(void *arg, char *why, size_t len)
{
	struct pol_call *pc = arg;
	struct nvx_uvm_policy p;
	int ret = vm_policy(pc, &p);

	if (ret) {
		snprintf(why, len, "after a failed SET_POLICY: GET_POLICY %d",
			 ret);
		return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(fault_uvm, set_policy, 300)
{
	struct pol_call pc = { .e = &self->e };
	struct fault_call c = {
		.what = "EP_SET_POLICY of a VM", .call = do_set_policy,
		.undo = undo_set_policy, .check = check_set_policy, .arg = &pc,
	};
	struct nvx_uvm_policy p;
	struct bare *b;

	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, self->e.ep, 0));
	pc.vm_id = b->vm_id;
	fault_sweep(_metadata, &c, false);
	EXPECT_STREQ("", pc.bad);
	ASSERT_EQ(0, do_set_policy(&pc));
	EXPECT_EQ(1, vm_policy(&pc, &p));
	EXPECT_EQ(1ULL << NVX_UVM_MSG_IPC, p.allow);
}

/* STATS, GET_POLICY (endpoint's, a VM's) and STATUS of an idle VM. */
TEST_F_TIMEOUT(fault_uvm, queries, 300)
{
	struct nvx_uvm_ep_stats st = { };
	struct nvx_uvm_policy ep_pol = { }, vm_pol = { };
	struct nvx_uvm_status status = { };
	struct fault_query fq[4] = {
		{ "EP_STATS", self->e.ep, NVX_UVM_EP_IOC_STATS, &st,
		  sizeof(st), true },
		{ "EP_GET_POLICY", self->e.ep, NVX_UVM_EP_IOC_GET_POLICY,
		  &ep_pol, sizeof(ep_pol), true },
		{ "EP_GET_POLICY of a VM", self->e.ep,
		  NVX_UVM_EP_IOC_GET_POLICY, &vm_pol, sizeof(vm_pol), true },
		{ "CHAN_STATUS", -1, NVX_UVM_CHAN_IOC_STATUS, &status,
		  sizeof(status), true },
	};
	struct fault_result res;
	struct bare *b;
	unsigned int i;

	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, self->e.ep, 0));
	vm_pol.vm_id = b->vm_id;
	fq[3].fd = b->chan_fd;
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, fault_run_query(&fq[i], &res));
		EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
		EXPECT_LT(0U, res.points);
	}
}

struct notify_call {
	int ep, vfd;
};

static int do_notify(void *arg)
{
	struct notify_call *nc = arg;
	struct nvx_uvm_notify n = { .vector_fd = nc->vfd };

	return nvx_ioctl(nc->ep, NVX_UVM_EP_IOC_NOTIFY, &n);
}

static void undo_notify(void *arg)
{
	struct notify_call *nc = arg;
	struct nvx_uvm_notify n = { .vector_fd = -1 };

	nvx_ioctl(nc->ep, NVX_UVM_EP_IOC_NOTIFY, &n);
}

/* No vector held: not by the endpoint, not counted by the vector fd. */
static int check_notify(void *arg, char *why, size_t len)
{
	struct notify_call *nc = arg;
	long long set = fdinfo_num(nc->ep, "notify");
	long long held = fdinfo_num(nc->vfd, "kernel_senders");

	if (set || held) {
		snprintf(why, len, "after a failed NOTIFY: notify %lld, kernel_senders %lld",
			 set, held);
		return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(fault_uvm, notify, 300)
{
	struct notify_call nc = { .ep = self->e.ep };
	struct fault_call c = {
		.what = "EP_NOTIFY", .call = do_notify, .undo = undo_notify,
		.check = check_notify, .arg = &nc,
	};

	ASSERT_LE(0, do_register(self->e.fd, NULL, 0, 0));
	ASSERT_LE(0, do_vector(self->e.fd, 3, &nc.vfd));
	fault_sweep(_metadata, &c, false);
	EXPECT_EQ(0, do_notify(&nc));
	EXPECT_EQ(1, fdinfo_num(nc.ep, "notify"));
	EXPECT_EQ(1, fdinfo_num(nc.vfd, "kernel_senders"));
	undo_notify(&nc);
	EXPECT_EQ(0, do_unregister(self->e.fd));
	close(nc.vfd);
}

static int do_poller(void *arg)
{
	struct nvx_uvm_poller p = { .flags = NVX_UVM_POLLER_SQ,
				    .recv_busy_us = 10 };

	return nvx_ioctl(*(int *)arg, NVX_UVM_EP_IOC_POLLER, &p);
}

static void undo_poller(void *arg)
{
	struct nvx_uvm_poller p = { };

	nvx_ioctl(*(int *)arg, NVX_UVM_EP_IOC_POLLER, &p);
}

/* A failed POLLER left no poller and no setting behind. */
static int check_poller(void *arg, char *why, size_t len)
{
	long long poller = fdinfo_num(*(int *)arg, "poller");
	long long busy = fdinfo_num(*(int *)arg, "recv_busy_us");

	if (poller || busy) {
		snprintf(why, len, "after a failed POLLER: poller %lld, recv_busy_us %lld",
			 poller, busy);
		return -1;
	}
	return 0;
}

/* The poller's allocation and thread, failed in turn. */
TEST_F_TIMEOUT(fault_uvm, poller, 300)
{
	int ep = self->e.ep;
	struct fault_call c = {
		.what = "EP_POLLER", .call = do_poller, .undo = undo_poller,
		.check = check_poller, .arg = &ep,
	};

	fault_sweep(_metadata, &c, false);
	EXPECT_EQ(0, do_poller(&ep));
	EXPECT_EQ(1, fdinfo_num(ep, "poller"));
	undo_poller(&ep);
	EXPECT_EQ(0, fdinfo_num(ep, "poller"));
}

TEST_HARNESS_MAIN
