"""The rendered book as a reader sees it: headless Chromium over every page of the table of contents.

Used by ``test_rendered_book.py`` on the real book and on a deliberately broken tiny book (the test of
the test). :func:`check_book` serves a built ``html/`` folder on a loopback port, visits each page and
returns a list of :class:`Problem`, each naming the page, the check and the exact item (the formula,
the image, the link). Chromium and its driver are Debian's ``chromium`` and ``chromium-driver``;
Selenium is pointed at them and never downloads anything (Selenium Manager stays offline), and the
browser resolves no host name but the loopback one, so an asset fetched from the internet shows up as
a console error instead of silently working on a machine that happens to be online.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import browser_layout as layout
import yaml

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1000",
    # No network: every host name but the loopback one fails to resolve, online or not.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)
MATH_TIMEOUT_S = 20
_PROOF_KINDS_THEOREM = ("theorem", "lemma", "proposition", "corollary")


@dataclass(frozen=True)
class Problem:
    """One thing wrong on one page: ``check`` is math, image, prf, link, claims, reproduce, chapters, console,
    load, or one of :mod:`browser_layout`'s: overflow, figure, numbering, toggle."""

    page: str
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: [{self.check}] {self.detail}"


@dataclass
class BookSpec:
    """What to check: the built ``html_dir`` and its pages (docnames such as ``book/intro``)."""

    html_dir: Path
    pages: Sequence[str]
    chapter_pages: Sequence[str] = ()
    verification_page: str | None = None
    chapter_slugs: Sequence[str] = ()
    screenshot_dir: Path | None = None
    landing_page: str | None = None
    # The number each chapter page must carry (docname -> number); empty: any number will do.
    chapter_numbers: dict[str, int] = field(default_factory=dict)
    # Words to search for: the snippets the search page quotes for them must show no raw TeX.
    search_terms: Sequence[str] = ()
    ids: dict[str, set[str]] = field(default_factory=dict, repr=False)


# --------------------------------------------------------------------------------------------------
# The table of contents


def toc_pages(toc_file: Path) -> list[str]:
    """The docnames of ``_toc.yml`` (jupyter-book 1.x ``jb-book``/``jb-article``), in reading order."""
    toc = yaml.safe_load(Path(toc_file).read_text())
    pages: list[str] = []

    def add(entry: dict[str, Any]) -> None:
        if "file" in entry:
            pages.append(str(Path(entry["file"]).with_suffix("")) if Path(entry["file"]).suffix in
                         (".md", ".ipynb", ".rst") else entry["file"])
        if "glob" in entry:
            raise ValueError(f"{toc_file}: 'glob' entries are not supported by the browser checks")
        for key in ("parts", "chapters", "sections"):
            for sub in entry.get(key, []) or []:
                add(sub)

    pages.append(str(toc["root"]))
    for key in ("parts", "chapters", "sections"):
        for entry in toc.get(key, []) or []:
            add(entry)
    return pages


# --------------------------------------------------------------------------------------------------
# The browser and the server


def missing_browser() -> str | None:
    """Why the browser checks cannot run here, or None when Chromium and chromedriver are installed."""
    missing = [name for name in ("chromium", "chromedriver") if _which(name) is None]
    if missing:
        return (f"{' and '.join(missing)} not found: install Debian's packages "
                "(apt-get install -y --no-install-recommends chromium chromium-driver)")
    return None


def _which(name: str) -> str | None:
    if name == "chromium":
        return shutil.which("chromium") or shutil.which("chromium-browser")
    return shutil.which(name)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by the system chromedriver, with a fresh profile; quit on exit."""
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never try to download a driver or browser
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = _which("chromium"), _which("chromedriver")
    if browser is None or driver_path is None:
        raise RuntimeError(missing_browser())
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(60)
            driver.set_script_timeout(MATH_TIMEOUT_S + 10)
            yield driver
        finally:
            driver.quit()


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves the files silently. The browser asks for /favicon.ico at the server's root, outside the
    book (which has no icon): that one request gets 204 No Content, so it is no console error."""

    def do_GET(self) -> None:
        if self.path == "/favicon.ico" and not Path(self.directory, "favicon.ico").exists():
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 at a free port, from a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, name="book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --------------------------------------------------------------------------------------------------
# What runs in the page

