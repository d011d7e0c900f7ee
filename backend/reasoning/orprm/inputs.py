"""OR-PRM's inputs: the ``lp_json`` kind (the user's own model in the five-tuple form, as JSON), its examples (one
small valid file and valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and
the presets of the page and the CLI.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``lp_json`` | ``backend.reasoning.orprm.formulation.read_lp_json`` | JSON: sets, parameters, variables, objective, constraints, optional label | 1 MB, 12 sets of 1-60 labels, 40 parameters, 600 variables, 600 rows; finite numbers; dimensions consistent with the sets; feasible and bounded | orprm page ("Your model"); ``orprm check FILE`` |

``PRESETS``: the dataset-cleaning runs (:class:`backend.reasoning.orprm.jobs.CleanConfig` settings);
``BON_PRESETS``: the best-of-N runs (:class:`backend.reasoning.orprm.jobs.BonConfig` settings); ``EXAMPLE_LP``: the
page's example model.
"""

from __future__ import annotations

import json
from typing import Any

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="lp_json", what="a model in the five-tuple form",
            decoder="backend.reasoning.orprm.formulation:read_lp_json", extensions=("json",), max_bytes=MB,
            limits="JSON object with sets (at most 12, each 1-60 labels), parameters (numbers, or {over, values} "
                   "with values shaped like their sets), variables, objective (max or min), constraints (<=, >=, "
                   "==); at most 600 variables and 600 rows; optional label (the recorded optimum); the model must "
                   "be feasible and bounded; at most 1 MB",
            family="json"),
)

PRESETS: dict[str, dict[str, Any]] = {
    "A noisy dataset: 150 problems, 36 % flawed": {"samples": 150, "flaw_rate": 0.36, "kinds": "all"},
    "Label errors only (misrecorded optima, missing constraints)": {
        "samples": 200, "flaw_rate": 0.5, "kinds": "wrong_optimum,missing_constraint"},
    "Errors no gate 1-2 is sure to catch (units, swaps, domains)": {
        "samples": 200, "flaw_rate": 0.6, "kinds": "unit_error,swapped,wrong_domain"},
}

BON_PRESETS: dict[str, dict[str, Any]] = {
    "Held-out flaw kinds (domain, swaps): 40 problems, N = 8": {"problems": 40, "n": 8, "kinds": "heldout"},
    "Training flaw kinds: 40 problems, N = 8": {"problems": 40, "n": 8, "kinds": "train", "problem_seed": 2000},
    "All flaw kinds: 30 problems, N = 16": {"problems": 30, "n": 16, "kinds": "all", "problem_seed": 3000},
}

_EXAMPLE = {
    "name": "furniture workshop",
    "sets": {"P": ["chairs", "tables", "desks"], "R": ["wood", "labour"]},
    "parameters": {"profit": {"over": ["P"], "values": [30, 100, 110]},
                   "use": {"over": ["R", "P"], "values": [[5, 20, 15], [2, 5, 8]]},
                   "avail": {"over": ["R"], "values": [400, 160]}},
    "variables": [{"name": "x", "over": ["P"], "domain": "integer", "lb": 0}],
    "objective": {"sense": "max", "terms": [{"var": "x", "coef": "profit"}]},
    "constraints": [{"name": "capacity", "over": ["R"], "terms": [{"var": "x", "coef": "use"}], "sense": "<=",
                     "rhs": "avail"}],
    "label": 2480,
}
EXAMPLE_LP = json.dumps(_EXAMPLE, indent=1)


def lp_json(seed: int = 0) -> bytes:
    """The example model (``seed`` scales its availabilities by 1 + seed)."""
    ex = json.loads(EXAMPLE_LP)
    ex["parameters"]["avail"]["values"] = [v * (1 + seed) for v in ex["parameters"]["avail"]["values"]]
    ex.pop("label") if seed else None
    return json.dumps(ex).encode()


def lp_json_odd() -> dict[str, bytes]:
    """Valid-but-odd models: CRLF line ends and a byte-order mark; a model of scalars only; a continuous one with
    '=>' and '=' senses and a maximise spelled out; an equality-only transport model; a label that is wrong."""
    scalar = {"variables": [{"name": "a"}, {"name": "b", "domain": "binary"}],
              "objective": {"sense": "min", "terms": [{"var": "a", "coef": 2}, {"var": "b", "coef": 3}]},
              "constraints": [{"name": "cover", "terms": [{"var": "a", "coef": 1}, {"var": "b", "coef": 4}],
                               "sense": ">=", "rhs": 2.5}]}
    words = json.loads(EXAMPLE_LP)
    words["objective"]["sense"] = "maximise"
    words["variables"][0]["domain"] = "CONTINUOUS"
    words["constraints"].append({"name": "balance", "terms": [{"var": "x", "coef": 1}], "sense": "=>", "rhs": 1})
    transport = {"sets": {"S": ["s1", "s2"], "D": ["d1", "d2"]},
                 "parameters": {"cost": {"over": ["S", "D"], "values": [[1, 2], [3, 1]]},
                                "supply": {"over": ["S"], "values": [5, 5]}, "demand": {"over": ["D"],
                                                                                   "values": [4, 6]}},
                 "variables": [{"name": "x", "over": ["S", "D"]}],
                 "objective": {"sense": "min", "terms": [{"var": "x", "coef": "cost"}]},
                 "constraints": [{"name": "out", "over": "S", "terms": [{"var": "x", "coef": 1}], "sense": "=",
                                  "rhs": "supply"},
                                 {"name": "in", "over": ["D"], "terms": [{"var": "x", "coef": 1}], "sense": "==",
                                  "rhs": "demand"}]}
    wrong = json.loads(EXAMPLE_LP)
    wrong["label"] = 1.0
    return {"crlf_bom.json": b"\xef\xbb\xbf" + EXAMPLE_LP.replace("\n", "\r\n").encode(),
            "scalars.json": json.dumps(scalar).encode(), "words.json": json.dumps(words).encode(),
            "transport.json": json.dumps(transport).encode(), "wrong_label.json": json.dumps(wrong).encode()}
