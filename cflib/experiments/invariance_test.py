"""The experiments of the chapter *Counterfactual invariance test*: pipelines, studies and claims.

Ma, Quinzan, Willem & Bauer, *AI Alignment in Medical Imaging: Unveiling Hidden Biases Through
Counterfactual Analysis*. One section per notebook of ``notebooks/invariance-test/``:

* the Table 1 classifier zoo of Sec. 6.2 / App. G.1 (:data:`TABLE1`, :func:`classifier_zoo`,
  :func:`fit_zoo`, :func:`audit_zoo`) and the synthetic studies: the ECA identity (notebook 01),
  Figure 2 (notebook 02), calibration, power and the parity counterexamples (notebook 03,
  :func:`simulate_cit_pvalues`);
* the toy chest X-ray experiments of Sec. 6.3: the true counterfactuals and Table 6 (notebook 04,
  :func:`one_vs_rest_auc`), the latent-diffusion counterfactuals measured against the truth
  (notebook 05), and the CNN zoo audit of Figures 3-4 and 8-12 (notebook 06, :func:`train_zoo`,
  :func:`audit_cnn_zoo`);
* ``claims_01`` ... ``claims_07``: each notebook's claim verdicts, decided on intervals (:mod:`cflib.verdicts`).

The Table 1 zoo departs from the paper where scikit-learn or the data force it:

* ``max_features='auto'`` of the random forest no longer exists in scikit-learn; ``'sqrt'`` is what
  it meant for classifiers.
* Every classifier is preceded by a :class:`~sklearn.preprocessing.StandardScaler` (``scale=True``):
  the synthetic features are of order 10^3, which stalls the SVMs, logistic regression and MLPs.
* Several types are deterministic whatever the seed (logistic regression with lbfgs, the SVCs,
  unsubsampled trees and boosting), so the 100 "models" of the paper contain duplicates;
  :func:`classifier_zoo` can give those types a single seed (``dedupe=True``).

The CNN zoo stands in for the paper's 10 torchvision architectures x 10 checkpoints trained on
CheXpert / MIMIC-CXR: small classifiers (:class:`cflib.models.cnn_zoo.SmallCNN`) trained per disease on
toy chest X-rays in which the group trace predicts the label with strength ``rho``
(:func:`cflib.data.toy_cxr.shortcut_training_set`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import claims, plotting
from .. import verdicts as vd
from ..data.invariance_synthetic import (
    InvarianceData,
    SyntheticParams,
    invariance_synthetic,
    parity_world,
)
from ..data.toy_cxr import DISEASES, GROUPS, ToyCXR, shortcut_training_set

if TYPE_CHECKING:  # torch is imported only by the image experiments
    from ..models.cnn_zoo import SmallCNN

__all__ = [
    "TABLE1", "ZooMember", "make_classifier", "classifier_zoo", "fit_zoo", "audit_zoo", "simulate_cit_pvalues",
    "dataset_overview", "counterfactual_checks", "theorem42_enumeration", "eca_identity_study", "plot_eca_identity",
    "FIGURE2_TESTS", "table1", "audit_synthetic_zoos", "plot_figure2", "figure2_alignment", "alignment_pivot",
    "rejection_by_eca", "trained_model", "calibration_study", "plot_null_pvalues", "power_study", "plot_power",
    "power_table", "rejection_rate_by_form", "PARITY_MODELS", "parity_counterexamples",
    "CNNZooMember", "train_zoo", "zoo_table", "one_vs_rest_auc", "audit_cnn_zoo", "plot_true_counterfactuals",
    "train_judges", "judge_accuracy", "plot_training_curves", "ldm_counterfactual", "plot_counterfactual_rows",
    "check_counterfactuals", "disentangler_study", "beta_vae_counterfactuals", "generation_quality", "quality_table", "variance_control",
    "AUDIT_TESTS", "group_auc_table", "plot_factual_vs_counterfactual", "plot_audit_pvalues", "table12", "rejection_rates",
    "claims_01", "claims_02", "claims_03", "claims_04", "claims_05", "claims_06", "claims_07",
]

# ---------------------------------------------------------------------------------------------------------
# The Table 1 classifier zoo and the replicated CIT-LR simulations (synthetic data, App. F.1 and G.1)
# ---------------------------------------------------------------------------------------------------------

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
    "mlp_16_8_4": ("MLP (16, 8, 4)", {"hidden_layer_sizes": (16, 8, 4), "activation": "relu", "solver": "adam", "max_iter": 500}, True),
    "mlp_16_4": ("MLP (16, 4)", {"hidden_layer_sizes": (16, 4), "activation": "relu", "solver": "adam", "max_iter": 500}, True),
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


def make_classifier(kind: str, seed: int = 0, *, scale: bool = True):
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
        "linear_svc": LinearSVC, "svc_rbf": SVC, "svc_poly": SVC, "logreg": LogisticRegression,
        "tree": DecisionTreeClassifier, "forest": RandomForestClassifier, "boosting": GradientBoostingClassifier,
        "tree5": DecisionTreeClassifier, "mlp_16_8_4": MLPClassifier, "mlp_16_4": MLPClassifier,
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
            out.append(ZooMember(name=f"{kind}-s{s}", kind=kind, seed=s, estimator=make_classifier(kind, s, scale=scale)))
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
        rows.append({"name": m.name, "kind": m.kind, "seed": m.seed, "train_acc": float(np.mean(m.estimator.predict(x) == y))})
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
    from ..stats.invariance import (
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
        res = {
            "cit_gen": cit_lr_generative(y_te, data.a[te], cf, p_a=[1 - p, p]),
            "cit_reg": cit_lr_test(y_all, data.a, data.z_layer(z_layer), learner=learner, test_mask=test, h_mode=h_mode),
            "dp": demographic_parity_test(y_te, data.a[te]),
        }
        try:
            res["eo"] = equal_opportunity_test(y_te, data.a[te], data.y[te])
        except ValueError:  # too few positives in a group of the test split: no EO test possible
            res["eo"] = None
        row = {
            "name": m.name, "kind": m.kind, "seed": m.seed,
            "accuracy": float(np.mean(y_te == data.y[te])), "positive_rate": float(np.mean(y_te)), "eca": float(eca),
        }
        for key, r in res.items():
            row[f"{key}_t"] = np.nan if r is None else r.statistic
            row[f"{key}_p"] = np.nan if r is None else r.pvalue
            row[f"{key}_log10p"] = np.nan if r is None else r.log10_pvalue
        rows.append(row)
    return pd.DataFrame(rows)


def simulate_cit_pvalues(
    params: SyntheticParams,
    model: object,
    n: int,
    n_rep: int,
    *,
    forms: tuple[str, ...] = ("generator", "regression"),
    n_mc: int = 1,
    h_mode: str = "marginalize",
    seed: int = 0,
) -> pd.DataFrame:
    """P-values of CIT-LR over fresh samples from one fixed SCM and one fixed classifier.

    Used for the calibration (``params.a_effect == 0``) and power studies: replication ``r`` draws
    ``n`` new units with seed ``seed + r`` and tests the same model on them.

    Parameters
    ----------
    params : SyntheticParams
        The SCM (fixed across replications).
    model : estimator
        A fitted classifier with ``predict``.
    n : int
        Units per replication.
    n_rep : int
        Number of replications.
    forms : tuple of {"generator", "regression"}
        Which forms of CIT-LR to run: the oracle-generator form (Alg. 1 with the true SCM) and the
        known-Z regression form (:func:`cflib.stats.invariance.cit_lr_test`, 50/50 split).
    n_mc : int
        Monte-Carlo draws of the generator form.
    h_mode : {"marginalize", "regress"}
        :math:`\\hat h` of the regression form.
    seed : int
        First sample seed.

    Returns
    -------
    pandas.DataFrame
        One row per replication and form: ``rep, form, t, p, log10p, eca``.
    """
    from ..stats.invariance import cit_lr_generative, cit_lr_test, counterfactual_predictions

    if not hasattr(model, "predict"):
        raise TypeError("model must be a fitted classifier with a predict method")
    if not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    bad = [f for f in forms if f not in ("generator", "regression")]
    if bad or not forms:
        raise ValueError(f"forms must be a non-empty subset of ('generator', 'regression'), got {forms!r}")
    rows = []
    p = params.p_a
    for r in range(n_rep):
        d = invariance_synthetic(params.kind, n, params=params, a_effect=params.a_effect, seed=seed + r)
        y_hat = model.predict(d.x)
        eca = float(np.mean(model.predict(d.x_cf) == y_hat))
        for form in forms:
            if form == "generator":
                cf = counterfactual_predictions(model.predict, d.sample_x, d.z_root, [0, 1], n_mc=n_mc, seed=seed + r)
                res = cit_lr_generative(y_hat, d.a, cf, p_a=[1 - p, p])
            else:
                res = cit_lr_test(y_hat, d.a, d.z_root, h_mode=h_mode, seed=seed + r)
            rows.append({"rep": r, "form": form, "t": res.statistic, "p": res.pvalue, "log10p": res.log10_pvalue, "eca": eca})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------
# Notebook 01: the synthetic SCMs and the ECA identity
# ---------------------------------------------------------------------------------------------------------


def dataset_overview(datasets: Mapping[str, InvarianceData]) -> pd.DataFrame:
    """Descriptive statistics of the App. F.1 datasets (group and label balance, size of A's effect).

    Parameters
    ----------
    datasets : mapping of str to InvarianceData
        One sample per dataset kind.

    Returns
    -------
    pandas.DataFrame
        One row per dataset.
    """
    return pd.DataFrame(
        {
            kind: {
                "P(A=1)": d.a.mean(),
                "P(Y=1)": d.y.mean(),
                "P(Y=1|A=1) - P(Y=1|A=0)": d.y[d.a == 1].mean() - d.y[d.a == 0].mean(),
                "mean |X|": np.abs(d.x).mean(),
                "mean |X_cf - X|": np.abs(d.x_cf - d.x).mean(),
            }
            for kind, d in datasets.items()
        }
    ).T


def counterfactual_checks(d: InvarianceData) -> pd.Series:
    """Checks of the true counterfactuals: composition, agreement of ``x_do`` with ``x_cf``, relative size.

    Parameters
    ----------
    d : InvarianceData
        A synthetic sample.

    Returns
    -------
    pandas.Series
    """
    return pd.Series(
        {
            "max |X_{A<-A} - X| (composition)": np.abs(d.x_do(d.a) - d.x).max(),
            "max |X_{A<-1-A} - X_cf|": np.abs(d.x_do(1 - d.a) - d.x_cf).max(),
            "mean |X_cf - X| / mean |X|": np.abs(d.x_cf - d.x).mean() / np.abs(d.x).mean(),
        }
    )


def theorem42_enumeration(rng: np.random.Generator, *, p_a: float = 0.3, n_z: int = 6) -> pd.Series:
    """Theorem 4.2 by exact enumeration on a random discrete law of ``(A, Z)`` and a random ``g``.

    Draws :math:`P(Z)` (Dirichlet) and :math:`g(a, z) = P(\\hat Y = 1 | a, z)` (uniform) from ``rng``,
    sets :math:`h(z) = \\sum_a P(a) g(a, z)` and sums the three expectations over the ``2 x n_z`` cells.

    Parameters
    ----------
    rng : numpy.random.Generator
        Randomness of the law and of ``g``.
    p_a : float
        :math:`P(A = 1)`, with A independent of Z.
    n_z : int
        Number of values of Z.

    Returns
    -------
    pandas.Series
        ``E[Yhat g]``, ``E[Yhat h]``, ``E[(g - h)^2]`` and the gap ``|Delta - E[(g-h)^2]|``.
    """
    pz = rng.dirichlet(np.ones(n_z))
    g_tab = rng.random((2, n_z))  # g(a, z) = P(Yhat = 1 | A = a, Z = z)
    h_tab = (1 - p_a) * g_tab[0] + p_a * g_tab[1]  # h(z) = sum_a P(a) g(a, z) since Z is independent of A
    w = np.array([1 - p_a, p_a])[:, None] * pz[None, :]  # P(A = a, Z = z)
    exact = pd.Series(
        {
            "E[Yhat g]": (w * g_tab * g_tab).sum(),  # E[Yhat g] = E[g E[Yhat | A, Z]] = E[g^2]
            "E[Yhat h]": (w * g_tab * h_tab[None]).sum(),
            "E[(g - h)^2]": (w * (g_tab - h_tab[None]) ** 2).sum(),
        }
    )
    exact["|Delta - E[(g-h)^2]|"] = float(abs(exact["E[Yhat g]"] - exact["E[Yhat h]"] - exact["E[(g - h)^2]"]))
    return exact


def eca_identity_study(
    kinds: Sequence[str], n_identity: int, types: Sequence[str], *, a_effect: float, seed: int = 0
) -> pd.DataFrame:
    """Compare CIT-LR's mean paired difference with :math:`p(1-p)(1-\\mathrm{ECA})` over datasets and classifiers.

    Each dataset is split in halves; the Table 1 classifiers of ``types`` are fitted on the first and
    audited on the second with the oracle generator (the true SCM, :math:`do(A = 0)` and :math:`do(A = 1)`).

    Parameters
    ----------
    kinds : sequence of str
        Dataset kinds (:data:`cflib.data.invariance_synthetic.KINDS`).
    n_identity : int
        Units per dataset.
    types : sequence of str
        Keys of :data:`TABLE1`.
    a_effect : float
        Strength of A's effect.
    seed : int
        Seed of the samples and the classifiers.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, classifier): ``ECA``, ``Delta_hat`` with its standard error ``Delta_se``,
        ``E[(g-h)^2]``, ``p(1-p)(1-ECA)``, and ``diff`` = ``Delta_hat - p(1-p)(1-ECA)`` (the mean of per-unit
        differences) with its standard error ``diff_se``.
    """
    from ..stats.invariance import cit_lr_generative, expected_counterfactual_accuracy

    rows = []
    for i, kind in enumerate(kinds):
        d = invariance_synthetic(kind, n_identity, a_effect=a_effect, seed=100 + seed + i)
        tr, te = np.arange(n_identity // 2), np.arange(n_identity // 2, n_identity)
        zoo = classifier_zoo(seeds=[seed], include=types)
        fit_zoo(zoo, d.x[tr], d.y[tr])
        p = d.params.p_a
        for m in zoo:
            eca = expected_counterfactual_accuracy(m, d.x[te], d.x_cf[te]).eca
            cf = np.stack([m.predict(d.x_do(0)[te]), m.predict(d.x_do(1)[te])], axis=1)
            y_hat = m.predict(d.x[te])
            res = cit_lr_generative(y_hat, d.a[te], cf, p_a=[1 - p, p])
            target = p * (1 - p) * (1 - eca)
            # Per unit: d_i = y_i (g_i - h_i) (CIT-LR's paired difference) and e_i = d_i - p(1-p) 1[f flips under the A-flip],
            # whose mean is Delta_hat - p(1-p)(1-ECA); their standard errors are 0 only when every unit's value is equal.
            d_i = y_hat * (cf[np.arange(len(te)), d.a[te].astype(int)] - cf @ np.array([1 - p, p]))
            e_i = d_i - p * (1 - p) * (y_hat != m.predict(d.x_cf[te]))
            rows.append({"dataset": kind, "model": m.kind, "ECA": eca, "Delta_hat": res.mean_diff, "E[(g-h)^2]": res.effect,
                         "p(1-p)(1-ECA)": target, "diff": float(e_i.mean()), "diff_se": float(e_i.std(ddof=1) / np.sqrt(e_i.size)),
                         "Delta_se": float(d_i.std(ddof=1) / np.sqrt(d_i.size))})
    return pd.DataFrame(rows)


def plot_eca_identity(identity: pd.DataFrame, ax=None):
    """Scatter CIT-LR's :math:`\\hat\\Delta` against the ground truth :math:`p(1-p)(1-\\mathrm{ECA})`.

    Parameters
    ----------
    identity : pandas.DataFrame
        Output of :func:`eca_identity_study`.
    ax : matplotlib axes, optional

    Returns
    -------
    matplotlib axes
    """
    if ax is None:
        _, ax = plotting.subplots(1, 1, width=4.2, height=3.6)
    for j, (kind, sub) in enumerate(identity.groupby("dataset", sort=False)):
        ax.scatter(sub["p(1-p)(1-ECA)"], sub["Delta_hat"], s=22, color=plotting.PALETTE[j], label=kind)
    plotting.identity_line(ax)
    ax.set_xlabel("p(1-p)(1-ECA)  (ground truth)")
    ax.set_ylabel(r"$\hat\Delta$ = mean of $\hat y(\hat g - \hat h)$")
    ax.legend(fontsize=8)
    return ax


# ---------------------------------------------------------------------------------------------------------
# Notebook 02: Figure 2, CIT-LR, DP and EO against the ground truth
# ---------------------------------------------------------------------------------------------------------

#: The tests of Figure 2: column prefix of :func:`audit_zoo` -> label.
FIGURE2_TESTS = {"cit_gen": "CIT-LR (generator)", "cit_reg": "CIT-LR (regression)", "dp": "DP", "eo": "EO"}


def table1() -> pd.DataFrame:
    """Table 1 of the paper as a frame: type, classifier, hyperparameters, whether the seed matters.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame(
        [{"type": key, "classifier": desc, "hyperparameters": ", ".join(f"{k}={v}" for k, v in hp.items()), "seed matters": dep}
         for key, (desc, hp, dep) in TABLE1.items()]
    )


