"use strict";
// Loads the prebuilt native module for this platform. Only linux-x64-gnu
// is built today (by the repository's test command); elsewhere the error
// says so rather than failing with a loader message.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

function platformName() {
  const { platform, arch } = process;
  if (platform !== "linux") return `${platform}-${arch}`;
  const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
  return `linux-${arch}-${glibc ? "gnu" : "musl"}`;
}

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
