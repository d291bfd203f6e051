// SPDX-License-Identifier: GPL-2.0
/*
 * Templates and clones of user VMs (Documentation/nvx/uvm.rst,
 * "Templates and clones"), through `nvxtool uvm run --clones N`: the
 * guest `test template MODE...` prepares a page, stops at its ready
 * point and is frozen into a template; each clone resumes there with
 * its own VM id, seed, arguments and rings, and copy-on-write RAM.
 *
 * What is checked: identities (100 clones, all seeds and ids distinct),
 * arguments, a clone's writes invisible to the others and to the
 * template, messages and PULL data written into a clone's memory by the
 * kernel, and the refusals (no ready point, messages in flight there).
 * The fixture checks that the pool is back where it was.
 */
#include "uvm_fixture.h"
#include "nvx_util.h"
#include "run_util.h"

#include <sys/stat.h>

#define NR_CLONES	100

static struct run run;

/* Split @out into lines (in place): how many, at most @max in @lines. */
static int split_lines(char *out, char **lines, int max)
{
	int n = 0;
	char *save, *l;

	for (l = strtok_r(out, "\n", &save); l && n < max;
	     l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* How many of @n lines are equal to the one before, once sorted. */
static int count_dups(char **lines, int n)
{
	int i, dups = 0;

	qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 1; i < n; i++)
		dups += !strcmp(lines[i - 1], lines[i]);
	return dups;
}

/*
 * 100 clones of one template: 100 seeds of 64 hex digits, 100 VM ids,
 * none shared. The kernel writes both at ATTACH; the clone's runtime
 * read them again after its ready point.
 */
UVM_TEST(clones_have_their_own_identity)
{
	char n[16], *lines[NR_CLONES + 1];
	int i, nr;

	snprintf(n, sizeof(n), "%d", NR_CLONES);
	nvxtool(&run, "uvm", "run", "--stats", "--clones", n, "test", "--",
		"template", "seed", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	TH_LOG("%s", run.err);
	nr = split_lines(run.out, lines, NR_CLONES + 1);
	ASSERT_EQ(NR_CLONES, nr);
	for (i = 0; i < nr; i++)
		EXPECT_EQ(64U, strspn(lines[i], "0123456789abcdef"))
			TH_LOG("line %d: %s", i, lines[i]);
	EXPECT_EQ(0, count_dups(lines, nr));

	nvxtool(&run, "uvm", "run", "--clones", n, "test", "--", "template",
		"id", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	nr = split_lines(run.out, lines, NR_CLONES + 1);
	ASSERT_EQ(NR_CLONES, nr);
	EXPECT_EQ(0, count_dups(lines, nr));
}

/* --clone-args: each clone runs with its own arguments, %i its index. */
UVM_TEST(clones_have_their_own_arguments)
{
	static const char *const want[] = {
		"0", "1", "2", "args", "args", "args", "test", "test", "test",
		"x", "x", "x",
	};
	char *lines[16];
	int i, nr;

	nvxtool(&run, "uvm", "run", "--clones", "3", "--clone-args",
		"args x %i", "test", "--", "template", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	/* one WRITE per line: lines of the three clones may interleave */
	nr = split_lines(run.out, lines, 16);
	ASSERT_EQ((int)ARRAY_SIZE(want), nr) TH_LOG("%s", run.out);
	qsort(lines, nr, sizeof(*lines), cmp_str);
	for (i = 0; i < nr; i++)
		EXPECT_STREQ(want[i], lines[i]);

	/* a usage error: --clone-args without --clones */
	nvxtool(&run, "uvm", "run", "--clone-args", "seed", "test", NULL);
	ASSERT_TRUE(WIFEXITED(run.status));
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	nvxtool(&run, "uvm", "run", "--clones", "0", "test", NULL);
	ASSERT_TRUE(WIFEXITED(run.status));
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	nvxtool(&run, "uvm", "run", "--clones", "256", "test", NULL);
	ASSERT_TRUE(WIFEXITED(run.status));
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
}

/*
 * 20 clones run at once; each finds the page the template prepared as
 * the template left it, then writes its own id over it (tmpl-check exits
 * 31 or 32 otherwise). A write seen by another clone, or reaching the
 * template, fails the check of a clone that runs after it.
 */
UVM_TEST(clone_writes_stay_private)
{
	nvxtool(&run, "uvm", "run", "--stats", "--clones", "20", "test", "--",
		"template", "tmpl-check", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err, "pages copied")) TH_LOG("%s", run.err);
}

/*
 * The kernel writes into a clone's memory: completions (the CQ, made
 * the clone's own at ATTACH) under 8 pings in flight, and PULL data of
 * READ replies into heap pages the clone never touched (a copy made by
 * the REPLY). cat checks that its buffer is zero before it reads (exit
 * 34 otherwise): a REPLY that wrote the template's page would show in
 * the clones that start after it.
 */
UVM_TEST(kernel_writes_into_clones)
{
	char root[] = "/tmp/nvx-clone-XXXXXX", path[64];
	const char *p;
	int fd, i, n = 0;

	nvxtool(&run, "uvm", "run", "--clones", "4", "test", "--", "template",
		"ping", "500", "8", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);

	ASSERT_NE(NULL, mkdtemp(root));
	snprintf(path, sizeof(path), "%s/f", root);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(12, write(fd, "clone data.\n", 12));
	close(fd);
	nvxtool(&run, "uvm", "run", "--root", root, "--clones", "4", "test",
		"--", "template", "cat", "f", NULL);
	unlink(path);
	rmdir(root);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_EQ(4 * 12000, (int)run.len[0]);
	for (p = run.out; (p = strstr(p, "clone data.\n")); p += 12)
		n++;
	EXPECT_EQ(4000, n);
}

/*
 * Refused: a guest that exits without a ready point; a guest whose
 * ready point comes with a message in flight (the runtime answers
 * -EBUSY itself and goes on, so the template is never made; the
 * template-busy mode without --clones checks that -EBUSY); a guest that
 * writes the ready port itself with a message in flight (the VMM
 * refuses: EBUSY); a guest stopped before its ready point (serve-crash:
 * a read of stdin, then a write to an unknown port).
 */
UVM_TEST(template_refused)
{
	nvxtool(&run, "uvm", "run", "--clones", "2", "test", "--", "seed",
		NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(125, WEXITSTATUS(run.status))	/* stopped */
		TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err, "before its ready point"))
		TH_LOG("%s", run.err);

	nvxtool(&run, "uvm", "run", "test", "--", "template-busy", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);

	nvxtool(&run, "uvm", "run", "--clones", "1", "test", "--",
		"template-busy", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(125, WEXITSTATUS(run.status))	/* stopped */
		TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err, "exited with status 0 before"))
		TH_LOG("%s", run.err);

	nvxtool(&run, "uvm", "run", "--clones", "1", "test", "--",
		"template-raw-busy", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(125, WEXITSTATUS(run.status))	/* stopped */
		TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err, "messages in flight"))
		TH_LOG("%s", run.err);

	nvxtool(&run, "uvm", "run", "--clones", "1", "test", "--",
		"serve-crash", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(125, WEXITSTATUS(run.status))	/* stopped */
		TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err,
			       "stopped before its ready point: bad-port"))
		TH_LOG("%s", run.err);
}

TEST_HARNESS_MAIN
