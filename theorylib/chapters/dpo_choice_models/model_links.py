"""The measured side's links and scores: human choice models F and loss links G, with stable tails.

A compliant link is a continuous, strictly increasing F: R -> (0, 1) with F(-t) = 1 - F(t). The loss of a
DPO variant on a comparison won by w over l is u(s) = S(G(s)), s = h_w - h_l + offset, for a score S of the
predicted probability of the observed outcome (log, Brier, Matsushita, or the improper quartic score).
Never imports the theory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

Array = np.ndarray


@dataclass(frozen=True)
class Link:
    """A compliant link: cdf F, log F, log of the density f, d log f / dt, and the inverse cdf."""

    name: str
    cdf: Callable[[Array], Array]
    logcdf: Callable[[Array], Array]
    logpdf: Callable[[Array], Array]
    dlogpdf: Callable[[Array], Array]
    inv_cdf: Callable[[Array], Array]

    def pdf(self, t: Array) -> Array:
        return np.exp(self.logpdf(t))


def _cauchy_logcdf(t: Array) -> Array:
    t = np.asarray(t, dtype=float)
    # log(1/2 + arctan(t)/pi); for t < 0 the argument is arctan2(1, -t)/pi, computed without cancellation
    return np.where(t < 0, np.log(np.arctan2(1.0, -np.minimum(t, 0.0)) / np.pi),
                    np.log(0.5 + np.arctan(np.maximum(t, 0.0)) / np.pi))


LINKS: dict[str, Link] = {
    "logistic": Link(
        "logistic", special.expit, special.log_expit,
        lambda t: special.log_expit(t) + special.log_expit(-np.asarray(t, dtype=float)),
        lambda t: -np.tanh(np.asarray(t, dtype=float) / 2), special.logit),
    "probit": Link(
        "probit", special.ndtr, special.log_ndtr,
        lambda t: -np.asarray(t, dtype=float) ** 2 / 2 - 0.5 * np.log(2 * np.pi),
        lambda t: -np.asarray(t, dtype=float), special.ndtri),
    "cauchy": Link(
        "cauchy", lambda t: 0.5 + np.arctan(t) / np.pi, _cauchy_logcdf,
        lambda t: -np.log(np.pi) - np.log1p(np.asarray(t, dtype=float) ** 2),
        lambda t: -2 * np.asarray(t, dtype=float) / (1 + np.asarray(t, dtype=float) ** 2),
        lambda p: np.tan(np.pi * (np.asarray(p, dtype=float) - 0.5))),
}

SCORES = ("log", "brier", "matsushita", "quartic")


def get_link(name: str) -> Link:
    """The link called ``name`` (ValueError for an unknown name)."""
    if name not in LINKS:
        raise ValueError(f"unknown link {name!r}; known: {', '.join(LINKS)}")
    return LINKS[name]


def margin_choice_cdf(delta: Array, gamma: float) -> Array:
    """The choice model of margin-gamma DPO: e^D (e^D + e^g) / (e^{2D} + 2 e^{D+g} + 1), computed stably.

    Dividing by e^{2D} for D > 0 (and using the symmetry for D < 0) keeps every exponential <= e^gamma.
    """
    d = np.abs(np.asarray(delta, dtype=float))
    e = np.exp(-d)
    b = np.exp(gamma)
    upper = (1 + b * e) / (1 + 2 * b * e + e * e)
    return np.where(np.asarray(delta) >= 0, upper, 1 - upper)


def data_cdf(key: str, delta: Array) -> Array:
    """P(i beats j) = F(delta) for the human choice model ``key``: a link name or ``"margin:GAMMA"``."""
    if key.startswith("margin:"):
        return margin_choice_cdf(delta, float(key.split(":", 1)[1]))
    return get_link(key).cdf(np.asarray(delta, dtype=float))


def score_terms(score: str, link: Link, s: Array) -> tuple[Array, Array, Array]:
    """u(s) = S(G(s)) and its first two derivatives in s, for the loss of one comparison."""
    s = np.asarray(s, dtype=float)
    lf, lfm = link.logcdf(s), link.logcdf(-s)
    lg, dl = link.logpdf(s), link.dlogpdf(s)
    r, rm = np.exp(lg - lf), np.exp(lg - lfm)  # g/G(s), g/G(-s)
    if score == "log":
        return -lf, -r, r * r - dl * r
    if score == "brier":
        Gm, g = np.exp(lfm), np.exp(lg)
        return Gm**2, -2 * Gm * g, 2 * g * g - 2 * Gm * g * dl
    if score == "matsushita":
        u = np.exp(0.5 * (lfm - lf))
        v1 = -0.5 * (rm + r)
        v2 = -0.5 * (dl * rm + rm * rm + dl * r - r * r)
        return u, u * v1, u * (v2 + v1 * v1)
    if score == "quartic":
        Gm, g = np.exp(lfm), np.exp(lg)
        return Gm**4, -4 * Gm**3 * g, 12 * Gm**2 * g * g - 4 * Gm**3 * g * dl
    raise ValueError(f"unknown score {score!r}; known: {', '.join(SCORES)}")
