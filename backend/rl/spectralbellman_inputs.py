"""Example files of the ``mdp_json`` input kind (:mod:`backend.io.registry`): one small valid file and valid-but-odd
variants, from which the bad-input corpus and the fuzzing tests are built (the kind's decoder is
``backend.rl.mdps.read_mdp_json``)."""

from __future__ import annotations

import json


def mdp_json(seed: int = 0) -> bytes:
    """A 4-state chain MDP with a noisy right move."""
    from .mdps import example_json

    return example_json(seed)


def mdp_json_odd() -> dict[str, bytes]:
    ex = json.loads(mdp_json())
    near = json.loads(mdp_json())
    near["P"][0][1] = [p * (1 + 5e-7) for p in near["P"][0][1]]  # within the 1e-6 tolerance: renormalised
    absorbing = {"states": 2, "actions": 1, "P": [[[0.0, 1.0]], [[0.0, 1.0]]], "R": [[1], [0]], "gamma": 1,
                 "terminal": [1]}
    return {"crlf.json": json.dumps(ex, indent=1).replace("\n", "\r\n").encode(),
            "bom.json": b"\xef\xbb\xbf" + mdp_json(1), "near_one_rows.json": json.dumps(near).encode(),
            "absorbing.json": json.dumps(absorbing).encode()}
