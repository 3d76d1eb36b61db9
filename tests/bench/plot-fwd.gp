# The router's own CPU: nanoseconds pgmrouterd adds per forwarded packet on the router CPU, over
# plain kernel forwarding in the same repetition, by traffic kind and size (rows {kind}_added_ns
# with _lo and _hi of results.csv, from bench-fwd.sh: median and its 95 % interval).
if (system("grep -q '^fwd,[a-z0-9]*_added_ns,[-0-9.]' results.csv 2>/dev/null && echo y") ne "y") exit
set terminal pngcairo size 900,500 noenhanced
set output "fwd-added-ns.png"
set datafile separator " "
set title "What pgmrouterd adds per forwarded packet on the router's CPU (median, 95 % interval)"
set ylabel "ns per packet, pgmrouterd - kernel forwarding"
set xlabel "traffic (ODATA by IP datagram size; non-PGM UDP 76 B; TCP per 1448 B)"
set grid ytics
set key off
set xrange [-0.5:*]
set boxwidth 0.5
set style fill solid 0.4
set xzeroaxis lt -1
# one line per kind: name median lo hi (the kinds in the order of the run)
data = "< awk -F, '$1 == \"fwd\" && $2 ~ /_added_ns(_lo|_hi)?$/ && $3 != \"missing\" { \
	k = $2; sub(/_added_ns.*/, \"\", k); s = $2; sub(/.*_added_ns/, \"\", s); \
	if (!(k in seen)) { seen[k] = 1; order[++n] = k } v[k, s] = $3 } \
	END { for (i = 1; i <= n; i++) { k = order[i]; print k, v[k, \"\"], v[k, \"_lo\"], v[k, \"_hi\"] } }' results.csv"
plot data using 0:2:xticlabels(1) with boxes lc rgb "steelblue", \
     data using 0:2:3:4 with yerrorbars lw 2 pt 7 lc rgb "black"
