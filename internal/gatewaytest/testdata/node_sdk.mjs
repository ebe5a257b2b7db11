// Drives modelgate with the official openai-node SDK, unchanged: only
// baseURL and apiKey are set. Run by module/node_sdk_e2e_test.go, which
// serves the quick start and passes MODELGATE_BASE_URL (ending in /v1) and
// MODELGATE_API_KEY. Every check throws on a mismatch (exit status 1); on
// success the last line on stdout is a JSON summary. One file over 400
// lines: the test copies this script (with script_checks.mjs) into a
// folder whose node_modules holds the SDK under test, and the checks run
// in order on one client with the helpers defined first.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import OpenAI, { APIError, AuthenticationError, BadRequestError, NotFoundError, toFile } from 'openai';
import { assert, checker, need } from './script_checks.mjs';

const baseURL = need('MODELGATE_BASE_URL');
const apiKey = need('MODELGATE_API_KEY');
const client = new OpenAI({ baseURL, apiKey });
const checks = [];
const summary = { sdk: sdkVersion(), checks };
const check = checker(checks, summary);

function sdkVersion() {
  const require = createRequire(import.meta.url);
  // The package's exports hide package.json: find it beside the entry point.
  const entry = require.resolve('openai');
  return JSON.parse(readFileSync(entry.replace(/index\.js$/, 'package.json'), 'utf8')).version;
}

// canonical is JSON with object keys sorted, so key order does not matter.
function canonical(v) {
  return JSON.stringify(v, (_, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}

function eq(got, want, what) {
  assert(canonical(got) === canonical(want), `${what}: want ${canonical(want)}`, got);
}

// expectError runs fn and returns the error it must throw, of class cls.
async function expectError(fn, cls, what) {
  try {
    await fn();
  } catch (err) {
    assert(err instanceof cls, `${what}: want ${cls.name}`, String(err));
    assert(err instanceof APIError, `${what}: not an APIError`, String(err));
    return err;
  }
  throw new Error(`${what}: no error`);
}

const chatParams = {
  model: 'reference',
  seed: 42,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Tell me about gateways in Node.' },
  ],
};

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city over some days.',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 1, maximum: 7 },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['city', 'days', 'unit'],
      additionalProperties: false,
    },
  },
};
const toolParams = {
  model: 'reference',
  seed: 3,
  messages: [{ role: 'user', content: 'Call get_weather for Paris, please.' }],
  tools: [weatherTool],
};

function checkWeatherArgs(args) {
  const parsed = JSON.parse(args);
  eq(Object.keys(parsed).sort(), ['city', 'days', 'unit'], 'tool arguments keys');
  assert(typeof parsed.city === 'string', 'city is a string', parsed);
  assert(Number.isInteger(parsed.days) && parsed.days >= 1 && parsed.days <= 7, 'days is an integer in 1..7', parsed);
  assert(['celsius', 'fahrenheit'].includes(parsed.unit), 'unit in its enum', parsed);
  return parsed;
}

let plain; // the non-streamed reply to chatParams
let toolCall; // the non-streamed tool call of toolParams

await check('chat', async () => {
  const res = await client.chat.completions.create(chatParams);
  eq(res.object, 'chat.completion', 'object');
  eq(res.model, 'reference', 'model');
  eq(res.choices.length, 1, 'choices');
  const [choice] = res.choices;
  eq(choice.message.role, 'assistant', 'role');
  eq(choice.finish_reason, 'stop', 'finish_reason');
  assert(typeof choice.message.content === 'string' && choice.message.content.length > 0, 'content', choice.message);
  assert(res.usage.prompt_tokens > 0 && res.usage.total_tokens === res.usage.prompt_tokens + res.usage.completion_tokens, 'usage', res.usage);
  // The raw response is reachable too, as SDK users read headers.
  const { response } = await client.chat.completions.create(chatParams).withResponse();
  assert(response.headers.get('content-type').startsWith('application/json'), 'content-type', response.headers.get('content-type'));
  plain = choice.message.content;
  return { content: plain, completion_tokens: res.usage.completion_tokens };
});

await check('chat_again_same_seed', async () => {
  const res = await client.chat.completions.create(chatParams);
  eq(res.choices[0].message.content, plain, 'same request, same reply');
});

