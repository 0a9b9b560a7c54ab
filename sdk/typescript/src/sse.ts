// Server-Sent Events frames from a streamed response body (the events and command streams).

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/** Yields each frame until the body ends; `:` lines (keep-alives) are skipped. */
export async function* parseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "message";
  let data: string[] = [];
  let lastId: string | undefined;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (line === "") {
          if (data.length > 0) yield { event: name, data: data.join("\n"), id: lastId };
          name = "message";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const key = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (key === "event") name = value;
        else if (key === "data") data.push(value);
        else if (key === "id") lastId = value;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
