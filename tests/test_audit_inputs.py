"""The audit scores the positive class a user names (issue 35, item 1), hands an imputing model the filled rows
(item 5) and never cuts an error message inside a word.

German credit as it ships (``cflib data fetch``): the outcome ``credit`` is 1 = good, 2 = bad, so a scikit-learn
classifier's ``classes_`` are ``[1, 2]`` and its *last* ``predict_proba`` column is P(bad). With ``y1: 1`` the audit
must score P(good): every number below is recomputed by hand from ``predict_proba(...)[:, 0]``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cflib.audit import audit
from cflib.audit.inputs import one_line, positive_column
from cflib.data.real import DatasetMissingError, load_german
from cflib.fairness.sfm import StandardFairnessModel

CATS = ["status", "savings", "credit_history"]
NUMS = ["age", "month", "credit_amount"]
SFM = StandardFairnessModel("sex", ["age"], ["month", "credit_amount", *CATS], "credit", x0="male", x1="female")


@pytest.fixture(scope="module")
def german():
    try:
        raw = load_german()
    except DatasetMissingError:
        pytest.skip("German credit is not fetched (cflib data fetch)")
    data = raw.assign(sex=np.where(raw["personal_status"].isin(["A92", "A95"]), "female", "male"))
    data = data[["sex", *NUMS, *CATS, "credit"]]
    return data


def _pipeline(data: pd.DataFrame, y: pd.Series):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    prep = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"), ["sex", *CATS]), ("num", StandardScaler(), NUMS)]
    )
    return make_pipeline(prep, LogisticRegression(max_iter=1000)).fit(data[["sex", *NUMS, *CATS]], y)


@pytest.fixture(scope="module")
def pipe(german):
    model = _pipeline(german, german["credit"])
    assert list(model.classes_) == [1, 2]  # the coding as it ships: the last column is P(bad)
    return model


def _run(model, data, **kw):
    return audit(model, data, sfm=SFM, y1=1, n_boot=0, learner="linear", progress=False, **kw)


def test_the_column_of_y1_is_scored_and_the_rates_are_those_of_p_good(german, pipe, tmp_path):
    r = _run(pipe, german)
    p_good = pipe.predict_proba(german[["sex", *NUMS, *CATS]])[:, 0]
    dec = (p_good >= 0.5).astype(float)
    good = (german["credit"] == 1).to_numpy(float)
    female = (german["sex"] == "female").to_numpy()
    for g, mask in (("female", female), ("male", ~female)):
        row = r.groups.loc[g]
        assert row["n"] == mask.sum()
        assert row["selection_rate"] == pytest.approx(dec[mask].mean(), abs=1e-12)
        assert row["base_rate"] == pytest.approx(good[mask].mean(), abs=1e-12)
        assert row["tpr"] == pytest.approx(dec[mask & (good == 1)].mean(), abs=1e-12)
    dp = dec[female].mean() - dec[~female].mean()
    assert r.rows.loc["DP", "estimate"] == pytest.approx(dp, abs=1e-12)
    # P(good) is the favourable score: the selection rates are the majority's, not P(bad)'s complement
    assert r.groups.loc["male", "selection_rate"] > 0.5 and r.groups.loc["female", "selection_rate"] > 0.5
    prov = r.provenance
    assert prov["scored"].startswith("predict_proba column 0 (class 1 = y1)") and prov["threshold"] == 0.5
    assert "predict_proba column 0" in r.plain_summary() and "score >= 0.5" in r.plain_summary()
    import json

    import jsonschema

    from cflib.audit import load_schema

    doc = json.loads(r.to_json(tmp_path / "r.json").read_text())
    jsonschema.validate(doc, load_schema())
    assert doc["provenance"]["scored"] == prov["scored"] and doc["provenance"]["threshold"] == 0.5
    assert "predict_proba column 0 (class 1 = y1)" in r.to_html(tmp_path / "r.html").read_text()


def test_a_callable_giving_p_good_gives_the_same_report(german, pipe):
    cols = ["sex", *NUMS, *CATS]
    by_estimator = _run(pipe, german)
    by_callable = _run(lambda f: pipe.predict_proba(f[cols])[:, 0], german)
    num = ["estimate", "ci_low", "ci_high", "pvalue"]
    pd.testing.assert_frame_equal(by_estimator.rows[num], by_callable.rows[num])
    assert list(by_estimator.rows["verdict"]) == list(by_callable.rows["verdict"])
    pd.testing.assert_frame_equal(by_estimator.groups, by_callable.groups)
    assert "P(y = 1)" in by_callable.provenance["scored"]


def test_a_model_without_y1_among_its_classes_is_refused_in_one_line(german):
    worded = _pipeline(german, german["credit"].map({1: "good", 2: "bad"}))
    with pytest.raises(ValueError, match=r"^y1: 1 is not among the model's classes \['bad', 'good'\]") as info:
        _run(worded, german)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"y1: the model's classes are \[1, 2\], not 0/1; name the positive one"):
        audit(_pipeline(german, german["credit"]), german, sfm=SFM, n_boot=0, progress=False)
    # an estimator fitted on 0/1 needs no y1: class 1's column
    binary = _pipeline(german, (german["credit"] == 1).astype(int))
    assert positive_column(binary)[0] == 1
    # an estimator fitted on y == y1 (classes False/True) scores its True column whatever y1's own coding
    fitted_on_good = _pipeline(german, german["credit"].map({1: "good", 2: "bad"}) == "good")
    at, said = positive_column(fitted_on_good, "good")
    assert at == 1 and "class True, the model's coding of y1 = 'good'" in said
    assert positive_column(worded, "good")[0] == 1 and positive_column(worded, " good ")[0] == 1
    assert positive_column(lambda f: f, 1)[0] is None


def test_predict_only_estimators_give_the_decision_of_y1(german):
    from sklearn.tree import DecisionTreeClassifier

    cols = ["age", "month", "credit_amount"]
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(german[cols], german["credit"])

    class LabelsOnly:  # predict but no predict_proba, labels in the data's 1/2 coding
        classes_ = tree.classes_
        feature_names_in_ = tree.feature_names_in_

        def predict(self, frame):
            return tree.predict(frame)

    sfm = StandardFairnessModel("sex", ["age"], ["month", "credit_amount"], "credit", x0="male", x1="female")
    r = audit(LabelsOnly(), german, sfm=sfm, y1=1, n_boot=0, learner="linear", progress=False)
    dec = (tree.predict(german[cols]) == 1).astype(float)
    female = (german["sex"] == "female").to_numpy()
    assert r.rows.loc["DP", "estimate"] == pytest.approx(dec[female].mean() - dec[~female].mean(), abs=1e-12)
    assert r.provenance["scored"].startswith("predict == 1")


def test_impute_hands_the_model_the_filled_rows(german):
    cols = ["sex", *NUMS, *CATS]
    pipe = _pipeline(german, german["credit"])  # no imputer: NaN would make it fail
    holes = german.assign(credit_amount=german["credit_amount"].where(german.index % 25 > 0))
    with pytest.raises(ValueError, match=r"missing values in 'credit_amount' \(40 of 1000 rows\).*impute=True"):
        _run(pipe, holes)
    r = _run(pipe, holes, impute=True)
    filled = holes.assign(credit_amount=holes["credit_amount"].fillna(holes["credit_amount"].median()))
    dec = (pipe.predict_proba(filled[cols])[:, 0] >= 0.5).astype(float)
    female = (filled["sex"] == "female").to_numpy()
    assert r.rows.loc["DP", "estimate"] == pytest.approx(dec[female].mean() - dec[~female].mean(), abs=1e-12)
    assert r.provenance["imputed"] == {"credit_amount": 40}
    assert any("'credit_amount' (40)" in w and "the model" in w for w in r.warnings)


def test_a_long_error_is_shortened_at_a_sentence_or_a_word_never_inside_one(german):
    text = (
        "Input X contains NaN. LogisticRegression does not accept missing values encoded as NaN natively. "
        "For supervised learning, you might want to consider sklearn.ensemble.HistGradientBoostingClassifier "
        "and Regressor which accept missing values encoded as NaNs natively. Alternatively, it is possible to "
        "preprocess the data, for instance by using an imputer transformer in a pipeline or drop samples "
        "which have missing values."
    )
    for limit in (40, 100, 150, 300):
        short = one_line(text, limit)
        kept = short.removesuffix(" [...]")
        assert short.endswith(" [...]") and len(kept) <= limit and text.startswith(kept)
        assert text[len(kept)] == " "  # the next character starts a new word
    assert one_line("a\n  b") == "a b"
    unspaced = "x" * 500
    assert one_line(unspaced, 50) == "x" * 50 + " [...]"

    def fails(frame):
        raise ValueError(text)

    with pytest.raises(ValueError, match=r"predict: the model failed on data \(Input X contains NaN\.") as info:
        _run(fails, german)
    message = str(info.value)
    inner = message[message.index("(") + 1 : message.rindex(")")].removesuffix(" [...]")
    assert text.startswith(inner) and text[len(inner)] == " "
