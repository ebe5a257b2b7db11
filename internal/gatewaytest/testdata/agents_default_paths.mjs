// The OpenAI Agents SDK's default paths against modelgate, on the SDK's
// default model: a function tool called, run and its output sent back
// (a function_call_output input item of the Responses API) before the
// final output; a handoff from a triage agent to a specialist; the same
// tool run streamed, ending on the non-streamed run's final output.
// The reference engine calls a tool when tool_choice is 'required' and,
// after tool output, answers "The tool results were: <output>. …"; the
// SDK resets tool_choice after a tool call (resetToolChoice), so each
// run is two model calls. Prints one line per check; exits non-zero on
// the first failure.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { z } from 'zod';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';

const client = new OpenAI({ baseURL: process.env.MODELGATE_BASE_URL, apiKey: process.env.MODELGATE_API_KEY, maxRetries: 0 });
setDefaultOpenAIClient(client);
setTracingDisabled(true);

// A function tool whose every invocation is kept with its arguments.
const forecast = z.object({
  city: z.string(),
  unit: z.enum(['celsius', 'fahrenheit']),
  days: z.number().int().min(1).max(7),
});
const calls = [];
const getForecast = tool({
  name: 'get_forecast',
  description: 'The weather forecast for a city.',
  parameters: forecast,
  execute: async (args) => {
    calls.push(args);
    return `${args.days} days of sun in ${args.city}, 21 degrees ${args.unit}`;
  },
});
const weather = new Agent({
  name: 'Weather',
  instructions: 'Answer with the forecast.',
  tools: [getForecast],
  modelSettings: { toolChoice: 'required' },
});
const question = 'What is the weather in Paris this week?';

// kinds is the types of a run's new items, in order.
const kinds = (items) => items.map((item) => item.type);

// 1. A function tool: called with its schema's arguments, its output sent
// back, and a final output made from it.
const ran = await run(weather, question);
assert.equal(calls.length, 1, 'the tool ran once');
const args = calls[0];
assert.deepEqual(forecast.parse(args), args, 'the tool got arguments of its schema');
const output = `${args.days} days of sun in ${args.city}, 21 degrees ${args.unit}`;
assert.deepEqual(kinds(ran.newItems), ['tool_call_item', 'tool_call_output_item', 'message_output_item']);
const [call, result] = ran.newItems;
assert.equal(call.rawItem.type, 'function_call');
assert.equal(call.rawItem.name, 'get_forecast');
assert.deepEqual(JSON.parse(call.rawItem.arguments), args, 'the call item holds the arguments the tool got');
assert.equal(result.rawItem.type, 'function_call_result');
assert.equal(result.rawItem.callId, call.rawItem.callId, 'the output answers the call');
assert.equal(result.output, output);
assert.equal(ran.rawResponses.length, 2, 'two model calls: the tool call, then the answer');
assert.ok(ran.finalOutput.startsWith(`The tool results were: ${output}.`),
  `the final output was made from the tool's output: ${ran.finalOutput}`);
// What the gateway kept as the second call's input: the call and its output.
const input = [];
for await (const item of client.responses.inputItems.list(ran.lastResponseId, { order: 'asc' })) input.push(item);
const sent = input.find((item) => item.type === 'function_call_output');
assert.ok(sent, `the second call's input holds a function_call_output: ${JSON.stringify(input.map((i) => i.type))}`);
assert.equal(sent.call_id, call.rawItem.callId);
assert.equal(sent.output, output);
assert.ok(input.some((item) => item.type === 'function_call' && item.call_id === call.rawItem.callId), 'and the call');
const model = (await client.responses.retrieve(ran.lastResponseId)).model;
console.log(`tool on ${model}: get_forecast(${JSON.stringify(args)}) ran, its output went back as function_call_output, final output "${ran.finalOutput.slice(0, 60)}…"`);

// 2. A handoff: the triage agent's only tool is the transfer, which it
// must call; the specialist (no tool choice of its own) answers.
const specialist = new Agent({ name: 'Specialist', instructions: 'Answer the question.', handoffDescription: 'Answers weather questions.' });
const triage = new Agent({ name: 'Triage', instructions: 'Hand the question off.', handoffs: [specialist], modelSettings: { toolChoice: 'required' } });
const handed = await run(triage, question);
assert.equal(handed.lastAgent.name, 'Specialist', 'the run ended on the specialist');
assert.deepEqual(kinds(handed.newItems), ['handoff_call_item', 'handoff_output_item', 'message_output_item']);
const [transfer, transferred, answer] = handed.newItems;
assert.equal(transfer.rawItem.name, 'transfer_to_Specialist');
assert.equal(transfer.agent.name, 'Triage');
assert.equal(transferred.sourceAgent.name, 'Triage');
assert.equal(transferred.targetAgent.name, 'Specialist');
assert.equal(answer.agent.name, 'Specialist');
assert.equal(handed.rawResponses.length, 2, 'two model calls: the transfer, then the answer');
const last = await client.responses.retrieve(handed.lastResponseId);
assert.equal(last.instructions, specialist.instructions, 'the specialist made the last call');
assert.ok(handed.finalOutput.startsWith(`The tool results were: ${JSON.stringify({ assistant: 'Specialist' })}.`),
  `the specialist answered from the transfer's output: ${handed.finalOutput}`);
console.log(`handoff: Triage called transfer_to_Specialist, Specialist answered "${handed.finalOutput.slice(0, 60)}…"`);

// 3. Streaming: the tool run again, streamed; its events in order and
// the same final output as the run above.
calls.length = 0;
const stream = await run(weather, question, { stream: true });
const named = [];
let raw = 0;
let deltas = '';
for await (const event of stream) {
  if (event.type === 'raw_model_stream_event') {
    raw++;
    if (event.data.type === 'output_text_delta') deltas += event.data.delta;
  } else if (event.type === 'run_item_stream_event') {
    named.push(event.name);
  }
}
await stream.completed;
assert.equal(stream.error ?? null, null, 'the stream ended without an error');
assert.deepEqual(calls, [args], 'the streamed run called the tool with the same arguments');
assert.deepEqual(named, ['tool_called', 'tool_output', 'message_output_created']);
assert.ok(raw > 2, `raw model events arrived (${raw})`);
assert.equal(deltas, ran.finalOutput, 'the text deltas make the final output');
assert.equal(stream.finalOutput, ran.finalOutput, 'the streamed final output is the non-streamed one');
console.log(`streaming: ${raw} raw model events, items ${named.join(', ')}, the same final output`);
