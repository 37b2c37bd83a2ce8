// Drop optionalDependencies that have no entry in the lockfile (platform
// packages the registry here does not serve), so `npm ci` validates.
const fs = require("fs");
const file = process.argv[2] || "package-lock.json";
const lock = JSON.parse(fs.readFileSync(file, "utf8"));
const has = (name) => Object.keys(lock.packages).some((k) => k === "node_modules/" + name || k.endsWith("/node_modules/" + name));
for (const [key, pkg] of Object.entries(lock.packages)) {
  for (const name of Object.keys(pkg.optionalDependencies || {})) {
    if (!has(name)) { console.error(`pruned ${key || "(root)"} -> ${name}`); delete pkg.optionalDependencies[name]; }
  }
}
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");
