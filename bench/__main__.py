"""`python -m bench` (make bench): run every benchmark module (bench/bench_*.py, bench/*_bench.py) in turn,
each with its default sizes."""
import importlib
import pkgutil
import sys

import bench


def main() -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__)
                   if m.name.endswith("_bench") or m.name.startswith("bench_"))
    for name in names:
        print(f"== bench.{name}")
        importlib.import_module(f"bench.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
