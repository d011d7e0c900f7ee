"""Token-merging benchmark under the name the iLLaVA issue uses: the same run as `benchmarks/illava.py`.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/merging.py --repeats 5
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = str(Path(__file__).with_name("illava.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
