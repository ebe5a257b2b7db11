// Streams a response with the official openai-node SDK, unchanged (only
// baseURL and apiKey set, and no retries), from a gateway whose chat
// provider cuts its stream midway: both ways the SDK offers to stream
// (iterating responses.create with stream true, and the responses.stream
// helper's finalResponse) must raise the gateway's error event rather than
// end quietly with half a reply. Run by TestNodeSDKRaisesACutResponsesStream
// (module/responses_stream_e2e_test.go); prints one JSON line.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.MODELGATE_BASE_URL, apiKey: process.env.MODELGATE_API_KEY, maxRetries: 0 });
const params = { model: 'gpt-4o', input: 'Say hello' };

// raised is what an error thrown by fn says, or null when none was.
async function raised(fn) {
  try {
    await fn();
    return null;
  } catch (e) {
    return { name: e.constructor.name, code: e.code ?? null, message: String(e.message) };
  }
}

const seen = [];
const iterated = await raised(async () => {
  const stream = await client.responses.create({ ...params, stream: true });
  for await (const ev of stream) seen.push(ev.type);
});
const helper = await raised(() => client.responses.stream(params).finalResponse());
console.log(JSON.stringify({ seen, iterated, helper }));
