"""`make book` builds offline, with warnings as errors, and has a page for every chapter of the toc."""

import subprocess
import sys
from pathlib import Path

import yaml

from hanzilm.paths import BOOK


def _toc_files():
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [c["file"] for c in part["chapters"]]
    return files


def test_book_builds_with_every_page(tmp_path):
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(BOOK), "-W", "-n", "--keep-going", "--path-output", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html = tmp_path / "_build" / "html"
    for f in _toc_files():
        page = html / f"{f}.html"
        assert page.is_file(), f"no page for {f}"
    glance = (html / "results_at_a_glance.html").read_text()
    assert "mmtnn_table1" in glance  # the glance page shows the cpu results, not an empty table
