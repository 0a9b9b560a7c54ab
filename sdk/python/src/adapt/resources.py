"""The organization's other resources: images, secrets, persistent storage, object storage
and static sites."""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.parse
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Type, TypeVar, Union

from . import _model
from ._sse import parse_events
from .errors import AdaptError, EventsReset, NotFound, RequestTimeout
from .files import LocalPath, _save
from .models import (Account, AlertEvent, ApiKey, Database, DatabaseDump, Image, Job, LedgerEntry, NewApiKey, NewStorageToken, NewUser,
                     ObjectLink, Operation, Org, Plan, Progress, Run, RunEvent, Secret, Site, Storage,
                     StorageToken, StoredObject, UsageReport, User)
from .pages import paginate

if TYPE_CHECKING:
    from ._transport import Transport

ProgressCallback = Callable[[Progress], None]
_E = TypeVar("_E", RunEvent, AlertEvent)


def _org_events(t: "Transport", kind: str, model: Type[_E], last_event_id: Optional[str],
                timeout: Optional[float]) -> Iterator[_E]:
    """The `kind` frames of the organization's GET /v1/events as `model`s, each with its SSE
    id (for Last-Event-ID). EventsReset when the server no longer keeps last_event_id."""
    headers = {"Accept": "text/event-stream"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    resp = t.request("GET", "/v1/events", headers=headers, timeout=timeout)
    try:
        for ev in parse_events(resp.readline):
            if ev.event == kind:
                frame = _model.from_json(model, json.loads(ev.data))
                frame.id = ev.id
                yield frame
            elif ev.event == "reset":
                reset = json.loads(ev.data)
                raise EventsReset(str(reset.get("reason", "events were missed")),
                                  str(reset.get("lastEventId", ev.id or "")))
    finally:
        resp.close()


class Images:
    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def pull(self, reference: str, *, username: Optional[str] = None, password: Optional[str] = None,
             wait: bool = True, on_progress: Optional[ProgressCallback] = None,
             timeout: float = 1800.0, idempotency_key: Optional[str] = None) -> Image:
        """Pulls an image into the organization; wait: until it is ready (on_progress gets
        its bytes so far), ImageFailed-style AdaptError when the pull fails. The same
        idempotency_key answers the same image and pulls nothing again."""
        body: Dict[str, Any] = {"reference": reference}
        if username is not None or password is not None:
            body["credentials"] = {"username": username or "", "password": password or ""}
        image = _model.from_json(Image, self._t.call("POST", "/v1/images", json_body=body,
                                                     idempotency_key=idempotency_key))
        return self.wait(image.id, on_progress, timeout) if wait else image

    def commit(self, sandbox_id: str, name: str, *, tag: Optional[str] = None, wait: bool = True,
               on_progress: Optional[ProgressCallback] = None, timeout: float = 1800.0,
               idempotency_key: Optional[str] = None) -> Image:
        """Saves a sandbox's filesystem (running, or stopped durable) as an image of the
        organization, name:tag (tag "latest" when None); wait: until it is ready. Create
        sandboxes from it with image_id. The same idempotency_key answers the same image and
        saves nothing again."""
        body: Dict[str, Any] = {"name": name}
        if tag is not None:
            body["tag"] = tag
        path = "/v1/sandboxes/" + urllib.parse.quote(sandbox_id, safe="") + "/image"
        image = _model.from_json(Image, self._t.call("POST", path, json_body=body,
                                                     idempotency_key=idempotency_key))
        return self.wait(image.id, on_progress, timeout) if wait else image

    def import_archive(self, archive: Union[LocalPath, IO[bytes]], name: Optional[str] = None,
                       wait: bool = True, on_progress: Optional[ProgressCallback] = None,
                       timeout: float = 1800.0, idempotency_key: Optional[str] = None) -> Image:
        """Imports an OCI layout or `docker save` archive (tar, gzip or zstd), streamed. name:
        which image of an archive holding several (its ref name or RepoTag). The same
        idempotency_key, name and archive answer the same image without importing again."""
        with contextlib.ExitStack() as stack:
            if isinstance(archive, (str, os.PathLike)):
                body: IO[bytes] = stack.enter_context(open(archive, "rb"))
            else:
                body = archive
            raw = self._t.call("POST", "/v1/images/import", query={"name": name}, body=body,
                               headers={"Content-Type": "application/x-tar"},
                               idempotency_key=idempotency_key)
        image = _model.from_json(Image, raw)
        return self.wait(image.id, on_progress, timeout) if wait else image

    def wait(self, image_id: str, on_progress: Optional[ProgressCallback] = None,
             timeout: float = 1800.0) -> Image:
        deadline = time.monotonic() + timeout
        while True:
            image = self.get(image_id)
            if on_progress is not None:
                on_progress(image.progress)
            if image.status == "ready":
                return image
            if image.status == "failed":
                raise AdaptError("image %s failed: %s" % (image_id, image.error or "no error recorded"),
                                 code="failed_precondition")
            if time.monotonic() > deadline:
                raise RequestTimeout("image %s is still %s after %s s" % (image_id, image.status, timeout),
                                     code="request_timeout")
            time.sleep(0.5)

    def get(self, image_id: str) -> Image:
        return _model.from_json(Image, self._t.call("GET", "/v1/images/" + image_id))

    def list(self, page_size: int = 50) -> Iterator[Image]:
        """The organization's images, newest first, following nextCursor page by page."""
        return paginate(self._t, "/v1/images", Image, page_size)

    def delete(self, image_id: str) -> None:
        self._t.request("DELETE", "/v1/images/" + image_id).close()

    def operation(self, operation_id: str) -> Operation:
        return _model.from_json(Operation, self._t.call("GET", "/v1/operations/" + operation_id))


class Secrets:
    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def set(self, name: str, value: str, *, idempotency_key: Optional[str] = None) -> Secret:
        """Creates the secret, or gives it a new version (once per idempotency_key)."""
        return _model.from_json(Secret, self._t.call("POST", "/v1/secrets", json_body={"name": name, "value": value},
                                                     idempotency_key=idempotency_key))

    def get(self, name: str) -> Secret:
        return _model.from_json(Secret, self._t.call("GET", "/v1/secrets/" + name))

    def list(self, page_size: int = 50) -> Iterator[Secret]:
        return paginate(self._t, "/v1/secrets", Secret, page_size)

    def delete(self, name: str) -> None:
        self._t.request("DELETE", "/v1/secrets/" + name).close()


class Databases:
    """The organization's PostgreSQL database. No answer holds its host or password: a sandbox
    created with database=True gets those in its environment (DATABASE_URL, PG*)."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def get(self) -> Database:
        return _model.from_json(Database, self._t.call("GET", "/v1/database"))

    def create(self) -> Database:
        """Makes the database (idempotent)."""
        return _model.from_json(Database, self._t.call("POST", "/v1/database", json_body={}))

    def rotate(self) -> Database:
        """A new password; sandboxes created afterwards get it."""
        return _model.from_json(Database, self._t.call("POST", "/v1/database/rotate", json_body={}))

    def dump(self) -> DatabaseDump:
        """A pg_dump -Fc archive into the organization's objects (key database-dumps/...)."""
        return _model.from_json(DatabaseDump, self._t.call("POST", "/v1/database/dump", json_body={}))

    def delete(self, confirm: str) -> None:
        """Deletes the database and its data; `confirm` must be the organization's id."""
        self._t.request("DELETE", "/v1/database", json_body={"confirm": confirm}).close()


class StorageVolumes:
    """Persistent storage, mounted at /workspace of durable sandboxes."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def create(self, name: str, size_mib: Optional[int] = None, *,
               idempotency_key: Optional[str] = None) -> Storage:
        body: Dict[str, Any] = {"name": name}
        if size_mib is not None:
            body["sizeMiB"] = size_mib
        return _model.from_json(Storage, self._t.call("POST", "/v1/storage", json_body=body,
                                                      idempotency_key=idempotency_key))

    def get(self, name: str) -> Storage:
        return _model.from_json(Storage, self._t.call("GET", "/v1/storage/" + name))

    def list(self, page_size: int = 50) -> Iterator[Storage]:
        return paginate(self._t, "/v1/storage", Storage, page_size)

    def read(self, name: str, path: str) -> bytes:
        """A file of the storage (relative to /workspace or under it), whether or not a sandbox
        that mounts it runs."""
        return self._t.request("GET", "/v1/storage/" + name + "/files", query={"path": path},
                               headers={"Accept": "application/octet-stream"}).read()

    def delete(self, name: str) -> None:
        """Deletes the storage and its files (the API's confirmation is the name itself)."""
        self._t.request("DELETE", "/v1/storage/" + name, json_body={"confirm": name}).close()


class Objects:
    """Object storage: keys and their bytes, streamed."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def put(self, key: str, data: Union[bytes, IO[bytes]], content_type: str = "application/octet-stream") -> StoredObject:
        raw = self._t.call("PUT", "/v1/objects/content", query={"key": key}, body=data,
                           headers={"Content-Type": content_type})
        return _model.from_json(StoredObject, raw)

    def get(self, key: str) -> bytes:
        return self._t.request("GET", "/v1/objects/content", query={"key": key},
                               headers={"Accept": "*/*"}).read()

    def exists(self, key: str) -> bool:
        """Whether the object exists (a HEAD: no bytes move)."""
        try:
            self._t.request("HEAD", "/v1/objects/content", query={"key": key}).close()
            return True
        except NotFound:
            return False

    def download(self, key: str, local_path: LocalPath) -> int:
        resp = self._t.request("GET", "/v1/objects/content", query={"key": key}, headers={"Accept": "*/*"})
        return _save(resp.iter_bytes(), local_path)

    def delete(self, key: str) -> None:
        self._t.request("DELETE", "/v1/objects/content", query={"key": key}).close()

    def link(self, key: str, ttl_seconds: Optional[int] = None) -> ObjectLink:
        """A download link for one object that needs no credentials, until it expires."""
        body: Dict[str, Any] = {"key": key}
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        return _model.from_json(ObjectLink, self._t.call("POST", "/v1/objects/url", json_body=body))

    def create_token(self, name: Optional[str] = None, ttl_seconds: Optional[int] = None, *,
                     idempotency_key: Optional[str] = None) -> NewStorageToken:
        """A storage token: S3 credentials for the storage gateway only, expiring, revocable.
        A replay of idempotency_key answers the token without its secret (shown once)."""
        body: Dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        return _model.from_json(NewStorageToken, self._t.call("POST", "/v1/storage-tokens", json_body=body,
                                                              idempotency_key=idempotency_key))

    def list_tokens(self) -> List[StorageToken]:
        """Every storage token, revoked and expired ones too, newest first."""
        return list(paginate(self._t, "/v1/storage-tokens", StorageToken, 200))

    def revoke_token(self, token_id: str) -> None:
        self._t.request("DELETE", "/v1/storage-tokens/" + token_id).close()

    def list(self, prefix: Optional[str] = None, page_size: int = 200) -> Iterator[StoredObject]:
        """Every object under prefix, in key order (S3's), following nextCursor page by page."""
        return paginate(self._t, "/v1/objects", StoredObject, page_size, {"prefix": prefix})


class Jobs:
    """One-shot jobs: a command run once in a fresh instant sandbox, retried only after
    infrastructure failures (a non-zero exit is the command's result)."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def submit(self, argv: Optional[List[str]] = None, *, command: Optional[str] = None,
               image: Optional[str] = None, cpu: Optional[int] = None,
               memory_mib: Optional[int] = None, env: Optional[Dict[str, str]] = None,
               secrets: Optional[List[str]] = None, egress: Optional[str] = None,
               cwd: Optional[str] = None, timeout_seconds: Optional[int] = None,
               max_attempts: Optional[int] = None,
               idempotency_key: Optional[str] = None) -> Job:
        """Queues the job; the same idempotency_key returns the same job again."""
        body: Dict[str, Any] = {}
        if argv is not None:
            body["argv"] = argv
        if command is not None:
            body["command"] = command
        for key, value in (("image", image), ("cpu", cpu), ("memoryMiB", memory_mib),
                           ("env", env), ("secrets", secrets), ("cwd", cwd),
                           ("timeoutSeconds", timeout_seconds), ("maxAttempts", max_attempts)):
            if value is not None:
                body[key] = value
        if egress is not None:
            body["network"] = {"egress": egress}
        return _model.from_json(Job, self._t.call("POST", "/v1/jobs", json_body=body,
                                                  idempotency_key=idempotency_key))

    def get(self, job_id: str) -> Job:
        return _model.from_json(Job, self._t.call("GET", "/v1/jobs/" + job_id))

    def list(self, page_size: int = 50) -> Iterator[Job]:
        return paginate(self._t, "/v1/jobs", Job, page_size)

    def cancel(self, job_id: str) -> Job:
        """Keeps a queued job from starting (a running attempt is cancelled by its run)."""
        return _model.from_json(Job, self._t.call("POST", "/v1/jobs/" + job_id + "/cancel"))

    def delete(self, job_id: str) -> None:
        """Deletes an ended job's record; its runs expire on their own."""
        self._t.request("DELETE", "/v1/jobs/" + job_id).close()


class Runs:
    """The runs of jobs: status, exit code and the latest 64 KiB of output."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def list(self, job_id: Optional[str] = None, page_size: int = 50,
             automation_id: Optional[str] = None) -> Iterator[Run]:
        query = {"jobId": job_id} if job_id else None
        if automation_id:
            query = dict(query or {}, automationId=automation_id)
        return paginate(self._t, "/v1/runs", Run, page_size, query)

    def get(self, run_id: str) -> Run:
        return _model.from_json(Run, self._t.call("GET", "/v1/runs/" + run_id))

    def cancel(self, run_id: str) -> Run:
        """Best effort: the command's process group gets SIGTERM, then SIGKILL after the grace
        period (10 s); the run ends cancelled."""
        return _model.from_json(Run, self._t.call("POST", "/v1/runs/" + run_id + "/cancel"))

    def events(self, last_event_id: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[RunEvent]:
        """Status changes of the organization's runs (jobs' and automations'), from now on (or
        after last_event_id), from GET /v1/events. The stream does not end by itself.
        EventsReset when the server no longer keeps last_event_id: list again, then follow
        again from its last_event_id."""
        return _org_events(self._t, "run", RunEvent, last_event_id, timeout)


class Sites:
    """Static websites published from object storage."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def publish(self, source: str, name: Optional[str] = None, *,
                idempotency_key: Optional[str] = None) -> Site:
        """A new release of site `name` (made when new); once per idempotency_key."""
        body: Dict[str, Any] = {"source": source}
        if name is not None:
            body["name"] = name
        return _model.from_json(Site, self._t.call("POST", "/v1/sites", json_body=body,
                                                   idempotency_key=idempotency_key))

    def get(self, site_id: str) -> Site:
        return _model.from_json(Site, self._t.call("GET", "/v1/sites/" + site_id))

    def list(self, page_size: int = 50) -> Iterator[Site]:
        """The organization's sites, newest first, following nextCursor page by page."""
        return paginate(self._t, "/v1/sites", Site, page_size)

    def delete(self, site_id: str) -> None:
        self._t.request("DELETE", "/v1/sites/" + site_id).close()


class Keys:
    """The API keys of the caller's own organization: any of its keys or users may manage them."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def create(self, name: Optional[str] = None, ttl_seconds: Optional[int] = None, *,
               idempotency_key: Optional[str] = None) -> NewApiKey:
        """A new key; its text (`.key`) is answered this once. Without `ttl_seconds` it never
        expires. A replay of idempotency_key answers the key's record without its text."""
        body: Dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        return _model.from_json(NewApiKey, self._t.call("POST", "/v1/keys", json_body=body,
                                                        idempotency_key=idempotency_key))

    def list(self) -> Iterator[ApiKey]:
        return paginate(self._t, "/v1/keys", ApiKey, 200)

    def revoke(self, key_id: str) -> None:
        """Deletes the key: it, and OAuth tokens issued with it, stop working at once."""
        self._t.request("DELETE", "/v1/keys/" + key_id).close()


class Orgs:
    """Organizations and their API keys (the admin key's organization only)."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def create(self, name: str) -> Org:
        return _model.from_json(Org, self._t.call("POST", "/v1/orgs", json_body={"name": name}))

    def list(self) -> Iterator[Org]:
        return paginate(self._t, "/v1/orgs", Org, 200)

    def create_key(self, org_id: str, name: Optional[str] = None,
                   ttl_seconds: Optional[int] = None) -> NewApiKey:
        body: Dict[str, Any] = {} if name is None else {"name": name}
        if ttl_seconds is not None:
            body["ttlSeconds"] = ttl_seconds
        return _model.from_json(NewApiKey, self._t.call("POST", "/v1/orgs/%s/keys" % org_id, json_body=body))

    def list_keys(self, org_id: str) -> Iterator[ApiKey]:
        return paginate(self._t, "/v1/orgs/%s/keys" % org_id, ApiKey, 200)

    def delete(self, org_id: str, confirm: str) -> None:
        """Deletes the organization and everything it holds; `confirm` must be its name. Refused
        (409) while any of its sandboxes is not deleted, or it has apps, automations or
        unfinished jobs."""
        self._t.request("DELETE", "/v1/orgs/" + org_id, json_body={"confirm": confirm}).close()

    def delete_key(self, org_id: str, key_id: str) -> None:
        self._t.request("DELETE", "/v1/orgs/%s/keys/%s" % (org_id, key_id)).close()

    def create_user(self, org_id: str, email: str, password: Optional[str] = None) -> NewUser:
        """Adds a user who signs in on the OAuth page; without `password`, adaptd chooses one."""
        body: Dict[str, Any] = {"email": email}
        if password is not None:
            body["password"] = password
        return _model.from_json(NewUser, self._t.call("POST", "/v1/orgs/%s/users" % org_id, json_body=body))

    def list_users(self, org_id: Optional[str] = None) -> List[User]:
        """Every organization's users, or `org_id`'s."""
        query: Dict[str, Any] = {} if org_id is None else {"orgId": org_id}
        return list(paginate(self._t, "/v1/users", User, 200, query))

    def delete_user(self, user_id: str) -> None:
        """Deletes a user and ends its sign-ins; never an organization's last user (409)."""
        self._t.request("DELETE", "/v1/users/%s" % user_id).close()

    def set_user_password(self, user_id: str, password: str,
                          current_password: Optional[str] = None) -> None:
        """Sets a user's password (the user itself gives `current_password`) and ends its
        earlier sign-ins."""
        body: Dict[str, Any] = {"password": password}
        if current_password is not None:
            body["currentPassword"] = current_password
        self._t.request("PUT", "/v1/users/%s/password" % user_id, json_body=body).close()

    def set_plan(self, org_id: str, plan_id: str) -> Account:
        """Puts the organization on a plan; answers its account."""
        return _model.from_json(Account, self._t.call("PUT", "/v1/orgs/%s/plan" % org_id,
                                                      json_body={"planId": plan_id}))

    def add_credit(self, org_id: str, amount_nanos: int, reason: str, *,
                   expires_in_days: Optional[int] = None, entry_id: Optional[str] = None) -> LedgerEntry:
        """Appends a credit to the organization's ledger; a retry with the same entry_id adds
        nothing."""
        body: Dict[str, Any] = {"amountNanos": amount_nanos, "reason": reason}
        if expires_in_days is not None:
            body["expiresInDays"] = expires_in_days
        if entry_id is not None:
            body["id"] = entry_id
        return _model.from_json(LedgerEntry, self._t.call("POST", "/v1/orgs/%s/credits" % org_id,
                                                          json_body=body))


class Accounts:
    """The caller's own account: plan, limits, usage and balance."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def get(self) -> Account:
        return _model.from_json(Account, self._t.call("GET", "/v1/account"))

    def ledger(self) -> Iterator[LedgerEntry]:
        """The account's ledger entries, oldest first."""
        return paginate(self._t, "/v1/account/ledger", LedgerEntry, 200)

    def export_ledger(self, format: str = "jsonl") -> str:
        """The ledger as JSON lines (`jsonl`) or CSV (`csv`), for an external billing system."""
        return self._t.request("GET", "/v1/account/ledger", query={"format": format}).read().decode()

    def usage(self, start: Optional[str] = None, end: Optional[str] = None) -> UsageReport:
        """Metered usage per sandbox (with its job) and volume, of the entries whose period
        starts in [start, end): RFC 3339 UTC times or dates; default this month."""
        return _model.from_json(UsageReport, self._t.call("GET", "/v1/account/usage",
                                                          query={"from": start, "to": end}))

    def alerts(self, last_event_id: Optional[str] = None,
               timeout: Optional[float] = None) -> Iterator[AlertEvent]:
        """The organization's account alerts as they happen (GET /v1/events, its `alert`
        frames): 80% / 100% of its credits used or of a plan limit, once per crossing. From now
        on, or after last_event_id (an alert's `id`). EventsReset when the server no longer
        keeps last_event_id. The stream does not end by itself: stop iterating when done."""
        return _org_events(self._t, "alert", AlertEvent, last_event_id, timeout)

    def register(self) -> Account:
        """Accepts the operator's terms and makes the account ready; idempotent."""
        return _model.from_json(Account, self._t.call("POST", "/v1/account/register", json_body={}))


class Plans:
    """Plans: limits and prices (admin key)."""

    def __init__(self, transport: "Transport") -> None:
        self._t = transport

    def list(self) -> Iterator[Plan]:
        return paginate(self._t, "/v1/plans", Plan, 200)

    def get(self, plan_id: str) -> Plan:
        return _model.from_json(Plan, self._t.call("GET", "/v1/plans/" + plan_id))

    def put(self, plan_id: str, *, name: Optional[str] = None,
            limits: Optional[Dict[str, Optional[int]]] = None,
            prices: Optional[Dict[str, int]] = None) -> Plan:
        """Creates or replaces the plan; limits and prices use the API's names
        (`concurrentSandboxes`, `cpuSecondNanos`); a limit left out or None is no limit."""
        body: Dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if limits is not None:
            body["limits"] = limits
        if prices is not None:
            body["prices"] = prices
        return _model.from_json(Plan, self._t.call("PUT", "/v1/plans/" + plan_id, json_body=body))
