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

#include <fcntl.h>
#include <stddef.h>
#include <dirent.h>
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

/* ------------------------------------------------ template files --- */

/* A directory for template files, and @name's path in it. */
struct tdir {
	char dir[32];
	char path[64];
};

static int tdir_make(struct tdir *d)
{
	snprintf(d->dir, sizeof(d->dir), "/tmp/nvx-tmpl-XXXXXX");
	return mkdtemp(d->dir) ? 0 : -errno;
}

static const char *tdir_path(struct tdir *d, const char *name)
{
	snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, name);
	return d->path;
}

/* The entries of @d's directory, "." and ".." aside; -1 on error. */
static int tdir_count(struct tdir *d)
{
	DIR *dir = opendir(d->dir);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return -1;
	while ((de = readdir(dir)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(dir);
	return n;
}

static void tdir_remove(struct tdir *d)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->dir);
	if (system(cmd))
		fprintf(stderr, "# %s failed\n", cmd);
}

/* All of file @path into a malloc()ed buffer; its size in *@n. */
static unsigned char *slurp(const char *path, size_t *n)
{
	unsigned char *buf;
	struct stat st;
	int fd = open(path, O_RDONLY);
	ssize_t k = -1;

	if (fd < 0)
		return NULL;
	buf = fstat(fd, &st) ? NULL : malloc(st.st_size + 1);
	if (buf)
		k = read(fd, buf, st.st_size);
	close(fd);
	if (!buf || k != st.st_size) {
		free(buf);
		return NULL;
	}
	*n = k;
	return buf;
}

static int spill(const char *path, const void *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = write(fd, buf, n);
	close(fd);
	return k == (ssize_t)n ? 0 : -EIO;
}

/*
 * `nvxtool uvm template -o FILE` in one process, clones of FILE in
 * others: 20 clones with all their seeds and ids distinct, a clone with
 * its own arguments after --, --clone-args, and clones whose writes to
 * the prepared page stay theirs (tmpl-check, twice: the file and every
 * template loaded from it unchanged). The file is small: only the
 * pages that are not zero.
 */
