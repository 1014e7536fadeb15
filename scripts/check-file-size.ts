/**
 * Fails when a hand-written file under src/ or sdk/src/ is longer than 400 lines, naming each one.
 * Generated code (any generated/ folder) is not counted. A long file is split along a concept,
 * not along line counts.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOTS = ['src', 'sdk/src'];
const MAX_LINES = 400;

async function* handWritten(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'generated') yield* handWritten(relative);
    } else if (entry.isFile()) {
      yield relative;
    }
  }
}

/** Lines as an editor counts them: a final newline does not start another. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const tooLong: string[] = [];
for (const dir of ROOTS) {
  for await (const file of handWritten(dir)) {
    const bytes = await readFile(path.join(root, file));
    if (bytes.includes(0)) continue; // binary: no lines to count
    const lines = lineCount(bytes.toString('utf8'));
    if (lines > MAX_LINES) tooLong.push(`  ${file}: ${lines} lines`);
  }
}

if (tooLong.length > 0) {
  console.error(`hand-written files longer than ${MAX_LINES} lines (split each along a concept):\n${tooLong.join('\n')}`);
  process.exitCode = 1;
} else {
  console.log(`every hand-written file under ${ROOTS.join(' and ')} is at most ${MAX_LINES} lines`);
}
