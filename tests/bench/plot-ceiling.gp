# Ceilings (ceiling-summary.csv from bench-ceiling.sh): per kind of router-assist work, the
# highest sustained rate with nothing failing open, pgmrouterd beside the accept-all consumer
# (which queues and accepts, sending nothing) found the same way in the same run.
if (system("test -s ceiling-summary.csv && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "ceiling.png"
set datafile separator ","
set title "Ceilings: highest rate with nothing failing open (median of the repetitions)"
set ylabel "packets per second"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left
set yrange [0:*]
set format y "%.0s%c"
plot "< tail -n +2 ceiling-summary.csv" using 2:xtic(1) title "accept-all (sends nothing)", \
     "" using 3 title "pgmrouterd", \
     "" using ($0 + 0.18):3:(sprintf("%.2fx", $4)) with labels offset 0,0.8 notitle
