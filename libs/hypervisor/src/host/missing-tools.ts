import { runCommand } from './run-command';

/** The host tools among `tools` that are not on the PATH (what a driver's probe reports). */
export async function missingTools(tools: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const tool of tools) {
    if (!(await runCommand('sh', ['-c', 'command -v "$1"', 'sh', tool]).catch(() => ''))) missing.push(tool);
  }
  return missing;
}
