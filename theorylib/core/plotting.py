"""One house style and the two figures every chapter uses."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np

from .rates import LogLogFit

HOUSE_STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "svg.hashsalt": "theorylib",
}
THEORY_COLOR = "#1f4e79"
MEASURED_COLOR = "#c0392b"


def use_house_style() -> None:
    """Apply the book's matplotlib style (idempotent)."""
    mpl.rcParams.update(HOUSE_STYLE)


def theory_vs_measured(
    ax,
    x_theory: np.ndarray,
    y_theory: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    yerr: np.ndarray | None = None,
    *,
    theory_label: str = "theory",
    measured_label: str = "measured",
    xlabel: str = "",
    ylabel: str = "",
    logx: bool = False,
    logy: bool = False,
    color: str | None = None,
):
    """A theory curve (line) with measured points (markers, error bars = ``yerr``).

    The points are drawn over the line (``zorder``), hollow, so that a point sitting on the curve stays visible.
    """
    c = color or THEORY_COLOR
    ax.plot(x_theory, y_theory, "-", color=c, lw=1.2, alpha=0.8, label=theory_label, zorder=2)
    ax.errorbar(x, y, yerr=yerr, fmt="o", color=color or MEASURED_COLOR, mfc="white", mew=1.5, capsize=3,
                label=measured_label, zorder=3)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def loglog_rate(
    ax,
    x: np.ndarray,
    y: np.ndarray,
    fit: LogLogFit,
    predicted_slope: float,
    *,
    yerr: np.ndarray | Sequence[float] | None = None,
    measured_label: str = "measured",
    xlabel: str = "",
    ylabel: str = "",
):
    """Log-log points with the fitted line (slope +- SE) and a line of the predicted slope.

    The predicted line passes through the geometric mean of the data so the two
    slopes can be compared by eye.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ax.errorbar(x, y, yerr=yerr, fmt="o", color=MEASURED_COLOR, capsize=3, label=measured_label, zorder=3)
    grid = np.geomspace(x.min(), x.max(), 50)
    ax.plot(grid, fit.predict(grid), "-", color=MEASURED_COLOR, alpha=0.6,
            label=f"fit: slope ${fit.slope:.3f} \\pm {fit.slope_se:.3f}$", zorder=2)
    lx, ly = np.log(x).mean(), np.log(y).mean()
    ax.plot(grid, np.exp(ly + predicted_slope * (np.log(grid) - lx)), "--", color=THEORY_COLOR,
            label=f"predicted slope ${predicted_slope:.3f}$", zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax
