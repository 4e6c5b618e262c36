"""The page as laid out: what a reader cannot see, and numbers and captions that disagree.

Checks for :mod:`browser_checks` (each returns a list of its ``Problem``):

* :func:`check_overflow`: no display formula, code block, output, table or figure is wider than the
  article (or scrolls inside its own box), at every window width of :data:`WIDTHS`; folded code is
  unfolded first, so a long line behind a toggle is found too;
* :func:`check_figure_scale`: a figure is not shrunk so far that its labels become unreadable;
* :func:`check_numbering`: a chapter's heading carries its number, every theorem-like block and figure of
  the chapter is numbered within it ("Theorem 2.3", "Fig. 2.1"), and no heading types a number of its own
  ("Theorem 1: ..."), which would be a second numbering scheme;
* :func:`check_figures`: every figure a chapter's code makes is numbered and captioned;
* :func:`check_toggles`: a chapter folds its plotting code behind a toggle that opens.
"""

from __future__ import annotations

import re
import time
from typing import Any

WIDTHS = (1280, 1920)
WINDOW_HEIGHT = 1000
# The house style's 10-pt tick labels are 13.9 px at the figures' 100 dpi; shown at less than 65% of their
# natural size they fall below 9 px on screen.
MIN_FIGURE_SCALE = 0.65
TYPED_NUMBER = re.compile(r"\b(Theorem|Lemma|Proposition|Corollary|Definition|Remark|Assumption|Figure|Fig\.)"
                          r"\s+[0-9A-Z]+(\.[0-9]+)*\b")

_JS_OVERFLOW = """
const art = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
const limit = art.getBoundingClientRect().right + 1;
const kinds = [['mjx-container[display="true"]', 'display math'], ['div.highlight pre', 'code'],
               ['div.cell_output pre', 'output'], ['table', 'table'], ['img', 'figure'],
               ['.pst-scrollable-table-container', 'table']];
const out = [];
const seen = new Set();
for (const [sel, kind] of kinds) {
  for (const el of art.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || seen.has(el)) continue;
    seen.add(el);
    const box = el.parentElement;
    const scrolls = el.scrollWidth > el.clientWidth + 1 || (kind === 'display math' && box &&
                                                           box.scrollWidth > box.clientWidth + 1);
    if (scrolls || r.right > limit) {
      const text = (el.getAttribute('src') || el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
      out.push({kind, text, width: Math.round(Math.max(el.scrollWidth, r.width)),
                box: Math.round(Math.min(el.clientWidth || r.width, limit - r.left))});
    }
  }
}
return out;
"""

_JS_OPEN_FOLDS = "document.querySelectorAll('details').forEach(d => { d.open = true; });"

_JS_FIGURE_SCALE = """
return Array.from(document.querySelectorAll('div.cell_output img, div.cell-output img'), i => ({
  src: i.getAttribute('src') || '', natural: i.naturalWidth, shown: i.getBoundingClientRect().width}));
"""

_JS_NUMBERING = r"""
const h1 = document.querySelector('article h1');
const num = h1 ? h1.querySelector('.section-number') : null;
const heads = Array.from(document.querySelectorAll('article h2, article h3, article h4'),
                         h => h.textContent.replace(/[#¶]/g, '').trim());
const blocks = Array.from(document.querySelectorAll('div.proof > .admonition-title, div.admonition.theorem > '
  + '.admonition-title'), t => t.textContent.trim());
const figs = Array.from(document.querySelectorAll('figure figcaption .caption-number'), s => s.textContent.trim());
return {h1: h1 ? h1.textContent.replace(/[#¶]\s*$/, '').trim() : null,
        number: num ? num.textContent.trim() : null, heads, blocks, figs};
"""

_JS_FIGURES = """
return Array.from(document.querySelectorAll('div.cell_output img, div.cell-output img'), i => {
  const fig = i.closest('figure');
  const cap = fig ? fig.querySelector('figcaption') : null;
  const num = cap ? cap.querySelector('.caption-number') : null;
  return {src: i.getAttribute('src') || '', caption: cap ? cap.textContent.trim() : null,
          number: num ? num.textContent : null};
});
"""

_JS_TOGGLES = """
const d = Array.from(document.querySelectorAll('details.hide'));
if (!d.length) return {count: 0};
const first = d[0];
const wasOpen = first.open;
first.querySelector('summary').click();
return {count: d.length, wasOpen, opens: first.open};
"""


def check_overflow(driver: Any, page: str, problem: Any) -> list[Any]:
    """Elements wider than their box or the article, at each width of :data:`WIDTHS` (folds opened)."""
    problems = []
    driver.execute_script(_JS_OPEN_FOLDS)
    try:
        for width in WIDTHS:
            driver.set_window_size(width, WINDOW_HEIGHT)
            time.sleep(0.3)  # the theme relays out on resize
            for el in driver.execute_script(_JS_OVERFLOW):
                problems.append(problem(page, "overflow", f"at {width} px, {el['kind']} {el['width']} px wide in a "
                                                          f"{el['box']} px box: '{el['text']}'"))
    finally:
        driver.set_window_size(WIDTHS[0], WINDOW_HEIGHT)
    return problems


def check_figure_scale(driver: Any, page: str, problem: Any) -> list[Any]:
    """Figures shown at less than :data:`MIN_FIGURE_SCALE` of their natural width."""
    problems = []
    for img in driver.execute_script(_JS_FIGURE_SCALE):
        if img["natural"] and img["shown"] and img["shown"] / img["natural"] < MIN_FIGURE_SCALE:
            problems.append(problem(page, "figure", f"figure {img['src']!r} is shown at "
                                                    f"{img['shown'] / img['natural']:.0%} of its {img['natural']} px: "
                                                    "its labels fall below 9 px (make it narrower)"))
    return problems


def check_numbering(driver: Any, page: str, problem: Any, *, chapter: bool, expected: int | None = None) -> list[Any]:
    """One numbering: the chapter carries its number (``expected`` when given), which leads every block and
    figure number; no heading types its own."""
    found = driver.execute_script(_JS_NUMBERING)
    problems = [problem(page, "numbering", f"heading '{h}' types a number of its own; name the block and "
                                           "let the book number it") for h in found["heads"] if TYPED_NUMBER.search(h)]
    if not chapter:
        return problems
    if not found["number"]:
        return [*problems, problem(page, "numbering", f"the chapter heading '{found['h1']}' carries no number")]
    ch = found["number"].rstrip(". ")
    if expected is not None and ch != str(expected):
        problems.append(problem(page, "numbering", f"the chapter is numbered {ch}, not {expected}"))
    for title in found["blocks"]:
        m = re.match(r"\S+\s+(\d+)(?:\.(\d+))?", title)
        if not m or m.group(2) is None or m.group(1) != ch:
            problems.append(problem(page, "numbering", f"block '{title[:60]}' is not numbered within chapter {ch}"))
    for number in found["figs"]:
        m = re.search(r"(\d+)\.(\d+)", number)
        if not m or m.group(1) != ch:
            problems.append(problem(page, "numbering", f"figure '{number}' is not numbered within chapter {ch}"))
    return problems


def check_figures(driver: Any, page: str, problem: Any) -> list[Any]:
    """Every figure in a chapter's outputs sits in a numbered, captioned figure."""
    return [problem(page, "figure", f"figure {f['src']!r} has no numbered caption")
            for f in driver.execute_script(_JS_FIGURES) if not f["caption"] or not f["number"]]


def check_toggles(driver: Any, page: str, problem: Any) -> list[Any]:
    """A chapter folds code behind toggles (myst-nb's ``hide-input``), closed at first, open on a click."""
    state = driver.execute_script(_JS_TOGGLES)
    if not state["count"]:
        return [problem(page, "toggle", "no folded code cell (tag hide-input) on the chapter page")]
    if state["wasOpen"] or not state["opens"]:
        return [problem(page, "toggle", "the first folded code cell is open at first or does not open on a click")]
    return []
