/*
 * fsx.h - small file system helpers shared by the writers of outputs.
 */
#ifndef TPUSIM_FSX_H
#define TPUSIM_FSX_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Whether path, just opened for writing as f, is a plain file of its own:
 * a regular file (not a device, a pipe or a symbolic link) that is the very
 * file f writes. Only such a file may be removed when its writer fails;
 * /dev/null, a FIFO or a link the user named is never removed.
 */
bool fsx_removable(FILE *f, const char *path);

/* Whether path is a regular file itself (lstat: not a link, a device or a pipe). */
bool fsx_regular(const char *path);

#endif
