// `sandbox.files`: read, write, list and remove files inside a running sandbox, and tar
// archives in and out. Uploads and downloads are streamed: no whole file in memory.
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

import { NotFound } from "./errors.js";
import type { FileEntry, FileList, FileWritten } from "./models.js";
import type { Body, Transport } from "./transport.js";

/** What `write` takes: text (UTF-8), bytes, a web stream, an async iterable of chunks (both
 * streamed, sent once), or a function making a fresh stream per try. */
export type FileData = Body | AsyncIterable<Uint8Array>;

const CHUNK = 1 << 20;

/** A local file as a web stream read 1 MiB at a time as the request pulls it. (Node's
 * Readable.toWeb does not wait for the reader before Node 22: it would read a large file into
 * memory ahead of the upload.) */
export function fileStream(localPath: string): ReadableStream<Uint8Array> {
  let fh: FileHandle | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        fh ??= await open(localPath, "r");
        const buf = Buffer.allocUnsafe(CHUNK);
        const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
        if (bytesRead === 0) {
          await fh.close();
          controller.close();
          return;
        }
        controller.enqueue(new Uint8Array(buf.buffer, buf.byteOffset, bytesRead));
      },
      async cancel() {
        await fh?.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/** Chunks of an async iterable as a web stream, pulled one at a time. */
function iterableStream(data: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = data[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await it.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        await it.return?.();
      },
    },
    { highWaterMark: 1 },
  );
}

function toBody(data: FileData): Body {
  if (typeof data === "string" || data instanceof Uint8Array || data instanceof ReadableStream || typeof data === "function") {
    return data;
  }
  return iterableStream(data);
}

/**
 * Writes a response body to localPath through a new temporary file renamed over it once
 * complete. The temporary file is made exclusively (flag "wx", a random name), so a name that
 * exists beside localPath (a symlink a sandbox's files brought, say) is never followed.
 */
export async function saveResponse(resp: Response, localPath: string): Promise<number> {
  const tmp = localPath + "." + randomBytes(8).toString("hex") + ".part";
  let n = 0;
  try {
    const body = resp.body ? Readable.fromWeb(resp.body as import("node:stream/web").ReadableStream<Uint8Array>) : Readable.from([]);
    body.on("data", (chunk: Buffer) => {
      n += chunk.length;
    });
    await pipeline(body, createWriteStream(tmp, { flags: "wx" }));
    await rename(tmp, localPath);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  return n;
}

export class Files {
  constructor(private readonly t: Transport, readonly sandboxId: string) {}

  private path(resource = "files"): string {
    return `/v1/sandboxes/${this.sandboxId}/${resource}`;
  }

  /** Writes a file (replaced atomically). mode: octal bits such as "0755". */
  async write(path: string, data: FileData, mode?: string): Promise<FileWritten> {
    return this.t.call<FileWritten>("PUT", this.path(), {
      query: { path, mode },
      body: toBody(data),
      headers: { "Content-Type": "application/octet-stream" },
    });
  }

  /** The whole file; for a large one, `stream` or `download`. */
  async read(path: string): Promise<Uint8Array> {
    const resp = await this.t.request("GET", this.path(), { query: { path }, headers: { Accept: "application/octet-stream" } });
    return new Uint8Array(await resp.arrayBuffer());
  }

  async readText(path: string): Promise<string> {
    return new TextDecoder().decode(await this.read(path));
  }

  /** The file's bytes as a web stream, as they arrive. */
  async stream(path: string): Promise<ReadableStream<Uint8Array>> {
    const resp = await this.t.request("GET", this.path(), { query: { path }, headers: { Accept: "application/octet-stream" } });
    return resp.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  }

  /** Streams a local file into the sandbox (re-read from disk if a retry is needed). */
  upload(localPath: string, path: string, mode?: string): Promise<FileWritten> {
    return this.write(path, () => fileStream(localPath), mode);
  }

  /** Streams a file of the sandbox into a local file; answers the bytes written. */
  async download(path: string, localPath: string): Promise<number> {
    const resp = await this.t.request("GET", this.path(), { query: { path }, headers: { Accept: "application/octet-stream" } });
    return saveResponse(resp, localPath);
  }

  /** A directory's entries (a file lists itself). */
  async list(path = "."): Promise<FileEntry[]> {
    return (await this.t.call<FileList>("GET", this.path(), { query: { path, list: true } })).items;
  }

  /** The path's own entry (a symlink is not followed). */
  stat(path: string): Promise<FileEntry> {
    return this.t.call<FileEntry>("GET", this.path(), { query: { path, stat: true } });
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof NotFound) return false;
      throw e;
    }
  }

  async mkdir(path: string, parents = false): Promise<void> {
    await this.t.call("POST", this.path("files/mkdir"), { json: { path, parents } });
  }

  async remove(path: string, recursive = false): Promise<void> {
    await this.t.call("DELETE", this.path(), { query: { path, recursive: recursive || undefined } });
  }

  /** A tar of a file, or of a directory's contents, streamed into a local file. */
  async downloadArchive(path: string, localPath: string): Promise<number> {
    const resp = await this.t.request("GET", this.path("archive"), { query: { path }, headers: { Accept: "application/x-tar" } });
    return saveResponse(resp, localPath);
  }

  /** Extracts a tar (a local file's path, or bytes/a stream) under directory `path`. */
  uploadArchive(tar: string | FileData, path: string): Promise<FileWritten> {
    const body = typeof tar === "string" ? () => fileStream(tar) : toBody(tar);
    return this.t.call<FileWritten>("PUT", this.path("archive"), {
      query: { path },
      body,
      headers: { "Content-Type": "application/x-tar" },
    });
  }
}
