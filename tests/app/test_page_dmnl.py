"""AppTest of the DMNL page: opens instantly, runs the bandits on the small preset, redraws the assortment chips
without recomputing, runs on an uploaded item table and refuses bad tables. The page's greedy check (``jobs.run_greedy``)
gives the numbers of the CLI golden, and the page's jobs and configs pickle."""

from __future__ import annotations

import json
import pickle

from backend.bandits.dmnl import jobs
from backend.bandits.dmnl.inputs import item_table, preset
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("dmnl", timeout=60)
    assert not at.exception
    assert not at.session_state["dmnl_result"]
    assert not at.get("plotly_chart")


def test_small_preset_run_and_round_slider() -> None:
    at = open_page("dmnl", timeout=120)
    at.radio(key="dmnl_items").set_value("small").run()
    at.slider(key="dmnl_k").set_value(3)
    at.select_slider(key="dmnl_rounds").set_value(200)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["dmnl_result"]["run"]
    rows = {row["agent"]: row for row in r["agents"]}
    assert set(rows) == {"ofu-dmnl", "ofu-dmnl-full", "ofu-mnl+", "ucb-mnl", "ts-mnl", "lsb-greedy"}
    assert r["optimum"] == "enumerated" and len(r["assortments"]["ofu-dmnl"]) == 200
    assert all(len(S) == 3 for S in r["assortments"]["ofu-dmnl"])
    assert len(at.get("plotly_chart")) == 4  # regret, chips, category mix, lambda estimates
    at.slider(key="dmnl_round").set_value(5).run()
    assert not at.exception
    assert at.session_state["dmnl_result"]["run"]["agents"] == r["agents"]  # redraw only
    assert len(at.get("download_button")) == 2


def test_upload_item_table_and_errors() -> None:
    at = open_page("dmnl", timeout=120)
    at.radio(key="dmnl_items").set_value("Upload a CSV").run()
    assert at.button[0].disabled
    one = b"price,category\n" + b"".join(f"{i},x\n".encode() for i in range(12))
    at.file_uploader(key="dmnl_upload").set_value(("one.csv", one, "text/csv")).run()
    assert any("single category" in e.value for e in at.error)
    bad = b"price,rating,category\n" + b"1,abc,x\n2,3,y\n" * 6
    at.file_uploader(key="dmnl_upload").set_value(("bad.csv", bad, "text/csv")).run()
    assert any("non-numeric" in e.value for e in at.error)
    rows = "".join(f"{i % 4 * 0.5:.2f},{(i * 7) % 5 - 2:.2f},{'abc'[i % 3]}\n" for i in range(15))
    at.file_uploader(key="dmnl_upload").set_value(("items.csv", ("price,rating,category\n" + rows).encode(),
                                                   "text/csv")).run()
    assert not at.error
    at.slider(key="dmnl_k").set_value(3)
    at.select_slider(key="dmnl_rounds").set_value(200)
    at.multiselect(key="dmnl_agents").set_value(["ofu-dmnl", "ucb-mnl"])
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["dmnl_result"]["run"]
    assert r["settings"]["catalogue"]["n_items"] == 15 and r["category_names"] == ["a", "b", "c"]


def test_uploaded_catalogue_with_names_and_a_preference_fitted_to_logged_choices() -> None:
    from backend.bandits.dmnl.inputs import choice_log

    at = open_page("dmnl", timeout=120)
    at.radio(key="dmnl_items").set_value("Upload a CSV").run()
    rows = "".join(f"SKU-{i},{i % 4 * 0.5:.2f},{(i * 7) % 5 - 2:.2f},{'abc'[i % 3]}\n" for i in range(12))
    at.file_uploader(key="dmnl_upload").set_value(("items.csv", ("sku,price,rating,category\n" + rows).encode(),
                                                   "text/csv")).run()
    at.radio(key="dmnl_pref").set_value("typed").run()
    at.text_input(key="dmnl_theta").set_value("1 2 3").run()
    assert any("needs 2 numbers" in e.value for e in at.error)
    at.radio(key="dmnl_pref").set_value("fitted to logged choices").run()
    at.file_uploader(key="dmnl_log_upload").set_value(("log.csv", choice_log(), "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    at.slider(key="dmnl_k").set_value(3)
    at.select_slider(key="dmnl_rounds").set_value(200)
    at.multiselect(key="dmnl_agents").set_value(["ofu-dmnl"])
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["dmnl_result"]["run"]
    assert "fitted to 12 logged rounds" in r["settings"]["catalogue"]["source"]
    assert all(n.startswith("SKU-") for n in r["item_names"])


def test_page_greedy_check_equals_cli_golden() -> None:
    """``tests/cli_golden/dmnl.json`` records ``dmnl greedy --instances 100``; the page's greedy section, set to 100
    instances, runs the same job and shows the same numbers."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "dmnl.json").read_text())
    assert golden["argv"] == ["dmnl", "greedy", "--instances", "100", "--json"]
    at = open_page("dmnl", timeout=60)
    at.select_slider(key="dmnl_instances").set_value(100)
    at.button(key="dmnl_greedy_go").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    got = at.session_state["dmnl_result"]["greedy"]
    expected = {k: v for k, v in golden["expected"].items() if k not in ("method", "action")}
    for path in golden["volatile"]:
        expected = strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_jobs_and_configs_pickle() -> None:
    """The page's jobs, their configs and a catalogue pickle (the Ray executor sends them to a worker)."""
    cat = preset("small", seed=3)
    config = jobs.BanditConfig(k=3, rounds=200, agents=("ofu-dmnl", "ucb-mnl"), seed=3, skip_unenumerable=True)
    fn, back_cat, back_cfg = pickle.loads(pickle.dumps((jobs.run_bandits, cat, config)))
    assert fn is jobs.run_bandits and back_cfg == config and (back_cat.features == cat.features).all()
    for job, cfg in ((jobs.run_greedy, jobs.GreedyConfig(100)), (jobs.run_runtime, jobs.RuntimeConfig())):
        assert pickle.loads(pickle.dumps((job, cfg))) == (job, cfg)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("dmnl", "item_table", "dmnl_upload", [("radio", "dmnl_items", "Upload a CSV")],
           bad="bad_latin1.csv", odd="odd_category_first.csv"),
    Widget("dmnl", "choice_log", "dmnl_log_upload",
           [("radio", "dmnl_items", "Upload a CSV"), ("file_uploader", "dmnl_upload", ("items.csv", item_table(),
                                                                                   "text/csv")),
            ("radio", "dmnl_pref", "fitted to logged choices")], bad="bad_latin1.csv", odd="odd_swapped.csv"),
]