UVM_TEST(template_files)
{
	static const char *const want[] = {
		"0", "1", "args", "args", "test", "test",
	};
	char *lines[32], n[8];
	unsigned char *before, *after;
	size_t len0, len1;
	struct tdir d;
	struct stat st;
	int i, nr;

	ASSERT_EQ(0, tdir_make(&d));
	nvxtool(&run, "uvm", "template", "--stats", "-o",
		tdir_path(&d, "seed.nvxt"), "test", "--", "template", "seed",
		NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_EQ(0, (int)run.len[0]) TH_LOG("%s", run.out);
	EXPECT_NE(NULL, strstr(run.err, "4096 KiB of guest RAM"))
		TH_LOG("%s", run.err);
	ASSERT_EQ(0, stat(d.path, &st));
	/* a few dozen pages of 1,024 */
	EXPECT_GT(st.st_size, 4096);
	EXPECT_LT(st.st_size, 512 << 10) TH_LOG("%lld bytes",
						(long long)st.st_size);
	/* the file and nothing else: no temporary file left */
	EXPECT_EQ(1, tdir_count(&d));

	snprintf(n, sizeof(n), "%d", 20);
	nvxtool(&run, "uvm", "run", "--stats", "--template",
		tdir_path(&d, "seed.nvxt"), "--clones", n, NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_EQ(NULL, strstr(run.err, "template: ready"))
		TH_LOG("%s", run.err);
	nr = split_lines(run.out, lines, 32);
	ASSERT_EQ(20, nr);
	for (i = 0; i < nr; i++)
		EXPECT_EQ(64U, strspn(lines[i], "0123456789abcdef"))
			TH_LOG("line %d: %s", i, lines[i]);
	EXPECT_EQ(0, count_dups(lines, nr));

	/* its own arguments: "id" instead of "seed" */
	nvxtool(&run, "uvm", "run", "--template", d.path, "--clones", "5",
		"--", "id", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	nr = split_lines(run.out, lines, 32);
	ASSERT_EQ(5, nr) TH_LOG("%s", run.out);
	for (i = 0; i < nr; i++)
		EXPECT_EQ(strlen(lines[i]), strspn(lines[i], "0123456789"))
			TH_LOG("line %d: %s", i, lines[i]);
	EXPECT_EQ(0, count_dups(lines, nr));

	/* argv[0] is the template's image name */
	nvxtool(&run, "uvm", "run", "--template", d.path, "--clones", "2",
		"--clone-args", "args %i", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	nr = split_lines(run.out, lines, 32);
	ASSERT_EQ((int)ARRAY_SIZE(want), nr) TH_LOG("%s", run.out);
	qsort(lines, nr, sizeof(*lines), cmp_str);
	for (i = 0; i < nr; i++)
		EXPECT_STREQ(want[i], lines[i]);

	nvxtool(&run, "uvm", "template", "-o", tdir_path(&d, "check.nvxt"),
		"test", "--", "template", "tmpl-check", "file", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	before = slurp(d.path, &len0);
	ASSERT_NE(NULL, before);
	for (i = 0; i < 2; i++) {
		nvxtool(&run, "uvm", "run", "--stats", "--template", d.path,
			"--clones", "10", NULL);
		ASSERT_TRUE(WIFEXITED(run.status))
			TH_LOG("%s: %s", run.cmd, run.err);
		EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
		EXPECT_NE(NULL, strstr(run.err, "pages copied"))
			TH_LOG("%s", run.err);
	}
	after = slurp(d.path, &len1);
	ASSERT_NE(NULL, after);
	EXPECT_TRUE(len0 == len1 && !memcmp(before, after, len0));
	free(before);
	free(after);
	tdir_remove(&d);
}

/* `uvm run --template @path`: exit 1 and @msg on stderr. */
static void expect_refused(struct __test_metadata *_metadata,
			   const char *path, const char *msg, const char *what)
{
	nvxtool(&run, "uvm", "run", "--template", path, NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(1, WEXITSTATUS(run.status))
		TH_LOG("%s: %s", what, run.err);
	EXPECT_NE(NULL, strstr(run.err, msg))
		TH_LOG("%s: want '%s' in '%s'", what, msg, run.err);
	EXPECT_EQ(0, (int)run.len[0]) TH_LOG("%s: %s", what, run.out);
}

/* Set @n bytes at @off of @f (a copy of @good, @len bytes) to @v. */
static int patch(const char *f, const unsigned char *good, size_t len,
		 size_t off, const void *v, size_t n)
{
	unsigned char *b = malloc(len);
	int ret;

	if (!b)
		return -ENOMEM;
	memcpy(b, good, len);
	memcpy(b + off, v, n);
	ret = spill(f, b, len);
	free(b);
	return ret;
}

#define HDR_OFF(m)	offsetof(struct nvx_uvm_tmpl_file, m)

/*
 * Bad template files, each refused with what is wrong (exit 1), the
 * pool back where it was (the fixture): missing, empty, not a template,
 * another version, sizes out of range, vCPU state of another size, a
 * name without its NUL, cut short in the header, the state, the
 * indexes or the pages, longer than it says, indexes out of order or
 * past RAM, a page byte changed (the sum). Bad command lines are usage
 * errors (2); a guest that exits before its ready point leaves no file.
 */
UVM_TEST(template_files_refused)
{
	struct nvx_uvm_tmpl_file h;
	unsigned char *good, *longer;
	char name[NVX_UVM_TMPL_NAME];
	uint64_t idx[2], v64;
	size_t len, state = 0, pages;
	uint32_t v32;
	char bad[64];
	struct tdir d;
	int i;

	ASSERT_EQ(0, tdir_make(&d));
	nvxtool(&run, "uvm", "template", "-o", tdir_path(&d, "good.nvxt"),
		"test", "--", "template", "seed", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	good = slurp(d.path, &len);
	ASSERT_NE(NULL, good);
	ASSERT_LE(sizeof(h), len);
	memcpy(&h, good, sizeof(h));
	for (i = 0; i < NVX_UVM_TMPL_NR_STATE; i++)
		state += h.state_size[i];
	ASSERT_LE(2U, h.nr_pages);
	pages = sizeof(h) + state + h.nr_pages * sizeof(uint64_t);
	ASSERT_EQ(len, pages + (size_t)h.nr_pages * NVX_UVM_TMPL_PAGE);
	memcpy(idx, good + sizeof(h) + state, sizeof(idx));

	snprintf(bad, sizeof(bad), "%s", tdir_path(&d, "bad.nvxt"));
	expect_refused(_metadata, tdir_path(&d, "none.nvxt"),
		       "No such file", "missing");
	ASSERT_EQ(0, spill(bad, good, 0));
	expect_refused(_metadata, bad, "truncated (header)", "empty");
	ASSERT_EQ(0, spill(bad, good, 100));
	expect_refused(_metadata, bad, "truncated (header)", "100 bytes");
	ASSERT_EQ(0, patch(bad, good, len, 0, "NVXTMPX", 8));
	expect_refused(_metadata, bad, "not an nvx template file", "magic");
	v32 = 2;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(version), &v32, 4));
	expect_refused(_metadata, bad, "version not supported", "version");
	v32 = sizeof(h) + 8;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(hdr_size), &v32, 4));
	expect_refused(_metadata, bad, "version not supported", "hdr_size");
	v64 = h.mem_size + 1;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(mem_size), &v64, 8));
	expect_refused(_metadata, bad, "guest RAM size", "odd mem_size");
	v64 = 8ULL << 30;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(mem_size), &v64, 8));
	expect_refused(_metadata, bad, "guest RAM size", "8 GiB");
	v32 = h.mem_size / NVX_UVM_TMPL_PAGE + 1;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(nr_pages), &v32, 4));
	expect_refused(_metadata, bad, "pages stored", "nr_pages");
	v32 = 3;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(entries), &v32, 4));
	expect_refused(_metadata, bad, "ring entries", "3 entries");
	v32 = h.state_size[3] - 8;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(state_size[3]), &v32, 4));
	expect_refused(_metadata, bad, "vCPU state sizes", "xsave size");
	memset(name, 'x', sizeof(name));
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(name), name, sizeof(name)));
	expect_refused(_metadata, bad, "name", "name without a NUL");
	ASSERT_EQ(0, spill(bad, good, sizeof(h) + state / 2));
	expect_refused(_metadata, bad, "truncated (vCPU state)", "state");
	ASSERT_EQ(0, spill(bad, good, sizeof(h) + state + 8));
	expect_refused(_metadata, bad, "truncated (page indexes)", "indexes");
	ASSERT_EQ(0, spill(bad, good, len - 100));
	expect_refused(_metadata, bad, "truncated (pages)", "pages");
	longer = malloc(len + 1);
	ASSERT_NE(NULL, longer);
	memcpy(longer, good, len);
	longer[len] = 0;
	ASSERT_EQ(0, spill(bad, longer, len + 1));
	free(longer);
	expect_refused(_metadata, bad, "longer than", "one more byte");
	v64 = idx[1];
	ASSERT_EQ(0, patch(bad, good, len, sizeof(h) + state, &v64, 8));
	expect_refused(_metadata, bad, "out of order", "an index repeated");
	v64 = h.mem_size / NVX_UVM_TMPL_PAGE;
	ASSERT_EQ(0, patch(bad, good, len, pages - 8, &v64, 8));
	expect_refused(_metadata, bad, "past RAM", "an index past RAM");
	ASSERT_EQ(0, patch(bad, good, len, len - 1, "\x5a", 1));
	if (good[len - 1] != 0x5a)
		expect_refused(_metadata, bad, "sum does not match",
			       "a page byte");
	v64 = h.sum ^ 1;
	ASSERT_EQ(0, patch(bad, good, len, HDR_OFF(sum), &v64, 8));
	expect_refused(_metadata, bad, "sum does not match", "the sum");

	/* the good one still works */
	nvxtool(&run, "uvm", "run", "--template", tdir_path(&d, "good.nvxt"),
		NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_EQ(65, (int)run.len[0]) TH_LOG("%s", run.out);

	/* command lines */
	nvxtool(&run, "uvm", "template", "test", "--", "template", NULL);
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("no -o: %s", run.err);
	nvxtool(&run, "uvm", "template", "-o", bad, "--clones", "2", "test",
		NULL);
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("--clones: %s", run.err);
	nvxtool(&run, "uvm", "run", "-o", bad, "test", NULL);
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("run -o: %s", run.err);
	nvxtool(&run, "uvm", "run", "--template", d.path, "--mem", "8M",
		NULL);
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("--mem: %s", run.err);
	nvxtool(&run, "uvm", "run", "--template", d.path, "test", NULL);
	EXPECT_EQ(2, WEXITSTATUS(run.status)) TH_LOG("IMAGE: %s", run.err);

	/* no ready point: 125, no file, no temporary file */
	nvxtool(&run, "uvm", "template", "-o", tdir_path(&d, "no.nvxt"),
		"test", "--", "seed", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(125, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	EXPECT_NE(NULL, strstr(run.err, "before its ready point"))
		TH_LOG("%s", run.err);
	EXPECT_NE(0, access(d.path, F_OK));
	/* good.nvxt and bad.nvxt only: no temporary file */
	EXPECT_EQ(2, tdir_count(&d));
	free(good);
	tdir_remove(&d);
}

TEST_HARNESS_MAIN
