import type { CommandFile } from '../domain/command-file.js';
import type { GateFacts } from '../domain/gates.js';
import type { Persona } from '../domain/persona.js';
import type { ArtifactWriter, InputReader } from '../domain/ports.js';
import type { KnowledgeResult } from '../domain/run-state.js';

export interface GatheredFacts {
  readonly facts: GateFacts;
  /** Input artifacts that were read, for the briefing. */
  readonly inputs: { path: string; result: Omit<KnowledgeResult, 'action' | 'argument'> }[];
}

/** Collects what the gates decide on: reads inputs through the sandbox and checks the output path. No model is called. */
export async function gatherGateFacts(options: {
  command: CommandFile;
  personas: readonly Persona[];
  outputPath: string;
  inputs: InputReader;
  artifacts: ArtifactWriter;
}): Promise<GatheredFacts> {
  const { command, personas } = options;
  const known = new Set(personas.map((p) => p.id));
  const named = [...(command.config.personas ?? []), ...(command.config.synthesizer ? [command.config.synthesizer] : [])];
  const unknownPersonas = [...new Set(named.filter((id) => !known.has(id)))];
  if (command.config.synthesizer && command.config.personas && !command.config.personas.includes(command.config.synthesizer)) {
    unknownPersonas.push(`${command.config.synthesizer} (synthesizer is not among config.personas)`);
  }

  const pathEscapes: { field: string; path: string; reason: string }[] = [];
  const output = await options.artifacts.check(options.outputPath);
  if (!output.ok) pathEscapes.push({ field: 'output_artifact_path', path: options.outputPath, reason: output.reason });

  const missingInputs: { path: string; reason: string }[] = [];
  const read: GatheredFacts['inputs'] = [];
  for (const [i, path] of command.input_artifacts.entries()) {
    const result = await options.inputs.readFile(path);
    if (result.status === 'provided') read.push({ path, result });
    else if (result.reason_code === 'KNOWLEDGE_PATH_ESCAPE' || result.reason_code === 'KNOWLEDGE_DENIED' || result.reason_code === 'KNOWLEDGE_OUTSIDE_ROOTS') {
      pathEscapes.push({ field: `input_artifacts.${i}`, path, reason: result.message });
    } else missingInputs.push({ path, reason: result.message });
  }

  return {
    facts: {
      taskBlank: command.task_description.trim().length === 0,
      unknownPersonas,
      missingInputs,
      pathEscapes,
      piiCategories: [],
      secretCategories: [],
    },
    inputs: read,
  };
}
