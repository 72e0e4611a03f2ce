/**
 * Runs the fake upstream until interrupted and prints where each API lives:
 *   npx tsx packages/fake-upstream/src/cli.ts
 */
import { FIXTURES } from './fixtures';
import { startFakeUpstream } from './server';

async function main(): Promise<void> {
  const fake = await startFakeUpstream();
  const lines = [
    `FAKE_UPSTREAM_URL=${fake.url}`,
    `YOUTUBE_BASE_URL=${fake.url}/youtube/v3`,
    `X_BASE_URL=${fake.url}`,
    `TIKTOK_BASE_URL=${fake.url}`,
    `META_GRAPH_BASE_URL=${fake.url}/${FIXTURES.graph.version}`,
    `INSTAGRAM_BUSINESS_ACCOUNT_ID=${FIXTURES.graph.igUserId}`,
    `SCRAPECREATORS_BASE_URL=${fake.url}/scrapecreators`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const stop = (): void => {
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
