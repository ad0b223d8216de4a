"""Algorithm 1 of Plecko & Bareinboim, the "Business Necessity Cookbook".

Implements Sec. 3.1 of *Reconciling predictive and statistical parity: a causal approach*
(arXiv 2306.05059): for every effect ``CE`` in ``{DE, IE, SE}``,

* ``CE`` in BN: causal predictive parity (Def. 5, Eq. 19), ``Ctf-CE(y_hat) = Ctf-CE(y)``;
* ``CE`` not in BN: causal statistical parity (Def. 4, Eq. 20), ``Ctf-CE(y_hat) = 0``.

The paper tests these at population level only and, on COMPAS, decides by eye from 95% intervals.
Here each assertion is a test on the doubly robust estimates of :func:`cflib.fairness.effects.ctf_effects`.
Every measure is linear in the outcome, so the CPP comparison is run on the paired difference
``D = Y - Y_hat`` (one estimate, one interval, correct pairing; notes Sec. 2.10). Two rules:

* ``test="difference"`` (default, the paper's de-facto rule): an assertion fails when the
  ``1 - alpha`` interval of the tested quantity excludes 0;
* ``test="equivalence"``: two one-sided tests; an assertion passes only when the ``1 - 2 alpha``
  interval lies inside ``[-margin, margin]`` ("no significant difference" is not equality).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..results import Interval
from ..validation import check_choice, check_probability, check_real
from .effects import EffectEstimates, ctf_effects
from .sfm import EFFECTS, StandardFairnessModel, bn_effects

__all__ = ["BNCheck", "CPPResult", "causal_predictive_parity", "cookbook_population"]


@dataclass(frozen=True)
class BNCheck:
    """One assertion of Algorithm 1.

    Attributes
    ----------
    effect : str
        ``"DE"``, ``"IE"`` or ``"SE"``.
    in_bn : bool
        Whether the effect is in business necessity.
    est_y, est_yhat : float
        ``Ctf-CE(y)`` and ``Ctf-CE(y_hat)``.
    tested : float
        ``Ctf-CE(y - y_hat)`` if in BN, else ``Ctf-CE(y_hat)``; the assertion is ``tested = 0``.
    se : float
        Standard error of ``tested``.
    ci : cflib.results.Interval
        Interval used by the rule.
    pvalue : float
        Two-sided p-value of ``tested = 0`` (difference test) or the larger TOST p-value.
    passed : bool
    """

    effect: str
    in_bn: bool
    est_y: float
    est_yhat: float
    tested: float
    se: float
    ci: Interval
    pvalue: float
    passed: bool


@dataclass(frozen=True)
class CPPResult:
    """The outcome of Algorithm 1 for one predictor.

    Attributes
    ----------
    checks : tuple of BNCheck
        One per effect.
    business_necessity : frozenset of str
        Effects in BN.
    test : str
        ``"difference"`` or ``"equivalence"``.
    alpha : float
    margin : float or None
    estimates : dict
        The :class:`~cflib.fairness.effects.EffectEstimates` of ``y``, ``y_hat`` and their difference.
    """

    checks: tuple
    business_necessity: frozenset
    test: str
    alpha: float
    margin: float | None
    estimates: dict

    @property
    def passed(self) -> bool:
        """``True`` (Algorithm 1 returns SUCCESS) when every assertion passes."""
        return all(c.passed for c in self.checks)

    @property
    def statistic(self) -> float:
        """Largest ``|tested| / se`` over the three assertions."""
        return float(max(abs(c.tested) / c.se if c.se > 0 else np.inf * (c.tested != 0) for c in self.checks))

    @property
    def pvalue(self) -> float:
        """Bonferroni-adjusted p-value over the three assertions (smallest p times 3, capped at 1)."""
        p = [c.pvalue for c in self.checks]
        return float(min(1.0, len(p) * min(p))) if self.test == "difference" else float(max(p))

    @property
    def verdict(self) -> str:
        """``"SUCCESS"`` or ``"FAIL"``, as Algorithm 1 prints it."""
        return "SUCCESS" if self.passed else "FAIL"

    def summary(self) -> pd.DataFrame:
        """One row per effect.

        Returns
        -------
        pandas.DataFrame
            ``in_bn, assertion, ctf_y, ctf_yhat, tested, ci_low, ci_high, pvalue, passed``.
        """
        rows = []
        for c in self.checks:
            rows.append(
                {
                    "effect": c.effect,
                    "in_bn": c.in_bn,
                    "assertion": "Ctf(y_hat) = Ctf(y)" if c.in_bn else "Ctf(y_hat) = 0",
                    "ctf_y": c.est_y,
                    "ctf_yhat": c.est_yhat,
                    "tested": c.tested,
                    "ci_low": c.ci[0],
                    "ci_high": c.ci[1],
                    "pvalue": c.pvalue,
                    "passed": c.passed,
                }
            )
        return pd.DataFrame(rows).set_index("effect")

    def plot(self, ax: Any = None) -> Any:
        """The tested quantities with their intervals; failed assertions in red.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        for i, c in enumerate(self.checks):
            col = "#009E73" if c.passed else "#D55E00"
            ax.errorbar(
                [c.tested], [i], xerr=[[c.tested - c.ci[0]], [c.ci[1] - c.tested]], fmt="o", color=col, capsize=4
            )
        ax.axvline(0, color="0.3", lw=0.8)
        if self.margin is not None and self.test == "equivalence":
            for s in (-1, 1):
                ax.axvline(s * self.margin, color="0.5", lw=0.8, ls=":")
        ax.set_yticks(range(len(self.checks)))
        ax.set_yticklabels([f"{c.effect} ({'y - y_hat' if c.in_bn else 'y_hat'})" for c in self.checks])
        ax.set_xlabel("tested quantity (0 = assertion holds)")
        ax.set_title(f"Algorithm 1: {self.verdict}")
        return ax


