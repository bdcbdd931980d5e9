/*
 * fuzz_request.c - the library's JSON request reader (sim_request_parse),
 * then the request's overrides applied to the default config as sim_load
 * would (config_set_key). No file the request names is opened.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "config.h"
#include "fuzz.h"
#include "ydoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sim_request rq;
	static struct config c;
	struct ydoc *d = NULL;
	struct err e = { 0 };
	char *json = malloc(size + 1);
	int rc;

	if (!json)
		return 0;
	memcpy(json, data, size);
	json[size] = '\0';
	rc = sim_request_parse(json, &rq, &d, &e);
	fz_check_err(rc, &e, "sim_request_parse");
	if (rc == 0) {
		if (rq.nconfigs < 1 || rq.nconfigs > CONFIG_MAX_FILES || !rq.workload)
			fz_fail("a request with %d configs and workload %p", rq.nconfigs, (const void *)rq.workload);
		if (rq.noverrides < 0 || rq.noverrides > CONFIG_MAX_SETS)
			fz_fail("a request with %d overrides", rq.noverrides);
		config_init(&c);
		for (int i = 0; i < rq.noverrides; i++) {
			const struct sim_override *o = &rq.overrides[i];
			rc = config_set_key(&c, o->key, o->value, o->quoted, o->at, &e);
			fz_check_err(rc, &e, "config_set_key");
			if (rc < 0)
				break;
		}
	}
	ydoc_free(d);
	free(json);
	return 0;
}
