# Scale: pgmrouterd's memory and CPU time per probe packet against the size of its tables
# (scale.csv from bench-scale.sh: medians over fresh daemons, one per size and repetition, with
# their 95 % intervals).
if (system("test -s scale.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set datafile separator ","
set logscale x
set grid
set key top right
set xlabel "entries in the table"

set output "scale-memory.png"
set title "Memory per entry against table size (median, 95 % interval)"
set ylabel "bytes per entry"
set yrange [0:*]
plot "< grep '^sessions,' scale.csv" using 3:5:6:7 with yerrorlines lw 2 pt 7 \
	title "session: resident set growth / sessions", \
     "< grep '^sessions,' scale.csv" using 3:8:9:10 with yerrorlines lw 1 dt 2 pt 6 \
	title "session: the daemon's own count", \
     "< grep '^repair_states,' scale.csv" using 3:5:6:7 with yerrorlines lw 2 pt 5 \
	title "repair state: resident set growth / states", \
     "< grep '^repair_states,' scale.csv" using 3:8:9:10 with yerrorlines lw 1 dt 2 pt 4 \
	title "repair state: the daemon's own count"

set output "scale-rss.png"
set title "pgmrouterd resident set against table size (median)"
set ylabel "RSS (MiB)"
set key top left
plot "< grep '^sessions,' scale.csv" using 3:($4 / 1024) with linespoints lw 2 pt 7 \
	title "sessions (TSIs)", \
     "< grep '^repair_states,' scale.csv" using 3:($4 / 1024) with linespoints lw 2 pt 5 \
	title "repair states"

set output "scale-cost.png"
set title "CPU time per queued probe packet (random entries), ratio to the smallest table"
set ylabel "ratio to the smallest table (95 % interval)"
set key top left
set arrow from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 2 lc rgb "red"
set label "goal: at most 1.5" at graph 0.01, first 1.55 tc rgb "red"
plot "< grep '^sessions,' scale.csv" using 3:14:15:16 with yerrorlines lw 2 pt 7 \
	title "SPM probe, sessions table", \
     "< grep '^repair_states,' scale.csv" using 3:14:15:16 with yerrorlines lw 2 pt 5 \
	title "NAK probe, repair-state table"
unset arrow
unset label

set output "scale-ns.png"
set title "CPU time per queued probe packet against table size (median, 95 % interval)"
set ylabel "ns per packet"
plot "< grep '^sessions,' scale.csv" using 3:11:12:13 with yerrorlines lw 2 pt 7 \
	title "SPM probe, sessions table", \
     "< grep '^repair_states,' scale.csv" using 3:11:12:13 with yerrorlines lw 2 pt 5 \
	title "NAK probe, repair-state table"
