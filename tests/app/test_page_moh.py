"""AppTest of the MoH page: opens with the shipped evolution drawn and nothing run, solves a random instance, an
uploaded TSPLIB file and uploaded bin items, refuses a bad upload with a message, and runs the light evolution with
the hand-written edit operator (the page says which meta operator ran and shows the optimiser programs as code)."""

from __future__ import annotations

from backend.io import registry
from tests.app.conftest import Widget, open_page


def _button(at, label: str):  # noqa: ANN001, ANN202
    return next(b for b in at.button if b.label == label)


def test_page_opens_with_the_shipped_evolution() -> None:
    at = open_page("moh", timeout=60)
    assert not at.exception, at.exception
    assert not at.session_state["moh_result"]
    assert len(at.get("plotly_chart")) == 2  # gap vs size, evolution progress
    assert any("hand-written structural edits" in m.value for m in at.markdown)
    assert any("What the meta level may change" in m.value for m in at.markdown)
    assert any("Evolved heuristics as code" in m.value for m in at.markdown)
    assert any(c.value.startswith("(optimiser") for c in at.code)  # the winning optimiser program
    assert any("What the LM operator adds" in m.value and "valid new programs per call" in m.value for m in at.markdown)
    stats = next(d for d in at.dataframe if "MoH against" in d.value.columns).value
    assert len(stats) == 3 and set(stats["MoH against"]) >= {"Tuned constant (d_cur - c * avg_rest)"}
    assert any("does **not** beat farthest insertion" in i.value or "beats farthest" in i.value for i in at.info)


def test_solve_uploads_and_errors() -> None:
    at = open_page("moh", timeout=120)
    at.select_slider(key="moh_n").set_value(100).run()
    _button(at, "Solve with the MoH heuristic and the references").click().run()
    assert not at.exception, at.exception
    r = at.session_state["moh_result"]["solve"]
    assert r["kind"] == "tsp" and sorted(r["tours"]["moh"]) == list(range(100))
    assert r["gaps"]["lkh"] == 0.0 and r["gaps"]["moh"] > 0
    assert len(at.get("plotly_chart")) == 3
    at.radio(key="moh_src").set_value("upload a TSPLIB file").run()
    lines = registry.example("tsplib").decode().splitlines()
    lines[7] = "2 nan 3.0"
    at.file_uploader(key="moh_upload").set_value(("nan.tsp", "\n".join(lines).encode(), "text/plain")).run()
    assert any("NaN" in e.value for e in at.error)
    at.file_uploader(key="moh_upload").set_value(("ex.tsp", registry.example("tsplib"), "text/plain")).run()
    assert not at.error
    _button(at, "Solve with the MoH heuristic and the references").click().run()
    assert not at.exception
    assert at.session_state["moh_result"]["solve"]["name"] == "ex.tsp"
    at.radio(key="moh_src").set_value("upload bin items").run()
    at.file_uploader(key="moh_bins_upload").set_value(("b.csv", b"size\n10\n0\n5\n6\n7\n", "text/csv")).run()
    assert any("positive" in e.value for e in at.error)
    at.file_uploader(key="moh_bins_upload").set_value(("b.csv", registry.example("bin_items"), "text/csv")).run()
    _button(at, "Solve with the MoH heuristic and the references").click().run()
    r = at.session_state["moh_result"]["solve"]
    assert r["kind"] == "bins" and r["bins"]["moh"] >= r["l1"]
    assert len(at.get("plotly_chart")) == 2 + 1 + 1  # shipped, bins, and the run-history comparison (3 runs)


def test_light_evolution_with_the_edit_operator() -> None:
    at = open_page("moh", timeout=180)
    _button(at, "Evolve").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    e = at.session_state["moh_result"]["evolve"]
    assert e["operator"]["meta_operator"] == "edits"
    assert set(e["variants"]) == {"moh", "single_size", "no_meta", "tuned_constant"}
    assert sum("hand-written structural edits" in m.value for m in at.markdown) == 2
    assert sum(c.value.startswith("(optimiser") for c in at.code) >= 1 + 3  # shipped winner + each search variant
    assert len(at.get("plotly_chart")) == 4


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("moh", "tsplib", "moh_upload", [("radio", "moh_src", "upload a TSPLIB file")], bad="bad_nul_bytes.tsp",
           odd="odd_crlf.tsp"),
    Widget("moh", "bin_items", "moh_bins_upload", [("radio", "moh_src", "upload bin items")], bad="bad_utf16.csv",
           odd="odd_no_header.csv"),
]


def test_page_job_gives_the_cli_numbers() -> None:
    """One job, two callers: the page's solve job (with the page's references) at the golden's settings gives the
    golden's tour, length and gap."""
    import json
    from pathlib import Path

    from backend.heuristics.moh import jobs as J
    from backend.heuristics.moh.references import CONSTRUCTIONS, GAP_REFERENCE

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "moh.json").read_text())
    argv, want = golden["argv"], golden["expected"]
    program, n = argv[argv.index("--program") + 1], int(argv[argv.index("--n") + 1])
    got = J.run_solve(None, J.SolveConfig(program, n, 0, (*CONSTRUCTIONS, GAP_REFERENCE)))
    assert got["name"] == want["instance"] and got["n"] == want["n"]
    assert got["tours"]["moh"] == want["tour"]
    assert got["lengths"]["moh"] == want["length"] and got["lengths"]["lkh"] == want["lkh_length"]
    assert got["gaps"]["moh"] == want["gap_to_lkh_pct"]


def test_job_and_config_pickle() -> None:
    import pickle

    from backend.heuristics.moh import jobs as J

    cfg = J.SolveConfig("d_cur", 30, 1, ("farthest_insertion", "lkh"))
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert pickle.loads(pickle.dumps(J.run_solve)) is J.run_solve
    ecfg = J.EvolveConfig(sizes=(20, 50), budget=12, generations=1, meta_population=3, eval_sizes=(200,))
    assert pickle.loads(pickle.dumps(ecfg)) == ecfg
    assert pickle.loads(pickle.dumps(J.run_evolve)) is J.run_evolve
