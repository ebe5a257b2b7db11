// The OpenAI Agents SDK's conversation memory against modelgate, on the
// SDK's default model: an OpenAIConversationsSession holds the history
// across two runs (the second run's prompt is the first run's turn and
// its own input), and runs given a conversationId continue a conversation
// kept by the server (responses.create's `conversation`). Prints one line
// per check; exits non-zero on the first failure.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Agent, OpenAIConversationsSession, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';

const client = new OpenAI({ baseURL: process.env.MODELGATE_BASE_URL, apiKey: process.env.MODELGATE_API_KEY, maxRetries: 0 });
setDefaultOpenAIClient(client);
setTracingDisabled(true);

const instructions = 'Answer briefly.';
const agent = new Agent({ name: 'Assistant', instructions });

// texts is what a conversation holds, oldest first, one string per item.
async function texts(conversationId) {
  const out = [];
  for await (const item of client.conversations.items.list(conversationId, { order: 'asc', limit: 2 })) {
    out.push(item.type === 'message' ? item.content.map((c) => c.text).join('') : item.type);
  }
  return out;
}

// The reply to these turns sent whole, as one response of no conversation.
async function replyTo(model, turns) {
  const input = turns.map((text, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text }));
  const r = await client.responses.create({ model, instructions, input, store: false });
  return r.output_text;
}

// A session over two runs.
const session = new OpenAIConversationsSession({ client });
const first = await run(agent, 'My name is Ada.', { session });
assert.ok(first.finalOutput, 'the first run answered');
const second = await run(agent, 'What is my name?', { session });
// The model the SDK chose by default, as the response names it.
const model = (await client.responses.retrieve(second.lastResponseId)).model;
const id = await session.getSessionId();
assert.match(id, /^conv_/);
assert.deepEqual(await texts(id), ['My name is Ada.', first.finalOutput, 'What is my name?', second.finalOutput]);
const items = await session.getItems();
assert.equal(items.length, 4, 'the session reads back its four items');
assert.equal(second.finalOutput, await replyTo(model, ['My name is Ada.', first.finalOutput, 'What is my name?']),
  'the second run was made from the first run\'s turn and its own input');
console.log(`session ${id} on ${model}: two runs, four items, the second run saw the first`);

// popItem and clearSession.
const popped = await session.popItem();
assert.equal(popped?.content?.[0]?.text ?? popped?.content, second.finalOutput);
assert.equal((await texts(id)).length, 3);
await session.clearSession();
await assert.rejects(client.conversations.retrieve(id), (e) => e.status === 404);
console.log('session: popItem removed the last item, clearSession deleted the conversation');

// Runs continuing a server-side conversation by its ID.
const conv = await client.conversations.create({ metadata: { agent: 'assistant' } });
const a = await run(agent, 'Remember the number 7.', { conversationId: conv.id });
const b = await run(agent, 'Which number?', { conversationId: conv.id });
assert.deepEqual(await texts(conv.id), ['Remember the number 7.', a.finalOutput, 'Which number?', b.finalOutput]);
assert.equal(b.finalOutput, await replyTo(model, ['Remember the number 7.', a.finalOutput, 'Which number?']),
  'the second run was made from the conversation and its own input');
console.log(`conversationId ${conv.id}: two runs, four items, the second run saw the first`);
