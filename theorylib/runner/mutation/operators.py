"""The mutation operators: what a wrong derivation typically changes in a formula.

The parse trees, the visitor that applies the k-th occurrence of an operator and
the arithmetic, comparison and unary replacements are cosmic-ray's
(``cosmic_ray.mutating.mutate_code``, ``cosmic_ray.plugins.get_operator``). It has
no operators for formulas, so four are added here, written against its
``Operator`` interface: a constant doubled or halved (an integer also moved by
one), an exponent moved by one, an additive term dropped, and the first two
positional arguments of a call swapped.
"""

from __future__ import annotations

from collections.abc import Iterator

import parso
from cosmic_ray.operators.operator import Example, Operator
from cosmic_ray.plugins import get_operator

Position = tuple[tuple[int, int], tuple[int, int]]


def _number(node: parso.tree.NodeOrLeaf) -> float | int | None:
    if not isinstance(node, parso.python.tree.Number):
        return None
    try:
        value = eval(node.value)  # noqa: S307 - a numeric literal
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class ScaleConstant(Operator):
    """A constant c becomes 2c and c/2 (an integer: 2c, c + 1, c - 1; zero: 1)."""

    @staticmethod
    def _replacements(value: float | int) -> list[float | int]:
        if value == 0:
            return [1]
        if isinstance(value, int):
            return [2 * value, value + 1, value - 1]
        return [2 * value, value / 2]

    def mutation_positions(self, node: parso.tree.NodeOrLeaf) -> Iterator[Position]:
        value = _number(node)
        if value is not None and not _is_exponent(node):
            for _ in self._replacements(value):
                yield (node.start_pos, node.end_pos)

    def mutate(self, node: parso.tree.NodeOrLeaf, index: int) -> parso.tree.NodeOrLeaf:
        new = self._replacements(_number(node))[index]
        return parso.python.tree.Number(node.prefix + repr(new), node.start_pos)

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("x = 0.5", "x = 1.0"), Example("x = 0.5", "x = 0.25", occurrence=1),
                Example("x = 3", "x = 4", occurrence=1))


def _is_exponent(node: parso.tree.NodeOrLeaf) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "factor":  # -k
        node, parent = parent, parent.parent
    return (parent is not None and parent.type == "power" and len(parent.children) >= 3
            and parent.children[-2].type == "operator" and parent.children[-2].value == "**"
            and parent.children[-1] is node)


class ShiftExponent(Operator):
    """``x ** k`` becomes ``x ** (k + 1)`` and ``x ** (k - 1)`` for a numeric exponent k."""

    def mutation_positions(self, node: parso.tree.NodeOrLeaf) -> Iterator[Position]:
        if _number(node) is not None and _is_exponent(node):
            yield (node.start_pos, node.end_pos)
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: parso.tree.NodeOrLeaf, index: int) -> parso.tree.NodeOrLeaf:
        value = _number(node)
        sign = -1 if node.parent.type == "factor" else 1
        new = sign * value + (1 if index == 0 else -1)
        if node.parent.type == "factor":  # -k: replace the whole factor's number, keep the minus
            new = -new
        return parso.python.tree.Number(node.prefix + repr(new), node.start_pos)

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("y = x ** 2", "y = x ** 3"), Example("y = x ** 2", "y = x ** 1", occurrence=1))


class DropTerm(Operator):
    """In ``a + b - c`` one term is dropped: ``a - c``, ``a + b`` (and ``b - c`` when ``a`` is added)."""

    @staticmethod
    def _droppable(node: parso.tree.NodeOrLeaf) -> list[int]:
        if node.type != "arith_expr":
            return []
        kids = node.children
        ok = list(range(2, len(kids), 2))
        if kids[1].value == "+":
            ok.insert(0, 0)
        return ok

    def mutation_positions(self, node: parso.tree.NodeOrLeaf) -> Iterator[Position]:
        for _ in self._droppable(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: parso.tree.NodeOrLeaf, index: int) -> parso.tree.NodeOrLeaf:
        term = self._droppable(node)[index]
        kids = list(node.children)
        if term == 0:
            kids[2].get_first_leaf().prefix = kids[0].get_first_leaf().prefix
            del kids[0:2]
        else:
            del kids[term - 1:term + 1]
        node.children = kids
        for child in kids:
            child.parent = node
        return node

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("y = a + b - c", "y = b - c"), Example("y = a + b - c", "y = a - c", occurrence=1),
                Example("y = a + b - c", "y = a + b", occurrence=2))


class SwapArguments(Operator):
    """``f(a, b, ...)`` becomes ``f(b, a, ...)`` (the first two positional arguments)."""

    @staticmethod
    def _pair(node: parso.tree.NodeOrLeaf) -> tuple[int, int] | None:
        if node.type != "arglist" or node.parent is None or node.parent.type != "trailer":
            return None
        args = [i for i, c in enumerate(node.children) if c.type != "operator"]
        positional = [i for i in args if node.children[i].type != "argument"
                      and not (node.children[i].type == "star_expr")]
        if len(positional) < 2 or positional[:2] != args[:2]:
            return None
        a, b = node.children[positional[0]], node.children[positional[1]]
        if a.get_code().strip() == b.get_code().strip():
            return None
        return positional[0], positional[1]

    def mutation_positions(self, node: parso.tree.NodeOrLeaf) -> Iterator[Position]:
        if self._pair(node) is not None:
            yield (node.start_pos, node.end_pos)

    def mutate(self, node: parso.tree.NodeOrLeaf, index: int) -> parso.tree.NodeOrLeaf:
        i, j = self._pair(node)
        kids = list(node.children)
        a, b = kids[i], kids[j]
        a_prefix, b_prefix = a.get_first_leaf().prefix, b.get_first_leaf().prefix
        kids[i], kids[j] = b, a
        b.get_first_leaf().prefix, a.get_first_leaf().prefix = a_prefix, b_prefix
        node.children = kids
        return node

    @classmethod
    def examples(cls) -> tuple[Example, ...]:
        return (Example("y = f(a, b)", "y = f(b, a)"),)


# Name shown in reports -> the operator (cosmic-ray's by its plugin name, or one of the above).
COSMIC_RAY = {
    "add->sub": "core/ReplaceBinaryOperator_Add_Sub",
    "sub->add": "core/ReplaceBinaryOperator_Sub_Add",
    "mul->div": "core/ReplaceBinaryOperator_Mul_Div",
    "div->mul": "core/ReplaceBinaryOperator_Div_Mul",
    "pow->mul": "core/ReplaceBinaryOperator_Pow_Mul",
    "lt->le": "core/ReplaceComparisonOperator_Lt_LtE",
    "le->lt": "core/ReplaceComparisonOperator_LtE_Lt",
    "gt->ge": "core/ReplaceComparisonOperator_Gt_GtE",
    "ge->gt": "core/ReplaceComparisonOperator_GtE_Gt",
    "neg->pos": "core/ReplaceUnaryOperator_USub_UAdd",
}
FORMULA = {"scale-constant": ScaleConstant, "shift-exponent": ShiftExponent, "drop-term": DropTerm,
           "swap-arguments": SwapArguments}


def all_operators() -> dict[str, Operator]:
    """Every operator a mutation run applies, by its short name."""
    ops: dict[str, Operator] = {name: get_operator(plugin)() for name, plugin in COSMIC_RAY.items()}
    ops.update({name: cls() for name, cls in FORMULA.items()})
    return ops
