/**
 * `svc audit show|export|verify` (docs/guide/trust.md): the buyer's verdicts on a seller
 * with the probes behind them, read from `<data-dir>/buyer/audits.sqlite` (a running buyer keeps
 * writing it; readers see its last commit); a seller's verdict as a bundle anyone can check; and
 * the check itself, on any machine, from nothing but the bundle.
 */
import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import type { AuditBundle, AuditStore, SellerAudit } from '../../audit/index.js';
import { normalizeModelName } from '../../catalog/index.js';
import { CliContext } from '../context.js';
import { CliError, usageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { printJson, printTable } from '../output.js';

/** The audit folder, loaded when a command runs (docs/decisions/215-commands-load-their-code-when-they-run.md). */
const loadAudit = () => import('../../audit/index.js');

async function openStore(ctx: CliContext): Promise<AuditStore> {
  const { AuditStore } = await loadAudit();
  try {
    return new AuditStore(ctx.dataDir, Date.now, () => {}, { readOnly: true });
  } catch {
    throw new CliError(
      `no audits in ${ctx.dataDir}: this buyer has not audited anyone yet (audits follow its own requests; see docs/guide/trust.md)`,
    );
  }
}

async function peerOf(text: string): Promise<string> {
  const { parsePeerId } = await import('../../identity/index.js');
  try {
    return parsePeerId(text);
  } catch {
    throw usageError(`not a peer id: ${text} (40 hex characters, with or without 0x)`);
  }
}

/** Every verdict on `peerId` (one per model), or the one for `model`. */
function standings(store: AuditStore, peerId: string, model?: string) {
  const wanted = model === undefined ? undefined : normalizeModelName(model);
  return store
    .pairs(peerId)
    .filter((pair) => wanted === undefined || pair.modelKey === wanted)
    .map((pair) => ({ modelKey: pair.modelKey, standing: store.audit(peerId, pair.modelKey) }))
    .filter((entry): entry is { modelKey: string; standing: SellerAudit } => !!entry.standing);
}

const short = (text: string, length: number) =>
  text.replace(/\s+/g, ' ').slice(0, length) + (text.length > length ? '…' : '');

function showOne(io: CliIo, peerId: string, modelKey: string, standing: SellerAudit): void {
  io.stdout(
    `${peerId}  ${modelKey}: ${standing.verdict} (p = ${standing.pValue.toExponential(2)} over ${standing.audits} audits; furthest apart in ${standing.disagreements})\n`,
  );
  const rows = standing.probes.map((probe) => {
    const own = probe.answers.findIndex((answer) => answer.peerId === peerId);
    const receipts = probe.answers.filter((answer) => answer.receipt).length;
    return [
      new Date(probe.at).toISOString(),
      probe.id,
      probe.format,
      String(probe.answers.length),
      own >= 0 ? (probe.scores[own]! / 512).toFixed(3) : '',
      `${receipts}/${probe.answers.length}`,
      own >= 0 ? short(probe.answers[own]!.text, 48) : '',
    ];
  });
  printTable(io, ['AT', 'PROBE', 'FORMAT', 'SELLERS', 'APART', 'RECEIPTS', 'ITS ANSWER'], rows);
}

export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program
    .command('audit')
    .description(
      "this buyer's audits of sellers: verdicts, the probes behind them, bundles anyone can check",
    );

  audit
    .command('show <peer>')
    .description("this buyer's verdicts on a seller, per model, with every probe behind them")
    .option('--model <name>', 'only this model')
    .addHelpText(
      'after',
      "\nAPART is how far the seller's answer stood from the other sellers' (positive: further than\ntheirs from each other). RECEIPTS counts the answers whose signed receipt the buyer checked.\n\nExamples:\n  svc audit show 0x2c7536e3605d9c16a7a3d7b1898e529396a65c23\n  svc audit show 2c7536e3605d9c16a7a3d7b1898e529396a65c23 --model svc-demo-smart --json",
    )
    .action(async (peer: string, flags: { model?: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const peerId = await peerOf(peer);
      const store = await openStore(ctx);
      try {
        const found = standings(store, peerId, flags.model);
        if (ctx.json) {
          printJson(io, {
            peerId,
            verdicts: found.map(({ modelKey, standing }) => ({ modelKey, ...standing })),
          });
          return;
        }
        if (found.length === 0) {
          io.stdout(`no audits of ${peerId}${flags.model ? ` for ${flags.model}` : ''}\n`);
          return;
        }
        for (const { modelKey, standing } of found) showOne(io, peerId, modelKey, standing);
      } finally {
        store.close();
      }
    });

  audit
    .command('export <peer>')
    .description(
      "write a seller's verdict with its probes, receipts and bytes as a bundle (JSON, to stdout)",
    )
    .option('--model <name>', 'the model (needed when the seller was audited for several)')
    .addHelpText(
      'after',
      '\nExample:\n  svc audit export 0x2c75…5c23 > bundle.json && svc audit verify bundle.json',
    )
    .action(async (peer: string, flags: { model?: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const peerId = await peerOf(peer);
      const store = await openStore(ctx);
      try {
        const found = standings(store, peerId, flags.model);
        if (found.length === 0) {
          throw new CliError(`no audits of ${peerId}${flags.model ? ` for ${flags.model}` : ''}`);
        }
        if (found.length > 1) {
          throw usageError(
            `${peerId} was audited for ${found.length} models (${found.map((f) => f.modelKey).join(', ')}): name one with --model`,
          );
        }
        const { standing } = found[0]!;
        const { bundleOf } = await loadAudit();
        printJson(io, bundleOf(peerId, standing, Date.now()));
      } finally {
        store.close();
      }
    });

  audit
    .command('verify <bundle>')
    .description(
      "check a bundle: every receipt's signature and hashes, every answer's text, and the verdict, recomputed",
    )
    .addHelpText(
      'after',
      '\nExits 0 when everything holds, 1 otherwise. Needs no network, no buyer and no data directory.',
    )
    .action(async (file: string, _flags: unknown, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { MAX_BUNDLE_BYTES, verifyBundle } = await loadAudit();
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        throw usageError(`cannot read ${file}`);
      }
      if (size > MAX_BUNDLE_BYTES)
        throw usageError(`${file} is larger than a bundle can be (${MAX_BUNDLE_BYTES} bytes)`);
      let bundle: unknown;
      try {
        bundle = JSON.parse(readFileSync(file, 'utf8')) as AuditBundle;
      } catch (error) {
        throw usageError(`${file} is not JSON: ${String(error)}`);
      }
      const report = verifyBundle(bundle);
      if (ctx.json) printJson(io, report);
      else {
        const recomputed = report.recomputed
          ? `${report.recomputed.verdict}, p = ${report.recomputed.pValue.toExponential(2)}`
          : 'none';
        io.stdout(
          `${report.probes} probes, ${report.answers} answers: ${report.receipts.verified} receipts verified, ${report.receipts.missing} without a receipt, ${report.textsFromBytes} texts recomputed from their bytes\nverdict recomputed: ${recomputed} (${report.verdictMatches ? 'as stated' : 'NOT as stated'})\n`,
        );
        for (const problem of report.problems) {
          io.stdout(`problem: ${problem.probe} ${problem.peerId}: ${problem.problem}\n`);
        }
        io.stdout(report.ok ? 'bundle verified\n' : 'bundle does NOT verify\n');
      }
      if (!report.ok) throw new CliError('the bundle does not verify', 1);
    });
}
