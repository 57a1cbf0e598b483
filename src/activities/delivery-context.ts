import type { Config } from '../config';
import type { Watchers } from '../environments/reach-out';
import type { Logger } from '../logger';
import { guardedFetch } from '../net/guarded-fetch';
import type { NetworkGuard } from '../net/network-guard';
import type { Store } from '../store/store';
import { TriggerRunsRepository } from '../store/trigger-runs.repository';
import { WebhookSecretsRepository } from '../store/webhook-secrets.repository';
import { DeliveryRecords } from '../webhooks/delivery-records';

/** One attempt waits this long for the receiver's answer. */
export const DELIVERY_ATTEMPT_TIMEOUT_MS = 15_000;

/** What the delivery activities are built from. */
export interface DeliveryActivitiesDeps {
  config: Config;
  store: Pick<Store, 'db' | 'tasks' | 'environments'>;
  logger: Logger;
  guard: NetworkGuard;
  watchers?: Watchers;
  fetch?: typeof fetch;
}

/** What every delivery activity works with: how it sends, the signing secrets, the runs and the delivery records. */
export interface DeliveryContext {
  config: Config;
  store: DeliveryActivitiesDeps['store'];
  logger: Logger;
  watchers?: Watchers;
  send: typeof fetch;
  secrets: WebhookSecretsRepository;
  runs: TriggerRunsRepository;
  records: DeliveryRecords;
}

export function deliveryContext(deps: DeliveryActivitiesDeps): DeliveryContext {
  const { config, store } = deps;
  return {
    config,
    store,
    logger: deps.logger.child({ component: 'webhooks' }),
    watchers: deps.watchers,
    // Deliveries leave through the network guard: a private address is never connected to.
    send: deps.fetch ?? guardedFetch(deps.guard),
    secrets: new WebhookSecretsRepository(store.db),
    runs: new TriggerRunsRepository(store.db),
    records: new DeliveryRecords(store.db),
  };
}
