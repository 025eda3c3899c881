/* SPDX-License-Identifier: MIT */
/* util/files.h: files besides stdout (files.c): written whole, under rules for root in
 * directories others can write. */
#ifndef PUNCTUAL_UTIL_FILES_H
#define PUNCTUAL_UTIL_FILES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

/* The rules, for root in directories others can write: a symbolic link (in the path or
 * its last name) is followed only when it is the caller's or root's, and the directory
 * that receives a file must be the caller's or root's. A regular file or a new name is
 * replaced through a new temporary file beside it and a rename (keeping the old file's
 * permission bits, and owner and group where we may; a new name gets 0644 whatever the
 * umask); anything else (a device, a FIFO) is written in place, never replaced; a link
 * followed stays a link. */
/* Before measuring: exits 2 with one line naming opt unless file_write can write path
 * under those rules: a regular file or a new name in a directory we may create files
 * in, or a writable device or FIFO; a directory or a link to nothing is refused. */
void file_check(const char *opt, const char *path);
/* Before measuring: exits 2 with one line naming opt unless dir is a directory of the
 * caller's or root's that we may create files in, or can be created (its parent is). */
void dir_check(const char *opt, const char *dir);
/* dir, created (0755, less the umask) if missing, as an O_PATH descriptor for
 * file_write_at, under dir_check's rules; or -errno (-EACCES for a refused owner). */
int dir_open(const char *dir);
/* Writes path with render (0 or -errno) under the rules above: 0 or -errno (-EACCES for
 * a link or a directory another user owns). */
int file_write(const char *path, int (*render)(FILE *f, const void *arg), const void *arg);
/* file_write, path relative to the directory descriptor at (or AT_FDCWD). */
int file_write_at(int at, const char *path, int (*render)(FILE *f, const void *arg),
                  const void *arg);
/* A file being written: fd is the temporary file's, or the node's written in place. */
struct file_out {
	int dir, fd;
	bool in_place;
	bool has_old; /* a regular file is replaced: old is its status */
	struct stat old;
	char name[256], tmp[256];
	int temp; /* its slot among the temporaries a signal removes (-1: none) */
};
/* Opens path (relative to at) for writing under the rules above, for a writer that is
 * not a stream (a child process): 0 with o->fd to write to, or -errno. */
int file_open_at(int at, const char *path, struct file_out *o);
/* Ends what file_open_at began: with err 0, the temporary file gets its owner and mode,
 * reaches the disk and is renamed over the name; otherwise it is removed. Closes o->fd.
 * Returns err, or the -errno that ended it. */
int file_commit(struct file_out *o, int err);
/* file_commit in two steps: file_finish settles the temporary file (err 0; else removes it:
 * then err, or the -errno that ended it), file_rename puts it over the name (0 or -errno).
 * file_discard removes a file begun or finished but not renamed. */
int file_finish(struct file_out *o, int err);
int file_rename(struct file_out *o);
void file_discard(struct file_out *o);
/* Files written together, all or nothing: each is staged under its temporary name, and
 * file_batch_commit renames them all once every one was written (a rename that fails
 * removes the rest), or file_batch_discard removes them all. Zero-initialize; discard
 * frees it. */
struct file_batch {
	struct file_out *o;
	int n, cap;
};
/* file_write_at into b: 0 (staged) or -errno (nothing left of it). */
int file_stage_at(struct file_batch *b, int at, const char *path,
                  int (*render)(FILE *f, const void *arg), const void *arg);
/* file_open_at into b, for a writer that is not a stream: the file to write (NULL, *err set:
 * nothing begun); end it with file_stage_end(b, err), which stages it (0) or removes it. */
struct file_out *file_stage_open(struct file_batch *b, int at, const char *path, int *err);
int file_stage_end(struct file_batch *b, int err);
int file_batch_commit(struct file_batch *b);
void file_batch_discard(struct file_batch *b);
/* fclose that also reports an earlier failed write (ferror): 0 or -errno. */
int file_close(FILE *f);

#endif
