#!/usr/bin/env bash
# Speed of the cycle-level engine on real networks: wall time, simulated
# cycles per second and peak memory, one tpusim process per line.
#   scripts/bench.sh [path/to/tpusim]
set -euo pipefail
bin=${1:-build/tpusim}
lib=${2:-}    # the library bench (scripts/bench_lib.c), if given
printf '%-44s %-22s %14s %10s %14s %10s\n' workload config cycles "wall s" "cycles/s" "RSS MiB"
run() {
	local cfg=$1 wl=$2; shift 2
	local out cycles timing extra="$*"
	out=$("$bin" run -c "$cfg" -w "$wl" --timing "$@")
	cycles=$(printf '%s\n' "$out" | awk '/ cycles = /{print $1; exit}')
	timing=$(printf '%s\n' "$out" | awk '/^timing:/{print $2, $5, $10}')
	set -- $timing
	printf '%-44s %-22s %14s %10s %14s %10s\n' "$(basename "$wl")" "$(basename "$cfg" .yaml)${extra:+ $extra}" "$cycles" "$1" "$2" "$3"
}
run configs/tpu_v4_mxu.yaml configs/workloads/resnet50.yaml
run configs/tpu_v4_mxu.yaml configs/workloads/llm7b_prefill.yaml
run configs/tpu_v4_mxu.yaml configs/workloads/bert_base.yaml
run configs/tpu_v1.yaml configs/workloads/resnet50.yaml
# The chips: every array and core, activations kept on chip, loads running ahead across ops.
run configs/tpu_v4.yaml configs/workloads/resnet50.yaml
run configs/tpu_v4.yaml configs/workloads/llm7b_prefill.yaml
run configs/tpu_v1.yaml configs/workloads/resnet50.yaml --batch 8
run configs/tpu_v1.yaml configs/workloads/tpuv1_cnn0.yaml
run configs/edge_32x32.yaml configs/workloads/resnet50.yaml
# The engine's cost follows the number of tiles: a 4x4 array has 1,024 times as many folds as 128x128.
run configs/lab_4x4.yaml configs/workloads/resnet50.yaml
# Training steps (forward, backward, optimizer: about three times the forward's work and ops).
run configs/tpu_v4.yaml configs/workloads/bert_base.yaml --train
run configs/tpu_v4.yaml configs/workloads/resnet50.yaml --train
run configs/tpu_v5p.yaml docs/train/decoder_1b.yaml --train
# Pods: one chip for each mesh position, its collectives on the links' own threads.
run configs/pods/v5e_16x16.yaml docs/train/decoder_1b.yaml --train --batch 256 --set mesh.data=16 --set mesh.fsdp=16
run configs/pods/v5p_6144.yaml configs/workloads/gpt3_175b.yaml --train --model analytic
run configs/pods/v5p_6144.yaml configs/workloads/gpt3_175b.yaml --train
# The same with every one of its 96 blocks simulated (no folding).
run configs/pods/v5p_6144.yaml configs/workloads/gpt3_175b.yaml --train --no-reuse

# Loading and lowering large workloads: wall time and peak memory of
# `tpusim lower` on generated files of about 1 MB and 36 MB (16,000 and
# 576,000 fc layers, one per line). Loading is linear; memory is the file
# while it is read, then the layers and their ops.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() {
	awk -v n="$2" 'BEGIN { print "name: big"; print "batch: 1"; print "layers:";
		for (i = 0; i < n; i++) printf "  - {name: fc%d, type: fc, in_features: 17, out_features: 40}\n", i }' > "$1"
}
echo
printf '%-32s %10s %10s %10s\n' "load + lower" "MB" "wall s" "RSS MiB"
for spec in 1mb:16000 36mb:576000; do
	f=$tmp/${spec%%:*}.yaml
	gen "$f" "${spec##*:}"
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" lower -w "$f" > /dev/null
	read -r wall kb < "$tmp/time"
	printf '%-32s %10s %10s %10s\n' "$(basename "$f") (${spec##*:} layers)" \
		"$(awk -v b="$(stat -c %s "$f")" 'BEGIN{printf "%.1f", b / 1e6}')" "$wall" "$((kb / 1024))"
done

# The VCD trace: ResNet-50 on tpu_v1 with and without --vcd, and the size of the file it writes.
/usr/bin/time -f '%e' -o "$tmp/time" "$bin" run -c configs/tpu_v1.yaml -w configs/workloads/resnet50.yaml > /dev/null
read -r plain < "$tmp/time"
/usr/bin/time -f '%e' -o "$tmp/time" "$bin" run -c configs/tpu_v1.yaml -w configs/workloads/resnet50.yaml \
	--vcd "$tmp/r50" > /dev/null
read -r traced < "$tmp/time"
echo
printf 'resnet50.yaml on tpu_v1 (cycle model): %s s, with --vcd %s s and a VCD of %s MB\n' "$plain" "$traced" \
	"$(awk -v b="$(stat -c %s "$tmp/r50.vcd")" 'BEGIN{printf "%.2f", b / 1e6}')"

