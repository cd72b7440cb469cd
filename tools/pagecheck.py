"""Check built book pages the way a reader sees them, in headless Chromium with the network cut off.

    python tools/pagecheck.py book/_build/html/results_at_a_glance.html [more pages] [--screenshots DIR]

For each page it prints a JSON report and exits 1 if any page has a problem:

- horizontal overflow: the document scrolls sideways, or a table, image, pre, figure or displayed equation
  inside the article needs more width than the article's content box (such an element sits in a scroll
  container of the theme, so the page itself may not scroll: the reader still has to scroll it sideways);
- images that did not load (every image is switched to eager loading first, so lazy ones count too);
- math left raw (`\\(`, `\\[`, `$$` in the article's text outside MathJax's output) or MathJax absent;
- fonts that failed to load, and resources asked of the network (the book must work offline).

Only the article is searched for wide elements: the theme's own scroll containers (sidebars, header) are no
part of the reading width. How: a copy of the page, beside it so that relative links resolve, gets a script
that waits for the load event, MathJax's startup and every image, then writes its findings into the DOM;
`chromium --dump-dom` under a virtual time budget returns them. Screenshots (`--screenshots DIR`) are of the
page itself: the first screen at the viewport size, and the whole page (at most MAX_SHOT_HEIGHT pixels)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VIEWPORT = (1280, 900)   # a laptop
MAX_SHOT_HEIGHT = 16000
BUDGET_MS = 30000        # virtual time: MathJax and images are given this long after the load event
REPORT_ID = "pagecheck-report"

# Chromium flags that work as root in a container with a closed network; every host name resolves to
# nothing, so a page that needs the network shows it (and no request waits for a timeout).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND"]

PROBE = r"""
<script>
(function () {
  const SLACK = 1;  // px: sub-pixel rounding
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  const loaded = new Promise((r) => document.readyState === "complete" ? r() : addEventListener("load", r));
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.classList.length) s += "." + [...el.classList].slice(0, 3).join(".");
    const cell = el.closest(".cell_input") ? " (code of a cell)" : el.closest(".cell_output") ? " (output of a cell)" : "";
    const sec = el.closest("section[id]");
    return s + cell + (sec ? " in section#" + sec.id : "");
  };
  const snippet = (el) => (el.innerText || el.getAttribute("src") || "").replace(/\s+/g, " ").trim().slice(0, 80);

  async function probe() {
    await loaded;
    const report = {};
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      const done = await Promise.race([mj.startup.promise.then(() => "ok", () => "error"), wait(20000).then(() => "timeout")]);
      report.mathjax = done === "ok" ? (mj.version || "unknown version") : done;
    } else {
      report.mathjax = null;
    }
    // the budget pauses while files load, so waiting for each image's load or error needs no timeout
    const imgs = [...document.images];
    imgs.forEach((img) => { if (img.loading === "lazy") img.loading = "eager"; });
    await Promise.all(imgs.map((img) => img.complete ? null : new Promise((r) => {
      img.addEventListener("load", r, {once: true});
      img.addEventListener("error", r, {once: true});
    })));
    // an SVG without a size of its own has no natural width either: decoding tells it from a broken one
    const broken = await Promise.all(imgs.map((img) => img.naturalWidth > 0 ? false
      : img.decode().then(() => false, () => true)));
    report.images = imgs.length;
    report.broken_images = imgs.filter((img, i) => broken[i]).map((img) => img.getAttribute("src"));
    await document.fonts.ready;
    report.failed_fonts = [...document.fonts].filter((f) => f.status === "error").map((f) => f.family);

    const root = document.scrollingElement || document.documentElement;
    report.viewport = [innerWidth, innerHeight];
    report.document = {scroll_width: root.scrollWidth, client_width: root.clientWidth, scroll_height: root.scrollHeight};
    report.document_overflow = root.scrollWidth > root.clientWidth + SLACK;
    report.document_culprits = [];
    if (report.document_overflow) {
      // what sticks out of the viewport without a clipping or scrolling ancestor to hold it
      for (const el of document.body.querySelectorAll("*")) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.right <= root.clientWidth + SLACK) continue;
        let held = false;
        for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
          if (getComputedStyle(a).overflowX !== "visible") { held = true; break; }
        }
        if (!held && getComputedStyle(el).position !== "fixed") report.document_culprits.push({element: describe(el), right: Math.round(r.right)});
        if (report.document_culprits.length >= 10) break;
      }
    }

    const article = document.querySelector("article.bd-article") || document.querySelector("[role=main]") || document.body;
    const cs = getComputedStyle(article);
    const box = article.getBoundingClientRect();
    const left = box.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
    const right = box.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight);
    report.article = describe(article);
    report.content_width = Math.round(right - left);
    report.overflowing = [];
    const wide = 'table, img, pre, figure, iframe, video, mjx-container[display="true"]';
    for (const el of article.querySelectorAll(wide)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;  // not displayed
      const needed = Math.max(el.scrollWidth, r.width);
      const excess = r.left + needed - right;
      if (excess > SLACK) {
        report.overflowing.push({element: describe(el), width: Math.round(needed),
                                 available: Math.round(right - Math.max(r.left, left)), excess: Math.round(excess),
                                 text: snippet(el)});
      }
    }

    const skip = "mjx-container, script, style, pre, code, textarea, .highlight";
    const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
    report.raw_math = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest(skip)) continue;
      const t = n.textContent;
      const m = t.match(/\\\(|\\\[|\$\$|\\begin\{/);
      if (m) report.raw_math.push(t.slice(Math.max(0, m.index - 10), m.index + 60).replace(/\s+/g, " "));
    }
    report.math_elements = article.querySelectorAll(".math").length;
    report.typeset = article.querySelectorAll("mjx-container").length;

    const external = new Set();
    for (const e of performance.getEntriesByType("resource")) if (!e.name.startsWith("file:") && !e.name.startsWith("data:")) external.add(e.name);
    for (const el of document.querySelectorAll("script[src], link[rel~=stylesheet][href], link[rel~=preload][href], img[src], iframe[src], video[src]")) {
      const url = el.src || el.href;
      if (/^https?:/i.test(url)) external.add(url);
    }
    report.external = [...external];
    return report;
  }

  probe().catch((e) => ({error: String(e)})).then((report) => {
    const out = document.createElement("script");
    out.type = "application/json";
    out.id = "%(report_id)s";
    out.textContent = JSON.stringify(report).replace(/</g, "\\u003c");
    document.documentElement.appendChild(out);
  });
})();
</script>
""".replace("%(report_id)s", REPORT_ID)


def chromium() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _run_chromium(args: list[str], profile: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    exe = chromium()
    if exe is None:
        raise RuntimeError("no chromium on PATH: `apt-get install chromium` (or set CHROMIUM)")
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout)


def problems(report: dict) -> list[str]:
    """What a reader would notice, one line each (empty: the page is fine)."""
    out = []
    if "error" in report:
        return [f"the page check failed: {report['error']}"]
    if report["document_overflow"]:
        d = report["document"]
        out.append(f"the page scrolls sideways: {d['scroll_width']} px wide in a {d['client_width']} px window")
    for o in report["overflowing"]:
        out.append(f"{o['element']} needs {o['width']} px, {o['excess']} px more than the article's "
                   f"{report['content_width']} px")
    for src in report["broken_images"]:
        out.append(f"image did not load: {src}")
    if report["raw_math"]:
        out.append(f"{len(report['raw_math'])} text(s) of raw math, e.g. {report['raw_math'][0]!r}")
    if report["math_elements"] and not report["mathjax"]:
        out.append(f"{report['math_elements']} math element(s) but MathJax did not start")
    elif report["mathjax"] in ("error", "timeout"):
        out.append(f"MathJax startup: {report['mathjax']}")
    for family in report["failed_fonts"]:
        out.append(f"font did not load: {family}")
    for url in report["external"]:
        out.append(f"asks the network for {url}")
    return out


def check_page(page: Path, screenshots: Path | None = None, viewport: tuple[int, int] = VIEWPORT) -> dict:
    """The report of one built HTML page (see the module docstring), with its `problems`."""
    page = Path(page).resolve()
    source = page.read_text(encoding="utf-8")
    target = _redirect(source)
    if target is not None:  # the book's index.html only sends the reader on: the page it sends to is checked
        return {**check_page(page.parent / target, screenshots, viewport), "redirect_from": str(page)}
    end = source.lower().rfind("</body>")
    probed = source[:end] + PROBE + source[end:] if end >= 0 else source + PROBE
    with tempfile.TemporaryDirectory(prefix="pagecheck-") as tmp:
        fd, copy_name = tempfile.mkstemp(prefix=".pagecheck-", suffix=".html", dir=page.parent)
        copy = Path(copy_name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(probed)
            size = f"--window-size={viewport[0]},{viewport[1]}"
            proc = _run_chromium([size, f"--virtual-time-budget={BUDGET_MS}", "--dump-dom", copy.as_uri()],
                                 Path(tmp) / "profile")
        finally:
            copy.unlink(missing_ok=True)
        m = re.search(rf'<script type="application/json" id="{REPORT_ID}">(.*?)</script>', proc.stdout, re.S)
        if m is None:
            report = {"error": f"no report from chromium (exit {proc.returncode}): {proc.stderr[-500:]}"}
        else:
            report = json.loads(m.group(1))  # a script's text is serialised as is: "<" was escaped as \\u003c
        report["page"] = str(page)
        report["problems"] = problems(report)
        if screenshots is not None and "error" not in report:
            report["screenshots"] = _screenshots(page, Path(screenshots), viewport,
                                                 report["document"]["scroll_height"], Path(tmp) / "profile")
    return report


def _redirect(source: str) -> str | None:
    """The page a meta-refresh redirect sends to (Jupyter Book's index.html), else None."""
    m = re.search(r'<meta[^>]+http-equiv="refresh"[^>]+url=([^"\s>]+)', source, re.I)
    return m.group(1) if m else None


def book_pages(html: Path, book: Path) -> list[Path]:
    """Every page a reader of the built book reaches: index.html and each page of the book's toc."""
    from hanzilm.runner import toc_files

    return [html / "index.html"] + [html / f"{name}.html" for name in toc_files(book)]


def may_skip() -> bool:
    """Whether a page check may skip for want of a browser: not where CI requires one (CI_REQUIRES_BROWSER)."""
    return chromium() is None and not os.environ.get("CI_REQUIRES_BROWSER")


def _screenshots(page: Path, where: Path, viewport: tuple[int, int], height: int, profile: Path) -> list[str]:
    where.mkdir(parents=True, exist_ok=True)
    stem = "_".join(page.with_suffix("").parts[-2:]) if page.parent.name != "html" else page.stem
    shots = [(where / f"{stem}.png", viewport[1]),
             (where / f"{stem}_full.png", min(max(height, viewport[1]), MAX_SHOT_HEIGHT))]
    for png, h in shots:
        _run_chromium([f"--window-size={viewport[0]},{h}", f"--virtual-time-budget={BUDGET_MS}",
                       f"--screenshot={png}", page.as_uri()], profile)
    return [str(png) for png, _ in shots if png.is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", type=Path)
    ap.add_argument("--book", type=Path, metavar="HTML",
                    help="check every page of the built book in HTML (index.html and each file of book/_toc.yml)")
    ap.add_argument("--screenshots", type=Path, help="write <page>.png and <page>_full.png here")
    ap.add_argument("--width", type=int, default=VIEWPORT[0])
    ap.add_argument("--height", type=int, default=VIEWPORT[1])
    args = ap.parse_args(argv)
    pages = args.pages + (book_pages(args.book, Path(__file__).parents[1] / "book") if args.book else [])
    if not pages:
        ap.error("give pages, or --book HTML")
    failed = 0
    for page in pages:
        report = check_page(page, args.screenshots, (args.width, args.height))
        print(json.dumps(report, ensure_ascii=False, indent=1))
        verdict = "ok" if not report["problems"] else f"{len(report['problems'])} problem(s)"
        print(f"{page}: {verdict}", *(f"  - {p}" for p in report["problems"]), sep="\n", file=sys.stderr)
        failed += bool(report["problems"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
