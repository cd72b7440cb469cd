"""The claims registry and its verdicts (hanzilm.claims)."""

import math
import random
import re

import pandas as pd
import pytest

from hanzilm import claims as C
from hanzilm.errors import HanzilmError
from hanzilm.results import read_results

# Every table of the three papers (their data tables included) and the Backpack's Appendix B.
PAPER_TABLES = {"backpack": {*map(str, range(1, 12)), "Appendix B"}, "mslm": {"1", "2", "3", "4"},
                "mmtnn": {"1", "2", "3", "4", "5", "6"}}


def _tables_named(label: str) -> set[str]:
    found = set(re.findall(r"\d+", label.split("/")[0])) if "Table" in label else set()
    return found | ({"Appendix B"} if "Appendix B" in label else set())


def test_registry_covers_every_table_of_the_papers():
    covered = {p: set() for p in PAPER_TABLES}
    for c in C.load_claims():
        covered[c.paper] |= _tables_named(c.table)
    for paper, tables in PAPER_TABLES.items():
        assert tables <= covered[paper], f"{paper}: no claim for tables {sorted(tables - covered[paper])}"


def test_every_claim_resolves_on_the_committed_cpu_results():
    verdicts = C.evaluate("cpu")
    assert set(verdicts[verdicts.kind == "finding"].verdict) <= set(C.VERDICTS)
    assert set(verdicts[verdicts.kind == "check"].verdict) <= set(C.CHECKS)
    unresolved = verdicts[verdicts.why.str.startswith("not computed")]
    assert unresolved.empty, unresolved[["id", "why"]].to_string()


def test_a_chapter_never_run_at_the_profile_is_an_error_not_a_page_of_untested_claims(tmp_path, monkeypatch):
    import shutil

    from hanzilm import results

    shutil.copytree(results.RESULTS / "cpu", tmp_path / "cpu")
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    assert len(C.evaluate("cpu")) == len(C.load_claims())
    shutil.rmtree(tmp_path / "cpu" / "mslm")
    with pytest.raises(HanzilmError, match=r"results/cpu/ has no .*mslm/table2.csv.*--profile cpu --only 'mslm/'"):
        C.evaluate("cpu")


def test_a_changed_result_changes_the_verdict():
    tables = {k: v.copy() for k, v in read_results("cpu").items()}
    tables["mmtnn/gain_spread"] = pd.DataFrame([{"dataset": "PKU", "gain": "tensor layer (Table 3)", "measure": "f1",
                                                 "source": "bootstrap", "metric": "sd", "ours": 0.1}])
    t3 = tables["mmtnn/table3"]
    row = (t3.model == "MMTNN") & (t3.metric == "f1")
    base = t3.loc[(t3.model == "NN + tag embedding") & (t3.metric == "f1"), "ours"].iloc[0]
    verdict = lambda: C.evaluate("cpu", tables=tables).set_index("id").verdict["mmtnn.t3.tensor_f1"]  # noqa: E731
    t3.loc[row, "ours"] = base + 3.0  # the tensor gain five times the paper's
    assert verdict() == "holds"
    t3.loc[row, "ours"] = base + 0.6  # the paper's gain
    assert verdict() == "reproduced"
    t3.loc[row, "ours"] = base + 0.15  # within twice its spread
    assert verdict() == "inconclusive"
    t3.loc[row, "ours"] = base - 1.0  # below the model without the tensor layer, beyond the spread
    assert verdict() == "fails"


def _claim(quantity, **kw):
    return C.Claim(id=kw.pop("id", "t.x"), paper="mmtnn", table="Table 3", claim="c", quantity=quantity, **kw)


def _table(rows):
    return {"ch/t": pd.DataFrame(rows, columns=["model", "selection", "metric", "ours", "paper"])}


A = "{ch/t:f1[model=A; selection=s1]}"
B = "{ch/t:f1[model=B; selection=s1]}"


def _table_with_spread(rows, sd):
    tables = _table(rows)
    if sd is not None:
        tables["ch/spread"] = pd.DataFrame([{"source": "sd over 3 seeds", "metric": "sd", "ours": sd}])
    return tables


