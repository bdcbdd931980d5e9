# Step time and exposed communication against the sharding, from a sweep's
# sweep.csv over mesh.data, mesh.fsdp and mesh.tensor (the README's chart):
#   gnuplot -e "csv='shard/sweep.csv'; out='docs/pods/sharding_v5e_16x16.png'" docs/pods/sharding.gp
# Points that failed (a sharding that does not fit HBM) are left out.
if (!exists("csv")) csv = 'shard/sweep.csv'
if (!exists("out")) out = 'sharding.png'
rows = sprintf("< awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $NF == \"ok\" { s = $c[\"step_time_s\"] * 1e3; x = s * $c[\"cycles_exposed_comm\"] / $c[\"cycles\"]; printf \"%%sx%%sx%%s %%.6g %%.6g %%.6g\\n\", $c[\"mesh.data\"], $c[\"mesh.fsdp\"], $c[\"mesh.tensor\"], s - x, x, 100 * $c[\"mfu\"] }' %s", csv)
set terminal pngcairo size 800,480 font ",11"
set output out
set title "decoder_1b training step on v5e 16x16 (batch 256)" noenhanced
set xlabel "mesh: data x fsdp x tensor"
set ylabel "step time (ms)"
set y2label "MFU (%)"
set y2tics
set ytics nomirror
set yrange [0:*]
set y2range [0:100]
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set key top left
set grid ytics
stats rows using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]
plot rows using 2:xtic(1) title "compute and memory" lc rgb "#4477aa", \
     '' using 3 title "exposed communication" lc rgb "#ee6677", \
     '' using 0:4 axes x1y2 with linespoints pt 7 lw 2 lc rgb "#228833" title "MFU"
