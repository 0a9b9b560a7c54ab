"""Sandboxes: `client.sandboxes` (create, get, list, delete) and the `Sandbox` handle, whose
`commands`, `files`, `endpoints` and `artifacts` act inside it."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import time
from typing import (TYPE_CHECKING, Any, Dict, Generator, Iterable, Iterator, List, Optional, Sequence,
                    Tuple, Type, Union)

from . import _model
from ._sse import parse_events
from ._transport import new_idempotency_key
from .commands import Commands, CommandLine
from .errors import AdaptError, EventsReset, NotFound, RequestTimeout, SandboxFailed
from .files import Files
from .models import (Artifact, ArtifactList, Checkpoint, CommandResult, Endpoint,
                     ObjectStorageAttachment,
                     SandboxInfo, StatusEvent)
from .pages import paginate

if TYPE_CHECKING:
    from types import TracebackType

    from ._transport import Transport
    from .client import Client

# Statuses after which a sandbox never becomes running again by itself.
ENDED = ("completed", "failed", "unresolved", "deleting", "deleted", "unavailable")
DEFAULT_CREATE_TIMEOUT = 300.0


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


class Endpoints:
    """`sandbox.endpoints`: public hostnames for the sandbox's ports."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def create(self, port: int, *, idempotency_key: Optional[str] = None) -> Endpoint:
        """A public hostname for `port`; the same idempotency_key answers the same endpoint."""
        raw = self._sb._t.call("POST", self._sb._path("/endpoints"), json_body={"port": port},
                               idempotency_key=idempotency_key)
        return _model.from_json(Endpoint, raw)

    def list(self, page_size: int = 200) -> List[Endpoint]:
        """The sandbox's endpoints, newest first, following nextCursor page by page."""
        return list(paginate(self._sb._t, self._sb._path("/endpoints"), Endpoint, page_size))

    def delete(self, endpoint_id: str) -> None:
        self._sb._t.request("DELETE", self._sb._path("/endpoints/" + endpoint_id)).close()

    def delete_by_port(self, port: int) -> List[str]:
        """Removes every endpoint to port (their routes go at once; the sandbox runs on) and
        answers the ids removed: none is no error."""
        raw = self._sb._t.call("DELETE", self._sb._path("/endpoints"), query={"port": port})
        return [str(e) for e in raw["removed"]]