SD = "{ch/spread:sd}"


@pytest.mark.parametrize("ours_a, expect, tol, sd, verdict", [
    (90.6, "> 0", "50%", 0.1, "reproduced"),     # gain 0.6 vs the paper's 0.5, beyond twice its sd
    (92.0, "> 0", "50%", 0.1, "holds"),          # gain 2.0: the direction only
    (89.0, "> 0", "50%", 0.1, "fails"),          # a loss of 1.0, beyond twice its sd
    (90.6, "> 0", "50%", 0.5, "inconclusive"),   # the gain is within twice its sd
    (89.5, "> 0", "50%", 0.5, "inconclusive"),   # ... and so is the loss: not a failure
    (90.6, "> 0", "50%", None, "inconclusive"),  # no measured spread: nothing resolved
    (90.6, "", "0.2", None, "reproduced"),       # no direction: the value alone, 0.6 vs 0.5 ± 0.2
    (91.0, "", "0.2", None, "fails"),            # 1.0 vs 0.5 ± 0.2
    (91.0, "", "0.2", 0.2, "fails"),             # ... 2.5 sd from it: off beyond its spread
    (91.0, "", "0.2", 0.3, "inconclusive"),      # ... but within twice its sd of the paper's value
    (90.6, "", "0.2", 0.25, "inconclusive"),     # inside the tolerance, but its sd is wider than it
    (90.55, "> 0", "20%", 0.2, "holds"),         # a resolved gain inside the tolerance, its sd wider than it
])
def test_verdicts(ours_a, expect, tol, sd, verdict):
    tables = _table_with_spread([("A", "s1", "f1", ours_a, 90.5), ("B", "s1", "f1", 90.0, 90.0)], sd)
    c = _claim(f"{A} - {B}", expect=expect, tol=tol, noise=SD if sd is not None else "")
    got = C.evaluate("p", [c], tables).iloc[0]
    assert got.verdict == verdict, got.why
    assert got.paper_value == pytest.approx(0.5)
    if sd is not None:
        assert got.spread == pytest.approx(sd) and got.spread_source == "sd over 3 seeds"


@pytest.mark.parametrize("better, ours, verdict", [
    ("higher", 67.2, "holds"),    # beyond the paper's 64.1 on its better side: never a failure
    ("higher", 60.0, "fails"),
    ("lower", 60.0, "holds"),
    ("", 67.2, "fails"),          # no better side stated: off by more than the tolerance
])
def test_a_value_beyond_the_paper_on_its_better_side_holds(better, ours, verdict):
    tables = _table([("A", "s1", "f1", ours, 64.1)])
    got = C.evaluate("p", [_claim(A, tol="3", better=better)], tables).iloc[0]
    assert got.verdict == verdict, got.why


def test_a_check_agrees_or_differs_and_is_counted_apart():
    tables = _table([("A", "s1", "f1", 100.0, 100.0), ("B", "s1", "f1", 90.0, 100.0)])
    got = C.evaluate("p", [_claim(A, id="t.a", tol="0", kind="check"), _claim(B, id="t.b", tol="2%", kind="check"),
                           _claim(f"{A} - {B}", id="t.f", expect="> 0")], tables)
    assert list(got.verdict) == ["agrees", "differs", "inconclusive"]
    counts = C.counts(got.assign(paper="mmtnn")).loc[C.PAPERS["mmtnn"]]
    assert counts["findings"] == 1 and counts["inconclusive"] == 1 and counts["checks agreeing"] == "1 of 2"


def test_a_typed_spread_is_refused(tmp_path):
    path = tmp_path / "claims.csv"
    row = dict.fromkeys(C.FIELDS, "") | {"id": "x.1", "paper": "mmtnn", "kind": "finding", "claim": "c",
                                          "quantity": A, "expect": "> 0", "noise": "0.036"}
    pd.DataFrame([row]).to_csv(path, index=False)
    with pytest.raises(HanzilmError, match=r"claims.csv:2: noise '0.036' is a typed number"):
        C.load_claims(path)


