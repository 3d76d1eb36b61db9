# ODATA fast path: ODATA delivered with the router's rules and user space present, as a ratio of
# plain kernel forwarding in the same repetition, by the sender's CPU time per packet and by
# the packet rate (odata-ratios.csv from bench-odata.sh).
if (system("test -s odata-ratios.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "odata-ratio.png"
set datafile separator ","
set title "ODATA fast path with the router's rules and user space, ratio to kernel-only forwarding"
set xlabel "repetition"
set ylabel "ratio to kernel forwarding (same repetition)"
set yrange [0.4:1.3]
set xtics 1
set key bottom right
set grid ytics
set arrow from graph 0, first 0.97 to graph 1, first 0.97 nohead dt 2 lc rgb "red"
set label "target 0.97" at graph 0.01, first 0.985 tc rgb "red"
plot "< grep '^small,pgmrouterd,' odata-ratios.csv" using 3:5 with linespoints lw 2 pt 7 \
	title "pgmrouterd, 76 B, sender CPU per packet", \
     "< grep '^large,pgmrouterd,' odata-ratios.csv" using 3:5 with linespoints lw 2 pt 7 \
	title "pgmrouterd, 1444 B, sender CPU per packet", \
     "< grep '^small,pgmrouterd,' odata-ratios.csv" using 3:4 with linespoints dt 3 pt 6 \
	title "pgmrouterd, 76 B, packets/s", \
     "< grep '^large,pgmrouterd,' odata-ratios.csv" using 3:4 with linespoints dt 3 pt 6 \
	title "pgmrouterd, 1444 B, packets/s", \
     "< grep '^small,hooks,' odata-ratios.csv" using 3:5 with linespoints lw 1 pt 2 \
	title "empty hooks, 76 B, sender CPU", \
     "< grep '^large,hooks,' odata-ratios.csv" using 3:5 with linespoints lw 1 pt 4 \
	title "empty hooks, 1444 B, sender CPU"