await check('tools', async () => {
  const res = await client.chat.completions.create(toolParams);
  const [choice] = res.choices;
  eq(choice.finish_reason, 'tool_calls', 'finish_reason');
  eq(choice.message.tool_calls.length, 1, 'tool calls');
  [toolCall] = choice.message.tool_calls;
  eq(toolCall.type, 'function', 'tool call type');
  eq(toolCall.function.name, 'get_weather', 'tool name');
  assert(typeof toolCall.id === 'string' && toolCall.id.length > 0, 'tool call id', toolCall);
  const args = checkWeatherArgs(toolCall.function.arguments);
  // The tool's answer goes back; the reply quotes it.
  const after = await client.chat.completions.create({
    ...toolParams,
    messages: [...toolParams.messages, choice.message, { role: 'tool', tool_call_id: toolCall.id, content: 'sunny and 21 degrees' }],
  });
  eq(after.choices[0].finish_reason, 'stop', 'finish_reason after the tool message');
  assert(after.choices[0].message.content.includes('sunny and 21 degrees'), 'the reply quotes the tool result', after.choices[0].message.content);
  return { arguments: args };
});

await check('stream', async () => {
  // The stream helper: events, async iteration and the accumulated final completion.
  const stream = client.chat.completions.stream({ ...chatParams, stream_options: { include_usage: true } });
  let fromEvents = '';
  stream.on('content', (delta) => {
    fromEvents += delta;
  });
  let chunks = 0;
  let fromChunks = '';
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    eq(chunk.object, 'chat.completion.chunk', 'chunk object');
    for (const c of chunk.choices) fromChunks += c.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  const final = await stream.finalChatCompletion();
  eq(fromChunks, plain, 'streamed chunks vs the non-streamed reply');
  eq(fromEvents, plain, 'content events vs the non-streamed reply');
  eq(final.choices[0].message.content, plain, 'finalChatCompletion vs the non-streamed reply');
  eq(final.choices[0].finish_reason, 'stop', 'streamed finish_reason');
  assert(chunks > 2, 'more than one content chunk', chunks);
  assert(usage && usage.completion_tokens === summary.chat.completion_tokens, 'streamed usage', usage);

  // A plain `stream: true` create, iterated with for await.
  let raw = '';
  for await (const chunk of await client.chat.completions.create({ ...chatParams, stream: true })) {
    raw += chunk.choices[0]?.delta?.content ?? '';
  }
  eq(raw, plain, 'stream: true vs the non-streamed reply');
  return { chunks };
});

await check('stream_tools', async () => {
  // Tool-call deltas are accumulated by the helper into the same call.
  const stream = client.chat.completions.stream(toolParams);
  let argsDone = null;
  stream.on('tool_calls.function.arguments.done', (e) => {
    argsDone = e;
  });
  const final = await stream.finalChatCompletion();
  const [choice] = final.choices;
  eq(choice.finish_reason, 'tool_calls', 'streamed finish_reason');
  eq(choice.message.tool_calls.length, 1, 'streamed tool calls');
  eq(choice.message.tool_calls[0].id, toolCall.id, 'streamed tool call id');
  eq(choice.message.tool_calls[0].function, toolCall.function, 'streamed tool call');
  assert(argsDone && argsDone.name === 'get_weather' && argsDone.arguments === toolCall.function.arguments, 'arguments.done event', argsDone);
});

await check('structured_output', async () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
      role: { type: 'string', enum: ['admin', 'user'] },
    },
    required: ['name', 'age', 'tags', 'role'],
    additionalProperties: false,
  };
  const res = await client.chat.completions.parse({
    model: 'reference',
    messages: [{ role: 'user', content: 'Describe a person.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema } },
  });
  const { parsed, content } = res.choices[0].message;
  eq(parsed, JSON.parse(content), 'parsed vs content');
  eq(Object.keys(parsed).sort(), ['age', 'name', 'role', 'tags'], 'keys');
  assert(typeof parsed.name === 'string', 'name', parsed);
  assert(Number.isInteger(parsed.age) && parsed.age >= 0 && parsed.age <= 150, 'age', parsed);
  assert(Array.isArray(parsed.tags) && parsed.tags.length >= 1 && parsed.tags.length <= 3 && parsed.tags.every((t) => typeof t === 'string'), 'tags', parsed);
  assert(['admin', 'user'].includes(parsed.role), 'role', parsed);
  return parsed;
});

