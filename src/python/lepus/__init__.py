"""lepus from Python: the CLI's learners, options and model files (docs/python.md).

    >>> import lepus
    >>> m = lepus.Model("--loss_function logistic --learner mix")
    >>> m.learn("1 | a b c")      # the pre-update prediction, as the CLI's -p writes it
    >>> m.predict("| a b")
    >>> m.save("model.lepus")     # `lepus -t -i model.lepus` predicts the same

scikit-learn estimators: lepus.LepusClassifier and lepus.LepusRegressor (loaded on first use).
"""

import os
import shlex
import tempfile
import warnings

from ._lepus import ConfigError, Error, IoError, ModelFormatError, ParseError, Session, __version__

for _error in (Error, ConfigError, ModelFormatError, ParseError, IoError):
    _error.__module__ = "lepus"  # tracebacks name lepus.ConfigError, not lepus._lepus.ConfigError

__all__ = ["Model", "Error", "ConfigError", "ModelFormatError", "ParseError", "IoError", "LepusClassifier",
           "LepusRegressor", "__version__"]


def _words(options):
    if options is None:
        return []
    if isinstance(options, str):
        return shlex.split(options)
    return [str(o) for o in options]


def _csr(X):
    """X (a scipy sparse matrix or anything numpy reads as a 2-D array) as CSR arrays (indptr, indices, data)."""
    import numpy as np
    import scipy.sparse as sp

    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ConfigError(f"expected a 2-D array of examples, got {X.ndim} dimension(s)")
    X = sp.csr_matrix(X)
    return X.indptr, X.indices, X.data


class Model:
    """One lepus model, driven an example at a time: `options` is the CLI's command line (a string or a list of
    words), so Model("--loss_function logistic --learner mix") learns as `lepus --loss_function logistic --learner
    mix` does. Options that need a data stream (data files, -p, -r, -f, --passes, a cache, --daemon) are refused:
    give examples with learn/predict and write the model with save.

    Errors are lepus.Error subclasses (ConfigError, ModelFormatError, ParseError, IoError) carrying the CLI's
    one-line message. A line the CLI would warn about and skip (a malformed feature, a bad label) is a ParseError.
    """

    def __init__(self, options=""):
        self.options = options
        self._session = Session(_words(options))
        for message in self._session.warnings:  # what the CLI prints before a run
            warnings.warn(f"lepus: {message}", stacklevel=2)

    @classmethod
    def load(cls, path, options=""):
        """A model saved by save() or by the CLI's -f: `lepus -i PATH OPTIONS` (add "-t" to predict only)."""
        return cls(["-i", os.fspath(path)] + _words(options))

    def learn(self, line):
        """Learns one example line in the --format (VW text by default) and returns the prediction made before
        learning from it, as the CLI's progressive table and -p report it (a class number for --oaa/--csoaa);
        None for a line with no example. Under -t it only predicts. A learner that looks at a prefix of the
        examples first (a kernel's bandwidth, a scale) takes the first line as that prefix; learn_rows gives it the
        first rows, as the CLI does."""
        return self._session.learn(line)

    def predict(self, line):
        """The prediction for one example line, without learning (None for a line with no example)."""
        return self._session.predict(line)

    def learn_rows(self, X, y, weights=None):
        """Learns every row of X (a scipy sparse matrix or a dense array; column j is the libsvm feature "j") in
        order with labels y (classes 1..K under --oaa) and importance weights; returns the pre-update predictions.
        The matrix is learned in one call with the GIL released."""
        import numpy as np

        indptr, indices, data = _csr(X)
        labels = np.asarray(y, dtype=np.float32)
        w = None if weights is None else np.asarray(weights, dtype=np.float32)
        return self._shown(self._session.learn_csr(indptr, indices, data, labels, w))

    def predict_rows(self, X):
        """The predictions for every row of X (as learn_rows reads it), without learning."""
        indptr, indices, data = _csr(X)
        return self._shown(self._session.predict_csr(indptr, indices, data))

    def _shown(self, out):
        return out[2].astype("int64") if len(out) > 2 else out[0]

    def save(self, path):
        """Writes the CLI's model file (atomically, as -f does)."""
        self._session.save(os.fspath(path))

    def to_bytes(self):
        """The model file's bytes (pickling)."""
        with tempfile.TemporaryDirectory(prefix="lepus-") as d:
            path = os.path.join(d, "model")
            self.save(path)
            with open(path, "rb") as f:
                return f.read()

    @classmethod
    def from_bytes(cls, data, options=""):
        with tempfile.TemporaryDirectory(prefix="lepus-") as d:
            path = os.path.join(d, "model")
            with open(path, "wb") as f:
                f.write(data)
            return cls.load(path, options)

    def __getstate__(self):
        return {"options": self.options, "model": self.to_bytes()}

    def __setstate__(self, state):
        self.options = state["options"]
        self._session = Model.from_bytes(state["model"])._session

    @property
    def learner(self):
        return self._session.learner

    @property
    def loss(self):
        return self._session.loss

    @property
    def classes(self):
        """K under --oaa / --csoaa, else 0."""
        return self._session.classes

    @property
    def examples(self):
        """Examples learned or predicted so far."""
        return self._session.examples

    def __repr__(self):
        return f"lepus.Model({self.options!r})"


def __getattr__(name):  # scikit-learn is imported only when its estimators are asked for
    if name in ("LepusClassifier", "LepusRegressor"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    raise AttributeError(f"module 'lepus' has no attribute {name!r}")
