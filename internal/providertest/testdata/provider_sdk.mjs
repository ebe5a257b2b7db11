// Drives a gateway in front of one provider's fake with openai-node, as a
// user's code would (only baseURL and apiKey set), and prints what the SDK
// parsed as one JSON line for internal/providertest's NodeSDK to check:
// chat plain and streamed (the stream helper's events, chunks and final
// completion), a tool round trip plain and streamed (the helper's
// accumulated tool call and its arguments.done event), with
// reasoning_effort when the test sets one, and embeddings (the SDK's
// default base64, decoded by it, and float).
import OpenAI from 'openai';
import { VERSION } from 'openai/version';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const client = new OpenAI({ baseURL: need('MODELGATE_BASE_URL'), apiKey: need('MODELGATE_API_KEY'), maxRetries: 0 });
const model = need('MODELGATE_MODEL');
const effort = process.env.MODELGATE_REASONING_EFFORT;
const tool = {
  type: 'function',
  function: {
    name: need('MODELGATE_TOOL'),
    description: 'Current weather of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const report = { sdk: VERSION };
const hello = { model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }] };

const plain = await client.chat.completions.create(hello);
report.chat = { content: plain.choices[0].message.content, finish_reason: plain.choices[0].finish_reason, usage: plain.usage };

{
  const stream = client.chat.completions.stream({ ...hello, stream_options: { include_usage: true } });
  let events = '';
  let chunks = '';
  let usage = null;
  stream.on('content', (delta) => {
    events += delta;
  });
  for await (const chunk of stream) {
    if (chunk.choices.length > 0) chunks += chunk.choices[0].delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  const final = await stream.finalChatCompletion();
  report.stream = { content: final.choices[0].message.content, events, chunks, finish_reason: final.choices[0].finish_reason, usage };
}

// toolRound asks for the weather, answers the tool call and returns what
// the SDK made of both turns.
async function toolRound(streamed, reasoning_effort) {
  const params = { model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [tool] };
  if (reasoning_effort) params.reasoning_effort = reasoning_effort;
  let first;
  let argsDone = null;
  if (streamed) {
    const stream = client.chat.completions.stream(params);
    stream.on('tool_calls.function.arguments.done', (e) => {
      argsDone = { name: e.name, arguments: e.arguments };
    });
    first = await stream.finalChatCompletion();
  } else {
    first = await client.chat.completions.create(params);
  }
  const [call] = first.choices[0].message.tool_calls;
  params.messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: process.env.MODELGATE_TOOL_RESULT });
  const second = streamed ? await client.chat.completions.stream(params).finalChatCompletion() : await client.chat.completions.create(params);
  return {
    finish_reason: first.choices[0].finish_reason,
    calls: first.choices[0].message.tool_calls.length,
    name: call.function.name,
    arguments: call.function.arguments,
    id: call.id.length > 0,
    args_done: argsDone,
    after: second.choices[0].message.content,
    after_finish: second.choices[0].finish_reason,
  };
}
report.tools = await toolRound(false);
report.stream_tools = await toolRound(true);
if (effort) {
  report.reasoning_tools = await toolRound(false, effort);
  report.reasoning_stream_tools = await toolRound(true, effort);
}

if (process.env.MODELGATE_EMBEDDING_MODEL) {
  const input = ['first', 'second'];
  const embedding = process.env.MODELGATE_EMBEDDING_MODEL;
  const base64 = await client.embeddings.create({ model: embedding, input });
  const float = await client.embeddings.create({ model: embedding, input, encoding_format: 'float' });
  report.embeddings = {
    default: base64.data.map((d) => ({ index: d.index, embedding: Array.from(d.embedding) })),
    float: float.data.map((d) => ({ index: d.index, embedding: d.embedding })),
  };
}

console.log(JSON.stringify(report));