_JS_WAIT_MATH = """
const done = arguments[arguments.length - 1];
const limit = Date.now() + arguments[0] * 1000;
const hasScript = Array.from(document.scripts).some(s => /mathjax/i.test(s.src || ''));
const mathNodes = document.querySelectorAll('.math').length;
(function poll() {
  const MJ = window.MathJax;
  if (MJ && MJ.startup && MJ.startup.promise) {
    MJ.startup.promise.then(() => done({hasScript, mathNodes, ok: true}),
                            e => done({hasScript, mathNodes, ok: false, error: String(e)}));
  } else if (!hasScript || Date.now() > limit) {
    done({hasScript, mathNodes, ok: !hasScript && mathNodes === 0,
          error: hasScript ? 'MathJax was loaded but never started (timeout)' : 'no MathJax script on the page'});
  } else {
    setTimeout(poll, 50);
  }
})();
"""

# MathJax 3 leaves a formula it cannot parse as an <mjx-merror>; the TeX source comes from its MathItem.
_JS_MATH_ERRORS = """
const out = {errors: [], count: 0};
const MJ = window.MathJax;
const seen = new Set();
if (MJ && MJ.startup && MJ.startup.document) {
  for (const item of MJ.startup.document.math) {
    out.count += 1;
    const root = item.typesetRoot;
    const err = root && root.querySelector ? root.querySelector('mjx-merror') : null;
    if (err) {
      seen.add(root);
      out.errors.push([item.math, err.getAttribute('data-mjx-error') || err.textContent]);
    }
    // TeX's noundefined package shows an unknown macro as red text instead of an error.
    if (item.root && item.root.walkTree) {
      item.root.walkTree(node => {
        if (node.isKind && node.isKind('mtext') && node.attributes.get('mathcolor') === 'red') {
          const text = node.childNodes.map(c => (c.getText ? c.getText() : '')).join('');
          if (text.startsWith('\\\\')) out.errors.push([item.math, 'undefined control sequence ' + text]);
        }
      });
    }
  }
}
for (const err of document.querySelectorAll('mjx-merror')) {
  const root = err.closest('mjx-container');
  if (!seen.has(root)) out.errors.push(['(unknown source)', err.getAttribute('data-mjx-error') || err.textContent]);
}
return out;
"""

# Visible text grouped by its nearest block, outside code and scripts; a typeset formula reads "[math]".
_JS_TEXT_BLOCKS = """
const root = document.querySelector('article') || document.querySelector('main') || document.body;
const skip = 'script,style,pre,code,kbd,samp,tt,textarea,noscript,template,.highlight';
const blockSel = 'p,li,td,th,dt,dd,h1,h2,h3,h4,h5,h6,figcaption,caption,blockquote,div';
const blocks = new Map();
let lastMath = null;
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.nodeType === Node.TEXT_NODE ? n.parentElement : n;
  if (!el || el.closest(skip)) continue;
  const math = el.closest('mjx-container');
  const block = (math || el).closest(blockSel) || root;
  if (math) {
    if (math !== lastMath) blocks.set(block, (blocks.get(block) || '') + '[math]');
    lastMath = math;
  } else if (n.nodeType === Node.TEXT_NODE) {
    blocks.set(block, (blocks.get(block) || '') + n.textContent);
  }
}
return Array.from(blocks.values()).filter(t => t.trim());
"""

_JS_IMAGES = """
const done = arguments[arguments.length - 1];
const root = document.querySelector('article') || document.querySelector('main') || document.body;
const imgs = Array.from(document.images);
imgs.forEach(i => { if (i.loading === 'lazy') i.loading = 'eager'; });
const settle = i => (i.complete ? Promise.resolve() :
  new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }));
const timeout = new Promise(r => setTimeout(r, 15000));
Promise.race([Promise.all(imgs.map(settle)), timeout]).then(() => done(imgs.map(i => ({
  src: i.getAttribute('src') || '', alt: i.getAttribute('alt') || '', complete: i.complete,
  width: i.naturalWidth, height: i.naturalHeight, inContent: root.contains(i)}))));
"""

_JS_PROOFS = """
const blocks = Array.from(document.querySelectorAll('div.proof')).map(d => {
  const title = d.querySelector(':scope > .admonition-title');
  const cs = getComputedStyle(d);
  return {id: d.id, classes: Array.from(d.classList),
          title: title ? title.textContent.trim() : null, text: d.textContent.trim().slice(0, 40),
          styled: cs.borderLeftStyle !== 'none' || cs.boxShadow !== 'none' || cs.borderTopStyle !== 'none'};
});
const sheet = Array.from(document.querySelectorAll('link[rel=stylesheet]'))
  .filter(l => /proof\\.css/.test(l.href)).map(l => l.sheet !== null);
return {blocks, proofCss: sheet};
"""

