// Makes the built scripts that start with a #! line executable: the host
// runs a plugin's file directly, with no PATH, so the #! line names the
// interpreter by absolute path (#!/usr/bin/node) and the file needs its
// executable bit. tsc keeps a source file's #! line but not the bit.
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith(".js") && readFileSync(p, "utf8").startsWith("#!/")) chmodSync(p, 0o755);
  }
}
walk(process.argv[2] ?? "dist");
