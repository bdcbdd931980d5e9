/*
 * sram.c - buffer parameters (see sram.h).
 */
#include "sram.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

const char *const sram_buf_names[] = { "weights", "inputs", "outputs", NULL };

#define B(i, x) offsetof(struct sram_params, buf) + (i) * sizeof(struct sram_buf_params) + \
	offsetof(struct sram_buf_params, x)
#define BUF_KEYS(i, name, def, what) \
	{ name ".kib", CFG_INT, B(i, kib), "KiB", def, 1, 1 << 30, NULL, "capacity of the " what }, \
	{ name ".banks", CFG_INT, B(i, banks), "", "4", 1, 1024, NULL, "independently addressed banks of the " what }, \
	{ name ".bytes_per_cycle", CFG_AUTO, B(i, bytes_per_cycle), "B/cycle", "auto", 1, 1 << 20, NULL, \
	  "bytes one port of the " what " moves per cycle; auto: what the array's edge needs" }

const struct cfg_key sram_keys[] = {
	{ "unified", CFG_BOOL, offsetof(struct sram_params, unified), "", "false", 0, 0, NULL,
	  "weights and inputs share one scratchpad of weights.kib + inputs.kib" },
	BUF_KEYS(SRAM_WEIGHTS, "weights", "1024", "weight buffer"),
	BUF_KEYS(SRAM_INPUTS, "inputs", "4096", "input (activation) buffer"),
	BUF_KEYS(SRAM_OUTPUTS, "outputs", "1024", "output (accumulator) buffer"),
	CFG_END
};

int64_t sram_bytes(const struct sram_params *p, enum sram_buf b)
{
	return p->buf[b].kib * 1024;
}

enum sram_buf sram_operand_buf(int df, int operand)
{
	static const enum sram_buf buf[3] = { SRAM_INPUTS, SRAM_WEIGHTS, SRAM_OUTPUTS };
	(void)df;
	return buf[operand];
}

/* The buffers whose capacity b shares: b itself, or the weights and inputs when unified. */
bool sram_shares(const struct sram_params *p, enum sram_buf b, enum sram_buf other)
{
	return b == other || (p->unified && b != SRAM_OUTPUTS && other != SRAM_OUTPUTS);
}

int64_t sram_pool_bytes(const struct sram_params *p, enum sram_buf b)
{
	int64_t bytes = 0;
	for (int i = 0; i < SRAM_NBUF; i++)
		if (sram_shares(p, b, i))
			bytes += sram_bytes(p, i);
	return bytes;
}

int64_t sram_stream_room(const struct sram_params *p, enum sram_buf b, const int64_t footprint[SRAM_NBUF])
{
	int64_t held = 0, n = 0;
	for (int i = 0; i < SRAM_NBUF; i++) {
		if (sram_shares(p, b, i)) {
			held += footprint[i];
			n++;
		}
	}
	int64_t left = sram_pool_bytes(p, b) - held;
	/* Rounded down, so that a pool one byte over leaves a negative share, not 0. */
	return left >= 0 ? left / n : -((-left + n - 1) / n);
}

int64_t sram_stream_slots(const struct sram_params *p, enum sram_buf b, const int64_t footprint[SRAM_NBUF],
			  int64_t tile)
{
	int64_t room = sram_stream_room(p, b, footprint), n;
	if (tile <= 0)
		return SRAM_MAX_SLOTS;
	n = (2 * tile + (room > 0 ? room : 0)) / tile;
	return n < 2 ? 2 : n > SRAM_MAX_SLOTS ? SRAM_MAX_SLOTS : n;
}

double sram_bank_bytes(const struct sram_params *p, enum sram_buf b)
{
	int64_t bytes = 0, banks = 0;
	for (int i = 0; i < SRAM_NBUF; i++) {
		if (sram_shares(p, b, i)) {
			bytes += sram_bytes(p, i);
			banks += p->buf[i].banks;
		}
	}
	return (double)bytes / (double)banks;
}

struct sram_fold sram_fold_of(int df, int64_t sr, int64_t sc, int64_t t, bool first)
{
	if (df == DF_OS)
		return (struct sram_fold){ first ? sr * sc : 0, sr * t, sc * t, 0 };
	return (struct sram_fold){ sr * sc, sr * t, sc * t, first ? 0 : sc * t };
}

void sram_fold_traffic(int df, int eb, int ab, const struct sram_fold *f, int64_t rd[SRAM_NBUF], int64_t wr[SRAM_NBUF])
{
	enum sram_buf left = sram_operand_buf(df, array_left_operand(df)), top = sram_operand_buf(df, array_top_operand(df));
	enum sram_buf out = sram_operand_buf(df, OPND_C);
	rd[left] += f->rows_t * eb;
	if (df == DF_OS) {
		rd[top] += f->cols_t * eb;
		wr[out] += f->tile * ab;
	} else {
		rd[top] += f->tile * eb;
		wr[out] += f->cols_t * ab;
		rd[out] += f->acc_t * ab;
	}
}

int64_t sram_edge_bytes(enum sram_buf b, int64_t rows, int64_t cols, int elem_bytes, int acc_bytes)
{
	if (b == SRAM_OUTPUTS)
		return cols * acc_bytes;
	return (rows > cols ? rows : cols) * elem_bytes;
}

void sram_fit_edge(struct sram_params *p, int64_t rows, int64_t cols, int elem_bytes, int acc_bytes)
{
	for (int b = 0; b < SRAM_NBUF; b++)
		p->edge_bytes[b] = sram_edge_bytes((enum sram_buf)b, rows, cols, elem_bytes, acc_bytes);
}

int64_t sram_port_bytes(const struct sram_params *p, enum sram_buf b)
{
	return p->buf[b].bytes_per_cycle ? p->buf[b].bytes_per_cycle : p->edge_bytes[b];
}

struct sram {
	struct sram_params p;
	bool ideal;
	int64_t reads[SRAM_NBUF], writes[SRAM_NBUF];
};

sram *sram_new(const struct sram_params *p, bool ideal)
{
	sram *s;
	for (int b = 0; b < SRAM_NBUF; b++)
		SIM_ASSERT(sram_port_bytes(p, (enum sram_buf)b) > 0);
	if (!(s = calloc(1, sizeof *s)))
		return NULL;
	s->p = *p;
	s->ideal = ideal;
	return s;
}

void sram_free(sram *s)
{
	free(s);
}

void sram_reset(sram *s)
{
	memset(s->reads, 0, sizeof s->reads);
	memset(s->writes, 0, sizeof s->writes);
}

void sram_read(sram *s, enum sram_buf b, int64_t bytes)
{
	s->reads[b] += bytes;
}

void sram_write(sram *s, enum sram_buf b, int64_t bytes)
{
	s->writes[b] += bytes;
}

int64_t sram_reads(const sram *s, enum sram_buf b)
{
	return s->reads[b];
}

int64_t sram_writes(const sram *s, enum sram_buf b)
{
	return s->writes[b];
}

int64_t sram_stream_cycles(const sram *s, enum sram_buf b, int64_t t, int64_t bytes)
{
	int64_t bw = sram_port_bytes(&s->p, b), need;
	if (s->ideal)
		return t;
	need = bytes / bw + (bytes % bw != 0);
	return need > t ? need : t;
}
