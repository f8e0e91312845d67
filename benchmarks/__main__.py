"""Run every benchmark: ``python -m benchmarks`` (``make bench``)."""

from benchmarks import bench_pvti

if __name__ == "__main__":
    bench_pvti.main()
