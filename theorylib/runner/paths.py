"""Where things are in the repository."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK_DIR = REPO_ROOT / "book"
CHAPTERS_DIR = BOOK_DIR / "chapters"
TOC = REPO_ROOT / "_toc.yml"
PACKAGES_DIR = REPO_ROOT / "theorylib" / "chapters"
CORE_DIR = REPO_ROOT / "theorylib" / "core"
TESTS_DIR = REPO_ROOT / "tests" / "chapters"
RUNS_DIR = REPO_ROOT / "runs"
VERIFICATION_NOTEBOOK = BOOK_DIR / "verification.ipynb"
TEMPLATE_DIR = REPO_ROOT / "templates" / "chapter"


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` lies in ``folder`` (after resolving links and '..')."""
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


class BookWriteError(ValueError):
    """A rerun was asked to write into ``book/``, where only ``refresh`` writes."""


def refuse_book(path: Path, what: str = "a rerun") -> Path:
    """The one guard: reruns and sweeps never write into ``book/``."""
    if inside(path, BOOK_DIR):
        raise BookWriteError(f"{path}: {what} never writes into book/ (use 'refresh' to update stored outputs)")
    return path
