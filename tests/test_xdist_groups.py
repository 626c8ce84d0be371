"""`make test` runs pytest-xdist with --dist loadgroup so that the tests of one xdist_group run on one
worker (one Spark JVM, a module's servers and samples built once). pytest-xdist learns a test's group from
its node id, to which it adds "@<group>" on the worker; when a pytest release keeps node ids where
pytest-xdist cannot change them, the marks are ignored without a word and every worker builds everything.
"""
import pytest

pytestmark = pytest.mark.xdist_group("xdist-group-check")


def test_a_marked_test_reaches_the_scheduler_with_its_group(request):
    if not getattr(request.config.option, "loadgroup", False):  # set on the workers of --dist loadgroup
        pytest.skip("only under pytest-xdist's --dist loadgroup, as make test runs")
    assert request.node.nodeid.endswith("@xdist-group-check"), request.node.nodeid
