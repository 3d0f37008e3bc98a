"use strict";
// `Content`: what a tool returns when the model should read more than text
// or JSON — images, audio, files, several blocks — as canonical content
// blocks (docs/format.md). The Rust core checks each block; a malformed
// one fails the call, naming its path.

const CONTENT = Symbol.for("parlance.Content");

/** Base64 of bytes (a string is taken as base64 already). */
function base64(data) {
  if (typeof data === "string") return data;
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return Buffer.from(data).toString("base64");
  throw new TypeError(`expected bytes (a Uint8Array or Buffer) or base64 text, got ${typeof data}`);
}

function media({ data, url, mediaType, ...extra } = {}) {
  const m = {};
  if (data !== undefined) m.data = base64(data);
  if (url !== undefined) m.url = url;
  if (mediaType !== undefined) m.media_type = mediaType;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) m[k] = v;
  return m;
}

/**
 * Content blocks a tool returns: `new Content("The chart:", Content.image({ data: png, mediaType: "image/png" }))`.
 * Parts are strings (text blocks), other Contents, or canonical block objects.
 */
class Content {
  constructor(...parts) {
    /** The canonical blocks. */
    this.blocks = [];
    for (const p of parts) {
      if (typeof p === "string") this.blocks.push({ type: "text", text: p });
      else if (p instanceof Content || p?.[CONTENT] === true) this.blocks.push(...p.blocks);
      else this.blocks.push(p);
    }
  }

  get [CONTENT]() {
    return true;
  }

  /** A text block. */
  static text(text) {
    return new Content(String(text));
  }

  /** An image: `{ data, mediaType }` (bytes or base64) or `{ url }`, `detail?`. */
  static image({ data, url, mediaType, detail } = {}) {
    return new Content({ type: "image", image: media({ data, url, mediaType, detail }) });
  }

  /** An audio clip: `{ data, mediaType }` (`audio/wav`...) or `{ url }`. */
  static audio({ data, url, mediaType } = {}) {
    return new Content({ type: "audio", audio: media({ data, url, mediaType }) });
  }

  /** A document or other file: `{ data, mediaType, filename? }` or `{ url }`. */
  static file({ data, url, mediaType, filename } = {}) {
    return new Content({ type: "file", file: media({ data, url, mediaType, filename }) });
  }

  /** A JSON block. */
  static json(value) {
    return new Content({ type: "json", json: value });
  }
}

/** Whether `v` is a Content (of this copy of the package or another). */
function isContent(v) {
  return v instanceof Content || (v != null && v[CONTENT] === true);
}

module.exports = { Content, isContent };
