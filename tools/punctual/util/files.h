/* SPDX-License-Identifier: MIT */
/* util/files.h: files besides stdout, written whole, under rules for root in directories
 * others can write. */
#ifndef PUNCTUAL_UTIL_FILES_H
#define PUNCTUAL_UTIL_FILES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

/* Before measuring: exits 2 with one line naming opt unless file_write can write path: a
 * regular file or a new name in a directory we may create files in, or a writable device
 * or FIFO. */
void file_check(const char *opt, const char *path);
/* Before measuring: exits 2 unless dir is the caller's or root's and we may create files
 * in it, or it can be created. */
void dir_check(const char *opt, const char *dir);
/* dir, created (0755 less the umask) if missing, as an O_PATH descriptor; or -errno
 * (-EACCES for a refused owner). */
int dir_open(const char *dir);
/* Writes path whole with render: 0 or -errno (-EACCES for a link or a directory another
 * user owns). */
int file_write(const char *path, int (*render)(FILE *f, const void *arg), const void *arg);
/* file_write relative to the directory descriptor at. */
int file_write_at(int at, const char *path, int (*render)(FILE *f, const void *arg),
                  const void *arg);
/* A file being written: fd is the temporary file's, or the node's written in place. */
struct file_out {
	int dir, fd;
	bool in_place;
	bool has_old; /* a regular file is replaced */
	struct stat old;
	char name[256], tmp[256];
	int temp; /* its slot among the temporaries a signal removes (-1: none) */
};
/* file_write_at for a writer that is not a stream: 0 with o->fd, or -errno. */
int file_open_at(int at, const char *path, struct file_out *o);
/* With err 0, the temporary file is settled, synced and renamed over the name; otherwise
 * removed. Closes o->fd. Returns err, or the -errno that ended it. */
int file_commit(struct file_out *o, int err);
/* file_commit in two steps: file_finish settles (or removes), file_rename renames.
 * file_discard removes a file not renamed. */
int file_finish(struct file_out *o, int err);
int file_rename(struct file_out *o);
void file_discard(struct file_out *o);
/* Files written together, all or nothing: staged under temporary names, then all renamed
 * (a failed rename removes the rest) or all discarded. Zero-initialize; discard frees it. */
struct file_batch {
	struct file_out *o;
	int n, cap;
};
/* file_write_at into b: 0 (staged) or -errno (nothing left of it). */
int file_stage_at(struct file_batch *b, int at, const char *path,
                  int (*render)(FILE *f, const void *arg), const void *arg);
/* file_open_at into b (NULL, *err set: nothing begun); file_stage_end stages or removes it. */
struct file_out *file_stage_open(struct file_batch *b, int at, const char *path, int *err);
int file_stage_end(struct file_batch *b, int err);
int file_batch_commit(struct file_batch *b);
void file_batch_discard(struct file_batch *b);
/* fclose that also reports an earlier failed write: 0 or -errno. */
int file_close(FILE *f);

#endif