def audit_synthetic_zoos(
    kinds: Sequence[str],
    n: int,
    rng: np.random.Generator,
    *,
    test_size: float,
    seeds: Sequence[int],
    types: Sequence[str] | None,
    a_effect: float,
    n_mc: int,
    z_layer: str | int,
    seed: int = 0,
) -> pd.DataFrame:
    """Train and audit the Table 1 zoo on each synthetic dataset (the protocol behind Figure 2).

    Parameters
    ----------
    kinds : sequence of str
        Dataset kinds.
    n : int
        Units per dataset.
    rng : numpy.random.Generator
        Draws each dataset's random test split.
    test_size : float
        Share of test units.
    seeds : sequence of int
        ``random_state`` values per classifier type.
    types : sequence of str or None
        Keys of :data:`TABLE1` (``None``: all ten).
    a_effect : float
        Strength of A's effect.
    n_mc : int
        Monte-Carlo draws of the generator per unit and level.
    z_layer : "root" or int
        Z of the regression form.
    seed : int
        Seed of the samples and of the audit.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`audit_zoo` for every dataset, with a ``dataset`` column.
    """
    audits = []
    for i, kind in enumerate(kinds):
        data = invariance_synthetic(kind, n, a_effect=a_effect, seed=1000 * (seed + 1) + i)
        test = np.zeros(n, dtype=bool)
        test[rng.choice(n, int(round(test_size * n)), replace=False)] = True
        zoo = classifier_zoo(seeds=seeds, include=types)
        fit_zoo(zoo, data.x[~test], data.y[~test])
        audit = audit_zoo(zoo, data, test, n_mc=n_mc, z_layer=z_layer, seed=seed)
        audits.append(audit.assign(dataset=kind))
    return pd.concat(audits, ignore_index=True)


def plot_figure2(results: pd.DataFrame, *, alpha: float = 0.05):
    """Figure 2: log10 p of each test against ECA, one column per dataset and one row per test.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`audit_synthetic_zoos`.
    alpha : float
        Level drawn as a line.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    from ..stats.invariance import plot_pvalue_vs_eca

    n_kinds = results["dataset"].nunique()
    # The authors' plots use y-limits (-30, 0); we zoom in when every p-value is larger than 1e-30.
    y_low = max(-30.0, float(np.nanmin(results[[f"{k}_log10p" for k in FIGURE2_TESTS]].to_numpy())) - 1.0)
    fig, axes = plotting.subplots(len(FIGURE2_TESTS), n_kinds, width=2.3, height=2.1, sharex=True, sharey=True, squeeze=False)
    for c, (kind, sub) in enumerate(results.groupby("dataset", sort=False)):
        for r, (key, label) in enumerate(FIGURE2_TESTS.items()):
            plot_pvalue_vs_eca(sub["eca"], sub[f"{key}_log10p"], alpha=alpha, ax=axes[r, c], color=plotting.PALETTE[r],
                               ylim=(y_low, 0.5), title=kind if r == 0 else None)
            axes[r, c].set_xlabel("ECA" if r == len(FIGURE2_TESTS) - 1 else "")
            axes[r, c].set_ylabel(f"{label}\nlog10 p" if c == 0 else "", fontsize=8)
    return axes


def figure2_alignment(results: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Per dataset and test: Pearson r of ECA vs log10 p, residual sd, and rejection rates by ECA range.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`audit_synthetic_zoos`.
    alpha : float
        Level of the rejection rates.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, test).
    """
    from ..stats.invariance import alignment_stats

    rows = []
    for kind, sub in results.groupby("dataset", sort=False):
        for key, label in FIGURE2_TESTS.items():
            st = alignment_stats(sub["eca"], sub[f"{key}_log10p"])
            one, hi, lo = sub["eca"] == 1, sub["eca"] >= 0.95, sub["eca"] < 0.85
            rows.append({"dataset": kind, "test": label, "r": st["r"], "resid_sd": st["resid_sd"],
                         "reject | ECA=1": (sub.loc[one, f"{key}_p"] < alpha).mean() if one.any() else np.nan,
                         "reject | ECA>=0.95": (sub.loc[hi, f"{key}_p"] < alpha).mean() if hi.any() else np.nan,
                         "reject | ECA<0.85": (sub.loc[lo, f"{key}_p"] < alpha).mean() if lo.any() else np.nan})
    return pd.DataFrame(rows)


def alignment_pivot(align: pd.DataFrame, value: str, kinds: Sequence[str]) -> pd.DataFrame:
    """One column of :func:`figure2_alignment` as a dataset x test table.

    Parameters
    ----------
    align : pandas.DataFrame
        Output of :func:`figure2_alignment`.
    value : {"r", "resid_sd"}
        The column to spread.
    kinds : sequence of str
        Row order.

    Returns
    -------
    pandas.DataFrame
    """
    return align.pivot(index="dataset", columns="test", values=value).loc[list(kinds), list(FIGURE2_TESTS.values())]


def rejection_by_eca(align: pd.DataFrame) -> pd.DataFrame:
    """Rejection rates per test in three ECA ranges, averaged over datasets.

    Parameters
    ----------
    align : pandas.DataFrame
        Output of :func:`figure2_alignment`.

    Returns
    -------
    pandas.DataFrame
    """
    return align.groupby("test", sort=False)[["reject | ECA=1", "reject | ECA>=0.95", "reject | ECA<0.85"]].mean()


# ---------------------------------------------------------------------------------------------------------
# Notebook 03: calibration, power and the parity counterexamples
# ---------------------------------------------------------------------------------------------------------

_NULL_FORMS = ("regression, h = marginal of g", "regression, h regressed (code)")


def trained_model(params: SyntheticParams, *, n_train: int = 2000, seed: int = 0):
    """The audited classifier of the calibration and power studies: standardised logistic regression.

    Fitted once on ``n_train`` units of its own world (sample seed ``10_000 + seed``).

    Parameters
    ----------
    params : SyntheticParams
        The SCM.
    n_train : int
        Training units.
    seed : int
        Seed offset of the training sample.

    Returns
    -------
    sklearn.pipeline.Pipeline
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    d = invariance_synthetic(params.kind, n_train, params=params, a_effect=params.a_effect, seed=10_000 + seed)
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(d.x, d.y)


def calibration_study(
    base: SyntheticParams, n: int, n_rep: int, n_rep_code: int, *, alpha: float = 0.05, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CIT-LR p-values under no effect, for both forms and the authors' separately regressed h.

    Parameters
    ----------
    base : SyntheticParams
        The SCM; its effect is switched off.
    n : int
        Units per replication.
    n_rep, n_rep_code : int
        Replications of the two forms (h = A-marginal of g) and of the authors' variant.
    alpha : float
        Level.
    seed : int
        Seed.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The p-values (one row per replication and form) and the rejection summary per form
        (:func:`cflib.stats.invariance.rejection_summary`).
    """
    from ..stats.invariance import rejection_summary

    null_params = base.with_effect(0.0)
    null_model = trained_model(null_params, seed=seed)
    null_marg = simulate_cit_pvalues(null_params, null_model, n, n_rep, forms=("generator", "regression"), seed=seed)
    with warnings.catch_warnings():  # measuring the authors' form is the point here: its warning would repeat n_rep_code times
        warnings.filterwarnings("ignore", message=r"cit_lr_test\(h_mode='regress'\)")
        null_regr = simulate_cit_pvalues(null_params, null_model, n, n_rep_code, forms=("regression",), h_mode="regress",
                                         seed=seed)
    null = pd.concat([null_marg.replace({"form": {"regression": _NULL_FORMS[0]}}),
                      null_regr.replace({"form": {"regression": _NULL_FORMS[1]}})])
    calib = pd.DataFrame({form: rejection_summary(sub["p"], alpha) for form, sub in null.groupby("form", sort=False)}).T
    return null, calib


def plot_null_pvalues(null: pd.DataFrame):
    """Histogram and uniform QQ plot of the regression-form p-values under the null.

    Parameters
    ----------
    null : pandas.DataFrame
        First output of :func:`calibration_study`.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    fig, axes = plotting.subplots(1, 2, width=4.0, height=3.2)
    for j, form in enumerate(_NULL_FORMS):
        p = null.loc[null["form"] == form, "p"]
        axes[0].hist(p, bins=20, range=(0, 1), histtype="step", lw=1.6, color=plotting.PALETTE[j], label=form)
        plotting.qq_uniform(p, label=form, ax=axes[1])
    axes[0].set_xlabel("p-value under the null")
    axes[0].set_ylabel("replications")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    return axes


def power_study(
    base: SyntheticParams,
    *,
    power_ns: Sequence[int],
    power_effects: Sequence[float],
    effect_for_n: float,
    n_for_effect: int,
    n_rep: int,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CIT-LR p-values for a fixed non-invariant classifier over sample sizes and over effect strengths.

    Parameters
    ----------
    base : SyntheticParams
        The SCM; its effect is rescaled.
    power_ns : sequence of int
        Sample sizes of the power-vs-n curve (both forms, effect ``effect_for_n``).
    power_effects : sequence of float
        Effects of the power-vs-effect curve (generator form, ``n_for_effect`` units).
    effect_for_n : float
        Effect strength of the power-vs-n curve.
    n_for_effect : int
        Sample size of the power-vs-effect curve.
    n_rep : int
        Replications per point.
    seed : int
        Seed.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        P-values with an ``n`` column and with an ``a_effect`` column.
    """
    eff_params = base.with_effect(effect_for_n)
    eff_model = trained_model(eff_params, seed=seed)
    by_n = pd.concat([simulate_cit_pvalues(eff_params, eff_model, m, n_rep, seed=seed + 7 * m).assign(n=m) for m in power_ns])
    by_effect = pd.concat([
        simulate_cit_pvalues(base.with_effect(e), trained_model(base.with_effect(e), seed=seed), n_for_effect, n_rep,
                             forms=("generator",), seed=seed + 1).assign(a_effect=e)
        for e in power_effects
    ])
    return by_n, by_effect


def plot_power(by_n: pd.DataFrame, by_effect: pd.DataFrame, *, effect_for_n: float, n_for_effect: int, alpha: float = 0.05):
    """Power curves of CIT-LR against n and against the effect strength, with binomial bands.

    Parameters
    ----------
    by_n, by_effect : pandas.DataFrame
        Outputs of :func:`power_study`.
    effect_for_n, n_for_effect : float, int
        The fixed effect of the first curve and the fixed sample size of the second (axis labels).
    alpha : float
        Level.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    from ..stats.invariance import rejection_summary

    power_ns = sorted(by_n["n"].unique())
    fig, axes = plotting.subplots(1, 2, width=4.0, height=3.2, sharey=True)
    labels = {"n": f"units per replication n (a_effect = {effect_for_n})", "a_effect": f"a_effect (n = {n_for_effect})"}
    for ax, table, xcol in ((axes[0], by_n, "n"), (axes[1], by_effect, "a_effect")):
        for j, (form, sub) in enumerate(table.groupby("form", sort=False)):
            s = [rejection_summary(g["p"], alpha) for _, g in sub.groupby(xcol)]
            xs = sorted(sub[xcol].unique())
            plotting.line_with_band(xs, [q["rate"] for q in s], [q["ci"][0] for q in s], [q["ci"][1] for q in s],
                                    label=f"CIT-LR ({form})", color=plotting.PALETTE[j], ax=ax)
        ax.axhline(alpha, color="#D55E00", ls="--", lw=1)
        ax.set_xlabel(labels[xcol])
    axes[0].set_xscale("log")
    axes[0].set_xticks(power_ns, [str(m) for m in power_ns])
    axes[0].minorticks_off()
    axes[0].set_ylabel("rejection rate at 0.05")
    axes[0].legend(fontsize=7)
    return axes


def power_table(by_n: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Rejection rate per form (rows) and sample size (columns).

    Parameters
    ----------
    by_n : pandas.DataFrame
        First output of :func:`power_study` (or any p-value table with ``form`` and ``n``).
    alpha : float
        Level.

    Returns
    -------
    pandas.DataFrame
    """
    return by_n.groupby(["form", "n"])["p"].apply(lambda p: float(np.mean(p < alpha))).unstack()


def rejection_rate_by_form(sim: pd.DataFrame, *, alpha: float = 0.05) -> pd.Series:
    """Share of p-values below ``alpha`` per form of CIT-LR.

    Parameters
    ----------
    sim : pandas.DataFrame
        Output of :func:`simulate_cit_pvalues`.
    alpha : float
        Level.

    Returns
    -------
    pandas.Series
    """
    return sim.groupby("form")["p"].apply(lambda p: float(np.mean(p < alpha)))


#: The two classifiers of the parity counterexamples: reads the disease only / leans on the trace.
PARITY_MODELS = {
    "content": lambda x: (x[:, 0] > 0).astype(int),
    "shortcut": lambda x: (x[:, 0] + 1.5 * np.sign(x[:, 2]) * x[:, 1] > 0).astype(int),
}


