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
* ``claims_01`` ... ``claims_06``: each notebook's claim verdicts from a dict of its results.

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
    "claims_01", "claims_02", "claims_03", "claims_04", "claims_05", "claims_06",
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
        One row per (dataset, classifier): ``ECA``, ``Delta_hat``, ``E[(g-h)^2]``, ``p(1-p)(1-ECA)`` and the
        z-score of the difference in Monte-Carlo standard errors.
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
            res = cit_lr_generative(m.predict(d.x[te]), d.a[te], cf, p_a=[1 - p, p])
            target = p * (1 - p) * (1 - eca)
            se = res.sd_diff / np.sqrt(res.n)  # 0 for a classifier that no intervention moves: then Delta_hat = target = 0
            z = (res.mean_diff - target) / se if se > 0 else (0.0 if np.isclose(res.mean_diff, target) else np.inf)
            rows.append({"dataset": kind, "model": m.kind, "ECA": eca, "Delta_hat": res.mean_diff, "E[(g-h)^2]": res.effect,
                         "p(1-p)(1-ECA)": target, "z": z})
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
            reg = region[other]
            check[(name, GROUPS[a])] = {
                "effectiveness %": 100 * float((apred.predict(x_cf) == a).mean()),
                "disease kept %": kept(x_cf, other),
                **{f"present kept %, {d}": present_kept(x_cf, other, d) for d in DISEASES},
                "disease kept %, true cf": kept(x_true, other),
                "disease kept %, AE reconstruction": kept(recon[other], other),
                "disease-region L1 to truth": 255 * float(np.abs(x_cf - x_true)[reg].mean()),
                "autoencoder floor": float(floor),
                "random patient": 255 * float(np.abs(x_cf - test.render(A=a, idx=perm[other]))[reg].mean()),
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

    Returns
    -------
    pandas.DataFrame
        One row per model; columns ``(metric, group)``.
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
        row[("FD", "all")] = frechet_distance(real_feat, attribute_predictor.embed(np.concatenate(cfs)))
        rows[name] = row
    df = pd.DataFrame(rows).T
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["metric", "do(A)"])
    return df


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
        One row per noise level.
    """
    idx = np.arange(min(n_images, test.n))
    target = (test.A[idx] + 1) % 3
    truth = test.render(A=target, idx=idx)
    rows = {}
    for ts in (t_star, max(1, t_star // 4)):
        draws = np.stack([ldm.counterfactual(test.images[idx], test.A[idx], target, aux=test.D[idx], t_star=ts, steps=steps,
                                             guidance=guidance, aux_guidance=aux_guidance, abduction="forward", seed=s)
                          for s in range(3)])
        rows[f"t* = {ts}"] = {"pixel sd across draws (0-255)": 255 * float(draws.std(axis=0).mean()),
                              "L1 to truth (0-255)": 255 * float(np.abs(draws - truth).mean()),
                              "effectiveness %": 100 * float(np.mean([(apred.predict(d) == target).mean() for d in draws]))}
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
    max_abs_z = claims.record("identity_max_abs_z", float(identity["z"].abs().max()))
    max_abs_err = claims.record("identity_max_abs_err", float((identity["Delta_hat"] - identity["p(1-p)(1-ECA)"]).abs().max()))
    min_delta = claims.record("identity_min_delta", float(identity["Delta_hat"].min()))
    claims.claim(
        "C1",
        "Theorem 4.2: E[Yhat g(A,Z)] - E[Yhat h(Z)] = E[(g - h)^2] >= 0, zero iff g = h.",
        paper="identity (proof in App. D)",
        ours=thm_gap,
        holds=bool(thm_gap < 1e-12 and exact["E[(g - h)^2]"] > 0),
        evidence=f"exact enumeration on a 2 x {n_z} discrete law: |Delta - E[(g-h)^2]| = {thm_gap:.1e} (< 1e-12).",
    )
    claims.claim(
        "C2",
        "For binary A independent of Z and hard labels, Delta = p(1-p)(1-ECA) (derived in the notes).",
        paper="derivation (notes 2.3); notes' check: 0.0717 vs 0.0719",
        ours=f"max |Delta_hat - p(1-p)(1-ECA)| = {max_abs_err:.2g}, max |z| = {max_abs_z:.2f}",
        holds=bool(max_abs_z <= 4),
        evidence=f"{len(identity)} classifiers x datasets, {n_identity // 2} test units each; |z| <= 4 Monte-Carlo standard errors.",
    )
    claims.claim(
        "C9",
        "The paired mean difference of yhat*g - yhat*h is non-negative up to noise.",
        paper=">= 0 (Delta = E[(g-h)^2])",
        ours=min_delta,
        holds=bool(min_delta >= 0),
        evidence="smallest Delta_hat over all classifiers and datasets with the oracle generator; no value is negative.",
    )
    return claims.rows(["C1", "C2", "C9"])


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C3, C3-regression, C5 and C3b of notebook 02 (Figure 2).

    Verdicts are only given with all six datasets (``None`` otherwise).

    Parameters
    ----------
    results : mapping
        ``align`` (:func:`figure2_alignment`), ``kinds``, ``n_audited`` (rows of the audit),
        ``a_effect`` and ``z_layer``.

    Returns
    -------
    pandas.DataFrame
    """
    align, kinds, n_audited, a_effect, z_layer = claims.require(results, ["align", "kinds", "n_audited", "a_effect", "z_layer"])
    align_r, align_sd = alignment_pivot(align, "r", kinds), alignment_pivot(align, "resid_sd", kinds)

    def alignment_verdict(col):
        r_cit, r_base = align_r[col], align_r[["DP", "EO"]].max(axis=1)
        pos, beats = int((r_cit > 0).sum()), int((r_cit > r_base).sum())
        return pos, beats, pos >= 5 and beats >= 4

    nk = len(kinds)
    pos_g, beat_g, ok_g = alignment_verdict("CIT-LR (generator)")
    pos_r, beat_r, ok_r = alignment_verdict("CIT-LR (regression)")
    claims.record("r_cit_generator", align_r["CIT-LR (generator)"].round(3).to_dict())
    claims.record("r_cit_regression", align_r["CIT-LR (regression)"].round(3).to_dict())
    claims.record("r_dp", align_r["DP"].round(3).to_dict())
    claims.record("r_eo", align_r["EO"].round(3).to_dict())
    claims.record("median_r_cit_generator", float(align_r["CIT-LR (generator)"].median()))
    claims.record("median_r_cit_regression", float(align_r["CIT-LR (regression)"].median()))
    full_scale = nk == 6
    claims.claim(
        "C3",
        "Fig. 2: CIT-LR log p rises with ECA on every dataset, more than for DP and EO (generator form of Alg. 1).",
        paper="qualitative: CIT-LR aligns with ECA, DP/EO do not",
        ours=f"r > 0 in {pos_g}/{nk}; r > max(r_DP, r_EO) in {beat_g}/{nk}; median r = {align_r['CIT-LR (generator)'].median():.2f}",
        holds=bool(ok_g) if full_scale else None,
        evidence=f"Pearson r of ECA vs log10 p over {n_audited // nk} classifiers per dataset, a_effect = {a_effect}; pass: r > 0 in >= 5/6 and r > max(DP, EO) in >= 4/6.",
    )
    claims.claim(
        "C3-regression",
        "The same alignment with the regression form of the authors' synthetic code (g, h fitted to yhat on the known Z).",
        paper="qualitative: CIT-LR aligns with ECA",
        ours=f"r > 0 in {pos_r}/{nk}; r > max(r_DP, r_EO) in {beat_r}/{nk}; median r = {align_r['CIT-LR (regression)'].median():.2f}",
        holds=bool(ok_r) if full_scale else None,
        evidence=f"as C3, with logistic-regression g (one per group) and h = A-marginal of g on Z = {z_layer}.",
    )
    sd_cit, sd_dp, sd_eo = (float(align_sd[c].median()) for c in ("CIT-LR (generator)", "DP", "EO"))
    claims.claim(
        "C5",
        "The residual spread of log p around the fitted line is smaller for CIT-LR than for DP and EO.",
        paper="qualitative (Figs. 2-3)",
        ours=f"median residual sd: CIT-LR {sd_cit:.2f}, DP {sd_dp:.2f}, EO {sd_eo:.2f}",
        holds=bool(sd_cit < min(sd_dp, sd_eo)) if full_scale else None,
        evidence="median over datasets of the residual standard deviation of log10 p around the least-squares line (generator form).",
    )
    g_one, g_hi, g_lo = rejection_by_eca(align).loc["CIT-LR (generator)"]
    claims.claim(
        "C3b",
        "Models with ECA near 1 are not rejected at 0.05; models with low ECA are rejected.",
        paper="qualitative",
        ours=f"CIT-LR (generator) rejects {g_one:.0%} with ECA = 1, {g_hi:.0%} with ECA >= 0.95, {g_lo:.0%} with ECA < 0.85",
        holds=(bool(g_hi <= 0.25 and g_lo >= 0.75) if full_scale else None) if np.isfinite(g_hi) and np.isfinite(g_lo) else None,
        evidence="share of p < 0.05 among classifiers in each ECA range, averaged over datasets; pass: <= 25% for ECA >= 0.95 and >= 75% for ECA < 0.85. A consistent test detects a few % of flipped predictions at n = 200, so rejecting ECA = 0.96 is correct behaviour; the paper's literal pattern needs a less powerful test.",
    )
    return claims.rows(["C3", "C3-regression", "C5", "C3b"])


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
    claims.claim(
        "C4a",
        "An invariant classifier (ECA = 1) is rejected by DP and EO when P(Y | A) differs across groups.",
        paper="qualitative (Sec. 6.3: DP and EO reject almost all high-ECA models)",
        ours=f"ECA = {inv['ECA']:.2f}; DP p = {inv['DP p']:.1e}, EO p = {inv['EO p']:.1e}, CIT-LR p = {inv['CIT-LR p']:.2g}",
        holds=bool(inv["ECA"] == 1 and inv["DP p"] < alpha and inv["EO p"] < alpha and inv["CIT-LR p"] >= alpha),
        evidence=f"parity_world with prevalence (0.2, 0.45) and group-1 false positives 0.25, n = {n_world}; Welch tests at 0.05.",
    )
    claims.claim(
        "C4b",
        "A clearly non-invariant classifier (ECA << 1) can pass DP and EO.",
        paper="qualitative (Sec. 6.3)",
        ours="; ".join(f"{r.world.split(' (')[0]}: ECA = {r.ECA:.2f}, DP p = {r._5:.2g}, EO p = {r._6:.2g}, CIT-LR p = {r._4:.1e}" for r in sc.itertuples()),
        holds=bool(((sc["ECA"] < 0.8) & (sc["DP p"] >= alpha) & (sc["EO p"] >= alpha) & (sc["CIT-LR p"] < alpha)).any()),
        evidence="the shortcut classifier 1[c1 + 1.5 sign(t) c2 > 0]: group rates equal by symmetry of c2; holds if in some world DP and EO accept while CIT-LR rejects.",
    )
    if results.get("calib") is None:  # the sweep runs without the curves
        return claims.rows(["C4a", "C4b"])
    calib, power_n, n_rep, n, n_rep_code, power_ns, effect_for_n, n_rep_power = claims.require(
        results, ["calib", "power_n", "n_rep", "n", "n_rep_code", "power_ns", "effect_for_n", "n_rep_power"])
    marg, code = calib.loc[_NULL_FORMS[0]], calib.loc[_NULL_FORMS[1]]
    claims.record("size_marginal_h", float(marg["rate"]))
    claims.record("size_regressed_h", float(code["rate"]))
    claims.record("size_generator", float(calib.loc["generator", "rate"]))
    claims.claim(
        "C7",
        "Under no effect, the CIT-LR rejection rate at 0.05 lies in the 99% binomial interval around 0.05 (h = A-marginal of g).",
        paper="not reported (property a sound test must have)",
        ours=f"{marg['rate']:.3f} ({marg['k']}/{marg['n']}); KS p = {marg['ks_pvalue']:.2f}",
        holds=bool(marg["calibrated"] and marg["ks_pvalue"] > 0.01),
        evidence=f"{n_rep} replications of n = {n}, a_effect = 0; 99% interval {tuple(round(v, 3) for v in marg['null_interval'])}; KS test of uniform p > 0.01.",
    )
    claims.claim(
        "C7-code",
        "The same calibration for the authors' variant with a separately regressed h.",
        paper="not reported",
        ours=f"{code['rate']:.3f} ({code['k']}/{code['n']}); KS p = {code['ks_pvalue']:.2g}",
        holds=bool(code["calibrated"] and code["ks_pvalue"] > 0.01),
        evidence=f"{n_rep_code} replications, otherwise as in C7; 99% interval {tuple(round(v, 3) for v in code['null_interval'])}.",
    )
    gen_n = power_n.loc["generator"]
    reg_n = power_n.loc["regression"]
    rising = bool(gen_n.iloc[-1] > gen_n.iloc[0] and gen_n.iloc[-1] >= 0.8)
    claims.claim(
        "C8",
        "For a fixed non-invariant classifier, power rises with n (and with the strength of the effect).",
        paper="not reported (property a sound test must have)",
        ours=f"generator form {gen_n.iloc[0]:.2f} -> {gen_n.iloc[-1]:.2f}, regression form {reg_n.iloc[0]:.2f} -> {reg_n.iloc[-1]:.2f} for n {power_ns[0]} -> {power_ns[-1]}",
        holds=rising,
        evidence=f"{n_rep_power} replications per n at a_effect = {effect_for_n}; pass: the generator form (Alg. 1) rises and reaches 0.8; the regression form is reported alongside.",
    )
    return claims.rows(["C4a", "C4b", "C7", "C7-code", "C8"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C13 (the group is predictable, Table 6) and C14 (prevalence tests, Figs. 6-7) of notebook 04.

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
    min_auc = float(auc["AUC"].min())
    claims.claim(
        "C13",
        "The sensitive attribute is predictable from the image (race predictor ROC-AUC >= 0.94, Table 6).",
        paper="AUC 0.973-0.981 (known races)",
        ours=round(min_auc, 4),
        holds=bool(min_auc >= 0.94),
        evidence=f"one-vs-rest AUC of a small CNN on {n_test} held-out toy images; smallest over the three groups "
        f"(bootstrap sd <= {auc['sd'].max():.3g}).",
    )
    p_assoc = table.loc[["cardiomegaly", "effusion"], "p-value"]
    p_cons = float(table.loc["consolidation", "p-value"])
    claims.claim(
        "C14",
        "Chi-square tests of group vs disease are significant for the associated diseases (Figs. 6-7).",
        paper="significant for all five diseases",
        ours={"cardiomegaly": float(p_assoc.iloc[0]), "effusion": float(p_assoc.iloc[1]), "consolidation": p_cons},
        holds=bool((p_assoc < 0.05).all()),
        evidence=f"chi-square test of independence on {n_test} held-out images. By construction consolidation carries no "
        f"association (p = {p_cons:.2g}); it is the toy counterpart of the paper's invariant column, not a failure.",
    )
    return claims.rows(["C13", "C14"])


def _done1(check: pd.DataFrame, name: str, n_test: int) -> tuple[bool, dict, str]:
    sub = check.xs(name, level=0)
    eff, kept_gen, kept_true = sub["effectiveness %"], sub["disease kept %"], sub["disease kept %, true cf"]
    l1, far = sub["disease-region L1 to truth"], sub["random patient"]
    near = bool((l1 < (sub["autoencoder floor"] + far) / 2).all())
    holds = bool(eff.min() > 100 / 3 + 20 and (kept_gen >= kept_true - 10).all() and near)
    ours = {"min effectiveness %": round(float(eff.min()), 1), "min disease kept %": round(float(kept_gen.min()), 1),
            "max disease-region L1": round(float(l1.max()), 2), "min random-patient L1": round(float(far.min()), 2)}
    evidence = (f"{name}, {n_test} test images, per target group: effectiveness above chance (33.3%) by 20 points; the disease "
                f"predictors keep the patient's disease status within 10 points of their accuracy on the true counterfactual "
                f"(generated: {kept_gen.round(1).tolist()}, truth: {kept_true.round(1).tolist()}, autoencoder reconstruction: "
                f"{sub['disease kept %, AE reconstruction'].round(1).tolist()}); and the disease-region error to the truth is closer "
                f"to the autoencoder floor ({float(sub['autoencoder floor'].iloc[0]):.2f}) than to a random patient's "
                f"(generated: {l1.round(2).tolist()}, random patient: {far.round(2).tolist()}).")
    return holds, ours, evidence


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

    holds, ours, evidence = _done1(check, "CLDM+D", n_test)
    claims.claim(
        "DONE-1",
        "Counterfactual images move the attribute predictor to the intended group well above chance while the disease "
        "region stays close to the true counterfactual.",
        paper="effectiveness 83-93% (Tables 8, 10); no ground truth",
        ours=ours, holds=holds, evidence=evidence,
    )
    present = check.xs("CLDM+D", level=0)[[f"present kept %, {d}" for d in DISEASES]]
    worst = present.stack().idxmin()
    claims.claim(
        "DONE-1-present",
        "Every disease a patient has is still found in at least 90% of their counterfactuals, for every target group.",
        paper="not measured (no ground truth)",
        ours=present.round(1).to_dict(orient="index"), holds=bool(present.min().min() >= 90),
        evidence=f"CLDM+D; share of patients with the disease whose counterfactual the disease predictor still calls positive, "
        f"per target group and disease (the true counterfactuals: {check.xs('CLDM+D', level=0)['disease kept %, true cf'].round(1).tolist()} "
        f"overall). Weakest: {worst[0]}, {worst[1]}.",
    )
    holds, ours, evidence = _done1(check, "CLDM", n_test)
    claims.claim(
        "DONE-1-paper-CLDM",
        "The same bar for the paper's CLDM, conditioned on the group alone and trained on the observed data.",
        paper="effectiveness 83-93% (Tables 8, 10); disease preservation not measured",
        ours=ours, holds=holds, evidence=evidence,
    )
    eff_cols = quality.xs("effectiveness %", axis=1, level=0).mean(axis=1)
    fd = quality.xs("FD", axis=1, level=0).iloc[:, 0]
    comp = quality.xs("composition L1", axis=1, level=0).mean(axis=1)
    vae_names = [n for n in quality.index if n.startswith("VAE")]
    order_eff = bool(eff_cols["DLDM"] >= eff_cols["CLDM"] > eff_cols[vae_names].max())
    order_fd = bool(fd["DLDM"] <= fd["CLDM"] < fd[vae_names].min())
    claims.claim(
        "C10",
        "Generation ordering: effectiveness DLDM > CLDM > beta-VAEs; FD DLDM < CLDM < beta-VAEs; composition worst for the CLDM.",
        paper="eff 88.7-93.3 > 83.5-89.1 > 76.8-87.4; FID 21.8 < 22.1 < 23.9-25.1; composition CLDM 790-816 vs 230-350",
        ours={"effectiveness": eff_cols.round(1).to_dict(), "FD": fd.round(3).to_dict(), "composition": comp.round(2).to_dict()},
        holds=None if order_eff and order_fd else False,
        evidence="toy scale, one seed. Effectiveness order CLDM > beta-VAEs: "
        f"{bool(eff_cols['CLDM'] > eff_cols[vae_names].max())}; FD order CLDM < beta-VAEs: {bool(fd['CLDM'] < fd[vae_names].min())}; "
        f"composition worst for the CLDM: {bool(comp['CLDM'] > comp[vae_names].max())}. "
        "DLDM vs CLDM cannot differ meaningfully because phi moves latents by lambda = 1e-3 (C12), so the DLDM > CLDM part is untestable.",
    )
    v = variance.iloc[:, 0].to_numpy()
    claims.claim(
        "C11",
        "Less forward noise gives less variable counterfactuals with little loss of quality.",
        paper="qualitative (App. H.1)",
        ours=variance.round(2).to_dict(orient="index"),
        holds=bool(v[1] < v[0] and variance["effectiveness %"].iloc[1] >= variance["effectiveness %"].iloc[0] - 10),
        evidence=f"3 stochastic abductions of {n_variance} images at t* = {t_star} and {max(1, t_star // 4)}: the pixel sd across draws "
        "must fall and the effectiveness must stay within 10 points. Less noise does lower the variance, but it also leaves too "
        "little room to change the group, which is the quality that matters for a counterfactual.",
    )
    claims.claim(
        "C12",
        "The disentangler lowers the MINE bound on I(phi(z0); A) below I(z0; A).",
        paper="implied by Sec. 3.3 (no number)",
        ours={"MI z0": round(mi_before.statistic, 4), "MI phi(z0)": round(mi_after.statistic, 4), "||phi(z)-z||": float(shift.mean())},
        holds=bool(mi_after.statistic < mi_before.statistic - 0.05),
        evidence=f"held-out DV bounds with fresh critics ({mi_steps} steps; permutation p {mi_before.pvalue:.2g} and {mi_after.pvalue:.2g}). "
        f"With lambda = {mine_lambda:g}, phi moves each latent by exactly lambda, so it cannot remove information; a difference "
        "within critic noise (0.05 nats) counts as not lower.",
    )
    return claims.rows(["DONE-1", "DONE-1-present", "DONE-1-paper-CLDM", "C10", "C11", "C12"])


def _done2(rates: pd.DataFrame, label: str, alpha: float) -> tuple[pd.Series, pd.Series, int, int, bool]:
    from scipy.stats import binomtest

    inv, use = rates.loc[(label, _INVARIANT)], rates.loc[(label, _USES)]
    n_inv, n_use = int(inv["classifiers"]), int(use["classifiers"])
    ok = n_inv > 0 and binomtest(int(inv["rejected"]), n_inv, alpha, alternative="greater").pvalue > 0.05
    return inv, use, n_inv, n_use, ok


def claims_06(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims DONE-2 (CLDM+D, the paper's CLDM, the true counterfactuals), C6, C5, C9 and C15 of notebook 06.

    Also records the rejection rates.

    Parameters
    ----------
    results : mapping
        ``audit`` (:func:`audit_cnn_zoo`), ``rates`` (:func:`rejection_rates`), ``align``
        (:func:`plot_audit_pvalues`), ``alpha``, ``n_test``, ``rhos`` and ``n_zoo`` (number of classifiers).

    Returns
    -------
    pandas.DataFrame
    """
    audit, rates, align, alpha, n_test, rhos, n_zoo = claims.require(results, ["audit", "rates", "align", "alpha", "n_test", "rhos", "n_zoo"])
    claims.record("rejection_rates", {f"{a}|{b}": r["rate"] for (a, b), r in rates.iterrows()})
    cit = "CIT-LR[CLDM+D]"
    criteria = (f"CIT-LR with CLDM+D counterfactuals, alpha = {alpha}, {n_test} test images per test; one-sided binomial test of the "
                f"invariant classifiers' rejection rate against alpha (p > 0.05 required); >= 80% rejections required for trace users.")
    variants = {
        "DONE-2": ("CIT-LR (CLDM+D)",
                   "CIT-LR does not reject classifiers that ignore the trace above alpha and rejects those that use it.", criteria),
        "DONE-2-paper-CLDM": ("CIT-LR (paper CLDM)", "The same bar with the paper's CLDM (conditioned on the group alone) as the generator.",
                              "same criteria as DONE-2; a failure means the generator, not the test, is wrong: it changes the diseases along with "
                              "the group (previous notebook), so a classifier that ignores the trace still changes its predictions."),
        "DONE-2-oracle": ("CIT-LR (true cf)",
                          "The same bar with a perfect generator: CIT-LR fed the true counterfactuals does not reject classifiers that ignore the "
                          "trace above alpha and rejects those that use it.",
                          "same criteria as DONE-2 with g and h from the renderer's true counterfactuals: separates the test from the generator."),
    }
    for key, (label, statement, evidence) in variants.items():
        inv, use, n_inv, n_use, ok = _done2(rates, label, alpha)
        claims.claim(
            key, statement,
            paper="CIT-LR rejects when ECA is low and not when ECA is high (Sec. 6.3)",
            ours={"rejection rate, ignores trace": inv["rate"], "rejection rate, uses trace": use["rate"], "n": [n_inv, n_use]},
            holds=(None if min(n_inv, n_use) < 3 else bool(ok and use["rate"] >= 0.8)),
            evidence=evidence,
        )
    inv_rate, use_rate, n_inv, n_use, inv_ok = _done2(rates, "CIT-LR (CLDM+D)", alpha)
    # Only panels whose classifiers spread over ECA say anything about alignment (consolidation's do not).
    spread = audit.groupby("disease")["ECA"].agg(np.ptp)
    informative = [d for d in DISEASES if spread[d] >= 0.05]
    r_cit = align.xs("CIT-LR (CLDM+D)", level=0)["r"].loc[informative]
    sd = align["resid_sd"].unstack(0).loc[informative]
    dp_inv, eo_inv = rates.loc[("DP", _INVARIANT), "rate"], rates.loc[("EO", _INVARIANT), "rate"]
    claims.claim(
        "C6",
        "Real-data pattern: CIT-LR is not significant for high-ECA classifiers and significant for low-ECA ones; "
        "DP/EO reject many high-ECA classifiers.",
        paper="qualitative (Figs. 3-4)",
        ours={"CIT-LR reject | ECA>=0.99": inv_rate["rate"], "CIT-LR reject | ECA<0.9": use_rate["rate"],
              "DP reject | ECA>=0.99": dp_inv, "EO reject | ECA>=0.99": eo_inv},
        holds=(None if min(n_inv, n_use) < 3 else bool(inv_ok and use_rate["rate"] >= 0.8 and dp_inv > inv_rate["rate"])),
        evidence="rejection rates over the zoo at alpha = 0.05 (table above).",
    )
    pos_r = int((r_cit > 0).sum())
    claims.claim(
        "C5",
        "log p of CIT-LR rises with ECA (positive correlation) with a smaller residual spread than DP and EO.",
        paper="qualitative (Figs. 3-4)",
        ours={"r CIT-LR per disease": r_cit.round(3).to_dict(), "resid sd": sd.round(3).to_dict(orient="index")},
        holds=None if (r_cit.isna().any() or not informative) else bool(pos_r == len(informative) and (sd["CIT-LR (CLDM+D)"] < sd[["DP", "EO"]].min(axis=1)).all()),
        evidence=f"Pearson r between ECA and log10 p per disease ({n_zoo // len(DISEASES)} classifiers each) on the diseases whose "
        f"classifiers spread over ECA by at least 0.05 ({informative}); CIT-LR's residual sd must be below both DP's and EO's in each.",
    )
    neg = audit[f"mean d {cit}"] < 0
    sig_neg = (neg & (audit[f"p {cit}"] < alpha)).sum()
    claims.claim(
        "C9",
        "The paired mean of y(g - h) is >= 0 up to noise (the functional is E[(g-h)^2]); the paper's tables show mixed signs.",
        paper="mixed signs in Tables 12-13",
        ours={"negative means": int(neg.sum()), "significant negative": int(sig_neg), "tests": len(audit)},
        holds=bool(sig_neg <= max(1, 0.05 * len(audit))),
        evidence="sign of the CIT-LR mean difference over the zoo. With h the A-marginal of g, a significant negative mean can only "
        "come from the generator: y is predicted on real images but g and h on generated ones, and E[y(g - h)] = E[(g - h)^2] "
        "needs E[y | A, Z] = g, which fails when the counterfactuals change what the classifier sees.",
    )
    sig = audit.assign(sig=audit[f"p {cit}"] < alpha).groupby("disease")["sig"].mean()
    claims.claim(
        "C15",
        "Per-model tables: most models are non-significant for the disease unaffected by A (consolidation) and "
        "significant for diseases where models pick up A-shortcuts; no model is invariant for all diseases.",
        paper="consolidation 1/10 (CheXpert), 2/10 (MIMIC) significant; others 5-10/10",
        ours=sig.round(3).to_dict(),
        holds=bool(sig["consolidation"] <= 0.2 and min(sig["cardiomegaly"], sig["effusion"]) >= 0.5),
        evidence=f"share of zoo members with CIT-LR p < {alpha} per disease; shortcut strengths {rhos} for the associated diseases.",
    )
    return claims.rows(["DONE-2", "DONE-2-paper-CLDM", "DONE-2-oracle", "C6", "C5", "C9", "C15"])
