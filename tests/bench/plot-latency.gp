# Latency: distribution of NAK-in to NCF-out at pgmrouterd and of one kernel forwarding hop
# for the same NAKs (latency-pooled-RATE-SIDE.txt from bench-latency.sh).
if (system("ls latency-pooled-*.txt >/dev/null 2>&1 && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "latency-cdf.png"
set title "NAK in to NCF out (pgmrouterd) and NAK through the kernel, all repetitions"
set xlabel "microseconds"
set ylabel "fraction of NAKs"
set logscale x
set yrange [0:1]
set grid
set key bottom right
files = system("ls latency-pooled-*.txt")
plot for [f in files] f using 1:(1) smooth cnormal lw 2 \
	title system("echo ".f." | sed 's/latency-pooled-\\(.*\\)-\\(.*\\).txt/\\2, \\1/; s/kernel/kernel forward/; s/pgmrouterd/pgmrouterd NCF/'")
