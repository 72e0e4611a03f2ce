import type { AppDeps } from '../deps';
import { OAuthLimiter } from './limits';
import { SdxOAuthProvider } from './provider';

/** What the OAuth endpoints of one app share: the provider on the domain and the limiter. */
export interface OAuthKit {
  provider: SdxOAuthProvider;
  limiter: OAuthLimiter;
}

const kits = new WeakMap<AppDeps, OAuthKit>();

/** The OAuth kit of an app (its dependencies): made by the first OAuth route mounted, shared by the others. */
export function oauthKit(deps: AppDeps): OAuthKit {
  let kit = kits.get(deps);
  if (!kit) {
    const config = deps.services.config;
    kit = { provider: new SdxOAuthProvider(deps.services, config.appUrl), limiter: new OAuthLimiter(deps.redis, config.redisPrefix) };
    kits.set(deps, kit);
  }
  return kit;
}
