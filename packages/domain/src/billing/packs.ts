import type { AppConfig, CreditPack } from '@sdx/config';
import { ApiError } from '../errors';

/** The credit packs on sale (CREDIT_PACKS), as GET /v1/billing lists them. */
export type { CreditPack };

export function renderPack(pack: CreditPack) {
  return { id: pack.id, credits: pack.credits, amount: pack.amount, currency: pack.currency };
}

/** The pack of that ID, or undefined. */
export function findPack(config: Pick<AppConfig, 'creditPacks'>, packId: string | null | undefined): CreditPack | undefined {
  return packId ? config.creditPacks.find((p) => p.id === packId) : undefined;
}

/** The pack of that ID, or 422 `unknown_pack`. */
export function packOrThrow(config: Pick<AppConfig, 'creditPacks'>, packId: string): CreditPack {
  const pack = findPack(config, packId);
  if (!pack) throw new ApiError('unknown_pack', `No pack has the ID ${packId}.`);
  return pack;
}

/** The name a buyer sees on Stripe's Checkout page. */
export function packName(pack: CreditPack): string {
  return `${pack.credits.toLocaleString('en-US')} credits`;
}
