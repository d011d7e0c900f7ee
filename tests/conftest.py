"""Test-session set-up: one torch thread, offline hub, a per-session user cache unless one is given."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("METHOD_LAB_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:  # torch is optional for the import-hygiene tests, but always present in the venv
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass
