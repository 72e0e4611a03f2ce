import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { DEFAULT_BASE_URL } from '@sdx/sdk';

/**
 * Where `sdx login` keeps the key and the base URL: `config.json` in the user's configuration
 * directory (`$XDG_CONFIG_HOME/sdx`, else `~/.config/sdx` on Linux, `~/Library/Application
 * Support/sdx` on macOS, `%APPDATA%\sdx` on Windows), the file readable by its owner only (0600)
 * in a directory only its owner can enter (0700). `SDX_API_KEY` and `SDX_BASE_URL` override it.
 */

export interface StoredConfig {
  api_key?: string;
  base_url?: string;
}

export interface Settings {
  apiKey: string | undefined;
  baseUrl: string;
  /** Where each came from, for `sdx login --status` style messages. */
  source: { apiKey: 'env' | 'config' | 'none'; baseUrl: 'env' | 'config' | 'default' };
}

export function configDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'sdx');
  if (platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'sdx');
  if (platform === 'darwin') return path.join(homedir(), 'Library', 'Application Support', 'sdx');
  return path.join(homedir(), '.config', 'sdx');
}

export function configPath(env: NodeJS.ProcessEnv): string {
  return path.join(configDir(env), 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv): StoredConfig {
  try {
    const parsed = JSON.parse(readFileSync(configPath(env), 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

export function writeConfig(env: NodeJS.ProcessEnv, config: StoredConfig): string {
  const file = configPath(env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync keeps the mode of a file that already existed.
  chmodSync(file, 0o600);
  return file;
}

export function removeConfig(env: NodeJS.ProcessEnv): boolean {
  const file = configPath(env);
  try {
    readFileSync(file);
  } catch {
    return false;
  }
  rmSync(file, { force: true });
  return true;
}

export function settings(env: NodeJS.ProcessEnv): Settings {
  const stored = readConfig(env);
  const envKey = env.SDX_API_KEY?.trim();
  const envUrl = env.SDX_BASE_URL?.trim();
  return {
    apiKey: envKey || stored.api_key,
    baseUrl: envUrl || stored.base_url || DEFAULT_BASE_URL,
    source: {
      apiKey: envKey ? 'env' : stored.api_key ? 'config' : 'none',
      baseUrl: envUrl ? 'env' : stored.base_url ? 'config' : 'default',
    },
  };
}
