/*
 * outdir.h - the crash-safe directory of a run's reports (-o DIR).
 *
 * The files of one run must come from that run at every instant, even when
 * a run is killed or several runs write into DIR at once. POSIX cannot
 * replace two names in one step, so the files live in a generation
 * directory and one symbolic link says which generation is current:
 *
 *     DIR/layers.csv         -> .tpusim/current/layers.csv     (made once)
 *     DIR/summary.json       -> .tpusim/current/summary.json   (made once)
 *     DIR/.tpusim/current    -> gen-XXXXXX                     (the commit)
 *     DIR/.tpusim/gen-XXXXXX/{layers.csv,summary.json}
 *
 * A run writes its files into a fresh gen-XXXXXX, holding flock(LOCK_EX) on
 * it while it works, and commits by renaming a new `current` link (made
 * inside its gen directory) over the old one. Every temporary name lives
 * inside a gen directory, so it goes with it. Cleanup removes each gen
 * directory that is not current and whose lock can be taken without
 * waiting; it runs after every run into DIR, so a killed run's leftovers go
 * at the next run. A failed run changes nothing in DIR and leaves no
 * directory it made.
 *
 * Test hook: with TPUSIM_TEST_PAUSE_COMMIT=step in the environment the
 * process stops itself (SIGSTOP) at that step of outdir_commit, so that a
 * test can kill it exactly there. Steps: written (the files are in their gen
 * directory), unlinked (an old link of a set file but the first was
 * removed), linked (the first set file is a link, the others not yet),
 * committed (current names the new gen), cleanup (before old gen
 * directories are removed).
 */
#ifndef TPUSIM_OUTDIR_H
#define TPUSIM_OUTDIR_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define OUTDIR_MAX_FILES 8

/*
 * One file of a run's reports. The set files (optional false) are written
 * by every run and shown together; an optional file is written when write
 * is not NULL, and when it is NULL an old link to it goes before the
 * commit, so that it never shows another run's file beside this run's.
 */
struct outdir_file {
	const char *name;                         /* its name in DIR: "layers.csv" */
	void (*write)(FILE *f, const void *arg);  /* writes its text; NULL: not this run (optional files only) */
	const void *arg;                          /* borrowed: what write reads */
	bool optional;
};

/*
 * Writes files (n at most OUTDIR_MAX_FILES, in that order) into a new
 * generation of dir and commits them together; creates dir and its missing
 * parents. Errors name -o and the path; a failed write (ENOSPC, EIO) is
 * fsx_write_error's. Removes what earlier killed runs left in dir/.tpusim.
 */
int outdir_commit(const char *dir, const struct outdir_file *files, int n, struct err *e);

/*
 * Before the run: whether each of the n report names may be committed into
 * dir: missing, or tpusim's link into dir/.tpusim (what outdir_commit puts
 * there). Anything else there (a file the user made, another link) is never
 * replaced: bad input naming the file, "-o: expected no file of another at
 * ...". A dir that is not there yet passes.
 */
int outdir_check(const char *dir, const char *const *names, int n, struct err *e);

#endif
