/*
 * main.c - the tpusim command line: parses it (cli.c), runs the command and
 * turns its error into a message and an exit status. The only place that
 * prints errors and exits: 0 ok, 1 simulation error, 2 bad input, 3 out of
 * memory, 4 sweep --merge with points missing, 128 + the signal for a command
 * that SIGINT or SIGTERM stopped (stop.h: it fails, so its cleanup runs).
 * SIGXFSZ is ignored: a write past a file size limit fails (EFBIG) and is
 * cleaned up as any failed write.
 *
 * The commands, their options and help are in cli.c; the run options they
 * share with the library's request and the sweep's axes in options.c; each
 * command in cmd_sim.c (run, roofline, compare), cmd_tools.c (config, lower,
 * lab) and cmd_sweep.c (sweep, trace). tpusim help lists them all.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "stop.h"
#include "tpusim.h"

static int fail(const struct err *e)
{
	fprintf(stderr, "%s\n", e->msg);
	return err_status(e);
}

/* Whether everything printed reached standard output: 0, or 1 with a message. */
static int flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "standard output: expected to write the results, found %s\n", strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct cli_args a;
	struct err e = { 0 };
	int rc;

	/* A file size limit (ulimit -f) fails the write with EFBIG, which the writer cleans up after, instead of killing tpusim. */
	signal(SIGXFSZ, SIG_IGN);
	if (cli_help(argc, argv, stdout, &e) == 0)
		return flush_stdout();
	if (e.kind != ERR_NONE)
		return fail(&e);
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		puts("tpusim " TPUSIM_VERSION);
		return flush_stdout();
	}
	if (cli_parse(argc, argv, &a, &e) < 0)
		return fail(&e);
	/*
	 * The commands that make outputs stop cleanly, a sweep too (its charts'
	 * temporary directory goes). A sweep's workers go back to the default
	 * action (sweep_run.c): a point killed is a point still to do, not a
	 * failed one.
	 */
	if (a.cmd->outputs || a.cmd == &cli_commands[CMD_SWEEP])
		stop_install();
	rc = a.cmd->outputs && cli_prepare_outputs(&a, &e) < 0 ? -1 : a.cmd->run(&a, &e);
	if (rc < 0) {
		cmd_sim_undo(&a);
		cli_unmake_parents();
		/* Whatever failed once a signal came (a write cut by EINTR too), the signal is why. */
		if (stop_requested()) {
			stop_error(&e);
			fail(&e);
			return stop_status();
		}
		return fail(&e);
	}
	return flush_stdout() ? 1 : rc;
}
