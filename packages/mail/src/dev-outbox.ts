import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MailMessage } from './transport';

/**
 * The local dev outbox (issue 52): outside production, without SMTP_URL, the mail sender hands
 * each mail to this transport instead of an SMTP server. It writes one JSON file per mail into
 * a folder of its own (AppConfig.devMailDir, owner-only permissions), which every process of
 * the service shares; GET /v1/dev/mail reads them back, newest first. Only the newest
 * DEV_MAIL_KEEP are kept.
 */

/** Mails kept in the dev outbox; older ones are removed as new ones arrive. */
export const DEV_MAIL_KEEP = 200;

/** One mail of the dev outbox as GET /v1/dev/mail lists it. */
export interface DevMail {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  created_at: string;
}

/** File names sort by time: a zero-padded millisecond clock, then randomness. */
const FILE = /^(\d{15})-([0-9a-f]{12})\.json$/;

export class DevOutboxTransport {
  constructor(private readonly dir: string) {}

  async send(message: MailMessage): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const now = new Date();
    const name = `${String(now.getTime()).padStart(15, '0')}-${randomBytes(6).toString('hex')}.json`;
    const mail: DevMail = {
      id: `devmail_${name.slice(0, -'.json'.length)}`,
      from: message.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      created_at: now.toISOString(),
    };
    // Written under a temporary name and renamed: a reader never sees half a mail.
    const partial = path.join(this.dir, `.${name}.partial`);
    await writeFile(partial, JSON.stringify(mail), { mode: 0o600 });
    await rename(partial, path.join(this.dir, name));
    await this.prune();
  }

  private async prune(): Promise<void> {
    const names = (await mailFiles(this.dir)).slice(DEV_MAIL_KEEP);
    await Promise.all(names.map((name) => rm(path.join(this.dir, name), { force: true })));
  }
}

/** The mail files of `dir`, newest first (none when the folder does not exist yet). */
async function mailFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .filter((name) => FILE.test(name))
    .sort()
    .reverse();
}

/** The newest `limit` mails of the dev outbox in `dir`, newest first. */
export async function readDevOutbox(dir: string, limit = 50): Promise<DevMail[]> {
  const names = (await mailFiles(dir)).slice(0, limit);
  const mails: DevMail[] = [];
  for (const name of names) {
    try {
      mails.push(JSON.parse(await readFile(path.join(dir, name), 'utf8')) as DevMail);
    } catch (error) {
      // Pruned by another process between the listing and the read: skipped.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return mails;
}