_JS_LINKS = """
const links = [];
for (const a of document.querySelectorAll('a[href]')) {
  const raw = a.getAttribute('href');
  if (!raw || raw === '#' || raw.startsWith('javascript:') || a.origin !== location.origin) continue;
  links.push({href: a.href, raw, text: (a.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 60)});
}
const ids = Array.from(document.querySelectorAll('[id]'), e => e.id)
  .concat(Array.from(document.querySelectorAll('a[name]'), e => e.getAttribute('name')));
return {links, ids};
"""

_JS_CLAIMS = """
const tables = Array.from(document.querySelectorAll('table.claims-table')).map(t =>
  Array.from(t.querySelectorAll('tbody tr'), r => Array.from(r.cells, c => ({
    text: c.textContent.trim(), linked: c.querySelector('a[href]') !== null}))));
const links = Array.from(document.querySelectorAll('article a[href]'), a => a.href);
return {tables, links};
"""
CLAIM_MARKS = ("✓", "✗ FAIL")

_JS_REPRODUCE = """
return Array.from(document.querySelectorAll('div.reproduce'), d => d.textContent);
"""

_JS_CHAPTER_TABLE = """
const t = document.querySelector('table.chapter-table');
return t ? Array.from(t.querySelectorAll('tbody a[href]'), a => a.href) : null;
"""

_RAW_TEX = [
    ("$$...$$", re.compile(r"\$\$.+?\$\$", re.S)),
    ("$...$", re.compile(r"(?<![\\$])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\$])\$(?!\$)")),
    ("\\(...\\)", re.compile(r"\\\(.*?\\\)", re.S)),
    ("\\[...\\]", re.compile(r"\\\[.*?\\\]", re.S)),
    ("\\begin{...}", re.compile(r"\\begin\{[A-Za-z*]+\}")),
    ("unrendered prf directive", re.compile(r"\{prf:[a-z]+\}")),
]


def _short(text: str, n: int = 90) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 3] + "..."


# --------------------------------------------------------------------------------------------------
# The checks


def check_book(spec: BookSpec, driver: Any) -> list[Problem]:
    """Visit every page of ``spec`` in ``driver`` and return every problem found (empty: all good)."""
    problems: list[Problem] = []
    links: dict[str, list[dict[str, str]]] = {}
    if spec.screenshot_dir is not None:
        Path(spec.screenshot_dir).mkdir(parents=True, exist_ok=True)
    with serve(spec.html_dir) as base:
        for doc in spec.pages:
            page = f"{doc}.html"
            if not (spec.html_dir / page).is_file():
                problems.append(Problem(page, "load", "the page is in the table of contents but was not built"))
                continue
            driver.get_log("browser")  # drop what an earlier page left
            driver.get(base + page)
            _wait_loaded(driver)
            problems += _check_math(driver, page)
            problems += _check_images(driver, page, chapter=doc in spec.chapter_pages)
            problems += _check_text(driver, page)
            problems += _check_proofs(driver, page, chapter=doc in spec.chapter_pages)
            problems += _check_claims(driver, page, doc, spec)
            problems += _check_reproduce(driver, page, doc, spec)
            problems += _check_chapter_table(driver, page, doc, spec)
            problems += layout.check_numbering(driver, page, Problem, chapter=doc in spec.chapter_pages,
                                               expected=spec.chapter_numbers.get(doc))
            if doc in spec.chapter_pages:
                problems += layout.check_figures(driver, page, Problem)
                problems += layout.check_figure_scale(driver, page, Problem)
                problems += layout.check_toggles(driver, page, Problem)
            problems += layout.check_overflow(driver, page, Problem)  # opens every fold
            found = driver.execute_script(_JS_LINKS)
            spec.ids[page] = set(found["ids"])
            links[page] = found["links"]
            if doc in spec.chapter_pages and spec.screenshot_dir is not None:
                _screenshot(driver, Path(spec.screenshot_dir) / f"{Path(doc).name}.png")
            problems += _check_console(driver, page)
        problems += _check_search(driver, base, spec)
    problems += _check_links(spec, links, base)
    return problems


_JS_SEARCH_SNIPPETS = """
return Array.from(document.querySelectorAll('ul.search li p.context'), p => p.textContent);
"""
RAW_TEX_IN_SNIPPET = re.compile(r"\\[A-Za-z]+|\\[()\[\]]")


