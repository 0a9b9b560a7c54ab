"""Fixtures for the end-to-end tests: a real adaptd, its admin key, fresh organizations.

Environment: ADAPT_BUILD_DIR (default build/) holds bin/adaptd, bin/adapt and their helpers;
ADAPT_IMAGES_DIR (default $ADAPT_BUILD_DIR/images) holds the default image built by
scripts/build-image.sh. ADAPT_E2E_KEEP=1 keeps every temporary state directory.
"""

import atexit
import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

_daemons = []
_failed = False


def _interrupt(signum, frame):
    # A SIGTERM (timeout(1) in scripts/test.sh) becomes an interrupt, so pytest still runs the
    # fixtures' teardown: sandboxes deleted, adaptd stopped.
    raise KeyboardInterrupt("SIGTERM")


signal.signal(signal.SIGTERM, _interrupt)


@atexit.register
def _last_resort():
    for d in _daemons:
        if d.proc and d.proc.poll() is None:
            d.proc.kill()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    global _failed
    outcome = yield
    if outcome.get_result().failed:
        _failed = True


def start_daemon():
    d = harness.Daemon()
    _daemons.append(d)
    d.start()
    return d


def close_daemon(d):
    keep = _failed or os.environ.get("ADAPT_E2E_KEEP") == "1"
    left = d.close(keep=keep)
    if any(left.values()):
        sys.stderr.write("\nadaptd at %s left behind: %r\n" % (d.base, left))
    if keep:
        sys.stderr.write("\nadaptd state and log kept in %s\n" % d.base)


@pytest.fixture(scope="session")
def daemon():
    """The shared adaptd for the session (tests that crash or restart it make their own)."""
    d = start_daemon()
    yield d
    close_daemon(d)


@pytest.fixture
def fresh_daemon():
    """An adaptd of this test's own, closed at the end of the test."""
    d = start_daemon()
    yield d
    close_daemon(d)


@pytest.fixture(scope="session")
def admin(daemon):
    """Client with the admin key (organization "admin")."""
    return daemon.admin


@pytest.fixture
def org(daemon):
    """Client for a new organization of this test's own, so its lists start empty."""
    return daemon.new_org()


@pytest.fixture(autouse=True)
def _delete_sandboxes_of_test(request):
    """Deletes the sandboxes a test created once it ends, so they do not pile up."""
    if "daemon" not in request.fixturenames and "fresh_daemon" not in request.fixturenames:
        yield
        return
    d = request.getfixturevalue("fresh_daemon" if "fresh_daemon" in request.fixturenames else "daemon")
    first = len(d.created)
    yield
    if d.proc is None or d.proc.poll() is not None:
        return
    harness.delete_concurrently(d.created[first:])