await check('files', async () => {
  // Binary content with what a multipart parser could trip on: CRLF,
  // dashes like a boundary, NUL bytes.
  const tricky = Buffer.from('\r\n--\r\n------WebKitFormBoundary\r\n\0\0', 'latin1');
  const contents = [0, 1, 2].map((i) => Buffer.concat([randomBytes(64 << 10), tricky, Buffer.from(`file ${i}`)]));
  const names = ['a.bin', 'b "quoted".bin', 'c-é.bin'];
  const uploaded = [];
  for (let i = 0; i < contents.length; i++) {
    const f = await client.files.create({ file: await toFile(contents[i], names[i]), purpose: 'assistants' });
    eq(f.object, 'file', 'object');
    eq(f.bytes, contents[i].length, 'bytes');
    eq(f.filename, names[i], 'filename');
    eq(f.purpose, 'assistants', 'purpose');
    uploaded.push(f.id);
  }
  // A Node stream through toFile as well.
  const { Readable } = await import('node:stream');
  const streamed = await client.files.create({ file: await toFile(Readable.from([Buffer.from('line one\n'), Buffer.from('line two\n')]), 'lines.txt'), purpose: 'assistants' });
  eq(streamed.bytes, 18, 'bytes of the streamed upload');
  uploaded.push(streamed.id);

  // Auto-pagination over pages of one.
  const seen = [];
  for await (const f of client.files.list({ limit: 1 })) seen.push(f.id);
  eq([...seen].sort(), [...uploaded].sort(), 'auto-paginated list');
  eq(new Set(seen).size, seen.length, 'no file listed twice');
  let pages = 0;
  for await (const page of (await client.files.list({ limit: 1 })).iterPages()) {
    pages++;
    assert(page.data.length <= 1, 'page size', page.data.length);
  }
  assert(pages >= uploaded.length, 'one page per file', pages);

  for (let i = 0; i < contents.length; i++) {
    const body = Buffer.from(await (await client.files.content(uploaded[i])).arrayBuffer());
    assert(body.equals(contents[i]), `content of ${names[i]} differs: ${body.length} bytes back for ${contents[i].length}`);
    const got = await client.files.retrieve(uploaded[i]);
    eq(got.id, uploaded[i], 'retrieved id');
  }
  for (const id of uploaded) {
    const del = await client.files.delete(id);
    eq(del, { id, object: 'file', deleted: true }, 'delete');
  }
  await expectError(() => client.files.retrieve(uploaded[0]), NotFoundError, 'deleted file');
  return { uploaded: uploaded.length, pages };
});

await check('threads', async () => {
  const thread = await client.beta.threads.create({
    metadata: { project: 'node' },
    messages: [{ role: 'user', content: 'first message' }],
  });
  eq(thread.object, 'thread', 'object');
  eq(thread.metadata, { project: 'node' }, 'metadata');
  const got = await client.beta.threads.retrieve(thread.id);
  eq(got.id, thread.id, 'retrieved id');
  eq(got.created_at, thread.created_at, 'created_at');
  const updated = await client.beta.threads.update(thread.id, { metadata: { project: 'node', stage: 'updated' } });
  eq(updated.metadata, { project: 'node', stage: 'updated' }, 'updated metadata');
  eq((await client.beta.threads.retrieve(thread.id)).metadata, updated.metadata, 'metadata after update');
  const del = await client.beta.threads.delete(thread.id);
  eq(del, { id: thread.id, object: 'thread.deleted', deleted: true }, 'delete');
  await expectError(() => client.beta.threads.retrieve(thread.id), NotFoundError, 'deleted thread');
});

