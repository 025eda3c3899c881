/* SPDX-License-Identifier: MIT */
/*
 * fs.h: the library's one way to read and write /proc and /sys files, every path under a
 * root prefix ("" by default; tests point it at fixture trees).
 */
#ifndef PUNCTUAL_FS_H
#define PUNCTUAL_FS_H

#include <stddef.h>

/* The root prefix for every /proc and /sys access. pn__fs_set_root copies at most PATH_MAX
 * bytes; NULL resets. Not thread-safe: set it before the reads it is meant for. */
const char *pn__fs_root(void);
void pn__fs_set_root(const char *root);

/* root + path, or root + path + "/" + file when file is not NULL, into buf. Returns 0 or
 * -ENAMETOOLONG. */
int pn__fs_path(char *buf, size_t n, const char *root, const char *path, const char *file);

enum {
	PN__FS_ONCE = 1,  /* stop after a short read: right for kernfs attribute files (the
	                   * kernel formats them whole at the first read) and regular files,
	                   * wrong for seq_files that hand out a page at a time (mountinfo) */
	PN__FS_WHOLE = 2, /* -EIO when the file fills the buffer (longer than any the kernel
	                   * writes there); without it, the start of the file */
};

/* Reads at most n-1 bytes of root + path (+ "/" + file) into buf, NUL-terminated. Returns
 * the byte count or -errno. */
int pn__fs_read(const char *root, const char *path, const char *file, char *buf, size_t n,
                int flags);

/* pn__fs_read(pn__fs_root(), path, NULL, buf, n, 0). */
int pn__fs_read_file(const char *path, char *buf, size_t n);

/* pn__fs_read(root, path, NULL, buf, n, PN__FS_WHOLE). */
int pn__fs_read_at(const char *root, const char *path, char *buf, size_t n);

/* Writes len bytes to pn__fs_root() + path, which must exist (never created, even under a
 * fixture root), in one write(2). Returns 0, -EIO for a short write, or -errno. */
int pn__fs_write_file(const char *path, const char *val, size_t len);

#endif
