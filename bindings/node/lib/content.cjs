"use strict";
// `Content`: what a tool returns when the model should read more than text
// or JSON — images, audio, files, several blocks — as canonical content
// blocks (docs/format.md). The Rust core checks each block; a malformed
// one fails the call, naming its path.

const CONTENT = Symbol.for("parlance.Content");

/** @typedef {import("./index").Block} Block */
/** @typedef {import("./index").MediaData} MediaData */
/**
 * A media block's fields as given (camelCase `mediaType`).
 * @typedef {{ data?: MediaData, url?: string, mediaType?: string, detail?: string, filename?: string }} MediaInput
 */

/**
 * Base64 of bytes (a string is taken as base64 already).
 * @param {unknown} data
 * @returns {string}
 */
function base64(data) {
  if (typeof data === "string") return data;
  if (data instanceof Uint8Array) return Buffer.from(data).toString("base64");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("base64");
  throw new TypeError(`expected bytes (a Uint8Array or Buffer) or base64 text, got ${typeof data}`);
}

/**
 * The canonical media object (`media_type`) of a block's fields.
 * @param {MediaInput} [fields]
 * @returns {{ [key: string]: unknown }}
 */
function media({ data, url, mediaType, ...extra } = {}) {
  /** @type {{ [key: string]: unknown }} */
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
  /** @param {...(string | Content | Block)} parts */
  constructor(...parts) {
    /**
     * The canonical blocks.
     * @type {Block[]}
     */
    this.blocks = [];
    for (const p of parts) {
      if (typeof p === "string") this.blocks.push({ type: "text", text: p });
      else if (isContent(p)) this.blocks.push(...p.blocks);
      else this.blocks.push(p);
    }
  }

  get [CONTENT]() {
    return true;
  }

  /**
   * A text block.
   * @param {string} text
   * @returns {Content}
   */
  static text(text) {
    return new Content(String(text));
  }

  /**
   * An image: `{ data, mediaType }` (bytes or base64) or `{ url }`, `detail?`.
   * @param {{ data?: MediaData, url?: string, mediaType?: string, detail?: "auto" | "low" | "high" }} [fields]
   * @returns {Content}
   */
  static image({ data, url, mediaType, detail } = {}) {
    return new Content({ type: "image", image: media({ data, url, mediaType, detail }) });
  }

  /**
   * An audio clip: `{ data, mediaType }` (`audio/wav`...) or `{ url }`.
   * @param {{ data?: MediaData, url?: string, mediaType?: string }} [fields]
   * @returns {Content}
   */
  static audio({ data, url, mediaType } = {}) {
    return new Content({ type: "audio", audio: media({ data, url, mediaType }) });
  }

  /**
   * A document or other file: `{ data, mediaType, filename? }` or `{ url }`.
   * @param {{ data?: MediaData, url?: string, mediaType?: string, filename?: string }} [fields]
   * @returns {Content}
   */
  static file({ data, url, mediaType, filename } = {}) {
    return new Content({ type: "file", file: media({ data, url, mediaType, filename }) });
  }

  /**
   * A JSON block.
   * @param {import("./index").JsonValue} value
   * @returns {Content}
   */
  static json(value) {
    return new Content({ type: "json", json: value });
  }
}

/**
 * Whether `v` is a Content (of this copy of the package or another).
 * @param {unknown} v
 * @returns {v is Content}
 */
function isContent(v) {
  return v instanceof Content || (v != null && /** @type {{ [CONTENT]?: unknown }} */ (v)[CONTENT] === true);
}

module.exports = { Content, isContent };
