/** Applies a preset to a request body: default params (the request's own win) and a system prompt. */
import type { PresetConfig } from '../config/index.js';
import type { ApiProtocol } from '../network/index.js';

export function applyPreset(
  body: Record<string, unknown>,
  protocol: ApiProtocol,
  preset: PresetConfig,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...preset.params, ...body };
  const system = preset.system;
  if (!system) return out;
  if (protocol === 'anthropic-messages') {
    const existing = body.system;
    if (typeof existing === 'string' && existing) out.system = `${system}\n\n${existing}`;
    else if (Array.isArray(existing)) out.system = [{ type: 'text', text: system }, ...existing];
    else out.system = system;
  } else if (protocol === 'openai-responses') {
    const existing = body.instructions;
    out.instructions =
      typeof existing === 'string' && existing ? `${system}\n\n${existing}` : system;
  } else {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    out.messages = [{ role: 'system', content: system }, ...messages];
  }
  return out;
}
