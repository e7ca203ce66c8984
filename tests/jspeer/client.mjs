// The official A2A JavaScript SDK's client driving an A2A server over one binding.
// Usage: node client.mjs BASE_URL BINDING VERSION   (BINDING: JSONRPC or HTTP+JSON; VERSION: 1.0
// or 0.3).  Prints one JSON report on stdout: what each operation returned or threw.
import { Role, TaskState } from '@a2a-js/sdk';
import { connect, thrown } from './connect.mjs';
import { randomUUID } from 'node:crypto';

const [baseUrl, binding, version] = process.argv.slice(2);
const client = await connect(baseUrl, binding, version);

function message(text, skill, more = {}) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined }],
    metadata: { skillId: skill },
    contextId: '',
    taskId: '',
    extensions: [],
    referenceTaskIds: [],
    ...more,
  };
}

function request(text, skill, { returnImmediately = false, ...more } = {}) {
  const configuration = {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    returnImmediately,
  };
  return { tenant: '', message: message(text, skill, more), configuration, metadata: undefined };
}

const texts = (parts) => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const stateName = (state) => TaskState[state];

function summary(task) {
  return {
    id: task.id,
    contextId: task.contextId,
    state: stateName(task.status?.state),
    artifacts: task.artifacts.map((a) => texts(a.parts)),
    history: task.history.length,
  };
}

function eventSummary(event) {
  const { $case, value } = event.payload;
  switch ($case) {
    case 'task':
      return { kind: 'task', id: value.id, state: stateName(value.status?.state) };
    case 'statusUpdate':
      return { kind: 'status', state: stateName(value.status?.state) };
    case 'artifactUpdate':
      return { kind: 'artifact', text: texts(value.artifact.parts) };
    default:
      return { kind: $case, text: texts(value.parts) };
  }
}

const report = { protocolVersion: client.protocolVersion, transport: client.transport.constructor.name };

const card = await client.getAgentCard();
report.card = { name: card.name, skills: card.skills.map((s) => s.id) };
report.interfaces = card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]);
report.endpoint = client.transport.endpoint;

const sent = await client.sendMessage(request('blocking', 'echo'));
report.send = summary(sent);

const quick = await client.sendMessage(request('hi', 'quick'));
report.quick = { role: Role[quick.role], text: texts(quick.parts) };

report.stream = [];
for await (const event of client.sendMessageStream(request('abc', 'parked'))) {
  report.stream.push(eventSummary(event));
}

report.get = summary(await client.getTask({ tenant: '', id: sent.id, historyLength: 1 }));

report.list = await thrown(async () => {
  const status = TaskState.TASK_STATE_UNSPECIFIED;
  const { contextId } = sent;
  const page = await client.listTasks({ tenant: '', contextId, status, pageSize: 10, pageToken: '' });
  return page.tasks.map((t) => t.id);
});
// A caller outside the SDK's types that leaves the status out: the JSON-RPC transport writes
// it as "UNRECOGNIZED", the HTTP+JSON one leaves it out of the query.
report.listUnset = await thrown(async () => {
  const { contextId } = sent;
  const page = await client.listTasks({ tenant: '', contextId, pageSize: 10, pageToken: '' });
  return page.tasks.map((t) => t.id);
});

// A task that waits until canceled: followed by resubscribe, canceled while followed.
const running = await client.sendMessage(request(randomUUID(), 'gated', { returnImmediately: true }));
report.running = summary(running);
const followed = client.resubscribeTask({ tenant: '', id: running.id });
report.resubscribe = [eventSummary((await followed.next()).value)];
report.cancel = summary(await client.cancelTask({ tenant: '', id: running.id }));
for await (const event of followed) {
  report.resubscribe.push(eventSummary(event));
}
// Listed with its artifacts asked for: the canceled task has none, an empty list on the wire.
report.listArtifacts = await thrown(async () => {
  const status = TaskState.TASK_STATE_CANCELED;
  const { contextId } = running;
  const page = await client.listTasks({ tenant: '', contextId, status, pageToken: '', includeArtifacts: true });
  return page.tasks.map(summary);
});

// Multi-turn: the agent asks, the answer goes to the same task.
const asked = await client.sendMessage(request('start', 'ask'));
report.asked = summary(asked);
const answered = await client.sendMessage(
  request('Ada', 'ask', { taskId: asked.id, contextId: asked.contextId }),
);
report.answered = summary(answered);

report.errors = {
  getUnknown: await thrown(() => client.getTask({ tenant: '', id: 'no-such-task' })),
  cancelFinished: await thrown(() => client.cancelTask({ tenant: '', id: sent.id })),
  resubscribeFinished: await thrown(async () => {
    for await (const event of client.resubscribeTask({ tenant: '', id: sent.id })) {
      return eventSummary(event);
    }
  }),
};

// a2a_trio offers no push notifications (its card says pushNotifications: false).
const push = { tenant: '', taskId: sent.id, id: 'p1' };
const config = { ...push, url: 'http://127.0.0.1:9/hook', token: '', authentication: undefined };
report.push = {
  create: await thrown(() => client.createTaskPushNotificationConfig(config)),
  get: await thrown(() => client.getTaskPushNotificationConfig(push)),
  list: await thrown(() => client.listTaskPushNotificationConfig({ ...push, pageSize: 10, pageToken: '' })),
  delete: await thrown(() => client.deleteTaskPushNotificationConfig(push)),
};

process.stdout.write(JSON.stringify(report) + '\n');
