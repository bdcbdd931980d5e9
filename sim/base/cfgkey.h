/*
 * cfgkey.h - the row type of every module's table of config keys.
 *
 * Each model and stage declares its keys once, in one table: name, type, unit,
 * default, allowed range, one-line doc, and the offset of the field it fills.
 * Generic code (cfg.c) parses, checks, defaults, prints and round-trips them;
 * no default is written anywhere else.
 */
#ifndef TPUSIM_CFGKEY_H
#define TPUSIM_CFGKEY_H

#include <stddef.h>
#include <stdint.h>

#include "limit.h"

enum cfg_type {
	CFG_INT,     /* int64_t; range [min, max] */
	CFG_AUTO,    /* int64_t; range [min >= 1, max], or `auto` (stored as 0: the user of the
			value computes it from other keys) */
	CFG_DOUBLE,  /* double; range [min, max] */
	CFG_BOOL,    /* bool; true or false */
	CFG_ENUM,    /* int: index into choices */
	CFG_STR      /* char[CFG_STR_MAX] */
};

struct cfg_key {
	const char *name;               /* relative to the table's prefix, e.g. "rows" */
	enum cfg_type type;
	size_t off;                     /* offset of the field in the table's struct */
	const char *unit;               /* "" when unitless */
	const char *def;                /* default as text; NULL means required */
	double min, max;                /* CFG_INT, CFG_AUTO, CFG_DOUBLE */
	const char *const *choices;     /* CFG_ENUM: NULL-terminated */
	const char *doc;                /* one line */
};

/* A table ends with a row whose name is NULL. */
#define CFG_END { NULL, CFG_INT, 0, NULL, NULL, 0, 0, NULL, NULL }

#endif
