# ODATA fast path: delivered packet rate with the router's user space present, as a ratio of
# plain kernel forwarding in the same repetition (odata-ratios.csv from bench-odata.sh).
if (system("test -s odata-ratios.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "odata-ratio.png"
set datafile separator ","
set title "ODATA fast path: delivered packets/s, ratio to kernel-only forwarding (same repetition)"
set xlabel "repetition"
set ylabel "ratio to kernel forwarding"
set yrange [0.4:1.3]
set xtics 1
set key bottom right
set grid ytics
set arrow from graph 0, first 0.97 to graph 1, first 0.97 nohead dt 2 lc rgb "red"
set label "target 0.97" at graph 0.01, first 0.985 tc rgb "red"
plot "odata-ratios.csv" using (strcol(1) eq "small" && strcol(2) eq "pgmrouterd" ? $3 : 1/0):4 \
	with linespoints lw 2 title "pgmrouterd, 76-byte packets", \
     "odata-ratios.csv" using (strcol(1) eq "large" && strcol(2) eq "pgmrouterd" ? $3 : 1/0):4 \
	with linespoints lw 2 title "pgmrouterd, 1444-byte packets", \
     "odata-ratios.csv" using (strcol(1) eq "small" && strcol(2) eq "acceptall" ? $3 : 1/0):4 \
	with linespoints dt 3 title "rules + accept-all, 76-byte", \
     "odata-ratios.csv" using (strcol(1) eq "large" && strcol(2) eq "acceptall" ? $3 : 1/0):4 \
	with linespoints dt 3 title "rules + accept-all, 1444-byte"