class Artifacts:
    """`sandbox.artifacts`: workspace files copied into object storage, under
    artifacts/<sandbox id>/ unless given another key."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def save(self, path: str, key: Optional[str] = None, ttl_seconds: Optional[int] = None) -> Artifact:
        """Copies one workspace file (relative to /workspace, at most 100 MiB) to object
        storage and answers the object with a download link valid ttl_seconds (default an
        hour). A file that looks like a credential is refused (InvalidArgument, field `path`)."""
        body: Dict[str, Any] = {"path": path}
        if key is not None:
            body["key"] = key
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        return _model.from_json(Artifact, self._sb._t.call("POST", self._sb._path("/artifacts"), json_body=body))

    def list(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> ArtifactList:
        """One page of the artifacts in key order; pass its `next_cursor` for the next one."""
        query: Dict[str, Any] = {"limit": limit, "cursor": cursor}
        raw = self._sb._t.call("GET", self._sb._path("/artifacts"), query=query)
        return _model.from_json(ArtifactList, raw)


class Sandbox:
    """A sandbox of the client's organization. `info` is its record as last read.

    `with adapt.Sandbox.create() as sb:` deletes it when the block ends."""

    def __init__(self, client: "Client", info: SandboxInfo) -> None:
        self.client = client
        self._t: "Transport" = client.transport
        self.info = info
        self.id = info.id
        self.commands = Commands(self._t, self.id)
        self.files = Files(self._t, self.id)
        self.endpoints = Endpoints(self)
        self.artifacts = Artifacts(self)

    @classmethod
    def create(cls: Type["Sandbox"], *, client: Optional["Client"] = None, **kwargs: Any) -> "Sandbox":
        """Creates a sandbox with a client from ADAPT_URL / ADAPT_API_KEY (or `client`); the
        arguments are those of `Sandboxes.create`."""
        from .client import Client
        return (client or Client()).sandboxes.create(**kwargs)

    @classmethod
    def connect(cls: Type["Sandbox"], sandbox_id: str, *, client: Optional["Client"] = None) -> "Sandbox":
        """A handle for an existing sandbox (NotFound if the key's organization has none)."""
        from .client import Client
        return (client or Client()).sandboxes.get(sandbox_id)

    def __repr__(self) -> str:
        return "Sandbox(id=%r, status=%r)" % (self.id, self.info.status)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional["TracebackType"]) -> None:
        self.delete(wait=False)

    def _path(self, suffix: str = "") -> str:
        return "/v1/sandboxes/%s%s" % (self.id, suffix)

    @property
    def status(self) -> str:
        return self.info.status

    def refresh(self, wait_seconds: int = 0) -> SandboxInfo:
        """Reads the record again. wait_seconds (at most 60): while it is provisioning, adaptd
        answers once it has left provisioning or after that long (MCP's wait_for_sandbox)."""
        if wait_seconds:
            raw = self._t.call("GET", self._path(), query={"waitSeconds": str(wait_seconds)},
                               timeout=self._t.timeout + wait_seconds)
        else:
            raw = self._t.call("GET", self._path())
        self.info = _model.from_json(SandboxInfo, raw)
        return self.info

    def delete(self, wait: bool = True, timeout: float = DEFAULT_CREATE_TIMEOUT) -> None:
        """Deletes the sandbox (repeating is safe); wait: until its record says `deleted`."""
        resp = self._t.request("DELETE", self._path())
        resp.close()
        if resp.status == 202 and wait:
            self.wait_until(("deleted",), timeout=timeout, fail_on_end=False)
        elif resp.status == 204:
            # A new record: ones answered earlier stay as they were.
            self.info = dataclasses.replace(self.info, status="deleted")

    def stats(self) -> Dict[str, Any]:
        """CPU time and memory of the running sandbox now (sandboxId, at, cpu, memoryMiB,
        cpuUsageUsec, memoryBytes, pids); 409 unless it is running."""
        result: Dict[str, Any] = self._t.call("GET", self._path("/stats"))
        return result

    def stop(self) -> SandboxInfo:
        """Stops (hibernates) a running sandbox; answers once it is `hibernated`."""
        self.info = _model.from_json(SandboxInfo, self._t.call("POST", self._path("/stop"), json_body={}))
        return self.info

    def create_checkpoint(self, name: str, keep: bool = False, *,
                          idempotency_key: Optional[str] = None) -> Checkpoint:
        """Saves the running durable sandbox's processes, memory and disk as `name`; it keeps
        running. keep: the checkpoint outlives the sandbox's deletion. The answer carries its
        checkpoint operation (`operation_id`). The same idempotency_key answers the same
        checkpoint and takes no second one."""
        body: Dict[str, Any] = {"name": name}
        if keep:
            body["keep"] = True
        raw = self._t.call("POST", self._path("/checkpoints"), json_body=body,
                           idempotency_key=idempotency_key)
        return _model.from_json(Checkpoint, raw)

    def list_checkpoints(self) -> List[Checkpoint]:
        """The sandbox's checkpoints, newest first."""
        return list(paginate(self._t, self._path("/checkpoints"), Checkpoint, 200))

    def delete_checkpoint(self, name: str) -> None:
        self._t.request("DELETE", self._path("/checkpoints/" + name)).close()

    def restore_checkpoint(self, name: str) -> SandboxInfo:
        """Rolls the running sandbox back to checkpoint `name` (processes, memory, files)."""
        self.info = _model.from_json(
            SandboxInfo, self._t.call("POST", self._path("/checkpoints/" + name + "/restore"), json_body={}))
        return self.info

    def fork_checkpoint(self, name: str, **kwargs: Any) -> "Sandbox":
        """A new sandbox from this sandbox's checkpoint `name` (see `Sandboxes.fork`)."""
        return self.client.sandboxes.fork(self.id + "/" + name, **kwargs)

    def start(self, wait: bool = True, timeout: float = DEFAULT_CREATE_TIMEOUT) -> SandboxInfo:
        """Starts a hibernated sandbox; wait: until it is running again."""
        self.info = _model.from_json(SandboxInfo, self._t.call("POST", self._path("/start"), json_body={}))
        if wait:
            self.wait_until(("running",), timeout=timeout)
        return self.info

    def events(self, last_event_id: Optional[str] = None, timeout: Optional[float] = None) -> Generator[StatusEvent, None, None]:
        """The sandbox's status events (SSE): its history from `provisioning`, then live. The
        stream does not end by itself: stop iterating (or close the iterator) when done."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        resp = self._t.request("GET", self._path("/events"), headers=headers, timeout=timeout)
        try:
            for ev in parse_events(resp.readline):
                if ev.event == "status":
                    yield _status_event(ev.data, ev.id)
        finally:
            resp.close()

    def startup_output(self, timeout: Optional[float] = None) -> Generator[Tuple[str, str], None, None]:
        """The startup command's output as it is produced (SSE), as (stream, text) pairs:
        ("stdout", text) and ("stderr", text) were appended; ("reset", "") says the oldest
        output was dropped (past 256 KiB) and the two pairs that follow hold all that is kept.
        It ends once the sandbox no longer runs, with `info` its final record. Conflict for an
        interactive sandbox (no startup command)."""
        resp = self._t.request("GET", self._path("/startup/stream"),
                               headers={"Accept": "text/event-stream"}, timeout=timeout)
        try:
            for ev in parse_events(resp.readline):
                data = json.loads(ev.data)
                if ev.event in ("stdout", "stderr"):
                    yield ev.event, str(data.get("data", ""))
                elif ev.event == "reset":
                    yield "reset", ""
                    yield "stdout", str(data.get("stdout", ""))
                    yield "stderr", str(data.get("stderr", ""))
                elif ev.event == "result":
                    self.info = _model.from_json(SandboxInfo, data)
                    return
        finally:
            resp.close()

    def wait_until(self, statuses: Sequence[str] = ("running",), timeout: float = DEFAULT_CREATE_TIMEOUT,
                   fail_on_end: bool = True) -> SandboxInfo:
        """Waits, on the sandbox's event stream, until its status is one of statuses, and
        answers the record. SandboxFailed when it ends otherwise (fail_on_end), RequestTimeout
        after timeout seconds."""
        wanted = set(statuses)
        deadline = time.monotonic() + timeout
        last_id: Optional[str] = None
        while True:
            info = self.refresh()
            if info.status in wanted:
                return info
            if fail_on_end and info.status in ENDED:
                raise SandboxFailed("sandbox %s is %s, not %s: %s" % (
                    self.id, info.status, "/".join(statuses),
                    info.error or (info.startup.error if info.startup else None) or "no error recorded"),
                    self.id, info.status)
            left = deadline - time.monotonic()
            if left <= 0:
                raise RequestTimeout("sandbox %s is still %s after %s s (wanted %s)" % (
                    self.id, info.status, timeout, "/".join(statuses)), code="request_timeout")
            try:
                with contextlib.closing(self.events(last_event_id=last_id, timeout=min(left, 30.0))) as evs:
                    for ev in evs:
                        last_id = ev.id or last_id
                        if ev.status in wanted or ev.status in ENDED:
                            break
            except (socket.timeout, OSError):
                pass  # no event for a while or the stream broke: re-read the record, go on

    def attach_object_storage(self, ttl_seconds: Optional[int] = None, wait: bool = True,
                              timeout: float = DEFAULT_CREATE_TIMEOUT) -> ObjectStorageAttachment:
        """Gives the sandbox a storage token (its previous one revoked) in its environment as
        SANDBOX_STORAGE_ENDPOINT and SANDBOX_STORAGE_TOKEN. adaptd restarts the sandbox for it
        (`restarted`; its processes end); wait: until it runs again."""
        body: Dict[str, Any] = {} if ttl_seconds is None else {"ttlSeconds": ttl_seconds}
        raw = self._t.call("POST", self._path("/object-storage"), json_body=body)
        attachment = _model.from_json(ObjectStorageAttachment, raw)
        if attachment.restarted and wait:
            self.wait_until(("running",), timeout=timeout)
        return attachment

    def run(self, cmd: CommandLine, **kwargs: Any) -> CommandResult:
        """Shorthand for `commands.run`."""
        return self.commands.run(cmd, **kwargs)

    def run_python(self, code: str, **kwargs: Any) -> CommandResult:
        return self.commands.run_python(code, **kwargs)


def _status_event(data: str, event_id: Optional[str]) -> StatusEvent:
    ev = _model.from_json(StatusEvent, json.loads(data))
    ev.id = event_id
    return ev


class Sandboxes:
    """`client.sandboxes`: the organization's sandboxes."""

    def __init__(self, client: "Client") -> None:
        self._client = client
        self._t = client.transport

    def create(self, *, image: Optional[str] = None, image_id: Optional[str] = None,
               cpu: Optional[int] = None, memory_mib: Optional[int] = None, disk_mib: Optional[int] = None,
               ttl_seconds: Union[int, None, _Unset] = UNSET, labels: Optional[Dict[str, str]] = None,
               name: Optional[str] = None, env: Optional[Dict[str, str]] = None,
               secrets: Optional[Iterable[str]] = None, network: Optional[Dict[str, Any]] = None,
               startup: Optional[Dict[str, Any]] = None, security_profile: Optional[str] = None,
               startup_class: Optional[str] = None, storage: Optional[str] = None,
               idle_timeout_seconds: Optional[int] = None, database: Optional[bool] = None,
               extra: Optional[Dict[str, Any]] = None, wait: bool = True,
               timeout: float = DEFAULT_CREATE_TIMEOUT, idempotency_key: Optional[str] = None) -> Sandbox:
        """Creates a sandbox and, with wait (the default), waits until it runs (or, with a
        startup command, has ended). ttl_seconds=None: no expiry. idle_timeout_seconds:
        hibernate it after that long unused. name: labels.name. The
        request carries an Idempotency-Key (made here unless given), so a retry after a
        dropped connection never makes a second sandbox."""
        body: Dict[str, Any] = {}
        fields = (("image", image), ("imageId", image_id), ("cpu", cpu), ("memoryMiB", memory_mib),
                  ("diskMiB", disk_mib), ("env", env), ("network", network), ("startup", startup),
                  ("securityProfile", security_profile), ("startupClass", startup_class),
                  ("storage", storage), ("idleTimeoutSeconds", idle_timeout_seconds),
                  ("database", database))
        for key, value in fields:
            if value is not None:
                body[key] = value
        if not isinstance(ttl_seconds, _Unset):
            body["ttlSeconds"] = ttl_seconds
        if labels or name:
            body["labels"] = dict(labels or {})
            if name:
                body["labels"]["name"] = name
        if secrets is not None:
            body["secrets"] = list(secrets)
        body.update(extra or {})
        raw = self._t.call("POST", "/v1/sandboxes", json_body=body,
                           idempotency_key=idempotency_key or new_idempotency_key())
        sb = Sandbox(self._client, _model.from_json(SandboxInfo, raw))
        if wait:
            targets = ("running", "completed") if startup and startup.get("mode") in ("command", "image") else ("running",)
            sb.wait_until(targets, timeout=timeout)
        return sb

    def fork(self, from_checkpoint: str, *, ttl_seconds: Union[int, None, _Unset] = UNSET,
             labels: Optional[Dict[str, str]] = None, wait: bool = True,
             timeout: float = DEFAULT_CREATE_TIMEOUT, idempotency_key: Optional[str] = None) -> Sandbox:
        """A new sandbox from named checkpoint `from_checkpoint` ("<sandboxId>/<name>"): its
        processes, memory and files, the settings of the checkpoint's sandbox and a network of
        its own. ttl_seconds and labels default to the source's. Its `info.operation_id` is the
        fork operation; wait: until the fork runs."""
        body: Dict[str, Any] = {"fromCheckpoint": from_checkpoint}
        if not isinstance(ttl_seconds, _Unset):
            body["ttlSeconds"] = ttl_seconds
        if labels is not None:
            body["labels"] = dict(labels)
        raw = self._t.call("POST", "/v1/sandboxes", json_body=body,
                           idempotency_key=idempotency_key or new_idempotency_key())
        sb = Sandbox(self._client, _model.from_json(SandboxInfo, raw))
        operation_id = sb.info.operation_id
        if wait:
            sb.wait_until(("running",), timeout=timeout)
            sb.info.operation_id = operation_id
        return sb

    def get(self, sandbox_id: str) -> Sandbox:
        raw = self._t.call("GET", "/v1/sandboxes/" + sandbox_id)
        return Sandbox(self._client, _model.from_json(SandboxInfo, raw))

    def list(self, query: Optional[str] = None, page_size: int = 50) -> Iterator[Sandbox]:
        """The organization's sandboxes, newest first, following nextCursor page by page.
        query: part of labels.name (ignoring case) or the start of an id."""
        for info in paginate(self._t, "/v1/sandboxes", SandboxInfo, page_size, {"query": query}):
            yield Sandbox(self._client, info)

    def delete(self, sandbox_id: str, wait: bool = True) -> None:
        self.get(sandbox_id).delete(wait=wait)

    def checkpoints(self, sandbox_id: Optional[str] = None, kept: Optional[bool] = None,
                    page_size: int = 50) -> Iterator[Checkpoint]:
        """The organization's checkpoints, newest first, following nextCursor page by page:
        those of its live sandboxes and the kept ones of its deleted sandboxes
        (`sandbox_deleted`). sandbox_id: only that sandbox's; kept: only those taken with
        keep (True) or without (False)."""
        query: Dict[str, Any] = {"sandboxId": sandbox_id}
        if kept is not None:
            query["kept"] = "true" if kept else "false"
        return paginate(self._t, "/v1/checkpoints", Checkpoint, page_size, query)

    def endpoints(self, page_size: int = 200) -> List[Endpoint]:
        """Every endpoint of the organization's sandboxes, newest first."""
        return list(paginate(self._t, "/v1/endpoints", Endpoint, page_size))

    def events(self, last_event_id: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[StatusEvent]:
        """Status events of every sandbox of the organization, from now on (or after
        last_event_id). The stream does not end by itself. EventsReset when the server no
        longer keeps last_event_id (events were missed): list again, then follow again from
        its last_event_id."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        resp = self._t.request("GET", "/v1/events", headers=headers, timeout=timeout)
        try:
            for ev in parse_events(resp.readline):
                if ev.event == "status":
                    yield _status_event(ev.data, ev.id)
                elif ev.event == "reset":
                    reset = json.loads(ev.data)
                    raise EventsReset(str(reset.get("reason", "events were missed")),
                                      str(reset.get("lastEventId", ev.id or "")))
        finally:
            resp.close()


__all__ = ["Sandbox", "Sandboxes", "Endpoints", "Artifacts", "UNSET", "ENDED", "AdaptError", "NotFound"]
