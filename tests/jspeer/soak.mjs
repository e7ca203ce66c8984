// A randomized soak: the official A2A JavaScript SDK's clients driving an A2A server at once.
// Usage: node soak.mjs BASE_URL SECONDS CLIENTS.  CLIENTS clients, each holding the SDK's client
// for v1.0 JSON-RPC, v1.0 HTTP+JSON, v0.3 JSON-RPC and v0.3 HTTP+JSON, pick random operations
// for SECONDS against the soak agent (tests/bindings/soak_agents.py); then the holders left are
// canceled and the questions left answered.  Judging is test_js_soak.py's: this prints one JSON
// object, {seed, calls}, each call what was asked, what came back (a task or the stream's
// events as v1.0 JSON, or the error's class, name and code) and when.  A2A_TRIO_JS_SOAK_SEED
// replays a seed (as far as the scheduling allows).
import { Role, StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

const [baseUrl, seconds, clientCount] = process.argv.slice(2);
const seed = Number(process.env.A2A_TRIO_JS_SOAK_SEED || Math.floor(Math.random() * 2 ** 32));
const VIAS = [
  ['JSONRPC', '1.0'],
  ['HTTP+JSON', '1.0'],
  ['JSONRPC', '0.3'],
  ['HTTP+JSON', '0.3'],
];

function random(state) {
  // mulberry32: a small seedable generator (Math.random takes no seed)
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const rng = random(seed);
const below = (n, r = rng) => Math.floor(r() * n);
const pick = (items, r = rng) => items[below(items.length, r)];
const take = (items, r) => items.splice(below(items.length, r), 1)[0];
let ids = 0;
const newId = () => `js-${seed}-${++ids}`;

async function openClients() {
  const legacyCompat = { enabled: true };
  const clients = {};
  for (const [binding, version] of VIAS) {
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ legacyCompat }), new RestTransportFactory({ legacyCompat })],
      preferredTransports: [binding],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
    });
    const path = version === '0.3' ? '/.well-known/agent.json' : '/.well-known/agent-card.json';
    clients[`${binding} ${version}`] = await factory.createFromUrl(baseUrl, path);
  }
  return clients;
}

function request(text, skill, { taskId = '', contextId = '', returnImmediately = false, historyLength } = {}) {
  const message = {
    messageId: newId(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined }],
    metadata: { skillId: skill },
    contextId,
    taskId,
    extensions: [],
    referenceTaskIds: [],
  };
  const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately, historyLength };
  return { tenant: '', message, configuration, metadata: undefined };
}

const asJson = (event) => StreamResponse.toJSON(event);
const taskJson = (task) => asJson({ payload: { $case: 'task', value: task } });
const TERMINAL = ['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED'];

const started = Date.now();
const calls = [];
const book = { holding: [], awaiting: [], trickling: [], finished: [], tasks: [], contexts: [], over: false };

// One call: what was asked, what came back, when.  `call` returns a task or a stream's events
// ({events, end}: 'end' read to the end, 'break' left after a few, 'abort' aborted by signal).
async function logged(client, via, op, asked, call) {
  const entry = { client, via, op, asked, at: Date.now() - started };
  calls.push(entry);
  try {
    Object.assign(entry, await call());
  } catch (error) {
    const code = error.envelopeCode ?? error.statusCode;
    const cause = error.cause && String(error.cause.code ?? error.cause.message);
    entry.error = { class: error.constructor.name, name: error.name, code, message: error.message, cause };
  }
  entry.ms = Date.now() - started - entry.at;
  return entry;
}

async function task(call) {
  return { task: taskJson(await call()) };
}

