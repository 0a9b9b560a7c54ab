"""Deployed apps: a production copy of a sandbox's files on replicas behind one URL (deploy,
scale, roll back, releases, logs)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from . import _model
from .errors import Unavailable
from .models import App, AppRelease, AppReplicaLog, Operation
from .pages import paginate

if TYPE_CHECKING:
    from ._transport import Transport


class Apps:
    """Deployed apps: a production copy of a sandbox's files on replicas behind one URL."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def deploy(self, sandbox_id: str, start_command: str, port: int, *, name: Optional[str] = None,
               source_path: Optional[str] = None, build_command: Optional[str] = None,
               build_path: Optional[str] = None, replicas: Optional[int] = None,
               env: Optional[Dict[str, str]] = None, readiness_path: Optional[str] = None,
               readiness_timeout_seconds: Optional[int] = None,
               readiness_period_seconds: Optional[int] = None,
               readiness_failure_threshold: Optional[int] = None,
               secrets: Optional[List[str]] = None, timeout: float = 3600,
               idempotency_key: Optional[str] = None) -> App:
        """Builds (optionally), packages and starts the app; answers once a replica is ready
        (readiness_path answers 2xx or 3xx, or without it the port accepts connections). A
        ready replica's check runs again every readiness_period_seconds (1-300, default 5);
        readiness_failure_threshold (1-10, default 3) failures in a row take its traffic until
        one passes. A deploy that outlasts the server's wait is an operation: this polls it (up
        to `timeout` seconds) and raises the deploy's error when it failed. The same
        idempotency_key answers the same deploy (its operation, polled) and deploys nothing again."""
        body: Dict[str, Any] = {"sandboxId": sandbox_id, "startCommand": start_command, "port": port}
        for key, value in (("name", name), ("sourcePath", source_path), ("buildCommand", build_command),
                           ("buildPath", build_path), ("replicas", replicas), ("env", env),
                           ("readinessPath", readiness_path),
                           ("readinessTimeoutSeconds", readiness_timeout_seconds),
                           ("readinessPeriodSeconds", readiness_period_seconds),
                           ("readinessFailureThreshold", readiness_failure_threshold),
                           ("secrets", secrets)):
            if value is not None:
                body[key] = value
        return self._app_of(self._t.call("POST", "/v1/apps", json_body=body,
                                         idempotency_key=idempotency_key), "deploy", timeout)

    def _app_of(self, answer: Dict[str, Any], what: str, timeout: float) -> App:
        """A deploy's or rollback's answer as the app: an operation (kind app.deploy or
        app.rollback) is polled until it ends, and its error raised when it failed."""
        if answer.get("kind") not in ("app.deploy", "app.rollback"):
            return _model.from_json(App, answer)
        op = self.deploy_operation(answer["id"], timeout=timeout)
        if op.phase != "Completed":
            raise Unavailable("%s %s %s: %s" % (what, op.id, op.phase.lower(), op.error or ""),
                              code="unavailable")
        return self.get(op.app_id or "")

    def deploy_operation(self, operation_id: str, timeout: float = 3600) -> Operation:
        """A deploy's or rollback's operation once Completed or Failed (or as it is after
        `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            op = _model.from_json(Operation, self._t.call("GET", "/v1/operations/" + operation_id))
            if op.phase in ("Completed", "Failed") or time.monotonic() > deadline:
                return op
            time.sleep(0.5)

    def list(self, page_size: int = 50) -> Iterator[App]:
        """The organization's apps, newest first, following nextCursor page by page."""
        return paginate(self._t, "/v1/apps", App, page_size)

    def get(self, app_id: str) -> App:
        return _model.from_json(App, self._t.call("GET", "/v1/apps/" + app_id))

    def scale(self, app_id: str, replicas: int) -> App:
        return _model.from_json(App, self._t.call("POST", "/v1/apps/" + app_id + "/scale",
                                                  json_body={"replicas": replicas}))

    def rollback(self, app_id: str, release_id: Optional[str] = None, *,
                 wait_seconds: Optional[int] = None, timeout: float = 3600) -> App:
        """Serves an earlier release again (default: the one before the current one); answers
        once a replica of it serves. A rollback that outlasts the server's wait (`wait_seconds`,
        0-600, default 60) is an operation: this polls it (up to `timeout` seconds) and raises
        the rollback's error when it failed."""
        body: Dict[str, Any] = {} if release_id is None else {"releaseId": release_id}
        if wait_seconds is not None:
            body["waitSeconds"] = wait_seconds
        answer = self._t.call("POST", "/v1/apps/" + app_id + "/rollback", json_body=body)
        return self._app_of(answer, "rollback", timeout)

    def releases(self, app_id: str) -> List[AppRelease]:
        """The app's releases, newest first."""
        return list(paginate(self._t, "/v1/apps/" + app_id + "/releases", AppRelease, 200))

    def logs(self, app_id: str) -> List[AppReplicaLog]:
        """Each replica's latest output (bounded), and the last failed replica's."""
        page = self._t.call("GET", "/v1/apps/" + app_id + "/logs")
        return [_model.from_json(AppReplicaLog, r) for r in page["items"]]

    def delete(self, app_id: str) -> None:
        """Deletes the replicas, the route and the releases; the source sandbox stays."""
        self._t.request("DELETE", "/v1/apps/" + app_id).close()
