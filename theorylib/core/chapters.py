"""The chapter registry: one declaration per chapter, read by notebooks, tests and the CLI.

Each chapter has a module ``theorylib.chapters.<name>`` that defines
``CHAPTER = Chapter(...)``: its slug, title, part, notebook path, parameters
(defaults and allowed ranges) and alternative settings. The notebook validates
its parameters with ``CHAPTER.validate(globals())``; ``python -m theorylib
list`` prints the declarations; the tests rerun every alternative setting.
Declarations are discovered, so a new chapter touches no shared file here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .params import Param, ParameterError, validate

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK_DIR = REPO_ROOT / "book"


@dataclass(frozen=True)
class Chapter:
    """A chapter's declaration.

    ``alternatives`` maps a setting's name to the parameter values (overrides of
    the defaults) at which every claim must also hold; the tests rerun each.
    """

    slug: str
    title: str
    paper: int
    part: str
    notebook: str
    params: tuple[Param, ...]
    alternatives: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if "seed" not in names:
            raise ValueError(f"chapter {self.slug!r} must declare a 'seed' parameter")
        if len(set(names)) != len(names):
            raise ValueError(f"chapter {self.slug!r} declares a parameter twice")
        for alt, values in self.alternatives.items():
            try:
                validate(values, self.params, strict=True)
            except ParameterError as e:
                raise ValueError(f"chapter {self.slug!r}, alternative {alt!r}: {e}") from e
        object.__setattr__(self, "alternatives", MappingProxyType(dict(self.alternatives)))

    @property
    def notebook_path(self) -> Path:
        return REPO_ROOT / self.notebook

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(f"unknown parameter {name!r}; known: {', '.join(p.name for p in self.params)}")

    def validate(self, namespace: Mapping[str, Any], *, strict: bool = False) -> dict[str, Any]:
        """Validated parameter values taken from ``namespace`` (e.g. the notebook's ``globals()``)."""
        return validate(namespace, self.params, strict=strict)


def all_chapters() -> list[Chapter]:
    """Every declared chapter, ordered by paper number."""
    import theorylib.chapters as pkg

    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        chapter = getattr(module, "CHAPTER", None)
        if isinstance(chapter, Chapter):
            found.append(chapter)
    slugs = [c.slug for c in found]
    if len(set(slugs)) != len(slugs):
        raise ValueError(f"duplicate chapter slugs: {slugs}")
    return sorted(found, key=lambda c: c.paper)


def get_chapter(slug: str) -> Chapter:
    """The chapter with this slug; a ParameterError lists the known slugs otherwise."""
    chapters = all_chapters()
    for c in chapters:
        if c.slug == slug:
            return c
    raise ParameterError(f"unknown chapter {slug!r}; known: {', '.join(c.slug for c in chapters) or 'none'}")
