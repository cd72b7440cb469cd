"""The batch runner and the notebooks it runs: order, parameters, failure handling, nbval freshness."""

import io

import jupytext
import nbformat
import pytest

from hanzilm import runner
from hanzilm.paths import BOOK, RESULTS



@pytest.fixture(autouse=True)
def _committed(monkeypatch):
    """These runs stand for runs of committed code (the runner refuses others); the tests of that rule say so."""
    monkeypatch.setattr(runner.paths, "git_state", lambda: ("0123456789abcdef", False))

def _code(cells):
    return [c.source.strip() for c in cells
            if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])]


def test_toc_order_and_pairs():
    names = [str(p.relative_to(BOOK).with_suffix("")) for p in runner.toc_notebooks()]
    assert names[0] == "data/corpus_statistics"
    assert names[-1] == "results_at_a_glance"  # gathers what the others wrote, so it runs last
    for source in runner.toc_notebooks():
        assert source.with_suffix(".ipynb").is_file(), f"{source} has no paired .ipynb"
        nb = runner.build_notebook(source)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1 and "profile" in tagged[0].source and "seed" in tagged[0].source


@pytest.mark.parametrize("source", runner.toc_notebooks(), ids=lambda p: str(p.relative_to(BOOK)))
def test_smoke_reference_is_fresh(source):
    """nbval re-executes results/smoke/notebooks; that only tests the book if those are today's sources."""
    name = source.relative_to(BOOK).with_suffix(".ipynb")
    executed = RESULTS / "smoke" / "notebooks" / name
    assert executed.is_file(), f"{executed} missing: run `make paper PROFILE=smoke` and commit it"
    stale = _code(nbformat.read(executed, as_version=4).cells) != _code(jupytext.read(source).cells)
    assert not stale, f"{executed} is stale against {source}: run `make paper PROFILE=smoke ONLY={name.with_suffix('')}`"


def test_cpu_book_copy_matches_source():
    for source in runner.toc_notebooks():
        book_nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
        assert _code(book_nb.cells) == _code(jupytext.read(source).cells), f"{source}: .ipynb and .py differ"


def test_run_continues_past_a_failing_notebook(tmp_path, monkeypatch):
    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: bad\n- file: good\n")
    header = '# %% tags=["parameters"]\nprofile = "cpu"\nseed = 0\n\n'
    (book / "bad.py").write_text(header + "# %%\nraise ValueError('broken on purpose')\n")
    (book / "good.py").write_text(header + "# %%\nprint(profile, seed)\n")
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    out = io.StringIO()
    outcomes = runner.run("smoke", book=book, seed=7, stream=out)
    assert [(o.name, o.ok) for o in outcomes] == [("bad", False), ("good", True)]
    assert "broken on purpose" in outcomes[0].error
    # a replicate: its notebooks beside its results, apart from the profile's own
    executed = nbformat.read(tmp_path / "results/smoke/replicates/seed7/notebooks/good.ipynb", as_version=4)
    assert executed.cells[-1].outputs[0]["text"] == "smoke 7\n"
    assert not (tmp_path / "results/smoke/notebooks").exists()
    text = out.getvalue()
    assert "1/2 notebooks ok" in text and "FAILED" in text and "[2/2] good" in text
    assert "note: seed 7: every model trains at its seed + 7" in text  # a replicate, said before it trains
    assert not (book / "good.ipynb").exists()  # only the cpu run refreshes the book's copies

    # a run after the profile's own (a replicate's times are not the book's) has its timings: an ETA
    runner.run("smoke", book=book, only="good", stream=io.StringIO())
    outcomes = runner.run("smoke", book=book, only="good", stream=out)
    assert outcomes[0].ok and "ETA ?" not in out.getvalue().split("[1/1] good")[-1].splitlines()[0]


def test_cpu_run_has_one_home_for_executed_notebooks(tmp_path, monkeypatch):
    """The reference (cpu) run's executed notebook is the book's .ipynb, without the injected cell; nothing is
    kept under results/cpu/notebooks (one committed copy of each output)."""
    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: good\n")
    (book / "good.py").write_text('# %% tags=["parameters"]\nprofile = "cpu"\nseed = 0\n\n# %%\nprint(profile)\n')
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    assert runner.run("cpu", book=book, stream=io.StringIO())[0].ok
    copy = nbformat.read(book / "good.ipynb", as_version=4)
    assert copy.cells[-1].outputs[0]["text"] == "cpu\n"
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in copy.cells)
    assert not (tmp_path / "results" / "cpu" / "notebooks").exists()
    assert not list((tmp_path / "results" / "cpu").glob(".executing-*"))


