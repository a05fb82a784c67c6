/**
 * Every failed call throws an `ApiError` subclass carrying the HTTP status, the
 * service's error items and the request id (quote it when reporting a problem).
 */
import { isRecord, textOf as text } from "./models/base.js";

/** One entry of `{"errors": [{"title", "detail", "source"?}]}`. */
export interface ErrorItem {
  readonly title: string;
  readonly detail: string;
  readonly source: string | null;
}

/** Base of everything this library throws. */
export class AutoportError extends Error {
  override name = "AutoportError";
}

export interface ApiErrorFields {
  readonly errors?: readonly ErrorItem[];
  /** OAuth endpoints: the RFC 6749 error code. */
  readonly error?: string | null;
  readonly errorDescription?: string | null;
  readonly requestId?: string | null;
  /** Seconds the server asked to wait (`Retry-After`). */
  readonly retryAfter?: number | null;
  readonly body?: unknown;
}

/** The service answered with an error status. */
export class ApiError extends AutoportError {
  override name = "ApiError";
  readonly status: number;
  readonly errors: readonly ErrorItem[];
  readonly error: string | null;
  readonly errorDescription: string | null;
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  readonly body: unknown;

  constructor(status: number, fields: ApiErrorFields = {}) {
    super("");
    this.status = status;
    this.errors = fields.errors ?? [];
    this.error = fields.error ?? null;
    this.errorDescription = fields.errorDescription ?? null;
    this.requestId = fields.requestId ?? null;
    this.retryAfter = fields.retryAfter ?? null;
    this.body = fields.body;
    this.message = this.describe();
  }

  /** The first error item's detail, or the OAuth `error_description`. */
  get detail(): string | null {
    return this.errors[0]?.detail ?? this.errorDescription;
  }

  /** The field the first error item names (`vin`, `arguments.locks_state`, ...). */
  get source(): string | null {
    return this.errors[0]?.source ?? null;
  }

  private describe(): string {
    const what = this.error ?? this.errors[0]?.title ?? "error";
    let text = `${String(this.status)} ${what}`;
    if (this.detail) {
      text += `: ${this.detail}`;
    }
    if (this.source) {
      text += ` (source: ${this.source})`;
    }
    if (this.requestId) {
      text += ` [request_id ${this.requestId}]`;
    }
    return text;
  }
}

/** 400: malformed input (the `source` names the field). */
export class BadRequest extends ApiError {
  override name = "BadRequest";
}
/** 401: missing, unknown, expired or revoked token, or wrong client credentials. */
export class AuthenticationError extends ApiError {
  override name = "AuthenticationError";
}
/** 403: the caller may not do or read this. */
export class PermissionDenied extends ApiError {
  override name = "PermissionDenied";
}
/** 403 titled "Privacy Mode": the owner switched data sharing off in the vehicle. */
export class PrivacyMode extends PermissionDenied {
  override name = "PrivacyMode";
}
/** 404. */
export class NotFound extends ApiError {
  override name = "NotFound";
}
/** 408: the vehicle is offline or asleep. */
export class VehicleOffline extends ApiError {
  override name = "VehicleOffline";
}
/** 409: e.g. a fleet vehicle already being removed, a command of the capability in flight. */
export class Conflict extends ApiError {
  override name = "Conflict";
}
/** 422: input refused (the `source` names the field), or data pending. */
export class ValidationError extends ApiError {
  override name = "ValidationError";
}
/** 429 after the client's bounded retries: `retryAfter` seconds until the next try. */
export class RateLimited extends ApiError {
  override name = "RateLimited";
}
/** 5xx: the service or the carmaker's data source failed (503) or timed out (504). */
export class ServerError extends ApiError {
  override name = "ServerError";
}
/** A token endpoint refusal in the RFC 6749 shape (`error`, `errorDescription`). */
export class OAuthError extends ApiError {
  override name = "OAuthError";
}
/** `invalid_grant`: a used, expired or revoked code or refresh token: consent again. */
export class InvalidGrant extends OAuthError {
  override name = "InvalidGrant";
}

/** A stream could not be (re)opened within its `maxReconnects`. */
export class StreamDisconnected extends AutoportError {
  override name = "StreamDisconnected";
}
/** A webhook delivery whose signature or timestamp does not check out. */
export class SignatureError extends AutoportError {
  override name = "SignatureError";
}
/** A consent callback that must not be trusted (unknown state, wrong issuer) or an error. */
export class ConsentError extends AutoportError {
  override name = "ConsentError";
  /** The `error` parameter of the redirect (`access_denied`, ...), when the server sent one. */
  readonly error: string | null;
  constructor(message: string, error: string | null = null) {
    super(message);
    this.error = error;
  }
}

const BY_STATUS: ReadonlyMap<number, typeof ApiError> = new Map([
  [400, BadRequest],
  [401, AuthenticationError],
  [403, PermissionDenied],
  [404, NotFound],
  [408, VehicleOffline],
  [409, Conflict],
  [422, ValidationError],
  [429, RateLimited],
]);

/** The typed error of one error answer, in either of the service's error shapes. */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Headers,
  retryAfter: number | null = null,
): ApiError {
  let requestId = headers.get("x-request-id");
  if (isRecord(body) && typeof body.error === "string") {
    const error = body.error;
    let Kind: typeof ApiError = error === "invalid_grant" ? InvalidGrant : OAuthError;
    if (status === 401 && error === "invalid_token") {
      Kind = AuthenticationError;
    } else if (status === 403 && error === "insufficient_scope") {
      Kind = PermissionDenied;
    } else if (status === 429) {
      Kind = RateLimited;
    }
    return new Kind(status, {
      error,
      errorDescription: text(body.error_description),
      requestId,
      retryAfter,
      body,
    });
  }
  let errors: ErrorItem[] = [];
  if (isRecord(body)) {
    requestId = text(body.request_id) ?? requestId;
    const items = Array.isArray(body.errors) ? (body.errors as unknown[]) : [];
    errors = items.filter(isRecord).map((item) => ({
      title: text(item.title) ?? "",
      detail: text(item.detail) ?? "",
      source: text(item.source),
    }));
  }
  let Kind = BY_STATUS.get(status) ?? (status >= 500 ? ServerError : ApiError);
  if (status === 403 && errors[0]?.title === "Privacy Mode") {
    Kind = PrivacyMode;
  }
  return new Kind(status, { errors, requestId, retryAfter, body });
}