@pytest.mark.parametrize("ours_a, sd, verdict, edge", [
    (90.68, 0.05, "reproduced", "inside it by 0.02, less than its sd 0.05"),
    (90.72, 0.05, "fails", "outside it by 0.02, less than its sd 0.05"),  # as near the edge as 90.68, the other side
    (90.6, 0.05, "reproduced", ""),          # 0.1 inside the tolerance, more than the spread
    (90.68, None, "reproduced", ""),         # spread unknown: nothing to say
])
def test_a_value_at_the_tolerance_edge_says_that_another_run_may_cross_it(ours_a, sd, verdict, edge):
    tables = _table_with_spread([("A", "s1", "f1", ours_a, 90.5), ("B", "s1", "f1", 90.0, 90.0)], sd)
    got = C.evaluate("p", [_claim(f"{A} - {B}", tol="0.2", noise=SD if sd is not None else "")], tables).iloc[0]
    assert got.verdict == verdict
    assert (edge in got.why) if edge else ("sd" not in got.why), got.why


def test_the_same_number_on_both_sides_tests_nothing():
    tables = _table([("A", "s1", "f1", 69.1488, None), ("A", "s2", "f1", 69.1488, None)])
    c = _claim("{ch/t:f1[model=A; selection=s2]} - {ch/t:f1[model=A; selection=s1]}", expect="> 0")
    got = C.evaluate("p", [c], tables).iloc[0]
    assert got.verdict == "not tested" and "same number" in got.why


def test_two_models_with_the_same_score_tie_when_the_sides_are_independent():
    """Two models scored on the same 147 cloze items can get the same accuracy: a zero effect, not a copy; with
    its spread measured, the verdict is inconclusive, not a failure."""
    tables = _table_with_spread([("A", "s1", "f1", 0.1054, None), ("B", "s1", "f1", 0.1054, None)], 0.036)
    c = _claim(f"{A} - {B}", expect="> 0", noise=SD, independent="yes")
    got = C.evaluate("p", [c], tables).iloc[0]
    assert got.verdict == "inconclusive" and "within its spread" in got.why and got.ours == 0


def test_independent_is_yes_or_empty(tmp_path):
    path = tmp_path / "claims.csv"
    row = {f: "" for f in C.FIELDS} | {"id": "x", "paper": "mmtnn", "kind": "finding", "quantity": "1",
                                       "independent": "no"}
    path.write_text(",".join(C.FIELDS) + "\n" + ",".join(row[f] for f in C.FIELDS) + "\n", encoding="utf-8")
    with pytest.raises(HanzilmError, match=r"claims.csv:2: independent is 'yes' or empty, not 'no'"):
        C.load_claims(path)


def test_copied_rows_count_once():
    tables = _table([("A", "s1", "f1", 69.1488, None), ("B", "s1", "f1", 27.2451, None),
                     ("A", "s2", "f1", 69.1488, None), ("B", "s2", "f1", 27.2451, None)])
    first = _claim(f"{A} - {B}", id="t.s1", expect="> 0")
    copy = _claim("{ch/t:f1[model=A; selection=s2]} - {ch/t:f1[model=B; selection=s2]}", id="t.s2", expect="> 0")
    other = _claim(f"{B} - {A}", id="t.other", expect="< 0")  # the same rows read another way: still evidence
    got = C.evaluate("p", [first, copy, other], tables).set_index("id")
    assert got.loc["t.s1", "verdict"] == "inconclusive" and got.loc["t.other", "verdict"] == "inconclusive"
    assert got.loc["t.s2", "verdict"] == "not tested" and "t.s1" in got.loc["t.s2", "why"]


def test_missing_rows_are_not_tested_and_untested_claims_say_why():
    tables = _table([("A", "s1", "f1", 90.0, None)])
    got = C.evaluate("p", [_claim(f"{A} - {B}", expect="> 0"),
                           _claim("", id="t.u", untested="data not obtainable")], tables)
    assert list(got.verdict) == ["not tested", "not tested"]
    assert "not computed at profile p" in got.why[0] and got.why[1] == "data not obtainable"