# The event trace (--trace): what writing it costs, and its size per fold, on ResNet-50 (tpu_v1) and the LLM
# prefill (tpu_v4_mxu). A traced run simulates every op (no reuse of identical ops), so it is timed against
# --no-reuse: CPU seconds (user + sys) of the whole process, start-up included, the mean of 10 runs, the best
# of 3 such means.
cpu() {
	local best= TIMEFORMAT='%3U %3S'
	for _ in 1 2 3; do
		{ time for _ in 1 2 3 4 5 6 7 8 9 10; do "$@" > /dev/null; done; } 2> "$tmp/time"
		best=$(awk -v b="$best" '{ t = ($1 + $2) / 10; if (b == "" || t < b) b = t; printf "%.4f", b }' "$tmp/time")
	done
	echo "$best"
}
echo
printf '%-24s %-12s %10s %10s %7s %12s %9s %11s\n' "--trace" config "plain s" "traced s" ratio "trace bytes" folds "bytes/fold"
for pair in "configs/tpu_v1.yaml configs/workloads/resnet50.yaml" "configs/tpu_v4_mxu.yaml configs/workloads/llm7b_prefill.yaml"; do
	set -- $pair
	plain=$(cpu "$bin" run -c "$1" -w "$2" --no-reuse)
	traced=$(cpu "$bin" run -c "$1" -w "$2" --trace "$tmp/t.gz")
	bytes=$(stat -c %s "$tmp/t.gz")
	folds=$("$bin" trace "$tmp/t.gz" | awk '/ records: / { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^folds/) print $i }')
	printf '%-24s %-12s %10s %10s %7s %12s %9s %11s\n' "$(basename "$2")" "$(basename "$1" .yaml)" "$plain" "$traced" \
		"$(awk -v a="$traced" -v b="$plain" 'BEGIN { printf "%.2f", a / b }')" "$bytes" "$folds" \
		"$(awk -v a="$bytes" -v b="$folds" 'BEGIN { printf "%.1f", a / b }')"
done

# One ResNet-50 run through the library (no process start) next to the CLI's
# (a whole process: start, load, simulate, print). Median of n runs each.
if [ -n "$lib" ]; then
	n=20
	cfg=configs/tpu_v1.yaml wl=configs/workloads/resnet50.yaml
	set -- $("$lib" "$cfg" "$wl" "$n")
	lib_ms=$(awk -v t="$2" 'BEGIN{printf "%.2f", t * 1000}')
	times=()
	for _ in $(seq "$n"); do
		t0=$(date +%s%N)
		"$bin" run -c "$cfg" -w "$wl" > /dev/null
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000 )))
	done
	cli_ms=$(printf '%s\n' "${times[@]}" | sort -n | awk -v n="$n" 'NR == int(n / 2) + 1 {printf "%.2f", $1 / 1000}')
	echo
	printf 'resnet50.yaml on tpu_v1 (cycle model), median of %d: library %s ms per call, CLI %s ms per process\n' \
		"$n" "$lib_ms" "$cli_ms"
fi

# The functional model (--model functional): PE register updates per second
# (cycles x rows x cols / wall time) for a 512^3 GEMM on a 128 x 128 array,
# every output checked against a reference GEMM; one process each, so the wall
# time includes start-up, the operands and the reference.
echo
printf '%-44s %10s %10s %18s %12s\n' "functional, 512x512x512 on 128x128" cycles "wall s" "PE updates/s" mismatches
printf 'name: g512\nlayers:\n  - {name: g, type: matmul, m: 512, k: 512, n: 512}\n' > "$tmp/g512.yaml"
for dtype in int8 bf16; do
	out=$("$bin" run -c configs/lab_4x4.yaml -w "$tmp/g512.yaml" --model functional --timing \
		--set array.rows=128 --set array.cols=128 --set array.dtype="$dtype")
	cycles=$(printf '%s\n' "$out" | awk '/ cycles = /{print $1; exit}')
	wall=$(printf '%s\n' "$out" | awk '/^timing:/{print $2}')
	mism=$(printf '%s\n' "$out" | awk '/^functional:/{for (i = 1; i < NF; i++) if ($(i + 1) ~ /^mismatches/) print $i}')
	printf '%-44s %10s %10s %18s %12s\n' "$dtype" "$cycles" "$wall" \
		"$(awk -v c="$cycles" -v w="$wall" 'BEGIN{printf "%.3g", c * 128 * 128 / w}')" "$mism"
done

# A design-space sweep: ResNet-50 at 972 points (array rows and columns 8..256,
# three weight buffers, three bandwidths, ws/os/is; scripts/sweep_bench.yaml),
# cycle model, on 2 workers: wall time, points per second and each worker's
# peak RSS; then the same with --no-reuse (every op simulated).
echo
printf '%-44s %8s %10s %10s %22s\n' "sweep, scripts/sweep_bench.yaml" points "wall s" "points/s" "peak RSS/worker MiB"
for reuse in "" --no-reuse; do
	rm -rf "$tmp/sweep"
	line=$("$bin" sweep scripts/sweep_bench.yaml -o "$tmp/sweep" -j 2 $reuse | awk '/^ran /')
	# "ran N points in S s (R points/s) on 2 workers, peak RSS per worker A, B MiB"
	set -- $line
	printf '%-44s %8s %10s %10s %22s\n' "2 workers${reuse:+ $reuse}" "$2" "$5" "${7#(}" \
		"$(printf '%s\n' "$line" | sed 's/.*per worker //; s/ MiB//')"
done
