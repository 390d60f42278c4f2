"""lepus.Model: the CLI's options, learn/predict, errors as exceptions, one model file for Python and the CLI."""

import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import lepus
from conftest import read_predictions

# A small binary problem in VW text: two namespaces, a few informative features, labels -1/1.
def vw_lines(n, seed):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        x = rng.normal(size=4)
        y = 1 if x[0] + 0.5 * x[1] - x[2] > 0 else -1
        lines.append(f"{y} |a f0:{x[0]:.4f} f1:{x[1]:.4f} |b g2:{x[2]:.4f} g3:{x[3]:.4f}")
    return lines


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def test_options_reach_the_learner_and_loss():
    m = lepus.Model("--loss_function logistic --learner scinol2")
    assert m.learner == "scinol2"
    assert m.loss == "logistic"
    assert lepus.Model(["--loss_function", "squared"]).loss == "squared"


def test_learn_returns_the_pre_update_prediction():
    m = lepus.Model("--learner sgd --loss_function squared")  # the mixture's vw-pistol reports its learn-time one
    line = "2 | a b c"
    first = m.learn(line)
    assert first == 0.0  # nothing learned yet
    after = m.predict(line)
    assert after != 0.0
    assert m.predict(line) == after  # predict does not learn
    assert m.learn(line) == pytest.approx(after)  # learn reports what predict said before this update
    assert m.learn("") is None  # no example on an empty line
    assert m.examples == 4


@pytest.mark.parametrize("options", ["--loss_function logistic --link logistic", "--loss_function logistic "
                                     "--learner mix", "-q ab --learner scinol2"])
def test_learn_matches_the_clis_progressive_predictions(scratch, cli, options):
    data = os.path.join(scratch, "train.vw")
    preds = os.path.join(scratch, "p.txt")
    lines = vw_lines(300, 1)
    write(data, lines)
    cli("-d", data, "-p", preds, *options.split())
    m = lepus.Model(options)
    ours = [m.learn(line) for line in lines]
    np.testing.assert_allclose(ours, read_predictions(preds), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", ["--loss_function logistic --learner sgd", "--loss_function logistic",
                                     "-q ab --learner scinol2", "--learner ftprl-diag -b 20"])
