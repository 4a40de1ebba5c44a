# Draws the PNGs from the .dat files beside it: gnuplot plots.gp
set terminal pngcairo size 1000,560 font 'sans,10'
set key top left
set grid ytics

set output 'throughput.png'
set title 'Throughput per scenario (jobs/s, log scale; median of runs)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y
set yrange [100:*]
set xtics rotate by -30 noenhanced
plot 'throughput.dat' using 2:xtic(1) title 'pgjq', '' using 3 title 'recipe', '' using 4 title 'pg-boss', '' using 5 title 'graphile-worker'
unset logscale y
set yrange [*:*]
set xtics norotate
unset style

set output 'depth_latency.png'
set title 'Claim (1 job) and backpressured enqueue latency against pending jobs (median, ms)'
set style data linespoints
set logscale xy
set xrange [500:2000000]
set xtics ("1k" 1000, "10k" 10000, "100k" 100000, "1M" 1000000)
set xlabel 'pending jobs'
set ylabel 'ms (log scale)'
set yrange [*:*]
plot 'depth_pgjq.dat' using 1:2 with linespoints lw 2 title 'pgjq claim', 'depth_pgjq.dat' using 1:5 with linespoints dt 2 title 'pgjq backpressured enqueue', 'depth_recipe.dat' using 1:2 with linespoints lw 2 title 'recipe claim', 'depth_recipe.dat' using 1:5 with linespoints dt 2 title 'recipe backpressured enqueue'
unset logscale xy
set xrange [*:*]
set xtics autofreq
unset xlabel
unset ylabel

set output 'steady_size.png'
set title 'Table + index size during the steady run (MB)'
set xlabel 'seconds'
set ylabel 'MB'
set yrange [0:*]
plot 'steady_pgjq.dat' using 1:2 with lines lw 2 title 'pgjq live queue tables', 'steady_pgjq.dat' using 1:3 with lines dt 2 lw 2 title 'pgjq finished-jobs table', 'steady_recipe.dat' using 1:2 with lines lw 2 title 'recipe jobs table'
