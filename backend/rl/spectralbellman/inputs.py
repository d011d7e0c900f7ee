"""The inputs of the Spectral Bellman Method: the ``mdp_json`` kind (a user's finite MDP as JSON), its examples (one
small valid file and valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and the
presets the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``mdp_json`` | ``backend.rl.spectralbellman.mdps.read_mdp_json`` | JSON: states, actions, ``P[s][a][s']``, ``R[s][a]``, gamma | 2 MB, 2-200 states, 1-10 actions, rows sum to 1 | spectralbellman page; ``spectralbellman run/spectrum/represent --mdp`` |

``PRESETS``: the built-in environments (:data:`backend.rl.spectralbellman.mdps.ENVS`: lowrank, fullrank, deepsea,
chain, gridworld).
"""

from __future__ import annotations

import json

from ...io.registry import MB, InputKind, declare
from .mdps import ENVS

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="mdp_json",
        what="an MDP file",
        decoder="backend.rl.spectralbellman.mdps:read_mdp_json",
        extensions=("json",),
        max_bytes=2 * MB,
        limits="JSON object with states (2-200), actions (1-10), P[s][a][s'] (rows sum to 1, no negatives), R[s][a], "
        "gamma in [0, 1]; optional start, horizon (1-500), terminal; at most 2 MB",
        family="json",
    ),
)
PRESETS = ENVS


def mdp_json(seed: int = 0) -> bytes:
    """A 4-state chain MDP with a noisy right move."""
    from .mdps import example_json

    return example_json(seed)


def mdp_json_odd() -> dict[str, bytes]:
    """Valid-but-odd MDP files: CRLF line ends, a byte-order mark, rows summing to one within the tolerance, an
    absorbing two-state MDP."""
    ex = json.loads(mdp_json())
    near = json.loads(mdp_json())
    near["P"][0][1] = [p * (1 + 5e-7) for p in near["P"][0][1]]  # within the 1e-6 tolerance: renormalised
    absorbing = {"states": 2, "actions": 1, "P": [[[0.0, 1.0]], [[0.0, 1.0]]], "R": [[1], [0]], "gamma": 1,
                 "terminal": [1]}
    return {"crlf.json": json.dumps(ex, indent=1).replace("\n", "\r\n").encode(),
            "bom.json": b"\xef\xbb\xbf" + mdp_json(1), "near_one_rows.json": json.dumps(near).encode(),
            "absorbing.json": json.dumps(absorbing).encode()}
