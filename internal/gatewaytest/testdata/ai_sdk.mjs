// Drives modelgate with the Vercel AI SDK (`ai` and its OpenAI provider
// `@ai-sdk/openai`), unchanged: the provider's default model is the
// Responses API, with only baseURL and apiKey set. Run by
// module/ai_sdk_e2e_test.go, which serves the quick start and passes
// MODELGATE_BASE_URL (ending in /v1) and MODELGATE_API_KEY. Every check
// throws on a mismatch (exit status 1); on success the last line on
// stdout is a JSON summary. The provider's fetch is the global one,
// wrapped only to count the request bodies that send item references
// (the provider's way of passing a stored reply back).
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  generateText, streamText, generateObject, embedMany, tool, stepCountIs,
  convertToModelMessages, readUIMessageStream,
} from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { assert, checker, need } from './script_checks.mjs';

const turns = 5;
const sent = { responses: 0, item_references: 0 };
const openai = createOpenAI({
  baseURL: need('MODELGATE_BASE_URL'),
  apiKey: need('MODELGATE_API_KEY'),
  fetch: async (url, init) => {
    if (String(url).endsWith('/responses')) {
      sent.responses++;
      if (JSON.parse(init.body).input.some((item) => item.type === 'item_reference')) sent.item_references++;
    }
    return fetch(url, init);
  },
});
const model = openai('reference');
const checks = [];
const summary = { ai: version('ai'), provider: version('@ai-sdk/openai'), checks, sent };
const check = checker(checks, summary);

// version is a package's version, read beside its entry point (its
// exports hide package.json).
function version(pkg) {
  const require = createRequire(import.meta.url);
  for (let dir = dirname(require.resolve(pkg)); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    const version = existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version;
    if (version) return version;
  }
  throw new Error(`no version found for ${pkg}`);
}

const calls = [];
const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, forecast: 'sunny' };
    },
  }),
};

// question is turn n's user message: every other turn asks for the tool.
function question(n) {
  return n % 2 === 1 ? `Turn ${n}: use get_weather for a city, please.` : `Turn ${n}: tell me more.`;
}

// Each step of a turn that called the tool is the call, then the answer
// the model makes of its result.
function checkTurn(n, steps, text) {
  assert(text.length > 0, `turn ${n}: no text`);
  if (n % 2 === 1) {
    assert(steps.length === 2 && steps[0].toolCalls.length === 1 && steps[0].toolResults.length === 1, `turn ${n}: a tool call then an answer`, steps.length);
  }
}

// The documented multi-turn loop: the messages of each reply
// (response.messages) appended to the conversation and sent again.
await check('generate_text_turns', async () => {
  const messages = [];
  for (let n = 1; n <= turns; n++) {
    messages.push({ role: 'user', content: question(n) });
    const result = await generateText({ model, messages, tools, stopWhen: stepCountIs(5) });
    checkTurn(n, result.steps, result.text);
    messages.push(...result.response.messages);
  }
  return { messages: messages.length };
});

await check('stream_text_turns', async () => {
  const messages = [];
  for (let n = 1; n <= turns; n++) {
    messages.push({ role: 'user', content: question(n) });
    const result = streamText({ model, messages, tools, stopWhen: stepCountIs(5), onError: ({ error }) => { throw error; } });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    checkTurn(n, await result.steps, text);
    messages.push(...(await result.response).messages);
  }
  return { messages: messages.length };
});

// useChat's turns: the UI messages the client keeps (each reply rebuilt
// from the UI message stream, as useChat does) are what the server route
// converts back to model messages for the next streamText.
await check('use_chat_turns', async () => {
  const uiMessages = [];
  for (let n = 1; n <= turns; n++) {
    uiMessages.push({ id: `user-${n}`, role: 'user', parts: [{ type: 'text', text: question(n) }] });
    const result = streamText({ model, messages: await convertToModelMessages(uiMessages), tools, stopWhen: stepCountIs(5) });
    let reply;
    for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) reply = message;
    const text = reply.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert(text.length > 0, `turn ${n}: no text`, reply.parts);
    if (n % 2 === 1) assert(reply.parts.some((p) => p.type === 'tool-get_weather' && p.state === 'output-available'), `turn ${n}: the tool's result`, reply.parts);
    uiMessages.push(reply);
  }
  return { messages: uiMessages.length };
});

await check('generate_object', async () => {
  const { object } = await generateObject({
    model,
    schema: z.object({ name: z.string(), age: z.number().int(), tags: z.array(z.string()) }),
    prompt: 'A person',
  });
  assert(typeof object.name === 'string' && Number.isInteger(object.age) && Array.isArray(object.tags), 'an object of the schema', object);
});

await check('embed_many', async () => {
  const values = ['sunny day', 'rainy night', 'sunny morning'];
  const { embeddings } = await embedMany({ model: openai.embedding('reference-embedding'), values });
  assert(embeddings.length === values.length && embeddings.every((e) => e.length > 0 && e.length === embeddings[0].length), 'one embedding per value', embeddings.map((e) => e.length));
  return { dimensions: embeddings[0].length };
});

summary.tool_calls = calls.length;
console.log(JSON.stringify(summary));
