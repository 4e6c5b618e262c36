"""Claims: a measured quantity checked against a predicted one.

A claim is decided by a *rule* whose tolerance comes from an error analysis:

* ``exact``     measured == predicted (integers, counts, identities);
* ``absolute``  |m - p| <= tol (a floating-point or quadrature bound);
* ``relative``  |m - p| <= tol |p|;
* ``zscore``    |m - p| <= z_{1-alpha/2} SE (Monte-Carlo standard error);
* ``interval``  predicted lies in a (1 - alpha) confidence interval [lo, hi];
* ``upper``     m <= p + tol (a proved bound holds); ``lower`` m >= p - tol;
* ``chi2``      sum z_i^2 of k standardized residuals, passes when the
                chi^2_k upper-tail probability is >= alpha.

Statistical rules take their false-alarm level ``alpha`` explicitly (default
1e-3 per claim), and the table shows it. A claim on a floating-point-error
quantity (``fp=True``: the residual of an exact identity, the error of an exact
algorithm) shows its measured value, and its tolerance, as the power of ten that bounds them (``<= 1e-10``,
``p ± 1e-12``), never by their digits, which vary between machines; see
:mod:`theorylib.core.formatting`. :meth:`ClaimSet.report` shows the
table, leaves a machine-readable record in the notebook's outputs (under
:data:`CLAIMS_KEY` in the output's metadata, read back by the command line and the Verification page)
and raises :class:`ClaimsFailed` when any claim fails, so that a notebook run
with a failed claim is a failed run.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from scipy import stats

from .claims_markdown import claims_markdown
from .formatting import decade_text

# The key under which the record sits in the claims output's metadata (not in its
# data: the book's renderer would warn on an unknown MIME type).
CLAIMS_KEY = "theorylib.claims"
DEFAULT_ALPHA = 1e-3


class ClaimsFailed(AssertionError):
    """Raised after the claims table is shown when at least one claim failed."""


@dataclass(frozen=True)
class Claim:
    """One decided claim. ``tolerance`` is the half-width or slack the rule allowed."""

    name: str
    measured: float
    predicted: float
    rule: str
    tolerance: float
    tolerance_text: str
    justification: str
    passed: bool
    alpha: float | None = None
    fp: bool = False
    # Where the claim is made and what it checks: the label of its experiment's section and the labels of
    # the theorem-like blocks it tests (set by :meth:`ClaimSet.experiment`); the book links both.
    section: str = ""
    checks: tuple[str, ...] = ()
    # What the claim function computed on the way (residuals, fits...), for the notebook's prints and
    # figures; not part of the record.
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def as_record(self) -> dict[str, Any]:
        """A JSON-ready dict at full precision (it is stored in output metadata, which nbval does not compare)."""
        rec = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "details"}
        rec["checks"] = list(self.checks)
        return rec

    def with_details(self, **details: Any) -> Claim:
        """The same claim carrying ``details`` (read back as ``claim.details["name"]``)."""
        return replace(self, details={**self.details, **details})


def _num(x: Any) -> float:
    """A plain Python number (JSON- and glue-friendly) from a numpy scalar or int."""
    if isinstance(x, (bool, np.bool_)):
        return float(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    return float(x)


def strict_max(values: Any) -> float:
    """The largest entry of ``values`` (a number, an array or an iterable of numbers and arrays), NaN if any
    entry is NaN or there is none.

    Python's ``max(a, nan)`` returns ``a`` (every comparison with NaN is false), so a NaN produced by a wrong
    theory would vanish from a measured maximum and let its claim pass. A claim must fail on it instead."""
    if isinstance(values, np.ndarray) or np.isscalar(values):
        flat = np.ravel(np.asarray(values, dtype=float))
    else:
        parts = [np.ravel(np.asarray(v, dtype=float)) for v in values]
        flat = np.concatenate(parts) if parts else np.array([], dtype=float)
    return float(np.max(flat)) if flat.size else float("nan")


def strict_min(values: Any) -> float:
    """The smallest entry of ``values``, NaN if any entry is NaN or there is none (see :func:`strict_max`)."""
    if isinstance(values, np.ndarray) or np.isscalar(values):
        return -strict_max(-np.asarray(values, dtype=float))
    return -strict_max([-np.asarray(v, dtype=float) for v in values])


def z_critical(alpha: float) -> float:
    """Two-sided normal critical value: P(|Z| > z) = alpha (3.29 at alpha = 1e-3)."""
    _check_alpha(alpha)
    return float(stats.norm.isf(alpha / 2))


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 0.5:
        raise ValueError(f"false-alarm level alpha = {alpha!r} must lie in (0, 0.5)")


def _check_tol(tol: float) -> None:
    if not (math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tolerance = {tol!r} must be finite and >= 0")


def _finite(*xs: float) -> bool:
    return all(math.isfinite(float(x)) for x in xs)


def check_exact(name: str, measured: Any, predicted: Any, why: str) -> Claim:
    """Exact equality (after converting both sides to plain numbers)."""
    m, p = _num(measured), _num(predicted)
    return Claim(name, m, p, "exact", 0.0, "exact equality", why, bool(m == p))


def _tol_text(tol: float, fp: bool, ok: bool) -> str:
    """A tolerance as the table shows it: 3 significant digits, or for a passed fp claim its decade (an fp
    tolerance is a rounding model evaluated on the data: its digits vary between machines, its decade not)."""
    return decade_text(tol) if fp and ok and tol > 0 else f"{tol:.3g}"


def check_absolute(name: str, measured: float, predicted: float, tol: float, why: str, *,
                   fp: bool = False) -> Claim:
    """|measured - predicted| <= tol (``fp=True``: shown as the bound, see the module docstring)."""
    _check_tol(tol)
    m, p = _num(measured), _num(predicted)
    ok = _finite(m, p) and abs(m - p) <= tol
    return Claim(name, m, p, "absolute", float(tol), f"|m-p| <= {_tol_text(tol, fp, ok)}", why, bool(ok), fp=fp)


def check_relative(name: str, measured: float, predicted: float, rtol: float, why: str, *,
                   fp: bool = False) -> Claim:
    """|measured - predicted| <= rtol * |predicted|."""
    _check_tol(rtol)
    m, p = _num(measured), _num(predicted)
    ok = _finite(m, p) and abs(m - p) <= rtol * abs(p)
    return Claim(name, m, p, "relative", float(rtol), f"|m-p| <= {_tol_text(rtol, fp, ok)}|p|", why, bool(ok),
                 fp=fp)


def check_zscore(
    name: str, measured: float, predicted: float, se: float, why: str, alpha: float = DEFAULT_ALPHA
) -> Claim:
    """|measured - predicted| <= z_{1-alpha/2} * se, se a standard error of ``measured``."""
    if not (math.isfinite(se) and se > 0):
        raise ValueError(f"standard error se = {se!r} must be finite and > 0")
    z = z_critical(alpha)
    m, p = _num(measured), _num(predicted)
    ok = _finite(m, p) and abs(m - p) <= z * se
    text = f"{z:.2f} SE = {z * se:.3g}"
    return Claim(name, m, p, "zscore", float(z * se), text, why, bool(ok), alpha)


def check_interval(
    name: str, measured: float, predicted: float, lo: float, hi: float, why: str,
    alpha: float = DEFAULT_ALPHA,
) -> Claim:
    """predicted lies in the (1 - alpha) confidence interval [lo, hi] around ``measured``."""
    _check_alpha(alpha)
    if not (_finite(lo, hi) and lo <= hi):
        raise ValueError(f"confidence interval [{lo!r}, {hi!r}] must be finite with lo <= hi")
    m, p = _num(measured), _num(predicted)
    ok = _finite(p) and lo <= p <= hi
    text = f"{100 * (1 - alpha):g}% CI [{lo:.4g}, {hi:.4g}]"
    return Claim(name, m, p, "interval", float(hi - lo) / 2, text, why, bool(ok), alpha)


def check_upper(name: str, measured: float, bound: float, why: str, tol: float = 0.0, *,
                fp: bool = False, rtol: float = 0.0) -> Claim:
    """A proved upper bound holds: measured <= bound + tol (``fp=True``: measured is fp error, shown as a bound).

    ``rtol`` (exclusive with ``tol``): measured <= bound (1 + rtol), a rounding slack relative to the bound, shown
    as such (an absolute slack computed from the bound would show the bound's digits a second time).
    """
    if tol and rtol:
        raise ValueError("give tol or rtol, not both")
    _check_tol(tol)
    _check_tol(rtol)
    m, p = _num(measured), _num(bound)
    if rtol:
        ok = _finite(m, p) and m <= p + rtol * abs(p)
        return Claim(name, m, p, "upper", float(rtol * abs(p)), f"m <= p(1 + {rtol:.3g})", why, bool(ok), fp=fp)
    ok = _finite(m, p) and m <= p + tol
    text = "m <= p" if tol == 0 else f"m <= p + {_tol_text(tol, fp, ok)}"
    return Claim(name, m, p, "upper", float(tol), text, why, bool(ok), fp=fp)


def check_lower(name: str, measured: float, bound: float, why: str, tol: float = 0.0, *,
                rtol: float = 0.0) -> Claim:
    """A proved lower bound holds: measured >= bound - tol, or with ``rtol``: measured >= bound (1 - rtol)."""
    if tol and rtol:
        raise ValueError("give tol or rtol, not both")
    _check_tol(tol)
    _check_tol(rtol)
    m, p = _num(measured), _num(bound)
    if rtol:
        ok = _finite(m, p) and m >= p - rtol * abs(p)
        return Claim(name, m, p, "lower", float(rtol * abs(p)), f"m >= p(1 - {rtol:.3g})", why, bool(ok))
    ok = _finite(m, p) and m >= p - tol
    text = "m >= p" if tol == 0 else f"m >= p - {tol:.3g}"
    return Claim(name, m, p, "lower", float(tol), text, why, bool(ok))


def check_chi2(name: str, z: Sequence[float], why: str, alpha: float = DEFAULT_ALPHA) -> Claim:
    """Joint consistency of k standardized residuals z_i = (m_i - p_i)/SE_i with zero.

    measured = sum z_i^2, predicted = k (its mean under the theory); passes
    when P(chi^2_k >= measured) >= alpha.
    """
    _check_alpha(alpha)
    zs = np.asarray(z, dtype=float).ravel()
    if zs.size == 0:
        raise ValueError("chi2 claim needs at least one standardized residual")
    stat = float(np.sum(zs**2))
    k = zs.size
    crit = float(stats.chi2.isf(alpha, k))
    ok = math.isfinite(stat) and stat <= crit
    text = f"chi2_{k} <= {crit:.3g}"
    return Claim(name, stat, float(k), "chi2", crit - k, text, why, bool(ok), alpha)


def number_text(x: float) -> str:
    """A predicted or measured value as the tables show it: an int as is, else 4 significant digits."""
    if isinstance(x, int):
        return str(x)
    if x == 0:
        return "0"
    return f"{x:.4g}"


def measured_text(r: dict[str, Any]) -> str:
    """The measured cell: 4 significant digits, or for a passed fp claim the bound it met.

    with ``b`` the decade of the tolerance: ``<= b`` for a residual (predicted 0), ``p ± b`` for an absolute claim,
    ``p(1 ± b)`` for a relative one. A failed fp claim shows its digits (the run fails anyway).
    """
    if not r.get("fp") or not r["passed"]:
        return number_text(r["measured"])
    tol = r["tolerance"]
    up = decade_text(tol) if tol > 0 else "0"
    if r["rule"] == "upper":
        return f"<= {number_text(r['predicted'])}" + (f" + {up}" if tol else "")
    if r["rule"] == "absolute":
        return f"<= {up}" if r["predicted"] == 0 else f"{number_text(r['predicted'])} ± {up}"
    if r["rule"] == "relative":
        return f"{number_text(r['predicted'])}(1 ± {up})"
    return number_text(r["measured"])


COLUMNS = ("claim", "measured", "predicted", "tolerance", "alpha", "status")


def table_rows(claims: Sequence[Claim | dict[str, Any]], chapter: str | None = None) -> list[list[str]]:
    """Rows of strings for the claims table (the chapter column first when given)."""
    rows = []
    for c in claims:
        r = c if isinstance(c, dict) else c.as_record()
        alpha = "" if r.get("alpha") is None else f"{r['alpha']:g}"
        row = [r["name"], measured_text(r), number_text(r["predicted"]), r["tolerance_text"], alpha,
               "pass" if r["passed"] else "FAIL"]
        rows.append(([chapter] if chapter is not None else []) + row)
    return rows


def render_text(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A fixed-width text table."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=False))
    body = ["  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=False)) for r in rows]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


def render_html(rows: Sequence[Sequence[str]], header: Sequence[str], notes: Sequence[str] = (), *,
                table_class: str = "claims-table") -> str:
    """An HTML table; ``notes`` (one per row) become a justification column.

    A claims table (the default class) marks each row passed or failed by its last cell.
    """
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    if notes:
        head += "<th>why this tolerance</th>"
    lines = []
    for i, r in enumerate(rows):
        cells = "".join(f"<td>{html.escape(str(x))}</td>" for x in r)
        if notes:
            cells += f"<td>{html.escape(notes[i])}</td>"
        if table_class == "claims-table":
            cls = "claim-pass" if r[-1] == "pass" else "claim-fail"
            lines.append(f'<tr class="{cls}">{cells}</tr>')
        else:
            lines.append(f"<tr>{cells}</tr>")
    return (
        f'<table class="{table_class}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
    )


class ClaimSet:
    """The claims of one chapter run, in the order they were made."""

    def __init__(self, chapter: str) -> None:
        self.chapter = chapter
        self.claims: list[Claim] = []
        self._section = ""
        self._checks: tuple[str, ...] = ()

    def experiment(self, section: str, *checks: str) -> None:
        """Claims added from now on are made in the section labelled ``section`` and test the theorem-like
        blocks labelled ``checks`` (e.g. ``claims.experiment("ch-c1", "ch-thm-minimax")``)."""
        if not section or not checks or not all(checks):
            raise ValueError("an experiment names its section's label and at least one theorem label it checks")
        self._section, self._checks = section, tuple(checks)

    def add(self, claim: Claim) -> Claim:
        if any(c.name == claim.name for c in self.claims):
            raise ValueError(f"duplicate claim name {claim.name!r}")
        if not claim.section:
            claim = replace(claim, section=self._section, checks=self._checks)
        self.claims.append(claim)
        return claim

    def exact(self, name: str, measured: Any, predicted: Any, why: str) -> Claim:
        return self.add(check_exact(name, measured, predicted, why))

    def absolute(self, name: str, measured: float, predicted: float, tol: float, why: str, *,
                 fp: bool = False) -> Claim:
        return self.add(check_absolute(name, measured, predicted, tol, why, fp=fp))

    def relative(self, name: str, measured: float, predicted: float, rtol: float, why: str, *,
                 fp: bool = False) -> Claim:
        return self.add(check_relative(name, measured, predicted, rtol, why, fp=fp))

    def zscore(self, name: str, measured: float, predicted: float, se: float, why: str,
               alpha: float = DEFAULT_ALPHA) -> Claim:
        return self.add(check_zscore(name, measured, predicted, se, why, alpha))

    def interval(self, name: str, measured: float, predicted: float, lo: float, hi: float, why: str,
                 alpha: float = DEFAULT_ALPHA) -> Claim:
        return self.add(check_interval(name, measured, predicted, lo, hi, why, alpha))

    def upper(self, name: str, measured: float, bound: float, why: str, tol: float = 0.0, *,
              fp: bool = False) -> Claim:
        return self.add(check_upper(name, measured, bound, why, tol, fp=fp))

    def lower(self, name: str, measured: float, bound: float, why: str, tol: float = 0.0) -> Claim:
        return self.add(check_lower(name, measured, bound, why, tol))

    def chi2(self, name: str, z: Sequence[float], why: str, alpha: float = DEFAULT_ALPHA) -> Claim:
        return self.add(check_chi2(name, z, why, alpha))

    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims if not c.passed]

    def record(self) -> dict[str, Any]:
        """The machine-readable record stored in the notebook's outputs."""
        return {"chapter": self.chapter, "claims": [c.as_record() for c in self.claims]}

    def text(self) -> str:
        return render_text(table_rows(self.claims), COLUMNS)

    def html(self) -> str:
        return render_html(table_rows(self.claims), COLUMNS, [c.justification for c in self.claims])

    def markdown(self) -> str:
        """The table as the book shows it (MyST, typeset and linked at build time: :mod:`.claims_markdown`)."""
        records = [c.as_record() for c in self.claims]
        return claims_markdown(records, [(measured_text(r), number_text(r["predicted"])) for r in records])

    def report(self) -> None:
        """Show the table, store the record, and raise :class:`ClaimsFailed` if any claim failed.

        The output carries the fixed-width table (``text/plain``: the command line, nbval) and the book's
        table (``text/markdown``, MyST); no HTML, so that the book renders the Markdown.
        """
        if not self.claims:
            raise ValueError("no claims were made: a chapter must check something")
        from IPython.display import display

        display({"text/plain": self.text(), "text/markdown": self.markdown()}, raw=True,
                metadata={CLAIMS_KEY: self.record()})
        if self.failed:
            names = ", ".join(c.name for c in self.failed)
            raise ClaimsFailed(f"{len(self.failed)} of {len(self.claims)} claims failed: {names}")
