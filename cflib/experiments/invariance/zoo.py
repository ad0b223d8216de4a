"""The Table 1 classifier zoo of Sec. 6.2 / App. G.1 and its audit on one synthetic dataset.

The zoo departs from the paper where scikit-learn or the data force it:

* ``max_features='auto'`` of the random forest no longer exists in scikit-learn; ``'sqrt'`` is what
  it meant for classifiers.
* Every classifier is preceded by a :class:`~sklearn.preprocessing.StandardScaler` (``scale=True``):
  the synthetic features are of order 10^3, which stalls the SVMs, logistic regression and MLPs.
* Several types are deterministic whatever the seed (logistic regression with lbfgs, the SVCs,
  unsubsampled trees and boosting), so the 100 "models" of the paper contain duplicates;
  :func:`classifier_zoo` can give those types a single seed (``dedupe=True``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ...stats.group_parity import GroupParityResult
    from ...stats.invariance import CITResult

#: Table 1: short name -> (description, hyperparameters, depends on the seed).
TABLE1: dict[str, tuple[str, dict[str, Any], bool]] = {
    "linear_svc": ("Linear SVC", {"C": 1.0, "loss": "squared_hinge", "dual": True, "tol": 1e-4}, True),
    "svc_rbf": ("SVC, RBF kernel", {"C": 1.0, "kernel": "rbf", "gamma": "scale"}, False),
    "svc_poly": ("SVC, polynomial kernel", {"C": 1.0, "kernel": "poly", "degree": 3, "gamma": "scale"}, False),
    "logreg": ("Logistic regression", {"penalty": "l2", "C": 1.0, "solver": "lbfgs", "max_iter": 100}, False),
    "tree": ("Decision tree", {"criterion": "gini", "splitter": "best", "max_depth": None}, True),
    "forest": ("Random forest", {"n_estimators": 50, "criterion": "gini", "max_features": "sqrt"}, True),
    "boosting": ("Gradient boosting", {"n_estimators": 100, "learning_rate": 0.1, "max_depth": 3}, False),
    "tree5": ("Decision tree, depth 5", {"max_depth": 5}, True),
    "mlp_16_8_4": (
        "MLP (16, 8, 4)",
        {"hidden_layer_sizes": (16, 8, 4), "activation": "relu", "solver": "adam", "max_iter": 500},
        True,
    ),
    "mlp_16_4": (
        "MLP (16, 4)",
        {"hidden_layer_sizes": (16, 4), "activation": "relu", "solver": "adam", "max_iter": 500},
        True,
    ),
}


@dataclass(eq=False)
class ZooMember:
    """One classifier of the zoo.

    Attributes
    ----------
    name : str
        ``"<type>-s<seed>"``.
    kind : str
        Key of :data:`TABLE1`.
    seed : int
        ``random_state`` of the classifier.
    estimator : sklearn estimator
        The (unfitted or fitted) pipeline.
    """

    name: str
    kind: str
    seed: int
    estimator: Any = field(repr=False)

    def predict(self, x: Any) -> np.ndarray:
        """Hard predictions of the fitted estimator."""
        return self.estimator.predict(x)


def make_classifier(kind: str, seed: int = 0, *, scale: bool = True) -> Any:
    """Build one Table 1 classifier.

    Parameters
    ----------
    kind : str
        Key of :data:`TABLE1`.
    seed : int
        ``random_state``.
    scale : bool
        Prepend a :class:`~sklearn.preprocessing.StandardScaler`.

    Returns
    -------
    sklearn.pipeline.Pipeline or estimator
    """
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    if kind not in TABLE1:
        raise ValueError(f"kind must be one of {list(TABLE1)}, got {kind!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    cls = {
        "linear_svc": LinearSVC,
        "svc_rbf": SVC,
        "svc_poly": SVC,
        "logreg": LogisticRegression,
        "tree": DecisionTreeClassifier,
        "forest": RandomForestClassifier,
        "boosting": GradientBoostingClassifier,
        "tree5": DecisionTreeClassifier,
        "mlp_16_8_4": MLPClassifier,
        "mlp_16_4": MLPClassifier,
    }[kind]
    params = dict(TABLE1[kind][1])
    if kind == "logreg" and "penalty" in params:
        params.pop("penalty")  # l2 is the default; passing it is deprecated in scikit-learn >= 1.8
    est = cls(random_state=int(seed), **params)
    return make_pipeline(StandardScaler(), est) if scale else est


def classifier_zoo(
    seeds: Iterable[int] = range(10),
    *,
    include: Sequence[str] | None = None,
    scale: bool = True,
    dedupe: bool = False,
) -> list[ZooMember]:
    """The Table 1 zoo: every type in ``include`` with every seed.

    Parameters
    ----------
    seeds : iterable of int
        ``random_state`` values (``range(10)`` gives the paper's 100 classifiers).
    include : sequence of str, optional
        Keys of :data:`TABLE1` (default: all ten).
    scale : bool
        Standardise the inputs first.
    dedupe : bool
        Give the seed-independent types (``TABLE1[k][2] is False``) only the first seed.

    Returns
    -------
    list of ZooMember
        Unfitted members.
    """
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must contain at least one seed")
    include = list(TABLE1) if include is None else list(include)
    unknown = [k for k in include if k not in TABLE1]
    if unknown:
        raise ValueError(f"unknown classifier type(s) {unknown}; choose from {list(TABLE1)}")
    out = []
    for kind in include:
        for s in seeds[:1] if dedupe and not TABLE1[kind][2] else seeds:
            out.append(
                ZooMember(name=f"{kind}-s{s}", kind=kind, seed=s, estimator=make_classifier(kind, s, scale=scale))
            )
    return out


def fit_zoo(members: Sequence[ZooMember], x: Any, y: Any) -> pd.DataFrame:
    """Fit every member on ``(x, y)``; return a table of members with their training accuracy.

    Convergence warnings (LinearSVC, small MLPs at Table 1's iteration limits) are silenced: the
    paper's hyperparameters are kept on purpose and a non-converged model is still a model to audit.

    Parameters
    ----------
    members : sequence of ZooMember
        From :func:`classifier_zoo`.
    x : array-like of shape (n, p)
        Training features.
    y : array-like of shape (n,)
        Training labels.

    Returns
    -------
    pandas.DataFrame
        Columns ``name, kind, seed, train_acc``.
    """
    from sklearn.exceptions import ConvergenceWarning

    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(f"x must be (n, p) and y (n,) with the same n, got {x.shape} and {y.shape}")
    if np.unique(y).size < 2:
        raise ValueError("y has a single class; a classifier needs both labels in the training data")
    rows = []
    for m in members:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m.estimator.fit(x, y)
        rows.append(
            {"name": m.name, "kind": m.kind, "seed": m.seed, "train_acc": float(np.mean(m.estimator.predict(x) == y))}
        )
    return pd.DataFrame(rows)


def audit_zoo(
    members: Sequence[ZooMember],
    data: Any,
    test: Any,
    *,
    n_mc: int = 4,
    z_layer: str | int = "root",
    learner: Any = None,
    h_mode: str = "marginalize",
    seed: int = 0,
) -> pd.DataFrame:
    """Audit every fitted member on a synthetic dataset: ECA, CIT-LR (two forms), DP and EO.

    This is the protocol of Sec. 6.2 / App. G.1 for one dataset (the points of one column of
    Fig. 2). The members must already be fitted on the training units.

    Parameters
    ----------
    members : sequence of ZooMember
        Fitted classifiers.
    data : cflib.data.invariance_synthetic.InvarianceData
        The dataset (features, attribute, layers, labels and the SCM for counterfactuals).
    test : array-like of bool, shape (n,)
        Test units; the others are the training units (used by the regression form to fit
        :math:`\\hat g, \\hat h`, as in the authors' code).
    n_mc : int
        Monte-Carlo draws of the oracle generator per unit and level (generator form).
    z_layer : "root" or int
        Which layer the regression form conditions on (``"root"``: :math:`Z_n`; ``1``: the code's).
    learner : scikit-learn estimator, optional
        Learner of the regression form (default: logistic regression).
    h_mode : str
        :math:`\\hat h` of the regression form (:func:`cflib.stats.invariance.cit_lr_test`). The default,
        the A-marginal of :math:`\\hat g`, is the form Figure 2 shows; it is valid here because the
        root :math:`Z_n` is independent of A.
    seed : int
        Randomness of the Monte-Carlo draws.

    Returns
    -------
    pandas.DataFrame
        One row per member: ``name, kind, seed, accuracy, positive_rate, eca`` and, for each of
        ``cit_gen, cit_reg, dp, eo``, the columns ``<test>_t``, ``<test>_p``, ``<test>_log10p``.
    """
    from ...stats.invariance import (
        cit_lr_generative,
        cit_lr_test,
        counterfactual_predictions,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    test = np.asarray(test)
    if test.dtype != bool or test.shape != (data.n,):
        raise ValueError(f"test must be a boolean mask of shape ({data.n},), got {test.dtype} {test.shape}")
    te = np.where(test)[0]
    z_test = data.z_root[te]
    p = data.params.p_a
    rows = []
    for m in members:
        y_all = np.asarray(m.predict(data.x))
        y_te = y_all[te]
        eca = expected_counterfactual_accuracy(m, data.x[te], data.x_cf[te]).eca
        cf = counterfactual_predictions(m.predict, data.sample_x, z_test, [0, 1], n_mc=n_mc, seed=seed)
        res: dict[str, CITResult | GroupParityResult | None] = {
            "cit_gen": cit_lr_generative(y_te, data.a[te], cf, p_a=[1 - p, p]),
            "cit_reg": cit_lr_test(
                y_all, data.a, data.z_layer(z_layer), learner=learner, test_mask=test, h_mode=h_mode
            ),
            "dp": demographic_parity_test(y_te, data.a[te]),
        }
        try:
            res["eo"] = equal_opportunity_test(y_te, data.a[te], data.y[te])
        except ValueError:  # too few positives in a group of the test split: no EO test possible
            res["eo"] = None
        row = {
            "name": m.name,
            "kind": m.kind,
            "seed": m.seed,
            "accuracy": float(np.mean(y_te == data.y[te])),
            "positive_rate": float(np.mean(y_te)),
            "eca": float(eca),
        }
        for key, r in res.items():
            row[f"{key}_t"] = np.nan if r is None else r.statistic
            row[f"{key}_p"] = np.nan if r is None else r.pvalue
            row[f"{key}_log10p"] = np.nan if r is None else r.log10_pvalue
        rows.append(row)
    return pd.DataFrame(rows)