await check('vector_stores', async () => {
  const vs = await client.vectorStores.create({ name: 'node-corpus', metadata: { sdk: 'node' } });
  eq(vs.object, 'vector_store', 'object');
  eq(vs.name, 'node-corpus', 'name');
  const docs = {
    'zebra.md': '# Migration\n\nThe zebra migration crosses the Mara river every summer.\n',
    'kiln.txt': 'Pottery notes: the kiln reaches cone six after eleven hours of firing.\n',
  };
  const ids = {};
  for (const [name, text] of Object.entries(docs)) {
    const f = await client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });
    ids[name] = f.id;
  }
  // createAndPoll attaches and polls until the ingestion ends.
  const attached = await client.vectorStores.files.createAndPoll(vs.id, { file_id: ids['zebra.md'], attributes: { kind: 'wildlife' } }, { pollIntervalMs: 50 });
  eq(attached.status, 'completed', 'attached status');
  eq(attached.vector_store_id, vs.id, 'vector_store_id');
  eq(attached.attributes, { kind: 'wildlife' }, 'attributes');
  // uploadAndPoll uploads and attaches in one helper.
  const second = await client.vectorStores.files.uploadAndPoll(vs.id, await toFile(Buffer.from(docs['kiln.txt']), 'kiln2.txt'), { pollIntervalMs: 50 });
  eq(second.status, 'completed', 'uploadAndPoll status');
  const store = await client.vectorStores.retrieve(vs.id);
  eq(store.file_counts.completed, 2, 'completed files');

  const results = [];
  for await (const r of client.vectorStores.search(vs.id, { query: 'Where does the zebra migration cross?' })) results.push(r);
  assert(results.length >= 1, 'search results', results);
  eq(results[0].file_id, ids['zebra.md'], 'first result');
  eq(results[0].filename, 'zebra.md', 'first result filename');
  assert(results[0].score > 0 && results[0].score <= 1, 'score', results[0].score);
  assert(results[0].content.some((c) => c.type === 'text' && c.text.includes('Mara river')), 'result text', results[0].content);
  const filtered = await client.vectorStores.search(vs.id, { query: 'kiln', filters: { type: 'eq', key: 'kind', value: 'wildlife' } });
  assert(filtered.data.every((r) => r.file_id === ids['zebra.md']), 'filter keeps only wildlife', filtered.data);

  const files = [];
  for await (const f of client.vectorStores.files.list(vs.id, { limit: 1 })) files.push(f.id);
  eq(files.length, 2, 'store files listed');
  const del = await client.vectorStores.delete(vs.id);
  eq(del.deleted, true, 'store deleted');
  return { results: results.length };
});

await check('batches', async () => {
  const n = 4;
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'reference', seed: i, messages: [{ role: 'user', content: `batch line ${i}` }] } }));
  }
  const input = await client.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'batch.jsonl'), purpose: 'batch' });
  let batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'node' } });
  eq(batch.object, 'batch', 'object');
  eq(batch.metadata, { job: 'node' }, 'metadata');
  const terminal = ['completed', 'failed', 'expired', 'cancelled'];
  // Bounded by a count of polls, not by the clock.
  for (let polls = 0; !terminal.includes(batch.status); polls++) {
    assert(polls < 3000, 'batch still not done after 3000 polls', batch.status);
    await new Promise((r) => setTimeout(r, 100));
    batch = await client.batches.retrieve(batch.id);
  }
  eq(batch.status, 'completed', 'batch status');
  eq(batch.request_counts, { total: n, completed: n, failed: 0 }, 'request_counts');
  const text = await (await client.files.content(batch.output_file_id)).text();
  const out = text.trim().split('\n').map((l) => JSON.parse(l));
  eq(out.map((l) => l.custom_id).sort(), lines.map((_, i) => `req-${i}`), 'custom_ids');
  for (const l of out) {
    eq(l.response.status_code, 200, `${l.custom_id} status`);
    eq(l.error, null, `${l.custom_id} error`);
    assert(l.response.body.choices[0].message.content.includes(`batch line ${l.custom_id.slice(4)}`), `${l.custom_id} reply quotes its line`, l.response.body);
  }
  const outFile = await client.files.retrieve(batch.output_file_id);
  eq(outFile.purpose, 'batch_output', 'output purpose');
  return { lines: out.length };
});

