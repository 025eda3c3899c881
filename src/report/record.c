/* SPDX-License-Identifier: MIT */
/*
 * record.c: PUNCTUAL_STATS_FILE's records: a thread's page of the file, mapped shared so
 * that its counts are in the page cache as they change, appended with O_APPEND (whole at
 * the end, never overlapping another process's). Exited threads' pages are reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "report/record.h"

/* The file's bound, whatever a run's processes and threads. */
#define FILE_MAX (64LL << 20)

_Static_assert(sizeof(struct pn__record) <= 4096, "a record fits the smallest page");

static char path[4096];
static int64_t why_above;
static bool refused; /* the file is not one to write (open_file): no records */

void pn__record_setup(const char *file, int64_t above)
{
	path[0] = '\0';
	refused = false;
	if (file && file[0] == '/' && strlen(file) < sizeof(path))
		strcpy(path, file);
	why_above = above;
}

/* The pages exited threads left; one that finds no free slot is unmapped. */
#define SPARE 64
static struct pn__record *spare[SPARE];

static struct pn__record *spare_take(void)
{
	for (int i = 0; i < SPARE; i++) {
		struct pn__record *r = __atomic_exchange_n(&spare[i], NULL, __ATOMIC_ACQUIRE);
		if (r)
			return r;
	}
	return NULL;
}

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p >= 4096 ? (size_t)p : 4096;
}

static off_t append_page(int fd, size_t size)
{
	static const char zeros[4096];
	struct pn__record h = {.magic = PN__RECORD_MAGIC,
	                       .size = (uint32_t)size,
	                       .max = -1,
	                       .why_above = why_above};
	h.pid = (int32_t)getpid();
	struct iovec v[1 + 64] = {{&h, sizeof(h)}};
	int n = 1;
	for (size_t left = size - sizeof(h); left && n < 1 + 64; n++) {
		size_t k = left < sizeof(zeros) ? left : sizeof(zeros);
		v[n] = (struct iovec){(void *)zeros, k};
		left -= k;
	}
	ssize_t w = writev(fd, v, n);
	if (w != (ssize_t)size)
		return -1; /* a short append: the file's end torn */
	off_t end = lseek(fd, 0, SEEK_CUR);
	return end >= (off_t)size ? end - (off_t)size : -1;
}

/* The file, opened to append: a regular file of the euid no one else may write (created
 * 0600), or -1, and the records stop for the process. Another user's file could be cut
 * short under the mapping: SIGBUS. */
static int open_file(void)
{
	int fd = open(path,
	              O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
	              0600);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		__atomic_store_n(&refused, true, __ATOMIC_RELAXED);
		return -1;
	}
	return fd;
}

struct pn__record *pn__record_take(void)
{
	if (!path[0] || __atomic_load_n(&refused, __ATOMIC_RELAXED))
		return NULL;
	struct pn__record *r = spare_take();
	if (r) {
		r->threads++;
		return r;
	}
	int e = errno, fd = open_file();
	if (fd < 0)
		goto out;
	struct stat st;
	size_t size = page_size();
	off_t at = fstat(fd, &st) == 0 && st.st_size < FILE_MAX && (size_t)st.st_size % size == 0
	                   ? append_page(fd, size)
	                   : -1;
	void *m = at >= 0 && at % (off_t)size == 0
	                  ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at)
	                  : MAP_FAILED;
	close(fd);
	if (m != MAP_FAILED) {
		r = m;
		r->threads = 1;
	}
out:
	errno = e;
	return r;
}

void pn__record_give(struct pn__record *r)
{
	if (!r)
		return;
	for (int i = 0; i < SPARE; i++) {
		struct pn__record *none = NULL;
		if (__atomic_compare_exchange_n(&spare[i], &none, r, false, __ATOMIC_RELEASE,
		                                __ATOMIC_RELAXED))
			return;
	}
	munmap(r, r->size);
}

void pn__record_drop(struct pn__record *r)
{
	if (r)
		munmap(r, r->size);
}

void pn__record_forked(void)
{
	for (int i = 0; i < SPARE; i++)
		pn__record_drop(__atomic_exchange_n(&spare[i], NULL, __ATOMIC_RELAXED));
}

/* Plain stores: the counts are the thread's alone while it holds the page, and a reader
 * comes after the process. */
void pn__record_late(struct pn__record *r, int64_t late)
{
	if (!r)
		return;
	late = late > 0 ? late : 0;
	r->late[pn__decay_hist_bucket_of(late)]++;
	r->waits++;
	if (late > r->max)
		r->max = late;
}

void pn__record_event(struct pn__record *r)
{
	if (r)
		r->events++;
}

void pn__record_past(struct pn__record *r)
{
	if (r)
		r->past++;
}

void pn__record_why(struct pn__record *r, int c, int64_t late)
{
	if (!r || c < 0 || c >= PN__WHY_COUNT)
		return;
	r->why_n[c][pn__decay_hist_bucket_of(late > 0 ? late : 0)]++;
	if (late > r->why_max[c])
		r->why_max[c] = late;
}

/* ---- the reader --------------------------------------------------------------------- */

/* The first bucket r's table of causes counts. */
static int why_from(const struct pn__record *r)
{
	if (r->why_above == PN__RECORD_GIVEN)
		return 0;
	if (r->why_above >= 0)
		return pn__decay_hist_bucket_above(r->why_above);
	uint64_t seen = 0, rank = r->waits / 2; /* the median's bucket */
	int b = 0;
	while (b < PN__DECAY_HIST_BUCKETS - 1 && (seen += r->late[b]) <= rank)
		b++;
	int64_t p50 = pn__decay_hist_bucket_hi(b); /* as the thread's own report */
	return pn__decay_hist_bucket_above(r->waits ? 2 * (p50 < r->max ? p50 : r->max) : 0);
}

static void sum_one(const struct pn__record *r, struct pn__records_sum *s, int32_t *pids, int *n)
{
	int from = why_from(r);
	s->threads += r->threads;
	s->waits += r->waits;
	s->events += r->events;
	s->past += r->past;
	if (r->max > s->max)
		s->max = r->max;
	for (int b = 0; b < PN__DECAY_HIST_BUCKETS; b++)
		s->late[b] += r->late[b];
	for (int c = 0; c < PN__WHY_COUNT; c++) {
		if (r->why_max[c] > s->why_max[c])
			s->why_max[c] = r->why_max[c];
		for (int b = from; b < PN__DECAY_HIST_BUCKETS; b++)
			s->why_n[c][b] += r->why_n[c][b];
	}
	int i = 0;
	while (i < *n && pids[i] != r->pid)
		i++;
	if (i == *n && *n < 256)
		pids[(*n)++] = r->pid;
}

int pn__records_sum(int fd, struct pn__records_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->max = -1;
	int32_t pids[256];
	int npids = 0, err = 0;
	struct pn__record r;
	for (off_t at = 0;;) {
		ssize_t got = pread(fd, &r, sizeof(r), at);
		if (got == 0)
			break;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		if ((size_t)got < sizeof(r) || memcmp(r.magic, PN__RECORD_MAGIC, 8) != 0 ||
		    r.size < sizeof(r) || r.size > (1u << 20)) {
			err = -EINVAL;
			break;
		}
		sum_one(&r, s, pids, &npids);
		at += r.size;
	}
	s->procs = (unsigned)npids;
	return err;
}
