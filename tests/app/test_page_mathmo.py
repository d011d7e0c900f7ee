"""AppTest of the MATHMO page: opens instantly, runs the six strategies on the default generated instance (served
from the recorded log), redraws the front on an objective change without recomputing, runs on an uploaded instance
and refuses bad instances."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_page_opens_without_running_anything() -> None:
    at = open_page("mathmo", timeout=60)
    assert not at.exception
    assert not at.session_state["mathmo_result"]
    assert not at.get("plotly_chart")


def test_generated_search_and_objective_switch() -> None:
    at = open_page("mathmo", timeout=120)
    at.slider(key="mathmo_rounds").set_value(8)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["mathmo_result"]["run"]
    assert set(r["strategies"]) == {"pareto-ucb", "random-framework", "flat", "no-surrogate", "random-search",
                                    "nsga2"}
    assert any("finds the largest front" in m.value for m in at.markdown)
    assert all(len(s["hv"]) == 8 and 0 <= s["final_hv"] <= 1 + 1e-9 for s in r["strategies"].values())
    assert r["config"]["operator"] == "grid"
    assert len(at.get("plotly_chart")) == 2  # hypervolume curves, fronts
    before = r["strategies"]["pareto-ucb"]["hv"]
    at.selectbox(key="mathmo_y").set_value("effort").run()
    assert not at.exception
    assert at.session_state["mathmo_result"]["run"]["strategies"]["pareto-ucb"]["hv"] == before
    assert len(at.get("download_button")) == 2


def test_upload_instance_and_errors() -> None:
    at = open_page("mathmo", timeout=120)
    at.radio(key="mathmo_source").set_value("Upload a CSV").run()
    assert at.button[0].disabled
    neg = b"kind,x,y,amount,fixed_cost\nfacility,0,0,10,1\nfacility,1,1,10,1\ncustomer,0.5,0.5,-3,\ncustomer,0,1,2,\n"
    at.file_uploader(key="mathmo_upload").set_value(("neg.csv", neg, "text/csv")).run()
    assert any("positive" in e.value for e in at.error)
    nan = b"kind,x,y,amount,fixed_cost\nfacility,nan,0,10,1\nfacility,1,1,10,1\ncustomer,0.5,0.5,3,\ncustomer,0,1,2,\n"
    at.file_uploader(key="mathmo_upload").set_value(("nan.csv", nan, "text/csv")).run()
    assert any("missing, non-numeric or infinite" in e.value for e in at.error)
    rows = ["kind,x,y,amount,fixed_cost"] + [f"facility,{i / 5:.2f},{(i * 3 % 5) / 5:.2f},{30 + 5 * i},{10 + i}"
                                             for i in range(5)]
    rows += [f"customer,{(i * 7 % 11) / 11:.3f},{(i * 5 % 13) / 13:.3f},{3 + i % 6}," for i in range(14)]
    at.file_uploader(key="mathmo_upload").set_value(("sites.csv", "\n".join(rows).encode(), "text/csv")).run()
    assert not at.error
    at.slider(key="mathmo_rounds").set_value(6)
    at.multiselect(key="mathmo_strategies").set_value(["pareto-ucb", "flat"])
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["mathmo_result"]["run"]
    assert r["instance"]["facilities"] == 5 and r["instance"]["customers"] == 14


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("mathmo", "facility_csv", "mathmo_upload", [("radio", "mathmo_source", "Upload a CSV")],
           bad="bad_latin1.csv", odd="odd_customers_first.csv"),
]


def _strip_times(out: dict) -> dict:
    """The summary without its wall times (``grid_seconds``, each strategy's ``seconds``, each model run's)."""
    out = {k: v for k, v in out.items() if k not in ("grid_seconds", "provenance", "seed")}
    out["strategies"] = {s: {**{k: v for k, v in r.items() if k != "seconds"},
                             "rows": [{k: v for k, v in m.items() if k != "seconds"} for m in r["rows"]]}
                         for s, r in out["strategies"].items()}
    return out


def test_page_job_gives_the_cli_numbers() -> None:
    """One job, two callers: the page's job at the CLI's search settings gives the CLI's numbers, and the golden's
    registry tables are the registries the page offers."""
    import contextlib
    import io
    import json
    from pathlib import Path

    from backend.__main__ import main as cli
    from backend.search.mathmo import jobs as J
    from backend.search.mathmo.bilevel import OPERATORS, STRATEGIES

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "mathmo.json").read_text())["expected"]
    assert golden["strategies"] == STRATEGIES.table() and golden["operators"] == OPERATORS.table()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(["mathmo", "search", "--rounds", "6", "--json"])
    assert code == 0
    got = J.run_search(None, J.SearchConfig(rounds=6))
    assert _strip_times(json.loads(json.dumps(got))) == _strip_times(json.loads(buf.getvalue()))


def test_job_and_config_pickle() -> None:
    import pickle

    from backend.search.mathmo import jobs as J

    cfg = J.SearchConfig(rounds=5, strategies=("flat",), facilities=4, customers=10)
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert pickle.loads(pickle.dumps(J.run_search)) is J.run_search
    assert pickle.loads(pickle.dumps(J.GridConfig())) == J.GridConfig()
    assert pickle.loads(pickle.dumps(J.run_grid)) is J.run_grid
