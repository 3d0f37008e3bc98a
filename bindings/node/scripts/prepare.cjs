#!/usr/bin/env node
// npm's `prepare` script: `npm install ./bindings/node` (from a clone) and
// `npm pack` build the native module with cargo when the package folder
// has none for this platform; a module already there is used as it is
// (after changing the Rust side, `npm run build` or scripts/build). Not in
// the packed tarball: an installed tarball carries its module.
//
// Release profile, as a user's install wants; PARLANCE_NODE_PROFILE=dev
// builds the dev profile together with the CLI, as scripts/build does (one
// feature resolution: the test command's build is reused).
"use strict";

const { spawnSync } = require("node:child_process");
const { copyFileSync, existsSync, renameSync } = require("node:fs");
const { join } = require("node:path");

const here = join(__dirname, "..");

/** This platform's module name, as lib/native.cjs loads it. */
function platformName() {
  const { platform, arch } = process;
  if (platform !== "linux") return `${platform}-${arch}`;
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } } | undefined} */ (process.report?.getReport?.());
  return `linux-${arch}-${report?.header?.glibcVersionRuntime ? "gnu" : "musl"}`;
}

/** The shared library cargo writes for a cdylib named parlance_node. */
function libraryName() {
  if (process.platform === "win32") return "parlance_node.dll";
  return process.platform === "darwin" ? "libparlance_node.dylib" : "libparlance_node.so";
}

/**
 * @param {string} command
 * @param {string[]} args
 * @returns {string} its standard output
 */
function run(command, args) {
  const out = spawnSync(command, args, { cwd: here, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (out.error) throw out.error;
  if (out.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${out.status})`);
  return out.stdout;
}

function main() {
  const name = platformName();
  const module = join(here, `parlance.${name}.node`);
  if (existsSync(module)) return;
  if (!existsSync(join(here, "..", "..", "Cargo.toml"))) {
    throw new Error(`no native module for ${name} in this package, and no Parlance repository around it to build one from`);
  }
  const dev = process.env.PARLANCE_NODE_PROFILE === "dev";
  console.error(`parlance-ai: building the native module for ${name} with cargo (${dev ? "dev" : "release"} profile)...`);
  const args = ["build", "--locked", "-p", "parlance-node", ...(dev ? ["-p", "parlance-cli"] : ["--release"])];
  try {
    run("cargo", args);
  } catch (e) {
    const missing = /** @type {NodeJS.ErrnoException} */ (e).code === "ENOENT";
    throw new Error(
      missing
        ? "cargo is not installed: the npm package is built from its Rust source here (https://rustup.rs), or install a packed tarball"
        : /** @type {Error} */ (e).message,
    );
  }
  const target = JSON.parse(run("cargo", ["metadata", "--format-version", "1", "--no-deps"])).target_directory;
  const tmp = `${module}.tmp`;
  copyFileSync(join(target, dev ? "debug" : "release", libraryName()), tmp);
  renameSync(tmp, module);
  console.error(`parlance-ai: built parlance.${name}.node`);
}

try {
  main();
} catch (e) {
  console.error(`parlance-ai: ${/** @type {Error} */ (e).message}`);
  process.exit(1);
}
