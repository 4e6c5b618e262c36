"""The chapter declaration type: what a notebook needs to know about its own chapter.

Each chapter is one package ``theorylib.chapters.<a_b_c>`` whose ``__init__.py``
defines ``CHAPTER = Chapter(...)``: its slug ``a-b-c``, title, paper number,
parameters (defaults and allowed ranges) and alternative settings. Every other
name of the chapter follows from the slug (see :func:`package_name`); the
runner (``theorylib.runner.registry``) derives the notebook path from it, reads
the part from ``_toc.yml`` and refuses a chapter whose names disagree.
The notebook validates its parameters with ``P = CHAPTER.validate(globals())``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .params import Param, ParameterError, Params, Relation, validate

SLUG_RE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def package_name(slug: str) -> str:
    """The Python name of a chapter's package: ``a-b-c`` -> ``a_b_c``."""
    if not SLUG_RE.fullmatch(slug):
        raise ValueError(f"chapter slug {slug!r} must be lower-case words joined by '-' (e.g. 'a-b-c')")
    return slug.replace("-", "_")


@dataclass(frozen=True)
class Chapter:
    """A chapter's declaration.

    ``alternatives`` maps a setting's name to the parameter values (overrides of
    the defaults) at which every claim must also hold; the tests rerun each.
    ``relations`` are the rules that tie several parameters (checked with them).
    ``proves`` and ``checks`` say in one line each what the chapter derives and which
    special case its numbers check; the book's table of chapters shows them.
    """

    slug: str
    title: str
    paper: int
    params: tuple[Param, ...]
    alternatives: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    relations: tuple[Relation, ...] = ()
    proves: str = ""
    checks: str = ""

    def __post_init__(self) -> None:
        package_name(self.slug)  # a malformed slug is a declaration error
        names = [p.name for p in self.params]
        if "seed" not in names:
            raise ValueError(f"chapter {self.slug!r} must declare a 'seed' parameter")
        if len(set(names)) != len(names):
            raise ValueError(f"chapter {self.slug!r} declares a parameter twice")
        for rel in self.relations:
            if not set(rel.names) <= set(names):
                raise ValueError(f"chapter {self.slug!r}: relation {rel.rule!r} names an undeclared parameter")
        for alt, values in {"defaults": {}, **self.alternatives}.items():
            try:
                validate(values, self.params, strict=True, relations=self.relations)
            except ParameterError as e:
                raise ValueError(f"chapter {self.slug!r}, alternative {alt!r}: {e}") from e
        object.__setattr__(self, "alternatives", MappingProxyType(dict(self.alternatives)))

    @property
    def package(self) -> str:
        """``theorylib.chapters.<a_b_c>``, the package that must declare this chapter."""
        return f"theorylib.chapters.{package_name(self.slug)}"

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(f"unknown parameter {name!r}; known: {', '.join(p.name for p in self.params)}")

    def validate(self, namespace: Mapping[str, Any], *, strict: bool = False) -> Params:
        """Validated parameter values taken from ``namespace`` (e.g. the notebook's ``globals()``).

        The result reads both ways, ``P.d`` and ``P["d"]``.
        """
        return validate(namespace, self.params, strict=strict, relations=self.relations)
