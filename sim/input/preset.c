/*
 * preset.c - the preset directory and the names in it (see preset.h).
 */
#include "preset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"

#define PRESET_DIRS 6

/*
 * The file mapped at addr in this process, by the absolute path the kernel
 * keeps (/proc/self/maps): for code in libtpusim.so, the library's own file,
 * however it was loaded (dladdr gives the name it was opened by, which may be
 * relative to a working directory the process has left since). -1 if none.
 */
static int mapped_file(const void *addr, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 256];
	int rc = -1;
	if (!f)
		return -1;
	while (rc < 0 && fgets(line, sizeof line, f)) {
		uintptr_t lo, hi;
		int at = 0;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &lo, &hi, &at) == 2 && at &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi && line[at] == '/') {
			line[strcspn(line, "\n")] = '\0';
			rc = snprintf(path, size, "%s", line + at) < (int)size ? 0 : -1;
		}
	}
	fclose(f);
	return rc;
}

/* The preset directories that exist, best first (preset.h): their number. */
static int preset_dirs(char dirs[PRESET_DIRS][PATH_MAX])
{
	static const char *const rel[] = { "../share/tpusim/configs", "../configs", "../../configs" };
	char self[2][PATH_MAX];
	int nself = 0, n = 0;
	ssize_t len = readlink("/proc/self/exe", self[0], sizeof self[0] - 1);
	if (len > 0)
		self[0][len] = '\0', nself++;
	/* The library's own file, when this code is in libtpusim.so rather than the program. */
	if (mapped_file((const void *)preset_dirs, self[nself], sizeof self[nself]) == 0 &&
	    (nself == 0 || strcmp(self[0], self[1])))
		nself++;
	for (int k = 0; k < nself; k++) {
		char *slash = strrchr(self[k], '/');
		if (!slash)
			continue;
		*slash = '\0';
		for (size_t j = 0; j < sizeof rel / sizeof rel[0] && n < PRESET_DIRS; j++) {
			char path[PATH_MAX + 32];
			struct stat st;
			snprintf(path, sizeof path, "%s/%s", self[k], rel[j]);
			if (realpath(path, dirs[n]) && stat(dirs[n], &st) == 0 && S_ISDIR(st.st_mode))
				n++;
		}
	}
	return n;
}

/* Whether name may name a preset: "tpu_v1", "memory/hbm3"; not a path to a .yaml file. */
static bool preset_name(const char *name)
{
	size_t n = strlen(name);
	if (!n || name[0] == '/' || name[0] == '.' || strstr(name, "..") || strstr(name, "//") || name[n - 1] == '/')
		return false;
	if ((n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")))
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-./", *p))
			return false;
	return true;
}

int preset_find(const char *base, const char *sub, const char *name, char *path, size_t size)
{
	char dirs[PRESET_DIRS][PATH_MAX], file[PATH_MAX];
	struct stat st;
	int n;
	if (snprintf(file, sizeof file, "%s%s%s", base && name[0] != '/' ? base : "", base && name[0] != '/' ? "/" : "",
		     name) >= (int)sizeof file ||
	    snprintf(path, size, "%s", file) >= (int)size) {
		if (size)
			path[0] = '\0';
		return -2;
	}
	/* A file of that name wins; a directory of that name (say, an earlier -o tpu_v1) does not hide the preset. */
	if (!preset_name(name))
		return 0;
	bool dir = stat(file, &st) == 0;
	if (dir ? !S_ISDIR(st.st_mode) : errno != ENOENT)
		return 0;
	n = preset_dirs(dirs);
	for (int i = 0; i < n; i++) {
		if (snprintf(path, size, "%s/%s%s.yaml", dirs[i], sub, name) < (int)size && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return 1;
	}
	snprintf(path, size, "%s", file);
	return dir ? 0 : -1;
}

static int yaml_entry(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".yaml");
}

static int folder_entry(const struct dirent *d)
{
	return d->d_name[0] != '.' && !strchr(d->d_name, '.');
}

/* Appends the names in dir/in (in "" or "memory/") to buf as ", in/name". */
static void list_dir(const char *dir, const char *in, char *buf, size_t size)
{
	char path[PATH_MAX + 64];
	struct dirent **v;
	int n;
	snprintf(path, sizeof path, "%s/%s", dir, in);
	if ((n = scandir(path, &v, yaml_entry, alphasort)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		size_t at = strlen(buf);
		if (at + 1 < size)
			snprintf(buf + at, size - at, "%s%s%.*s", at ? ", " : "", in, (int)strlen(v[i]->d_name) - 5,
				 v[i]->d_name);
		free(v[i]);
	}
	free(v);
}

/* s in lower case, into buf. */
static const char *lower(const char *s, size_t n, char *buf, size_t size)
{
	size_t i = 0;
	for (; i < n && s[i] && i + 1 < size; i++)
		buf[i] = (char)tolower((unsigned char)s[i]);
	buf[i] = '\0';
	return buf;
}

const char *preset_hint(const char *list, const char *name, char *buf, size_t size)
{
	char want[CFG_NAME_MAX], cand[CFG_NAME_MAX];
	size_t best = SIZE_MAX;
	buf[0] = '\0';
	lower(name, strlen(name), want, sizeof want);
	for (const char *p = list; *p; p += strspn(p, ", ")) {
		size_t len = strcspn(p, ","), d = cfg_suggest_distance(want, lower(p, len, cand, sizeof cand));
		if (d < best) {
			best = d;
			snprintf(buf, size, " (did you mean %.*s?)", (int)len, p);
		}
		p += len;
	}
	return buf;
}

void preset_list(const char *sub, const char *skip, char *buf, size_t size)
{
	char dirs[PRESET_DIRS][PATH_MAX], top[PATH_MAX + 64];
	struct dirent **v;
	int n;
	if (preset_dirs(dirs) == 0)
		return;
	snprintf(top, sizeof top, "%s/%s", dirs[0], sub);
	list_dir(top, "", buf, size);
	if ((n = scandir(top, &v, folder_entry, alphasort)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		char in[NAME_MAX + 2];
		snprintf(in, sizeof in, "%s/", v[i]->d_name);
		if (!skip || strcmp(v[i]->d_name, skip))
			list_dir(top, in, buf, size);
		free(v[i]);
	}
	free(v);
}
