// Finding the s-code server without settings. In order: the `sCode.server.command` setting; `s-code`
// on PATH; pipx's location ($PIPX_BIN_DIR, else ~/.local/bin: VS Code started from a desktop menu
// often lacks it on PATH); the workspace's Python environment (.venv, venv, then the Python
// extension's interpreter setting). Nothing found: plain `s-code`, so the error names it.
// Pure logic (no `vscode` import): the extension passes in what it knows.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it was found, for the log: 'setting', 'PATH', 'pipx', 'workspace', 'python', 'default'. */
  source: string;
}

export interface Surroundings {
  env: Record<string, string | undefined>;
  home: string;
  /** The workspace folders' file system paths. */
  folders: string[];
  /** The Python extension's `python.defaultInterpreterPath`, when set. */
  pythonInterpreter?: string;
  platform?: string;
  isExecutable?: (file: string) => boolean;
}

export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function resolveServer(configured: string[], where: Surroundings): ServerCommand {
  if (configured.length > 0) {
    return { command: configured[0], args: configured.slice(1), source: 'setting' };
  }
  const windows = (where.platform ?? process.platform) === 'win32';
  const p = windows ? path.win32 : path.posix;
  const exe = windows ? 's-code.exe' : 's-code';
  const bin = windows ? 'Scripts' : 'bin';
  const runs = where.isExecutable ?? isExecutableFile;
  const candidates: [string, string][] = [];
  for (const dir of (where.env.PATH ?? '').split(windows ? ';' : ':')) {
    if (dir && p.isAbsolute(dir)) {
      candidates.push([p.join(dir, exe), 'PATH']);
    }
  }
  if (where.env.PIPX_BIN_DIR) {
    candidates.push([p.join(where.env.PIPX_BIN_DIR, exe), 'pipx']);
  }
  candidates.push([p.join(where.home, '.local', 'bin', exe), 'pipx']);
  for (const folder of where.folders) {
    for (const venv of ['.venv', 'venv']) {
      candidates.push([p.join(folder, venv, bin, exe), 'workspace']);
    }
  }
  const interpreter = where.pythonInterpreter?.replace('${workspaceFolder}', where.folders[0] ?? '');
  if (interpreter && p.isAbsolute(interpreter)) {
    candidates.push([p.join(p.dirname(interpreter), exe), 'python']);
  }
  for (const [file, source] of candidates) {
    if (runs(file)) {
      return { command: file, args: ['serve'], source };
    }
  }
  return { command: 's-code', args: ['serve'], source: 'default' };
}
