# Restart convergence (restart-runs.csv from bench-restart.sh): per run, the time from time zero
# (kill9: the killed daemon gone; cold: the start into running traffic) to the first NCF and to
# every session known again.
if (system("test -s restart-runs.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "restart-convergence.png"
set datafile separator ","
set title "pgmrouterd restarted in a loss burst: time to the first NCF and to every session"
set xlabel "repetition"
set ylabel "ms from time zero"
set xtics 1
set grid ytics
set key top left
set yrange [0:*]
plot "< grep '^kill9,.*,ok$' restart-runs.csv" using 2:4 with linespoints lw 2 pt 7 \
	title "kill -9 and restart: first NCF", \
     "< grep '^kill9,.*,ok$' restart-runs.csv" using 2:5 with linespoints lw 2 pt 5 \
	title "kill -9 and restart: every session known", \
     "< grep '^cold,.*,ok$' restart-runs.csv" using 2:4 with linespoints dt 2 pt 6 \
	title "cold start: first NCF", \
     "< grep '^cold,.*,ok$' restart-runs.csv" using 2:5 with linespoints dt 2 pt 4 \
	title "cold start: every session known"
