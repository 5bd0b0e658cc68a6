# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the Python tests: a domain of this run's own, a topic per test, the program under
test."""

import os
import re

import pytest

# A domain of this run's own (before cerulion reads it): the tests never meet a user's topics or
# another run's, and each test file CTest runs at once has its own process id.
os.environ["CERULION_DOMAIN"] = f"pytest-{os.getpid()}"


@pytest.fixture
def topic(request):
    """A topic name of this test's own."""
    return "/" + re.sub(r"[^A-Za-z0-9_]", "_", request.node.name)


@pytest.fixture
def domain():
    return os.environ["CERULION_DOMAIN"]


@pytest.fixture
def cerulion_bin():
    """The `cerulion` program under test (CTest sets CERULION_BIN, as for the CLI tests)."""
    path = os.environ.get("CERULION_BIN")
    if not path:
        pytest.fail("CERULION_BIN is not set: run through ctest, or set it to build/cerulion")
    return path

