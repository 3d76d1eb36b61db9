# Scale: pgmrouterd's resident set and CPU time per packet as its tables grow (scale.csv).
if (system("test -s scale.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set datafile separator ","
set logscale x
set grid
set key top left
set output "scale-rss.png"
set title "pgmrouterd resident set against table size"
set xlabel "entries"
set ylabel "RSS (MiB)"
plot "< grep '^sessions,' scale.csv" using 3:($4 / 1024) with linespoints lw 2 pt 7 \
	title "sessions (TSIs)", \
     "< grep '^repair_states,' scale.csv" using 3:($4 / 1024) with linespoints lw 2 pt 7 \
	title "repair states"
set output "scale-cost.png"
set title "CPU time per queued packet against table size, ratio to the smallest table"
set ylabel "ratio to the smallest table"
set yrange [0:*]
plot "< grep '^sessions,' scale.csv" using 3:8 with linespoints lw 2 pt 7 \
	title "SPM probe, sessions table", \
     "< grep '^repair_states,' scale.csv" using 3:8 with linespoints lw 2 pt 7 \
	title "NAK probe, repair-state table"
