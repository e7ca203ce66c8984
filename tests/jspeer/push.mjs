// The official A2A JavaScript SDK's client asking an A2A server for push notifications over
// one binding.  Usage: node push.mjs BASE_URL BINDING VERSION WEBHOOK_URL.  Sends a message
// whose task reports to WEBHOOK_URL/send, then creates, gets, lists and deletes a config of
// that task; prints one JSON report of what each call returned or threw.
import { Role } from '@a2a-js/sdk';
import { connect, thrown } from './connect.mjs';
import { randomUUID } from 'node:crypto';

const [baseUrl, binding, version, hookUrl] = process.argv.slice(2);
const client = await connect(baseUrl, binding, version);

const config = (taskId, id, url, token) => ({ tenant: '', taskId, id, url, token, authentication: undefined });

const sent = await client.sendMessage({
  tenant: '',
  message: {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: 'pushed' }, metadata: undefined }],
    metadata: { skillId: 'echo' },
    contextId: '',
    taskId: '',
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: config('', '', `${hookUrl}/send`, 'js-token'),
    returnImmediately: true,
  },
  metadata: undefined,
});
const key = { tenant: '', taskId: sent.id, id: 'js1' };
const report = {
  capabilities: (await client.getAgentCard()).capabilities,
  task: sent.id,
  create: await thrown(() => client.createTaskPushNotificationConfig(config(sent.id, 'js1', `${hookUrl}/crud`, 't'))),
  get: await thrown(() => client.getTaskPushNotificationConfig(key)),
  list: await thrown(() => client.listTaskPushNotificationConfig({ ...key, pageSize: 10, pageToken: '' })),
  delete: await thrown(() => client.deleteTaskPushNotificationConfig(key)),
  getDeleted: await thrown(() => client.getTaskPushNotificationConfig(key)),
};
process.stdout.write(JSON.stringify(report) + '\n');
