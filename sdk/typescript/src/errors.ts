// The API's errors as exceptions: one class per `error.code` of docs/openapi.yaml's Error,
// each carrying the server's code, its one-sentence message, the request field it is about
// (`memoryMiB`, `startup.argv`, ...) when there is one, and the HTTP status.

export class AdaptError extends Error {
  readonly code: string;
  readonly field: string | undefined;
  readonly status: number | undefined;

  constructor(message: string, options: { code?: string; field?: string | undefined; status?: number | undefined; cause?: unknown } = {}) {
    super(options.field ? `${message} (field ${options.field})` : message, { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? "unknown";
    this.field = options.field;
    this.status = options.status;
  }
}

/** 400: the request is wrong; `field` names what. */
export class InvalidArgument extends AdaptError {}
/** 401: no API key, or one adaptd does not know. */
export class Unauthenticated extends AdaptError {}
/** 403: refused by policy. */
export class PermissionDenied extends AdaptError {}
/** 404: no such object in this key's organization (another organization's ids too). */
export class NotFound extends AdaptError {}
export class MethodNotAllowed extends AdaptError {}
/** 409: the object is in the wrong state, or an Idempotency-Key was reused with another body. */
export class Conflict extends AdaptError {}
export class PayloadTooLarge extends AdaptError {}
/** 408, or the SDK's own wait ran out of time. */
export class RequestTimeout extends AdaptError {}
/** 422: a value adaptd understands but does not support here. */
export class Unsupported extends AdaptError {}
/** 429: a quota or limit; `retryAfter` is the server's hint in seconds, when given. */
/** 402: the organization's plan has prices and its prepaid balance is used up. */
export class PaymentRequired extends AdaptError {}
export class RateLimited extends AdaptError {
  retryAfter: number | undefined;
}
/** 503, or adaptd could not be reached. */
export class Unavailable extends AdaptError {}
export class InternalError extends AdaptError {}
/** A command ended with a non-zero exit, when the caller asked for `check: true`. */
export class CommandFailed extends AdaptError {}
/** The sandbox ended (failed, completed, deleted) while the SDK waited for it to run. */
export class SandboxFailed extends AdaptError {
  constructor(message: string, readonly sandboxId: string, readonly sandboxStatus: string) {
    super(message, { code: "failed_precondition" });
  }
}

/** The organization's event stream did not keep the `lastEventId` asked for (more than 1000
 * events behind, or from another database): events were missed. List again, then follow again
 * from `lastEventId`, the server's newest event. */
export class EventsReset extends AdaptError {
  constructor(message: string, readonly lastEventId: string) {
    super(message, { code: "events_reset" });
  }
}

type ErrorClass = new (message: string, options: { code?: string; field?: string | undefined; status?: number | undefined }) => AdaptError;

const BY_CODE: Record<string, ErrorClass> = {
  invalid_argument: InvalidArgument,
  unauthenticated: Unauthenticated,
  permission_denied: PermissionDenied,
  not_found: NotFound,
  method_not_allowed: MethodNotAllowed,
  conflict: Conflict,
  payload_too_large: PayloadTooLarge,
  request_timeout: RequestTimeout,
  unsupported: Unsupported,
  resource_exhausted: RateLimited,
  payment_required: PaymentRequired,
  unavailable: Unavailable,
  internal: InternalError,
};

const BY_STATUS: Record<number, ErrorClass> = {
  400: InvalidArgument, 401: Unauthenticated, 402: PaymentRequired, 403: PermissionDenied, 404: NotFound,
  405: MethodNotAllowed, 408: RequestTimeout, 409: Conflict, 412: Conflict,
  413: PayloadTooLarge, 422: Unsupported, 429: RateLimited, 500: InternalError,
  502: Unavailable, 503: Unavailable, 504: Unavailable,
};

/** The exception for an error answer: by its `error.code`, else by its HTTP status. */
export function errorFromResponse(status: number, body: string, retryAfter?: string | null): AdaptError {
  let code = "unknown";
  let message = "";
  let field: string | undefined;
  try {
    const err = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown; field?: unknown } }).error;
    if (err && typeof err === "object") {
      if (typeof err.code === "string") code = err.code;
      if (typeof err.message === "string") message = err.message;
      if (typeof err.field === "string") field = err.field;
    }
  } catch {
    message = body.trim().slice(0, 500);
  }
  if (!message) message = `adaptd answered HTTP ${status}`;
  const Cls = BY_CODE[code] ?? BY_STATUS[status] ?? AdaptError;
  const e = new Cls(message, { code, field, status });
  if (e instanceof RateLimited && retryAfter) {
    const n = Number(retryAfter);
    if (!Number.isNaN(n)) e.retryAfter = n;
  }
  return e;
}
