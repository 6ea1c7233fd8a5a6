/** The merged routing policy of a request, and the model it finally names (presets resolved). */
import { SvcError } from '../../errors/index.js';
import { mergePolicies, modelRefusal } from '../policy/mergePolicies.js';
import type { RoutingPolicy } from '../policy/types.js';
import type { GatewayStore } from '../store/types.js';
import type { Caller } from './authenticate.js';
import { storeCall } from './authenticate.js';

export interface ResolvedPolicy {
  policy: RoutingPolicy;
  /** The model to send (a gateway preset's model replaces `@preset/<name>`). */
  model: string | undefined;
}

const PRESET = '@preset/';

/** Merges workspace, member, key (and its model list) and preset policies; refuses models outside it. */
export async function resolvePolicy(
  store: GatewayStore,
  caller: Caller,
  requestedModel: string | undefined,
): Promise<ResolvedPolicy> {
  const { key, member, workspace } = caller;
  let model = requestedModel;
  let presetPolicy: RoutingPolicy | null = null;
  if (model?.startsWith(PRESET)) {
    const name = model.slice(PRESET.length);
    const preset = await storeCall(
      async () => (await store.getPreset(name, workspace.id)) ?? (await store.getPreset(name, '')),
    );
    if (preset) {
      presetPolicy = preset.policy;
      if (preset.model) model = preset.model;
    }
  }
  const policy = mergePolicies([
    workspace.policy,
    member?.policy,
    key.policy,
    key.allowedModels ? { allowedModels: key.allowedModels } : null,
    presetPolicy,
  ]);
  if (model && !model.startsWith(PRESET)) {
    const refusal = modelRefusal(policy, model);
    if (refusal)
      throw new SvcError('model_not_allowed', { message: `${refusal}.`, details: { model } });
  } else if (model && policy.allowedModels) {
    // A preset only the buyer knows could name any model: a key limited to models cannot use it.
    throw new SvcError('model_not_allowed', {
      message: `preset "${model}" is not defined on this gateway, and this key may only use certain models.`,
      details: { model },
    });
  }
  return { policy, model };
}
