"use strict";
// Loads the prebuilt native module for this platform. Only linux-x64-gnu
// is built today (by the repository's test command); elsewhere the error
// says so rather than failing with a loader message.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

/** @returns {string} */
function platformName() {
  const { platform, arch } = process;
  if (platform !== "linux") return `${platform}-${arch}`;
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } } | undefined} */ (process.report?.getReport?.());
  const glibc = report?.header?.glibcVersionRuntime;
  return `linux-${arch}-${glibc ? "gnu" : "musl"}`;
}

/**
 * The native module (its functions are typed where they are called).
 * @returns {any}
 */
function load() {
  const name = platformName();
  const file = join(__dirname, "..", `parlance.${name}.node`);
  if (!existsSync(file)) {
    throw new Error(
      `parlance-ai: no native module for ${name} in this package (built: linux-x64-gnu). ` +
        "Build it from the repository with `bindings/node/scripts/build`.",
    );
  }
  return require(file);
}

module.exports = load();
