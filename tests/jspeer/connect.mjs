// What the scripts here share: the JavaScript SDK's client for one binding of an A2A server
// (BINDING is JSONRPC or HTTP+JSON, VERSION 1.0 or 0.3 through the SDK's v0.3 transports), and
// their way of reporting a call.
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';

export async function connect(baseUrl, binding, version) {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ legacyCompat }), new RestTransportFactory({ legacyCompat })],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
  });
  const cardPath = version === '0.3' ? '/.well-known/agent.json' : '/.well-known/agent-card.json';
  return factory.createFromUrl(baseUrl, cardPath);
}

// What a call returned, or the error it threw (its class, name and message), for a report.
export async function thrown(call) {
  try {
    return { returned: await call() };
  } catch (error) {
    return { error: error.constructor.name, name: error.name, message: error.message };
  }
}
