"""nbval really compares: with our sanitize config, a changed number in a re-executed notebook fails."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")


def _notebook(path: Path, code: str, printed: str) -> None:
    cell = nbformat.v4.new_code_cell(code, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def _nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                           "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE), str(path)],
                          capture_output=True, text=True, timeout=300, cwd=path.parent)


@pytest.mark.parametrize("code, ok", [("print(f'F1 {93.5:.4f} in 12 s at /x/results/a.csv')", True),
                                      ("print(f'F1 {93.6:.4f} in 15 s at /y/results/a.csv')", False)])
def test_changed_number_fails(tmp_path, code, ok):
    nb = tmp_path / "t.ipynb"
    _notebook(nb, code, "F1 93.5000 in 3 s at /elsewhere/results/a.csv\n")
    proc = _nbval(nb)
    assert (proc.returncode == 0) is ok, proc.stdout[-2000:]
    if not ok:
        assert "93.6000" in proc.stdout  # failed on the number, not on something else
