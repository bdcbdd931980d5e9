/*
 * preset.h - files named without a path: the shipped configs and workloads.
 *
 * `-c tpu_v1` is the preset tpu_v1.yaml, `-c memory/hbm3` the overlay
 * memory/hbm3.yaml and `-w resnet50` the workload workloads/resnet50.yaml,
 * each in the preset directory, found from where the running program (or
 * the library that holds this code) lives, dir:
 *
 *   dir/../share/tpusim/configs   after make install (dir: PREFIX/bin or PREFIX/lib)
 *   dir/../configs                a checkout's build/tpusim
 *   dir/../../configs             build/san/tpusim
 *
 * (/proc/self/exe for the program; in libtpusim.so, the library's own file
 * as /proc/self/maps names it, however it was loaded),
 * so a name means the same file from any working directory. The rule for
 * every kind of file is here, once: a value is a name when it has no .yaml
 * (or .yml) ending, does not start with '.' or '/', has no ".." or "//" and
 * only [A-Za-z0-9_./-]; a file of that name in the working directory comes
 * first (a directory of that name does not hide the preset).
 */
#ifndef TPUSIM_PRESET_H
#define TPUSIM_PRESET_H

#include <stddef.h>

/*
 * The file name stands for, in path (size bytes), looked up in the folder
 * sub ("" for the configs, "workloads/" for the workloads) of the preset
 * directory; a relative name's own file is looked for under base (NULL:
 * the working directory; a sweep's record names the one it ran in), and
 * "file" below is base/name. Returns 1 with path = the preset's file; 0
 * with path = file when name is to be read as it is (a path; a file of that
 * name; a directory of that name and no such preset, which its loader
 * refuses as such); -1 with path = file when name is a name that is neither
 * a file nor a preset (the caller's error, which lists preset_list's
 * names); -2 with path = "" when file does not fit in PATH_MAX or size
 * bytes.
 */
int preset_find(const char *base, const char *sub, const char *name, char *path, size_t size);

/*
 * Appends to buf the names in the folder sub of the preset directory, each
 * NAME of a NAME.yaml with sub before it, then those in each folder of sub
 * but the one named skip (NULL: none): "a, b, memory/c", sorted within each
 * folder. Nothing when there is no preset directory.
 */
void preset_list(const char *sub, const char *skip, char *buf, size_t size);

/*
 * " (did you mean NAME?)" for the NAME of list (preset_list's "a, b, c")
 * that name most likely meant, case aside (TPU_V1: tpu_v1; resnet5:
 * resnet50), by cfg_suggest_distance; "" when none is near. In buf.
 */
const char *preset_hint(const char *list, const char *name, char *buf, size_t size);

#endif