def causal_predictive_parity(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    y: str,
    y_hat: str,
    business_necessity: Iterable[str] = frozenset({"SE"}),
    *,
    test: str = "difference",
    alpha: float = 0.05,
    margin: float | None = None,
    estimates: dict[str, EffectEstimates] | None = None,
    **kwargs: Any,
) -> CPPResult:
    """Algorithm 1 (Business Necessity Cookbook) on data.

    Parameters
    ----------
    data : pandas.DataFrame
    sfm : StandardFairnessModel
        Roles of ``X``, ``Z``, ``W`` (its ``y`` is ignored in favour of the arguments).
    y, y_hat : str
        True outcome and predictor columns.
    business_necessity : set of str
        Effects (``DE``, ``IE``, ``SE``) or variable groups (``Z`` for SE, ``W`` for IE).
    test : {"difference", "equivalence"}
        Decision rule (see the module docstring).
    alpha : float
        Level.
    margin : float, optional
        Equivalence margin, required for ``test="equivalence"``.
    estimates : dict, optional
        Precomputed output of ``ctf_effects(data, sfm, [y, y_hat, D])`` keyed ``"y"``, ``"y_hat"`` and
        ``"diff"`` (to reuse fits).
    **kwargs
        Passed to :func:`cflib.fairness.effects.ctf_effects` (``learner``, ``n_folds``, ``seed``...).

    Returns
    -------
    CPPResult
    """
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a StandardFairnessModel, got {type(sfm).__name__}")
    for name, col in (("y", y), ("y_hat", y_hat)):
        if not isinstance(col, str) or not col:
            raise TypeError(f"{name} must be a column name (a non-empty string), got {col!r}")
    check_choice(test, "test", ("difference", "equivalence"))
    check_probability(alpha, "alpha")
    if not alpha < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    if margin is not None:
        check_real(margin, "margin")
    if test == "equivalence" and (margin is None or margin <= 0):
        raise ValueError("test='equivalence' needs a positive margin (e.g. margin=0.01 for 1 percentage point)")
    bn = bn_effects(business_necessity)
    if estimates is not None and not isinstance(estimates, Mapping):
        raise TypeError(
            f"estimates must be a dict with keys 'y', 'y_hat' and 'diff' of EffectEstimates, got {type(estimates).__name__}"
        )
    if estimates is None:
        sfm.validate(data, [y, y_hat])
        dname = "__cflib_diff__"
        d = data.assign(**{dname: data[y].astype(float) - data[y_hat].astype(float)})
        res = ctf_effects(d, sfm, [y, y_hat, dname], **kwargs)
        estimates = {"y": res[y], "y_hat": res[y_hat], "diff": res[dname]}
    missing = {"y", "y_hat", "diff"} - set(estimates)
    if missing:
        raise ValueError(f"estimates lacks {sorted(missing)}")
    checks = []
    for e in EFFECTS:
        src = estimates["diff"] if e in bn else estimates["y_hat"]
        t, s = src.estimate[e], src.se[e]
        if test == "difference":
            z = stats.norm.ppf(1 - alpha / 2)
            ci = (t - z * s, t + z * s)
            p = float(2 * stats.norm.sf(abs(t) / s)) if s > 0 else float(t == 0)
            ok = bool(ci[0] <= 0 <= ci[1])
        else:
            assert margin is not None  # test="equivalence" needs a margin (checked above)
            z = stats.norm.ppf(1 - alpha)
            ci = (t - z * s, t + z * s)
            p = (
                float(max(stats.norm.sf((t + margin) / s), stats.norm.cdf((t - margin) / s)))
                if s > 0
                else float(abs(t) >= margin)
            )
            ok = bool(-margin < ci[0] and ci[1] < margin)
        checks.append(
            BNCheck(
                e,
                e in bn,
                estimates["y"].estimate[e],
                estimates["y_hat"].estimate[e],
                float(t),
                float(s),
                Interval.of(ci, estimate=float(t), method="normal, influence-function SE"),
                p,
                ok,
            )
        )
    return CPPResult(tuple(checks), bn, test, alpha, margin, estimates)