def _check_search(driver: Any, base: str, spec: BookSpec, timeout: float = 30) -> list[Problem]:
    """The search page quotes each result's text: its formulas must read as symbols, never as TeX source."""
    problems = []
    for term in spec.search_terms:
        driver.get(f"{base}search.html?q={term}")
        end, snippets = time.monotonic() + timeout, []
        while time.monotonic() < end and not snippets:
            time.sleep(0.2)
            snippets = driver.execute_script(_JS_SEARCH_SNIPPETS)
        if not snippets:
            problems.append(Problem("search.html", "search", f"no result with a snippet for {term!r}"))
        problems += [Problem("search.html", "search", f"a snippet for {term!r} shows raw TeX: '{_short(s)}'")
                     for s in snippets if RAW_TEX_IN_SNIPPET.search(s)]
    driver.get_log("browser")
    return problems


def _wait_loaded(driver: Any, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while driver.execute_script("return document.readyState") != "complete" and time.monotonic() < end:
        time.sleep(0.05)


def _check_math(driver: Any, page: str) -> list[Problem]:
    state = driver.execute_async_script(_JS_WAIT_MATH, MATH_TIMEOUT_S)
    if not state["ok"]:
        if state["mathNodes"] or state["hasScript"]:
            return [Problem(page, "math", f"MathJax did not typeset the page's {state['mathNodes']} formula(s): "
                                          f"{state.get('error')}")]
        return []
    if not state["hasScript"]:
        return []
    result = driver.execute_script(_JS_MATH_ERRORS)
    problems = [Problem(page, "math", f"formula '{_short(tex)}' does not typeset: {_short(msg)}")
                for tex, msg in result["errors"]]
    if state["mathNodes"] and result["count"] == 0:
        problems.append(Problem(page, "math", f"{state['mathNodes']} formula(s) on the page, none typeset"))
    body = driver.execute_script("return document.body.innerText")
    if "Math input error" in body:
        problems.append(Problem(page, "math", "the page shows 'Math input error'"))
    return problems


def _check_images(driver: Any, page: str, *, chapter: bool) -> list[Problem]:
    problems = []
    images = driver.execute_async_script(_JS_IMAGES)
    for img in images:
        if not img["complete"] or img["width"] == 0 or img["height"] == 0:
            state = "still loading" if not img["complete"] else "failed to load (natural size 0)"
            problems.append(Problem(page, "image", f"image {img['src']!r} (alt {_short(img['alt'], 60)!r}) {state}"))
    if chapter and not any(i["inContent"] and i["width"] > 0 for i in images):
        problems.append(Problem(page, "image", "a chapter page must show at least one figure; it shows none"))
    return problems


def _check_text(driver: Any, page: str) -> list[Problem]:
    problems = []
    for block in driver.execute_script(_JS_TEXT_BLOCKS):
        for what, pattern in _RAW_TEX:
            for m in pattern.finditer(block):
                kind = "math" if "prf" not in what else "prf"
                problems.append(Problem(page, kind, f"raw {what} left in the visible text: '{_short(m.group(0))}'"))
    return problems


def _check_proofs(driver: Any, page: str, *, chapter: bool) -> list[Problem]:
    found = driver.execute_script(_JS_PROOFS)
    problems = []
    if found["blocks"] and not any(found["proofCss"]):
        problems.append(Problem(page, "prf", "sphinx-proof's stylesheet proof.css is not loaded"))
    for b in found["blocks"]:
        name = f"block #{b['id']} ({' '.join(b['classes'])})"
        if "admonition" not in b["classes"]:
            problems.append(Problem(page, "prf", f"{name} is not rendered as an admonition"))
        if set(b["classes"]) == {"proof", "admonition"}:  # a proof opens with "Proof." and has no title
            if not b["text"].startswith("Proof"):
                problems.append(Problem(page, "prf", f"{name} does not open with 'Proof'"))
        elif not b["title"]:
            problems.append(Problem(page, "prf", f"{name} has no title"))
        if not b["styled"]:
            problems.append(Problem(page, "prf", f"{name} is unstyled (no border or shadow)"))
    if chapter:
        kinds = [set(b["classes"]) for b in found["blocks"]]
        if not any(k & set(_PROOF_KINDS_THEOREM) for k in kinds):
            problems.append(Problem(page, "prf", "a chapter page must state a theorem (or lemma, proposition, "
                                                 "corollary) as a prf block; none is rendered"))
        if not any(k == {"proof", "admonition"} for k in kinds):
            problems.append(Problem(page, "prf", "a chapter page must give a proof as a prf:proof block; "
                                                 "none is rendered"))
    return problems


def _check_claims(driver: Any, page: str, doc: str, spec: BookSpec) -> list[Problem]:
    if doc not in spec.chapter_pages and doc != spec.verification_page:
        return []
    found = driver.execute_script(_JS_CLAIMS)
    tables = found["tables"]
    if not tables or not any(tables):
        return [Problem(page, "claims", "no claims table (table.claims-table with rows) on the page")]
    problems = []
    for row in (row for table in tables for row in table):
        name = _short(row[0]["text"], 50) if row else "(empty row)"
        if len(row) < 3 or row[-1]["text"] not in CLAIM_MARKS:
            problems.append(Problem(page, "claims", f"claim '{name}' ends with no mark {' or '.join(CLAIM_MARKS)}"))
        elif not (row[0]["linked"] and row[1]["linked"]):
            problems.append(Problem(page, "claims", f"claim '{name}' does not link to its experiment and to the "
                                                    "theorem it checks"))
    if doc == spec.verification_page:
        linked = {unquote(urlsplit(href).path).removesuffix(".html") for href in found["links"]}
        problems += [Problem(page, "claims", f"the Verification page does not link to chapter {slug!r}")
                     for slug in spec.chapter_slugs if not any(path.endswith(slug) for path in linked)]
    return problems


def _check_reproduce(driver: Any, page: str, doc: str, spec: BookSpec) -> list[Problem]:
    """A chapter page carries the box 'Reproduce this page' with the command that reruns it."""
    if doc not in spec.chapter_pages:
        return []
    boxes = driver.execute_script(_JS_REPRODUCE)
    if not boxes:
        return [Problem(page, "reproduce", "no box 'Reproduce this page' (div.reproduce) on the chapter page")]
    if not any("python -m theorylib run" in text for text in boxes):
        return [Problem(page, "reproduce", "the box 'Reproduce this page' gives no 'python -m theorylib run' command")]
    return []


def _check_chapter_table(driver: Any, page: str, doc: str, spec: BookSpec) -> list[Problem]:
    """The landing page's table of chapters links to every chapter page."""
    if doc != spec.landing_page:
        return []
    links = driver.execute_script(_JS_CHAPTER_TABLE)
    if links is None:
        return [Problem(page, "chapters", "no table of chapters (table.chapter-table) on the landing page")]
    linked = {unquote(urlsplit(href).path).removesuffix(".html") for href in links}
    return [Problem(page, "chapters", f"the table of chapters does not link to {chapter!r}")
            for chapter in spec.chapter_pages if not any(path.endswith(chapter) for path in linked)]


def _check_console(driver: Any, page: str) -> list[Problem]:
    return [Problem(page, "console", _short(entry.get("message", ""), 300))
            for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is not None and (key == "id" or (tag == "a" and key == "name")):
                self.ids.add(value)


def _ids_on_disk(spec: BookSpec, page: str) -> set[str]:
    if page not in spec.ids:
        parser = _Ids()
        parser.feed((spec.html_dir / page).read_text(errors="replace"))
        spec.ids[page] = parser.ids
    return spec.ids[page]


def _check_links(spec: BookSpec, links: dict[str, list[dict[str, str]]], base: str) -> list[Problem]:
    """Every internal link points at a file that exists and, when it has a fragment, at an existing id."""
    problems = []
    for page, found in links.items():
        seen = set()
        for link in found:
            if link["href"] in seen:
                continue
            seen.add(link["href"])
            url = urlsplit(link["href"])
            target = unquote(url.path).lstrip("/") or "index.html"
            if target.endswith("/"):
                target += "index.html"
            what = f"link {link['text']!r} -> {link['raw']!r}"
            if not (spec.html_dir / target).is_file():
                problems.append(Problem(page, "link", f"{what}: {target} does not exist"))
                continue
            fragment = unquote(url.fragment)
            if not fragment or not target.endswith(".html"):
                continue
            if fragment not in _ids_on_disk(spec, target):
                problems.append(Problem(page, "link", f"{what}: no element with id {fragment!r} on {target}"))
    return problems


def _screenshot(driver: Any, path: Path) -> None:
    """A full-page PNG: DevTools' captureScreenshot beyond the viewport, clipped to the document."""
    width, height = driver.execute_script(
        "const e = document.documentElement, b = document.body;"
        "return [Math.max(e.scrollWidth, b.scrollWidth), Math.max(e.scrollHeight, b.scrollHeight)];")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 30000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
