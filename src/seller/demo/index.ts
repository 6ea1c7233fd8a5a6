/**
 * The demo model: offline, agent-capable, sampling its words like a vendor's model (docs/guide/selling.md "Demo
 * model"). Reads a request in any of the three formats, plans text or tool calls, and writes the
 * vendor's wire format.
 */
export { type Answer, answerOf } from './answer.js';
export { chatJson, chatSse } from './chatWire.js';
export { type Conversation, readConversation } from './conversation.js';
export { messagesJson, messagesSse } from './messagesWire.js';
export { type DemoReply, planReply } from './plan.js';
export { responsesJson, responsesSse } from './responsesWire.js';
export { sampleWords, samplingOf } from './sampler.js';
