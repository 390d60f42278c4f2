"""LepusClassifier and LepusRegressor: scikit-learn's own estimator checks, sparse and dense input, parameters,
and the estimators' models in the CLI."""

import os
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.exceptions import SkipTestWarning
from sklearn.utils import shuffle
from sklearn.utils.estimator_checks import check_estimator, check_sample_weights_invariance

import lepus
from conftest import read_predictions


ESTIMATORS = [lepus.LepusClassifier(), lepus.LepusRegressor(), lepus.LepusClassifier(learner="mix"),
              lepus.LepusRegressor(learner="mix")]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_check_estimator(estimator):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkipTestWarning)
        check_estimator(estimator)
    skipped = [str(w.message) for w in caught if issubclass(w.category, SkipTestWarning)]
    # the one check declared an expected failure (_more_tags), and pandas' when python3-pandas is not installed
    assert all("check_sample_weights_invariance" in m or "pandas" in m for m in skipped), skipped
    # that check's kind="ones" holds: weights of 1 are no weights
    check_sample_weights_invariance(type(estimator).__name__, estimator, kind="ones")


@pytest.mark.parametrize("Estimator", [lepus.LepusClassifier, lepus.LepusRegressor])
def test_zero_weights_leave_the_model_unchanged(Estimator):
    X, y = binary_data(6)
    extra_X, extra_y = binary_data(7)
    plain = Estimator(learner="mix").fit(X, y)
    weights = np.r_[np.ones(len(y)), np.zeros(len(extra_y))]
    padded = Estimator(learner="mix").fit(np.vstack([X, extra_X]), np.r_[y, 1 - extra_y], sample_weight=weights)
    scores = (lambda e: e.decision_function(X)) if Estimator is lepus.LepusClassifier else (lambda e: e.predict(X))
    np.testing.assert_array_equal(scores(padded), scores(plain))
    halved = Estimator(learner="mix").fit(X, y, sample_weight=np.full(len(y), 0.5))  # weights do count
    assert np.abs(scores(halved) - scores(plain)).max() > 1e-3


def binary_data(seed=0):
    X, y = make_classification(n_samples=600, n_features=20, n_informative=5, random_state=seed)
    return X.astype(np.float32), y


def test_sparse_and_dense_input_learn_the_same_model():
    X, y = binary_data()
    X[X < 0.3] = 0.0  # zeros, as a sparse matrix drops them
    dense = lepus.LepusClassifier().fit(X, y)
    for kind in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        sparse = lepus.LepusClassifier().fit(kind(X), y)
        np.testing.assert_array_equal(sparse.decision_function(kind(X)), dense.decision_function(X))
    assert dense.score(X, y) > 0.7


def test_classifier_learns_two_and_more_classes():
    X, y = binary_data(1)
    clf = lepus.LepusClassifier(passes=3).fit(X, y)
    assert clf.score(X, y) > 0.8
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    iris = load_iris()
    X, y = shuffle(iris.data, iris.target_names[iris.target], random_state=0)
    multi = lepus.LepusClassifier(learner="mix", passes=5).fit(X, y)
    assert multi.model_.classes == 3
    assert multi.decision_function(X).shape == (150, 3)
    assert multi.score(X, y) > 0.85


def test_params_choose_the_learner_and_its_options():
    clf = lepus.LepusClassifier(learner="scinol2", options="-b 20 --hash all")
    assert clf.get_params() == {"learner": "scinol2", "loss_function": "logistic", "options": "-b 20 --hash all",
                                "passes": 1}
    X, y = binary_data()
    assert clf.fit(X, y).model_.learner == "scinol2"
    clf.set_params(learner="ftprl-diag", options="")
    assert clf.fit(X, y).model_.learner == "ftprl-diag"
    with pytest.raises(lepus.ConfigError, match="nope"):
        lepus.LepusClassifier(learner="nope").fit(X, y)
    with pytest.raises(lepus.ConfigError):
        lepus.LepusRegressor(options="--bogus").fit(X, y)
    reg = clone(lepus.LepusRegressor(learner="scinol2", passes=2))
    assert reg.get_params()["learner"] == "scinol2"


def test_partial_fit_continues_the_model():
    X, y = binary_data(2)
    whole = lepus.LepusClassifier().fit(X, y)
    parts = lepus.LepusClassifier()
    for chunk in np.array_split(np.arange(len(y)), 4):
        parts.partial_fit(X[chunk], y[chunk], classes=[0, 1])
    np.testing.assert_array_equal(parts.decision_function(X), whole.decision_function(X))
    with pytest.raises(ValueError, match="classes"):
        lepus.LepusClassifier().partial_fit(X, y)
    reg = lepus.LepusRegressor()
    Xr, yr = make_regression(n_samples=300, n_features=5, random_state=0)
    reg.partial_fit(Xr[:150], yr[:150]).partial_fit(Xr[150:], yr[150:])
    np.testing.assert_allclose(reg.predict(Xr), lepus.LepusRegressor().fit(Xr, yr).predict(Xr))


def test_regressor_learns():
    X, y = make_regression(n_samples=500, n_features=10, noise=1.0, random_state=3)
    reg = lepus.LepusRegressor(passes=5).fit(X, y / np.abs(y).max())
    assert reg.score(X, y / np.abs(y).max()) > 0.9


def test_an_estimators_model_predicts_the_same_in_the_cli(scratch, cli):
    X, y = binary_data(4)
    clf = lepus.LepusClassifier(learner="mix").fit(X, y)
    model, data, preds = (os.path.join(scratch, n) for n in ("clf.model", "test.libsvm", "p.txt"))
    clf.model_.save(model)
    with open(data, "w") as f:  # column j is the libsvm feature j
        for row, label in zip(X[:100], y[:100]):
            f.write(f"{2 * label - 1} " + " ".join(f"{j}:{v!r}" for j, v in enumerate(row.tolist()) if v) + "\n")
    cli("-t", "-i", model, "--format", "libsvm", "-d", data, "-p", preds)
    np.testing.assert_allclose(clf.decision_function(X[:100]), read_predictions(preds), rtol=1e-5, atol=1e-6)


def test_a_fitted_estimator_pickles():
    X, y = binary_data(5)
    clf = lepus.LepusClassifier(learner="mix").fit(X, y)
    copy = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(copy.decision_function(X), clf.decision_function(X))
