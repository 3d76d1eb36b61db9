# Queue path: capacity (queued packets per CPU-second of the consumer) of pgmrouterd and of the
# accept-all consumer per scenario, and user-space instructions per packet (queue-summary.csv).
if (system("test -s queue-summary.csv && echo y") ne "y") exit
set terminal pngcairo size 1000,500 noenhanced
set output "queue-capacity.png"
set datafile separator ","
set title "Queue path: queued packets per CPU-second (median of the repetitions)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "packets per CPU-second"
set yrange [0:*]
set grid ytics
set key outside top center horizontal
plot "< tail -n +2 queue-summary.csv" using 2:xtic(1) title "accept-all consumer", \
     "" using 3 title "pgmrouterd"
set output "queue-instructions.png"
set title "Queue path: user-space instructions per queued packet (callgrind)"
set ylabel "instructions per packet"
plot "< tail -n +2 queue-summary.csv" using 5:xtic(1) title "accept-all consumer", \
     "" using 6 title "pgmrouterd"
