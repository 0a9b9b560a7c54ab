"""Automations: a command run in a sandbox of the organization on a schedule, or a controller
holding one running or hibernated. Their runs are read with Client.runs
(runs.list(automation_id=...))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from . import _model
from .models import Automation, Run
from .pages import paginate

if TYPE_CHECKING:
    from ._transport import Transport


class Automations:
    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def create(self, sandbox_id: str, argv: Optional[List[str]] = None, *,
               command: Optional[str] = None, interval_seconds: Optional[int] = None,
               cron: Optional[str] = None, time_zone: Optional[str] = None,
               name: Optional[str] = None, cwd: Optional[str] = None,
               env: Optional[Dict[str, str]] = None, timeout_seconds: Optional[int] = None,
               overlap: Optional[str] = None,
               catch_up_seconds: Optional[int] = None,
               max_attempts: Optional[int] = None) -> Automation:
        """Schedules the command (argv, or a shell `command`) every interval_seconds or at
        the slots of cron in time_zone; the answer lists the next five run times."""
        body: Dict[str, Any] = {"sandboxId": sandbox_id}
        for key, value in (("argv", argv), ("command", command),
                           ("intervalSeconds", interval_seconds), ("cron", cron),
                           ("timeZone", time_zone), ("name", name), ("cwd", cwd), ("env", env),
                           ("timeoutSeconds", timeout_seconds), ("overlap", overlap),
                           ("catchUpSeconds", catch_up_seconds),
                           ("maxAttempts", max_attempts)):
            if value is not None:
                body[key] = value
        return _model.from_json(Automation, self._t.call("POST", "/v1/automations", json_body=body))

    def create_controller(self, sandbox_id: str, desired_state: str, *,
                          interval_seconds: Optional[int] = None, cron: Optional[str] = None,
                          time_zone: Optional[str] = None,
                          window_seconds: Optional[int] = None,
                          name: Optional[str] = None) -> Automation:
        """A controller holding the sandbox in desired_state ("running" or "hibernated"); with
        interval_seconds or cron (in time_zone), only inside windows of window_seconds from
        each slot, and the other state outside them. The answer lists the next five changes."""
        body: Dict[str, Any] = {"sandboxId": sandbox_id, "kind": "controller",
                                "desiredState": desired_state}
        for key, value in (("intervalSeconds", interval_seconds), ("cron", cron),
                           ("timeZone", time_zone), ("windowSeconds", window_seconds),
                           ("name", name)):
            if value is not None:
                body[key] = value
        return _model.from_json(Automation, self._t.call("POST", "/v1/automations", json_body=body))

    def list(self, page_size: int = 50) -> Iterator[Automation]:
        """The organization's automations, newest first, following nextCursor page by page."""
        return paginate(self._t, "/v1/automations", Automation, page_size)

    def get(self, automation_id: str) -> Automation:
        return _model.from_json(Automation, self._t.call("GET", "/v1/automations/" + automation_id))

    def _set(self, automation_id: str, verb: str, version: Optional[int]) -> Automation:
        headers = {"If-Match": '"%d"' % version} if version is not None else None
        return _model.from_json(Automation, self._t.call(
            "POST", "/v1/automations/%s/%s" % (automation_id, verb), headers=headers))

    def enable(self, automation_id: str, version: Optional[int] = None) -> Automation:
        """Resumes it; with version, only if it is still at that version (else Conflict)."""
        return self._set(automation_id, "enable", version)

    def disable(self, automation_id: str, version: Optional[int] = None) -> Automation:
        """Pauses it; with version, only if it is still at that version (else Conflict)."""
        return self._set(automation_id, "disable", version)

    def trigger(self, automation_id: str) -> Run:
        """A manual run now; the schedule does not shift."""
        return _model.from_json(Run, self._t.call(
            "POST", "/v1/automations/" + automation_id + "/trigger"))

    def delete(self, automation_id: str) -> None:
        """Deletes the automation, never its sandbox."""
        self._t.request("DELETE", "/v1/automations/" + automation_id).close()
