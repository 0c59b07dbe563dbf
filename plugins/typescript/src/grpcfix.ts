// A fix for @grpc/grpc-js's server (1.14, pinned in package-lock.json):
// it arms a call's grpc-timeout as one setTimeout, which Node fires at once
// for a delay over 2^31-1 ms (24.8 days), so a protocol 1 call from a host
// whose timeout is longer would fail before the SDK sees it. For such a
// deadline only, the server keeps the deadline and arms no timer; the SDK
// arms its own (timer.ts), which handles any delay. The Go test
// TestLongTimeoutUnderTheHost (plugins/typescript) fails if this stops
// applying, for instance after an upgrade of @grpc/grpc-js.

const MAX_TIMER_MS = 2 ** 31 - 1;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

export function fixLongServerDeadlines(): boolean {
  let mod: { BaseServerInterceptingCall?: { prototype: Record<string, unknown> } };
  try {
    mod = require("@grpc/grpc-js/build/src/server-interceptors");
  } catch {
    return false;
  }
  const proto = mod.BaseServerInterceptingCall?.prototype;
  const original = proto?.handleTimeoutHeader;
  if (!proto || typeof original !== "function" || (original as { hookhostFixed?: boolean }).hookhostFixed) return !!proto;
  const fixed = function (this: { deadline: number }, header: unknown) {
    const m = /^(\d{1,8})\s*([HMSmun])$/.exec(String(header));
    if (m) {
      const ms = Number(m[1]) * UNIT_MS[m[2]];
      if (ms > MAX_TIMER_MS) {
        this.deadline = Date.now() + ms;
        return;
      }
    }
    return (original as (h: unknown) => void).call(this, header);
  };
  (fixed as { hookhostFixed?: boolean }).hookhostFixed = true;
  proto.handleTimeoutHeader = fixed;
  return true;
}
