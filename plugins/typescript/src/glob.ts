// Tool-name globs with Go's path.Match rules, which the host applies to
// matchers: "*" is any run of characters but "/", "?" one such character,
// "[a-z]" and "[^0-9]" classes, "\\" escapes. A port of Go's path.Match,
// line for line, so that a pattern means, and is refused, the same here.

/** Thrown for a pattern path.Match refuses (ErrBadPattern). */
export class BadPattern extends Error {
  constructor(pattern: string) {
    super(`syntax error in pattern ${JSON.stringify(pattern)}`);
    this.name = "BadPattern";
  }
}

class Bad extends Error {}

/** Whether `name` matches the glob. Throws BadPattern for a malformed one, as path.Match errs. */
export function matchGlob(pattern: string, name: string): boolean {
  try {
    return match(Array.from(pattern), Array.from(name));
  } catch (e) {
    if (e instanceof Bad) throw new BadPattern(pattern);
    throw e;
  }
}

/** Throws BadPattern unless the glob is well formed (path.Match(pattern, "") errs). */
export function checkGlob(pattern: string): void {
  matchGlob(pattern, "");
}

function match(pattern: string[], name: string[]): boolean {
  outer: while (pattern.length > 0) {
    const [star, chunk, rest] = scanChunk(pattern);
    pattern = rest;
    if (star && chunk.length === 0) {
      // A trailing * matches the rest of the name unless it has a /.
      return !name.includes("/");
    }
    const m = matchChunk(chunk, name);
    if (m !== null && (m.length === 0 || pattern.length > 0)) {
      name = m;
      continue;
    }
    if (star) {
      // Look for a match skipping i+1 characters; * cannot skip a /.
      for (let i = 0; i < name.length && name[i] !== "/"; i++) {
        const t = matchChunk(chunk, name.slice(i + 1));
        if (t !== null) {
          if (pattern.length === 0 && t.length > 0) continue;
          name = t;
          continue outer;
        }
      }
    }
    // Before answering no, check that the rest of the pattern is valid.
    while (pattern.length > 0) {
      const [, c, r] = scanChunk(pattern);
      pattern = r;
      matchChunk(c, []);
    }
    return false;
  }
  return name.length === 0;
}

function scanChunk(pattern: string[]): [boolean, string[], string[]] {
  let star = false;
  while (pattern.length > 0 && pattern[0] === "*") {
    pattern = pattern.slice(1);
    star = true;
  }
  let inrange = false;
  let i: number;
  scan: for (i = 0; i < pattern.length; i++) {
    switch (pattern[i]) {
      case "\\":
        if (i + 1 < pattern.length) i++;
        break;
      case "[":
        inrange = true;
        break;
      case "]":
        inrange = false;
        break;
      case "*":
        if (!inrange) break scan;
    }
  }
  return [star, pattern.slice(0, i), pattern.slice(i)];
}

/** The rest of s after chunk matched its start, or null; throws Bad for a malformed chunk. */
function matchChunk(chunk: string[], s: string[]): string[] | null {
  let failed = false;
  let c = 0;
  let k = 0;
  while (c < chunk.length) {
    if (!failed && k >= s.length) failed = true;
    switch (chunk[c]) {
      case "[": {
        let r = -1;
        if (!failed) r = s[k++].codePointAt(0)!;
        c++;
        let negated = false;
        if (c < chunk.length && chunk[c] === "^") {
          negated = true;
          c++;
        }
        let matched = false;
        let nrange = 0;
        for (;;) {
          if (c < chunk.length && chunk[c] === "]" && nrange > 0) {
            c++;
            break;
          }
          let lo: number;
          [lo, c] = getEsc(chunk, c);
          let hi = lo;
          if (chunk[c] === "-") [hi, c] = getEsc(chunk, c + 1);
          if (lo <= r && r <= hi) matched = true;
          nrange++;
        }
        if (matched === negated) failed = true;
        break;
      }
      case "?":
        if (!failed) {
          if (s[k] === "/") failed = true;
          k++;
        }
        c++;
        break;
      default:
        if (chunk[c] === "\\") {
          // The escaped character is matched literally.
          c++;
          if (c >= chunk.length) throw new Bad();
        }
        if (!failed) {
          if (chunk[c] !== s[k]) failed = true;
          k++;
        }
        c++;
    }
  }
  return failed ? null : s.slice(k);
}

/** One possibly escaped character of a class, and the index after it. */
function getEsc(chunk: string[], c: number): [number, number] {
  if (c >= chunk.length || chunk[c] === "-" || chunk[c] === "]") throw new Bad();
  if (chunk[c] === "\\") {
    c++;
    if (c >= chunk.length) throw new Bad();
  }
  const r = chunk[c].codePointAt(0)!;
  c++;
  if (c >= chunk.length) throw new Bad();
  return [r, c];
}
