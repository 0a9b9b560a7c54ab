"""HTTP to adaptd (http.client only): auth, timeouts, retries, errors, streamed bodies.

A request is retried only when repeating it cannot do something twice: nothing was sent yet
(the connection was refused), or the method is safe to repeat (GET, DELETE, a PUT whose body
can be re-read), or a POST carries an Idempotency-Key. What is retried: a dropped connection,
502/503, and 429 that names a Retry-After.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import random
import socket
import time
import urllib.parse
import uuid
from typing import IO, Any, Dict, Iterable, Iterator, Mapping, Optional, Union

from .errors import AdaptError, Unavailable, error_from_response

Body = Union[None, bytes, IO[bytes], Iterable[bytes]]
Query = Mapping[str, Union[str, int, bool, None]]

DEFAULT_URL = "http://127.0.0.1:8080"
CHUNK = 1 << 20
_RETRY_STATUS = (502, 503)
_DROPPED = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected,
            http.client.IncompleteRead, ConnectionAbortedError)


def new_idempotency_key() -> str:
    return "sdk-" + uuid.uuid4().hex


class Response:
    """An answer whose body is still unread: `json()` or `read()` it, or `iter_bytes()`."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self.status = resp.status
        self.headers = {k.lower(): v for k, v in resp.getheaders()}

    def read(self) -> bytes:
        try:
            return self._resp.read()
        finally:
            self.close()

    def json(self) -> Any:
        data = self.read()
        return json.loads(data) if data else None

    def iter_bytes(self, chunk_size: int = CHUNK) -> Iterator[bytes]:
        try:
            while True:
                chunk = self._resp.read1(chunk_size) if hasattr(self._resp, "read1") else self._resp.read(chunk_size)
                if not chunk:
                    return
                yield chunk
        finally:
            self.close()

    def readline(self) -> bytes:
        return self._resp.readline()

    def close(self) -> None:
        self._resp.close()
        self._conn.close()

    def __enter__(self) -> "Response":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Transport:
    """One API key's connection settings; thread-safe (a connection per request)."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 timeout: float = 60.0, max_retries: int = 4) -> None:
        url = url or os.environ.get("ADAPT_URL") or DEFAULT_URL
        parsed = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise AdaptError("ADAPT_URL %r is not an http(s) URL" % url, code="invalid_argument")
        self.url = url.rstrip("/")
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("ADAPT_API_KEY", "")
        self.timeout = timeout
        self.max_retries = max_retries

    def _connect(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        t = self.timeout if timeout is None else timeout
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=t, blocksize=CHUNK)
        return http.client.HTTPConnection(self._host, self._port, timeout=t, blocksize=CHUNK)

    def path(self, path: str, query: Optional[Query] = None) -> str:
        full = self._prefix + path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                full += "?" + urllib.parse.urlencode(pairs)
        return full

    def request(self, method: str, path: str, *, query: Optional[Query] = None,
                json_body: Any = None, body: Body = None, headers: Optional[Dict[str, str]] = None,
                idempotency_key: Optional[str] = None, timeout: Optional[float] = None,
                ok: Iterable[int] = (200, 201, 202, 204)) -> Response:
        """Sends one request (retrying as the module says) and answers its Response; an error
        status raises the API's exception. The caller reads or closes the Response."""
        hdrs: Dict[str, str] = {"Accept": "application/json", "User-Agent": "adapt-sdk-python/0.1"}
        if self.api_key:
            hdrs["Authorization"] = "Bearer " + self.api_key
        payload: Body = body
        if json_body is not None:
            payload = json.dumps(json_body).encode()
            hdrs["Content-Type"] = "application/json"
        if idempotency_key:
            hdrs["Idempotency-Key"] = idempotency_key
        if headers:
            hdrs.update(headers)
        start = payload.tell() if _seekable(payload) else None  # type: ignore[union-attr]
        repeatable = (method in ("GET", "HEAD", "DELETE", "PUT") or idempotency_key is not None) and (
            payload is None or isinstance(payload, bytes) or start is not None)
        url = self.path(path, query)
        ok_set = set(ok)
        attempt = 0
        while True:
            attempt += 1
            sent = False
            conn = self._connect(timeout)
            try:
                if start is not None:
                    payload.seek(start)  # type: ignore[union-attr]
                _send(conn, method, url, payload, hdrs)
                sent = True
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                dropped = isinstance(e, _DROPPED) or (sent and not isinstance(e, socket.timeout))
                refused = isinstance(e, (ConnectionRefusedError, socket.gaierror))
                if attempt <= self.max_retries and (refused or (dropped and repeatable)):
                    _backoff(attempt)
                    continue
                if isinstance(e, socket.timeout):
                    raise Unavailable("%s %s: no answer from adaptd within %s s" % (method, path, timeout or self.timeout),
                                      code="request_timeout") from e
                raise Unavailable("%s %s: cannot reach adaptd at %s: %s" % (method, path, self.url, e),
                                  code="unavailable") from e
            r = Response(conn, resp)
            if r.status in ok_set:
                return r
            data = r.read()
            retry_after = r.headers.get("retry-after")
            if attempt <= self.max_retries and repeatable and (
                    r.status in _RETRY_STATUS or (r.status == 429 and retry_after)):
                _backoff(attempt, retry_after)
                continue
            raise error_from_response(r.status, data, retry_after)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """request(), answering the parsed JSON body (None for an empty one)."""
        return self.request(method, path, **kwargs).json()


def _send(conn: http.client.HTTPConnection, method: str, url: str, payload: Body,
          hdrs: Dict[str, str]) -> None:
    if payload is None or isinstance(payload, (bytes, bytearray)):
        conn.request(method, url, body=payload, headers=hdrs)
        return
    size = _size_of(payload)
    if size is not None:
        conn.request(method, url, body=payload, headers=dict(hdrs, **{"Content-Length": str(size)}))
        return
    chunks = payload if not hasattr(payload, "read") else _file_chunks(payload)  # type: ignore[arg-type]
    conn.request(method, url, body=chunks, headers=hdrs, encode_chunked=True)


def _file_chunks(f: IO[bytes]) -> Iterator[bytes]:
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            return
        yield chunk


def _seekable(payload: Body) -> bool:
    try:
        return hasattr(payload, "seek") and payload.seekable()  # type: ignore[union-attr]
    except (OSError, ValueError):
        return False


def _size_of(payload: Body) -> Optional[int]:
    """The bytes left in a seekable file, else None (sent chunked)."""
    if not _seekable(payload):
        return None
    f: IO[bytes] = payload  # type: ignore[assignment]
    here = f.tell()
    end = f.seek(0, io.SEEK_END)
    f.seek(here)
    return end - here


def _query_value(v: Union[str, int, bool]) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _backoff(attempt: int, retry_after: Optional[str] = None) -> None:
    delay = min(4.0, 0.25 * (2 ** (attempt - 1))) * (0.5 + random.random() / 2)
    if retry_after:
        try:
            delay = max(delay, min(30.0, float(retry_after)))
        except ValueError:
            pass
    time.sleep(delay)
