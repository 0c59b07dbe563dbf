/**
 * Whether a thrown value is a bug rather than a reported failure:
 * JavaScript's own error types (a TypeError from reading a property of
 * undefined, and the like), and throws of values that are not Errors. The
 * SDK reports these as a Go plugin's panic is reported.
 */
export function isBug(e: unknown): boolean {
  if (!(e instanceof Error)) return true;
  return [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError].some((t) => e.constructor === t);
}