def parity_counterexamples(n_world: int, *, seed: int = 0) -> pd.DataFrame:
    """ECA and the p-values of CIT-LR, DP and EO for :data:`PARITY_MODELS` in two parity worlds.

    World 1 has a group-disease association and group-dependent false positives; world 2 has neither.

    Parameters
    ----------
    n_world : int
        Units per world.
    seed : int
        Seed.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(world, model)``.
    """
    from ..stats.invariance import (
        cit_lr_generative,
        counterfactual_predictions,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    worlds = {
        "world 1 (association + label bias)": parity_world(n_world, prevalence=(0.2, 0.45), false_positive=(0.0, 0.25), seed=seed),
        "world 2 (no association)": parity_world(n_world, seed=seed + 1),
    }
    rows = []
    for wname, w in worlds.items():
        for mname, f in PARITY_MODELS.items():
            y_hat = f(w.x)
            cf = counterfactual_predictions(f, w.sample_x, w.z, [0, 1], n_mc=1, seed=seed)
            rows.append({"world": wname, "model": mname, "ECA": expected_counterfactual_accuracy(f, w.x, w.x_cf).eca,
                         "CIT-LR p": cit_lr_generative(y_hat, w.a, cf).pvalue, "DP p": demographic_parity_test(y_hat, w.a).pvalue,
                         "EO p": equal_opportunity_test(y_hat, w.a, w.y).pvalue})
    return pd.DataFrame(rows).set_index(["world", "model"])


# ---------------------------------------------------------------------------------------------------------
# The toy chest X-ray CNN zoo (Sec. 6.3)
# ---------------------------------------------------------------------------------------------------------


@dataclass
class CNNZooMember:
    """One classifier of the zoo.

    Attributes
    ----------
    name : str
        ``"<arch> rho=<rho> s<seed>"``.
    arch : str
        Architecture.
    disease : str
        Disease it predicts.
    rho : float
        Shortcut strength of its training set.
    seed : int
        Seed.
    model : SmallCNN
        The fitted classifier.
    """

    name: str
    arch: str
    disease: str
    rho: float
    seed: int
    model: SmallCNN = field(repr=False)

    def predict(self, images: np.ndarray) -> np.ndarray:
        """Hard 0/1 predictions (the Ŷ the test uses)."""
        return self.model.predict(images)

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        """Predicted probability of the disease."""
        return self.model.predict_proba(images)


def train_zoo(
    data: ToyCXR,
    *,
    diseases: Sequence[str] = DISEASES,
    archs: Sequence[str] = ("cnn-s", "cnn-m", "mlp"),
    rhos: Sequence[float] = (0.0, 0.5, 0.9),
    seeds: Sequence[int] = (0,),
    epochs: int = 4,
    batch_size: int = 64,
    device: str = "auto",
    progress: bool | None = None,
) -> list[CNNZooMember]:
    """Train one binary classifier per (disease, architecture, shortcut strength, seed).

    Parameters
    ----------
    data : ToyCXR
        Training images (the shortcut re-rendering uses their exogenous content).
    diseases : sequence of str
        Diseases to train for.
    archs : sequence of str
        Architectures (keys of :data:`cflib.models.cnn_zoo.CNN_ARCHITECTURES`).
    rhos : sequence of float
        Shortcut strengths in [0, 1].
    seeds : sequence of int
        Seeds (initialisation, batch order and shortcut re-rendering).
    epochs, batch_size : int
        Training settings.
    device : str
        Device.
    progress : bool, optional
        Show a bar over the zoo.

    Returns
    -------
    list of CNNZooMember
    """
    from tqdm import tqdm  # tqdm.auto warns in kernels without ipywidgets

    from ..models.cnn_zoo import SmallCNN

    if not isinstance(data, ToyCXR):
        raise TypeError(f"data must be a ToyCXR, got {type(data).__name__}")
    for d in diseases:
        if d not in DISEASES:
            raise ValueError(f"unknown disease {d!r}; expected among {DISEASES}")
    jobs = [(d, a, r, s) for d in diseases for a in archs for r in rhos for s in seeds]
    zoo = []
    for d, arch, rho, s in tqdm(jobs, desc="zoo", disable=not progress if progress is not None else None):
        # Each (rho, seed) gets its own initialisation and batch order, so members trained on the same
        # images (a disease without association, where rho changes nothing) are distinct checkpoints.
        member_seed = 1000 * s + round(rho * 100)
        x, y, _ = shortcut_training_set(data, d, rho, seed=member_seed)
        model = SmallCNN(arch, data.size, 1, seed=member_seed).fit(x, y, epochs=epochs, batch_size=batch_size, device=device, seed=member_seed)
        zoo.append(CNNZooMember(f"{arch} rho={rho:g} s{s}", arch, d, float(rho), int(s), model))
    return zoo


def zoo_table(zoo: Sequence[CNNZooMember]) -> pd.DataFrame:
    """One row per zoo member (name, architecture, disease, rho, seed).

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Output of :func:`train_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame([{"name": m.name, "arch": m.arch, "disease": m.disease, "rho": m.rho, "seed": m.seed} for m in zoo])


def _auc_rows(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row (Mann-Whitney form with mid-ranks for ties), vectorised over rows."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    n1 = labels.sum(axis=1)
    n0 = labels.shape[1] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * labels).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def one_vs_rest_auc(proba: np.ndarray, y: np.ndarray, *, names: Sequence[str] | None = None, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    """One-vs-rest ROC-AUC per class with a bootstrap standard deviation (the paper's Table 6 layout).

    Parameters
    ----------
    proba : numpy.ndarray
        ``(n, k)`` class probabilities.
    y : numpy.ndarray
        ``(n,)`` true classes ``0..k-1``.
    names : sequence of str, optional
        Class names for the index.
    n_boot : int
        Bootstrap resamples of the test set (all drawn at once).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Columns ``AUC`` and ``sd`` (bootstrap), one row per class.
    """
    proba = np.asarray(proba, dtype=float)
    y = np.asarray(y)
    if proba.ndim != 2 or proba.shape[0] != y.shape[0]:
        raise ValueError(f"proba must be (n, k) with n = len(y) = {y.shape[0]}, got {proba.shape}")
    k = proba.shape[1]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, y.shape[0], (n_boot, y.shape[0]))
    rows = []
    for c in range(k):
        lab = (y == c).astype(float)
        auc = float(_auc_rows(proba[None, :, c], lab[None])[0])
        boot = _auc_rows(proba[idx, c], lab[idx])
        rows.append({"AUC": auc, "sd": float(np.nanstd(boot, ddof=1))})
    return pd.DataFrame(rows, index=list(names) if names is not None else list(range(k)))


def audit_cnn_zoo(
    zoo: Sequence[CNNZooMember],
    images: np.ndarray,
    A: np.ndarray,
    D: np.ndarray,
    counterfactuals: dict,
    true_counterfactuals: Sequence[np.ndarray],
    *,
    p_a: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Audit every zoo member: true ECA, CIT-LR with each counterfactual source, DP and EO.

    Implements the per-classifier protocol of Section 6.3: for each classifier :math:`f` and its disease,
    the hard predictions :math:`\\hat y = f(x)` on the test images, the generator form of CIT-LR
    (Algorithm 1, with :math:`\\hat g(a, z_i) = f(x_i^{do(A=a)})` and :math:`\\hat h = \\sum_a P(a)\\,\\hat g`)
    for every counterfactual source, the demographic-parity and equal-opportunity tests, and the
    expected counterfactual accuracy measured on the **true** counterfactuals (the ground truth the
    paper approximates with its own generator).

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Classifiers (each knows its disease).
    images : numpy.ndarray
        ``(n, H, W)`` test images.
    A : numpy.ndarray
        ``(n,)`` observed groups ``0..L-1``.
    D : numpy.ndarray
        ``(n, 3)`` true disease labels (columns in the order of :data:`cflib.data.toy_cxr.DISEASES`).
    counterfactuals : dict
        ``{source name: [images under do(A=0), do(A=1), ...]}``, one array per level.
    true_counterfactuals : sequence of numpy.ndarray
        True counterfactual images, one array per level.
    p_a : sequence of float, optional
        :math:`P(A = a)` for :math:`\\hat h`; default the test prevalence.

    Returns
    -------
    pandas.DataFrame
        One row per member: ``name, arch, disease, rho, accuracy, ECA``, the disease ROC-AUC within
        each group (the paper's Tables 2-3) and, per test, its t statistic,
        p-value and log10 p-value (``CIT-LR[<source>]``, ``DP``, ``EO``).
    """
    from ..stats.invariance import (
        cit_lr_generative,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    A = np.asarray(A)
    levels = list(range(len(true_counterfactuals)))
    rows = []
    for m in zoo:
        y = D[:, DISEASES.index(m.disease)]
        y_hat = m.predict(images).astype(float)
        true_pred = [m.predict(c) for c in true_counterfactuals]
        eca = expected_counterfactual_accuracy(None, y_hat, true_pred, a=A, levels=levels)
        row = {"name": m.name, "arch": m.arch, "disease": m.disease, "rho": m.rho, "seed": m.seed,
               "accuracy": float((y_hat == y).mean()), "ECA": float(eca)}
        proba = m.predict_proba(images)
        for lv in levels:
            sel = lv == A
            row[f"AUC A={lv}"] = float(_auc_rows(proba[sel][None], y[sel][None].astype(float))[0]) if 0 < y[sel].sum() < sel.sum() else np.nan
        for src, cfs in counterfactuals.items():
            cf_pred = np.stack([m.predict(c) for c in cfs], axis=1).astype(float)
            r = cit_lr_generative(y_hat, A, cf_pred, levels=levels, p_a=p_a)
            row.update({f"t CIT-LR[{src}]": r.statistic, f"p CIT-LR[{src}]": r.pvalue, f"log10p CIT-LR[{src}]": r.log10_pvalue,
                        f"mean d CIT-LR[{src}]": r.mean_diff})
        for label, r in (("DP", demographic_parity_test(y_hat, A)), ("EO", equal_opportunity_test(y_hat, A, y))):
            row.update({f"t {label}": r.statistic, f"p {label}": r.pvalue, f"log10p {label}": r.log10_pvalue})
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------
# Notebook 04: toy chest X-rays
# ---------------------------------------------------------------------------------------------------------


def plot_true_counterfactuals(data: ToyCXR):
    """One healthy image and one per disease under do(A = 0, 1, 2), with the amplified A1 - A0 difference.

    Parameters
    ----------
    data : ToyCXR
        Images with their exogenous content.

    Returns
    -------
    matplotlib figure
        From :func:`cflib.plotting.image_grid`.
    """
    show = np.concatenate([np.flatnonzero(data.D.sum(1) == 0)[:1], [np.flatnonzero(data.D[:, k])[0] for k in range(3)]])
    cols = [data.render(A=a, idx=show) for a in range(3)]
    grid = np.stack(cols + [0.5 + 2 * (cols[1] - cols[0])], axis=1)
    labels = [f"A={data.A[i]}, " + (", ".join(d for d, v in zip(DISEASES, data.D[i], strict=True) if v) or "healthy") for i in show]
    return plotting.image_grid(grid, row_labels=labels, col_labels=["do(A=0)", "do(A=1)", "do(A=2)", "2·(A1 − A0)"],
                               vmin=0, vmax=1, panel=1.4)


# ---------------------------------------------------------------------------------------------------------
# Notebook 05: counterfactual images with conditional latent diffusion
# ---------------------------------------------------------------------------------------------------------


def train_judges(train: ToyCXR, *, epochs: int, device: str = "auto", seed: int = 0) -> tuple[SmallCNN, dict[str, SmallCNN]]:
    """The judges of the counterfactuals: a group predictor and one predictor per disease.

    Trained on the observed images and on blurred copies of them, so that they read structure and
    density rather than the sensor noise that no autoencoder reproduces.

    Parameters
    ----------
    train : ToyCXR
        Training images.
    epochs : int
        Epochs of each predictor.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    (SmallCNN, dict of str to SmallCNN)
        The group predictor (three classes) and the disease predictors.
    """
    from scipy.ndimage import gaussian_filter

    from ..models.cnn_zoo import SmallCNN

    size = train.size
    judge_x = np.concatenate([train.images, gaussian_filter(train.images, sigma=(0, 1, 1))])

    def twice(y):
        return np.concatenate([y, y])

    apred = SmallCNN("cnn-s", size, n_outputs=3, seed=seed).fit(judge_x, twice(train.A), epochs=epochs, device=device, seed=seed)
    dpred = {d: SmallCNN("cnn-s", size, seed=seed).fit(judge_x, twice(train.label(d)), epochs=epochs, device=device, seed=seed)
             for d in DISEASES}
    return apred, dpred


def judge_accuracy(apred: SmallCNN, dpred: Mapping[str, SmallCNN], test: ToyCXR) -> pd.Series:
    """Accuracy of the judges on real test images.

    Parameters
    ----------
    apred : SmallCNN
        Group predictor.
    dpred : mapping of str to SmallCNN
        Disease predictors.
    test : ToyCXR
        Test images.

    Returns
    -------
    pandas.Series
        ``group predictor`` and one entry per disease.
    """
    return pd.Series({"group predictor": (apred.predict(test.images) == test.A).mean(),
                      **{d: (dpred[d].predict(test.images) == test.label(d)).mean() for d in DISEASES}},
                     name="accuracy on real test images")


def plot_training_curves(ldms: Mapping[str, Any]):
    """Smoothed losses of the shared autoencoder and of each diffusion model (log scale).

    Parameters
    ----------
    ldms : mapping of str to LatentDiffusion
        Fitted models (``"CLDM+D"`` carries the autoencoder history).

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    fig, axes = plotting.subplots(1, 2, width=4, height=2.8)
    curves = {"autoencoder": ldms["CLDM+D"].history["vae"], **{f"diffusion, {k}": m.history["diffusion"] for k, m in ldms.items()}}
    for key, h in curves.items():
        h = np.asarray(h)
        k = max(1, len(h) // 50)
        axes[0 if key == "autoencoder" else 1].plot(np.convolve(h, np.ones(k) / k, mode="valid"), label=key)
    for ax, title in zip(axes, ["autoencoder loss", "diffusion loss"], strict=True):
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (smoothed)")
        ax.set_yscale("log")
    axes[1].legend(fontsize=8)
    return axes


def ldm_counterfactual(
    model: Any, idx: np.ndarray, a_new: Any, *, data: ToyCXR, t_star: int, steps: int, guidance: float,
    aux_guidance: float, **kw: Any,
) -> np.ndarray:
    """Counterfactuals of the images ``idx`` under do(A = a_new); a model conditioned on the diseases holds them fixed.

    Parameters
    ----------
    model : LatentDiffusion
        A fitted model; when it has auxiliary classes (CLDM+D), each patient's disease labels are
        passed with guidance ``aux_guidance``.
    idx : numpy.ndarray
        Indices of the images.
    a_new : int or numpy.ndarray
        Target group(s).
    data : ToyCXR
        The images.
    t_star, steps, guidance, aux_guidance : numbers
        Abduction noise level, DDIM steps and the guidance scales.
    **kw
        Passed on to ``model.counterfactual`` (e.g. ``disentangler``, ``abduction``, ``seed``).

    Returns
    -------
    numpy.ndarray
        ``(len(idx), size, size)`` images.
    """
    extra = {"aux": data.D[idx], "aux_guidance": aux_guidance} if model.config.aux_classes else {}
    return model.counterfactual(data.images[idx], data.A[idx], a_new, t_star=t_star, steps=steps, guidance=guidance,
                                **{**extra, **kw})


def plot_counterfactual_rows(data: ToyCXR, show: np.ndarray, sources: Mapping[str, Sequence[np.ndarray]]):
    """Factual image, its counterfactuals under do(A = 0, 1, 2) and the amplified A1 - A0 difference, per source.

    Parameters
    ----------
    data : ToyCXR
        The images.
    show : numpy.ndarray
        Indices of the patients shown.
    sources : mapping of str to list of numpy.ndarray
        Per source, the counterfactuals of ``show`` under each group.

    Returns
    -------
    matplotlib figure
    """
    rows, names = [], []
    for j, i in enumerate(show):
        for kind, imgs in sources.items():
            rows.append([data.images[i]] + [im[j] for im in imgs] + [0.5 + 2 * (imgs[1][j] - imgs[0][j])])
            names.append(f"#{i} (A={data.A[i]}, {'+'.join(d[:4] for d, v in zip(DISEASES, data.D[i], strict=True) if v)}) {kind}")
    return plotting.image_grid(np.array(rows), row_labels=names, col_labels=["factual", "do(A=0)", "do(A=1)", "do(A=2)", "2·(A1−A0)"],
                               vmin=0, vmax=1, panel=1.25)


def check_counterfactuals(
    variants: Mapping[str, tuple[Any, dict]],
    counterfactual: Callable[..., np.ndarray],
    test: ToyCXR,
    apred: SmallCNN,
    dpred: Mapping[str, SmallCNN],
    recon: np.ndarray,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Measure generated counterfactuals against the true ones, per generator and target group.

    For each target group ``a`` and the test patients not in it: effectiveness (the group predictor
    finds ``a``), disease status kept by the disease predictors (overall and for each present
    disease; also on the true counterfactuals and the autoencoder reconstructions), and the
    disease-region L1 error to the truth next to the autoencoder floor and to a random patient.

    Parameters
    ----------
    variants : mapping of str to (model, dict)
        Generator name -> (model, extra keyword arguments of ``counterfactual``).
    counterfactual : callable
        ``counterfactual(model, idx, a_new, **kw)`` -> images (e.g. a partial of :func:`ldm_counterfactual`).
    test : ToyCXR
        Test images.
    apred : SmallCNN
        Group predictor.
    dpred : mapping of str to SmallCNN
        Disease predictors.
    recon : numpy.ndarray
        Autoencoder reconstructions of the test images.
    seed : int
        Seed of the random-patient permutation.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(generator, group)``.
    """
    region = test.disease_region()
    floor = 255 * np.abs(recon - test.images)[region].mean()
    perm = np.random.default_rng(seed).permutation(test.n)

    def kept(imgs, sel):
        return 100 * float(np.mean([(dpred[d].predict(imgs) == test.label(d)[sel]).mean() for d in DISEASES]))

    def present_kept(imgs, sel, d):
        return 100 * float(dpred[d].predict(imgs)[test.label(d)[sel] == 1].mean())

    check = {}
    for name, (model, kw) in variants.items():
        for a in range(3):
            other = np.flatnonzero(a != test.A)
            x_cf = counterfactual(model, other, a, **kw)
            x_true = test.render(A=a, idx=other)
            x_far = test.render(A=a, idx=perm[other])
            reg = region[other]
            # Per image: the disease-region error to the truth minus the midpoint of the floor and a random patient's error.
            per_image = [255 * (np.abs(x_cf - t) * reg).sum(axis=(1, 2)) / np.maximum(reg.sum(axis=(1, 2)), 1) for t in (x_true, x_far)]
            margin = per_image[0] - (floor + per_image[1]) / 2
            check[(name, GROUPS[a])] = {
                "images": float(other.size),
                "effectiveness %": 100 * float((apred.predict(x_cf) == a).mean()),
                "disease kept %": kept(x_cf, other),
                **{f"present kept %, {d}": present_kept(x_cf, other, d) for d in DISEASES},
                "disease kept %, true cf": kept(x_true, other),
                "disease kept %, AE reconstruction": kept(recon[other], other),
                "disease-region L1 to truth": 255 * float(np.abs(x_cf - x_true)[reg].mean()),
                "autoencoder floor": float(floor),
                "random patient": 255 * float(np.abs(x_cf - x_far)[reg].mean()),
                "L1 margin": float(margin.mean()),
                "L1 margin se": float(margin.std(ddof=1) / np.sqrt(margin.size)) if margin.size > 1 else np.nan,
                **{f"present n, {d}": float((test.label(d)[other] == 1).sum()) for d in DISEASES},
            }
    return pd.DataFrame(check).T


def disentangler_study(
    ldm: Any, train: ToyCXR, *, lam: float, steps: int, mi_steps: int, device: str = "auto", seed: int = 0
) -> dict[str, Any]:
    """Fit the MINE disentangler of Section 3.3 on the latents and compare held-out MI bounds before and after.

    Parameters
    ----------
    ldm : LatentDiffusion
        Model whose encoder gives the latents ``z0``.
    train : ToyCXR
        Training images and groups.
    lam : float
        The paper's lambda (size of the perturbation).
    steps : int
        Perturbation updates.
    mi_steps : int
        Critic updates of the held-out MI estimates.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    dict
        ``disentangler``, ``mi_before``, ``mi_after`` (MI results), ``shift`` (per-latent norm of
        ``phi(z) - z``) and ``table`` (a summary frame).
    """
    from ..models.mine import MINEDisentangler, estimate_mi

    z_train = ldm.encode(train.images)
    dis = MINEDisentangler(z_train.shape[1:], 3, lam=lam, seed=seed).fit(z_train, train.A, steps=steps, device=device, seed=seed)
    z_phi = dis.transform(z_train)
    mi_before = estimate_mi(z_train, train.A, 3, steps=mi_steps, device=device, seed=seed)
    mi_after = estimate_mi(z_phi, train.A, 3, steps=mi_steps, device=device, seed=seed)
    shift = np.linalg.norm((z_phi - z_train).reshape(len(z_train), -1), axis=1)
    table = pd.DataFrame({"z0": mi_before.summary().iloc[0], "phi(z0)": mi_after.summary().iloc[0]}).T
    table["mean ||phi(z) - z||"] = [0.0, float(shift.mean())]
    table["mean ||z||"] = float(np.linalg.norm(z_train.reshape(len(z_train), -1), axis=1).mean())
    return {"disentangler": dis, "mi_before": mi_before, "mi_after": mi_after, "shift": shift, "table": table}


def beta_vae_counterfactuals(
    train: ToyCXR, betas: Sequence[float], *, epochs: int, batch_size: int, device: str = "auto", seed: int = 0
) -> dict[str, Callable[..., np.ndarray]]:
    """The conditional beta-VAE baselines of Tables 7-11 as counterfactual functions ``f(x, a, a_new)``.

    Parameters
    ----------
    train : ToyCXR
        Training images and groups.
    betas : sequence of float
        Positive beta values.
    epochs, batch_size : int
        Training settings.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    dict
        ``"VAE beta=<b>"`` -> counterfactual function.
    """
    from ..models.vae import ConditionalVAE

    def onehot(a):
        return np.eye(3, dtype=np.float32)[np.asarray(a)]

    def as_function(vae):
        return lambda x, a, a_new: np.asarray(vae.counterfactual(x[:, None], onehot(a), onehot(a_new)))[:, 0]

    models = {}
    for b in betas:
        vae = ConditionalVAE((1, train.size, train.size), parent_dim=3, latent_dim=16, beta=b, width=16, hidden=64, seed=seed)
        vae.fit(train.images[:, None], onehot(train.A), epochs=epochs, batch_size=batch_size, device=device, seed=seed)
        models[f"VAE beta={b:g}"] = as_function(vae)
    return models


def generation_quality(
    counterfactuals: dict,
    images: np.ndarray,
    A: np.ndarray,
    attribute_predictor,
    *,
    true_counterfactual=None,
    disease_region: np.ndarray | None = None,
    n_classes: int = 3,
    fd_boot: int = 50,
) -> pd.DataFrame:
    """Composition, effectiveness, Fréchet distance and distance to the truth of counterfactual models.

    The toy counterpart of the paper's Tables 7-11 (Appendix I): for every model,

    * **composition** (Tables 7, 9): mean absolute pixel difference (on the 0-255 scale) between an image
      and its regeneration under the null intervention ``do(A = A)``, per observed group;
    * **effectiveness** (Tables 8, 10): share of counterfactuals under ``do(A = a)`` that the attribute
      predictor assigns to ``a``, over images not already in group ``a``;
    * **FD** (Table 11): Fréchet distance between the attribute predictor's penultimate features of the
      real images and of all counterfactuals (an in-domain stand-in for FID, which needs Inception
      weights);
    * **L1 to truth** (not in the paper, which has no ground truth): mean absolute difference (0-255)
      between the counterfactual and the true counterfactual, optionally only inside
      ``disease_region`` (where the diseases are drawn).

    Composition and effectiveness come from :mod:`cflib.metrics.axioms` (one null-intervention cycle of
    :func:`~cflib.metrics.axioms.measure_composition`, :func:`~cflib.metrics.axioms.measure_effectiveness`
    with the predictor as the reader of ``A``), each ``f`` seen as a
    :class:`~cflib.metrics.axioms.FunctionModel` over ``{"x", "A"}``.

    Parameters
    ----------
    counterfactuals : dict
        ``{name: f}`` with ``f(images, A, a_new) -> images`` for an array ``a_new``.
    images : numpy.ndarray
        ``(n, H, W)`` test images in [0, 1].
    A : numpy.ndarray
        ``(n,)`` observed groups.
    attribute_predictor : object
        Has ``score(images, target)`` (per-image correctness) and ``embed(images)``, e.g. an
        :class:`cflib.models.classifier.ImageClassifier` such as :class:`cflib.models.cnn_zoo.SmallCNN`.
    true_counterfactual : callable, optional
        ``a -> images``: the true counterfactuals of ``images`` under ``do(A = a)``.
    disease_region : numpy.ndarray, optional
        ``(n, H, W)`` boolean mask restricting the distance to the truth.
    n_classes : int
        Number of groups.
    fd_boot : int
        Bootstrap draws of the Fréchet distance's standard error (images resampled in both feature sets,
        from a generator of its own so that no other random stream moves).

    Returns
    -------
    pandas.DataFrame
        One row per model; columns ``(metric, group)``, with ``("composition L1", "all")`` over all images and
        the standard errors ``("composition L1 se", "all")`` and ``("FD se", "all")``.
    """
    from ..metrics.axioms import FunctionModel, measure_composition, measure_effectiveness
    from ..metrics.realism import frechet_distance
    from ..models._train import check_grey_images

    x = check_grey_images(images)
    A = np.asarray(A)
    if A.shape != (x.shape[0],):
        raise ValueError(f"A must have shape ({x.shape[0]},), got {A.shape}")
    if not isinstance(counterfactuals, dict) or not counterfactuals:
        raise TypeError("counterfactuals must be a non-empty dict {name: f(images, A, a_new)}")
    real_feat = attribute_predictor.embed(x)
    truth = [true_counterfactual(a) for a in range(n_classes)] if true_counterfactual is not None else None
    obs = {"x": x, "A": A}
    rows = {}
    for name, f in counterfactuals.items():

        def g(images: np.ndarray, pa: dict, pa_star: dict, f=f, name=name) -> np.ndarray:
            return check_grey_images(f(images, pa["A"], pa_star["A"]), x.shape[1], name=f"{name} output")

        g.parent_names = ("A",)
        model = FunctionModel(g)
        comp = measure_composition(model, obs, cycles=1).at(1)["l1"]  # the null intervention do(A = A), 0-255 scale
        row, cfs = {}, []
        for a in range(n_classes):
            eff = measure_effectiveness(model, obs, {"A": attribute_predictor}, do={"A": np.full_like(A, a)})
            cfs.append(eff.counterfactuals["A"]["x"])
            row[("composition L1", a)] = float(comp[a == A].mean()) if np.any(a == A) else np.nan
            other = a != A
            row[("effectiveness %", a)] = float(100 * eff.per_image[("A", "A")][other].mean()) if other.any() else np.nan
            if truth is not None:
                err = np.abs(cfs[a] - truth[a])
                row[("L1 to truth", a)] = float(255 * (err[disease_region].mean() if disease_region is not None else err.mean()))
        row[("composition L1", "all")] = float(comp.mean())
        row[("composition L1 se", "all")] = float(comp.std(ddof=1) / np.sqrt(comp.size)) if comp.size > 1 else np.nan
        gen_feat = attribute_predictor.embed(np.concatenate(cfs))
        row[("FD", "all")] = frechet_distance(real_feat, gen_feat)
        row[("FD se", "all")] = _bootstrap_fd_se(real_feat, gen_feat, n_boot=fd_boot)
        rows[name] = row
    df = pd.DataFrame(rows).T
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["metric", "do(A)"])
    return df


def _bootstrap_fd_se(real: np.ndarray, generated: np.ndarray, *, n_boot: int, seed: int = 0) -> float:
    """Bootstrap standard error of the Fréchet distance, resampling the rows of both feature sets."""
    from ..metrics.realism import frechet_distance

    if n_boot < 2:
        return np.nan
    rng = np.random.default_rng(seed)
    draws = [frechet_distance(real[rng.integers(0, len(real), len(real))], generated[rng.integers(0, len(generated), len(generated))])
             for _ in range(n_boot)]
    return float(np.std(draws, ddof=1))


def quality_table(models: Mapping[str, Callable[..., np.ndarray]], test: ToyCXR, apred: SmallCNN) -> pd.DataFrame:
    """Generation quality of every counterfactual function (Tables 7-11) with short group names as columns.

    Parameters
    ----------
    models : mapping of str to callable
        Counterfactual functions ``f(x, a, a_new)``.
    test : ToyCXR
        Test images (their true counterfactuals and disease region are the ground truth).
    apred : SmallCNN
        Group predictor for effectiveness.

    Returns
    -------
    pandas.DataFrame
        :func:`generation_quality` with ``(metric, group)`` columns.
    """

    quality = generation_quality(models, test.images, test.A, apred, true_counterfactual=test.counterfactual,
                                 disease_region=test.disease_region())
    quality.columns = pd.MultiIndex.from_tuples(
        [(m, GROUPS[g].split(" (")[1].rstrip(")") if g != "all" else g) for m, g in quality.columns])
    return quality


def variance_control(
    ldm: Any, test: ToyCXR, apred: SmallCNN, *, n_images: int, t_star: int, steps: int, guidance: float,
    aux_guidance: float,
) -> pd.DataFrame:
    """Appendix H.1: spread, error and effectiveness of three stochastic abductions at t* and t*/4.

    Each quantity is computed per image (the pixel sd across the draws, the L1 to the true counterfactual
    averaged over the draws, the share of the draws the group predictor assigns to the target group) and
    averaged over the images, with its standard error over images.

    Parameters
    ----------
    ldm : LatentDiffusion
        A model conditioned on the diseases (CLDM+D).
    test : ToyCXR
        Test images; the first ``n_images`` are moved to the next group.
    apred : SmallCNN
        Group predictor.
    n_images : int
        Number of images.
    t_star, steps, guidance, aux_guidance : numbers
        Counterfactual settings.

    Returns
    -------
    pandas.DataFrame
        One row per noise level: ``pixel sd across draws (0-255)``, ``L1 to truth (0-255)`` and ``effectiveness %``,
        each with its standard error over images (``, se``; NaN with one image).
    """
    idx = np.arange(min(n_images, test.n))
    target = (test.A[idx] + 1) % 3
    truth = test.render(A=target, idx=idx)
    rows = {}
    for ts in (t_star, max(1, t_star // 4)):
        draws = np.stack([ldm.counterfactual(test.images[idx], test.A[idx], target, aux=test.D[idx], t_star=ts, steps=steps,
                                             guidance=guidance, aux_guidance=aux_guidance, abduction="forward", seed=s)
                          for s in range(3)])
        sd_i = 255 * draws.std(axis=0).mean(axis=(1, 2))  # per image
        l1_i = 255 * np.abs(draws - truth).mean(axis=(0, 2, 3))
        eff_i = 100 * np.mean([apred.predict(d) == target for d in draws], axis=0)  # per image: share of its draws that moved
        rows[f"t* = {ts}"] = {"pixel sd across draws (0-255)": float(sd_i.mean()), "L1 to truth (0-255)": float(l1_i.mean()),
                              "effectiveness %": float(eff_i.mean()),
                              **{f"{name}, se": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan
                                 for name, v in (("pixel sd across draws (0-255)", sd_i), ("L1 to truth (0-255)", l1_i),
                                                 ("effectiveness %", eff_i))}}
    return pd.DataFrame(rows).T


# ---------------------------------------------------------------------------------------------------------
# Notebook 06: auditing the CNN zoo
# ---------------------------------------------------------------------------------------------------------

#: The tests of Figures 3-4: label -> column suffix of :func:`audit_cnn_zoo`.
AUDIT_TESTS = {"CIT-LR (CLDM+D)": "CIT-LR[CLDM+D]", "CIT-LR (paper CLDM)": "CIT-LR[CLDM]", "CIT-LR (true cf)": "CIT-LR[true]",
               "DP": "DP", "EO": "EO"}
_INVARIANT, _USES = "ignores trace (ECA >= 0.99)", "uses trace (ECA < 0.9)"


def group_auc_table(audit: pd.DataFrame) -> pd.DataFrame:
    """Disease ROC-AUC within each group, per architecture and shortcut strength (Tables 2-3).

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    auc = audit.pivot_table(index=["arch", "rho"], columns="disease", values=[f"AUC A={a}" for a in range(3)])
    auc.columns = [f"{d} | {GROUPS[int(c[-1])].split(' (')[1].rstrip(')')}" for c, d in auc.columns]
    return auc


def plot_factual_vs_counterfactual(zoo: Sequence[CNNZooMember], test: ToyCXR, counterfactuals: Sequence[np.ndarray]):
    """Figures 8-12: predicted probability on counterfactual against factual images, per disease.

    The first architecture's members with the smallest and largest shortcut strength (first seed);
    grey points are horizontally flipped images, a change no classifier should care about.

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Fitted classifiers.
    test : ToyCXR
        Test images.
    counterfactuals : sequence of numpy.ndarray
        Generated counterfactuals of all test images, one array per group.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    rhos = [m.rho for m in zoo]
    pick = [m for m in zoo if m.arch == zoo[0].arch and m.seed == zoo[0].seed and m.rho in (min(rhos), max(rhos))]
    fig, axes = plotting.subplots(2, len(DISEASES), width=3.2, height=3.0)
    for m in pick:
        ax = axes[0 if m.rho == min(rhos) else 1, DISEASES.index(m.disease)]
        p0 = m.predict_proba(test.images)
        for a in range(3):
            other = a != test.A
            ax.scatter(p0[other], m.predict_proba(counterfactuals[a])[other], s=5, alpha=0.5, label=f"do(A={a})")
        ax.scatter(p0, m.predict_proba(test.images[:, :, ::-1].copy()), s=5, alpha=0.4, color="0.5", label="flip")
        plotting.identity_line(ax)
        ax.set_title(f"{m.disease}, {m.arch} rho={m.rho:g}", fontsize=9)
        ax.set_xlabel("p(factual)")
        ax.set_ylabel("p(counterfactual)")
    axes[0, 0].legend(fontsize=7, markerscale=2)
    return axes


def plot_audit_pvalues(audit: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Figures 3-4: log10 p of each test in :data:`AUDIT_TESTS` against ECA, per disease; returns the alignment.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.
    alpha : float
        Level drawn as a line.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(test, disease)``: Pearson ``r``, ``resid_sd`` and ``n``.
    """
    from ..stats.invariance import alignment_stats, plot_pvalue_vs_eca

    fig, axes = plotting.subplots(len(AUDIT_TESTS), len(DISEASES), width=3.0, height=2.5, sharex=True)
    align = {}
    for i, (label, key) in enumerate(AUDIT_TESTS.items()):
        for j, d in enumerate(DISEASES):
            sub = audit[audit.disease == d]
            plot_pvalue_vs_eca(sub["ECA"], sub[f"log10p {key}"], alpha=alpha, ylim=(-12, 0.5), color=plotting.PALETTE[i],
                               title=f"{label}: {d}", ax=axes[i, j])
            align[(label, d)] = alignment_stats(sub["ECA"], sub[f"log10p {key}"])
            if j:
                axes[i, j].set_ylabel("")
    return pd.DataFrame(align).T[["r", "resid_sd", "n"]]


def table12(audit: pd.DataFrame) -> pd.DataFrame:
    """Tables 12-13: CIT-LR (CLDM+D) ``t / p`` and the ECA per model and disease.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    tp = audit.assign(**{"t / p": [f"{t:.2f} / {p:.2g}" for t, p in zip(audit["t CIT-LR[CLDM+D]"], audit["p CIT-LR[CLDM+D]"], strict=True)]})
    table = tp.pivot_table(index=["arch", "rho", "seed"], columns="disease", values="t / p", aggfunc="first")[list(DISEASES)]
    eca_table = audit.pivot_table(index=["arch", "rho", "seed"], columns="disease", values="ECA")[list(DISEASES)]
    return table.join(eca_table.round(3).add_suffix(" ECA"))


def rejection_rates(audit: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Rejection rates with Clopper-Pearson 95% intervals of each test among trace-ignoring and trace-using classifiers.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.
    alpha : float
        Level of the tests.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(test, group)``: ``rejected, classifiers, rate, 95% CI``.
    """
    from scipy.stats import binomtest

    def rate(mask, key):
        k, n = int((audit.loc[mask, f"p {key}"] < alpha).sum()), int(mask.sum())
        ci = binomtest(k, n).proportion_ci() if n else None
        return {"rejected": k, "classifiers": n, "rate": k / n if n else np.nan, "95% CI": f"[{ci.low:.2f}, {ci.high:.2f}]" if n else "-"}

    groups = ((_INVARIANT, audit["ECA"] >= 0.99), (_USES, audit["ECA"] < 0.9))
    return pd.DataFrame({(label, grp): rate(mask, key) for label, key in AUDIT_TESTS.items() for grp, mask in groups}).T


# ---------------------------------------------------------------------------------------------------------
# Claims, one function per notebook
# ---------------------------------------------------------------------------------------------------------
#
# Every claim is decided by a rule of :mod:`cflib.verdicts` on an estimate with its interval, written from
# the paper's words (quoted verbatim with ``quote=``). Helpers private to this chapter: joining the parts
# of a claim while keeping the deciding part's interval, Newcombe's interval for a difference of two
# proportions, a bootstrap over classifiers stratified by panel for correlations, and the size that would
# decide an undecided estimate.

_NOTES_SIGN = "The paired mean of ŷ·ĝ − ŷ·ĥ should be ≥ 0 up to noise."
_FIG2_WORDS = "of our statistical test are correlated with ECA, as opposed to DP and EO."
_FIG3_WORDS = "from the CIT-LR method exhibit higher correlation and lower variance than those of EO and DP."
_IN_SUM = ("In sum, our CIT-LR rejects the hypothesis test when ECA is low and does not when the ECA is high, "
           "demonstrating a stronger consistency over EO and DP.")
_HIGH_ECA = ("i.e., with relatively high ECA (\\geq 0.8) in the first and third column, DP and EO reject almost all the "
             "models when they actually should not.")
_PRESERVE = ("generates high-fidelity counterfactual images with perturbed sensitive feature while preserving "
             "disease-related features")
#: The paper's only number for "high ECA" (Sec. 6.3); "most" and "almost all" read as more than half and more than 90%.
_HIGH, _MOST, _ALMOST_ALL = 0.8, 0.5, 0.9
#: The book's DONE-1 bar for an effective counterfactual: the group predictor follows the intervention 20 points
#: more often than chance (one of the three groups).
_EFFECTIVE = 1 / len(GROUPS) + 0.2
#: Effectiveness may fall by at most this many points when the forward noise is lowered (C11's condition before
#: issue 20 dropped it; restored by issue 27).
_EFFECTIVE_DROP = 10.0
#: The authors' lambda of the disentangler phi (App. H.2 as the notebook reads it; notes §3.3: "chosen by random search").
PAPER_MINE_LAMBDA = 1e-3
#: Kind of the claims that check a property the paper does not state (the notes' or the book's own).
_OWN = "book's own finding"
_OWN_CHANGE = ("the book's own finding, not a reproduction (issue 27): the paper does not state it ({what}), so it is no longer "
               "counted among the paper's claims; the rule is unchanged")


def _parts(parts: Mapping[str, vd.Decision], what: str) -> vd.Decision:
    """Join a claim's parts with :func:`cflib.verdicts.combine`, keeping the deciding part's interval.

    The interval shown is that of the first part that is not reproduced, else the first undecided one,
    else the first part; the rule lists every part's verdict and estimate.
    """
    if not parts:
        return vd.combine([], rule=what)
    joined = vd.combine(parts.values(), rule=what)
    order = [vd.NOT_REPRODUCED, vd.UNDECIDED, vd.REPRODUCED]
    key = min(parts, key=lambda k: order.index(parts[k].verdict))
    detail = "; ".join(f"{k}: {d.verdict}" + (f" at {d.interval}" if d.interval is not None else "") for k, d in parts.items())
    return vd.Decision(joined.verdict, parts[key].interval, f"{joined.rule}. Parts: {detail}")


def _any_part(parts: Mapping[str, vd.Decision], what: str) -> vd.Decision:
    """A claim that needs one of its parts ("in some world"): reproduced if any part is, not reproduced if all are not."""
    verdict_list = [d.verdict for d in parts.values()]
    verdict = (vd.REPRODUCED if vd.REPRODUCED in verdict_list else
               vd.NOT_REPRODUCED if verdict_list and all(v == vd.NOT_REPRODUCED for v in verdict_list) else vd.UNDECIDED)
    key = next((k for k, d in parts.items() if d.verdict == verdict), next(iter(parts)))
    detail = "; ".join(f"{k}: {d.verdict}" for k, d in parts.items())
    return vd.Decision(verdict, parts[key].interval,
                       f"{what}: reproduced if any part is, not reproduced if every part is not, otherwise undecided. Parts: {detail}")


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _difference_interval(k1: int, n1: int, k2: int, n2: int, *, level: float = 0.95, unit: str = "units") -> vd.Interval:
    """Newcombe's hybrid score interval for ``k1/n1 - k2/n2`` (exact at 0 and 1, unlike the Wald interval)."""
    from scipy.stats import norm

    method = f"{100 * level:g}% Newcombe score interval of a difference of proportions, {n1} and {n2} {unit}"
    if n1 == 0 or n2 == 0:
        return vd.Interval(np.nan, np.nan, np.nan, method + " (no units)")
    z = float(norm.ppf(0.5 + level / 2))
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = _wilson(k1, n1, z), _wilson(k2, n2, z)
    d = p1 - p2
    return vd.Interval(d, d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2), method)


def _count(rate_percent: float, n: int) -> int:
    """The number of successes behind a percentage of ``n`` units (0 when there are no units)."""
    return int(round(float(rate_percent) * n / 100)) if n > 0 and np.isfinite(rate_percent) else 0


def _deciding_size(interval: vd.Interval, threshold: float, n: int, unit: str) -> str:
    """What size would move ``interval`` off ``threshold`` at the same estimate (:func:`cflib.verdicts.deciding_size`)."""
    if not interval.defined:
        return f"its interval is undefined with {n} {unit} ({interval.method}); more {unit} are needed"
    if interval.estimate == threshold:
        return f"no size decides it while the estimate sits at {threshold:g}"
    size = vd.deciding_size(interval, threshold, max(int(n), 1))
    if size is None:
        return f"more than {1000 * max(int(n), 1)} {unit} (now {n}) would be needed at an estimate of {interval.estimate:.3g}"
    return f"about {size} {unit} (now {n}) would decide it if the estimate stayed at {interval.estimate:.3g}"


def _undecided_note(decision: vd.Decision, threshold: float, n: int, unit: str, where: str) -> str:
    """The note of an undecided claim: the deciding size and where that size is run."""
    if decision.verdict != vd.UNDECIDED:
        return ""
    return f"Undecided: {_deciding_size(decision.interval, threshold, n, unit)}; {where}."


def _pearson_draws(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis (NaN where either side is constant)."""
    xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
    den = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc * yc).sum(-1) / np.where(den > 0, den, 1.0), np.nan)


def _panel_bootstrap(
    panels: Mapping[str, pd.DataFrame], x: str, ys: Mapping[str, str], statistic: Callable[[dict], np.ndarray],
    *, n_boot: int = 2000, seed: int = 0, level: float = 0.95,
) -> vd.Interval:
    """Percentile bootstrap of a statistic of per-panel correlations, resampling classifiers within each panel.

    ``statistic`` maps ``{name: array (..., n_panels) of r(x, y_name)}`` to an array (...) and may use
    ``np.nan*`` to skip panels whose r is undefined; draws where it is undefined are dropped, and the
    interval is undefined if more than 5% are.
    """
    sizes = [len(p) for p in panels.values()]
    method = f"{100 * level:g}% percentile bootstrap over classifiers within each of {len(panels)} panels ({min(sizes, default=0)}-{max(sizes, default=0)} each), {n_boot} draws"
    if not panels or min(sizes) < 3:
        return vd.Interval(np.nan, np.nan, np.nan, method + " (a panel has fewer than 3 classifiers)")
    rng = np.random.default_rng(seed)
    point, draws = {k: [] for k in ys}, {k: [] for k in ys}
    for frame in panels.values():
        idx = rng.integers(0, len(frame), (n_boot, len(frame)))
        xv = frame[x].to_numpy(float)
        for k, col in ys.items():
            yv = frame[col].to_numpy(float)
            point[k].append(_pearson_draws(xv, yv))
            draws[k].append(_pearson_draws(xv[idx], yv[idx]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: undefined draws, counted below
        est = float(statistic({k: np.array(v) for k, v in point.items()}))
        stats = np.asarray(statistic({k: np.stack(v, axis=-1) for k, v in draws.items()}), dtype=float)
    ok = np.isfinite(stats)
    if not np.isfinite(est) or ok.mean() < 0.95:
        return vd.Interval(est if np.isfinite(est) else np.nan, np.nan, np.nan, method + f" ({(~ok).sum()} undefined draws)")
    low, high = np.quantile(stats[ok], [0.5 - level / 2, 0.5 + level / 2])
    dropped = f", {(~ok).sum()} undefined draws dropped" if (~ok).any() else ""
    return vd.Interval(est, float(low), float(high), method + dropped)


def _alignment_parts(panels: Mapping[str, pd.DataFrame], x: str, cit: str, baselines: Sequence[str], *, seed: int) -> dict:
    """Intervals of the mean over panels of r(CIT), of r(CIT) - max r(baseline) and of the standardised spread difference."""
    ys = {"cit": cit, **{f"b{i}": b for i, b in enumerate(baselines)}}
    base = [f"b{i}" for i in range(len(baselines))]

    def r_cit(r):
        return np.nanmean(r["cit"], axis=-1)

    def r_gap(r):
        best = r[base[0]]
        for b in base[1:]:
            best = np.fmax(best, r[b])
        return np.nanmean(r["cit"] - best, axis=-1)

    def spread_gap(r):  # sqrt(1 - r^2): the residual sd of log10 p around the fitted line, in units of its own sd
        s = {k: np.sqrt(1 - v ** 2) for k, v in r.items()}
        least = s[base[0]]
        for b in base[1:]:
            least = np.fmin(least, s[b])
        return np.nanmean(s["cit"] - least, axis=-1)

    return {name: _panel_bootstrap(panels, x, ys, f, seed=seed)
            for name, f in (("r", r_cit), ("r gap", r_gap), ("spread gap", spread_gap))}


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1, C2 and C9 of notebook 01 (Theorem 4.2 and the ECA identity).

    Parameters
    ----------
    results : mapping
        ``exact`` (:func:`theorem42_enumeration`), ``n_z``, ``identity`` (:func:`eca_identity_study`)
        and ``n_identity``.

    Returns
    -------
    pandas.DataFrame
        The claims table rows of this notebook.
    """
    exact, n_z, identity, n_identity = claims.require(results, ["exact", "n_z", "identity", "n_identity"])
    thm_gap = claims.record("thm42_enumeration_gap", float(exact["|Delta - E[(g-h)^2]|"]))
    max_abs_err = claims.record("identity_max_abs_err", float(identity["diff"].abs().max()))
    min_delta = claims.record("identity_min_delta", float(identity["Delta_hat"].min()))
    n_test = n_identity // 2
    c1 = _parts({
        "residual": vd.decide_below(vd.exact(thm_gap, method="exact enumeration, floating-point residual"), 1e-12, inclusive=True,
                                    quantity="|Delta - E[(g-h)^2]|"),
        "g differs from h": vd.decide_above(vd.exact(float(exact["E[(g - h)^2]"]), method="exact enumeration"), 0.0,
                                            quantity="E[(g-h)^2] of a g that reads A"),
    }, "the identity and its 'only if' side")
    claims.claim(
        "C1",
        "Theorem 4.2: E[Yhat g(A,Z)] - E[Yhat h(Z)] = E[(g - h)^2] >= 0, zero iff g = h.",
        paper="identity (proof in App. D)", ours=thm_gap, decision=c1,
        quote="Intuitively, Theorem 4.2 follows from the law of total variance", source="Sec. 4.2, Theorem 4.2 (proof in App. D)",
        evidence=f"exact enumeration on a 2 x {n_z} discrete law: |Delta - E[(g-h)^2]| = {thm_gap:.1e}; the only error is "
        "floating-point rounding, so the band is 1e-12.",
    )
    # C2: per-unit differences e_i = y_i (g_i - h_i) - p(1-p) 1[flip_i] have mean Delta_hat - p(1-p)(1-ECA);
    # a row with no variance (no unit moved) is decided on its point, never on an infinite z.
    tol = 1 / np.sqrt(n_test)
    rows = {f"{r.dataset}/{r.model}": vd.decide_within(vd.normal_interval(r.diff, r.diff_se, method=f"standard error over {n_test} test units"),
                                                    -tol, tol, quantity="Delta_hat - p(1-p)(1-ECA)")
            for r in identity.itertuples()}
    c2 = _parts(rows, f"every classifier x dataset ({len(rows)})")
    claims.claim(
        "C2",
        "For binary A independent of Z and hard labels, Delta = p(1-p)(1-ECA) (derived in the notes).",
        paper="derivation (notes 2.3); notes' check: 0.0717 vs 0.0719", ours=f"max |Delta_hat - p(1-p)(1-ECA)| = {max_abs_err:.2g}",
        decision=c2, quote="With binary A (P(A=1)=p), A ⊥ Z, Z = all exogenous content, a deterministic DGP and hard-label f: Δ = p(1−p)(1 − ECA).", source="notes §2.3 and §5 item 2: a derivation, not in the paper",
        kind=_OWN,
        change="the book's own finding, not a reproduction (issue 27): the paper states no link between its functional and ECA; the "
        "identity is the notes' derivation, so it is no longer counted among the paper's claims. The rule is unchanged: each row's "
        "interval inside the notes' Monte-Carlo tolerance 1/sqrt(n) (it replaced |z| <= 4, under which a row whose per-unit "
        "differences were all zero had a standard error of 0 and z = inf)",
        evidence=f"{len(identity)} classifiers x datasets, {n_test} test units each; per row the 95% normal interval of the mean "
        f"per-unit difference y(g - h) - p(1-p) 1[flip] must lie in +-1/sqrt(n) = +-{tol:.3f} (the notes' tolerance).",
    )
    c9 = _parts({f"{r.dataset}/{r.model}": vd.decide_above(vd.normal_interval(r.Delta_hat, r.Delta_se, method=f"standard error over {n_test} test units"),
                                                         0.0, inclusive=True, quantity="Delta_hat")
                 for r in identity.itertuples()}, f"every classifier x dataset ({len(identity)})")
    claims.claim(
        "C9",
        "The paired mean difference of yhat*g - yhat*h is non-negative up to noise.",
        paper=">= 0 (Delta = E[(g-h)^2])", ours=min_delta, decision=c9, quote=_NOTES_SIGN, source="notes §5 item 9, not in the paper",
        kind=_OWN, change=_OWN_CHANGE.format(what="the sign check is the notes' item 9, a property a sound test must have"),
        evidence="Delta_hat of every classifier and dataset with the oracle generator, each with its 95% normal interval "
        "(a classifier no intervention moves has d = 0 exactly).",
        note=_undecided_note(c9, 0.0, n_test, "test units", "notebooks/params/full.yaml runs 20000"),
    )
    return claims.rows(["C1", "C2", "C9"])


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C3, C3-regression and C3b of notebook 02 (Figure 2).

    Correlations are bootstrapped over the classifiers of each dataset (the panels of Figure 2). The
    standardised residual spread of each test, ``sqrt(1 - r^2)``, is recorded (``mean_spread_gap_generator``)
    but decides nothing apart: it is a function of ``|r|``, so "lower variance" read on a comparable scale is
    C3's correlation read without its sign (issue 27 merged the former claim C5 into C3).

    Parameters
    ----------
    results : mapping
        ``results`` (:func:`audit_synthetic_zoos`), ``align`` (:func:`figure2_alignment`), ``kinds``,
        ``a_effect``, ``z_layer`` and ``seed``.

    Returns
    -------
    pandas.DataFrame
    """
    audit, align, kinds, a_effect, z_layer, seed = claims.require(results, ["results", "align", "kinds", "a_effect", "z_layer", "seed"])
    align_r = alignment_pivot(align, "r", kinds)
    for key, col in (("r_cit_generator", "CIT-LR (generator)"), ("r_cit_regression", "CIT-LR (regression)"), ("r_dp", "DP"), ("r_eo", "EO")):
        claims.record(key, align_r[col].round(3).to_dict())
    claims.record("median_r_cit_generator", float(align_r["CIT-LR (generator)"].median()))
    claims.record("median_r_cit_regression", float(align_r["CIT-LR (regression)"].median()))
    panels = dict(list(audit.groupby("dataset", sort=False)))
    per = len(audit) // max(1, len(panels))
    where = "notebooks/params/full.yaml runs 10 seeds (the paper's 100 classifiers per dataset)"
    change = ("the old rule counted datasets (r > 0 in >= 5/6, above DP and EO in >= 4/6) without an interval; the paper's "
              "sentence is about Figure 2 as a whole, so the quantity is now the mean over the six panels, bootstrapped over "
              "classifiers")
    merged = ("; issue 27 merged the former claim C5 into C3: C5 applied the Fig. 3 sentence ('higher correlation and lower "
              "variance') to Fig. 2 with the spread measured as sqrt(1 - r^2), the residual sd in units of each test's own sd, which "
              "is a function of |r|, so C5 was C3 read without its sign and counted one finding twice. C3 keeps the paper's words "
              "about Fig. 2 and its rule; the spread difference is reported in its evidence")
    ivs = {form: _alignment_parts(panels, "eca", f"{form}_log10p", ["dp_log10p", "eo_log10p"], seed=seed) for form in ("cit_gen", "cit_reg")}
    spread = ivs["cit_gen"]["spread gap"]
    claims.record("mean_spread_gap_generator", float(spread.estimate))
    shown = f"{spread.estimate:.3f} [{spread.low:.3f}, {spread.high:.3f}]" if spread.defined else f"undefined ({spread.method})"
    spread_text = (" The paper's 'lower variance' (said of Fig. 3) adds nothing on a comparable scale: the mean standardised "
                   f"spread sqrt(1 - r^2) of CIT-LR minus the smaller of DP's and EO's is {shown}, a function of the same |r| "
                   "(it was claim C5).")
    for key, form, statement in (
        ("C3", "cit_gen", "Fig. 2: CIT-LR log p rises with ECA, more than for DP and EO (generator form of Alg. 1)."),
        ("C3-regression", "cit_reg", "The same alignment with the regression form of the authors' synthetic code (g, h fitted to yhat on the known Z)."),
    ):
        iv = ivs[form]
        d = _parts({"r > 0": vd.decide_above(iv["r"], 0.0, quantity="mean r(ECA, log10 p) of CIT-LR"),
                    "r above DP's and EO's": vd.decide_above(iv["r gap"], 0.0, quantity="mean of r_CIT - max(r_DP, r_EO)")},
                   "correlated with ECA and more than DP and EO")
        claims.claim(
            key, statement, paper="qualitative: CIT-LR aligns with ECA, DP/EO do not",
            ours={"mean r": round(iv["r"].estimate, 3), "mean r_CIT - max(r_DP, r_EO)": round(iv["r gap"].estimate, 3)},
            decision=d, quote=_FIG2_WORDS, change=change + (merged if key == "C3" else ""),
            source="Sec. 6.2, Fig. 2" + ("" if key == "C3" else " (the regression form is the authors' code, notes §3.1.4)"),
            evidence=f"Pearson r of ECA vs log10 p in each of {len(panels)} datasets ({per} classifiers each), a_effect = {a_effect}"
            + (f", g per group and h = A-marginal of g on Z = {z_layer}." if key != "C3" else "." + spread_text),
            note=_undecided_note(d, 0.0, per, "classifiers per dataset", where),
        )
    high = audit["eca"] >= _HIGH
    rej = audit["cit_gen_p"] < 0.05
    iv_hi = vd.binomial_interval(int(rej[high].sum()), int(high.sum()), unit=f"classifiers with ECA >= {_HIGH}")
    iv_lo = vd.binomial_interval(int(rej[~high].sum()), int((~high).sum()), unit=f"classifiers with ECA < {_HIGH}")
    d3b = _parts({"high ECA not rejected": vd.decide_below(iv_hi, _MOST, quantity=f"rejection rate at ECA >= {_HIGH}"),
                  "low ECA rejected": vd.decide_above(iv_lo, _MOST, quantity=f"rejection rate at ECA < {_HIGH}")},
                 "both ECA ranges")
    claims.claim(
        "C3b",
        f"Most classifiers with high ECA (>= {_HIGH}) are not rejected at 0.05; most with low ECA are rejected (generator form).",
        paper="qualitative", ours={f"reject | ECA >= {_HIGH}": round(iv_hi.estimate, 3) if iv_hi.defined else None,
                                   f"reject | ECA < {_HIGH}": round(iv_lo.estimate, 3) if iv_lo.defined else None},
        decision=d3b, quote=_IN_SUM + " ... " + _HIGH_ECA, source="Sec. 6.3 (said of Figs. 3-4; the notes §5 item 3 apply it to Fig. 2)",
        change=f"the old ranges (ECA >= 0.95, < 0.85) and bars (<= 25%, >= 75%) were not the paper's; its only number for a high "
        f"ECA is {_HIGH}, and 'rejects' / 'does not' are read as most (more than half) of each range",
        evidence=f"CIT-LR (generator) p < 0.05 pooled over the {len(panels)} datasets. A consistent test detects a few % of "
        "flipped predictions, so rejecting a classifier with ECA 0.9 is correct behaviour; the paper's pattern needs a less "
        "powerful test.",
        note=_undecided_note(d3b, _MOST, len(audit), "classifiers", where),
    )
    return claims.rows(["C3", "C3-regression", "C3b"])


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C4a, C4b (parity counterexamples) and, with the curves, C7, C7-code and C8 of notebook 03.

    Also records the sweep point's power and mean ECA.

    Parameters
    ----------
    results : mapping
        ``sweep_sim`` (p-values of the sweep point), ``counter`` (:func:`parity_counterexamples`), ``alpha``,
        ``n_world``; with the curves also ``calib`` (:func:`calibration_study`), ``power_n`` (:func:`power_table`),
        ``n_rep``, ``n``, ``n_rep_code``, ``power_ns``, ``effect_for_n`` and ``n_rep_power``.

    Returns
    -------
    pandas.DataFrame
    """
    sweep_sim, counter, alpha, n_world = claims.require(results, ["sweep_sim", "counter", "alpha", "n_world"])
    power_point = rejection_rate_by_form(sweep_sim, alpha=alpha)
    claims.record("power_generator", float(power_point["generator"]))
    claims.record("power_regression", float(power_point["regression"]))
    claims.record("mean_eca_sweep_point", float(sweep_sim["eca"].mean()))
    ce = counter.reset_index()
    inv = ce[(ce["model"] == "content") & ce["world"].str.startswith("world 1")].iloc[0]
    sc = ce[ce["model"] == "shortcut"]

    def p_value(p, name):
        return vd.exact(float(p), method=f"p-value of the {name} test on {n_world} units")

    c4a = _parts({
        "ECA = 1": vd.decide_within(vd.exact(float(inv["ECA"]), method=f"ECA over {n_world} units"), 1.0, 1.0, quantity="ECA"),
        "DP rejects": vd.decide_below(p_value(inv["DP p"], "DP"), alpha, quantity="DP p"),
        "EO rejects": vd.decide_below(p_value(inv["EO p"], "EO"), alpha, quantity="EO p"),
        "CIT-LR does not": vd.decide_above(p_value(inv["CIT-LR p"], "CIT-LR"), alpha, inclusive=True, quantity="CIT-LR p"),
    }, "all four")
    claims.claim(
        "C4a",
        "An invariant classifier (ECA = 1) is rejected by DP and EO when P(Y | A) differs across groups.",
        paper="qualitative (Sec. 6.3: DP and EO reject almost all high-ECA models)",
        ours=f"ECA = {inv['ECA']:.2f}; DP p = {inv['DP p']:.1e}, EO p = {inv['EO p']:.1e}, CIT-LR p = {inv['CIT-LR p']:.2g}",
        decision=c4a, kind="sanity check", quote="Similarly, we observe that DP and EO are misaligned with CI as in Def. 4.1.",
        source="Sec. 6.2 (the notes §5 item 4a: demonstrable by construction)",
        evidence=f"parity_world with prevalence (0.2, 0.45) and group-1 false positives 0.25, n = {n_world}; Welch tests at {alpha}. "
        "A world built for the purpose: a sanity check of the tests, not a reproduction.",
    )
    worlds = {r.world.split(" (")[0]: _parts({
        "ECA < 0.8": vd.decide_below(vd.exact(float(r.ECA), method=f"ECA over {n_world} units"), 0.8, quantity="ECA"),
        "DP accepts": vd.decide_above(p_value(r._5, "DP"), alpha, inclusive=True, quantity="DP p"),
        "EO accepts": vd.decide_above(p_value(r._6, "EO"), alpha, inclusive=True, quantity="EO p"),
        "CIT-LR rejects": vd.decide_below(p_value(r._4, "CIT-LR"), alpha, quantity="CIT-LR p"),
    }, "all four") for r in sc.itertuples()}
    claims.claim(
        "C4b",
        "A clearly non-invariant classifier (ECA << 1) can pass DP and EO.",
        paper="qualitative (Sec. 6.3)",
        ours="; ".join(f"{r.world.split(' (')[0]}: ECA = {r.ECA:.2f}, DP p = {r._5:.2g}, EO p = {r._6:.2g}, CIT-LR p = {r._4:.1e}" for r in sc.itertuples()),
        decision=_any_part(worlds, "some world"), kind="sanity check",
        quote="Similarly, we observe that DP and EO are misaligned with CI as in Def. 4.1.",
        source="Sec. 6.2 (the notes §5 item 4b: demonstrable by construction)",
        evidence="the shortcut classifier 1[c1 + 1.5 sign(t) c2 > 0]: group rates equal by symmetry of c2, so DP and EO accept by "
        "construction in the world without association.",
    )
    if results.get("calib") is None:  # the sweep runs without the curves
        return claims.rows(["C4a", "C4b"])
    calib, power_n, n_rep, n, n_rep_code, power_ns, effect_for_n, n_rep_power = claims.require(
        results, ["calib", "power_n", "n_rep", "n", "n_rep_code", "power_ns", "effect_for_n", "n_rep_power"])
    marg, code = calib.loc[_NULL_FORMS[0]], calib.loc[_NULL_FORMS[1]]
    claims.record("size_marginal_h", float(marg["rate"]))
    claims.record("size_regressed_h", float(code["rate"]))
    claims.record("size_generator", float(calib.loc["generator", "rate"]))
    calib_words = "the CIT-LR rejection rate at α=0.05 should lie within a binomial confidence interval of 0.05 over replications"
    for key, row, reps, statement in (
        ("C7", marg, n_rep, "Under no effect, CIT-LR (h = A-marginal of g) holds its level: rejection rate at most 2 alpha, p-values uniform."),
        ("C7-code", code, n_rep_code, "The same calibration for the authors' variant with a separately regressed h."),
    ):
        iv = vd.binomial_interval(int(row["k"]), int(row["n"]), unit="null replications")
        d = _parts({"size": vd.decide_below(iv, 2 * alpha, inclusive=True, quantity="rejection rate under no effect"),
                    "uniform p": vd.decide_above(vd.exact(float(row["ks_pvalue"]), method="Kolmogorov-Smirnov p-value of uniform p"),
                                                 0.01, quantity="KS p")},
                   "level and uniformity")
        claims.claim(
            key, statement, paper="not reported (property a sound test must have)",
            ours=f"{row['rate']:.3f} ({row['k']}/{row['n']}); KS p = {row['ks_pvalue']:.2g}", decision=d,
            quote=calib_words, source="notes §5 item 7, not in the paper", kind=_OWN,
            change=_OWN_CHANGE.format(what="the paper reports no calibration; the level check is the notes' item 7") + "; before, "
            "the old rule asked the rate to lie in the 99% acceptance interval around alpha, replaced by an interval "
            f"of the rate at most 2 alpha = {2 * alpha:g} (the tolerance of the chapter's notebook 07), so a conservative test holds its level",
            evidence=f"{reps} replications of n = {n}, a_effect = 0; KS test of uniform p > 0.01.",
            note=_undecided_note(d, 2 * alpha, reps, "replications", "notebooks/params/full.yaml runs 1000"),
        )
    gen_n = power_n.loc["generator"]
    reg_n = power_n.loc["regression"]
    k_first, k_last = _count(100 * gen_n.iloc[0], n_rep_power), _count(100 * gen_n.iloc[-1], n_rep_power)
    c8 = _parts({
        "rises": vd.decide_above(_difference_interval(k_last, n_rep_power, k_first, n_rep_power, unit="replications"), 0.0,
                                 quantity=f"power at n = {power_ns[-1]} minus power at n = {power_ns[0]}"),
        "reaches 0.8": vd.decide_above(vd.binomial_interval(k_last, n_rep_power, unit="replications"), 0.8,
                                       quantity=f"power at n = {power_ns[-1]}"),
    }, "rises and reaches 0.8")
    claims.claim(
        "C8",
        "For a fixed non-invariant classifier, power rises with n (and with the strength of the effect).",
        paper="not reported (property a sound test must have)",
        ours=f"generator form {gen_n.iloc[0]:.2f} -> {gen_n.iloc[-1]:.2f}, regression form {reg_n.iloc[0]:.2f} -> {reg_n.iloc[-1]:.2f} for n {power_ns[0]} -> {power_ns[-1]}",
        decision=c8, quote="For a fixed non-invariant f (ECA < 1), the rejection rate → 1 as the test-set size N grows.",
        source="notes §5 item 8, not in the paper", kind=_OWN,
        change=_OWN_CHANGE.format(what="the paper reports no power curve; the power check is the notes' item 8"),
        evidence=f"{n_rep_power} replications per n at a_effect = {effect_for_n}; the generator form (Alg. 1) decides, the "
        "regression form is reported alongside.",
        note=_undecided_note(c8, 0.8, n_rep_power, "replications", "notebooks/params/full.yaml runs 200"),
    )
    return claims.rows(["C4a", "C4b", "C7", "C7-code", "C8"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C13 (the group is predictable, Table 6) and C14 (prevalence tests, Figs. 6-7) of notebook 04.

    Both hold by construction of the toy data (a visible group trace, group-dependent prevalence), so
    they are sanity checks of the substitute data.

    Parameters
    ----------
    results : mapping
        ``auc`` (:func:`one_vs_rest_auc`), ``prevalence`` (:func:`cflib.data.toy_cxr.prevalence_table`),
        ``n_test``.

    Returns
    -------
    pandas.DataFrame
    """
    auc, table, n_test = claims.require(results, ["auc", "prevalence", "n_test"])
    c13 = _parts({str(g): vd.decide_above(vd.normal_interval(float(r.AUC), float(r.sd), method=f"bootstrap standard error over {n_test} images"),
                                          0.94, inclusive=True, quantity=f"AUC of {g}")
                  for g, r in auc.iterrows()}, "every group")
    claims.claim(
        "C13",
        "The sensitive attribute is predictable from the image (race predictor ROC-AUC >= 0.94, Table 6).",
        paper="AUC 0.973-0.981 (known races)", ours=round(float(auc["AUC"].min()), 4), decision=c13, kind="sanity check",
        quote="Table 6: ROC AUC score of the protected attribute predictor.", source="App. I, Table 6",
        evidence=f"one-vs-rest AUC of a small CNN on {n_test} held-out toy images, each group with its bootstrap standard error. "
        "The toy group trace is visible by construction, so this checks the substitute data, not the paper.",
    )
    p_assoc = table.loc[["cardiomegaly", "effusion"], "p-value"]
    p_cons = float(table.loc["consolidation", "p-value"])
    c14 = _parts({d: vd.decide_below(vd.exact(float(p), method=f"chi-square p-value on {n_test} images"), 0.05, quantity=f"p of {d}")
                  for d, p in p_assoc.items()}, "the associated diseases")
    claims.claim(
        "C14",
        "Chi-square tests of group vs disease are significant for the associated diseases (Figs. 6-7).",
        paper="significant for all five diseases",
        ours={"cardiomegaly": float(p_assoc.iloc[0]), "effusion": float(p_assoc.iloc[1]), "consolidation": p_cons},
        decision=c14, kind="sanity check",
        quote="the racial attribute is significantly correlated with all the five inspected diseases", source="App. F.2, Fig. 6",
        evidence=f"chi-square test of independence on {n_test} held-out images. The toy prevalences differ by group by construction; "
        f"consolidation carries no association (p = {p_cons:.2g}), the toy counterpart of the paper's invariant column.",
    )
    return claims.rows(["C13", "C14"])


def _done1(check: pd.DataFrame, name: str) -> tuple[vd.Decision, dict, str, int]:
    """DONE-1's parts for one generator: effectiveness, disease status kept and the disease-region error, per target group."""
    sub = check.xs(name, level=0)
    parts = {}
    for g, r in sub.iterrows():
        n = int(r["images"])
        parts[f"{g} effectiveness"] = vd.decide_above(vd.binomial_interval(_count(r["effectiveness %"], n), n, unit="images"),
                                                      _EFFECTIVE, quantity="effectiveness")
        pairs = n * len(DISEASES)
        kept = _difference_interval(_count(r["disease kept %"], pairs), pairs, _count(r["disease kept %, true cf"], pairs), pairs,
                                    unit="image-disease pairs")
        parts[f"{g} disease kept"] = vd.decide_above(kept, -0.1, inclusive=True, quantity="disease kept, generated minus true cf")
        parts[f"{g} disease region"] = vd.decide_below(vd.normal_interval(r["L1 margin"], r["L1 margin se"], method=f"standard error over {n} images"),
                                                       0.0, quantity="L1 to truth minus the midpoint of floor and random patient")
    n_min = int(sub["images"].min())
    ours = {"min effectiveness %": round(float(sub["effectiveness %"].min()), 1), "min disease kept %": round(float(sub["disease kept %"].min()), 1),
            "max disease-region L1": round(float(sub["disease-region L1 to truth"].max()), 2),
            "min random-patient L1": round(float(sub["random patient"].min()), 2)}
    evidence = (f"{name}, per target group ({sub['images'].astype(int).tolist()} images): effectiveness above chance (1/3) by 20 "
                f"points; the disease predictors keep the patient's disease status at most 10 points below their rate on the true "
                f"counterfactual (generated: {sub['disease kept %'].round(1).tolist()}, truth: {sub['disease kept %, true cf'].round(1).tolist()}); "
                f"and the disease-region error to the truth is closer to the autoencoder floor ({float(sub['autoencoder floor'].iloc[0]):.2f}) "
                f"than to a random patient's (generated: {sub['disease-region L1 to truth'].round(2).tolist()}, random patient: "
                f"{sub['random patient'].round(2).tolist()}).")
    return _parts(parts, "every part for every target group"), ours, evidence, n_min


def claims_05(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims DONE-1 (CLDM+D and the paper's CLDM), DONE-1-present, C10, C11 and C12 of notebook 05.

    Also records the judges' accuracy, the counterfactual checks, the MI bounds, the generation
    quality table and the variance control.

    Parameters
    ----------
    results : mapping
        ``judge_accuracy`` (:func:`judge_accuracy`), ``check`` (:func:`check_counterfactuals`),
        ``mine`` (:func:`disentangler_study`), ``quality`` (:func:`quality_table`),
        ``variance`` (:func:`variance_control`), ``n_test``, ``n_variance``, ``t_star``, ``mine_lambda``
        and ``mi_steps``.

    Returns
    -------
    pandas.DataFrame
    """
    acc, check, mine, quality, variance, n_test, n_variance, t_star, mine_lambda, mi_steps = claims.require(
        results, ["judge_accuracy", "check", "mine", "quality", "variance", "n_test", "n_variance", "t_star",
                  "mine_lambda", "mi_steps"])
    mi_before, mi_after, shift = mine["mi_before"], mine["mi_after"], mine["shift"]
    claims.record("apred_test_accuracy", float(acc["group predictor"]))
    claims.record("cf_check", {f"{m}|{g}": row for (m, g), row in check.round(3).to_dict(orient="index").items()})
    claims.record("mi_before", mi_before.statistic)
    claims.record("mi_after", mi_after.statistic)
    claims.record("generation_quality", {f"{m}|{c[0]}|{c[1]}": float(v) for m, row in quality.iterrows() for c, v in row.items()})
    claims.record("variance_control", variance.round(4).to_dict())
    full = "notebooks/params/full.yaml runs 1500 test images"
    done1_source = "Sec. 1 (contributions); the bars (20 points above chance, 10 points of the true counterfactual's disease rate) are the book's DONE-1 bar, not the paper's"

    d, ours, evidence, n_min = _done1(check, "CLDM+D")
    claims.claim(
        "DONE-1",
        "Counterfactual images move the attribute predictor to the intended group well above chance while the disease "
        "region stays close to the true counterfactual.",
        paper="effectiveness 83-93% (Tables 8, 10); no ground truth", ours=ours, decision=d, quote=_PRESERVE, source=done1_source,
        evidence=evidence, note=_undecided_note(d, _EFFECTIVE, n_min, "images per target group", full),
    )
    sub = check.xs("CLDM+D", level=0)
    present = {f"{g}, {dis}": vd.decide_above(vd.binomial_interval(_count(r[f"present kept %, {dis}"], int(r[f"present n, {dis}"])),
                                                                   int(r[f"present n, {dis}"]), unit="patients with the disease"),
                                              0.9, inclusive=True, quantity="share of the disease still found")
               for g, r in sub.iterrows() for dis in DISEASES}
    d_present = _parts(present, "every target group and disease")
    n_present = int(sub[[f"present n, {dis}" for dis in DISEASES]].min().min())
    claims.claim(
        "DONE-1-present",
        "Every disease a patient has is still found in at least 90% of their counterfactuals, for every target group.",
        paper="not measured (no ground truth)",
        ours=sub[[f"present kept %, {dis}" for dis in DISEASES]].round(1).to_dict(orient="index"), decision=d_present,
        quote=_PRESERVE, source="Sec. 1 (contributions); the 90% bar is the book's, not the paper's",
        evidence="CLDM+D; share of patients with the disease whose counterfactual the disease predictor still calls positive, per "
        f"target group and disease, each with its Clopper-Pearson interval (the true counterfactuals: "
        f"{sub['disease kept %, true cf'].round(1).tolist()} overall).",
        note=_undecided_note(d_present, 0.9, n_present, "patients with the rarest disease per target group", full),
    )
    d, ours, evidence, n_min = _done1(check, "CLDM")
    claims.claim(
        "DONE-1-paper-CLDM",
        "The same bar for the paper's CLDM, conditioned on the group alone and trained on the observed data.",
        paper="effectiveness 83-93% (Tables 8, 10); disease preservation not measured", ours=ours, decision=d,
        quote=_PRESERVE, source=done1_source, evidence=evidence,
        note=_undecided_note(d, _EFFECTIVE, n_min, "images per target group",
                             "more test images do not fit the book's budget (all six generators of this notebook run on them); " + full),
    )

    groups = [c for c in quality["effectiveness %"].columns if c != "all"]
    vae_names = [m for m in quality.index if m.startswith("VAE")]
    images = check.xs("CLDM", level=0)["images"].astype(int)
    n_eff = int(images.sum())

    def eff_k(model):
        return sum(_count(quality.loc[model, ("effectiveness %", g)], int(n)) for g, n in zip(groups, images, strict=True))

    def eff_gt(a, b):
        return vd.decide_above(_difference_interval(eff_k(a), n_eff, eff_k(b), n_eff, unit="counterfactuals"), 0.0,
                               quantity=f"effectiveness {a} - {b}")

    def lower(metric, a, b):  # a's metric below b's, on a normal interval of the difference (independent errors: conservative)
        m, s = quality.loc[[a, b], (metric, "all")].to_numpy(float), quality.loc[[a, b], (f"{metric} se", "all")].to_numpy(float)
        return vd.decide_below(vd.normal_interval(m[0] - m[1], float(np.hypot(*s)), method="standard errors of the two models"),
                               0.0, quantity=f"{metric} {a} - {b}")

    parts = {"effectiveness DLDM > CLDM": eff_gt("DLDM", "CLDM"),
             **{f"effectiveness CLDM > {v}": eff_gt("CLDM", v) for v in vae_names},
             "FD DLDM < CLDM": lower("FD", "DLDM", "CLDM"),
             **{f"FD CLDM < {v}": lower("FD", "CLDM", v) for v in vae_names},
             **{f"composition {m} < CLDM": lower("composition L1", m, "CLDM") for m in [*vae_names, "DLDM"]}}
    eff_cols = quality["effectiveness %"][groups].mean(axis=1)
    c10 = _parts(parts, "every ordering of Tables 7-11")
    claims.claim(
        "C10",
        "Generation ordering: effectiveness DLDM > CLDM > beta-VAEs; FD DLDM < CLDM < beta-VAEs; composition worst for the CLDM, better for the DLDM.",
        paper="eff 88.7-93.3 > 83.5-89.1 > 76.8-87.4; FID 21.8 < 22.1 < 23.9-25.1; composition CLDM 790-816 vs 230-350",
        ours={"effectiveness": eff_cols.round(1).to_dict(), "FD": quality[("FD", "all")].round(3).to_dict(),
              "composition": quality[("composition L1", "all")].round(2).to_dict()},
        decision=c10, quote="Overall we see significant improvements in the counterfactual effectiveness and the FID scores for DLDM.",
        source="App. I, Tables 7-11",
        change="the old rule could only give 'not reproduced' or 'inconclusive' and left out the composition it reported; it is now "
        "every ordering the tables state (effectiveness, FD, and composition worst for the CLDM), each on an interval",
        evidence=f"toy scale, one seed; effectiveness pooled over target groups ({n_eff} counterfactuals per model), FD with a "
        "bootstrap standard error over images, composition with its standard error over images. With lambda = 1e-3 phi moves "
        "each latent by 1e-3 (C12), so DLDM and CLDM cannot differ: those parts stay undecided at any size.",
    )
    v = variance
    lo_t, hi_t = v.index[1], v.index[0]
    conservative = f"standard errors over {n_variance} images (independent errors: conservative)"
    diff = {m: vd.normal_interval(float(v[m].iloc[1] - v[m].iloc[0]), float(np.hypot(v[f"{m}, se"].iloc[0], v[f"{m}, se"].iloc[1])),
                                  method=conservative)
            for m in ("pixel sd across draws (0-255)", "L1 to truth (0-255)", "effectiveness %")}
    eff_lo = vd.normal_interval(float(v["effectiveness %"].iloc[1]), float(v["effectiveness %, se"].iloc[1]),
                                method=f"standard error over {n_variance} images")
    # part -> (decision, boundary): the boundary gives the deciding size of an undecided part
    parts11 = {
        "less variance": (vd.decide_below(diff["pixel sd across draws (0-255)"], 0.0, quantity=f"pixel sd at {lo_t} minus at {hi_t}"), 0.0),
        "quality not worse": (vd.decide_below(diff["L1 to truth (0-255)"], 0.0, inclusive=True,
                                              quantity=f"L1 to the true counterfactual at {lo_t} minus at {hi_t}"), 0.0),
        "still effective": (vd.decide_above(diff["effectiveness %"], -_EFFECTIVE_DROP, inclusive=True,
                                            quantity=f"effectiveness (points) at {lo_t} minus at {hi_t}"), -_EFFECTIVE_DROP),
        "changes the group": (vd.decide_above(eff_lo, 100 * _EFFECTIVE, quantity=f"effectiveness (%) at {lo_t}"), 100 * _EFFECTIVE),
    }
    c11 = _parts({k: d for k, (d, _) in parts11.items()}, "lower variance without a loss of quality, the counterfactuals still effective")
    open11 = next((k for k, (d, _) in parts11.items() if d.verdict == vd.UNDECIDED), None)
    claims.claim(
        "C11",
        "Less forward noise gives less variable counterfactuals without a significant loss of quality, and they still change the group.",
        paper="qualitative (App. H.1)", ours=v.drop(columns=[c for c in v.columns if c.endswith(", se")]).round(2).to_dict(orient="index"),
        decision=c11, quote="Experiments show that diffusion models achieves lower sample variance without significantly compromising "
        "the quality of the generated images.", source="App. H.1",
        change="issue 27 restored the effectiveness condition that issue 20 dropped ('the effectiveness must stay within "
        f"{_EFFECTIVE_DROP:g} points'), now on an interval, and added the chapter's DONE-1 bar for an effective counterfactual "
        f"({100 * _EFFECTIVE:.1f}%): the quality of a counterfactual image (App. H.1: the reduced noise must 'fit our counterfactual "
        "demand') includes carrying the new group, and the distance to the true counterfactual alone rewards an image that changes "
        "nothing, since the truth differs from the input only in the group's trace. Issue 20 had kept only the sample variance and "
        "the distance to the true counterfactual",
        evidence=f"3 stochastic abductions of {n_variance} images at t* = {t_star} and {max(1, t_star // 4)}; each quantity per image "
        f"(pixel sd across the draws, L1 to the true counterfactual, share of the draws in the target group), its standard error over "
        f"images. Effectiveness {v['effectiveness %'].iloc[0]:.0f}% -> {v['effectiveness %'].iloc[1]:.0f}%: it may fall by at most "
        f"{_EFFECTIVE_DROP:g} points and must stay above chance (1/{len(GROUPS)}) by 20 points.",
        note=_undecided_note(c11, parts11[open11][1] if open11 else 0.0, n_variance, "images", "notebooks/params/full.yaml runs 200"),
    )
    null_sd = [float(np.std(m.null, ddof=1)) if len(getattr(m, "null", ())) > 1 else np.nan for m in (mi_before, mi_after)]
    iv12 = (vd.normal_interval(mi_before.statistic - mi_after.statistic, float(np.hypot(*null_sd)),
                               method="held-out evaluation noise: sd of each bound's permutation null (critic training noise not included)")
            if np.all(np.isfinite(null_sd)) else vd.Interval(mi_before.statistic - mi_after.statistic, np.nan, np.nan, "no permutation null"))
    c12 = vd.decide_above(iv12, 0.0, quantity="MI bound of z0 minus MI bound of phi(z0)")
    shown12 = f"{iv12.estimate:.4f} [{iv12.low:.4f}, {iv12.high:.4f}]" if iv12.defined else f"{iv12.estimate:.4f} (undefined: {iv12.method})"
    if mine_lambda <= PAPER_MINE_LAMBDA:  # the authors' lambda: phi is the identity up to a shift of norm lambda
        decided12: dict[str, Any] = {
            "verdict": vd.NOT_CHECKABLE,
            "rule": f"given by hand: at the authors' lambda ({PAPER_MINE_LAMBDA:g}) or below, the two bounds estimate the same "
                    f"information, so no size decides it (with a larger lambda: {c12.rule})",
            "note": f"Not checkable at any size: with lambda = {mine_lambda:g} (the authors' value is {PAPER_MINE_LAMBDA:g}) phi moves "
                    f"every latent by exactly lambda (mean ||phi(z) - z|| = {float(shift.mean()):.2g}), so the information about the group "
                    "in phi(z0) is that in z0: the two bounds estimate the same quantity and any difference between them is the "
                    "critics' noise, which the interval leaves out. C10's DLDM-against-CLDM parts stay undecided for the same reason."}
    else:
        decided12 = {"decision": c12, "note": "Undecided: the drop's interval straddles 0; it narrows with more training latents "
                     "(notebooks/params/full.yaml trains on 20000 images)." if c12.verdict == vd.UNDECIDED else ""}
    claims.claim(
        "C12",
        "The disentangler lowers the MINE bound on I(phi(z0); A) below I(z0; A).",
        paper="implied by Sec. 3.3 (no number)",
        ours={"MI z0": round(mi_before.statistic, 4), "MI phi(z0)": round(mi_after.statistic, 4), "||phi(z)-z||": float(shift.mean())},
        quote="to disentangle the CLDM representation vector from the chosen conditioning attribute", source="Sec. 3.3",
        change=f"issue 27: not checkable here at the authors' lambda ({PAPER_MINE_LAMBDA:g}) or below, where phi moves every latent by "
        "exactly lambda and no size decides the claim (its own note said so while the verdict read 'undecided at this scale'); a "
        "larger lambda is still decided on the drop's interval above 0, which replaced (issue 20) a hand-set drop of 0.05 nats",
        evidence=f"held-out DV bounds with fresh critics ({mi_steps} steps; permutation p {mi_before.pvalue:.2g} and {mi_after.pvalue:.2g}); "
        f"drop of the bound {shown12} ({iv12.method}).",
        **decided12,
    )
    return claims.rows(["DONE-1", "DONE-1-present", "DONE-1-paper-CLDM", "C10", "C11", "C12"])


def _group_rate(audit: pd.DataFrame, mask: pd.Series, test: str, alpha: float, unit: str) -> vd.Interval:
    return vd.binomial_interval(int((audit.loc[mask, f"p {test}"] < alpha).sum()), int(mask.sum()), unit=unit)


def claims_06(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims DONE-2 (CLDM+D, the paper's CLDM, the true counterfactuals), C6, C5, C9, C15 and C15-universal of notebook 06.

    Also records the rejection rates.

    Parameters
    ----------
    results : mapping
        ``audit`` (:func:`audit_cnn_zoo`), ``rates`` (:func:`rejection_rates`), ``alpha``, ``n_test``,
        ``rhos``, ``n_zoo`` (number of classifiers) and ``seed``.

    Returns
    -------
    pandas.DataFrame
    """
    audit, rates, alpha, n_test, rhos, n_zoo, seed = claims.require(results, ["audit", "rates", "alpha", "n_test", "rhos", "n_zoo", "seed"])
    claims.record("rejection_rates", {f"{a}|{b}": r["rate"] for (a, b), r in rates.iterrows()})
    cit = "CIT-LR[CLDM+D]"
    full = "notebooks/params/full.yaml trains 720 classifiers"
    inv_mask, use_mask = audit["ECA"] >= 0.99, audit["ECA"] < 0.9
    variants = {
        "DONE-2": ("CIT-LR[CLDM+D]", "CIT-LR does not reject classifiers that ignore the trace above alpha and rejects those that use it.",
                   f"CIT-LR with CLDM+D counterfactuals, alpha = {alpha}, {n_test} test images per test."),
        "DONE-2-paper-CLDM": ("CIT-LR[CLDM]", "The same bar with the paper's CLDM (conditioned on the group alone) as the generator.",
                              "as DONE-2 with the paper's CLDM: a failure means the generator, not the test, is wrong (it changes the "
                              "diseases along with the group, previous notebook)."),
        "DONE-2-oracle": ("CIT-LR[true]", "The same bar with a perfect generator: CIT-LR fed the true counterfactuals does not reject "
                          "classifiers that ignore the trace above alpha and rejects those that use it.",
                          "as DONE-2 with g and h from the renderer's true counterfactuals: separates the test from the generator."),
    }
    for key, (test, statement, evidence) in variants.items():
        iv_inv = _group_rate(audit, inv_mask, test, alpha, "classifiers with ECA >= 0.99")
        iv_use = _group_rate(audit, use_mask, test, alpha, "classifiers with ECA < 0.9")
        d_inv = vd.decide_below(iv_inv, alpha, inclusive=True, quantity="rejection rate of classifiers that ignore the trace")
        d_use = vd.decide_above(iv_use, 0.8, inclusive=True, quantity="rejection rate of trace users")
        d = _parts({"ignores trace: not above alpha": d_inv, "uses trace: rejected": d_use}, "both groups")
        claims.claim(
            key, statement, paper="CIT-LR rejects when ECA is low and not when ECA is high (Sec. 6.3)",
            ours={"rejection rate, ignores trace": iv_inv.estimate if iv_inv.defined else None,
                  "rejection rate, uses trace": iv_use.estimate if iv_use.defined else None, "n": [int(inv_mask.sum()), int(use_mask.sum())]},
            decision=d, quote=_IN_SUM,
            source="Sec. 6.3; the groups (ECA >= 0.99 ignores the trace, < 0.9 uses it) and the 80% bar are the book's DONE-2 bar, not the paper's",
            change="the old rule passed the invariant group when a one-sided binomial test did not reject alpha, which 8 classifiers "
            "can never do; the rate's Clopper-Pearson interval must now lie at or below alpha",
            evidence=evidence,
            note=" ".join(filter(None, (_undecided_note(d_inv, alpha, int(inv_mask.sum()), "classifiers that ignore the trace", full),
                                        _undecided_note(d_use, 0.8, int(use_mask.sum()), "trace users", full)))),
        )
    high = audit["ECA"] >= _HIGH
    iv_cit_hi = _group_rate(audit, high, cit, alpha, f"classifiers with ECA >= {_HIGH}")
    iv_cit_lo = _group_rate(audit, ~high, cit, alpha, f"classifiers with ECA < {_HIGH}")
    iv_dp, iv_eo = (_group_rate(audit, high, t, alpha, f"classifiers with ECA >= {_HIGH}") for t in ("DP", "EO"))
    c6 = _parts({
        "CIT-LR: high ECA mostly not rejected": vd.decide_below(iv_cit_hi, _MOST, quantity=f"CIT-LR rejection rate at ECA >= {_HIGH}"),
        "CIT-LR: low ECA mostly rejected": vd.decide_above(iv_cit_lo, _MOST, quantity=f"CIT-LR rejection rate at ECA < {_HIGH}"),
        "DP rejects almost all high ECA": vd.decide_above(iv_dp, _ALMOST_ALL, quantity=f"DP rejection rate at ECA >= {_HIGH}"),
        "EO rejects almost all high ECA": vd.decide_above(iv_eo, _ALMOST_ALL, quantity=f"EO rejection rate at ECA >= {_HIGH}"),
    }, "all four")
    claims.claim(
        "C6",
        f"Real-data pattern: CIT-LR is not significant for most classifiers with ECA >= {_HIGH} and significant for most below; "
        f"DP and EO reject almost all (> {_ALMOST_ALL:.0%}) of those with ECA >= {_HIGH}.",
        paper="qualitative (Figs. 3-4)",
        ours={f"CIT-LR reject | ECA>={_HIGH}": iv_cit_hi.estimate if iv_cit_hi.defined else None,
              f"CIT-LR reject | ECA<{_HIGH}": iv_cit_lo.estimate if iv_cit_lo.defined else None,
              f"DP reject | ECA>={_HIGH}": iv_dp.estimate if iv_dp.defined else None, f"EO reject | ECA>={_HIGH}": iv_eo.estimate if iv_eo.defined else None},
        decision=c6, quote=_HIGH_ECA + " ... " + _IN_SUM, source="Sec. 6.3, Figs. 3-4",
        change=f"the paper's words set the high-ECA range at ECA >= {_HIGH} and say DP and EO reject 'almost all' of it; the old rule "
        "used ECA >= 0.99 and < 0.9 and only asked DP to reject more often than CIT-LR",
        evidence=f"rejection rates at alpha = {alpha} over the zoo ({len(audit)} classifiers), each with its Clopper-Pearson interval.",
        note=_undecided_note(c6, _MOST, len(audit), "classifiers", full),
    )
    spread = audit.groupby("disease")["ECA"].agg(np.ptp)
    informative = [d for d in DISEASES if spread.get(d, 0.0) >= 0.05]
    panels = {d: audit[audit["disease"] == d] for d in informative}
    iv = _alignment_parts(panels, "ECA", f"log10p {cit}", ["log10p DP", "log10p EO"], seed=seed)
    c5 = _parts({"r > 0": vd.decide_above(iv["r"], 0.0, quantity="mean r(ECA, log10 p) of CIT-LR"),
                 "higher correlation": vd.decide_above(iv["r gap"], 0.0, quantity="mean of r_CIT - max(r_DP, r_EO)"),
                 "lower variance": vd.decide_below(iv["spread gap"], 0.0, quantity="mean of sqrt(1-r_CIT^2) - min(sqrt(1-r_DP^2), sqrt(1-r_EO^2))")},
                "correlation and spread")
    per = n_zoo // len(DISEASES)
    claims.claim(
        "C5",
        "log p of CIT-LR rises with ECA with a higher correlation and a smaller standardised residual spread than DP and EO.",
        paper="qualitative (Figs. 3-4)",
        ours={"mean r": round(iv["r"].estimate, 3), "mean r gap": round(iv["r gap"].estimate, 3), "mean spread gap": round(iv["spread gap"].estimate, 3)},
        decision=c5, quote=_FIG3_WORDS, source="Sec. 6.3, Figs. 3-4",
        change="the raw residual sd of log10 p is on each test's own scale and cannot be compared across tests; the spread is now "
        "sqrt(1 - r^2), the residual sd in units of the test's own sd, and every part is bootstrapped over classifiers",
        evidence=f"Pearson r between ECA and log10 p per disease ({per} classifiers each) on the diseases whose classifiers spread "
        f"over ECA by at least 0.05 ({informative}), mean over those diseases. sqrt(1 - r^2) is a function of |r|, so the spread "
        "part is the correlation part read without its sign.",
        note=_undecided_note(c5, 0.0, per, "classifiers per disease", full),
    )
    neg = audit[f"mean d {cit}"] < 0
    sig_neg = int((neg & (audit[f"p {cit}"] < alpha)).sum())
    iv9 = vd.binomial_interval(sig_neg, len(audit), unit="tests")
    c9 = vd.decide_below(iv9, alpha / 2, inclusive=True, quantity="share of significantly negative mean differences")
    claims.claim(
        "C9",
        "The paired mean of y(g - h) is >= 0 up to noise (the functional is E[(g-h)^2]); the paper's tables show mixed signs.",
        paper="mixed signs in Tables 12-13", ours={"negative means": int(neg.sum()), "significant negative": sig_neg, "tests": len(audit)},
        decision=c9, quote=_NOTES_SIGN, source="notes §5 item 9, not in the paper", kind=_OWN,
        change=_OWN_CHANGE.format(what="the sign check is the notes'; the paper's Tables 12-13 show mixed signs") + "; before, the "
        "old rule allowed max(1, 5%) significant negatives; a two-sided test at alpha finds a negative mean significant "
        f"at most alpha/2 = {alpha / 2:g} of the time when the functional is >= 0, and the share is now decided on its interval",
        evidence="sign of the CIT-LR mean difference over the zoo. With h the A-marginal of g, a significant negative mean can only "
        "come from the generator: y is predicted on real images but g and h on generated ones.",
        note=_undecided_note(c9, alpha / 2, len(audit), "tests", full),
    )
    sig = audit.assign(sig=audit[f"p {cit}"] < alpha)
    by = {d: vd.binomial_interval(int(sig.loc[sig["disease"] == d, "sig"].sum()), int((sig["disease"] == d).sum()), unit="classifiers")
          for d in DISEASES}
    c15 = _parts({"consolidation: most not significant": vd.decide_below(by["consolidation"], _MOST, quantity="share significant, consolidation"),
                  **{f"{d}: most significant": vd.decide_above(by[d], _MOST, quantity=f"share significant, {d}") for d in ("cardiomegaly", "effusion")}},
                 "the three diseases")
    claims.claim(
        "C15",
        "Per-model tables: most models are non-significant for the disease unaffected by A (consolidation) and significant "
        "for diseases where models pick up A-shortcuts.",
        paper="consolidation 1/10 (CheXpert), 2/10 (MIMIC) significant; others 5-10/10",
        ours={d: round(iv.estimate, 3) if iv.defined else None for d, iv in by.items()}, decision=c15,
        quote="For cardiomegaly, edema and pleural effusion, most models show significant ... Whereas for consolidation, most "
        "models, such as Densenet 121 or VGG13+BN shows non-significant results", source="App. I.1, Tables 12-13",
        change="'most' is read as more than half on both sides; the old rule asked for at most 20% significant on consolidation "
        "(the paper's counts, not its words) and moved 'no model is invariant for all diseases' to C15-universal",
        evidence=f"share of zoo members with CIT-LR p < {alpha} per disease; shortcut strengths {rhos} for the associated diseases.",
        note=_undecided_note(c15, _MOST, per, "classifiers per disease", full),
    )
    models = sig.groupby(["arch", "rho", "seed"])["sig"].any()
    # The verdict is given by hand (the substitute zoo changes the answer); the estimate is still recorded with its interval.
    universal = vd.Decision(vd.SUBSTITUTE, vd.binomial_interval(int((~models).sum()), len(models), unit="models"),
                            "share of models non-significant for every disease = 0 (the paper's 'no model'); verdict given by hand "
                            "because the toy zoo holds models that are invariant by design")
    claims.claim(
        "C15-universal",
        "No model of the pool is invariant (non-significant) for every disease.",
        paper="no model universally invariant", ours={"models significant for no disease": int((~models).sum()), "models": len(models)},
        decision=universal, quote="However no model our tested pool is universally invariant across all the diseases",
        source="App. I.1, Tables 12-13",
        evidence="models are (architecture, shortcut strength, seed) triples trained once per disease.",
        note="the toy zoo trains some classifiers without a shortcut (rho = 0) on data whose trace does not predict the label, so it "
        "holds models invariant by design; the paper's pool was trained on the observed data only, where every disease's label "
        "is associated with the group.",
    )
    return claims.rows(["DONE-2", "DONE-2-paper-CLDM", "DONE-2-oracle", "C6", "C5", "C9", "C15", "C15-universal"])


def claims_07(study: pd.DataFrame, *, alpha: float = 0.05, power_target: float = 0.9) -> pd.DataFrame:
    """Claims D1-D4 of notebook 07 (CIT-LR when Z depends on A).

    Parameters
    ----------
    study : pandas.DataFrame
        Output of :func:`cflib.experiments.calibration.cit_lr_dependence_study` with the default and the paper's forms.
    alpha : float
        Level of the tests.
    power_target : float
        Power the default form must reach against the largest effect at the largest dependence.

    Returns
    -------
    pandas.DataFrame
    """
    if not isinstance(study, pd.DataFrame):
        raise TypeError(f"study must be the DataFrame of cit_lr_dependence_study, got {type(study).__name__}")
    default, paper = "debiased, joint g (default)", "marginalize, separate g (paper)"
    null = study[study["a_effect"] == 0]
    eff, s_max, s_min = float(study["a_effect"].max()), float(study["dependence"].max()), float(null["dependence"].min())
    full = "notebooks/params/full.yaml runs 1000 replications"

    def row(form, dep, a_eff):
        return study[(study["form"] == form) & (study["dependence"] == dep) & (study["a_effect"] == a_eff)].iloc[0]

    def rate(r):
        return vd.binomial_interval(int(r.rejections), int(r.n_rep), unit="replications")

    def show(r):
        return f"{r.rejections}/{r.n_rep}"

    adjustment = "is assumed to form a valid adjustment set."
    d_null = null[null["form"] == default]
    claims.record("level_default", {f"{s:g}": float(v) for s, v in zip(d_null["dependence"], d_null["rate"], strict=True)})
    level_change = (f"the old rule asked every 99% interval to contain alpha and every rate to be at most {2 * alpha:g}; holding the "
                    f"level is now a rate whose interval lies at or below {2 * alpha:g}")
    d1 = _parts({f"s={r.dependence:g}": vd.decide_below(rate(r), 2 * alpha, inclusive=True, quantity="rejection rate of an invariant classifier")
                 for r in d_null.itertuples()}, "every dependence")
    n_rep = int(study["n_rep"].iloc[0])
    claims.claim(
        "D1", "The default CIT-LR holds its level (rejection rate at most 2 alpha) for every strength of the Z-A dependence (Z a valid adjustment set)",
        paper="Theorem 4.2 needs a valid adjustment set; Alg. 1 assumes Z independent of A",
        ours="; ".join(f"s={r.dependence:g}: {show(r)}" for r in d_null.itertuples()), decision=d1,
        quote=adjustment, source="Sec. 4.2, after Theorem 4.2 (the dependence study is the book's, not the paper's)", kind=_OWN,
        change=_OWN_CHANGE.format(what="the paper assumes a valid adjustment set and never varies the dependence; the default "
                                  "form is cflib's") + "; before, " + level_change,
        evidence=f"rejections of an invariant classifier at alpha = {alpha}.",
        note=_undecided_note(d1, 2 * alpha, n_rep, "replications per dependence", full),
    )
    r = row(default, s_max, eff)
    claims.record("power_default", float(r.rate))
    d2 = vd.decide_above(rate(r), power_target, inclusive=True, quantity="power of the default form")
    claims.claim(
        "D2", f"The default CIT-LR keeps power >= {power_target} against a classifier that uses A when Z depends on A",
        paper="not studied", ours=f"effect {eff:g}, s={s_max:g}: {show(r)}", decision=d2,
        quote="For a fixed non-invariant f (ECA < 1), the rejection rate → 1 as the test-set size N grows.",
        source="notes §5 item 8, not in the paper", evidence="rate over replications.", kind=_OWN,
        change=_OWN_CHANGE.format(what="the paper does not study a Z that depends on A; the default form is cflib's"),
        note=_undecided_note(d2, power_target, n_rep, "replications", full),
    )
    p0, p1 = row(paper, s_min, 0.0), row(paper, s_max, 0.0)
    claims.record("level_paper_form", {"independent": float(p0.rate), "dependent": float(p1.rate)})
    marginal = "Equivalent and cheaper, because Z ⊥ A: ĥ(z) = Σ_a P(a) ĝ(a,z)."
    d3 = vd.decide_below(rate(p0), 2 * alpha, inclusive=True, quantity="rejection rate of an invariant classifier")
    claims.claim(
        "D3", "With Z independent of A (the paper's setting), the A-marginal h of Alg. 1 holds its level (rate at most 2 alpha)",
        paper="assumed (Lemma D.3)", ours=show(p0), decision=d3, quote=marginal, source="notes §7.1 item 4, after Lemma D.3",
        kind=_OWN, change=_OWN_CHANGE.format(what="the paper assumes the marginal h; its level is the notes' check") + "; before, " + level_change, evidence=f"rejections of an invariant classifier at alpha = {alpha}, s = {s_min:g}.",
        note=_undecided_note(d3, 2 * alpha, n_rep, "replications", full),
    )
    d4 = vd.decide_above(rate(p1), alpha, quantity="rejection rate of an invariant classifier")
    claims.claim(
        "D4", "Once Z depends on A the A-marginal h rejects an invariant classifier above alpha (why the default changed)",
        paper="not stated (the paper assumes Z independent of A)", ours=f"s={s_max:g}: {show(p1)}", decision=d4,
        quote=marginal, source="notes §7.1 item 4: the marginal h needs Z independent of A", kind=_OWN,
        change=_OWN_CHANGE.format(what="the paper assumes Z independent of A; the failure under dependence is the notes' and the book's"),
        evidence=f"rejections of an invariant classifier at alpha = {alpha}, s = {s_max:g}.",
        note=_undecided_note(d4, alpha, n_rep, "replications", full),
    )
    return claims.rows(["D1", "D2", "D3", "D4"])
