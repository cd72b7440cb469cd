"""The layout: one package per paper under hanzilm.papers; paper packages do not import each other, and the
shared modules below them import no paper (only `hanzilm.cli`, which sits above the papers, does)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hanzilm
from hanzilm.profiles import CHAPTERS, PROFILES

PACKAGE = Path(hanzilm.__file__).parent
BOOK = PACKAGE.parents[1] / "book"
ABOVE_PAPERS = {"hanzilm.cli"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved, lazy ones included)."""
    module = _module(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            out.add(name)
            out |= {f"{name}.{a.name}" for a in node.names}  # `from . import experiment`
    return out


def _paper_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["hanzilm", "papers"] else None


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_one_package_per_chapter():
    papers = {p.name for p in (PACKAGE / "papers").iterdir() if (p / "__init__.py").is_file()}
    assert papers == set(CHAPTERS)
    chapters = {p.name for p in BOOK.iterdir() if p.is_dir() and (p / "index.md").is_file()}
    assert chapters == set(CHAPTERS), "book chapter folders are named like the paper packages"
    for profile in PROFILES.values():
        assert set(profile.overrides) <= set(CHAPTERS), f"profile {profile.name}: keys are chapter names"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_respect_the_layout(path):
    module = _module(path)
    own = _paper_of(module)
    papers = {p for p in map(_paper_of, _imports(path)) if p}
    if module in ABOVE_PAPERS:
        return
    if own is None:
        assert not papers, f"{module} is shared but imports the paper package(s) {sorted(papers)}"
    else:
        assert papers <= {own}, f"{module} imports another paper's package: {sorted(papers - {own})}"


def test_the_checker_sees_violations(tmp_path, monkeypatch):
    """The check itself: a shared module importing a paper and a paper importing another are both caught."""
    fake = tmp_path / "hanzilm"
    (fake / "papers" / "mmtnn").mkdir(parents=True)
    (fake / "store.py").write_text("from .papers.mslm import model\n")
    (fake / "papers" / "mmtnn" / "x.py").write_text("def f():\n    from ..backpack.gpt import GPT\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert {_paper_of(n) for n in _imports(fake / "store.py")} >= {"mslm"}
    assert "backpack" in {_paper_of(n) for n in _imports(fake / "papers" / "mmtnn" / "x.py")}


def _cycles(modules: list[Path]) -> list[list[str]]:
    """The import circles among `modules` (lazy imports included; a module's import of its own package's
    `__init__` is not an edge): each a strongly connected set of more than one module."""
    names = {_module(p): p for p in modules}
    graph = {m: sorted(i for i in _imports(p) if i in names and i != m and not m.startswith(i + "."))
             for m, p in names.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    assert _cycles(MODULES) == []


def test_the_circle_check_sees_a_lazy_circle(tmp_path, monkeypatch):
    fake = tmp_path / "hanzilm"
    (fake / "papers" / "mmtnn").mkdir(parents=True)
    (fake / "papers" / "mmtnn" / "experiment.py").write_text("def f():\n    from .plan import runs\n")
    (fake / "papers" / "mmtnn" / "plan.py").write_text("from .tables import TABLE5\n")
    (fake / "papers" / "mmtnn" / "tables.py").write_text("from . import experiment as ex\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert _cycles(sorted(fake.rglob("*.py"))) == [["hanzilm.papers.mmtnn.experiment", "hanzilm.papers.mmtnn.plan",
                                                    "hanzilm.papers.mmtnn.tables"]]


def test_no_shared_module_loads_a_module_by_name():
    """`importlib.import_module` hides an import from the layout checks above: a shared module reaching a paper
    so would be an upward arrow no test sees."""
    shared = [p for p in MODULES if _paper_of(_module(p)) is None and _module(p) not in ABOVE_PAPERS]
    assert not [str(p.relative_to(PACKAGE)) for p in shared if "import_module(" in p.read_text(encoding="utf-8")]


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_of_the_package_is_longer_than_80_lines():
    long = [f"{p.relative_to(PACKAGE)}:{f.lineno} {f.name} ({f.end_lineno - f.lineno + 1} lines)"
            for p in sorted(PACKAGE.rglob("*.py")) for f in _functions(ast.parse(p.read_text(encoding="utf-8")))
            if f.end_lineno - f.lineno + 1 > 80]
    assert not long, long


def _comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    out = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
           if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            out.append((body[0].lineno, body[0].value.value))
    return out


def test_no_dated_measurement_or_commit_hash_in_the_code_comments():
    """Measurements and their history belong in benchmark outputs, result files and commit messages."""
    import re

    pattern = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
    found = [f"{p.relative_to(PACKAGE)}:{line}: {m.group()}" for p in sorted(PACKAGE.rglob("*.py"))
             for line, text in _comments_and_docstrings(p) for m in pattern.finditer(text)]
    assert not found, found


def test_the_readme_is_short():
    assert len((PACKAGE.parents[1] / "README.md").read_text(encoding="utf-8").splitlines()) <= 120