// Read a stream to its end, or `limit` events, or until `abortAfter` ms have passed.
async function read(open, limit, abortAfter) {
  const controller = new AbortController();
  const timer = abortAfter === undefined ? undefined : setTimeout(() => controller.abort(), abortAfter);
  const events = [];
  let end = 'end';
  try {
    for await (const event of open({ signal: controller.signal })) {
      events.push(asJson(event));
      if (events.length === limit) {
        end = 'break';
        break;
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    end = 'abort';
  } finally {
    clearTimeout(timer);
  }
  return { events, end };
}

// The task a call saw (a task answered, or a stream's) and the last state it saw it in.
function followed(entry) {
  const last = entry.task ?? entry.events?.at(-1);
  const id = (entry.task ?? entry.events?.[0])?.task?.id;
  return { id, state: (last?.task ?? last?.statusUpdate)?.status?.state };
}

function settled(entry) {
  const { id, state } = followed(entry);
  if (id && TERMINAL.includes(state)) {
    book.trickling = book.trickling.filter((t) => t !== id);
    if (!book.finished.includes(id)) book.finished.push(id);
  }
}

function words(r) {
  const odd = ['é', '漢字', '🙂', '"q"', 'b\\s', 'a\u2028b', '\u200b'];
  const n = 3 + below(6, r);
  return Array.from({ length: n }, () => (r() < 0.2 ? pick(odd, r) : `w${below(1000, r)}`)).join(' ');
}

const operations = {
  async send(c, v, r) {
    const skill = pick(['echo', 'echo', 'ask'], r);
    const text = skill === 'ask' ? '?' : words(r);
    const contextId = book.contexts.length && r() < 0.4 ? pick(book.contexts, r) : '';
    const historyLength = pick([undefined, 0, 1, 5], r);
    const asked = { skill, text, contextId, historyLength };
    const entry = await logged(c.id, v, 'send', asked, () =>
      task(() => c[v].sendMessage(request(text, skill, asked))),
    );
    if (entry.task) {
      book.tasks.push(entry.task.task.id);
      book.contexts.push(entry.task.task.contextId);
      if (skill === 'ask') book.awaiting.push(entry.task.task.id);
      settled(entry);
    }
  },
  // A message of every kind of part, with metadata, extensions and references: the task's
  // first message is what was sent, as the test holds it against the store.
  async parts(c, v, r) {
    const text = words(r);
    const sent = request(text, 'echo');
    const raw = Buffer.from(Array.from({ length: 1 + below(40, r) }, () => below(256, r)));
    sent.message.parts.push(
      { content: { $case: 'raw', value: raw }, metadata: undefined, filename: 'b.txt', mediaType: 'text/plain' },
      { content: { $case: 'url', value: 'https://example.com/f' }, metadata: undefined, filename: words(r), mediaType: 'text/plain' },
      { content: { $case: 'data', value: { n: below(100, r), list: [true, null, words(r)] } }, metadata: { at: r() }, filename: '', mediaType: '' },
    );
    sent.message.metadata = { skillId: 'echo', nested: { k: [1, 2.5, words(r)] } };
    sent.message.extensions = ['https://example.com/ext'];
    sent.message.referenceTaskIds = book.tasks.slice(-2);
    const asked = { text, message: asJson({ payload: { $case: 'message', value: sent.message } }) };
    const entry = await logged(c.id, v, 'parts', asked, async () => {
      const answer = await c[v].sendMessage(sent);
      return { task: taskJson(answer), got: taskJson(await c[v].getTask({ tenant: '', id: answer.id })) };
    });
    if (entry.task) book.tasks.push(entry.task.task.id);
    settled(entry);
  },
  async start(c, v, r) {
    const skill = pick(['hold', 'trickle'], r);
    const text = skill === 'hold' ? 'hold' : words(r);
    const asked = { skill, text, returnImmediately: true };
    const entry = await logged(c.id, v, 'start', asked, () =>
      task(() => c[v].sendMessage(request(text, skill, asked))),
    );
    if (entry.task) {
      book.tasks.push(entry.task.task.id);
      (skill === 'hold' ? book.holding : book.trickling).push(entry.task.task.id);
    }
  },
  async stream(c, v, r) {
    const skill = pick(['echo', 'trickle', 'ask'], r);
    const text = skill === 'ask' ? '?' : words(r);
    // a question's stream is read to its end: the clients answer what they saw asked
    const limit = skill === 'ask' ? undefined : pick([undefined, undefined, 1, 2, 3], r);
    const abortAfter = skill !== 'ask' && r() < 0.2 ? r() * 30 : undefined;
    const sent = request(text, skill);
    const asked = { skill, text, limit, abortAfter, messageId: sent.message.messageId };
    const entry = await logged(c.id, v, 'stream', asked, () =>
      read((options) => c[v].sendMessageStream(sent, options), limit, abortAfter),
    );
    const id = entry.events?.[0]?.task?.id;
    if (id) {
      book.tasks.push(id);
      if (skill === 'ask') book.awaiting.push(id);
      else if (entry.end !== 'end' && skill === 'trickle') book.trickling.push(id);
      settled(entry);
    }
  },
  async answer(c, v, r) {
    if (!book.awaiting.length) return;
    const id = take(book.awaiting, r);
    const name = `n${below(1e6, r)}`;
    const asked = { skill: 'ask', text: name, taskId: id, streaming: r() < 0.5 };
    const entry = await logged(c.id, v, 'answer', asked, () =>
      asked.streaming
        ? read((options) => c[v].sendMessageStream(request(name, 'ask', { taskId: id }), options))
        : task(() => c[v].sendMessage(request(name, 'ask', { taskId: id }))),
    );
    settled(entry);
  },
  // Two answers to one question at once, through two interfaces: one is taken, one refused.
  async race(c, v, r) {
    if (!book.awaiting.length) return;
    const id = take(book.awaiting, r);
    const vias = [v, pick(Object.keys(c).filter((k) => k !== 'id'), r)];
    const names = [`a${below(1e6, r)}`, `b${below(1e6, r)}`];
    const answer = async (i) => {
      try {
        return { task: taskJson(await c[vias[i]].sendMessage(request(names[i], 'ask', { taskId: id }))) };
      } catch (error) {
        return { error: { class: error.constructor.name, name: error.name } };
      }
    };
    const entry = await logged(c.id, v, 'race', { taskId: id, vias, names }, async () => ({
      answers: await Promise.all([answer(0), answer(1)]),
    }));
    settled({ task: entry.answers?.find((a) => a.task)?.task });
  },
  async resubscribe(c, v, r) {
    const running = [...book.holding, ...book.trickling, ...book.awaiting];
    if (!running.length) return;
    const id = pick(running, r);
    const limit = pick([undefined, 1, 2], r);
    const abortAfter = r() < 0.2 ? r() * 30 : undefined;
    const entry = await logged(c.id, v, 'resubscribe', { id, limit, abortAfter }, () =>
      read((options) => c[v].resubscribeTask({ tenant: '', id }, options), limit, abortAfter),
    );
    settled(entry);
  },
  async cancel(c, v, r) {
    const choice = r();
    let id;
    if (book.holding.length && choice < 0.4) id = take(book.holding, r);
    else if (book.awaiting.length && choice < 0.5) id = take(book.awaiting, r);
    else if (book.trickling.length && choice < 0.8) id = pick(book.trickling, r);
    else if (book.finished.length) id = pick(book.finished, r);
    else return;
    settled(await logged(c.id, v, 'cancel', { id }, () => task(() => c[v].cancelTask({ tenant: '', id }))));
  },
  async get(c, v, r) {
    if (!book.tasks.length) return;
    const id = pick(book.tasks, r);
    const historyLength = pick([undefined, 0, 1, 2, 100], r);
    const entry = await logged(c.id, v, 'get', { id, historyLength }, () =>
      task(() => c[v].getTask({ tenant: '', id, historyLength })),
    );
    settled(entry);
  },
  async listing(c, v, r) {
    const asked = { pageSize: 1 + below(7, r), pageToken: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED };
    const filter = below(3, r);
    if (filter === 0 && book.contexts.length) asked.contextId = pick(book.contexts, r);
    if (filter === 1) {
      const states = ['COMPLETED', 'WORKING', 'INPUT_REQUIRED', 'CANCELED'];
      asked.status = TaskState[`TASK_STATE_${pick(states, r)}`];
    }
    if (r() < 0.5) asked.historyLength = below(3, r);
    asked.includeArtifacts = r() < 0.5;
    for (let page = 0; page < 1 + below(3, r); page++) {
      const entry = await logged(c.id, v, 'listing', { ...asked }, async () => {
        const answer = await c[v].listTasks({ tenant: '', ...asked });
        return { tasks: answer.tasks.map(taskJson), nextPageToken: answer.nextPageToken, pageSize: answer.pageSize };
      });
      if (!entry.nextPageToken) return;
      asked.pageToken = entry.nextPageToken;
    }
  },
  async bad(c, v, r) {
    const kinds = ['getUnknown', 'cancelUnknown', 'subscribeUnknown', 'subscribeFinished', 'noSkill', 'late', 'bigPage', 'negativeHistory'];
    const kind = pick(kinds, r);
    const late = book.finished.length ? pick(book.finished, r) : undefined;
    const calls = {
      getUnknown: () => c[v].getTask({ tenant: '', id: newId() }),
      cancelUnknown: () => c[v].cancelTask({ tenant: '', id: newId() }),
      subscribeUnknown: () => read((options) => c[v].resubscribeTask({ tenant: '', id: newId() }, options)),
      subscribeFinished: late && (() => read((options) => c[v].resubscribeTask({ tenant: '', id: late }, options))),
      noSkill: () => c[v].sendMessage(request('x', 'no-such-skill')),
      late: late && (() => c[v].sendMessage(request('late', 'echo', { taskId: late }))),
      bigPage: () => c[v].listTasks({ tenant: '', pageSize: 1000, pageToken: '', contextId: '' }),
      negativeHistory: late && (() => c[v].getTask({ tenant: '', id: late, historyLength: -1 })),
    };
    if (calls[kind]) await logged(c.id, v, 'bad', { kind, id: late }, () => calls[kind]());
  },
};

const WEIGHTS = { send: 4, parts: 1, start: 4, stream: 6, answer: 3, race: 1, resubscribe: 3, cancel: 3, get: 3, listing: 2, bad: 2 };
const drawn = Object.entries(WEIGHTS).flatMap(([name, weight]) => Array(weight).fill(name));

async function client(id, r) {
  const c = { id, ...(await openClients()) };
  const vias = Object.keys(c).filter((k) => k !== 'id');
  while (!book.over) await operations[pick(drawn, r)](c, pick(vias, r), r);
}

// Once the load is over: cancel the holders and answer the questions left until every client
// is done (a client following a holder waits for its cancel).
async function settle(c, running) {
  let done = false;
  running.finally(() => (done = true));
  while (true) {
    const last = done;
    while (book.holding.length || book.awaiting.length) {
      const holder = book.holding.pop();
      const id = holder ?? book.awaiting.pop();
      const via = c['JSONRPC 1.0'];
      const entry = holder
        ? await logged('settle', 'JSONRPC 1.0', 'cancel', { id }, () => task(() => via.cancelTask({ tenant: '', id })))
        : await logged('settle', 'JSONRPC 1.0', 'answer', { skill: 'ask', text: 'last', taskId: id }, () =>
            task(() => via.sendMessage(request('last', 'ask', { taskId: id }))),
          );
      settled(entry);
    }
    if (last) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

process.stderr.write(`JS soak seed ${seed} (A2A_TRIO_JS_SOAK_SEED=${seed} replays it)\n`);
const settler = { id: 'settle', ...(await openClients()) };
const running = Promise.all(Array.from({ length: Number(clientCount) }, (_, i) => client(i, random(below(2 ** 32)))));
await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000));
book.over = true;
await settle(settler, running);
await running;
process.stdout.write(JSON.stringify({ seed, calls }) + '\n');
