// Tool-name globs with Go's path.Match rules, which the host applies to
// matchers: "*" is any run of characters but "/", "?" one such character,
// "[a-z]" and "[^0-9]" classes, "\\" escapes.

/** Thrown for a pattern path.Match would call malformed. */
export class BadPattern extends Error {
  constructor(pattern: string) {
    super(`syntax error in pattern ${JSON.stringify(pattern)}`);
    this.name = "BadPattern";
  }
}

/** Whether `name` matches the glob. Throws BadPattern for a malformed one. */
export function matchGlob(pattern: string, name: string): boolean {
  const p = Array.from(pattern);
  const n = Array.from(name);
  validate(p, pattern);
  return match(p, 0, n, 0);
}

/** Throws BadPattern unless the glob is well formed. */
export function checkGlob(pattern: string): void {
  validate(Array.from(pattern), pattern);
}

function validate(p: string[], pattern: string): void {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") {
      if (++i >= p.length) throw new BadPattern(pattern);
    } else if (p[i] === "[") {
      const end = classEnd(p, i, pattern);
      i = end;
    }
  }
}

/** The index of the "]" closing the class opened at i. */
function classEnd(p: string[], i: number, pattern: string): number {
  let j = i + 1;
  if (p[j] === "^") j++;
  let first = true;
  for (; j < p.length; j++) {
    if (p[j] === "]" && !first) return j;
    first = false;
    if (p[j] === "\\") j++;
    if (j >= p.length) break;
    if (p[j] === "-" && !(p[j - 1] === "[" || p[j - 1] === "^")) {
      // a range's end must exist and not close the class
      if (j + 1 >= p.length || p[j + 1] === "]") throw new BadPattern(pattern);
    }
  }
  throw new BadPattern(pattern);
}

function match(p: string[], pi: number, n: string[], ni: number): boolean {
  while (pi < p.length) {
    const c = p[pi];
    if (c === "*") {
      while (pi < p.length && p[pi] === "*") pi++;
      if (pi === p.length) return !n.slice(ni).includes("/");
      for (let k = ni; k <= n.length; k++) {
        if (match(p, pi, n, k)) return true;
        if (k < n.length && n[k] === "/") return false;
      }
      return false;
    }
    if (ni >= n.length) return false;
    if (c === "?") {
      if (n[ni] === "/") return false;
    } else if (c === "[") {
      const end = classEnd(p, pi, p.join(""));
      if (n[ni] === "/" || !inClass(p.slice(pi + 1, end), n[ni])) return false;
      pi = end;
    } else if (c === "\\") {
      pi++;
      if (p[pi] !== n[ni]) return false;
    } else if (c !== n[ni]) {
      return false;
    }
    pi++;
    ni++;
  }
  return ni === n.length;
}

function inClass(cls: string[], ch: string): boolean {
  let i = 0;
  let negate = false;
  if (cls[0] === "^") {
    negate = true;
    i = 1;
  }
  let hit = false;
  const cp = ch.codePointAt(0)!;
  while (i < cls.length) {
    let lo = cls[i];
    if (lo === "\\") lo = cls[++i];
    i++;
    let hi = lo;
    if (cls[i] === "-" && i + 1 < cls.length) {
      hi = cls[i + 1];
      if (hi === "\\") {
        hi = cls[i + 2];
        i++;
      }
      i += 2;
    }
    if (lo.codePointAt(0)! <= cp && cp <= hi.codePointAt(0)!) hit = true;
  }
  return hit !== negate;
}