def test_a_model_saved_in_python_predicts_the_same_in_the_cli(scratch, cli, options):
    train, test = vw_lines(400, 2), vw_lines(100, 3)
    m = lepus.Model(options)
    for line in train:
        m.learn(line)
    model = os.path.join(scratch, "py.model")
    m.save(model)
    test_file, preds = os.path.join(scratch, "test.vw"), os.path.join(scratch, "p.txt")
    write(test_file, test)
    cli("-t", "-i", model, "-d", test_file, "-p", preds)
    # -t predicts with the model -f saves (mix: its online-to-batch mixture), as Model.load(path, "-t") does
    tested = lepus.Model.load(model, "-t")
    np.testing.assert_allclose([tested.predict(line) for line in test], read_predictions(preds), rtol=1e-5,
                               atol=1e-6)
    if "--learner" in options:  # not the mixture: the model learning in memory predicts as its saved self
        np.testing.assert_allclose([m.predict(line) for line in test], read_predictions(preds), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("options", ["--loss_function logistic --learner sgd", "--loss_function logistic",
                                     "--oaa 3 --learner scinol2"])
def test_a_model_saved_by_the_cli_predicts_the_same_in_python(scratch, cli, options):
    train, test = vw_lines(400, 4), vw_lines(100, 5)
    if "--oaa" in options:  # classes 1..3
        train = [str(i % 3 + 1) + line[line.index(" "):] for i, line in enumerate(train)]
        test = [str(i % 3 + 1) + line[line.index(" "):] for i, line in enumerate(test)]
    train_file, test_file = os.path.join(scratch, "train.vw"), os.path.join(scratch, "test.vw")
    model, preds = os.path.join(scratch, "cli.model"), os.path.join(scratch, "p.txt")
    write(train_file, train)
    write(test_file, test)
    cli("-d", train_file, "-f", model, *options.split())
    cli("-t", "-i", model, "-d", test_file, "-p", preds)
    # -t predicts with what -f saved (mix: its online-to-batch mixture); a model loaded to learn on predicts as it
    # learns (mix: its online mixture), so it matches -t only for learners without that conversion
    mix = "--learner" not in options  # the default learner
    for m in [lepus.Model.load(model, "-t")] + ([] if mix else [lepus.Model.load(model)]):
        np.testing.assert_allclose([m.predict(line) for line in test], read_predictions(preds), rtol=1e-5,
                                   atol=1e-6)
    # -t: learn only predicts, so the model stays as it was
    m = lepus.Model.load(model, "-t")
    assert [m.learn(line) for line in test] == [m.predict(line) for line in test]


def test_errors_are_typed_exceptions_with_the_clis_message(scratch, cli):
    with pytest.raises(lepus.ConfigError) as e:
        lepus.Model("--bogus")
    assert cli("--bogus", check=False).stderr.strip() == "lepus: error: " + str(e.value)
    with pytest.raises(lepus.ConfigError, match="unknown --learner 'nope'"):
        lepus.Model("--learner nope")
    with pytest.raises(lepus.ConfigError, match="a data file"):
        lepus.Model("train.vw")
    garbage = os.path.join(scratch, "garbage")
    with open(garbage, "w") as f:
        f.write("not a model\n")
    with pytest.raises(lepus.ModelFormatError) as e:
        lepus.Model.load(garbage)
    assert cli("-i", garbage, "--no_stdin", check=False).stderr.strip() == "lepus: error: " + str(e.value)
    with pytest.raises(lepus.IoError):
        lepus.Model.load(os.path.join(scratch, "missing"))
    m = lepus.Model()
    with pytest.raises(lepus.ParseError) as e:
        m.learn("abc | a")
    strict = cli("--strict_parse", stdin="abc | a\n", check=False).stderr.strip()
    assert strict.endswith(str(e.value).split(": ", 1)[1])  # the same message, after its location
    with pytest.raises(lepus.ParseError):
        lepus.Model("--format libsvm").learn("1 0:1 x")
    for error in (lepus.ConfigError, lepus.ModelFormatError, lepus.ParseError, lepus.IoError):
        assert issubclass(error, lepus.Error)
    assert m.learn("1 | a") == 0.0  # the model is still usable after an error


def test_rows_hash_column_j_as_the_libsvm_feature_j():
    rng = np.random.default_rng(7)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=8, dtype=np.float32)
    X.data = np.ceil(X.data * 8)  # whole numbers: VW's float reader rounds some decimals differently
    X.sort_indices()  # a row is learned in its stored order, a line in its text order: the same here
    y = np.where(rng.random(200) > 0.5, 1.0, -1.0)
    by_line = lepus.Model("--format libsvm --loss_function logistic")
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        feats = " ".join(f"{j}:{v!r}" for j, v in zip(row.indices, row.data.tolist()))
        lines.append(f"{y[i]:g} {feats}")
    expected = [by_line.learn(line) for line in lines]
    by_rows = lepus.Model("--loss_function logistic")
    np.testing.assert_allclose(by_rows.learn_rows(X, y), expected, rtol=1e-6)
    dense = lepus.Model("--loss_function logistic")
    np.testing.assert_allclose(dense.learn_rows(X.toarray(), y), expected, rtol=1e-6)
    np.testing.assert_allclose(by_rows.predict_rows(X), [by_line.predict(line) for line in lines], rtol=1e-6)


def test_rows_with_oaa_give_classes():
    X = np.eye(3, dtype=np.float32).repeat(30, axis=0)
    y = np.repeat([1, 2, 3], 30)
    m = lepus.Model("--oaa 3")
    m.learn_rows(X, y)
    m.learn_rows(X, y)
    assert list(m.predict_rows(np.eye(3))) == [1, 2, 3]
    with pytest.raises(lepus.ParseError, match="class"):
        m.learn_rows(X[:1], [7])


def test_a_model_pickles():
    m = lepus.Model("--loss_function logistic --learner mix")
    for line in vw_lines(100, 9):
        m.learn(line)
    copy = pickle.loads(pickle.dumps(m))
    test = vw_lines(20, 10)
    assert [copy.predict(line) for line in test] == [m.predict(line) for line in test]


def test_learning_a_matrix_releases_the_gil():
    import threading
    import time

    rows, per_row, rng = 200000, 20, np.random.default_rng(11)
    indptr = np.arange(rows + 1, dtype=np.int64) * per_row
    indices = rng.integers(0, 2000, size=rows * per_row, dtype=np.int64)
    data = rng.random(rows * per_row, dtype=np.float32)
    y = np.where(np.arange(rows) % 2 == 0, 1.0, -1.0).astype(np.float32)
    arrays = (indptr, indices, data, y)
    start = time.perf_counter()
    lepus.Model("--learner scinol2")._session.learn_csr(*arrays)
    alone = time.perf_counter() - start
    thread = threading.Thread(target=lambda: lepus.Model("--learner scinol2")._session.learn_csr(*arrays))
    gaps, last = [], time.perf_counter()
    thread.start()
    while thread.is_alive():  # this thread keeps running while the other learns (were the GIL held: one long gap)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        time.sleep(0.001)
    thread.join()
    assert alone > 0.05, "the matrix is too small to tell"
    assert len(gaps) > 5 and max(gaps) < alone / 2, (alone, max(gaps), len(gaps))