def test_a_value_may_contain_semicolons():
    ref = C.Ref.parse("mmtnn/table3:f1[dataset=PKU; model=NN (Zheng-style; transition scores)]", "here")
    assert ref.where == (("dataset", "PKU"), ("model", "NN (Zheng-style; transition scores)"))


@pytest.mark.parametrize("quantity, message", [
    ("__import__('os')", "not allowed"),
    ("{ch/t:f1[model=A]} +", "not an expression"),
    ("{nonsense}", "chapter/table:metric"),
])
def test_bad_registry_rows_are_refused_with_file_and_line(tmp_path, quantity, message):
    path = tmp_path / "claims.csv"
    row = dict.fromkeys(C.FIELDS, "") | {"id": "x.1", "paper": "mmtnn", "table": "Table 3", "kind": "finding",
                                          "claim": "c", "quantity": quantity}
    pd.DataFrame([row]).to_csv(path, index=False)
    with pytest.raises(HanzilmError, match=rf"claims.csv:2: .*{message}"):
        C.load_claims(path)


def test_an_ambiguous_reference_is_an_error():
    tables = _table([("A", "s1", "f1", 90.0, None), ("A", "s2", "f1", 91.0, None)])
    with pytest.raises(HanzilmError, match="matches 2 rows"):
        C.evaluate("p", [_claim("{ch/t:f1[model=A]}", tol="1")], tables)


def test_counts_per_paper():
    verdicts = C.evaluate("cpu")
    t = C.counts(verdicts)
    assert list(t.columns) == [*C.VERDICTS, "findings", "checks agreeing"]
    assert t["findings"].sum() == (verdicts.kind == "finding").sum()
    assert len(verdicts) == len(C.load_claims())


def _glued(notebook):
    import json

    out = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                out[name] = o["data"].get("application/papermill.record/text/plain")
    return out


def test_the_glance_page_shows_the_registry_verdicts_on_the_cpu_run():
    """The committed glance notebook's counts (pasted into the chapter pages) and results/cpu/summary/claims.csv
    are what the registry gives on results/cpu now, settled across the replicates: a changed result or claim
    needs a re-run of the page."""
    from hanzilm.paths import ROOT

    verdicts = C.settle(C.evaluate("cpu"), C.stability("cpu"))
    glued = _glued(ROOT / "book" / "results_at_a_glance.ipynb")
    for paper, row in C.counts(verdicts).rename(index={v: k for k, v in C.PAPERS.items()}).iterrows():
        for verdict in C.VERDICTS:
            assert glued[f"{paper}_{verdict.replace(' ', '_')}"] == str(row[verdict]), (paper, verdict)
        assert glued[f"{paper}_claims"] == str(row["findings"])
    written = pd.read_csv(ROOT / "results" / "cpu" / "summary" / "claims.csv")
    assert list(written.verdict) == list(verdicts.verdict)


def test_a_claim_short_of_its_scale_requirement_is_inconclusive_at_this_scale():
    """The PKU RSLM's claims need 4 M training characters (the authors' log): below it the verdict says how far
    the run got; at it the claim is judged as any other."""
    requires = ("{ch/t:chars[model=A; selection=s1]} >= 4000000 | the skill appears only after 4 M characters; "
                "training characters")
    claim = _claim(f"{A} - {B}", expect="> 0", requires=requires, noise=SD)
    rows = [("A", "s1", "f1", 60.0, None), ("B", "s1", "f1", 50.0, None)]
    short = C.evaluate("p", [claim], _table_with_spread(rows + [("A", "s1", "chars", 819200.0, None)], 1.0))
    assert short.verdict[0] == "inconclusive"
    assert short.why[0] == ("not resolved at this profile: the skill appears only after 4 M characters; training "
                            "characters: ours 819,200, needs >= 4,000,000")
    enough = C.evaluate("p", [claim], _table_with_spread(rows + [("A", "s1", "chars", 4096000.0, None)], 1.0))
    assert enough.verdict[0] == "holds"


