/* SPDX-License-Identifier: MIT */
/*
 * fs.h: the library's one way to read and write /proc and /sys files, every path under a
 * root prefix ("" by default; tests point it at fixture trees).
 */
#ifndef PUNCTUAL_FS_H
#define PUNCTUAL_FS_H

#include <stddef.h>

/* The root prefix of every /proc and /sys access ("" by default; tests point it at
 * fixtures). NULL resets. Not thread-safe: set it before the reads it is meant for. */
const char *pn__fs_root(void);
void pn__fs_set_root(const char *root);

/* root + path (+ "/" + file) into buf: 0 or -ENAMETOOLONG. */
int pn__fs_path(char *buf, size_t n, const char *root, const char *path, const char *file);

enum {
	PN__FS_ONCE = 1,  /* stop after a short read: right for kernfs attributes and regular
	                   * files, wrong for seq_files (mountinfo) */
	PN__FS_WHOLE = 2, /* -EIO when the file fills the buffer */
};

/* Reads at most n-1 bytes into buf, NUL-terminated: the count or -errno. */
int pn__fs_read(const char *root, const char *path, const char *file, char *buf, size_t n,
                int flags);

int pn__fs_read_file(const char *path, char *buf, size_t n);

int pn__fs_read_at(const char *root, const char *path, char *buf, size_t n);

/* Writes len bytes to an existing file in one write(2): 0, -EIO for a short write, or
 * -errno. */
int pn__fs_write_file(const char *path, const char *val, size_t len);

#endif
