import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { isExecutableFile, resolveServer } from '../src/common/server';

const only = (...files: string[]) => (file: string) => files.includes(file);

describe('resolveServer', () => {
  const base = { home: '/home/u', folders: ['/ws'], platform: 'linux' };

  it('uses the setting first', () => {
    const found = resolveServer(['/opt/py', '-m', 's_code', 'serve'], {
      ...base,
      env: { PATH: '/usr/bin' },
      isExecutable: () => true,
    });
    expect(found).toEqual({ command: '/opt/py', args: ['-m', 's_code', 'serve'], source: 'setting' });
  });

  it('takes s-code from PATH before anything else', () => {
    const found = resolveServer([], {
      ...base,
      env: { PATH: '/usr/local/bin:relative/bin:/usr/bin', PIPX_BIN_DIR: '/pipx' },
      isExecutable: only('/usr/bin/s-code', '/pipx/s-code', '/ws/.venv/bin/s-code'),
    });
    expect(found).toEqual({ command: '/usr/bin/s-code', args: ['serve'], source: 'PATH' });
  });

  it('ignores relative PATH entries', () => {
    const found = resolveServer([], {
      ...base,
      env: { PATH: 'bin' },
      isExecutable: only('bin/s-code'),
    });
    expect(found.source).toBe('default');
  });

  it("finds pipx's bin dir, then ~/.local/bin, when PATH lacks them", () => {
    const env = { PATH: '/usr/bin', PIPX_BIN_DIR: '/opt/pipx-bin' };
    const both = only('/opt/pipx-bin/s-code', '/home/u/.local/bin/s-code');
    expect(resolveServer([], { ...base, env, isExecutable: both }).command).toBe('/opt/pipx-bin/s-code');
    const local = resolveServer([], { ...base, env: { PATH: '/usr/bin' }, isExecutable: both });
    expect(local).toEqual({ command: '/home/u/.local/bin/s-code', args: ['serve'], source: 'pipx' });
  });

  it("then the workspace's .venv, venv, and the Python extension's interpreter", () => {
    const env = { PATH: '/usr/bin' };
    const folders = ['/a', '/b'];
    expect(
      resolveServer([], { ...base, env, folders, isExecutable: only('/b/venv/bin/s-code', '/a/.venv/bin/s-code') }),
    ).toEqual({ command: '/a/.venv/bin/s-code', args: ['serve'], source: 'workspace' });
    expect(
      resolveServer([], { ...base, env, folders, isExecutable: only('/b/venv/bin/s-code') }).command,
    ).toBe('/b/venv/bin/s-code');
    const python = resolveServer([], {
      ...base,
      env,
      folders,
      pythonInterpreter: '${workspaceFolder}/envs/dev/bin/python',
      isExecutable: only('/a/envs/dev/bin/s-code'),
    });
    expect(python).toEqual({ command: '/a/envs/dev/bin/s-code', args: ['serve'], source: 'python' });
    // the Python extension's default, a bare "python", names no place
    const bare = resolveServer([], { ...base, env, pythonInterpreter: 'python', isExecutable: () => false });
    expect(bare).toEqual({ command: 's-code', args: ['serve'], source: 'default' });
  });

  it('uses Scripts\\s-code.exe on Windows', () => {
    const found = resolveServer([], {
      home: 'C:\\Users\\u',
      folders: ['C:\\ws'],
      platform: 'win32',
      env: { PATH: 'C:\\Windows' },
      isExecutable: only('C:\\ws\\.venv\\Scripts\\s-code.exe'),
    });
    expect(found.command).toBe('C:\\ws\\.venv\\Scripts\\s-code.exe');
  });
});

describe('isExecutableFile (the real file system)', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds an executable s-code in a workspace .venv, and not a plain file or a directory', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 's-code-resolve-'));
    made.push(ws);
    const bin = path.join(ws, '.venv', 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const script = path.join(bin, 's-code');
    fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o644 });
    fs.mkdirSync(path.join(ws, 'venv', 'bin', 's-code'), { recursive: true });
    const where = { home: path.join(ws, 'nohome'), folders: [ws], env: { PATH: '' }, platform: 'linux' };
    expect(resolveServer([], where).source).toBe('default'); // not executable yet; venv's is a dir
    fs.chmodSync(script, 0o755);
    expect(isExecutableFile(script)).toBe(true);
    expect(resolveServer([], where)).toEqual({ command: script, args: ['serve'], source: 'workspace' });
  });
});
