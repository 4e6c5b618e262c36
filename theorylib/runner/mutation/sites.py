"""The mutants of a chapter's theory module, each with a stable id, its location and its diff.

What is mutated: every function of ``theory.py`` and its module-level constants,
except what a mutation could only make crash or is no theory at all: the named
wrong theories (``wrong_...``), input checks (functions ``check_*``/``_check*``
and calls to them, ``raise`` and ``assert`` statements and the conditions of
``if ...: raise`` guards), function signatures (default arguments) and docstrings. A mutant's id,
``function:operator:k`` (the k-th site of that operator in that function), stays
the same when other functions change, so equivalent and untested mutants can be
listed by id beside the chapter (``mutation.toml``).
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code

from .operators import all_operators


@dataclass(frozen=True)
class Mutant:
    id: str
    operator: str
    occurrence: int
    line: int
    function: str
    diff: str
    source: str


Span = tuple[tuple[int, int], tuple[int, int]]
CHECK_PREFIXES = ("wrong_", "check_", "_check")


def _span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _excluded(tree: ast.Module) -> tuple[list[Span], dict[int, str]]:
    """Source spans no mutation may touch, and the enclosing function (qualified name) of every line."""
    spans: list[Span] = []
    owner: dict[int, str] = {}

    def docstring(body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                  str):
            spans.append(_span(first))

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                for ln in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    owner[ln] = name
                if child.name.startswith(CHECK_PREFIXES):
                    spans.append(_span(child))
                    continue
                body_start = child.body[0].lineno if child.body else child.lineno
                spans.append(((child.lineno, 0), (body_start - 1, 10**6)))  # signature (defaults) and decorators
                spans.extend(_span(d) for d in getattr(child, "decorator_list", []))
                docstring(child.body)
                visit(child, f"{name}.")
                continue
            if isinstance(child, (ast.Raise, ast.Assert)):
                spans.append(_span(child))
            elif isinstance(child, ast.If) and all(isinstance(s, ast.Raise) for s in child.body):
                spans.append(_span(child.test))
            elif isinstance(child, ast.Call) and _call_name(child).startswith(CHECK_PREFIXES):
                spans.append(_span(child))  # an input check inside an expression
            visit(child, prefix)

    visit(tree, "")
    docstring(tree.body)
    return spans, owner


def _inside(pos: tuple[int, int], spans: list[Span]) -> bool:
    return any(a <= pos < b or (pos[0] == b[0] and pos[1] <= b[1] and a <= pos) for a, b in spans)


def _diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=0)
    return "\n".join(list(lines)[2:])


def enumerate_mutants(source: str, path: str = "theory.py") -> list[Mutant]:
    """Every mutant of ``source`` (a theory module), in operator order, without duplicates."""
    spans, owner = _excluded(ast.parse(source))
    mutants: list[Mutant] = []
    seen_sources = {source}
    for op_name, op in all_operators().items():
        occurrence = 0
        per_function: dict[str, int] = {}
        for node in ast_nodes(get_ast(source)):
            for (start, _end) in op.mutation_positions(node):
                line = start[0]
                k_occ = occurrence
                occurrence += 1
                if _inside(tuple(start), spans):
                    continue
                function = owner.get(line, "<module>")
                k = per_function.get(function, 0)
                per_function[function] = k + 1
                mutated = mutate_code(source, op, k_occ)
                if mutated is None or mutated in seen_sources:
                    continue
                try:
                    compile(mutated, path, "exec")
                except SyntaxError:
                    continue
                seen_sources.add(mutated)
                mutants.append(Mutant(f"{function}:{op_name}:{k}", op_name, k_occ, line, function,
                                      _diff(source, mutated, path), mutated))
    return mutants
