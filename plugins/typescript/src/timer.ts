// Timers for any delay: Node fires a setTimeout longer than 2^31-1 ms
// (24.8 days) at once, and a host may well give a call a deadline that far
// away (a raised timeout while debugging).

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls fn after ms milliseconds; returns what cancels it. */
export function after(ms: number, fn: () => void): () => void {
  const at = Date.now() + ms;
  let t: NodeJS.Timeout;
  const arm = (): void => {
    const left = at - Date.now();
    t = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, Math.max(0, left));
  };
  arm();
  return () => clearTimeout(t);
}
