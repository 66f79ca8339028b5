#!/usr/bin/env python3
# How much this machine's disk overlaps reads (doc/benchmarks.md, Cold
# reads): cold random 8 kB reads of one file: one after another, after posix_fadvise
# of all, and from 8 threads at once.  As root (it drops the page cache
# each round): python3 test/bench/disk_overlap.py FILE ROUNDS.  Asserts nothing.
import os, sys, time, random, statistics
from concurrent.futures import ThreadPoolExecutor
f = sys.argv[1]; rounds = int(sys.argv[2]); n = 8
fd = os.open(f, os.O_RDONLY); size = os.fstat(fd).st_size
def drop():
    os.sync(); open('/proc/sys/vm/drop_caches', 'w').write('3\n')
def one(mode, seed):
    rnd = random.Random(seed); blocks = [rnd.randrange(size // 8192) for _ in range(n)]
    drop(); t = time.perf_counter()
    if mode == 'fadvise':
        for b in blocks: os.posix_fadvise(fd, b * 8192, 8192, os.POSIX_FADV_WILLNEED)
    if mode == 'threads':
        with ThreadPoolExecutor(n) as ex: list(ex.map(lambda b: os.pread(fd, 8192, b * 8192), blocks))
    else:
        for b in blocks: os.pread(fd, 8192, b * 8192)
    return (time.perf_counter() - t) * 1000
res = {m: [] for m in ('sequential', 'fadvise', 'threads')}
for r in range(rounds):
    for m in res: res[m].append(one(m, r * 10 + len(m)))
for m, v in res.items():
    print(f"{m}: median {statistics.median(v):.2f} ms for {n} reads ({statistics.median(v)/n:.3f} ms a read), min {min(v):.2f}, max {max(v):.2f}")
