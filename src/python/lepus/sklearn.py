"""scikit-learn estimators over lepus.Model: LepusClassifier and LepusRegressor.

Rows become examples as the libsvm reader reads them (column j is the feature "j" of the libsvm namespace, zeros
dropped); fit() makes a new model and learns the rows in order `passes` times, partial_fit() continues it.
Predictions are those of the model as saved (model_.save(path)) and loaded with -t, which is what `lepus -t -i path`
predicts (for mix, its online-to-batch mixture). The
parameters are the learner and its options: `learner` (the CLI's --learner, None: its default), `loss_function`,
`options` (any other CLI options, e.g. "-b 22 -q ff --l2 1e-6") and `passes`.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import Model, _words

__all__ = ["LepusClassifier", "LepusRegressor"]


def _csr_arrays(X):
    if sp.issparse(X):
        X = X.tocsr()
    else:
        X = sp.csr_matrix(X)
    return X.indptr, X.indices, np.asarray(X.data, dtype=np.float32)


class _LepusEstimator(BaseEstimator):
    def _args(self, extra):
        args = []
        if self.learner is not None:
            args += ["--learner", str(self.learner)]
        args += ["--loss_function", str(self.loss_function)]
        return args + extra + _words(self.options)

    def _check_passes(self):
        if not (isinstance(self.passes, (int, np.integer)) and self.passes >= 1):
            raise ValueError(f"passes must be a whole number >= 1, got {self.passes!r}")

    def _learn(self, X, labels, sample_weight, passes):
        indptr, indices, data = _csr_arrays(X)
        labels = np.asarray(labels, dtype=np.float32)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float32)
        for _ in range(passes):
            self.model_._session.learn_csr(indptr, indices, data, labels, w)
        self._predictor = Model.from_bytes(self.model_.to_bytes(), "-t")

    def _predict_raw(self, X):
        check_is_fitted(self, "model_")
        X = self._validate_data(X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return self._predictor._session.predict_csr(*_csr_arrays(X))

    # Predictions come from the model as saved, loaded with -t (self._predictor, made after each fit and
    # partial_fit): what `lepus -t -i` predicts with the model_.save() file (for mix, its online-to-batch mixture),
    # while model_ keeps learning.

    def __getstate__(self):
        state = super().__getstate__().copy()
        state.pop("_predictor", None)
        model = state.pop("model_", None)
        if model is not None:
            state["_lepus_model_bytes"] = model.to_bytes()
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_lepus_model_bytes", None)
        super().__setstate__(state)
        if data is not None:
            self.model_ = Model.from_bytes(data)
            self._predictor = Model.from_bytes(data, "-t")

    def _more_tags(self):
        # What scikit-learn's own online learners (SGDClassifier, SGDRegressor, Perceptron) declare too: the check
        # shuffles zero-weight copies among the rows, so the weighted rows are learned in another order.
        # test_zero_weights_leave_the_model_unchanged checks what does hold.
        return {
            "_xfail_checks": {
                "check_sample_weights_invariance": "zero sample_weight is not equivalent to removing samples for "
                "an online learner: the check shuffles them in, changing the order of the others"
            }
        }


class LepusClassifier(ClassifierMixin, _LepusEstimator):
    """A lepus learner as a scikit-learn classifier: two classes are the labels -1/1 of a binary loss (logistic by
    default), more are the CLI's --oaa K reduction. decision_function is the learner's score (before any link);
    predict_proba (logistic loss) is its logistic (one-against-all scores normalised for more classes)."""

    def __init__(self, learner=None, loss_function="logistic", options="", passes=1):
        self.learner = learner
        self.loss_function = loss_function
        self.options = options
        self.passes = passes

    def _start(self, classes):
        self.classes_ = np.asarray(classes)
        if len(self.classes_) < 2:
            raise ValueError(
                f"LepusClassifier needs samples of at least 2 classes in the data, but the data contains only one "
                f"class: {self.classes_[0]!r}"
            )
        extra = ["--oaa", str(len(self.classes_))] if len(self.classes_) > 2 else []
        self.model_ = Model(self._args(extra))

    def _labels(self, y):
        index = np.searchsorted(self.classes_, y)
        known = index < len(self.classes_)
        if not np.all(known) or np.any(self.classes_[index] != y):
            raise ValueError(f"y holds labels not in classes {self.classes_!r}")
        if len(self.classes_) == 2:
            return np.where(index == 1, 1.0, -1.0)
        return index + 1.0

    def fit(self, X, y, sample_weight=None):
        self._check_passes()
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        check_classification_targets(y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32)
        self._start(np.unique(y))
        self._learn(X, self._labels(y), sample_weight, self.passes)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over X, continuing the model; the first call needs `classes` (all the classes to expect)."""
        first = not hasattr(self, "model_")
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=first)
        check_classification_targets(y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self._start(np.unique(classes))
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes {classes!r} differ from those of the first call: {self.classes_!r}")
        self._learn(X, self._labels(y), sample_weight, 1)
        return self

    def decision_function(self, X):
        out = self._predict_raw(X)
        if len(self.classes_) > 2:
            return np.asarray(out[3], dtype=np.float64)
        return np.asarray(out[1], dtype=np.float64)

    def predict(self, X):
        d = self.decision_function(X)
        if d.ndim == 2:
            return self.classes_[np.argmax(d, axis=1)]
        return self.classes_[(d > 0).astype(int)]

    def _has_proba(self):
        return self.loss_function == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X):
        d = self.decision_function(X)
        p = 1.0 / (1.0 + np.exp(-d))
        if d.ndim == 1:
            return np.column_stack([1.0 - p, p])
        total = p.sum(axis=1, keepdims=True)
        total[total == 0] = 1.0
        return p / total

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class LepusRegressor(RegressorMixin, _LepusEstimator):
    """A lepus learner as a scikit-learn regressor (squared loss by default); predict is what the CLI's -p
    writes (with any --link in options applied)."""

    def __init__(self, learner=None, loss_function="squared", options="", passes=1):
        self.learner = learner
        self.loss_function = loss_function
        self.options = options
        self.passes = passes

    def fit(self, X, y, sample_weight=None):
        self._check_passes()
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32)
        self.model_ = Model(self._args([]))
        self._learn(X, y, sample_weight, self.passes)
        return self

    def partial_fit(self, X, y, sample_weight=None):
        """One pass over X, continuing the model (a new one on the first call)."""
        first = not hasattr(self, "model_")
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True,
                                   reset=first)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32)
        if first:
            self.model_ = Model(self._args([]))
        self._learn(X, y, sample_weight, 1)
        return self

    def predict(self, X):
        return np.asarray(self._predict_raw(X)[0], dtype=np.float64)