def test_the_pku_rslm_claims_carry_the_authors_4m_character_requirement():
    ids = {c.id for c in C.load_claims() if c.requires}
    assert {"mslm.pku.unsup.mslm_over_rslm", "mslm.pku.light.mslm_over_rslm",
            "mslm.pku.light_selection_gain.rslm"} <= ids
    assert all(i.startswith(("mslm.", "backpack.")) for i in ids)  # the Backpack's: settled along training
    # the paper's text number at rate 1e-3 is judged only on a cell trained at that rate
    assert "mslm.pku.unsup.mslm_lr1e-3" in ids


def test_a_malformed_requirement_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "claims.csv"
    row = dict.fromkeys(C.FIELDS, "") | {"id": "x.1", "paper": "mmtnn", "table": "Table 3", "claim": "c",
                                          "kind": "finding", "quantity": A, "requires": f"{A} >= 5"}   # no reason
    pd.DataFrame([row]).to_csv(path, index=False)
    with pytest.raises(HanzilmError, match=r"claims.csv:2: claim x.1: requires .* is not like"):
        C.load_claims(path)


def test_a_paper_without_results_gets_a_sentence_instead_of_a_figure():
    """A profile where one chapter has not run yet: its section says so instead of failing on empty axes."""
    glance_table = pd.DataFrame({"table": ["mmtnn/table3"], "ours": [93.0], "paper": [94.0]})
    fig, dropped = C.comparison_figure(glance_table, "backpack")
    assert fig is None and dropped == 0
    fig, dropped = C.comparison_figure(glance_table, "mmtnn")
    assert fig is not None and dropped == 0


def test_a_verdict_planted_in_a_page_is_found_and_the_registrys_own_are_not():
    page = ("<p>The tensor layer adds 0.6 F1.</p>"
            "<table class='hanzilm-claims'><tr><td>fails</td><td>within its spread</td></tr></table>"
            "<p class='hanzilm-verdicts'>3 are reproduced, 2 hold.</p>"
            f"{C.rules_html()}{C.summary_html(pd.DataFrame(columns=['paper', 'kind', 'verdict']), 'mmtnn')}")
    assert C.stray_verdicts(page) == []
    planted = page.replace("adds 0.6 F1.", "adds 0.6 F1, so the paper's gain is reproduced.")
    assert C.stray_verdicts(planted) == ["The tensor layer adds 0.6 F1, so the paper's gain is reproduced."]


def test_a_replicate_flip_is_counted(tmp_path, monkeypatch):
    """A replicate's tables replace its chapter's; a claim read as holding in one run and failing in the other
    is a flip, one that moves to or from inconclusive is not."""
    from hanzilm import results

    rows = pd.DataFrame([("A", "s1", "f1", 92.0, 90.5), ("B", "s1", "f1", 90.0, 90.0)],
                        columns=["model", "selection", "metric", "ours", "paper"])
    spread = pd.DataFrame([{"source": "sd over 3 seeds", "metric": "sd", "ours": 0.1}])
    claim = _claim("{mmtnn/t:f1[model=A; selection=s1]} - {mmtnn/t:f1[model=B; selection=s1]}", id="t.h",
                   expect="> 0", noise="{mmtnn/spread:sd}")
    monkeypatch.setattr(C, "load_claims", lambda path=C.CLAIMS: [claim])
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    replicate = tmp_path / "p" / C.REPLICATES / "fp32" / "mmtnn"
    replicate.mkdir(parents=True)
    tables = {"mmtnn/t": rows, "mmtnn/spread": spread}
    spread.to_csv(replicate / "spread.csv", index=False)
    rows.assign(ours=[88.0, 90.0]).to_csv(replicate / "t.csv", index=False)
    got = C.stability("p", tables).set_index("id")
    assert got.loc["t.h", "book"] == "holds" and got.loc["t.h", "replicate_verdict"] == "fails"
    assert got.loc["t.h", "flip"] and got.loc["t.h", "moved"]
    assert (got.loc["t.h", "book_value"], got.loc["t.h", "replicate_value"]) == (2.0, -2.0)
    page = C.stability_html(got.reset_index())
    assert "holds (2 ± 0.1)" in page and "fails (-2 ± 0.1)" in page
    rows.assign(ours=[90.1, 90.0]).to_csv(replicate / "t.csv", index=False)
    got = C.stability("p", tables).set_index("id")
    assert got.loc["t.h", "replicate_verdict"] == "inconclusive" and not got.loc["t.h", "flip"]


