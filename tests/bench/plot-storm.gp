# NAK storm: NAKs reaching the source per lost packet against the number of receivers, and the
# distribution of the time to repair at the receivers for the largest K (bench-storm.sh).
if (system("test -s storm-summary.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set datafile separator ","
set output "storm-naks.png"
set title "NAK storm: NAK packets at the source per lost packet"
set xlabel "receivers on the LAN (K)"
set ylabel "NAKs per lost packet"
set logscale x 2
set yrange [0:*]
set grid
set key top left
plot "< grep ',kernel,' storm-summary.csv" using 1:3 with linespoints lw 2 pt 7 \
	title "without router assist (the source answers)", \
     "< grep ',pgmrouterd,' storm-summary.csv" using 1:3 with linespoints lw 2 pt 7 \
	title "pgmrouterd"
unset logscale x
set output "storm-repair.png"
set datafile separator whitespace
kmax = system("ls storm-repair-k*-kernel.txt 2>/dev/null | sed 's/.*-k\\([0-9]*\\)-.*/\\1/' | sort -n | tail -n 1")
set title "Time to repair at the receivers, K = ".kmax." (all repairs of all repetitions)"
set xlabel "repair delivered - original send (ms)"
set ylabel "fraction of repairs"
set yrange [0:1]
set logscale x
set key bottom right
files = ""
if (system("test -s storm-repair-k".kmax."-kernel.txt && echo y") eq "y") files = files." kernel"
if (system("test -s storm-repair-k".kmax."-pgmrouterd.txt && echo y") eq "y") files = files." pgmrouterd"
plot for [s in files] "storm-repair-k".kmax."-".s.".txt" using 1:(1) smooth cnormal lw 2 \
	title (s eq "kernel" ? "without router assist" : s)
