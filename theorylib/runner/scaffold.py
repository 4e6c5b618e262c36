"""``python -m theorylib new``: every file of a new chapter, from the template folder.

``templates/chapter/`` mirrors the repository: each file under it is written to
the same place with ``__SLUG__``, ``__PACKAGE__``, ``__TITLE__``, ``__PAPER__`` and
``__CITEKEY__`` replaced (in names and contents). Then the notebook is made from
its text twin and the chapter is added to ``_toc.yml`` under its part.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from theorylib.core.chapter import package_name

from .paths import REPO_ROOT, TEMPLATE_DIR

BACK_MATTER = "Back matter"


class ScaffoldError(ValueError):
    """The chapter cannot be created (a bad name, or a file that exists already)."""


def _substitutions(slug: str, title: str, paper: int, cite: str | None) -> dict[str, str]:
    return {"__SLUG__": slug, "__PACKAGE__": package_name(slug), "__TITLE__": title.replace('"', "'"),
            "__PAPER__": str(paper), "__CITEKEY__": cite or slug}


def _fill(text: str, subs: dict[str, str]) -> str:
    for key, value in subs.items():
        text = text.replace(key, value)
    return text


def add_to_toc(toc: Path, slug: str, part: str) -> None:
    """Add ``book/chapters/<slug>`` to ``part`` in ``_toc.yml`` (a new part goes before the back matter)."""
    data = yaml.safe_load(toc.read_text()) if toc.exists() else {"format": "jb-book", "root": "book/intro"}
    parts = data.setdefault("parts", [])
    entry = {"file": f"book/chapters/{slug}"}
    for p in parts:
        if p.get("caption") == part:
            p.setdefault("chapters", []).append(entry)
            break
    else:
        at = next((i for i, p in enumerate(parts) if p.get("caption") == BACK_MATTER), len(parts))
        parts.insert(at, {"caption": part, "numbered": 1, "chapters": [entry]})  # chapters are numbered
    toc.write_text(yaml.safe_dump(data, sort_keys=False, width=120))


def new_chapter(slug: str, *, title: str, paper: int, part: str, cite: str | None = None,
                root: Path = REPO_ROOT, template: Path = TEMPLATE_DIR) -> list[str]:
    """Write the chapter's files under ``root``; returns their paths relative to it."""
    try:
        subs = _substitutions(slug, title, paper, cite)
    except ValueError as e:
        raise ScaffoldError(str(e)) from None
    if not 1 <= paper <= 99:
        raise ScaffoldError(f"--paper {paper}: the paper's number in the ICML 2026 list, 1..99")
    plan = {src: root / _fill(str(src.relative_to(template)), subs)
            for src in sorted(template.rglob("*")) if src.is_file() and "__pycache__" not in src.parts}
    notebook = root / "book" / "chapters" / f"{slug}.ipynb"
    for dest in [*plan.values(), notebook]:
        if dest.exists():
            raise ScaffoldError(f"{dest.relative_to(root)} exists already")
    toc = root / "_toc.yml"
    if toc.exists() and f"book/chapters/{slug}" in toc.read_text():
        raise ScaffoldError(f"_toc.yml lists book/chapters/{slug} already")
    for src, dest in plan.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(_fill(src.read_text(), subs))
    twin = root / "book" / "chapters" / "myst" / f"{slug}.md"
    from .execute import sync_twin

    sync_twin(twin)
    add_to_toc(toc, slug, part)
    written = [*plan.values(), notebook, toc]
    return [str(p.relative_to(root)) for p in written]