def test_a_scale_gate_quotes_the_rows_its_why_names():
    """The Backpack's gate: a quantity still moving over the last doubling of training by more than twice its sd
    is inconclusive, and the why says how many tokens we trained on."""
    rows = [("A", "s1", "f1", 0.3, None), ("A", "s1", "change", 0.2, None), ("A", "s1", "tokens_m", 6.144, None)]
    requires = ("abs({ch/t:change[model=A; selection=s1]}) - 2 * {ch/spread:sd} < 0 | too small a scale: still "
                "moving (ours {ch/t:tokens_m[model=A; selection=s1]} M tokens)")
    claim = _claim(A, expect="> 0", noise=SD, requires=requires)
    got = C.evaluate("p", [claim], _table_with_spread(rows, 0.05)).iloc[0]
    assert got.verdict == "inconclusive" and got.ours == pytest.approx(0.3)
    assert got.why == ("not resolved at this profile: too small a scale: still moving (ours 6.14 M tokens): "
                       "ours 0.1, needs < 0")
    settled = C.evaluate("p", [claim], _table_with_spread(rows, 0.11)).iloc[0]
    assert settled.verdict == "holds"


# ---- the headlines ------------------------------------------------------------------------------------------

def test_every_registry_row_says_what_it_rests_on_and_quotes_it():
    claims = C.load_claims()
    heads = {h.id for h in C.load_headlines(claims=claims)}
    for c in claims:
        assert c.basis in C.BASES and c.quote, f"{c.id}: basis {c.basis!r}, quote {c.quote!r}"
        assert c.headline in heads | {""}, f"{c.id}: headline {c.headline!r} is not in headlines.csv"


def test_every_paper_has_headlines_each_with_a_verdict_a_reason_and_what_would_answer_it():
    heads = C.headlines(C.evaluate("cpu", require_all=False), "cpu")
    assert (heads.groupby("paper").size().reindex(list(C.PAPERS)) >= 4).all()
    for h in heads.itertuples():
        assert h.verdict in C.VERDICTS and h.reason.strip(), h.id
        assert h.answered or h.verdict == "not tested" or h.to_resolve.strip(), f"{h.id}: {h.verdict}, nothing to resolve it"


def _headline_file(tmp_path, decided_by):
    path = tmp_path / "headlines.csv"
    path.write_text("id,paper,headline,quote,cites,decided_by\n"
                    f"mmtnn.H1,mmtnn,the tensor helps,\"it helps\",§4,{decided_by}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("basis, headline, problem", [
    ("derived", "mmtnn.H1", "not a finding in the paper's words"),   # a derived ordering never decides one
    ("text", "", "sits under headline (none)"),
    ("text", "mmtnn.H1", None),
])
def test_a_headline_is_decided_only_by_a_sentence_of_the_paper_that_names_it(tmp_path, basis, headline, problem):
    claims = [_claim(A, id="t.gain", basis=basis, headline=headline, quote="q")]
    path = _headline_file(tmp_path, "t.gain")
    if problem is None:
        assert [h.decided_by for h in C.load_headlines(path, claims)] == ["t.gain"]
    else:
        with pytest.raises(HanzilmError, match=rf"headlines.csv:2: headline mmtnn.H1: .*{re.escape(problem)}"):
            C.load_headlines(path, claims)


@pytest.mark.parametrize("ours_a, sd, resolve", [
    (90.6, 0.1, ""),                                            # answered: nothing to resolve
    (90.6, 0.5, "about 9 seeds a cell where it has 3"),          # effect 0.6, sd 0.5: 3 x (2 x 0.5 / 0.6)^2 = 8.3
    (90.0, 0.5, "the effect is nil"),
])
def test_an_unanswered_headline_says_how_many_seeds_would_answer_it(ours_a, sd, resolve):
    tables = _table_with_spread([("A", "s1", "f1", ours_a, 90.5), ("B", "s1", "f1", 90.0, 90.0)], sd)
    c = _claim(f"{A} - {B}", id="t.gain", expect="> 0", tol="50%", noise=SD, basis="text", headline="mmtnn.H1",
               quote="q")
    head = C.Headline("mmtnn.H1", "mmtnn", "the gain", "q", "§4", "t.gain")
    got = C.headlines(C.evaluate("p", [c], tables), "p", [head], [c], tables).iloc[0]
    assert got.reason.startswith(f"ours {C._fmt(ours_a - 90.0)} ± {C._fmt(sd)}")
    assert resolve in got.to_resolve if resolve else got.to_resolve == "", got.to_resolve


def test_a_headline_unsettled_by_a_replicate_asks_for_seeds_read_together_not_fewer_seeds():
    tables = _table_with_spread([("A", "s1", "f1", 90.6, 90.5), ("B", "s1", "f1", 90.0, 90.0)], 0.1)
    c = _claim(f"{A} - {B}", id="t.gain", expect="> 0", tol="50%", noise=SD, basis="text", headline="mmtnn.H1",
               quote="q")
    head = C.Headline("mmtnn.H1", "mmtnn", "the gain", "q", "§4", "t.gain")
    verdicts = C.evaluate("p", [c], tables)
    stable = pd.DataFrame([{"replicate": "seed1", "id": "t.gain", "book": verdicts.verdict[0],
                            "replicate_verdict": "inconclusive", "replicate_value": 0.1, "replicate_spread": 0.3,
                            "moved": True}])
    got = C.headlines(C.settle(verdicts, stable), "p", [head], [c], tables).iloc[0]
    assert got.verdict == "inconclusive" and "not settled across seeds" in got.reason
    assert got.to_resolve.startswith("more seeds, read together with the replicates'"), got.to_resolve


@pytest.mark.parametrize("book, replicate, settled", [
    ("reproduced", "holds", "holds"),          # the direction agreed, the size did not
    ("reproduced", "inconclusive", "inconclusive"),
    ("holds", "fails", "inconclusive"),
    ("holds", "holds", "holds"),               # did not move: untouched
])
def test_a_verdict_that_moves_between_seeds_is_settled_by_neither(book, replicate, settled):
    verdicts = pd.DataFrame([{"id": "t.x", "verdict": book, "ours": 1.0, "spread": 0.1, "why": "w"}])
    stable = pd.DataFrame([{"replicate": "seed1", "id": "t.x", "book": book, "replicate_verdict": replicate,
                            "replicate_value": 0.5, "replicate_spread": 0.2, "moved": book != replicate}])
    got = C.settle(verdicts, stable).iloc[0]
    assert got.verdict == settled
    assert ("not settled across seeds" in got.why) is (book != replicate), got.why


def test_no_replicate_settles_nothing():
    verdicts = pd.DataFrame([{"id": "t.x", "verdict": "holds", "ours": 1.0, "spread": 0.1, "why": "w"}])
    stable = pd.DataFrame(columns=["replicate", "id", "book", "replicate_verdict", "replicate_value",
                                   "replicate_spread", "moved"])
    assert C.settle(verdicts, stable).equals(verdicts)


def test_quad_is_the_root_sum_square_the_noise_cells_wrote_out_by_hand():
    rng = random.Random(0)
    for _ in range(100):
        a, b, c = (rng.uniform(0, 5) for _ in range(3))
        assert C._compute("quad({x/t:m[k=a]}, {x/t:m[k=b]}, {x/t:m[k=c]})", [a, b, c]) == math.sqrt(a * a + b * b + c * c)
    assert C._compute("quad({x/t:m[k=a]}, {x/t:m[k=b]})", [3.0, 4.0]) == 5.0
