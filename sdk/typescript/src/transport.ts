// HTTP to adaptd over the global fetch: auth, timeouts, retries, errors, streamed bodies.
//
// A request is retried only when repeating it cannot do something twice: nothing was sent yet
// (the connection was refused), or the method is safe to repeat (GET, DELETE, a PUT whose body
// can be made again), or a POST carries an Idempotency-Key. What is retried: a dropped
// connection, 502/503, and 429 that names a Retry-After.
import { randomUUID } from "node:crypto";
import * as http from "node:http";
import * as https from "node:https";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebStream } from "node:stream/web";

import { AdaptError, RequestTimeout, Unavailable, errorFromResponse } from "./errors.js";

/** A request body: bytes or text, a stream (sent once), or a function making a fresh stream
 * for each try (so that a retry can send it again). */
export type Body = string | Uint8Array | ReadableStream<Uint8Array> | (() => ReadableStream<Uint8Array>);
export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  json?: unknown;
  body?: Body;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  /** Milliseconds until the answer's headers; the body (a stream) is read without a limit. */
  timeoutMs?: number;
  ok?: number[];
}

export interface ClientOptions {
  /** Default: ADAPT_URL, else http://127.0.0.1:8080. */
  url?: string;
  /** Default: ADAPT_API_KEY. */
  apiKey?: string;
  /** Milliseconds for each request until its answer starts (waits have their own). Default 60 s. */
  timeoutMs?: number;
  /** Tries after the first for transient failures. Default 4. */
  maxRetries?: number;
}

const DROPPED = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNABORTED"]);
const REFUSED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

export function newIdempotencyKey(): string {
  return "sdk-" + randomUUID();
}

function env(name: string): string | undefined {
  return typeof process !== "undefined" ? process.env[name] : undefined;
}

function causeCode(e: unknown): string | undefined {
  let c: unknown = e;
  for (let i = 0; i < 4 && c && typeof c === "object"; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string") return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function backoffMs(attempt: number, retryAfter?: string | null): number {
  let ms = Math.min(4000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
  const n = retryAfter ? Number(retryAfter) : NaN;
  if (!Number.isNaN(n)) ms = Math.max(ms, Math.min(30, n) * 1000);
  return ms;
}

export class Transport {
  readonly url: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? env("ADAPT_URL") ?? "http://127.0.0.1:8080";
    let parsed: URL;
    try {
      parsed = new URL(url.includes("://") ? url : "http://" + url);
    } catch {
      throw new AdaptError(`ADAPT_URL ${JSON.stringify(url)} is not an http(s) URL`, { code: "invalid_argument" });
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new AdaptError(`ADAPT_URL ${JSON.stringify(url)} is not an http(s) URL`, { code: "invalid_argument" });
    }
    this.url = parsed.toString().replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? env("ADAPT_API_KEY") ?? "";
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxRetries = options.maxRetries ?? 4;
  }

  path(path: string, query?: Query): string {
    let full = this.url + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null) continue;
        q.append(k, typeof v === "boolean" ? (v ? "1" : "0") : String(v));
      }
      const s = q.toString();
      if (s) full += "?" + s;
    }
    return full;
  }

  /** Sends one request (retrying as the module says) and answers its Response, body unread;
   * an error status throws the API's exception. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": "adapt-sdk-typescript/0.1" };
    if (this.apiKey) headers["Authorization"] = "Bearer " + this.apiKey;
    let body: Body | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["Content-Type"] = "application/json";
    }
    if (options.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
    Object.assign(headers, options.headers ?? {});
    const reusable = body === undefined || typeof body === "string" || body instanceof Uint8Array || typeof body === "function";
    const repeatable = reusable && (["GET", "HEAD", "DELETE", "PUT"].includes(method) || options.idempotencyKey !== undefined);
    const ok = options.ok ?? [200, 201, 202, 204];
    const url = this.path(path, options.query);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      const payload = typeof body === "function" ? body() : body;
      const init: RequestInit & { duplex?: string } = { method, headers, signal: controller.signal };
      if (payload !== undefined) init.body = payload as BodyInit;
      if (payload instanceof ReadableStream) init.duplex = "half";
      let resp: Response;
      try {
        resp = payload instanceof ReadableStream
          ? await sendStream(method, url, headers, payload, controller.signal)
          : await fetch(url, init);
      } catch (e) {
        const code = causeCode(e);
        if (controller.signal.aborted) {
          throw new RequestTimeout(`${method} ${path}: no answer from adaptd within ${timeoutMs / 1000} s`, { code: "request_timeout", cause: e });
        }
        const refused = code !== undefined && REFUSED.has(code);
        const dropped = code === undefined || DROPPED.has(code);
        if (attempt <= this.maxRetries && (refused || (dropped && repeatable))) {
          await sleep(backoffMs(attempt));
          continue;
        }
        throw new Unavailable(`${method} ${path}: cannot reach adaptd at ${this.url}: ${code ?? String(e)}`, { code: "unavailable", cause: e });
      } finally {
        clearTimeout(timer);
      }
      if (ok.includes(resp.status)) return resp;
      const text = await resp.text();
      const retryAfter = resp.headers.get("retry-after");
      if (attempt <= this.maxRetries && repeatable && (resp.status === 502 || resp.status === 503 || (resp.status === 429 && retryAfter))) {
        await sleep(backoffMs(attempt, retryAfter));
        continue;
      }
      throw errorFromResponse(resp.status, text, retryAfter);
    }
  }

  /** request(), answering the parsed JSON body (undefined for an empty one). */
  async call<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const resp = await this.request(method, path, options);
    const text = await resp.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

/** Sends a streamed request body with node:http, whose pipe waits for the socket before it
 * reads the next chunk. (Node's fetch reads a stream body ahead of a new connection: a large
 * upload would sit in memory.) Answers a fetch Response, body unread. */
function sendStream(method: string, url: string, headers: Record<string, string>, body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const target = new URL(url);
    const mod = target.protocol === "https:" ? https : http;
    const req = mod.request(target, { method, headers: { ...headers, "Transfer-Encoding": "chunked" }, signal }, (res) => {
      const status = res.statusCode ?? 0;
      const answer: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) answer[k] = Array.isArray(v) ? v.join(", ") : v;
      const stream = [204, 205, 304].includes(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      if (stream === null) res.resume();
      resolve(new Response(stream, { status, headers: answer }));
    });
    req.on("error", reject);
    pipeline(Readable.fromWeb(body as NodeWebStream<Uint8Array>), req).catch(reject);
  });
}