def cookbook_population(
    truth_y: dict[str, float],
    truth_yhat: dict[str, float],
    business_necessity: Iterable[str],
    atol: float = 1e-3,
) -> pd.DataFrame:
    """Algorithm 1 at population level, on known Ctf measures (no sampling error).

    Parameters
    ----------
    truth_y, truth_yhat : dict
        ``DE``, ``IE``, ``SE`` of the outcome and of the predictor.
    business_necessity : set of str
    atol : float
        Tolerance of the equalities (Monte Carlo error of the truth).

    Returns
    -------
    pandas.DataFrame
        One row per effect: ``in_bn, ctf_y, ctf_yhat, target, gap, passed``.
    """
    bn = bn_effects(business_necessity)
    for name, truth in (("truth_y", truth_y), ("truth_yhat", truth_yhat)):
        if not isinstance(truth, Mapping):
            raise TypeError(f"{name} must be a dict with keys {EFFECTS}, got {type(truth).__name__}")
        missing = [e for e in EFFECTS if e not in truth]
        if missing:
            raise ValueError(f"{name} lacks {missing}; it needs {EFFECTS}")
        for e in EFFECTS:
            check_real(truth[e], f"{name}[{e!r}]")
    check_real(atol, "atol", low=0.0)
    rows = []
    for e in EFFECTS:
        target = truth_y[e] if e in bn else 0.0
        gap = truth_yhat[e] - target
        rows.append(
            {
                "effect": e,
                "in_bn": e in bn,
                "ctf_y": truth_y[e],
                "ctf_yhat": truth_yhat[e],
                "target": target,
                "gap": gap,
                "passed": bool(abs(gap) <= atol),
            }
        )
    return pd.DataFrame(rows).set_index("effect")