def test_run_says_first_when_the_code_is_uncommitted(tmp_path, monkeypatch):
    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: good\n")
    (book / "good.py").write_text('# %% tags=["parameters"]\nprofile = "cpu"\nseed = 0\n\n# %%\nprint(profile)\n')
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    for state, said in ((("0123456789abcdef", True), True), (("0123456789abcdef", False), False),
                        ((None, None), False)):
        monkeypatch.setattr(runner.paths, "git_state", lambda state=state: state)
        out = io.StringIO()
        assert runner.run("smoke", book=book, stream=out, allow_dirty=True)[0].ok
        first = out.getvalue().splitlines()[0]
        assert first.startswith("note: the code differs from commit 0123456") is said, first
        assert ("git_dirty: true" in out.getvalue()) is said


def _one_page_book(tmp_path, code="print(profile, seed)"):
    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: good\n")
    (book / "good.py").write_text(f'# %% tags=["parameters"]\nprofile = "cpu"\nseed = 0\n\n# %%\n{code}\n')
    return book


def test_uncommitted_code_is_refused_unless_asked(tmp_path, monkeypatch):
    from hanzilm.errors import HanzilmError

    book = _one_page_book(tmp_path)
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(runner.paths, "git_state", lambda: ("0123456789abcdef", True))
    with pytest.raises(HanzilmError, match="commit first, or pass --allow-dirty"):
        runner.run("smoke", book=book, stream=io.StringIO())
    assert not (tmp_path / "results" / "smoke" / "notebooks").exists()  # nothing ran, nothing written


def test_a_second_run_of_a_profile_is_refused_while_the_first_writes(tmp_path, monkeypatch):
    from hanzilm.errors import HanzilmError

    book = _one_page_book(tmp_path)
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "results")
    with runner._profile_lock("smoke"):
        with pytest.raises(HanzilmError, match=r"another `hanzilm paper run --profile smoke` \(pid \d+"):
            runner.run("smoke", book=book, stream=io.StringIO())
        assert runner.run("cpu", book=book, stream=io.StringIO())[0].ok  # another profile is free
    assert runner.run("smoke", book=book, stream=io.StringIO())[0].ok   # and this one once the first ends


def test_a_replicate_writes_only_under_replicates(tmp_path, monkeypatch):
    code = ("from hanzilm.results import write_results\n"
            "from hanzilm.notebook import start\n"
            "import pandas as pd\n"
            "prof, run = start(profile, seed)\n"
            "write_results(pd.DataFrame({'metric': ['m'], 'ours': [seed]}), chapter='ch', name='t', run=run)")
    book = _one_page_book(tmp_path, code)
    results = tmp_path / "results"
    monkeypatch.setattr(runner, "RESULTS", results)
    (results / "cpu" / "ch").mkdir(parents=True)
    (results / "cpu" / "ch" / "t.csv").write_text("metric,ours\nm,0\n")
    before = (book / "good.py").read_text(), (results / "cpu" / "ch" / "t.csv").read_text()
    assert runner.run("cpu", book=book, seed=3, stream=io.StringIO())[0].ok
    assert ((book / "good.py").read_text(), (results / "cpu" / "ch" / "t.csv").read_text()) == before
    assert not (book / "good.ipynb").exists() and not (results / "cpu" / "timings.json").exists()
    assert (results / "cpu" / "replicates" / "seed3" / "ch" / "t.csv").read_text().splitlines()[-1] == "m,3"
    assert (results / "cpu" / "replicates" / "seed3" / "notebooks" / "good.ipynb").is_file()


def test_a_replicates_notebooks_read_its_own_tables_over_the_books(tmp_path, monkeypatch):
    from hanzilm import results as R

    monkeypatch.setattr(R, "RESULTS", tmp_path)
    for where, value in (("cpu/ch", 0), ("cpu/replicates/seed3/ch", 3)):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "t.csv").write_text(f"metric,ours\nm,{value}\n")
    monkeypatch.delenv("HANZILM_RESULTS_STAGING", raising=False)
    assert R.read_results("cpu")["ch/t"].ours.tolist() == [0]
    monkeypatch.setenv("HANZILM_REPLICATE", "seed3")
    assert R.read_results("cpu")["ch/t"].ours.tolist() == [3]
