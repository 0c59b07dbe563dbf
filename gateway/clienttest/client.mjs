// client.mjs runs one call through an official SDK client and prints what
// happened as one JSON object on stdout, for clients_test.go to assert on.
//
// Environment:
//   BASE_URL  the API root the client is pointed at
//   API_KEY   the key the client presents
//   SCENARIO  JSON: {"sdk": "chat" | "responses" | "messages",
//                    "stream": bool, "params": {...request body...}}
//
// Output: {"result": <the SDK's accumulated object>, "error": <the SDK's
// error, if it threw>, "exchanges": [{"request", "status", "headers",
// "body"}], "texts": [<text deltas the helper emitted>]}. Every HTTP
// exchange is captured by a fetch wrapper given to the SDK client, so the
// raw bytes of the stream the helper accumulated are checked as well.
// Each SDK is imported only when used: loading both costs a second SDK's
// start-up on every run.
const scenario = JSON.parse(process.env.SCENARIO ?? "{}");
const exchanges = [];
const pending = [];

// capture passes a request to the real fetch and tees the response body,
// so the SDK reads one copy while the other is kept byte for byte.
async function capture(url, init) {
  const res = await fetch(url, init);
  const exchange = {
    url: String(url),
    request: typeof init?.body === "string" ? init.body : null,
    status: res.status,
    headers: Object.fromEntries(res.headers.entries()),
    body: "",
  };
  exchanges.push(exchange);
  if (!res.body) return res;
  const [forSDK, forUs] = res.body.tee();
  pending.push(new Response(forUs).arrayBuffer().then((buf) => {
    exchange.body = Buffer.from(buf).toString("latin1");
  }));
  return new Response(forSDK, { status: res.status, statusText: res.statusText, headers: res.headers });
}

function describe(err) {
  return {
    class: err?.constructor?.name ?? typeof err,
    status: err?.status ?? null,
    message: String(err?.message ?? err),
    error: err?.error ?? null,
    headers: err?.headers ? Object.fromEntries(new Headers(err.headers).entries()) : null,
  };
}

async function run() {
  const texts = [];
  const options = { baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 0, timeout: 60_000, fetch: capture };
  const params = scenario.params;
  switch (scenario.sdk) {
    case "chat": {
      const { default: OpenAI } = await import("openai");
      const client = new OpenAI(options);
      if (!scenario.stream) return [await client.chat.completions.create(params), texts];
      const stream = client.chat.completions.stream(params);
      stream.on("content", (delta) => texts.push(delta));
      return [await stream.finalChatCompletion(), texts];
    }
    case "responses": {
      const { default: OpenAI } = await import("openai");
      const client = new OpenAI(options);
      if (!scenario.stream) return [await client.responses.create(params), texts];
      const stream = client.responses.stream(params);
      stream.on("response.output_text.delta", (ev) => texts.push(ev.delta));
      return [await stream.finalResponse(), texts];
    }
    case "messages": {
      const { default: Anthropic } = await import("@anthropic-ai/sdk");
      const client = new Anthropic(options);
      if (!scenario.stream) return [await client.messages.create(params), texts];
      const stream = client.messages.stream(params);
      stream.on("text", (delta) => texts.push(delta));
      return [await stream.finalMessage(), texts];
    }
    default:
      throw new Error(`client.mjs: unknown sdk ${JSON.stringify(scenario.sdk)} in SCENARIO`);
  }
}

const out = { result: null, error: null, exchanges, texts: [] };
try {
  const [result, texts] = await run();
  out.result = result;
  out.texts = texts;
} catch (err) {
  out.error = describe(err);
}
await Promise.allSettled(pending);
process.stdout.write(JSON.stringify(out));
