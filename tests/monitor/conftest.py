"""What the monitoring tests share."""

from __future__ import annotations

import pytest

from ..streams.propkit import Sites


@pytest.fixture
def sites(dsn, tmp_path):
    """Sites of the test's backend (see tests/streams/propkit.py)."""
    s = Sites(dsn, tmp_path)
    yield s
    s.close()
