# Latency: distribution of NAK-in to NCF-out at pgmrouterd and at the floor consumer, and of one
# kernel forwarding hop for the same NAKs (latency-pooled-RATE-SIDE.txt from bench-latency.sh),
# one panel per offered load, the three sides in the same colours in every panel.
if (system("ls latency-pooled-*.txt >/dev/null 2>&1 && echo y") ne "y") exit
set terminal pngcairo size 1200,700 noenhanced
set output "latency-cdf.png"
loads = system("ls latency-pooled-*.txt | sed 's/latency-pooled-\\(.*\\)-.*.txt/\\1/' | sort -u | sort -t d -k2 -n")
n = words(loads)
set multiplot layout 2,(n + 1) / 2 title "NAK in to NCF out (pgmrouterd, floor) and NAK through the kernel, all repetitions"
set logscale x
set xrange [1:100000]
set yrange [0:1]
set grid
set key bottom right font ",9"
set xlabel "microseconds"
set ylabel "fraction of NAKs"
do for [i = 1:n] {
	l = word(loads, i)
	set label 1 "offered: ".l at graph 0.04, graph 0.5 front font ",11"
	plot "latency-pooled-".l."-kernel.txt" using 1:(1) smooth cnormal lw 2 lc rgb "#1b9e77" title "kernel forward", \
	     "latency-pooled-".l."-floor.txt" using 1:(1) smooth cnormal lw 2 lc rgb "#7570b3" title "floor NCF", \
	     "latency-pooled-".l."-pgmrouterd.txt" using 1:(1) smooth cnormal lw 2 lc rgb "#d95f02" title "pgmrouterd NCF"
}
unset multiplot