await check('responses', async () => {
  const tool = { type: 'function', strict: true, ...weatherTool.function };
  const first = await client.responses.create({ model: 'reference', input: 'Tell me about rivers', instructions: 'Be brief.' });
  eq(first.object, 'response', 'object');
  eq(first.status, 'completed', 'status');
  assert(first.id.startsWith('resp_') && first.output_text.includes('Tell me about rivers'), 'output_text', first);
  assert(first.usage.total_tokens === first.usage.input_tokens + first.usage.output_tokens, 'usage', first.usage);
  const got = await client.responses.retrieve(first.id);
  eq(got.output, first.output, 'retrieved output');
  const items = await client.responses.inputItems.list(first.id);
  eq(items.data.map((i) => i.content[0].text), ['Tell me about rivers'], 'input items');
  // A tool call, answered with previous_response_id and the call's output.
  const call = await client.responses.create({ model: 'reference', input: 'Call get_weather for Paris, please.', tools: [tool] });
  const fc = call.output.find((o) => o.type === 'function_call');
  assert(fc && fc.name === 'get_weather' && fc.call_id, 'function_call', call.output);
  const args = checkWeatherArgs(fc.arguments);
  const answer = await client.responses.create({
    model: 'reference', previous_response_id: call.id, tools: [tool],
    input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'sunny and 21 degrees' }],
  });
  assert(answer.output_text.includes('sunny and 21 degrees'), 'the answer quotes the tool result', answer.output_text);
  // Structured output.
  const person = await client.responses.create({
    model: 'reference', input: 'A person',
    text: { format: { type: 'json_schema', name: 'person', strict: true, schema: weatherTool.function.parameters } },
  });
  checkWeatherArgs(person.output_text);
  // The stream helper, and the raw events in order.
  const helper = client.responses.stream({ model: 'reference', input: 'Hello stream' });
  let fromEvents = '';
  helper.on('response.output_text.delta', (ev) => { fromEvents += ev.delta; });
  const final = await helper.finalResponse();
  eq(fromEvents, final.output_text, 'deltas add up to the final text');
  assert(final.usage.output_tokens > 0, 'final usage', final.usage);
  const raw = await client.responses.create({ model: 'reference', input: 'Hello stream', stream: true });
  const types = [];
  let seq = -1;
  for await (const ev of raw) {
    eq(ev.sequence_number, seq + 1, 'sequence_number');
    seq = ev.sequence_number;
    if (types.at(-1) !== ev.type) types.push(ev.type);
  }
  eq(types, ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed'], 'event order');
  await client.responses.delete(first.id);
  await expectError(() => client.responses.retrieve(first.id), NotFoundError, 'a deleted response');
  const gone = await expectError(() => client.responses.create({ model: 'reference', input: 'x', previous_response_id: first.id }), NotFoundError, 'continuing a deleted response');
  eq(gone.param, 'previous_response_id', 'param');
  return { arguments: args };
});

await check('embeddings', async () => {
  const input = ['the cat sleeps', 'a car drives'];
  const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input, dimensions: 64, encoding_format: 'float' });
  eq(floats.data.map((d) => d.embedding.length), [64, 64], 'dimensions');
  assert(floats.usage.prompt_tokens > 0, 'usage', floats.usage);
  // Without encoding_format the SDK asks for base64 and decodes it.
  const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input, dimensions: 64 });
  eq(decoded.data[1].embedding, floats.data[1].embedding.map(Math.fround), 'base64 decoded to the float vector');
  const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input, dimensions: 64, encoding_format: 'base64' });
  eq(Buffer.from(b64.data[0].embedding, 'base64').length, 64 * 4, 'base64 bytes');
});

await check('errors', async () => {
  const wrong = new OpenAI({ baseURL, apiKey: 'sk-not-a-modelgate-key' });
  const unauth = await expectError(() => wrong.chat.completions.create(chatParams), AuthenticationError, 'wrong key');
  eq(unauth.status, 401, 'wrong key status');
  assert(typeof unauth.error?.message === 'string' && unauth.error.message.length > 0, 'wrong key message', unauth.error);
  const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  const tooMany = await expectError(() => client.chat.completions.create({ ...chatParams, metadata }), BadRequestError, '17 metadata pairs');
  eq(tooMany.status, 400, '17 metadata pairs status');
  eq(tooMany.param, 'metadata', '17 metadata pairs param');
  eq(tooMany.type, 'invalid_request_error', '17 metadata pairs type');
  const threadErr = await expectError(() => client.beta.threads.create({ metadata }), BadRequestError, 'thread with 17 metadata pairs');
  eq(threadErr.param, 'metadata', 'thread metadata param');
  const missing = await expectError(() => client.files.retrieve('file-doesnotexist'), NotFoundError, 'missing file');
  eq(missing.status, 404, 'missing file status');
  return { unauthorized: unauth.status, limit: { status: tooMany.status, param: tooMany.param } };
});

console.log(JSON.stringify(summary));
