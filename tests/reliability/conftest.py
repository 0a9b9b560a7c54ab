"""Fixtures for the reliability suites: the e2e harness and fixtures (tests/e2e), reused.

Environment as for tests/e2e (ADAPT_BUILD_DIR, ADAPT_IMAGES_DIR, ADAPT_E2E_KEEP), plus
ADAPT_LEAK_CYCLES (test_leaks.py: create/delete cycles, default 4; the long run is 1000).
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
sys.path.insert(0, E2E)
sys.path.insert(0, HERE)

_spec = importlib.util.spec_from_file_location("e2e_conftest", os.path.join(E2E, "conftest.py"))
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)

# The same fixtures and hooks as the e2e suite (a daemon per session or per test, teardown
# that deletes every sandbox and reports what adaptd left behind).
daemon = _e2e.daemon
fresh_daemon = _e2e.fresh_daemon
admin = _e2e.admin
org = _e2e.org
_delete_sandboxes_of_test = _e2e._delete_sandboxes_of_test
pytest_runtest_makereport = _e2e.pytest_runtest_makereport
start_daemon = _e2e.start_daemon
close_daemon = _e2e.close_daemon
