# The benchmark's chart (test/bench/run.sh):
#   gnuplot -e "qa='A.dat'; qb='B.dat'; sizes='sizes.dat'; builds='builds.dat'; out='x.png'; heading='...'" chart.gp
# Each .dat file: a header line ("x" and the kinds' titles), then a row per
# bar cluster: its name and a value per kind ('?' where there is none).
set terminal pngcairo size 1400,1500 font 'sans,10'
set output out
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set grid ytics
set key autotitle columnheader
set linetype 1 lc rgb '#1f5fa8'
set linetype 2 lc rgb '#7fb2e5'
set linetype 3 lc rgb '#e6862e'
set linetype 4 lc rgb '#8c8c8c'
set linetype 5 lc rgb '#3f9e4d'
set linetype 6 lc rgb '#a0439b'

set multiplot title heading font ',12'
set logscale y
set format y '%g'
set ylabel 'whole query, ms (log scale)'
set key outside top center horizontal font ',10'
set size 1, 0.33
set origin 0, 0.62
set title 'data set A: query time (median; no bar: the index cannot answer the query)'
plot for [k=2:7] qa using k:xtic(1)
set key off
set size 1, 0.3
set origin 0, 0.31
set title 'data set B: query time'
plot for [k=2:7] qb using k:xtic(1)
unset logscale y
set yrange [0:*]
set xrange [-0.6:1.6]
set size 0.5, 0.3
set origin 0, 0
set ylabel 'MB'
set title 'index size'
plot for [k=2:7] sizes using k:xtic(1)
set origin 0.5, 0
set ylabel 's'
set title 'CREATE INDEX time (default parallel maintenance workers)'
plot for [k=2:7] builds using (column(k) / 1000):xtic(1)
unset multiplot
