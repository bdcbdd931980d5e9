/*
 * fsx.c - small file system helpers (see fsx.h).
 */
#include "fsx.h"

#include <sys/stat.h>

bool fsx_removable(FILE *f, const char *path)
{
	struct stat a, b;
	return fstat(fileno(f), &a) == 0 && lstat(path, &b) == 0 && S_ISREG(a.st_mode) && S_ISREG(b.st_mode) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool fsx_regular(const char *path)
{
	struct stat b;
	return lstat(path, &b) == 0 && S_ISREG(b.st_mode);
}
