"""The API's errors as exceptions: one class per `error.code` of docs/openapi.yaml's Error.

Every exception carries the server's `code`, its one-sentence `message`, the request `field`
it is about (`memoryMiB`, `startup.argv`, ...) when there is one, and the HTTP `status`.
"""

from __future__ import annotations

import json
from typing import Dict, Optional, Type


class AdaptError(Exception):
    """An error answered by adaptd, or a failure to reach it."""

    def __init__(self, message: str, code: str = "unknown", field: Optional[str] = None,
                 status: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.status = status

    def __str__(self) -> str:
        if self.field:
            return "%s (field %s)" % (self.message, self.field)
        return self.message


class InvalidArgument(AdaptError):
    """400: the request is wrong; `field` names what."""


class Unauthenticated(AdaptError):
    """401: no API key, or one adaptd does not know."""


class PermissionDenied(AdaptError):
    """403: refused by policy."""


class NotFound(AdaptError):
    """404: no such object in this key's organization (another organization's ids too)."""


class MethodNotAllowed(AdaptError):
    """405."""


class Conflict(AdaptError):
    """409: the object is in the wrong state, or an Idempotency-Key was reused with another body."""


class PayloadTooLarge(AdaptError):
    """413."""


class RequestTimeout(AdaptError):
    """408, or the SDK's own wait ran out of time."""


class Unsupported(AdaptError):
    """422: a value adaptd understands but does not support here."""


class PaymentRequired(AdaptError):
    """402: the organization's plan has prices and its prepaid balance is used up."""


class RateLimited(AdaptError):
    """429: a quota or limit; `retry_after` is the server's hint in seconds, when given."""

    retry_after: Optional[float] = None


class Unavailable(AdaptError):
    """503, or adaptd could not be reached."""


class InternalError(AdaptError):
    """500."""


class CommandFailed(AdaptError):
    """A command ended with a non-zero exit, when the caller asked for `check=True`."""


_BY_CODE: Dict[str, Type[AdaptError]] = {
    "invalid_argument": InvalidArgument,
    "unauthenticated": Unauthenticated,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "conflict": Conflict,
    "payload_too_large": PayloadTooLarge,
    "request_timeout": RequestTimeout,
    "unsupported": Unsupported,
    "resource_exhausted": RateLimited,
    "payment_required": PaymentRequired,
    "unavailable": Unavailable,
    "internal": InternalError,
}

_BY_STATUS: Dict[int, Type[AdaptError]] = {
    400: InvalidArgument, 401: Unauthenticated, 402: PaymentRequired, 403: PermissionDenied, 404: NotFound,
    405: MethodNotAllowed, 408: RequestTimeout, 409: Conflict, 412: Conflict,
    413: PayloadTooLarge, 422: Unsupported, 429: RateLimited, 500: InternalError,
    502: Unavailable, 503: Unavailable, 504: Unavailable,
}


def error_from_response(status: int, body: bytes, retry_after: Optional[str] = None) -> AdaptError:
    """The exception for an error answer: by its `error.code`, else by its HTTP status."""
    code, message, field = "unknown", "", None
    try:
        err = json.loads(body)["error"]
        code = str(err.get("code", code))
        message = str(err.get("message", ""))
        field = err.get("field")
    except (ValueError, KeyError, TypeError, AttributeError):
        message = body.decode("utf-8", "replace").strip()[:500]
    if not message:
        message = "adaptd answered HTTP %d" % status
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or AdaptError
    exc = cls(message, code=code, field=field if isinstance(field, str) else None, status=status)
    if isinstance(exc, RateLimited) and retry_after:
        try:
            exc.retry_after = float(retry_after)
        except ValueError:
            pass
    return exc


class SandboxFailed(AdaptError):
    """The sandbox reached `failed` (or ended) while the SDK waited for it to run; `sandbox_id`
    names it and the message is the sandbox's own `error`."""

    def __init__(self, message: str, sandbox_id: str, status: str) -> None:
        super().__init__(message, code="failed_precondition")
        self.sandbox_id = sandbox_id
        self.sandbox_status = status


class EventsReset(AdaptError):
    """The organization's event stream did not keep the `last_event_id` asked for (more than
    1000 events behind, or from another database): events were missed. List again, then
    follow again from `last_event_id`, the server's newest event."""

    def __init__(self, message: str, last_event_id: str) -> None:
        super().__init__(message, code="events_reset")
        self.last_event_id = last_event_id
