import type { Db } from 'mongodb';
import { DocLocks } from '../store/doc-locks';
import type { DeliveryRecord } from '../store/trigger-runs.repository';
import type { ChatDeliveryInput, DeliveryInput, DeliveryTarget } from '../contracts/trigger-types';

type Delivery = Pick<DeliveryInput, 'deliveryId' | 'target'>;

/**
 * A delivery's attempts, recorded where its content came from: under
 * `deliveries.<deliveryId>` of the task record (`tasks`) or of the run record
 * (`triggerRuns`). Each write is one single-document update of that entry.
 */
export class DeliveryRecords {
  private readonly locks: DocLocks;
  constructor(private readonly db: Db) {
    this.locks = new DocLocks(db);
  }

  /**
   * A run's webhook and chat deliveries write to the same document at the same time;
   * FerretDB 1.x would let one write undo the other, so writes to one record take turns.
   */
  private serial<T>(target: DeliveryTarget, fn: () => Promise<T>): Promise<T> {
    const { collection, id } = this.where(target);
    return this.locks.with(`deliveries:${collection}:${id}`, fn);
  }

  private where(target: DeliveryTarget): { collection: string; id: string } {
    return target.kind === 'task' ? { collection: 'tasks', id: target.taskId } : { collection: 'triggerRuns', id: target.runId };
  }

  /** Creates the entry as `pending` unless it exists. */
  async open(input: DeliveryInput | ChatDeliveryInput, now = new Date()): Promise<void> {
    const { collection, id } = this.where(input.target);
    const webhook = 'webhook' in input ? input.webhook : null;
    const entry: DeliveryRecord = {
      deliveryId: input.deliveryId,
      channel: webhook ? 'webhook' : 'bot',
      name: webhook ? webhook.name : null,
      url: webhook ? webhook.url : null,
      submittedData: webhook ? webhook.submittedData : null,
      status: 'pending',
      attempts: 0,
      lastStatusCode: null,
      lastError: null,
      lastAttemptAt: null,
      deliveredAt: null,
      createdAt: now,
    };
    const key = `deliveries.${input.deliveryId}`;
    await this.serial(input.target, () => this.db.collection<{ _id: string }>(collection).updateOne({ _id: id, [key]: { $exists: false } }, { $set: { [key]: entry } }));
  }

  async attempt(input: Delivery, fields: { attempt: number; status: DeliveryRecord['status']; statusCode: number | null; error: string | null; at?: Date }): Promise<void> {
    const { collection, id } = this.where(input.target);
    const at = fields.at ?? new Date();
    const key = `deliveries.${input.deliveryId}`;
    await this.serial(input.target, () =>
      this.db.collection<{ _id: string }>(collection).updateOne(
      { _id: id },
      {
        $set: {
          [`${key}.status`]: fields.status,
          [`${key}.attempts`]: fields.attempt,
          [`${key}.lastStatusCode`]: fields.statusCode,
          [`${key}.lastError`]: fields.error,
          [`${key}.lastAttemptAt`]: at,
          ...(fields.status === 'delivered' ? { [`${key}.deliveredAt`]: at } : {}),
        },
      },
    ),
    );
  }

  /** The delivery gave up (retries exhausted): the last attempt's figures stay, the status says failed. */
  async giveUp(input: Delivery, error: string): Promise<void> {
    const { collection, id } = this.where(input.target);
    const key = `deliveries.${input.deliveryId}`;
    await this.serial(input.target, () => this.db.collection<{ _id: string }>(collection).updateOne({ _id: id, [`${key}.status`]: { $ne: 'delivered' } }, { $set: { [`${key}.status`]: 'failed', [`${key}.lastError`]: error } }));
  }

  async get(target: DeliveryTarget, deliveryId: string): Promise<DeliveryRecord | null> {
    const { collection, id } = this.where(target);
    const doc = await this.db.collection<{ _id: string; deliveries?: Record<string, DeliveryRecord> }>(collection).findOne({ _id: id }, { projection: { deliveries: 1 } });
    return doc?.deliveries?.[deliveryId] ?? null;
  }
}
