// An agent served by the official A2A JavaScript SDK on 127.0.0.1 (a free port), for a2a_trio's
// client and CLI to call.  Prints "PORT <n>" once it listens.  The message's metadata.skillId
// picks the behaviour: echo (default), stream, ask (input-required, then an answer), wait
// (works until canceled).  JSON-RPC (v1.0, and v0.3 at the same URL) and HTTP+JSON (v1.0).
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';
import { randomUUID } from 'node:crypto';

const now = () => new Date().toISOString();
const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined });
const textOf = (message) =>
  message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

function card(base) {
  const skill = (id, description) => ({
    id,
    name: id,
    description,
    tags: [id],
    examples: [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  });
  return {
    name: 'js echo agent',
    description: 'An @a2a-js/sdk agent for a2a_trio interop tests',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      skill('echo', 'Completes with the text it was sent'),
      skill('stream', 'Streams the text back in two chunks'),
      skill('ask', 'Asks for a name, then greets it'),
      skill('wait', 'Works until canceled'),
    ],
    signatures: [],
  };
}

const cancels = new Map(); // task id -> resolve() of the wait that cancelTask ends

class Executor {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const skill = ctx.userMessage.metadata?.skillId ?? ctx.task?.metadata?.skillId ?? 'echo';
    const status = (state, message = undefined) =>
      bus.publish(AgentEvent.statusUpdate({
        taskId, contextId, metadata: undefined,
        status: { state, message, timestamp: now() },
      }));
    const artifact = (value, append = false, lastChunk = true) =>
      bus.publish(AgentEvent.artifactUpdate({
        taskId, contextId, append, lastChunk, metadata: undefined,
        artifact: {
          artifactId: 'answer',
          name: 'answer',
          description: '',
          parts: [text(value)],
          metadata: undefined,
          extensions: [],
        },
      }));
    if (!ctx.task) {
      bus.publish(AgentEvent.task({
        id: taskId,
        contextId,
        artifacts: [],
        history: [ctx.userMessage],
        metadata: { skillId: skill },
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      }));
    }
    const said = textOf(ctx.userMessage);
    if (skill === 'stream') {
      status(TaskState.TASK_STATE_WORKING);
      const half = Math.ceil(said.length / 2);
      artifact(said.slice(0, half), false, false);
      artifact(said.slice(half), true, true);
    } else if (skill === 'ask' && !ctx.task) {
      const question = {
        messageId: randomUUID(),
        contextId,
        taskId,
        role: Role.ROLE_AGENT,
        parts: [text('What is your name?')],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      status(TaskState.TASK_STATE_INPUT_REQUIRED, question);
      bus.finished();
      return;
    } else if (skill === 'ask') {
      artifact(`hello ${said}`);
    } else if (skill === 'wait') {
      status(TaskState.TASK_STATE_WORKING);
      await new Promise((resolve) => cancels.set(taskId, resolve));
      status(TaskState.TASK_STATE_CANCELED);
      bus.finished();
      return;
    } else {
      artifact(said);
    }
    status(TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  }

  async cancelTask(taskId) {
    cancels.get(taskId)?.();
    cancels.delete(taskId);
  }
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const agentCard = card(`http://127.0.0.1:${port}`);
  const handler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), new Executor());
  const options = { requestHandler: handler, userBuilder: UserBuilder.noAuthentication };
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ ...options, legacyCompat: { enabled: true } }));
  app.use('/a2a/rest', restHandler(options));
  process.stdout.write(`PORT ${port}\n`);
});
