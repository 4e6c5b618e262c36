"""The chapter registry: discovery, the one-name rule, book order and parts.

A chapter with slug ``a-b-c`` is, and only is:

* ``theorylib/chapters/a_b_c/``: its package; ``__init__.py`` declares ``CHAPTER``;
* ``book/chapters/a-b-c.ipynb``: the notebook with its executed outputs;
* ``book/chapters/myst/a-b-c.md``: its MyST text twin (jupytext pair);
* ``tests/chapters/test_a_b_c.py`` (or ``tests/chapters/a_b_c/``): its tests;
* one entry ``book/chapters/a-b-c`` in ``_toc.yml``, whose caption is its part.

:func:`all_chapters` imports every package under ``theorylib/chapters`` (their
``__init__`` is cheap: no numerical library is imported there) and raises a
:class:`LayoutError` that names the file and the rule when a chapter's names
disagree. Chapters come in book order (the order of ``_toc.yml``).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from theorylib.core.chapter import Chapter, package_name
from theorylib.core.params import ParameterError

from .paths import CHAPTERS_DIR, PACKAGES_DIR, REPO_ROOT, TESTS_DIR, TOC


class LayoutError(ValueError):
    """A chapter whose names disagree, or a file that belongs to no chapter."""


@dataclass(frozen=True)
class BookChapter:
    """A declared chapter placed in the book: its declaration, notebook and part.

    Attributes of the declaration (``slug``, ``title``, ``params``, ``validate``...)
    are read through.
    """

    chapter: Chapter
    notebook_path: Path
    part: str

    def __getattr__(self, name: str) -> Any:
        if name == "chapter":  # not yet set (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.chapter, name)

    @property
    def twin_path(self) -> Path:
        return twin_path(self.notebook_path)

    @property
    def notebook(self) -> str:
        """The notebook's path relative to the repository (absolute when outside it)."""
        try:
            return str(self.notebook_path.relative_to(REPO_ROOT))
        except ValueError:
            return str(self.notebook_path)


def twin_path(nb_path: Path) -> Path:
    """The MyST text twin of a notebook: ``<dir>/myst/<stem>.md`` (jupytext ``ipynb,myst//md:myst``)."""
    return nb_path.parent / "myst" / f"{nb_path.stem}.md"


def notebook_path(slug: str) -> Path:
    return CHAPTERS_DIR / f"{slug}.ipynb"


def tests_home(slug: str) -> tuple[Path, Path]:
    """The two allowed homes of a chapter's tests: a file or a folder."""
    name = package_name(slug)
    return TESTS_DIR / f"test_{name}.py", TESTS_DIR / name


@lru_cache(maxsize=4)
def toc_parts(toc: Path = TOC) -> tuple[tuple[str, str], ...]:
    """``(file, caption)`` for every chapter entry of ``_toc.yml``, in book order."""
    data = yaml.safe_load(toc.read_text())
    entries = []
    for part in data.get("parts", []):
        for entry in part.get("chapters", []):
            entries.append((entry["file"], part["caption"]))
    return tuple(entries)


def part_of(slug: str, toc: Path = TOC) -> str:
    wanted = f"book/chapters/{slug}"
    for file, caption in toc_parts(toc):
        if file.removesuffix(".ipynb").removesuffix(".md") == wanted:
            return caption
    raise LayoutError(f"chapter {slug!r} has no entry '- file: {wanted}' in {toc.name}")


def _declared(module_name: str) -> Chapter:
    module = importlib.import_module(f"theorylib.chapters.{module_name}")
    chapter = getattr(module, "CHAPTER", None)
    if not isinstance(chapter, Chapter):
        raise LayoutError(f"theorylib/chapters/{module_name}/__init__.py must define CHAPTER = Chapter(...)")
    return chapter


def place(chapter: Chapter, module_name: str) -> BookChapter:
    """Check the one-name rule for a declared chapter and place it in the book."""
    expected = package_name(chapter.slug)
    if module_name != expected:
        raise LayoutError(f"theorylib/chapters/{module_name} declares the slug {chapter.slug!r}: a chapter "
                          f"'{chapter.slug}' lives in the package theorylib/chapters/{expected}/")
    nb = notebook_path(chapter.slug)
    if not nb.exists():
        raise LayoutError(f"chapter {chapter.slug!r}: its notebook {nb.relative_to(REPO_ROOT)} does not exist")
    return BookChapter(chapter, nb, part_of(chapter.slug))


@lru_cache(maxsize=1)
def _discover() -> tuple[BookChapter, ...]:
    import theorylib.chapters as pkg

    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.ispkg:
            raise LayoutError(f"theorylib/chapters/{info.name}.py: a chapter is a package "
                              f"(theorylib/chapters/{info.name}/__init__.py), not a module")
        found.append(place(_declared(info.name), info.name))
    order = {file: i for i, (file, _) in enumerate(toc_parts())}
    return tuple(sorted(found, key=lambda c: order[f"book/chapters/{c.slug}"]))


def all_chapters() -> list[BookChapter]:
    """Every chapter, in book order; a :class:`LayoutError` names the first one whose names disagree."""
    return list(_discover())


def get_chapter(slug: str) -> BookChapter:
    """The chapter with this slug; a ParameterError lists the known slugs otherwise."""
    chapters = all_chapters()
    for c in chapters:
        if c.slug == slug:
            return c
    raise ParameterError(f"unknown chapter {slug!r}; known: {', '.join(c.slug for c in chapters) or 'none'}")


def orphans() -> list[str]:
    """Files under the chapters' folders that belong to no declared chapter (for the layout test)."""
    slugs = {c.slug for c in all_chapters()}
    names = {package_name(s) for s in slugs}
    bad = [str(p.relative_to(REPO_ROOT)) for p in CHAPTERS_DIR.glob("*.ipynb") if p.stem not in slugs]
    bad += [str(p.relative_to(REPO_ROOT)) for p in (CHAPTERS_DIR / "myst").glob("*.md") if p.stem not in slugs]
    bad += [str(p.relative_to(REPO_ROOT)) for p in PACKAGES_DIR.iterdir()
            if p.is_dir() and p.name != "__pycache__" and p.name not in names]
    for p in TESTS_DIR.iterdir():
        if p.name in ("__init__.py", "__pycache__", "conftest.py"):
            continue
        stem = p.stem.removeprefix("test_") if p.is_file() else p.name
        if stem not in names:
            bad.append(str(p.relative_to(REPO_ROOT)))
    return sorted(bad)
