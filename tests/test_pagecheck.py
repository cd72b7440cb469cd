"""tools/pagecheck.py finds what a reader would see go wrong, and nothing else, on small pages made here."""

import struct
import sys
from pathlib import Path

import pytest

from hanzilm.paths import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import pagecheck  # noqa: E402

pytestmark = pytest.mark.skipif(pagecheck.may_skip(), reason="no chromium (make browser)")

# the theme's layout in miniature: a header and a sidebar with scroll containers of their own beside an
# article 600 px wide
PAGE = """<!doctype html><html><head><style>
body {{ margin: 0; display: flex; }}
header {{ position: fixed; top: 0; width: 100%; overflow-x: auto; white-space: nowrap; }}
nav {{ width: 250px; height: 300px; overflow: auto; }}
article.bd-article {{ width: 600px; padding: 0 20px; }}
.scroll {{ overflow-x: auto; }}
</style></head><body>
<header>{wide_header}</header>
<nav><div style="width: 2000px">a sidebar wider than itself</div></nav>
<article class="bd-article">{article}</article>
{after}
</body></html>"""


def _png(path: Path, width: int = 40, height: int = 30) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
    fig.savefig(path)
    plt.close(fig)


def _page(tmp_path: Path, name: str, article: str, after: str = "") -> Path:
    page = tmp_path / name
    page.write_text(PAGE.format(wide_header="x" * 400, article=article, after=after), encoding="utf-8")
    return page


def _size(png: str) -> tuple[int, int]:
    return struct.unpack(">II", Path(png).read_bytes()[16:24])


def test_a_page_that_fits_passes(tmp_path):
    _png(tmp_path / "ok.png")
    article = ('<p>Text and an image.</p><img src="ok.png">'
               '<div class="scroll"><table><tr><td>narrow</td></tr></table></div>'
               '<pre>short code</pre>'
               '<div style="height: 3000px"></div><img loading="lazy" src="ok.png">')
    report = pagecheck.check_page(_page(tmp_path, "good.html", article), screenshots=tmp_path / "shots")
    assert report["problems"] == [], report
    assert report["images"] == 2 and report["content_width"] == 600
    first, full = report["screenshots"]
    assert _size(first) == pagecheck.VIEWPORT
    assert _size(full)[0] == pagecheck.VIEWPORT[0] and _size(full)[1] >= 3000


def test_a_page_with_every_problem_is_flagged(tmp_path):
    article = ('<div class="scroll"><table><tr><td style="white-space: nowrap">' + "a wide table " * 80 + '</td></tr></table></div>'
               '<pre style="overflow-x: auto">' + "long_line " * 100 + '</pre>'
               '<img src="missing.png">'
               '<p>raw math: \\(E^\\top C(x)_\\ell\\)</p><span class="math">\\(x\\)</span>'
               '<script src="https://example.invalid/tracker.js"></script>')
    report = pagecheck.check_page(_page(tmp_path, "bad.html", article, after='<div style="min-width: 3000px">'
                                                                             'wider than the window</div>'))
    wide = [o["element"] for o in report["overflowing"]]
    assert any(w.startswith("table") for w in wide) and any(w.startswith("pre") for w in wide)
    assert report["document_overflow"] and report["document_culprits"]
    assert report["broken_images"] == ["missing.png"]
    assert len(report["raw_math"]) == 2 and report["mathjax"] is None
    assert report["external"] == ["https://example.invalid/tracker.js"]
    assert not any("nav" in w or "header" in w for w in wide)  # the sidebar and header scroll on their own
    assert len(report["problems"]) >= 7


def test_the_command_line_exits_1_on_a_problem(tmp_path, capsys):
    good = _page(tmp_path, "good.html", "<p>fine</p>")
    bad = _page(tmp_path, "bad.html", '<img src="missing.png">')
    assert pagecheck.main([str(good)]) == 0
    assert pagecheck.main([str(good), str(bad)]) == 1
    assert "image did not load: missing.png" in capsys.readouterr().err
    assert not list(tmp_path.glob(".pagecheck-*"))  # the probed copies are removed


def test_a_redirect_page_is_checked_where_it_sends_the_reader(tmp_path):
    """The book's index.html only redirects (a meta refresh): its report is the page it sends to, not 'no
    report from chromium'."""
    _page(tmp_path, "intro.html", "<p>The first page.</p>")
    index = tmp_path / "index.html"
    index.write_text('<!DOCTYPE html>\n<meta http-equiv="Refresh" content="0; url=intro.html" />\n')
    report = pagecheck.check_page(index)
    assert "error" not in report and report["problems"] == []
    assert report["page"].endswith("intro.html") and report["redirect_from"].endswith("index.html")


def test_the_book_option_lists_every_page_of_the_toc(tmp_path):
    pages = pagecheck.book_pages(tmp_path, Path(pagecheck.__file__).parents[1] / "book")
    names = [p.name for p in pages]
    assert names[:2] == ["index.html", "intro.html"] and "table2_senses.html" in names
    assert "results_at_a_glance.html" in names and len(names) == len(set(p.as_posix() for p in pages))
