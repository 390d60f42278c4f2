"""Fixtures for test/python: the lepus binary (LEPUS_BINARY, set by ctest) and a scratch folder removed after
each test (pytest's own tmp_path keeps its folders)."""

import os
import shutil
import subprocess
import tempfile

import pytest


@pytest.fixture
def scratch():
    d = tempfile.mkdtemp(prefix="lepus-pytest-")
    try:
        yield d
    finally:
        shutil.rmtree(d)


@pytest.fixture
def cli():
    binary = os.environ.get("LEPUS_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.fail("LEPUS_BINARY must name the lepus binary (ctest sets it)")

    def run(*args, stdin=None, check=True):
        r = subprocess.run([binary, "--quiet", *args], input=stdin, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError(f"lepus {' '.join(args)} failed: {r.stderr}")
        return r

    return run


def read_predictions(path):
    with open(path) as f:
        return [float(line.split()[0]) for line in f if line.strip()]