def test_a_bad_matrix_is_an_error_not_a_crash():
    m = lepus.Model()
    data = np.ones(3, dtype=np.float32)
    with pytest.raises(lepus.ConfigError, match="indptr decreases"):
        m._session.learn_csr(np.array([0, 3, 1, 3]), np.array([0, 1, 2]), data, np.ones(3, dtype=np.float32))
    with pytest.raises(lepus.ConfigError, match="indptr"):
        m._session.learn_csr(np.array([0, 9]), np.array([0, 1, 2]), data, np.ones(1, dtype=np.float32))
    with pytest.raises(lepus.ParseError, match="negative column"):
        m._session.learn_csr(np.array([0, 3]), np.array([0, -1, 2]), data, np.ones(1, dtype=np.float32))
    with pytest.raises(lepus.ParseError, match="not a finite number"):
        m.learn_rows(np.array([[1.0, np.nan]]), [1.0])
    # a column far past any cache is hashed as the libsvm reader hashes its index
    wide = sp.csr_matrix((np.array([2.0], dtype=np.float32), np.array([2**40]), np.array([0, 1])),
                         shape=(1, 2**40 + 1))
    by_rows, by_line = lepus.Model(), lepus.Model("--format libsvm")
    assert by_rows.learn_rows(wide, [1.0])[0] == by_line.learn(f"1 {2**40}:2")
    assert by_rows.predict_rows(wide)[0] == by_line.predict(f"1 {2**40}:2") != 0.0


def test_threads_sharing_a_model_take_turns():
    import threading

    rng = np.random.default_rng(12)
    X = sp.csr_matrix(rng.random((3000, 50), dtype=np.float32))
    y = np.where(rng.random(3000) > 0.5, 1.0, -1.0)
    m = lepus.Model("--learner mix")
    threads = [threading.Thread(target=m.learn_rows, args=(X, y)) for _ in range(4)]
    for t in threads:
        t.start()
    lines = [m.learn("1 | a b") for _ in range(200)]
    for t in threads:
        t.join()
    assert m.examples == 4 * 3000 + 200
    assert all(np.isfinite(lines))


def test_csv_rows_learn_as_the_cli_learns_them(scratch, cli):
    rows = ["y,a,b,c"] + [f"{1 if i % 3 else -1},{i % 7 * 0.5},{i % 5},{'xyz'[i % 3]}" for i in range(60)]
    data, preds = os.path.join(scratch, "t.csv"), os.path.join(scratch, "p.txt")
    write(data, rows)
    cli("--format", "csv", "-d", data, "-p", preds, "--loss_function", "logistic")
    m = lepus.Model("--format csv --loss_function logistic")
    ours = [m.learn(line) for line in rows]
    assert ours[0] is None  # the header
    np.testing.assert_allclose(ours[1:], read_predictions(preds), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", ["--learner wemm", "--learner kons --kernel rbf", "--learner sgd"])
def test_matrix_rows_learn_as_the_cli_learns_libsvm(scratch, cli, options):
    # learners that look at a prefix first (a scale, a kernel's bandwidth) see it from the matrix as from the file
    rng = np.random.default_rng(13)
    X = rng.integers(0, 4, size=(150, 6)).astype(np.float32)  # whole numbers: read alike from text
    y = X[:, 0] - X[:, 1] + rng.integers(-1, 2, size=150)
    data, preds = os.path.join(scratch, "t.libsvm"), os.path.join(scratch, "p.txt")
    write(data, [f"{label:g} " + " ".join(f"{j}:{v:g}" for j, v in enumerate(row) if v)
                 for row, label in zip(X, y)])
    cli("--format", "libsvm", "-d", data, "-p", preds, *options.split())
    ours = lepus.Model(options).learn_rows(X, y)
    np.testing.assert_allclose(ours, read_predictions(preds), rtol=1e-4, atol=1e-5)


def test_the_clis_warnings_before_a_run_are_python_warnings(scratch):
    path = os.path.join(scratch, "m.model")
    m = lepus.Model("--learner sgd --loss_function logistic")
    m.learn("1 | a")
    m.save(path)
    with pytest.warns(UserWarning, match="--loss_function squared overrides the model's --loss_function logistic"):
        assert lepus.Model.load(path, "--loss_function squared").loss == "squared"
